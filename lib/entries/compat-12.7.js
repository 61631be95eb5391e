'use strict'
// mcp-native/compat-12.7: the package's surface as the 12.7 agent used it (SPEC 11.3), with 12.7's
// defaults. Where the root and this profile agree they export the same objects; where they
// conflict (the list is in the README), this profile has 12.7's.
const { MCPManager, createMCPManager } = require('../manager.js')
const { discoverAndLoadMCPTools127: discoverAndLoadMCPTools } = require('../loader.js')
module.exports = { ...require('../../index.js'), MCPManager, createMCPManager, discoverAndLoadMCPTools }
