'use strict'
// The transports at the root (18.3.4 `transports/stdio.ts`, `transports/http.ts`): the package's
// transports (lib/core.js) failing with the agent's errors (lib/root-errors.js: the package's
// error as `cause`), and the HTTP one with the agent's rules — configured headers never replace
// the protocol headers, redirects as `fetch` follows them (by hand for `headerPolicy:
// "origin-locked"`), a refused SSE resumption fails at once after one `onAuthError` refresh. The
// 12.7 profile (mcp-native/compat-12.7) keeps lib/core.js's classes as they are.

const core = require('./core.js')
const { mapTransportErrors } = require('./root-errors.js')

/** The root's stdio transport: `StdioTransport` of lib/core.js failing with 18.3.4's errors. */
class StdioTransport extends core.StdioTransport {
  /**
   * @param {import('../index.js').MCPStdioServerConfig} config
   * @param {any} [makeNative]
   */
  constructor(config, makeNative) {
    super(config, makeNative)
    mapTransportErrors(this, { ...config, type: 'stdio' })
  }
}

/** The root's HTTP transport: `HttpTransport` of lib/core.js with the agent's rules and errors. */
class HttpTransport extends core.HttpTransport {
  /**
   * @param {import('../index.js').MCPHttpServerConfig | import('../index.js').MCPSseServerConfig} config
   * @param {any} [makeNative]
   */
  constructor(config, makeNative) {
    super(config, makeNative)
    mapTransportErrors(this, { ...config, type: 'http' })
  }

  /** @returns {import('../index.js').MCPHttpServerConfig} */
  _transportConfig() {
    return /** @type {any} */ ({ ...this.config, protocolHeadersWin: true })
  }
}

/**
 * A connected root stdio transport.
 * @param {import('../index.js').MCPStdioServerConfig} config
 */
function createStdioTransport(config) {
  return core.connected(new StdioTransport(config))
}

/**
 * A connected root HTTP transport.
 * @param {import('../index.js').MCPHttpServerConfig | import('../index.js').MCPSseServerConfig} config
 */
function createHttpTransport(config) {
  return core.connected(new HttpTransport(config))
}

module.exports = { StdioTransport, createStdioTransport, HttpTransport, createHttpTransport }
