'use strict'
// mcp-native/compat-12.7/config-writer: the 12.7 profile of mcp-native/config-writer (SPEC 8.5, 8.11,
// 11.3): no `$schema`, 12.7's server names, edits queued in this process. Reading, getMCPServer,
// listMCPServers and getMCPConfigPath are the root's own objects.
const writer = require('../../config-writer.js')

exports.readMCPConfigFile = writer.readMCPConfigFile
exports.writeMCPConfigFile = writer.writeMCPConfigFile127
exports.validateServerName = writer.validateServerName127
exports.addMCPServer = writer.addMCPServer127
exports.updateMCPServer = writer.updateMCPServer127
exports.removeMCPServer = writer.removeMCPServer127
exports.getMCPServer = writer.getMCPServer
exports.listMCPServers = writer.listMCPServers
exports.getMCPConfigPath = writer.getMCPConfigPath

/**
 * Type check only (no code): this module's exports match the declarations users see (config-writer.d.ts).
 * @template {typeof import('./config-writer.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
