// mcp-native/json-rpc: one-shot JSON-RPC over HTTP as the agent calls it today (18.3.4 `json-rpc.ts`).
export { callMCP, readMcpJsonRpcResponse, redactUrlForLog, parseSSE } from '../../index'
export type {
  CallMcpOptions,
  MCPFetchImpl,
  CallMCPOptions,
  JsonRpcResponse,
  JsonRpcRequest,
  JsonRpcNotification,
  JsonRpcError,
  JsonRpcMessage,
} from '../../index'
