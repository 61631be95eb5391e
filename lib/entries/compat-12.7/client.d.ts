// mcp-native/compat-12.7/client: the 12.7 function API (SPEC 5): protocol 2025-03-26 by default,
// `timeout: 0` at once, no roots.
import type { MCPConnectOptions, MCPServerConfig, MCPServerConnection } from '../../../index'
export { listTools, callTool, disconnectServer, serverSupportsTools, createTransport, MCPClient } from '../../../index'
export type { MCPHandshakeOptions, MCPReconnectOptions, MCPConnectOptions, MCPClientOptions } from '../../../index'
export { DEFAULT_CAPABILITIES, SUPPORTED_PROTOCOL_VERSIONS } from '../client'

/**
 * Creates the transport and runs the handshake, within `config.timeout ?? 30000` ms
 * (`Connection to MCP server "<name>" timed out after <t>ms`). On any failure the transport is
 * closed before the promise rejects.
 */
export declare function connectToServer(name: string, config: MCPServerConfig, options?: MCPConnectOptions): Promise<MCPServerConnection>
