'use strict'
// mcp-native/config (SPEC 7): config discovery over the Rust core (src/config/). Reading,
// parsing, `${VAR}` expansion, merging and the Exa rules run in Rust; this file hands over the
// project directory, `~` and `process.env`, parses the answer and gives each warning to the
// caller's logger.

const path = require('node:path')
const native = require('../native/index.js')
const { homeDir } = require('./agent-dir.js')

/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('../index.js').SourceMeta} SourceMeta */
/** @typedef {import('./entries/config.js').LoadMCPConfigsOptions} LoadMCPConfigsOptions */
/** @typedef {import('./entries/config.js').LoadMCPConfigsResult} LoadMCPConfigsResult */
/** @typedef {import('./entries/config.js').ExaFilterResult} ExaFilterResult */
/** What the Rust checks may see of a config: any object, read loosely. */
/** @typedef {Record<string, any> | null | undefined} AnyConfig */

/**
 * Calls `logger.warn(message)`; a missing, throwing or rejecting logger never reaches the caller.
 * @param {LoadMCPConfigsOptions['logger']} logger
 * @param {string} message
 */
function warn(logger, message) {
  try {
    const fn = logger?.warn
    if (typeof fn !== 'function') return
    // A logger that returns a promise may reject: that rejection is handled here.
    Promise.resolve(/** @type {unknown} */ (fn.call(logger, message))).catch(() => {})
  } catch {
    // a broken logger loses the line, nothing else
  }
}

/**
 * SPEC 7.1: every configured server of the project `cwd`, from every discovery source, with
 * precedence, `${VAR}` expansion, `enabled`, `disabledServers` and Exa filtering. Never rejects
 * for a file problem: those are `warnings` (also given to `options.logger.warn`).
 * @param {string} cwd
 * @param {LoadMCPConfigsOptions} [options]
 * @returns {Promise<LoadMCPConfigsResult & { warnings: string[] }>}
 */
async function loadAllMCPConfigs(cwd, options) {
  const o = options ?? {}
  const discovery = {
    enableProjectConfig: o.enableProjectConfig !== false,
    filterExa: o.filterExa === undefined ? true : Boolean(o.filterExa),
    disabledProviders: Array.isArray(o.disabledProviders)
      ? o.disabledProviders.filter((/** @type {unknown} */ id) => typeof id === 'string')
      : [],
  }
  const text = await native.loadAllMcpConfigs(
    path.resolve(String(cwd)),
    path.resolve(homeDir()),
    JSON.stringify(process.env),
    JSON.stringify(discovery),
  )
  const result = JSON.parse(text)
  for (const message of result.warnings) warn(o.logger, message)
  return result
}

/**
 * `type` for the Exa rules: as written when it is a string, absent when absent or `null`, and
 * any other value as a stand-in that is neither a transport nor absent.
 * @param {AnyConfig} config
 */
function typeOf(config) {
  const t = config?.type
  return typeof t === 'string' || t === undefined || t === null ? t : 0
}

/**
 * SPEC 7.6 `validateServerConfig`: the problems of one config, in order (empty: none). Only
 * `type` (as its string) and whether `command` and `url` are set cross to Rust: no values.
 * @param {string} name
 * @param {MCPServerConfig} config
 * @returns {string[]}
 */
function validateServerConfig(name, config) {
  /** @type {Record<string, any>} */
  const c = config ?? {}
  const t = c.type === undefined || c.type === null ? undefined : String(c.type)
  const view = { type: t, command: Boolean(c.command), url: Boolean(c.url) }
  return native.validateServerConfig(String(name), JSON.stringify(view))
}

/**
 * What the Exa rules read of a config: `type`, a string `url`, string `args`, a string `env.EXA_API_KEY`.
 * @param {AnyConfig} config
 */
function exaView(config) {
  /** @type {Record<string, any>} */
  const c = config ?? {}
  const key = c.env?.EXA_API_KEY
  return {
    type: typeOf(c),
    url: typeof c.url === 'string' ? c.url : undefined,
    args: Array.isArray(c.args) ? c.args.map((/** @type {unknown} */ a) => (typeof a === 'string' ? a : null)) : undefined,
    env: typeof key === 'string' ? { EXA_API_KEY: key } : undefined,
  }
}

/**
 * SPEC 7.6 `isExaMCPServer`: named `exa`, or its url (http/sse) or an arg (stdio) names `mcp.exa.ai`.
 * @param {string} name
 * @param {MCPServerConfig} config
 * @returns {boolean}
 */
function isExaMCPServer(name, config) {
  return native.isExaMcpServer(String(name), JSON.stringify(exaView(config)))
}

/**
 * SPEC 7.6 `extractExaApiKey`: the `exaApiKey=` of the url or args, or `env.EXA_API_KEY`.
 * @param {MCPServerConfig} config
 * @returns {string | undefined}
 */
function extractExaApiKey(config) {
  return native.extractExaApiKey(JSON.stringify(exaView(config))) ?? undefined
}

/**
 * SPEC 7.6 `filterExaMCPServers`: the configs without Exa servers (the same objects), their keys
 * in order (duplicates kept), and the sources of the names that remain.
 * @param {Record<string, MCPServerConfig>} configs
 * @param {Record<string, SourceMeta>} sources
 * @returns {ExaFilterResult}
 */
function filterExaMCPServers(configs, sources) {
  const views = Object.create(null)
  for (const [name, config] of Object.entries(configs ?? {})) views[name] = exaView(config)
  /** @type {{ removed: string[], exaApiKeys: string[] }} */
  const { removed, exaApiKeys } = JSON.parse(native.findExaMcpServers(JSON.stringify(views)))
  const gone = new Set(removed)
  /** @type {Record<string, MCPServerConfig>} */
  const kept = {}
  /** @type {Record<string, SourceMeta>} */
  const keptSources = {}
  for (const [name, config] of Object.entries(configs ?? {})) {
    if (gone.has(name)) continue
    kept[name] = config
    if (sources?.[name]) keptSources[name] = sources[name]
  }
  return { configs: kept, exaApiKeys, sources: keptSources }
}

module.exports = { loadAllMCPConfigs, validateServerConfig, isExaMCPServer, filterExaMCPServers, extractExaApiKey }
