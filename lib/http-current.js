'use strict'
// The Streamable HTTP transport at the root (18.3.4 `transports/http.ts`): the package's HTTP
// transport (lib/core.js) with the agent's rules — configured headers never replace the protocol
// headers, redirects as `fetch` follows them (by hand for `headerPolicy: "origin-locked"`), a
// refused SSE resumption fails at once after one `onAuthError` refresh. The 12.7 profile
// (mcp-native/compat-12.7) keeps lib/core.js's class as it is.

const core = require('./core.js')

/** The root's HTTP transport: `HttpTransport` of lib/core.js with the agent's rules. */
class HttpTransport extends core.HttpTransport {
  /** @returns {import('../index.js').MCPHttpServerConfig} */
  _transportConfig() {
    return /** @type {any} */ ({ ...this.config, protocolHeadersWin: true })
  }
}

/**
 * A connected root HTTP transport.
 * @param {import('../index.js').MCPHttpServerConfig | import('../index.js').MCPSseServerConfig} config
 */
async function createHttpTransport(config) {
  const transport = new HttpTransport(config)
  await transport.connect()
  return transport
}

module.exports = { HttpTransport, createHttpTransport }
