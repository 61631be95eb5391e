'use strict'
// mcp-native/manager (SPEC 6): many servers — discovery, parallel connect behind a 250 ms
// startup gate, tools tracked per server, refresh, reconnect, teardown. Config discovery,
// validation, tool names and `!command` values run in Rust (src/config.rs); this file wires the
// injectable parts (tool cache, tool factory, logger, auth storage) that are JS objects.

const os = require('node:os')
const native = require('./native.js')
const { MCPClient, listTools, DEFAULT_CAPABILITIES } = require('./client.js')
const toolBridge = require('./lib/tool-bridge.js')
const { makeError, safeString, swallow, timeoutOf } = require('./core.js')

/** @typedef {import('./index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('./index.js').MCPServerConnection} MCPServerConnection */
/** @typedef {import('./index.js').MCPToolDefinition} MCPToolDefinition */
/** @typedef {import('./index.js').MCPToolCache} MCPToolCache */
/** @typedef {import('./index.js').Tool} Tool */
/** @typedef {import('./index.js').SourceMeta} SourceMeta */
/** @typedef {import('./index.js').AuthStorage} AuthStorage */
/** @typedef {import('./index.js').MCPAuthConfig} MCPAuthConfig */
/** @typedef {import('./index.js').MCPLoadedConfigs} MCPLoadedConfigs */
/** @typedef {import('./index.js').MCPDiscoverOptions} MCPDiscoverOptions */
/** @typedef {import('./index.js').MCPToolRenderer} MCPToolRenderer */
/** @typedef {import('./index.js').MCPClient} MCPClientType */
/**
 * @template [TTool=Tool]
 * @typedef {import('./index.js').MCPToolFactory<TTool>} MCPToolFactory
 */
/**
 * @template [TTool=Tool]
 * @typedef {import('./index.js').MCPManagerOptions<TTool>} MCPManagerOptions
 */
/**
 * @template [TTool=Tool]
 * @typedef {import('./index.js').MCPLoadResult<TTool>} MCPLoadResult
 */
/**
 * The tool bridge's objects as lib/tool-bridge.js types them. They are what tool-bridge.d.ts
 * declares as `Tool`, but the declared private members make TypeScript treat the declared and the
 * JS classes as unrelated: where one becomes the other, a cast goes through `unknown`.
 * @typedef {import('./lib/tool-bridge.js').MCPTool | import('./lib/tool-bridge.js').DeferredMCPTool} BridgeTool
 */
/** @typedef {'connecting' | 'connected' | 'disconnected'} ServerStatus */
/**
 * A server being started. `promise` and `settled` are set by `_start` right after the entry is made.
 * @typedef {{
 *   client: MCPClientType | null,
 *   outcome: { ok: true } | { ok: false, error: unknown } | null,
 *   promise: Promise<MCPServerConnection>,
 *   settled: Promise<unknown>,
 * }} StartEntry
 */

/** How long `connectServers` waits before answering with cached tools for slow servers. */
const STARTUP_GATE_MS = 250
/** `tools/list_changed` notifications of one server within this window cause one refresh. */
const LIST_CHANGED_DEBOUNCE_MS = 300
/** A `!command` config value is killed after this long (SPEC 6.3). */
const COMMAND_TIMEOUT_MS = 10000

const silentLogger = { error() {}, warn() {}, debug() {} }

/**
 * The injected logger, made safe: a logger that throws or rejects never reaches the host.
 * @param {{ error?: unknown, warn?: unknown, debug?: unknown } | null | undefined} logger as injected (not trusted)
 */
function safeLogger(logger) {
  /** @type {(level: 'error' | 'warn' | 'debug') => (...args: unknown[]) => void} */
  const call =
    (level) =>
    (...args) => {
      try {
        const fn = logger?.[level]
        if (typeof fn === 'function') swallow(fn.apply(logger, args))
      } catch {
        // a broken logger loses the line, nothing else
      }
    }
  return { error: call('error'), warn: call('warn'), debug: call('debug') }
}

/**
 * Resolves like `promise`, or rejects with `error()` after `ms` (timer cleared either way).
 * @template T
 * @param {Promise<T>} promise
 * @param {number} ms
 * @param {() => Error} error
 * @returns {Promise<T>}
 */
function within(promise, ms, error) {
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  /** @type {Promise<never>} */
  const deadline = new Promise((_, reject) => {
    timer = setTimeout(() => reject(error()), ms)
  })
  return Promise.race([promise, deadline]).finally(() => clearTimeout(timer))
}

/**
 * @param {unknown} err
 * @returns {string}
 */
function messageOf(err) {
  return err instanceof Error ? err.message : safeString(err)
}

/**
 * SPEC 6 default `loadConfigs`: `<cwd>/.mcp.json` and `~/.mcp.json`.
 * @param {string} cwd
 * @param {{ enableProjectConfig?: boolean, filterExa?: boolean, disabledProviders?: string[] }} [options]
 * @returns {Promise<MCPLoadedConfigs>}
 */
async function loadConfigs(cwd, options) {
  const o = options || {}
  // $HOME first, as Node's os.homedir() does (Bun's ignores a changed $HOME).
  const home = process.env.HOME || os.homedir()
  const text = native.loadMcpConfigs(String(cwd), home, o.enableProjectConfig !== false, o.filterExa !== false)
  /** @type {MCPLoadedConfigs & { error?: import('./core.js').ErrorDescriptor }} */
  const loaded = JSON.parse(text)
  if (loaded.error) throw makeError(loaded.error)
  return loaded
}

// `!command` results for this process. Concurrent callers share one run; only a value is kept
// (a failed command is tried again next time: it may have been a login that expired).
/** @type {Map<string, Promise<string | undefined>>} */
const commandRuns = new Map()

/**
 * SPEC 6.3 default `resolveConfigValue`.
 * @param {string} value
 * @returns {Promise<string | undefined>}
 */
function resolveConfigValue(value) {
  if (typeof value !== 'string') return Promise.resolve(value)
  // SPEC 6.3: an environment variable's name, falling back to itself — also when the variable
  // is set but empty.
  if (!value.startsWith('!')) return Promise.resolve(process.env[value] || value)
  const command = value.slice(1)
  let run = commandRuns.get(command)
  if (!run) {
    run = native.runValueCommand(command, COMMAND_TIMEOUT_MS).then(
      (out) => {
        if (out == null) commandRuns.delete(command)
        return out ?? undefined
      },
      () => {
        commandRuns.delete(command)
        return undefined
      },
    )
    commandRuns.set(command, run)
  }
  return run
}

/** SPEC 6.2 tool name: `mcp_<server part>_<tool part>`. */
const createMCPToolName = toolBridge.createMCPToolName

/** SPEC 8.1 step 4: the text of a tool result. */
const formatToolResult = toolBridge.resultText

/**
 * The default `toolFactory` (SPEC 6.2): the tool bridge's `MCPTool` / `DeferredMCPTool`, with the
 * manager's renderer when one was given (SPEC 8.11).
 * @param {MCPToolRenderer | undefined} renderer
 * @returns {MCPToolFactory<BridgeTool>}
 */
function toolFactoryFor(renderer) {
  const options = renderer ? { renderer } : undefined
  return {
    fromTools: (connection, tools) => toolBridge.MCPTool.fromTools(connection, tools, options),
    deferredFromTools: (serverName, tools, getConnection, source) =>
      toolBridge.DeferredMCPTool.fromTools(serverName, tools, getConnection, source, options),
  }
}

const defaultToolFactory = /** @type {MCPToolFactory<Tool>} */ (/** @type {unknown} */ (toolFactoryFor(undefined)))

/** @template [TTool=Tool] what `getTools()` holds: the tool bridge's objects unless a `toolFactory` makes others */
class MCPManager {
  /**
   * @param {string} cwd
   * @param {MCPToolCache | null} [toolCache]
   * @param {MCPManagerOptions<TTool>} [options]
   */
  constructor(cwd, toolCache = null, options) {
    const o = options || {}
    this.cwd = cwd
    /** @type {MCPToolCache | null} */
    this.toolCache = toolCache ?? null
    /** [beyond] `(serverName, method, params)` for every server's notifications. */
    this.onNotification = o.onNotification
    /** [beyond] `(serverName, status, error?)`: "connecting" | "connected" | "disconnected". */
    this.onServerStatus = o.onServerStatus
    this._loadConfigs = o.loadConfigs ?? loadConfigs
    // Without a toolFactory, TTool is the default, Tool: the tool bridge's objects.
    this._toolFactory = o.toolFactory ?? /** @type {MCPToolFactory<TTool>} */ (/** @type {unknown} */ (toolFactoryFor(o.renderer)))
    this._resolveValue = o.resolveConfigValue ?? resolveConfigValue
    this._logger = safeLogger(o.logger ?? silentLogger)
    this._reconnect = o.reconnect
    this._disabledProviders = o.disabledProviders
    /** [beyond] `(serverName, method, params)`: answers server→client requests of every server. */
    this._onRequest = typeof o.onRequest === 'function' ? o.onRequest : undefined
    // SPEC 6: giving onRequest declares elicitation and sampling, unless capabilities are given.
    const capabilities = o.capabilities ?? (this._onRequest ? { ...DEFAULT_CAPABILITIES, elicitation: {}, sampling: {} } : undefined)
    this._clientOptions = { protocolVersion: o.protocolVersion, capabilities, clientInfo: o.clientInfo }
    /** @type {AuthStorage | null} */
    this._authStorage = null
    /** @type {Map<string, SourceMeta>} */
    this._sources = new Map()
    /** @type {Map<string, MCPServerConnection>} */
    this._connections = new Map()
    /** @type {Map<string, MCPClientType>} */
    this._clients = new Map()
    /** @type {Map<string, StartEntry>} */
    this._pending = new Map() // name → { client, outcome, promise, settled }
    /** @type {Map<string, TTool[]>} */
    this._serverTools = new Map() // name → tool objects (live or deferred)
    /** @type {TTool[]} */
    this._tools = []
    /** @type {Map<string, ReturnType<typeof setTimeout>>} */
    this._refreshTimers = new Map()
  }

  /** @param {AuthStorage | null | undefined} storage */
  setAuthStorage(storage) {
    this._authStorage = storage ?? null
  }

  /**
   * @param {MCPDiscoverOptions} [options]
   * @returns {Promise<MCPLoadResult<TTool>>}
   */
  async discoverAndConnect(options) {
    const o = options || {}
    const { configs, sources, exaApiKeys } = await this._loadConfigs(this.cwd, {
      enableProjectConfig: o.enableProjectConfig ?? true,
      filterExa: o.filterExa ?? true,
      // The call's own list wins over the constructor's (SPEC 6).
      disabledProviders: o.disabledProviders ?? this._disabledProviders,
    })
    const result = await this.connectServers(configs || {}, sources || {}, o.onConnecting)
    result.exaApiKeys = exaApiKeys || []
    return result
  }

  /**
   * @param {Record<string, MCPServerConfig>} configs
   * @param {Record<string, SourceMeta> | null | undefined} sources
   * @param {(serverNames: string[]) => void} [onConnecting]
   * @returns {Promise<MCPLoadResult<TTool>>}
   */
  async connectServers(configs, sources, onConnecting) {
    /** @type {Map<string, string>} */
    const errors = new Map()
    /** @type {string[]} */
    const connectedServers = []
    /** @type {Array<{ name: string, config: MCPServerConfig, entry: StartEntry, deferred?: boolean }>} */
    const started = []
    for (const [name, config] of Object.entries(configs)) {
      const source = sources?.[name]
      if (source) {
        this._sources.set(name, source)
        const existing = this._connections.get(name)
        if (existing) existing._source = source
      }
      if (this._connections.has(name)) {
        connectedServers.push(name)
        continue
      }
      if (this._pending.has(name)) continue
      const problems = native.validateServerConfig(String(name), JSON.stringify(config ?? null))
      if (problems.length > 0) {
        errors.set(name, problems.join('; '))
        continue
      }
      started.push({ name, config, entry: this._start(name, config) })
    }
    if (started.length > 0 && typeof onConnecting === 'function') {
      this._guard(() => onConnecting(started.map((s) => s.name)))
    }
    await gate(
      started.map((s) => s.entry.settled),
      STARTUP_GATE_MS,
    )
    const waitFor = []
    for (const s of started) {
      if (s.entry.outcome) continue
      // A cache that never answers must not hold the caller: the server's own outcome wins.
      const cached = await Promise.race([this._cacheGet(s.name, s.config), s.entry.settled.then(() => null)])
      if (s.entry.outcome) continue
      const deferred = cached && this._pending.get(s.name) === s.entry ? this._deferredTools(s.name, cached) : null
      if (deferred) {
        this._setServerTools(s.name, deferred)
        s.deferred = true
      } else {
        waitFor.push(s.entry.settled)
      }
    }
    await Promise.all(waitFor)
    const inResult = new Set(connectedServers)
    for (const s of started) {
      const outcome = s.entry.outcome
      if (outcome?.ok && this._connections.has(s.name)) {
        connectedServers.push(s.name)
        inResult.add(s.name)
      } else if (outcome && !outcome.ok) {
        errors.set(s.name, messageOf(outcome.error))
      } else if (s.deferred) {
        inResult.add(s.name)
      }
    }
    /** @type {TTool[]} */
    const tools = []
    for (const name of inResult) for (const t of this._serverTools.get(name) || []) tools.push(t)
    return { tools, errors, connectedServers, exaApiKeys: [] }
  }

  /**
   * Starts one server: resolve → connect → list tools, then registers it (unless forgotten).
   * @param {string} name
   * @param {MCPServerConfig} config
   * @returns {StartEntry}
   */
  _start(name, config) {
    /** @type {StartEntry} */
    const entry = { client: null, outcome: null, promise: /** @type {never} */ (null), settled: /** @type {never} */ (null) }
    this._pending.set(name, entry)
    this._status(name, 'connecting')
    entry.promise = (async () => {
      // Injected resolvers (auth storage, config values) are bounded by the connect deadline.
      const ms = timeoutOf(config)
      const resolved = await within(this.prepareConfig(config), ms, () =>
        makeError({ message: `Connection to MCP server "${name}" timed out after ${ms}ms`, code: 'MCP_TIMEOUT', timeout: ms }),
      )
      if (this._pending.get(name) !== entry) throw new Error(`MCP server not connected: ${name}`)
      const client = new MCPClient(name, resolved, { ...this._clientOptions, reconnect: this._reconnect })
      entry.client = client
      const connection = await client.connect()
      connection.config = config
      const source = this._sources.get(name)
      if (source) connection._source = source
      try {
        await listTools(connection)
      } catch (err) {
        await client.close()
        throw err
      }
      return connection
    })()
    const failed = (/** @type {unknown} */ error) => {
      entry.outcome = { ok: false, error }
      if (this._pending.get(name) !== entry) return
      this._pending.delete(name)
      this._logger.error('MCP tool load failed', { server: name, error: messageOf(error) })
      // Deferred tools of a server that never came up are withdrawn.
      if (this._serverTools.delete(name)) this._rebuildTools()
      this._status(name, 'disconnected', error)
    }
    entry.settled = entry.promise.then((connection) => {
      // Resolved: the client was made before it connected.
      const client = /** @type {MCPClientType} */ (entry.client)
      if (this._pending.get(name) !== entry) {
        // [fix] Disconnected while connecting: close it instead of registering it.
        entry.outcome = { ok: true }
        return client.close().catch(() => {})
      }
      try {
        this._register(name, client, connection)
      } catch (error) {
        // An injected part (the tool factory) threw: the server counts as failed, and is closed.
        this._forget(name)
        failed(error)
        return client.close().catch(() => {})
      }
      this._pending.delete(name)
      entry.outcome = { ok: true }
      this._status(name, 'connected')
      return undefined
    }, failed)
    return entry
  }

  /**
   * Makes a connected server live: its tools (from the factory, which may throw), the cache.
   * @param {string} name
   * @param {MCPClientType} client
   * @param {MCPServerConnection} connection
   */
  _register(name, client, connection) {
    // No `tools` capability: listTools answered [] and cached nothing.
    const listed = connection.tools ?? []
    const tools = this._toolFactory.fromTools(connection, listed)
    this._clients.set(name, client)
    this._connections.set(name, connection)
    this._wireClient(name, client)
    this._setServerTools(name, tools)
    this._cacheSet(name, connection.config, listed)
    this._logger.debug(`MCP server "${name}" connected with ${listed.length} tools`)
  }

  /**
   * Deferred tool objects from a cached list; null (the server is awaited) if the factory throws.
   * @param {string} name
   * @param {MCPToolDefinition[]} cached
   * @returns {TTool[] | null}
   */
  _deferredTools(name, cached) {
    try {
      return this._toolFactory.deferredFromTools(name, cached, () => this.waitForConnection(name), this._sources.get(name))
    } catch (err) {
      this._logger.error(`MCP tool factory failed for the cached tools of "${name}": ${messageOf(err)}`)
      return null
    }
  }

  /**
   * @param {string} name
   * @param {MCPClientType} client
   */
  _wireClient(name, client) {
    client.onNotification = (method, params) => {
      if (typeof this.onNotification === 'function') this._guard(() => this.onNotification?.(name, method, params))
      if (method === 'notifications/tools/list_changed') this._scheduleRefresh(name)
    }
    client.onError = (err) => this._logger.warn(`MCP server "${name}": ${messageOf(err)}`)
    if (this._onRequest) {
      const handler = this._onRequest
      client.onRequest = (method, params) => handler(name, method, params)
    }
    client.onStatus = (status, error) => {
      if (this._clients.get(name) !== client) return
      this._status(name, status, error)
      if (status === 'connected') {
        // Back after a reconnect: the server may have changed its tools.
        this._refreshQuietly(name)
      } else if (status === 'disconnected') {
        // Gone for good (no reconnect, or it gave up): forget the connection and its tools.
        this._forget(name)
      }
    }
  }

  /** @param {string} name */
  _forget(name) {
    clearTimeout(this._refreshTimers.get(name))
    this._refreshTimers.delete(name)
    this._clients.delete(name)
    this._connections.delete(name)
    if (this._serverTools.delete(name)) this._rebuildTools()
  }

  /** @param {string} name */
  _scheduleRefresh(name) {
    clearTimeout(this._refreshTimers.get(name))
    const timer = setTimeout(() => {
      this._refreshTimers.delete(name)
      this._refreshQuietly(name)
    }, LIST_CHANGED_DEBOUNCE_MS)
    if (typeof timer.unref === 'function') timer.unref()
    this._refreshTimers.set(name, timer)
  }

  /**
   * @param {string} name
   * @param {TTool[]} tools from the factory: anything but an array counts as none
   */
  _setServerTools(name, tools) {
    this._serverTools.set(name, Array.isArray(tools) ? tools : [])
    this._rebuildTools()
  }

  /** Rebuilds the live array in place (callers holding `getTools()` see the change). */
  _rebuildTools() {
    this._tools.length = 0
    for (const tools of this._serverTools.values()) for (const t of tools) this._tools.push(t)
  }

  /**
   * @param {string} name
   * @param {MCPServerConfig} config
   * @returns {Promise<MCPToolDefinition[] | null>}
   */
  async _cacheGet(name, config) {
    if (!this.toolCache) return null
    try {
      const tools = await this.toolCache.get(name, config)
      return Array.isArray(tools) ? tools : null
    } catch (err) {
      this._logger.warn(`MCP tool cache read for "${name}" failed: ${messageOf(err)}`)
      return null
    }
  }

  /**
   * @param {string} name
   * @param {MCPServerConfig} config
   * @param {MCPToolDefinition[]} tools
   */
  _cacheSet(name, config, tools) {
    const cache = this.toolCache
    if (!cache) return
    Promise.resolve()
      .then(() => cache.set(name, config, tools))
      .catch((err) => this._logger.warn(`MCP tool cache write for "${name}" failed: ${messageOf(err)}`))
  }

  /**
   * @param {string} name
   * @param {ServerStatus} status
   * @param {unknown} [error] an Error, unless user code (a tool factory, an abort reason) threw something else
   */
  _status(name, status, error) {
    if (typeof this.onServerStatus !== 'function') return
    this._guard(() =>
      error === undefined ? this.onServerStatus?.(name, status) : this.onServerStatus?.(name, status, /** @type {Error} */ (error)),
    )
  }

  /** @param {() => unknown} fn calls a user callback */
  _guard(fn) {
    const failed = (/** @type {unknown} */ err) => this._logger.error(`MCP manager callback threw: ${messageOf(err)}`)
    try {
      /** @type {any} what user code returned: anything, probed for a `then` method */
      const out = fn()
      if (out && typeof out.then === 'function') out.then(undefined, failed)
    } catch (err) {
      failed(err)
    }
  }

  // --- queries -------------------------------------------------------------------------------

  getTools() {
    return this._tools
  }

  /** @param {string} name */
  getConnection(name) {
    return this._connections.get(name)
  }

  /**
   * @param {string} name
   * @returns {ServerStatus}
   */
  getConnectionStatus(name) {
    if (this._pending.has(name)) return 'connecting'
    const client = this._clients.get(name)
    if (!client) return 'disconnected'
    if (client.state === 'connected') return 'connected'
    return client.state === 'reconnecting' || client.state === 'connecting' ? 'connecting' : 'disconnected'
  }

  /** @param {string} name */
  getSource(name) {
    return this._sources.get(name)
  }

  /**
   * @param {string} name
   * @returns {Promise<MCPServerConnection>}
   */
  waitForConnection(name) {
    const connection = this._connections.get(name)
    if (connection) return Promise.resolve(connection)
    const entry = this._pending.get(name)
    if (entry) return entry.promise
    return Promise.reject(new Error(`MCP server not connected: ${name}`))
  }

  getConnectedServers() {
    return [...this._connections.keys()]
  }

  getAllServerNames() {
    const names = new Set(this._sources.keys())
    for (const n of this._connections.keys()) names.add(n)
    for (const n of this._pending.keys()) names.add(n)
    return [...names]
  }

  /**
   * SPEC 6.3: a shallow copy with OAuth injected and header/env values resolved.
   * @param {MCPServerConfig} config
   * @returns {Promise<MCPServerConfig>}
   */
  async prepareConfig(config) {
    /** @type {{ type?: string, auth?: MCPAuthConfig, headers?: Record<string, string>, env?: Record<string, string> }} */
    const out = { ...config }
    const http = out.type === 'http' || out.type === 'sse'
    const auth = out.auth
    if (auth && auth.type === 'oauth' && auth.credentialId && this._authStorage) {
      /** @type {{ type: string, access?: string } | undefined} `access` when it is an OAuth credential */
      let credential
      try {
        credential = await this._authStorage.get(auth.credentialId)
      } catch (err) {
        // SPEC 6.3: the config is used without the token.
        this._logger.warn('MCP auth storage lookup failed', { credentialId: auth.credentialId, error: messageOf(err) })
      }
      if (credential && credential.type === 'oauth' && credential.access) {
        if (http) out.headers = { ...(out.headers || {}), Authorization: `Bearer ${credential.access}` }
        else out.env = { ...(out.env || {}), OAUTH_ACCESS_TOKEN: credential.access }
      }
    }
    const key = http ? 'headers' : 'env'
    if (out[key] && typeof out[key] === 'object') {
      const entries = await Promise.all(
        Object.entries(out[key]).map(async ([k, v]) => {
          try {
            return [k, await this._resolveValue(v)]
          } catch (err) {
            this._logger.warn(`MCP config value "${k}" could not be resolved: ${messageOf(err)}`)
            return [k, undefined]
          }
        }),
      )
      out[key] = Object.fromEntries(entries.filter(([, v]) => v))
    }
    // The copy of `config`, changed only in `headers` and `env`.
    return /** @type {MCPServerConfig} */ (out)
  }

  // --- teardown and refresh ----------------------------------------------------------------

  /** @param {string} name */
  async disconnectServer(name) {
    const entry = this._pending.get(name)
    this._pending.delete(name)
    this._sources.delete(name)
    const client = this._clients.get(name)
    const had = !!entry || !!client || this._serverTools.has(name)
    this._forget(name)
    /** @type {Promise<void>[]} */
    const closing = []
    if (entry?.client) closing.push(entry.client.close())
    if (client) closing.push(client.close())
    await Promise.all(closing)
    if (had) this._status(name, 'disconnected')
  }

  async disconnectAll() {
    const names = new Set([...this._connections.keys(), ...this._pending.keys(), ...this._clients.keys(), ...this._serverTools.keys()])
    await Promise.all([...names].map((n) => this.disconnectServer(n)))
    this._sources.clear()
    this._serverTools.clear()
    this._rebuildTools()
  }

  /**
   * Lists the server's tools again; an error propagates to the caller (as in the reference).
   * @param {string} name
   */
  async refreshServerTools(name) {
    const connection = this._connections.get(name)
    if (!connection) return
    delete connection.tools
    const tools = await listTools(connection)
    if (this._connections.get(name) !== connection) return
    this._setServerTools(name, this._toolFactory.fromTools(connection, tools))
    this._cacheSet(name, connection.config, tools)
  }

  /** Every connected server; one server's failure is logged and does not stop the others. */
  async refreshAllTools() {
    await Promise.all([...this._connections.keys()].map((n) => this._refreshQuietly(n)))
  }

  /**
   * A refresh nobody awaits (list_changed, a reconnect, refreshAllTools): failures are logged.
   * @param {string} name
   */
  _refreshQuietly(name) {
    return this.refreshServerTools(name).catch((err) =>
      this._logger.error(`MCP server "${name}": refreshing tools failed: ${messageOf(err)}`, { server: name, error: messageOf(err) }),
    )
  }
}

/**
 * Resolves when all `promises` settled or `ms` passed, whichever is first (timer cleared).
 * @param {Promise<unknown>[]} promises
 * @param {number} ms
 * @returns {Promise<void>}
 */
function gate(promises, ms) {
  if (promises.length === 0) return Promise.resolve()
  return new Promise((/** @type {(value?: undefined) => void} */ resolve) => {
    const timer = setTimeout(resolve, ms)
    Promise.allSettled(promises).then(() => {
      clearTimeout(timer)
      resolve()
    })
  })
}

/**
 * `{ manager, result }`: a manager without tool cache or auth storage, after discovery.
 * @template [TTool=Tool]
 * @param {string} cwd
 * @param {MCPDiscoverOptions & MCPManagerOptions<TTool>} [options]
 */
async function createMCPManager(cwd, options) {
  const manager = new MCPManager(cwd, null, options)
  const result = await manager.discoverAndConnect(options)
  return { manager, result }
}

module.exports = {
  MCPManager,
  createMCPManager,
  createMCPToolName,
  formatToolResult,
  loadConfigs,
  resolveConfigValue,
  defaultToolFactory,
}

/**
 * Type check only (no code): this module's exports match the declarations users see (manager.d.ts).
 * @template {typeof import('./manager.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
