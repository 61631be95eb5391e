'use strict'
// mcp-native/compat-12.7/types: the 12.7 profile of mcp-native/types (SPEC 11.3); the same objects.
module.exports = require('../types.js')
