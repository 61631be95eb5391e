'use strict'
// mcp-native/transports/stdio: the stdio transport (18.3.4 `transports/stdio.ts`); in lib/core.js,
// failing with the agent's errors (lib/transports-current.js).
const stdio = require('../../transports-current.js')
exports.StdioTransport = stdio.StdioTransport
exports.createStdioTransport = stdio.createStdioTransport
