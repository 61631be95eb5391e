'use strict'
// mcp-native/compat-12.7/config-writer: the 12.7 profile of mcp-native/config-writer (SPEC 11.3); the same objects.
module.exports = require('../config-writer.js')
