'use strict'
// mcp-native/tool-cache: mirrors the reference module `tool-cache.ts`.
const toolCache = require('../tool-cache.js')

exports.MCPToolCache = toolCache.MCPToolCache

/**
 * Type check only (no code): this module's exports match the declarations users see (tool-cache.d.ts).
 * @template {typeof import('./tool-cache.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
