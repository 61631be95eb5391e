'use strict'
// mcp-native/loader: the loader as the agent ships it today (18.3.4 `loader.ts`, SPEC 8.4, 11.3).
const { discoverAndLoadMCPTools } = require('../loader.js')
module.exports = { discoverAndLoadMCPTools }

/**
 * Type check only (no code): this module's exports match the declarations users see (loader.d.ts).
 * @template {typeof import('./loader.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
