'use strict'
// mcp-native/compat-12.7/transports: the 12.7 profile of mcp-native/transports (SPEC 11.3): the
// package's transports with 12.7's HTTP rules (the root's HTTP transport has the agent's).
const core = require('../../core.js')

exports.StdioTransport = core.StdioTransport
exports.createStdioTransport = core.createStdioTransport
exports.HttpTransport = core.HttpTransport
exports.createHttpTransport = core.createHttpTransport
