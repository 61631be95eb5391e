'use strict'
// mcp-native/types: the values of the agent's `types.ts` as it ships today (18.3.4); the types are
// in lib/entries/types.d.ts. The 12.7 module had no values (mcp-native/compat-12.7/types).

/** The `$schema` the config writer puts in a new config file. */
const MCP_CONFIG_SCHEMA_URL = 'https://raw.githubusercontent.com/can1357/oh-my-pi/main/packages/coding-agent/src/config/mcp-schema.json'

/** The protocol revision the root asks for. */
const MCP_PROTOCOL_VERSION = '2025-11-25'

/** The server notifications the manager acts on. */
const MCPNotificationMethods = Object.freeze({
  TOOLS_LIST_CHANGED: 'notifications/tools/list_changed',
  RESOURCES_LIST_CHANGED: 'notifications/resources/list_changed',
  RESOURCES_UPDATED: 'notifications/resources/updated',
  PROMPTS_LIST_CHANGED: 'notifications/prompts/list_changed',
})

/**
 * A JSON-RPC error object from a thrown value: an Error's message (and numeric `code`), an object's
 * numeric `code` and string `message`, else -32603 "Internal error".
 * @param {unknown} error
 * @returns {{ code: number, message: string }}
 */
function toJsonRpcError(error) {
  if (error instanceof Error) {
    const code = /** @type {{ code?: unknown }} */ (error).code
    return { code: typeof code === 'number' ? code : -32603, message: error.message }
  }
  if (typeof error === 'object' && error !== null) {
    const o = /** @type {Record<string, unknown>} */ (error)
    if (typeof o.code === 'number' && typeof o.message === 'string') return { code: o.code, message: o.message }
  }
  return { code: -32603, message: 'Internal error' }
}

module.exports = { MCP_CONFIG_SCHEMA_URL, MCP_PROTOCOL_VERSION, MCPNotificationMethods, toJsonRpcError }
