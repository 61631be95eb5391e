'use strict'
// mcp-native/json-rpc: mirrors the reference module `json-rpc.ts` (SPEC 4). It lives in lib/json-rpc.js.
module.exports = require('../json-rpc.js')
