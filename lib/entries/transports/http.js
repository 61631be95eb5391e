'use strict'
// mcp-native/transports/http: the Streamable HTTP transport (18.3.4 `transports/http.ts`); in lib/core.js.
const core = require('../../core.js')
exports.HttpTransport = core.HttpTransport
exports.createHttpTransport = core.createHttpTransport
