'use strict'
// mcp-native/tool-bridge: the tool objects as the agent ships them today (18.3.4 `tool-bridge.ts`,
// SPEC 11.3); the 12.7 ones are mcp-native/compat-12.7/tool-bridge's.
module.exports = require('../tool-bridge-current.js')
