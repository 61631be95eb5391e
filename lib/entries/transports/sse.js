'use strict'
// mcp-native/transports/sse: the legacy HTTP+SSE transport (18.3.4 `transports/sse.ts`); in lib/sse.js.
const s = require('../../sse.js')
exports.LegacySseTransport = s.LegacySseTransport
exports.LegacySseConnectionTimeoutError = s.LegacySseConnectionTimeoutError
exports.createSseTransport = s.createSseTransport
