'use strict'
// mcp-native/compat-12.7/json-rpc: the 12.7 profile of mcp-native/json-rpc (SPEC 11.3): 12.7's
// callMCP (the first truthy JSON value of the body; a 60 s deadline in every case).
const j = require('../../json-rpc.js')
exports.callMCP = j.callMCP127
exports.parseSSE = j.parseSSE
