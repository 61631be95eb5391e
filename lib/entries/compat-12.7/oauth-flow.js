'use strict'
// mcp-native/compat-12.7/oauth-flow: the 12.7 profile of mcp-native/oauth-flow (SPEC 11.3); the same objects.
module.exports = require('../oauth-flow.js')
