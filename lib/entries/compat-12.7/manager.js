'use strict'
// mcp-native/compat-12.7/manager: the 12.7 manager (SPEC 6) and its helpers; the root's manager is
// the agent's as it ships today (SPEC 11.3).
module.exports = require('../../manager.js')
