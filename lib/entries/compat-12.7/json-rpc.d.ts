// mcp-native/compat-12.7/json-rpc: the 12.7 profile of mcp-native/json-rpc (SPEC 11.3).
import type { CallMCPOptions, JsonRpcResponse } from '../../../index'
export { parseSSE } from '../../../index'
export type { CallMCPOptions, JsonRpcResponse, JsonRpcRequest, JsonRpcNotification, JsonRpcError, JsonRpcMessage } from '../../../index'

/** POSTs one JSON-RPC request; resolves with the whole envelope (`error` is returned, not thrown). */
export declare function callMCP<T = unknown>(
  url: string,
  method: string,
  params?: Record<string, unknown>,
  options?: CallMCPOptions,
): Promise<JsonRpcResponse<T>>
