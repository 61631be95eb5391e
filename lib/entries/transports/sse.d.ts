// mcp-native/transports/sse: the legacy HTTP+SSE transport (18.3.4 `transports/sse.ts`).
import type { HttpTransport, MCPSseServerConfig } from '../../../index'

/** The legacy stream did not name its endpoint within the deadline. */
export declare class LegacySseConnectionTimeoutError extends Error {
  constructor(timeoutMs: number)
}

/** The legacy HTTP+SSE protocol (revision 2024-11-05) from the start: the event stream is opened
 * by the first request and names the endpoint requests are POSTed to. */
export declare class LegacySseTransport extends HttpTransport {
  constructor(config: MCPSseServerConfig)
}

/** A connected legacy transport. */
export declare function createSseTransport(config: MCPSseServerConfig): Promise<LegacySseTransport>
