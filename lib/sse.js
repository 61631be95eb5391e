'use strict'
// mcp-native/transports/sse: `type: "sse"` as the agent means it today (18.3.4
// `transports/sse.ts`): the legacy HTTP+SSE protocol of revision 2024-11-05 from the start — the
// event stream is opened first and names the endpoint that requests are POSTed to. The protocol
// lives in Rust with the Streamable HTTP transport (src/transport/http/legacy.rs); this is its face.

const { HttpTransport, connected } = require('./core.js')
const { mapTransportErrors } = require('./root-errors.js')

/** The legacy stream did not name its endpoint within the deadline (18.3.4's class, for `instanceof`). */
class LegacySseConnectionTimeoutError extends Error {
  /** @param {number} timeoutMs */
  constructor(timeoutMs) {
    super(`Legacy SSE endpoint timeout after ${timeoutMs}ms`)
    this.name = 'LegacySseConnectionTimeoutError'
  }
}

/**
 * The legacy HTTP+SSE transport: an HttpTransport whose first request opens the event stream
 * (no Streamable HTTP POST is tried). `connect()` does no I/O, as every transport of the package.
 */
class LegacySseTransport extends HttpTransport {
  /**
   * @param {import('../index.js').MCPSseServerConfig} config
   * @param {any} [makeNative]
   */
  constructor(config, makeNative) {
    super(config, makeNative)
    // 18.3.4's errors, as the legacy transport words them (lib/root-errors.js).
    mapTransportErrors(this, { ...config, type: 'sse' })
  }

  /** @returns {import('../index.js').MCPSseServerConfig} */
  _transportConfig() {
    return /** @type {any} */ ({ ...this.config, type: 'sse', legacyOnly: true, protocolHeadersWin: true })
  }
}

/**
 * A connected legacy transport.
 * @param {import('../index.js').MCPSseServerConfig} config
 */
function createSseTransport(config) {
  return connected(new LegacySseTransport(config))
}

module.exports = { LegacySseTransport, LegacySseConnectionTimeoutError, createSseTransport }
