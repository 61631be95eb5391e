'use strict'
// mcp-native/tool-cache (SPEC 7.8, 8.3, 8.11): tool definitions per server, kept in the agent's
// key/value storage so that a slow server's tools can be offered before it has answered. The
// config hash is computed here, in JS, from the very text the reference hashes; the embedded
// store behind `MCPToolCache.open()` is SQLite in Rust (src/cache.rs).

const { createHash } = require('node:crypto')
const path = require('node:path')
const { fileURLToPath } = require('node:url')
const native = require('../native/index.js')
const { safeString, swallow } = require('./core.js')
const { agentDir } = require('./agent-dir.js')

/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('../index.js').MCPToolDefinition} MCPToolDefinition */
/** @typedef {import('./entries/tool-cache.js').MCPToolCacheStorage} MCPToolCacheStorage */
/** @typedef {import('./entries/tool-cache.js').MCPToolCacheOptions} MCPToolCacheOptions */
/** @typedef {import('./entries/tool-cache.js').OpenMCPToolCache} OpenMCPToolCache */

const CACHE_VERSION = 1
const CACHE_PREFIX = 'mcp_tools:'
const CACHE_TTL_MS = 30 * 24 * 60 * 60 * 1000
/** The default file of `MCPToolCache.open()`, in the agent directory (not the agent's agent.db). */
const CACHE_FILE = 'mcp-cache.db'
/**
 * How long a storage whose `getCache`/`setCache` returns a promise may take before the read is a
 * miss (or the write is dropped). The agent's storage is synchronous; this only bounds a storage
 * that hangs, so that no server's startup waits on it.
 */
const STORAGE_TIMEOUT_MS = 5000

const silentLogger = { warn() {} }

/**
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isRecord(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

/**
 * A copy with the keys of every plain record sorted (`Object.keys(..).sort()`), arrays in order:
 * what the reference's `stableClone` builds, so `JSON.stringify` of it gives the same text. A
 * cycle throws a TypeError (the reference ran out of stack; either way the hash fails).
 * @param {unknown} value
 * @param {Set<unknown>} ancestors
 * @returns {unknown}
 */
function stableClone(value, ancestors) {
  if (Array.isArray(value) || isRecord(value)) {
    if (ancestors.has(value)) throw new TypeError('Converting circular structure to JSON')
    ancestors.add(value)
    /** @type {unknown[] | Record<string, unknown>} */
    let out
    if (Array.isArray(value)) {
      out = value.map((item) => stableClone(item, ancestors))
    } else {
      out = {}
      for (const key of Object.keys(value).sort()) out[key] = stableClone(value[key], ancestors)
    }
    ancestors.delete(value)
    return out
  }
  return value
}

/**
 * Lowercase hex SHA-256 of the config's JSON with keys sorted recursively (undefined omitted).
 * @param {unknown} config
 * @returns {string}
 */
function hashConfig(config) {
  // `JSON.stringify` of undefined is undefined; the reference's TextEncoder then encoded "".
  const text = JSON.stringify(stableClone(config, new Set())) ?? ''
  return createHash('sha256').update(text, 'utf8').digest('hex')
}

/**
 * Settles like `promise`, or rejects once `ms` have passed (the timer is cleared either way).
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {string} what the storage call, for the message
 * @returns {Promise<T>}
 */
function within(promise, ms, what) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  /** @type {Promise<never>} */
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`MCP tool cache storage ${what} timed out after ${ms}ms`)), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

/**
 * @param {string | URL} file
 * @returns {string}
 */
function toPath(file) {
  return file instanceof URL ? fileURLToPath(file) : String(file)
}

/** @template {MCPToolCacheStorage} [S=MCPToolCacheStorage] the storage (the SQLite store for `open()`) */
class MCPToolCache {
  /** @type {S} */
  #storage
  /** @type {NonNullable<MCPToolCacheOptions['logger']>} */
  #logger
  /** @type {number} */
  #timeout
  /**
   * The store `open()` made, closed by `close()`; an injected storage is never closed here.
   * @type {import('../native/index.js').NativeCacheStore | null}
   */
  #owned = null

  /**
   * @param {S} storage any object with `getCache(key): string | null` and
   *   `setCache(key, value, expiresAtSec): void` (the agent's AgentStorage)
   * @param {MCPToolCacheOptions} [options] `logger` (its `warn(message, { serverName, error })` gets the cache's
   *   warnings; default silent), `timeout` (ms a promise-returning storage may take, default 5000)
   */
  constructor(storage, options) {
    this.#storage = storage
    this.#logger = options?.logger ?? silentLogger
    const timeout = options?.timeout
    this.#timeout = typeof timeout === 'number' && timeout >= 0 ? timeout : STORAGE_TIMEOUT_MS
  }

  /**
   * [beyond] A cache over an SQLite file (default `<agent dir>/mcp-cache.db`; the file, its
   * directories and its table are created when absent). Throws when the file cannot be opened.
   * @param {string | URL | null} [file]
   * @param {MCPToolCacheOptions} [options]
   * @returns {OpenMCPToolCache}
   */
  static open(file, options) {
    const target = file === undefined || file === null ? path.join(agentDir(), CACHE_FILE) : toPath(file)
    const store = native.NativeCacheStore.open(target)
    const cache = new MCPToolCache(store, options)
    cache.#owned = store
    return cache
  }

  /** The storage this cache reads and writes. */
  get storage() {
    return this.#storage
  }

  /** Closes the file of a cache made by `open()`; does nothing for an injected storage. */
  close() {
    const store = this.#owned
    this.#owned = null
    store?.close()
  }

  /**
   * The cached tools of `serverName`, if they were stored for this very config; else null.
   * @param {string} serverName
   * @param {MCPServerConfig} config
   * @returns {Promise<MCPToolDefinition[] | null>}
   */
  async get(serverName, config) {
    const key = `${CACHE_PREFIX}${serverName}`
    let raw
    try {
      raw = await this.#call('getCache', [key])
    } catch (error) {
      this.#warn('MCP tool cache read failed', serverName, error)
      return null
    }
    if (!raw) return null

    let parsed
    try {
      parsed = JSON.parse(raw)
    } catch (error) {
      this.#warn('MCP tool cache parse failed', serverName, error)
      return null
    }
    if (!isRecord(parsed)) return null
    if (parsed.version !== CACHE_VERSION) return null
    if (typeof parsed.configHash !== 'string') return null
    if (!Array.isArray(parsed.tools)) return null

    let currentHash
    try {
      currentHash = hashConfig(config)
    } catch (error) {
      this.#warn('MCP tool cache hash failed', serverName, error)
      return null
    }
    if (parsed.configHash !== currentHash) return null
    return parsed.tools
  }

  /**
   * Stores `tools` for `serverName` and this config, for 30 days. Never throws.
   * @param {string} serverName
   * @param {MCPServerConfig} config
   * @param {MCPToolDefinition[]} tools
   * @returns {Promise<void>}
   */
  async set(serverName, config, tools) {
    const key = `${CACHE_PREFIX}${serverName}`
    let configHash
    try {
      configHash = hashConfig(config)
    } catch (error) {
      this.#warn('MCP tool cache hash failed', serverName, error)
      return
    }
    let serialized
    try {
      serialized = JSON.stringify({ version: CACHE_VERSION, configHash, tools })
    } catch (error) {
      this.#warn('MCP tool cache serialize failed', serverName, error)
      return
    }
    const expiresAtSec = Math.floor((Date.now() + CACHE_TTL_MS) / 1000)
    try {
      await this.#call('setCache', [key, serialized, expiresAtSec])
    } catch (error) {
      this.#warn('MCP tool cache write failed', serverName, error)
    }
  }

  /**
   * A storage call: a throw becomes a rejection, a promise it returns is bounded in time.
   * @param {'getCache' | 'setCache'} method
   * @param {unknown[]} args
   * @returns {Promise<any>} what the storage answered: the storage is any object with these methods
   */
  async #call(method, args) {
    const storage = /** @type {any} */ (this.#storage)
    const out = storage[method](...args)
    if (out && typeof out.then === 'function') return within(Promise.resolve(out), this.#timeout, method)
    return out
  }

  /** `logger.warn(message, { serverName, error })`, as the reference logs; a broken logger is ignored. */
  /**
   * @param {string} message
   * @param {string} serverName
   * @param {unknown} error
   */
  #warn(message, serverName, error) {
    try {
      const logger = this.#logger
      if (typeof logger?.warn === 'function') swallow(logger.warn(message, { serverName, error: safeString(error) }))
    } catch {
      // the line is lost, nothing else
    }
  }
}

exports.MCPToolCache = MCPToolCache
// For tests and tools that inspect the cache.
exports.hashConfig = hashConfig
exports.CACHE_TTL_MS = CACHE_TTL_MS
