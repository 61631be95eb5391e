// mcp-native/client: mirrors the reference module `client.ts` (plus createTransport and MCPClient).
export { connectToServer, listTools, callTool, disconnectServer, serverSupportsTools, createTransport, MCPClient } from './index'
export type { MCPHandshakeOptions, MCPReconnectOptions, MCPConnectOptions, MCPClientOptions } from './index'
/** [beyond] The protocol revisions the client accepts in an initialize answer. */
export declare const SUPPORTED_PROTOCOL_VERSIONS: readonly string[]
