// mcp-native/transports/header-policy: the agent's header precedence and redirect rules
// (18.3.4 `transports/header-policy.ts`).

/** The headers of one MCP HTTP request, by origin. */
export interface MCPHeaderSources {
  /** The client's own headers (protocol, authorization): they win, in any case of name. */
  generated: Record<string, string>
  /** The server entry's configured headers. */
  configured?: Record<string, string>
}

/** Configured headers under generated ones (names compared in any case). */
export declare function mergeMCPHeaders(sources: MCPHeaderSources): Record<string, string>
/** Sets a generated header, removing entries of its name in another case. */
export declare function setGeneratedHeader(headers: Record<string, string>, name: string, value: string): void
/** `headers` without `name` (any case); the same object when there is none. */
export declare function withoutHeader(headers: Record<string, string> | undefined, name: string): Record<string, string> | undefined

/** One fetch of an MCP endpoint. */
export interface MCPFetchInit {
  method: 'GET' | 'POST' | 'DELETE'
  body?: string
  signal?: AbortSignal
}

/**
 * A fetch with the header precedence; origin-locked: redirects by hand (at most 5), configured
 * headers only to the configured origin, no 301/302/303 for a request other than GET.
 */
export declare function mcpFetch(url: string, init: MCPFetchInit, sources: MCPHeaderSources, originLocked: boolean): Promise<Response>
