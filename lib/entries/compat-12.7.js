'use strict'
// mcp-native/compat-12.7: the package's surface as the 12.7 agent used it (SPEC 11.3), with 12.7's
// defaults. Where the root and this profile agree they export the same objects; today they agree
// on everything (issue 31 moves the root to the agent as it ships today, 18.3.4).
module.exports = require('../../index.js')
