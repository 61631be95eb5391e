'use strict'
// mcp-native/manager (SPEC 6): many servers — discovery, parallel connect behind a 250 ms
// startup gate, tools tracked per server, refresh, reconnect, teardown. Config discovery,
// validation, tool names and `!command` values run in Rust (src/config.rs); this file wires the
// injectable parts (tool cache, tool factory, logger, auth storage) that are JS objects.

const path = require('node:path')
const native = require('../native/index.js')
const { nativeOAuth } = require('./oauth-client.js')
const { agentDir } = require('./agent-dir.js')
const { loadAllMCPConfigs } = require('./config.js')
const { MCPClient, DEFAULT_CAPABILITIES } = require('./client.js')
const toolBridge = require('./tool-bridge.js')
const { makeError, messageOf, nativeConfig, readBatch, swallow } = require('./core.js')

// The kinds of the events from Rust (src/sink.rs `EventKind`).
const K = native.EventKind

/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('../index.js').MCPServerConnection} MCPServerConnection */
/** @typedef {import('../index.js').MCPToolDefinition} MCPToolDefinition */
/** @typedef {import('../index.js').MCPToolCache} MCPToolCache */
/** @typedef {import('../index.js').Tool} Tool */
/** @typedef {import('../index.js').SourceMeta} SourceMeta */
/** @typedef {import('../index.js').AuthStorage} AuthStorage */
/** @typedef {import('../index.js').MCPAuthConfig} MCPAuthConfig */
/** @typedef {import('../index.js').MCPLoadedConfigs} MCPLoadedConfigs */
/** @typedef {import('../index.js').MCPDiscoverOptions} MCPDiscoverOptions */
/** @typedef {import('../index.js').MCPToolRenderer} MCPToolRenderer */
/** @typedef {import('../index.js').MCPClient} MCPClientType */
/**
 * @template [TTool=Tool]
 * @typedef {import('../index.js').MCPToolFactory<TTool>} MCPToolFactory
 */
/**
 * @template [TTool=Tool]
 * @typedef {import('../index.js').MCPManagerOptions<TTool>} MCPManagerOptions
 */
/**
 * @template [TTool=Tool]
 * @typedef {import('../index.js').MCPLoadResult<TTool>} MCPLoadResult
 */
/**
 * The tool bridge's objects as lib/tool-bridge.js types them. They are what tool-bridge.d.ts
 * declares as `Tool`, but the declared private members make TypeScript treat the declared and the
 * JS classes as unrelated: where one becomes the other, a cast goes through `unknown`.
 * @typedef {import('./tool-bridge.js').MCPTool | import('./tool-bridge.js').DeferredMCPTool} BridgeTool
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
 * SPEC 6 default `loadConfigs`: discovery from every source of SPEC 7 (`loadAllMCPConfigs`).
 * @param {string} cwd
 * @param {import('./config.js').LoadMCPConfigsOptions} [options]
 * @returns {Promise<MCPLoadedConfigs>}
 */
function loadConfigs(cwd, options) {
  return loadAllMCPConfigs(cwd, options)
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
   * @param {{ profile: 'current', reconnect: unknown }} [profile] the Rust manager's profile (SPEC 11.3): the root's
   *   subclass (manager-current.js) passes the agent's as it ships today; absent, 12.7's
   */
  constructor(cwd, toolCache = null, options, profile) {
    const o = options || {}
    this.cwd = cwd
    /** @type {MCPToolCache | null} */
    this.toolCache = toolCache ?? null
    /** [beyond] `(serverName, method, params)` for every server's notifications. */
    this.onNotification = o.onNotification
    /** [beyond] `(serverName, status, error?)`: "connecting" | "connected" | "disconnected". */
    this.onServerStatus = o.onServerStatus
    // Without a toolFactory, TTool is the default, Tool: the tool bridge's objects.
    this._toolFactory = o.toolFactory ?? /** @type {MCPToolFactory<TTool>} */ (/** @type {unknown} */ (toolFactoryFor(o.renderer)))
    this._resolveValue = o.resolveConfigValue ?? resolveConfigValue
    this._logger = safeLogger(o.logger ?? silentLogger)
    // The default discovery's warnings (unreadable or broken files) go to the manager's logger.
    this._loadConfigs =
      o.loadConfigs ??
      ((/** @type {string} */ cwd, /** @type {import('./config.js').LoadMCPConfigsOptions} */ opts) =>
        loadAllMCPConfigs(cwd, { ...opts, logger: this._logger }))
    this._disabledProviders = o.disabledProviders
    /** [beyond] `(serverName, method, params)`: answers server→client requests of every server. */
    this._onRequest = typeof o.onRequest === 'function' ? o.onRequest : undefined
    // SPEC 6: giving onRequest declares elicitation and sampling, unless capabilities are given.
    const capabilities = o.capabilities ?? (this._onRequest ? { ...DEFAULT_CAPABILITIES, elicitation: {}, sampling: {} } : undefined)
    this._clientOptions = { protocolVersion: o.protocolVersion, capabilities, clientInfo: o.clientInfo, reconnect: o.reconnect }
    // SPEC 10.3: OAuth for every HTTP server; tokens default to mcp-oauth.json in the agent dir.
    /** @type {any} the NativeOAuth of `options.oauth` */
    this._oauth = nativeOAuth(o.oauth, { logger: this._logger, defaultStoreFile: path.join(agentDir(), 'mcp-oauth.json') })
    /** @type {AuthStorage | null} */
    this._authStorage = null
    /** @type {Map<string, SourceMeta>} */
    this._sources = new Map()
    /** @type {Map<string, MCPServerConfig>} each server's config as given (a connection's `config`) */
    this._configs = new Map()
    /** @type {Map<string, MCPServerConnection>} the connected servers' connection objects */
    this._connections = new Map()
    /** @type {Map<number, any>} each started server's client (an MCPClient, internals used), by its tag */
    this._faces = new Map()
    /** @type {Map<string, number>} each server's latest tag */
    this._tags = new Map()
    /** The root's rule: configs refused by validation are not kept (manager-current.js sets it). */
    this._forgetRefused = false
    /** @type {Map<string, ServerStatus>} the status last reported for each server */
    this._statuses = new Map()
    /** @type {Map<string, TTool[]>} */
    this._serverTools = new Map() // name → tool objects (live or deferred)
    /** @type {TTool[]} */
    this._tools = []
    // Rust owns the registry, the starts, the gate, refreshes and reconnects (src/manager/);
    // its callbacks reach this object only weakly.
    const weak = new WeakRef(this)
    this._native = new native.NativeManager(
      clientNativeOptions(this._clientOptions, this._oauth, profile),
      (/** @type {import('./core.js').Batch} */ batch) => weak.deref()?._onBatch(batch),
      /** @param {any[]} args `(kind, payload)` */
      (...args) => {
        const [kind, payload] = args.length === 1 && Array.isArray(args[0]) ? args[0] : args
        const m = weak.deref()
        return m ? m._host(kind, JSON.parse(payload)) : Promise.reject(new Error('the manager is gone'))
      },
    )
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
   * @param {Record<string, SourceMeta>} [sources]
   * @param {(serverNames: string[]) => void} [onConnecting]
   * @returns {Promise<MCPLoadResult<TTool>>}
   */
  async connectServers(configs, sources, onConnecting) {
    const { errors, connectedServers, inResult } = await this._connect(configs, sources, { onConnecting })
    /** @type {TTool[]} */
    const tools = []
    for (const name of inResult) for (const t of this._serverTools.get(name) || []) tools.push(t)
    return { tools, errors, connectedServers, exaApiKeys: [] }
  }

  /**
   * Starts the servers of `configs` and waits for the gate: what both profiles' `connectServers`
   * share. `hooks.onStart` hears the start at once (its `call` id tags its status events);
   * `hooks.windowMs` is the gate's window for this call (absent: the manager's; 0: none);
   * `hooks.validate` is the host's own check of a config (the problems it finds refuse it with
   * their words, before the package's check; undefined: no word).
   * @param {Record<string, MCPServerConfig>} configs
   * @param {Record<string, SourceMeta> | undefined} sources
   * @param {{ onConnecting?: (serverNames: string[]) => void, onStart?: (start: { started: string[], call: number }) => void, windowMs?: number, validate?: (name: string, config: MCPServerConfig) => string[] | undefined }} hooks
   */
  async _connect(configs, sources, hooks) {
    /** @type {Map<string, string>} */
    const errors = new Map()
    /** @type {Array<[string, unknown] | [string, unknown, string[]]>} */
    const entries = []
    for (const [name, config] of Object.entries(configs)) {
      const source = sources?.[name]
      if (source) {
        this._sources.set(name, source)
        const existing = this._connections.get(name)
        if (existing) existing._source = source
      }
      if (!this._tags.has(name) && !this._connections.has(name)) this._configs.set(name, config)
      /** @type {[string, unknown] | [string, unknown, string[]]} */
      const entry = [name, config ? this._connectConfig(config) : null]
      const problems = config && hooks.validate && !this._connections.has(name) ? hooks.validate(name, config) : undefined
      if (problems) entry.push(problems)
      entries.push(entry)
    }
    /** @type {{ started: string[], connected: string[], errors: Array<[string, string]>, call: number }} */
    const start = JSON.parse(this._native.start(JSON.stringify(entries)))
    hooks.onStart?.(start)
    for (const [name, message] of start.errors) {
      errors.set(name, message)
      // The root's: a config refused by validation is not known (18.3.4: getServerConfig has
      // nothing for it).
      if (this._forgetRefused && !this._connections.has(name) && !this._tags.has(name)) this._configs.delete(name)
    }
    const onConnecting = hooks.onConnecting
    if (start.started.length > 0 && typeof onConnecting === 'function') {
      this._guard(() => onConnecting(start.started))
    }
    this._native.hold(true)
    /** @type {{ connected: string[], deferred: string[], pending: string[], errors: Array<[string, string]> }} */
    let gate
    try {
      gate = JSON.parse(await this._settle(this._native.gate(JSON.stringify(start.started), hooks.windowMs)))
    } finally {
      this._native.hold(false)
    }
    for (const [name, message] of gate.errors) errors.set(name, message)
    const connectedServers = [...start.connected]
    const inResult = new Set(start.connected)
    for (const name of start.started) {
      if (gate.connected.includes(name) && this._connections.has(name)) {
        connectedServers.push(name)
        inResult.add(name)
      } else if (gate.deferred.includes(name)) {
        inResult.add(name)
      }
    }
    return { errors, connectedServers, inResult }
  }

  // --- what Rust asks (src/manager.rs) ------------------------------------------------

  /**
   * Answers the Rust manager's lifecycle calls: `prepare` (the config to connect with),
   * `cacheGet` (cached tools), `tools` (a server's tools: the tool objects are made here).
   * @param {string} kind
   * @param {any} payload
   * @returns {Promise<string>}
   */
  async _host(kind, payload) {
    const name = payload.name
    const config = /** @type {MCPServerConfig} */ (this._configs.get(name))
    switch (kind) {
      case 'prepare':
        return nativeConfig(this._connectConfig(await this.prepareConfig(config)))
      case 'cacheGet':
        return JSON.stringify(await this._cacheGet(name, config))
      case 'tools':
        this._register(name, payload.generation, payload.tools)
        return 'ok'
      case 'defer':
        this._defer(name, payload.tools)
        return 'ok'
      default:
        throw new Error(`unknown host call ${kind}`)
    }
  }

  /**
   * A server is up (or listed its tools again): its connection object and its tool objects (the
   * tool factory may throw: the server then fails, closed and reported).
   * @param {string} name
   * @param {number} generation
   * @param {MCPToolDefinition[]} tools
   */
  _register(name, generation, tools) {
    const face = this._faces.get(/** @type {number} */ (this._tags.get(name)))
    if (!face) throw new Error(`MCP server not connected: ${name}`)
    const init = face._native.initJson ? JSON.parse(face._native.initJson) : undefined
    if (init) face._onClientEvent([8, generation, init])
    const connection = /** @type {MCPServerConnection} */ (face.connection)
    connection.config = /** @type {MCPServerConfig} */ (this._configs.get(name))
    const source = this._sources.get(name)
    if (source) connection._source = source
    connection.tools = tools
    const objects = this._toolFactory.fromTools(connection, tools, this._reconnectFor(name))
    this._connections.set(name, connection)
    this._setServerTools(name, objects)
  }

  /**
   * Events of the Rust manager and of its servers (src/manager.rs).
   * @param {import('./core.js').Batch} batch
   */
  _onBatch(batch) {
    for (const ev of readBatch(batch)) {
      if (ev[0] === K.Server) {
        const face = this._faces.get(ev[1])
        if (face) {
          face._face._onEvent(ev[2])
          if (face._retired) this._dropIfDone(ev[1])
        }
      } else if (ev[0] === K.Manager) {
        this._onManagerEvent(ev)
      }
    }
  }

  /** @param {any[]} ev */
  _onManagerEvent(ev) {
    const name = ev[2]
    switch (ev[1]) {
      case 'starting':
        this._startFace(name, ev[3])
        break
      case 'status': {
        const status = /** @type {ServerStatus} */ (ev[3])
        if (this._statuses.get(name) === status && status !== 'connecting') break // told already
        this._statuses.set(name, status)
        this._status(name, status, ev[4] ? makeError(ev[4]) : undefined)
        break
      }
      case 'removed':
        this._forget(name)
        break
      case 'cacheSet':
        this._cacheSet(name, /** @type {MCPServerConfig} */ (this._configs.get(name)), ev[3])
        break
      case 'log': {
        const level = /** @type {'error' | 'warn' | 'debug'} */ (ev[2])
        this._logger[level](ev[3], ev[4])
        break
      }
      case 'connection':
        this._onConnection(ev)
        break
    }
  }

  /**
   * The agent's connection status events (`[kind, 'connection', call, type, server(s), error?]`):
   * the root's (manager-current.js); the 12.7 profile has `onServerStatus` instead.
   * @param {any[]} _ev
   */
  _onConnection(_ev) {}

  /**
   * What a tool of server `name` calls to connect it again: the root's manager hands its
   * `reconnectServer` to the tool objects; the 12.7 one none.
   * @param {string} _name
   * @returns {((options?: { authChallenge?: { wwwAuthenticate: readonly string[] } }) => Promise<MCPServerConnection | null>) | undefined}
   */
  _reconnectFor(_name) {
    return undefined
  }

  /**
   * The config a server is connected with, after `prepareConfig`: as it is here; the root's
   * manager resolves its deadline as the agent does (0 = none).
   * @param {MCPServerConfig} config
   * @returns {MCPServerConfig}
   */
  _connectConfig(config) {
    return config
  }

  /** Delivers the events queued so far, now. */
  _drain() {
    const batch = this._native.drain()
    if (batch) this._onBatch(batch)
  }

  /**
   * A server's start began: its client face (over the Rust client the manager made).
   * @param {string} name
   * @param {number} tag
   */
  _startFace(name, tag) {
    const handle = this._native.client(name, tag)
    if (!handle) return
    // The face's requests take their default deadline from this config (the root resolves it).
    const config = this._connectConfig(/** @type {MCPServerConfig} */ (this._configs.get(name)))
    // `any`: the fourth parameter (the manager's handle) and the internals used here are not public.
    const Client = /** @type {any} */ (MCPClient)
    const client = new Client(name, config, this._clientOptions, handle)
    // A face of an earlier start of this name (closing while this one began) retires.
    const earlier = this._tags.get(name)
    if (earlier !== undefined && earlier !== tag) {
      const old = this._faces.get(earlier)
      if (old) old._retired = true
      this._dropIfDone(earlier)
    }
    this._faces.set(tag, client)
    this._tags.set(name, tag)
    client.onNotification = (/** @type {string} */ method, /** @type {unknown} */ params) => {
      if (typeof this.onNotification === 'function') this._guard(() => this.onNotification?.(name, method, params))
    }
    client.onError = (/** @type {unknown} */ err) => this._logger.warn(`MCP server "${name}": ${messageOf(err)}`)
    client.onWarning = (/** @type {string} */ message) => this._logger.warn(`MCP server "${name}": ${message}`)
    const handler = this._onRequest
    if (handler) client.onRequest = (/** @type {string} */ method, /** @type {unknown} */ params) => handler(name, method, params)
  }

  /**
   * Cached tools stand in for a server still starting. When the tool factory throws, the server
   * is awaited instead (the error goes back to Rust).
   * @param {string} name
   * @param {MCPToolDefinition[]} cached
   */
  _defer(name, cached) {
    try {
      const tools = this._toolFactory.deferredFromTools(
        name,
        cached,
        () => this.waitForConnection(name),
        this._sources.get(name),
        this._reconnectFor(name),
      )
      this._setServerTools(name, tools)
    } catch (err) {
      this._logger.error(`MCP tool factory failed for the cached tools of "${name}": ${messageOf(err)}`)
      throw err
    }
  }

  /**
   * Awaits a call of the Rust manager, then handles the events it queued (a status, the cache
   * write) before the caller goes on.
   * @template T
   * @param {Promise<T>} call
   * @returns {Promise<T>}
   */
  async _settle(call) {
    try {
      return await call
    } finally {
      this._drain()
    }
  }

  /** @param {string} name */
  _forget(name) {
    const tag = this._tags.get(name)
    if (tag !== undefined) {
      // Its client's last events (its close, the failure of requests in flight) may still be on
      // their way: the face goes once it has heard them.
      const face = this._faces.get(tag)
      if (face) face._retired = true
      this._dropIfDone(tag)
    }
    this._tags.delete(name)
    this._connections.delete(name)
    if (this._serverTools.delete(name)) this._rebuildTools()
  }

  /**
   * Forgets a retired server's client face once it is closed and nothing waits on it.
   * @param {number} tag
   */
  _dropIfDone(tag) {
    const face = this._faces.get(tag)
    if (!face) return
    const closed = face._state === 'idle' || face._state === 'closed'
    if (closed && !face._face._connected && face._face._pending.size === 0) this._faces.delete(tag)
  }

  /**
   * @param {string} name
   * @param {TTool[]} tools
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
   * @param {unknown} [error]
   */
  _status(name, status, error) {
    if (typeof this.onServerStatus !== 'function') return
    this._guard(() =>
      error === undefined ? this.onServerStatus?.(name, status) : this.onServerStatus?.(name, status, /** @type {Error} */ (error)),
    )
  }

  /** @param {() => unknown} fn */
  _guard(fn) {
    /** @param {unknown} err */
    const failed = (err) => this._logger.error(`MCP manager callback threw: ${messageOf(err)}`)
    try {
      /** @type {any} whatever the user callback returned */
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
    return /** @type {ServerStatus} */ (this._native.status(name))
  }

  /** @param {string} name */
  getSource(name) {
    return this._sources.get(name)
  }

  /**
   * @param {string} name
   * @returns {Promise<MCPServerConnection>}
   */
  async waitForConnection(name) {
    const connection = this._connections.get(name)
    if (connection) return connection
    if (!this._native.pendingServers().includes(name)) throw new Error(`MCP server not connected: ${name}`)
    await this._settle(this._native.wait(name))
    const connected = this._connections.get(name)
    if (!connected) throw new Error(`MCP server not connected: ${name}`)
    return connected
  }

  getConnectedServers() {
    return [...this._connections.keys()]
  }

  getAllServerNames() {
    const names = new Set(this._sources.keys())
    for (const n of this._connections.keys()) names.add(n)
    for (const n of this._native.pendingServers()) names.add(n)
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

  /**
   * Closes server `name` (a start in progress is abandoned: a connect that finishes later is
   * closed instead of registered [fix]) and forgets it, its tools and its source.
   * @param {string} name
   */
  async disconnectServer(name) {
    const had = this._tags.has(name) || this._connections.has(name) || this._serverTools.has(name)
    this._sources.delete(name)
    await this._settle(this._native.disconnect(name))
    // A start of the same name begun while this one closed (connectServers meanwhile) owns the
    // name now: its state is not this disconnect's to forget.
    if (this._held(name)) return
    this._forget(name)
    this._configs.delete(name)
    // As the Rust manager reports it too (then this is known already).
    if (had) this._onManagerEvent([12, 'status', name, 'disconnected', null])
  }

  /**
   * Whether the Rust manager holds server `name` (connected or starting).
   * @param {string} name
   */
  _held(name) {
    return this._native.connectedServers().includes(name) || this._native.pendingServers().includes(name)
  }

  async disconnectAll() {
    // The Rust manager's own list too: a server connected there but not yet registered here
    // (its tools on their way to JS) must close as well.
    const names = new Set([
      ...this._connections.keys(),
      ...this._native.connectedServers(),
      ...this._native.pendingServers(),
      ...this._tags.keys(),
      ...this._serverTools.keys(),
    ])
    await Promise.all([...names].map((n) => this.disconnectServer(n)))
    this._sources.clear()
    this._serverTools.clear()
    this._rebuildTools()
  }

  /**
   * Lists the server's tools again (in Rust); an error propagates to the caller (as in the
   * reference).
   * @param {string} name
   */
  async refreshServerTools(name) {
    if (!this._connections.has(name)) return
    await this._settle(this._native.refresh(name))
  }

  /** Every connected server; one server's failure is logged and does not stop the others. */
  async refreshAllTools() {
    await Promise.all(
      [...this._connections.keys()].map((name) =>
        this.refreshServerTools(name).catch((err) =>
          this._logger.error(`MCP server "${name}": refreshing tools failed: ${messageOf(err)}`, { server: name, error: messageOf(err) }),
        ),
      ),
    )
  }
}

/**
 * The client options every server's Rust client gets, and the manager's profile, as JSON text.
 * @param {{ protocolVersion?: string, capabilities?: unknown, clientInfo?: unknown, reconnect?: unknown }} o
 * @param {any} [oauth] the NativeOAuth of the manager's `oauth` option
 * @param {unknown} [profile]
 */
function clientNativeOptions(o, oauth, profile) {
  const r = o.reconnect === true ? {} : o.reconnect || null
  const rr = /** @type {{ maxAttempts?: number, initialDelayMs?: number, maxDelayMs?: number } | null} */ (r)
  return JSON.stringify({
    oauthId: oauth ? oauth.id : undefined,
    protocolVersion: o.protocolVersion,
    capabilities: o.capabilities,
    clientInfo: o.clientInfo,
    reconnect: rr && {
      maxAttempts: Number(rr.maxAttempts ?? 5),
      initialDelayMs: Number(rr.initialDelayMs ?? 500),
      maxDelayMs: Number(rr.maxDelayMs ?? 30000),
    },
    forwardRequests: false,
    manager: profile,
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
 * Type check only (no code): this module's exports match the declarations users see
 * (compat-12.7/manager.d.ts: this is the 12.7 manager).
 * @template {typeof import('./entries/compat-12.7/manager.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
