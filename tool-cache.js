'use strict'
// mcp-native/tool-cache: mirrors the reference module `tool-cache.ts`.
const toolCache = require('./lib/tool-cache.js')

exports.MCPToolCache = toolCache.MCPToolCache
