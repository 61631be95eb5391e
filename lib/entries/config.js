'use strict'
// mcp-native/config: mirrors the reference module `config.ts` (SPEC 7); implemented in lib/config.js.
const config = require('../config.js')

exports.loadAllMCPConfigs = config.loadAllMCPConfigs
exports.validateServerConfig = config.validateServerConfig
exports.isExaMCPServer = config.isExaMCPServer
exports.filterExaMCPServers = config.filterExaMCPServers
exports.extractExaApiKey = config.extractExaApiKey
