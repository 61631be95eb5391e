'use strict'
// mcp-native/transports/http: the Streamable HTTP transport (18.3.4 `transports/http.ts`); in lib/core.js, with the agent's rules (lib/transports-current.js).
const http = require('../../transports-current.js')
exports.HttpTransport = http.HttpTransport
exports.createHttpTransport = http.createHttpTransport
