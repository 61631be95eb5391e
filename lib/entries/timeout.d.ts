// mcp-native/timeout: the agent's deadlines as it ships today (18.3.4 `timeout.ts`).

/** A request's deadline: `OMP_MCP_TIMEOUT_MS`, else `configTimeout`, else 30 s; 0 means none. */
export declare function resolveMCPTimeoutMs(configTimeout?: number): number
/** The startup window: `OMP_MCP_STARTUP_TIMEOUT_MS`, else `configTimeout`, else 250 ms; 0 waits for all. */
export declare function resolveMCPStartupTimeoutMs(configTimeout?: number): number
/** Whether a deadline is set (a positive number). */
export declare function isMCPTimeoutEnabled(timeoutMs: number): boolean
/** `"<n>ms"`, or `"disabled"`. */
export declare function describeMCPTimeout(timeoutMs: number): string
/** A signal that never aborts. */
export declare function getNeverAbortSignal(): AbortSignal

/** A deadline over a caller's signal that knows which of the two fired first. */
export interface MCPTimeoutOperation {
  signal?: AbortSignal
  /** Clears the deadline (the caller's signal still aborts). */
  clear: () => void
  /** Whether `error` is this operation's deadline firing. */
  isTimeoutAbort: (error: unknown) => boolean
  /** Whether this operation's own timer fired. */
  timedOut: () => boolean
}

/** A deadline of `timeoutMs` (none unless positive) over `signal`. */
export declare function createMCPTimeout(timeoutMs: number, signal?: AbortSignal): MCPTimeoutOperation
