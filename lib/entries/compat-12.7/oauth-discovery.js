'use strict'
// mcp-native/compat-12.7/oauth-discovery: the 12.7 profile of mcp-native/oauth-discovery (SPEC 8.6,
// 11.3): 12.7's `analyzeAuthError`, `extractOAuthEndpoints` and `discoverOAuthEndpoints(serverUrl,
// options?)`; `detectAuthError` is the root's very object.
const d = require('../../oauth-discovery.js')

exports.analyzeAuthError = d.analyzeAuthError127
exports.detectAuthError = d.detectAuthError
exports.discoverOAuthEndpoints = d.discoverOAuthEndpoints127
exports.extractOAuthEndpoints = d.extractOAuthEndpoints127

/**
 * Type check only (no code): this module's exports match the declarations users see (oauth-discovery.d.ts).
 * @template {typeof import('./oauth-discovery.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
