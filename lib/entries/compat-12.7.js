'use strict'
// mcp-native/compat-12.7: the package's surface as the 12.7 agent used it (SPEC 11.3), with 12.7's
// defaults: the names of sections 1–10, in their order. Where the root and this profile agree they
// are the same objects; where they conflict (the list is in the README), this profile has 12.7's.
const root = require('../../index.js')
const core = require('../core.js')
const manager = require('../manager.js')
const loader = require('../loader.js')
const toolBridge = require('../tool-bridge.js')
const client = require('../client.js')
const configWriter = require('../config-writer.js')
const od127 = require('./compat-12.7/oauth-discovery.js')

exports.StdioTransport = core.StdioTransport
exports.createStdioTransport = core.createStdioTransport
exports.HttpTransport = core.HttpTransport
exports.createHttpTransport = core.createHttpTransport
exports.callMCP = require('../json-rpc.js').callMCP127
exports.parseSSE = root.parseSSE
exports.createTransport = client.createTransport
exports.connectToServer = client.connectToServer
exports.listTools = root.listTools
exports.callTool = root.callTool
exports.disconnectServer = root.disconnectServer
exports.serverSupportsTools = root.serverSupportsTools
exports.MCPClient = root.MCPClient
exports.MCPManager = manager.MCPManager
exports.createMCPManager = manager.createMCPManager
exports.MCPTool = toolBridge.MCPTool
exports.DeferredMCPTool = toolBridge.DeferredMCPTool
exports.ToolAbortError = root.ToolAbortError
exports.createMCPToolName = toolBridge.createMCPToolName
exports.parseMCPToolName = toolBridge.parseMCPToolName
exports.MCPToolCache = root.MCPToolCache
exports.readMCPConfigFile = root.readMCPConfigFile
exports.writeMCPConfigFile = configWriter.writeMCPConfigFile127
exports.validateServerName = configWriter.validateServerName127
exports.addMCPServer = configWriter.addMCPServer127
exports.updateMCPServer = configWriter.updateMCPServer127
exports.removeMCPServer = configWriter.removeMCPServer127
exports.getMCPServer = root.getMCPServer
exports.listMCPServers = root.listMCPServers
exports.getMCPConfigPath = root.getMCPConfigPath
exports.discoverAndLoadMCPTools = loader.discoverAndLoadMCPTools127
exports.loadAllMCPConfigs = root.loadAllMCPConfigs
exports.validateServerConfig = root.validateServerConfig
exports.isExaMCPServer = root.isExaMCPServer
exports.filterExaMCPServers = root.filterExaMCPServers
exports.extractExaApiKey = root.extractExaApiKey
exports.analyzeAuthError = od127.analyzeAuthError
exports.detectAuthError = od127.detectAuthError
exports.discoverOAuthEndpoints = od127.discoverOAuthEndpoints
exports.extractOAuthEndpoints = od127.extractOAuthEndpoints
exports.MCPOAuthFlow = root.MCPOAuthFlow
