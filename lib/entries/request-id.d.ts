// mcp-native/request-id: request ids as the agent allocates them today (18.3.4 `request-id.ts`).
import type { MCPRequestIdFormat } from '../../index'

/** Ids for one transport's requests: integers from 1, or 16-hex-digit strings with `"string"`. */
export declare class RequestIdAllocator {
  next(format: MCPRequestIdFormat | undefined): string | number
}
