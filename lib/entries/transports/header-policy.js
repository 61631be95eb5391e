'use strict'
// mcp-native/transports/header-policy: the agent's header precedence and redirect rules
// (18.3.4 `transports/header-policy.ts`); in lib/header-policy.js.
const h = require('../../header-policy.js')
exports.mergeMCPHeaders = h.mergeMCPHeaders
exports.setGeneratedHeader = h.setGeneratedHeader
exports.withoutHeader = h.withoutHeader
exports.mcpFetch = h.mcpFetch
