'use strict'
// mcp-native/transports: mirrors the reference module `transports/index.ts`.
const root = require('../transports-current.js')

exports.StdioTransport = root.StdioTransport
exports.createStdioTransport = root.createStdioTransport
exports.HttpTransport = root.HttpTransport
exports.createHttpTransport = root.createHttpTransport
