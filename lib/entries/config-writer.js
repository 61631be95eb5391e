'use strict'
// mcp-native/config-writer: the agent's 18.3.4 `config-writer.ts` (SPEC 11.4; plus getMCPConfigPath).
const writer = require('../config-writer.js')

exports.readMCPConfigFile = writer.readMCPConfigFile
exports.writeMCPConfigFile = writer.writeMCPConfigFile
exports.validateServerName = writer.validateServerName
exports.addMCPServer = writer.addMCPServer
exports.updateMCPServer = writer.updateMCPServer
exports.removeMCPServer = writer.removeMCPServer
exports.getMCPServer = writer.getMCPServer
exports.listMCPServers = writer.listMCPServers
exports.readDisabledServers = writer.readDisabledServers
exports.setServerDisabled = writer.setServerDisabled
exports.readEnabledServers = writer.readEnabledServers
exports.setServerForceEnabled = writer.setServerForceEnabled
exports.setMcpServerEnabled = writer.setMcpServerEnabled
exports.getMCPConfigPath = writer.getMCPConfigPath

/**
 * Type check only (no code): this module's exports match the declarations users see (config-writer.d.ts).
 * @template {typeof import('./config-writer.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
