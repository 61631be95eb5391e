// mcp-native/compat-12.7: the 12.7 profile of the package (SPEC 11.3): the values of sections 1–10
// (the root's where the two agree, 12.7's where they conflict) and the root's types.
export type * from '../../index'
export {
  StdioTransport,
  createStdioTransport,
  HttpTransport,
  createHttpTransport,
  parseSSE,
  createTransport,
  listTools,
  callTool,
  disconnectServer,
  serverSupportsTools,
  MCPClient,
  ToolAbortError,
  MCPToolCache,
  readMCPConfigFile,
  getMCPServer,
  listMCPServers,
  getMCPConfigPath,
  loadAllMCPConfigs,
  validateServerConfig,
  isExaMCPServer,
  filterExaMCPServers,
  extractExaApiKey,
  MCPOAuthFlow,
} from '../../index'
export { MCPManager, createMCPManager } from './compat-12.7/manager'
export { connectToServer } from './compat-12.7/client'
export { callMCP } from './compat-12.7/json-rpc'
export { analyzeAuthError, detectAuthError, discoverOAuthEndpoints, extractOAuthEndpoints } from './compat-12.7/oauth-discovery'
export type { AuthDetectionResult, OAuthEndpoints, DiscoverOAuthEndpointsOptions } from './compat-12.7/oauth-discovery'
export {
  writeMCPConfigFile,
  validateServerName,
  addMCPServer,
  updateMCPServer,
  removeMCPServer,
} from './compat-12.7/config-writer'
export {
  discoverAndLoadMCPTools,
  type MCPToolsLoadOptions,
  type MCPToolsLoadResult,
} from './compat-12.7/loader'
export {
  MCPTool,
  DeferredMCPTool,
  createMCPToolName,
  parseMCPToolName,
  type MCPToolDetails,
  type MCPToolResult,
  type Tool,
} from './compat-12.7/tool-bridge'
export type { MCPLoadResult, MCPManagerOptions, MCPToolFactory } from './compat-12.7/types'
