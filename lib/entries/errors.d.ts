// mcp-native/errors: MCP failures as the agent classifies and reports them today (18.3.4 `errors.ts`).

/** The transport of a failed operation. */
export type MCPTransportKind = 'http' | 'stdio' | 'unknown'
/** How far the operation got. */
export type MCPFailureStage = 'connect' | 'send' | 'receive' | 'decode' | 'protocol'
/** What failed, as a stable class. */
export type MCPFailureClass =
  | 'connect'
  | 'timeout'
  | 'eof'
  | 'reset'
  | 'malformed_response'
  | 'json_rpc'
  | 'http_status'
  | 'closed'
  | 'unknown'

/** An MCP failure with its diagnosis; its message and data are redacted of credentials. */
export declare class MCPTransportError extends Error {
  constructor(options: {
    transport: MCPTransportKind
    stage: MCPFailureStage
    failure: MCPFailureClass
    message: string
    retryable: boolean
    code?: string | number
    data?: string
    traceId?: string
    cause?: unknown
  })
  readonly transport: MCPTransportKind
  readonly stage: MCPFailureStage
  readonly failure: MCPFailureClass
  /** Whether a reconnect and one retry are safe. */
  readonly retryable: boolean
  /**
   * The JSON-RPC code, HTTP status or OS error name; else, on the errors of the package's root,
   * the package's own string code (`MCP_TIMEOUT`, `MCP_TRANSPORT_CLOSED`, …).
   */
  readonly code: string | number | undefined
  /** Bounded, redacted JSON text of the JSON-RPC error's data. */
  readonly data: string | undefined
  readonly traceId: string | undefined
}

/** A safe trace id from an HTTP response's headers (`traceparent`, `x-request-id`, …). */
export declare function mcpTraceIdFromHeaders(headers: { get(name: string): string | null }): string | undefined
/** A server's JSON-RPC error, its data redacted. */
export declare function createMCPJsonRpcError(
  transport: MCPTransportKind,
  error: { code: number; message: string; data?: unknown },
  traceId?: string,
): MCPTransportError
/** Any error, classified. */
export declare function normalizeMCPTransportError(
  error: unknown,
  options: { transport: MCPTransportKind; stage: MCPFailureStage; traceId?: string },
): MCPTransportError
/**
 * The text a failed tool call returns: the facts, one per line, then what to do next. A `code` that
 * is one of this package's own strings (`MCP_TIMEOUT`, …) is not a line of it (the text is the
 * agent's, whose codes are JSON-RPC codes, HTTP statuses, exit codes and OS error names).
 */
export declare function formatMCPToolFailure(error: unknown, serverName: string, toolName: string): string
