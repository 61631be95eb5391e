'use strict'
// mcp-native/manager: the manager as the agent ships it today (18.3.4 `manager.ts`, SPEC 11.3–11.4).
// The face lives in lib/manager-current.js; the 12.7 manager is mcp-native/compat-12.7/manager.
module.exports = require('../manager-current.js')
