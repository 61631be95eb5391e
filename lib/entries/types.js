'use strict'
// mcp-native/types: the types (types.d.ts) and the few values of the agent's `types.ts` (18.3.4).
const t = require('../types.js')
exports.MCP_CONFIG_SCHEMA_URL = t.MCP_CONFIG_SCHEMA_URL
exports.MCP_PROTOCOL_VERSION = t.MCP_PROTOCOL_VERSION
exports.MCPNotificationMethods = t.MCPNotificationMethods
exports.toJsonRpcError = t.toJsonRpcError
