'use strict'
// mcp-native/tool-bridge: mirrors the reference module `tool-bridge.ts`.
module.exports = require('../tool-bridge.js')
