'use strict'
// mcp-native/client: the function API as the agent ships it today (18.3.4 `client.ts`, SPEC 11.3):
// the face is lib/client-current.js over lib/client.js; the 12.7 one is mcp-native/compat-12.7/client.
const c = require('../client-current.js')
const { SUPPORTED_PROTOCOL_VERSIONS, DEFAULT_CAPABILITIES } = require('../client.js')
exports.connectToServer = c.connectToServer
exports.listTools = c.listTools
exports.callTool = c.callTool
exports.disconnectServer = c.disconnectServer
exports.serverSupportsTools = c.serverSupportsTools
exports.createTransport = c.createTransport
exports.MCPClient = c.MCPClient
exports.MCPConnectionTimeoutError = c.MCPConnectionTimeoutError
exports.listResources = c.listResources
exports.listResourceTemplates = c.listResourceTemplates
exports.readResource = c.readResource
exports.subscribeToResources = c.subscribeToResources
exports.unsubscribeFromResources = c.unsubscribeFromResources
exports.listPrompts = c.listPrompts
exports.getPrompt = c.getPrompt
exports.serverSupportsResources = c.serverSupportsResources
exports.serverSupportsResourceSubscriptions = c.serverSupportsResourceSubscriptions
exports.serverSupportsPrompts = c.serverSupportsPrompts
exports.SUPPORTED_PROTOCOL_VERSIONS = SUPPORTED_PROTOCOL_VERSIONS
exports.DEFAULT_CAPABILITIES = DEFAULT_CAPABILITIES
