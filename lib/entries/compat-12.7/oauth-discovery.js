'use strict'
// mcp-native/compat-12.7/oauth-discovery: the 12.7 profile of mcp-native/oauth-discovery (SPEC 11.3); the same objects.
module.exports = require('../oauth-discovery.js')
