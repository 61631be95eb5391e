'use strict'
// mcp-native/client: mirrors the reference module `client.ts` (SPEC 5). The face lives in lib/client.js.
module.exports = require('../client.js')
