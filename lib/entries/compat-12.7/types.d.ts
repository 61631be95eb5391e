// mcp-native/compat-12.7/types: the 12.7 profile of mcp-native/types (SPEC 11.3): the root's types,
// but those of the tool objects and of what holds them, which are 12.7's.
import type * as Root from '../../../index'
import type { Tool } from './tool-bridge'
export type {
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcError,
  JsonRpcMessage,
  MCPAuthConfig,
  MCPStdioServerConfig,
  MCPHttpServerConfig,
  MCPSseServerConfig,
  MCPServerConfig,
  MCPConfigFile,
  MCPImplementation,
  MCPClientCapabilities,
  MCPServerCapabilities,
  MCPInitializeParams,
  MCPInitializeResult,
  MCPToolDefinition,
  MCPToolsListResult,
  MCPToolCallParams,
  MCPTextContent,
  MCPImageContent,
  MCPResourceContent,
  MCPContent,
  MCPToolCallResult,
  MCPRequestOptions,
  MCPRequestHandler,
  MCPTransport,
  TransportFactory,
  MCPServerConnection,
  MCPToolWithServer,
  SourceMeta,
  MCPError,
  CallMCPOptions,
  MCPToolCache,
  AuthStorage,
  MCPDiscoverOptions,
  MCPLoadedConfigs,
  MCPHandshakeOptions,
  MCPReconnectOptions,
  MCPConnectOptions,
  MCPClientOptions,
  LoadMCPConfigsOptions,
  LoadMCPConfigsResult,
  ExaFilterResult,
  MCPOAuthConfig,
} from '../../../index'
export type { MCPTool, MCPToolDetails, Tool } from './tool-bridge'
export type { AuthDetectionResult, OAuthEndpoints } from './oauth-discovery'
export type { MCPToolsLoadOptions, MCPToolsLoadResult } from './loader'
export type MCPLoadResult<TTool = Tool> = Root.MCPLoadResult<TTool>
export type MCPManagerOptions<TTool = Tool> = Root.MCPManagerOptions<TTool>
export type MCPToolFactory<TTool = Tool> = Root.MCPToolFactory<TTool>
