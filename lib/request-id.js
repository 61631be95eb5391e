'use strict'
// mcp-native/request-id: request ids as the agent allocates them today (18.3.4 `request-id.ts`):
// integers from 1 by default, or with format "string" a 16-hex-digit time-ordered id. The
// package's own transports number their requests in Rust; this allocator is for callers that
// speak JSON-RPC themselves.

const EPOCH = 1420070400000
const MAX_SEQUENCE = 0x3fffff
const MAX_DT = 2 ** 42 - 1
let sequence = (Math.random() * (MAX_SEQUENCE + 1)) >>> 0

/** A 16-hex-digit id: milliseconds since 2015 in the high 42 bits, a process-wide sequence below. */
function snowflake() {
  sequence = (sequence + 1) & MAX_SEQUENCE
  const dt = Math.min(Math.max(Date.now() - EPOCH, 0), MAX_DT)
  return ((BigInt(dt) << 22n) | BigInt(sequence)).toString(16).padStart(16, '0')
}

/** Ids for one transport's requests: never reused for the life of the allocator. */
class RequestIdAllocator {
  #previous = 0

  /**
   * @param {'string' | 'number' | undefined} format
   * @returns {string | number}
   */
  next(format) {
    return format === 'string' ? snowflake() : ++this.#previous
  }
}

module.exports = { RequestIdAllocator }
