'use strict'
// mcp-native/loader: mirrors the reference module `loader.ts`.
module.exports = require('./lib/loader.js')
