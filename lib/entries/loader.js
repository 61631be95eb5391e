'use strict'
// mcp-native/loader: mirrors the reference module `loader.ts`.
module.exports = require('../loader.js')

/**
 * Type check only (no code): this module's exports match the declarations users see (loader.d.ts).
 * @template {typeof import('./loader.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
