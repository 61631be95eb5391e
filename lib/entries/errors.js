'use strict'
// mcp-native/errors: MCP failures as the agent classifies and reports them today (18.3.4
// `errors.ts`, SPEC 11.2). The face lives in lib/errors.js.
const errors = require('../errors.js')
exports.MCPTransportError = errors.MCPTransportError
exports.mcpTraceIdFromHeaders = errors.mcpTraceIdFromHeaders
exports.createMCPJsonRpcError = errors.createMCPJsonRpcError
exports.normalizeMCPTransportError = errors.normalizeMCPTransportError
exports.formatMCPToolFailure = errors.formatMCPToolFailure

/**
 * Type check only (no code): this module's exports match the declarations users see (errors.d.ts).
 * @template {typeof import('./errors.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
