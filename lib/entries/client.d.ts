// mcp-native/client: mirrors the reference module `client.ts` (plus createTransport and MCPClient).
export { connectToServer, listTools, callTool, disconnectServer, serverSupportsTools, createTransport, MCPClient } from '../../index'
export type { MCPHandshakeOptions, MCPReconnectOptions, MCPConnectOptions, MCPClientOptions } from '../../index'
import type { MCPClientCapabilities } from '../../index'
/** [beyond] The capabilities the client declares unless `capabilities` is given: `{ roots: { listChanged: false } }`. */
export declare const DEFAULT_CAPABILITIES: Readonly<MCPClientCapabilities>
/** [beyond] The protocol revisions the client accepts in an initialize answer. */
export declare const SUPPORTED_PROTOCOL_VERSIONS: readonly string[]
