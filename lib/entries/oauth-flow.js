'use strict'
// mcp-native/oauth-flow: mirrors the reference module `oauth-flow.ts` (SPEC 8.7, 8.11).
const flow = require('../oauth-flow.js')

exports.MCPOAuthFlow = flow.MCPOAuthFlow
