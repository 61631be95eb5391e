'use strict'
// mcp-native/loader (SPEC 8.4): discovery → manager → the agent's loaded tools, in one call. Two
// profiles (SPEC 11.3): the root's runs the manager as the agent ships it today (manager-current.js;
// `onStatus`, `startupTimeoutMs`), `mcp-native/compat-12.7/loader`'s the 12.7 one (`onConnecting`).

const { messageOf } = require('./core.js')
const { hooks, hookLogger } = require('./hooks.js')

/** @typedef {import('../index.js').Tool} Tool */
/** @typedef {import('./entries/loader.js').AgentStorage} AgentStorage */
/**
 * @template [TTool=Tool]
 * @typedef {import('./entries/loader.js').MCPToolsLoadOptions<TTool>} MCPToolsLoadOptions
 */
/**
 * @template [TTool=Tool]
 * @typedef {import('./entries/loader.js').MCPToolsLoadResult<TTool>} MCPToolsLoadResult
 */

/**
 * The tool cache the loader uses: none for `null`, the package's own SQLite store for
 * `undefined` (SPEC 8.11: `<agent dir>/mcp-cache.db`), else one over the given storage.
 * @param {AgentStorage | null | undefined} cacheStorage
 * @param {MCPToolsLoadOptions['logger']} logger
 */
function openCache(cacheStorage, logger) {
  if (cacheStorage === null) return null
  const { MCPToolCache } = require('./tool-cache.js')
  return cacheStorage === undefined ? MCPToolCache.open(undefined, { logger }) : new MCPToolCache(cacheStorage, { logger })
}

/**
 * SPEC 8.4 `discoverAndLoadMCPTools`. Every `MCPManager` option is passed to the manager. Without
 * `cacheStorage`, the cache is over the agent's injected `AgentStorage` (its `open()`), else the
 * package's own store.
 * @template [TTool=Tool]
 * @param {string} cwd
 * @param {MCPToolsLoadOptions<TTool>} [options]
 * @returns {Promise<MCPToolsLoadResult<TTool>>}
 */
async function discoverAndLoadMCPTools(cwd, options) {
  const { MCPManager } = require('./manager-current.js')
  let given = options
  // The agent's injected `AgentStorage` (18.3.4 opens it for the cache when none is given).
  const Storage = hooks.AgentStorage
  if (given?.cacheStorage === undefined && Storage && typeof Storage.open === 'function') {
    try {
      given = { ...given, cacheStorage: await Storage.open() }
    } catch (error) {
      hookLogger(given?.logger).warn('MCP tool cache unavailable', { error: String(error) })
      given = { ...given, cacheStorage: null }
    }
  }
  return /** @type {MCPToolsLoadResult<TTool>} */ (await load(MCPManager, cwd, given))
}

/**
 * The 12.7 profile's `discoverAndLoadMCPTools` (its manager: manager.js).
 * @template [TTool=Tool]
 * @param {string} cwd
 * @param {import('./entries/compat-12.7/loader.js').MCPToolsLoadOptions<TTool>} [options]
 * @returns {Promise<import('./entries/compat-12.7/loader.js').MCPToolsLoadResult<TTool>>}
 */
async function discoverAndLoadMCPTools127(cwd, options) {
  const { MCPManager } = require('./manager.js')
  return /** @type {import('./entries/compat-12.7/loader.js').MCPToolsLoadResult<TTool>} */ (await load(MCPManager, cwd, options))
}

/**
 * Both profiles' loader, over the profile's manager class (each takes `(cwd, cache, options)` and
 * ignores the discover options of the other profile).
 * @template [TTool=Tool]
 * @param {any} MCPManager
 * @param {string} cwd
 * @param {MCPToolsLoadOptions<TTool> & import('./entries/compat-12.7/loader.js').MCPToolsLoadOptions<TTool>} [options]
 * @returns {Promise<{ manager: any, tools: any[], errors: { path: string, error: string }[], connectedServers: string[], exaApiKeys: string[] }>}
 */
async function load(MCPManager, cwd, options) {
  const {
    onConnecting,
    onStatus,
    startupTimeoutMs,
    enableProjectConfig,
    filterExa,
    filterBrowser,
    cacheStorage,
    authStorage,
    ...managerOptions
  } = options ?? {}
  const logger = managerOptions.logger
  let cache = null
  try {
    cache = openCache(cacheStorage, logger)
  } catch (error) {
    try {
      logger?.warn?.('MCP tool cache unavailable', { error: String(error) })
    } catch {
      // a broken logger loses the line
    }
  }
  const manager = new MCPManager(cwd, cache, managerOptions)
  if (authStorage) manager.setAuthStorage(authStorage)
  let result
  try {
    result = await manager.discoverAndConnect({
      onConnecting,
      onStatus,
      startupTimeoutMs,
      enableProjectConfig,
      filterExa,
      filterBrowser,
      disabledProviders: managerOptions.disabledProviders,
    })
  } catch (error) {
    return { manager, tools: [], errors: [{ path: '.mcp.json', error: messageOf(error) }], connectedServers: [], exaApiKeys: [] }
  }
  const tools = result.tools.map((/** @type {any} */ tool) => {
    const server = tool.mcpServerName
    const conn = server === undefined ? undefined : /** @type {any} */ (manager.getConnection(server))
    const src = server === undefined ? undefined : manager.getSource(server)
    const providerName = conn?._source?.providerName ?? src?.providerName ?? conn?._source?.provider ?? src?.provider
    const path = server && providerName ? `mcp:${server} via ${providerName}` : `mcp:${tool.name}`
    return { path, resolvedPath: `mcp:${tool.name}`, tool }
  })
  const errors = [...result.errors].map(([server, error]) => ({ path: `mcp:${server}`, error }))
  return { manager, tools, errors, connectedServers: result.connectedServers, exaApiKeys: result.exaApiKeys }
}

module.exports = { discoverAndLoadMCPTools, discoverAndLoadMCPTools127 }
