'use strict'
// mcp-native/manager: mirrors the reference module `manager.ts` (SPEC 6). The face lives in lib/manager.js.
module.exports = require('../manager.js')
