'use strict'
// mcp-native/configure: the process-wide configuration call that takes the agent's own objects
// (SPEC 11.2); in lib/hooks.js. Also at the package root.
const h = require('../hooks.js')
exports.configureMCP = h.configureMCP
exports.configuredHooks = h.configuredHooks
