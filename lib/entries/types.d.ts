// mcp-native/types: the types and values of the agent's `types.ts` as it ships today (18.3.4), and
// the content types it takes from the agent's UI package, MCPRequestHandler, SourceMeta and
// MCPError. Types that belong to other modules (the config's, the tool cache, the tool objects,
// OAuth discovery's) are theirs only: the agent's `src/mcp/index.ts` re-exports every module, and
// a name two of them export is ambiguous there. 12.7's list: mcp-native/compat-12.7/types.
export type {
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcResponse,
  JsonRpcError,
  JsonRpcMessage,
  MCPAuthConfig,
  MCPRequestIdFormat,
  MCPStdioServerConfig,
  MCPHttpServerConfig,
  MCPSseServerConfig,
  MCPServerConfig,
  MCPConfigFile,
  MCPIcon,
  MCPImplementation,
  MCPClientCapabilities,
  MCPServerCapabilities,
  MCPInitializeParams,
  MCPInitializeResult,
  MCPToolAnnotations,
  MCPToolExecution,
  MCPToolDefinition,
  MCPToolsListResult,
  MCPToolCallParams,
  MCPAuthChallenge,
  MCPToolCallResult,
  MCPRequestOptions,
  MCPTransport,
  TransportFactory,
  MCPServerConnection,
  MCPToolWithServer,
  MCPAnnotations,
  MCPResource,
  MCPResourceTemplate,
  MCPResourcesListResult,
  MCPResourceTemplatesListResult,
  MCPResourceContentItem,
  MCPResourceReadResult,
  MCPResourceReadParams,
  MCPResourceSubscribeParams,
  MCPPromptArgument,
  MCPPrompt,
  MCPPromptsListResult,
  MCPAudioContent,
  MCPPromptContent,
  MCPPromptMessage,
  MCPGetPromptParams,
  MCPGetPromptResult,
  MCPTextContent,
  MCPImageContent,
  MCPResourceContent,
  MCPContent,
  MCPRequestHandler,
  SourceMeta,
  MCPError,
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
