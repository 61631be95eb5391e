'use strict'
// mcp-native/json-rpc: one-shot JSON-RPC over HTTP as the agent calls it today (18.3.4
// `json-rpc.ts`, SPEC 11.4); the 12.7 form is mcp-native/compat-12.7/json-rpc. In lib/json-rpc.js.
const j = require('../json-rpc.js')
exports.callMCP = j.callMCP
exports.readMcpJsonRpcResponse = j.readMcpJsonRpcResponse
exports.redactUrlForLog = j.redactUrlForLog
exports.parseSSE = j.parseSSE
