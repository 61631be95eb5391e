// mcp-native/client: the function API as the agent ships it today (18.3.4 `client.ts`, plus
// createTransport and MCPClient).
export {
  connectToServer,
  listTools,
  callTool,
  disconnectServer,
  serverSupportsTools,
  createTransport,
  MCPClient,
  MCPConnectionTimeoutError,
  listResources,
  listResourceTemplates,
  readResource,
  subscribeToResources,
  unsubscribeFromResources,
  listPrompts,
  getPrompt,
  serverSupportsResources,
  serverSupportsResourceSubscriptions,
  serverSupportsPrompts,
} from '../../index'
export type {
  MCPHandshakeOptions,
  MCPReconnectOptions,
  MCPConnectOptions,
  MCPCurrentConnectOptions,
  MCPClientOptions,
  MCPResource,
  MCPResourceTemplate,
  MCPResourceReadResult,
  MCPPrompt,
  MCPGetPromptResult,
} from '../../index'
import type { MCPClientCapabilities } from '../../index'
/** [beyond] The capabilities the client declares unless `capabilities` is given: `{ roots: { listChanged: false } }`. */
export declare const DEFAULT_CAPABILITIES: Readonly<MCPClientCapabilities>
/** [beyond] The protocol revisions the client accepts in an initialize answer. */
export declare const SUPPORTED_PROTOCOL_VERSIONS: readonly string[]
