'use strict'
// mcp-native/timeout: the agent's deadlines as it ships today (18.3.4 `timeout.ts`); in lib/timeout.js.
const t = require('../timeout.js')
exports.resolveMCPTimeoutMs = t.resolveMCPTimeoutMs
exports.resolveMCPStartupTimeoutMs = t.resolveMCPStartupTimeoutMs
exports.isMCPTimeoutEnabled = t.isMCPTimeoutEnabled
exports.describeMCPTimeout = t.describeMCPTimeout
exports.getNeverAbortSignal = t.getNeverAbortSignal
exports.createMCPTimeout = t.createMCPTimeout
