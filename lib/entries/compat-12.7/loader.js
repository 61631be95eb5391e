'use strict'
// mcp-native/compat-12.7/loader: the 12.7 profile of mcp-native/loader (SPEC 11.3); the same objects.
module.exports = require('../loader.js')
