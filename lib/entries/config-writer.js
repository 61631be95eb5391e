'use strict'
// mcp-native/config-writer: mirrors the reference module `config-writer.ts` (plus getMCPConfigPath).
const writer = require('../config-writer.js')

exports.readMCPConfigFile = writer.readMCPConfigFile
exports.writeMCPConfigFile = writer.writeMCPConfigFile
exports.validateServerName = writer.validateServerName
exports.addMCPServer = writer.addMCPServer
exports.updateMCPServer = writer.updateMCPServer
exports.removeMCPServer = writer.removeMCPServer
exports.getMCPServer = writer.getMCPServer
exports.listMCPServers = writer.listMCPServers
exports.getMCPConfigPath = writer.getMCPConfigPath

/**
 * Type check only (no code): this module's exports match the declarations users see (config-writer.d.ts).
 * @template {typeof import('./config-writer.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
