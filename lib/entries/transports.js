'use strict'
// mcp-native/transports: mirrors the reference module `transports/index.ts`.
const root = require('../core.js')
const http = require('../http-current.js')

exports.StdioTransport = root.StdioTransport
exports.createStdioTransport = root.createStdioTransport
exports.HttpTransport = http.HttpTransport
exports.createHttpTransport = http.createHttpTransport
