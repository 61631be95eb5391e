// mcp-native/json-rpc: mirrors the reference module `json-rpc.ts`.
export { callMCP, parseSSE } from '../../index'
export type { CallMCPOptions, JsonRpcResponse, JsonRpcRequest, JsonRpcNotification, JsonRpcError, JsonRpcMessage } from '../../index'
