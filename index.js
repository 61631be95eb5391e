'use strict'
// mcp-native: the package root. Everything of the sub-paths, from the modules that implement them:
// core.js (transports over the native addon; at the root with the agent's rules and errors:
// transports-current.js), json-rpc.js, client.js, manager-current.js (the
// manager as the agent ships it today; the 12.7 one is mcp-native/compat-12.7's).

const transports = require('./lib/transports-current.js')
const jsonRpc = require('./lib/json-rpc.js')
const client = require('./lib/client-current.js')
const manager = require('./lib/manager-current.js')
const toolBridge = require('./lib/tool-bridge-current.js')
const toolCache = require('./lib/tool-cache.js')
const configWriter = require('./lib/config-writer.js')
const loader = require('./lib/loader.js')
const config = require('./lib/config.js')
const oauthDiscovery = require('./lib/oauth-discovery.js')
const oauthFlow = require('./lib/oauth-flow.js')
const hooks = require('./lib/hooks.js')

exports.StdioTransport = transports.StdioTransport
exports.createStdioTransport = transports.createStdioTransport
exports.HttpTransport = transports.HttpTransport
exports.createHttpTransport = transports.createHttpTransport
exports.callMCP = jsonRpc.callMCP
exports.readMcpJsonRpcResponse = jsonRpc.readMcpJsonRpcResponse
exports.redactUrlForLog = jsonRpc.redactUrlForLog
exports.parseSSE = jsonRpc.parseSSE
exports.createTransport = client.createTransport
exports.connectToServer = client.connectToServer
exports.listTools = client.listTools
exports.callTool = client.callTool
exports.disconnectServer = client.disconnectServer
exports.serverSupportsTools = client.serverSupportsTools
exports.MCPClient = client.MCPClient
exports.MCPConnectionTimeoutError = client.MCPConnectionTimeoutError
exports.listResources = client.listResources
exports.listResourceTemplates = client.listResourceTemplates
exports.readResource = client.readResource
exports.subscribeToResources = client.subscribeToResources
exports.unsubscribeFromResources = client.unsubscribeFromResources
exports.listPrompts = client.listPrompts
exports.getPrompt = client.getPrompt
exports.serverSupportsResources = client.serverSupportsResources
exports.serverSupportsResourceSubscriptions = client.serverSupportsResourceSubscriptions
exports.serverSupportsPrompts = client.serverSupportsPrompts
exports.MCPManager = manager.MCPManager
exports.createMCPManager = manager.createMCPManager
exports.MCPTool = toolBridge.MCPTool
exports.DeferredMCPTool = toolBridge.DeferredMCPTool
exports.ToolAbortError = toolBridge.ToolAbortError
exports.createMCPToolName = toolBridge.createMCPToolName
exports.parseMCPToolName = toolBridge.parseMCPToolName
exports.createLegacyMCPToolName = toolBridge.createLegacyMCPToolName
exports.canonicalMCPToolNameCandidates = toolBridge.canonicalMCPToolNameCandidates
exports.resolveMCPToolAlias = toolBridge.resolveMCPToolAlias
exports.getMCPToolOriginKey = toolBridge.getMCPToolOriginKey
exports.deduplicateMCPToolsByName = toolBridge.deduplicateMCPToolsByName
exports.isRetriableConnectionError = toolBridge.isRetriableConnectionError
exports.sortMCPToolsByName = manager.sortMCPToolsByName
exports.resolveSubscriptionPostAction = manager.resolveSubscriptionPostAction
exports.MCPToolCache = toolCache.MCPToolCache
exports.readMCPConfigFile = configWriter.readMCPConfigFile
exports.writeMCPConfigFile = configWriter.writeMCPConfigFile
exports.validateServerName = configWriter.validateServerName
exports.addMCPServer = configWriter.addMCPServer
exports.updateMCPServer = configWriter.updateMCPServer
exports.removeMCPServer = configWriter.removeMCPServer
exports.getMCPServer = configWriter.getMCPServer
exports.listMCPServers = configWriter.listMCPServers
exports.getMCPConfigPath = configWriter.getMCPConfigPath
exports.readDisabledServers = configWriter.readDisabledServers
exports.setServerDisabled = configWriter.setServerDisabled
exports.readEnabledServers = configWriter.readEnabledServers
exports.setServerForceEnabled = configWriter.setServerForceEnabled
exports.setMcpServerEnabled = configWriter.setMcpServerEnabled
exports.discoverAndLoadMCPTools = loader.discoverAndLoadMCPTools
exports.loadAllMCPConfigs = config.loadAllMCPConfigs
exports.validateServerConfig = config.validateServerConfig
exports.isExaMCPServer = config.isExaMCPServer
exports.filterExaMCPServers = config.filterExaMCPServers
exports.extractExaApiKey = config.extractExaApiKey
exports.analyzeAuthError = oauthDiscovery.analyzeAuthError
exports.detectAuthError = oauthDiscovery.detectAuthError
exports.discoverOAuthEndpoints = oauthDiscovery.discoverOAuthEndpoints
exports.extractOAuthEndpoints = oauthDiscovery.extractOAuthEndpoints
exports.extractMcpAuthServerUrl = oauthDiscovery.extractMcpAuthServerUrl
exports.extractOAuthChallengeScopes = oauthDiscovery.extractOAuthChallengeScopes
exports.rfc9728ProtectedResourceMetadataUrl = oauthDiscovery.rfc9728ProtectedResourceMetadataUrl
exports.fetchResourceMetadataScopes = oauthDiscovery.fetchResourceMetadataScopes
exports.buildWellKnownUrls = oauthDiscovery.buildWellKnownUrls
exports.MCPOAuthFlow = oauthFlow.MCPOAuthFlow
exports.configureMCP = hooks.configureMCP
exports.configuredHooks = hooks.configuredHooks

/**
 * Type check only (no code): this module's exports match the declarations users see (index.d.ts).
 * MCPTool and DeferredMCPTool are left to lib/tool-bridge.js: their declarations have private
 * members, which TypeScript compares by declaration, not by shape.
 * @template {Omit<typeof import('./index.js'), 'MCPTool' | 'DeferredMCPTool'>} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
