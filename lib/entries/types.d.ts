// mcp-native/types: the types of the reference module `types.ts`.
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
  MCPLoadResult,
  MCPLoadedConfigs,
  MCPManagerOptions,
  MCPTool,
  MCPToolFactory,
  Tool,
  MCPHandshakeOptions,
  MCPReconnectOptions,
  MCPConnectOptions,
  MCPClientOptions,
  LoadMCPConfigsOptions,
  LoadMCPConfigsResult,
  ExaFilterResult,
  MCPToolDetails,
  MCPToolsLoadOptions,
  MCPToolsLoadResult,
  AuthDetectionResult,
  OAuthEndpoints,
  MCPOAuthConfig,
} from '../../index'

/** The `$schema` the config writer puts in a new config file. */
export declare const MCP_CONFIG_SCHEMA_URL: string
/** The protocol revision the root asks for. */
export declare const MCP_PROTOCOL_VERSION: '2025-11-25'
/** The server notifications the manager acts on. */
export declare const MCPNotificationMethods: {
  readonly TOOLS_LIST_CHANGED: 'notifications/tools/list_changed'
  readonly RESOURCES_LIST_CHANGED: 'notifications/resources/list_changed'
  readonly RESOURCES_UPDATED: 'notifications/resources/updated'
  readonly PROMPTS_LIST_CHANGED: 'notifications/prompts/list_changed'
}
/** A JSON-RPC error object from a thrown value (-32603 "Internal error" when it has none). */
export declare function toJsonRpcError(error: unknown): { code: number; message: string }
