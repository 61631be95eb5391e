'use strict'
// mcp-native/transports/stdio: the stdio transport (18.3.4 `transports/stdio.ts`); in lib/core.js.
const core = require('../../core.js')
exports.StdioTransport = core.StdioTransport
exports.createStdioTransport = core.createStdioTransport
