'use strict'
// mcp-native/compat-12.7/tool-bridge: the 12.7 tool objects (SPEC 8.1, 8.11).
const { MCPTool, DeferredMCPTool, createMCPToolName, parseMCPToolName, ToolAbortError } = require('../../tool-bridge.js')
module.exports = { MCPTool, DeferredMCPTool, createMCPToolName, parseMCPToolName, ToolAbortError }
