'use strict'
// mcp-native/request-id: request ids as the agent allocates them today (18.3.4 `request-id.ts`).
exports.RequestIdAllocator = require('../request-id.js').RequestIdAllocator
