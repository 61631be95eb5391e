'use strict'
// mcp-native: the package root. Everything of the sub-paths, from the modules that implement them:
// core.js (transports over the native addon), json-rpc.js, client.js, manager.js.

const core = require('./core.js')
const jsonRpc = require('./json-rpc.js')
const client = require('./client.js')
const manager = require('./manager.js')
const toolBridge = require('./lib/tool-bridge.js')

exports.StdioTransport = core.StdioTransport
exports.createStdioTransport = core.createStdioTransport
exports.HttpTransport = core.HttpTransport
exports.createHttpTransport = core.createHttpTransport
exports.callMCP = jsonRpc.callMCP
exports.parseSSE = jsonRpc.parseSSE
exports.createTransport = client.createTransport
exports.connectToServer = client.connectToServer
exports.listTools = client.listTools
exports.callTool = client.callTool
exports.disconnectServer = client.disconnectServer
exports.serverSupportsTools = client.serverSupportsTools
exports.MCPClient = client.MCPClient
exports.MCPManager = manager.MCPManager
exports.createMCPManager = manager.createMCPManager
exports.MCPTool = toolBridge.MCPTool
exports.DeferredMCPTool = toolBridge.DeferredMCPTool
exports.ToolAbortError = toolBridge.ToolAbortError
exports.createMCPToolName = toolBridge.createMCPToolName
exports.parseMCPToolName = toolBridge.parseMCPToolName
