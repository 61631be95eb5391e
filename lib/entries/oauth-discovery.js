'use strict'
// mcp-native/oauth-discovery: OAuth discovery as the agent ships it today (18.3.4
// `oauth-discovery.ts`, SPEC 11.3), and the package's `detectAuthError`; 12.7's forms are
// mcp-native/compat-12.7/oauth-discovery. In lib/oauth-discovery.js.
const d = require('../oauth-discovery.js')

exports.extractMcpAuthServerUrl = d.extractMcpAuthServerUrl
exports.extractOAuthChallengeScopes = d.extractOAuthChallengeScopes
exports.extractOAuthEndpoints = d.extractOAuthEndpoints
exports.analyzeAuthError = d.analyzeAuthError
exports.rfc9728ProtectedResourceMetadataUrl = d.rfc9728ProtectedResourceMetadataUrl
exports.fetchResourceMetadataScopes = d.fetchResourceMetadataScopes
exports.discoverOAuthEndpoints = d.discoverOAuthEndpoints
exports.buildWellKnownUrls = d.buildWellKnownUrls
exports.detectAuthError = d.detectAuthError

/**
 * Type check only (no code): this module's exports match the declarations users see (oauth-discovery.d.ts).
 * @template {typeof import('./oauth-discovery.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
