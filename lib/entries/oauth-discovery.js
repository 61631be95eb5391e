'use strict'
// mcp-native/oauth-discovery: mirrors the reference module `oauth-discovery.ts` (SPEC 8.6).
const discovery = require('../oauth-discovery.js')

exports.analyzeAuthError = discovery.analyzeAuthError
exports.detectAuthError = discovery.detectAuthError
exports.discoverOAuthEndpoints = discovery.discoverOAuthEndpoints
exports.extractOAuthEndpoints = discovery.extractOAuthEndpoints
