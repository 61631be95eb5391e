'use strict'
// mcp-native/compat-12.7/loader: the 12.7 loader (SPEC 8.4): its manager is the 12.7 one.
const { discoverAndLoadMCPTools127 } = require('../../loader.js')
module.exports = { discoverAndLoadMCPTools: discoverAndLoadMCPTools127 }
