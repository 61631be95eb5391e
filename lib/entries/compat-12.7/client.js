'use strict'
// mcp-native/compat-12.7/client: the 12.7 function API (SPEC 5): protocol 2025-03-26 by default,
// `timeout: 0` at once, no roots.
const c = require('../../client.js')
exports.createTransport = c.createTransport
exports.connectToServer = c.connectToServer
exports.listTools = c.listTools
exports.callTool = c.callTool
exports.disconnectServer = c.disconnectServer
exports.serverSupportsTools = c.serverSupportsTools
exports.MCPClient = c.MCPClient
exports.SUPPORTED_PROTOCOL_VERSIONS = c.SUPPORTED_PROTOCOL_VERSIONS
exports.DEFAULT_CAPABILITIES = c.DEFAULT_CAPABILITIES
