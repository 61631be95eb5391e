'use strict'
// mcp-native/manager at the root: the manager as the agent ships it today (18.3.4 `manager.ts`,
// SPEC 11.3–11.4). The orchestration — the startup window that leaves uncached servers to finish
// in the background, the reconnect ladder and its crash-storm breaker, the quiet retries of a lost
// remote server, the startup barriers and the order of the status events — is the Rust manager's
// (crates/mcp-native-core/src/manager/policy.rs); this face adds the agent's constructor, the
// listeners and callbacks, and what the 12.7 face (manager.js, `mcp-native/compat-12.7`) keeps.

const base = require('./manager.js')
const toolBridge = require('./tool-bridge-current.js')
const nodePath = require('node:path')
const nodeUrl = require('node:url')
const client = require('./client-current.js')
const { MCP_PROTOCOL_VERSION, withDeadline } = client

/** Notifications kept for the first notification listener, at most (the oldest dropped). */
const NOTIFICATION_BUFFER_CAP = 100
/** The `onAuthError` callbacks this manager set (a reconnect replaces or removes only these). */
const AUTH_REFRESHERS = new WeakSet()
const { messageOf } = require('./core.js')
const { resolveMCPStartupTimeoutMs } = require('./timeout.js')
const { hooks, hookLogger } = require('./hooks.js')
const { setGeneratedHeader } = require('./header-policy.js')
const { agentConnectFailureText, mapTransportErrors } = require('./root-errors.js')

/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('../index.js').MCPServerConnection} MCPServerConnection */
/** @typedef {import('../index.js').SourceMeta} SourceMeta */
/** @typedef {import('../index.js').Tool} Tool */
/** @typedef {import('../index.js').MCPToolCache} MCPToolCache */
/** @typedef {import('../index.js').McpConnectionStatusEvent} McpConnectionStatusEvent */
/** @typedef {import('../index.js').MCPStartupStatus} MCPStartupStatus */
/** @typedef {import('../index.js').MCPReconnectPolicy} MCPReconnectPolicy */
/** @typedef {import('../index.js').MCPAuthHandler} MCPAuthHandler */
/** @typedef {import('../index.js').MCPAuthChallenge} MCPAuthChallenge */
/** @typedef {import('../index.js').MCPConfigLoader} MCPConfigLoader */
/**
 * @template [TTool=Tool]
 * @typedef {import('../index.js').MCPManagerOptions<TTool>} MCPManagerOptions
 */
/**
 * @template [TTool=Tool]
 * @typedef {import('../index.js').MCPLoadResult<TTool>} MCPLoadResult
 */
/** @typedef {import('../index.js').MCPCurrentDiscoverOptions} MCPCurrentDiscoverOptions */

/** The agent's `DEFAULT_RECONNECT_POLICY`. */
const DEFAULT_RECONNECT_POLICY = Object.freeze({ ladderMs: Object.freeze([500, 1000, 2000, 4000]), retryBaseMs: 15000, retryMaxMs: 300000 })

/**
 * The agent's tool order (`sortMCPToolsByName`): by name, in place; stable across reconnects.
 * @template {{ name: string }} T
 * @param {T[]} tools
 * @returns {T[]}
 */
function sortMCPToolsByName(tools) {
  tools.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  return tools
}

/**
 * The agent's `resolveSubscriptionPostAction`.
 * @param {boolean} notificationsEnabled
 * @param {number} currentEpoch
 * @param {number} subscriptionEpoch
 * @returns {'rollback' | 'ignore' | 'apply'}
 */
function resolveSubscriptionPostAction(notificationsEnabled, currentEpoch, subscriptionEpoch) {
  if (!notificationsEnabled) return 'rollback'
  if (currentEpoch !== subscriptionEpoch) return 'ignore'
  return 'apply'
}

/**
 * The default `toolFactory` at the root: the agent's tool objects, with the manager's renderer.
 * @param {import('../index.js').MCPToolRenderer | undefined} renderer
 * @returns {import('../index.js').MCPToolFactory<any>}
 */
function currentToolFactory(renderer) {
  const options = renderer ? { renderer } : undefined
  return {
    fromTools: (connection, tools, reconnect) => toolBridge.MCPTool.fromTools(connection, tools, reconnect, options),
    deferredFromTools: (serverName, tools, getConnection, source, reconnect) =>
      toolBridge.DeferredMCPTool.fromTools(serverName, tools, getConnection, source, reconnect, options),
  }
}

/** @type {MCPManager<any> | undefined} */
let instance

/**
 * @template [TTool=Tool] what `getTools()` holds
 * @extends {base.MCPManager<TTool>}
 */
class MCPManager extends base.MCPManager {
  /**
   * The process-wide instance (the agent's internal URL handlers and tools use it).
   * @returns {MCPManager | undefined}
   */
  static instance() {
    return instance
  }

  /** @param {MCPManager<any> | undefined} value */
  static setInstance(value) {
    instance = value
  }

  /** Clears the process-wide instance (tests). */
  static resetForTests() {
    instance = undefined
  }

  /**
   * The agent's `(cwd, toolCache, loadConfigs, reconnectPolicy)`, then this package's options
   * (SPEC 11.3). A plain object in third place (today's `(cwd, toolCache, options)`) is the
   * options; `reconnect: false` there turns the reconnect policy off.
   * @param {string} cwd
   * @param {MCPToolCache | null} [toolCache]
   * @param {MCPConfigLoader | MCPManagerOptions<TTool> | null} [loadConfigs]
   * @param {MCPReconnectPolicy | null} [reconnectPolicy]
   * @param {MCPManagerOptions<TTool>} [options]
   */
  constructor(cwd, toolCache = null, loadConfigs, reconnectPolicy, options) {
    /** @type {any} */
    let given = options
    let loader = loadConfigs
    if (loader !== null && typeof loader === 'object') {
      given = loader
      loader = undefined
    }
    /** @type {any} */
    const o = { ...(given || {}) }
    if (typeof loader === 'function') o.loadConfigs = loader
    const policy = reconnectPolicy ?? DEFAULT_RECONNECT_POLICY
    const off = o.reconnect === false
    // 12.7's client-level `reconnect` option is the 12.7 profile's: here the manager reconnects.
    o.reconnect = undefined
    // The agent's tool objects, each with this server's reconnect (SPEC 11.4 tool bridge).
    o.toolFactory ??= currentToolFactory(o.renderer)
    // The agent's protocol revision (SPEC 11.3).
    o.protocolVersion ??= MCP_PROTOCOL_VERSION
    // The agent's injected logger, read at each line, unless one is given.
    o.logger ??= hookLogger()
    super(cwd, toolCache, o, {
      profile: 'current',
      reconnect: off ? false : { ladderMs: [...policy.ladderMs], retryBaseMs: policy.retryBaseMs, retryMaxMs: policy.retryMaxMs },
    })
    /** @type {MCPReconnectPolicy} */
    this.reconnectPolicy = policy
    this._forgetRefused = true
    /** @type {Set<(event: McpConnectionStatusEvent) => void>} */
    this._statusListeners = new Set()
    /** @type {Map<number, { onStatus: (event: McpConnectionStatusEvent) => void, retrying: Set<string> }>} per `connectServers` call */
    this._calls = new Map()
    /** @type {((tools: TTool[]) => void | Promise<void>) | undefined} */
    this._onToolsChanged = undefined
    /** @type {MCPAuthHandler | undefined} */
    this._authHandler = undefined
    /** @type {MCPCurrentDiscoverOptions | undefined} */
    this._discoverOptions = undefined
    /** @type {Promise<unknown>} the discovery in progress (the project-config reconcile waits for it) */
    this._discoveryInFlight = Promise.resolve()
    /** @type {Promise<unknown>} the reconciles run one after the other */
    this._reconcileTail = Promise.resolve()
    // Without a loader of the caller's: the agent's injected `loadAllMCPConfigs`, else the
    // package's discovery (SPEC 7), looked up at each load.
    if (typeof loader !== 'function' && !o.loadConfigs) {
      const own = this._loadConfigs
      this._loadConfigs = (/** @type {string} */ cwd, /** @type {any} */ opts) =>
        typeof hooks.loadAllMCPConfigs === 'function' ? hooks.loadAllMCPConfigs(cwd, opts) : own(cwd, opts)
    }
    /** @type {Set<(serverName: string, method: string, params: unknown) => void>} */
    this._notificationListeners = new Set()
    /** @type {Array<{ server: string, method: string, params: unknown }>} */
    this._pendingNotifications = []
    /** @type {Set<(event: { serverName: string, kind: 'resources' | 'prompts' }) => void>} */
    this._catalogListeners = new Set()
    /** @type {((serverName: string, uri: string) => void) | undefined} */
    this._onResourcesChanged = undefined
    /** @type {((serverName: string) => void) | undefined} */
    this._onPromptsChanged = undefined
    this._notificationsEnabled = false
    this._notificationsEpoch = 0
    /** @type {Map<string, Set<string>>} */
    this._subscribed = new Map()
    /** @type {Map<string, { connection: MCPServerConnection, promise: Promise<void> }>} */
    this._resourceRefresh = new Map()
    /** @type {Map<string, MCPServerConnection>} the connection each server's catalogs were loaded for */
    this._catalogsOf = new Map()
  }

  // --- notifications, resources, prompts, instructions (18.3.4 manager.ts) -----------------------

  /**
   * Listens to every server's notifications, after the manager's own handling (a list change
   * is refreshed first). Notifications that came before any listener are kept (at most 100, the
   * oldest dropped) and given to the first one. A listener that throws breaks no other.
   * @param {(serverName: string, method: string, params: unknown) => void} listener
   * @returns {() => void} removes it
   */
  addNotificationListener(listener) {
    const first = this._notificationListeners.size === 0
    this._notificationListeners.add(listener)
    if (first && this._pendingNotifications.length > 0) {
      for (const n of this._pendingNotifications.splice(0)) this._tell(listener, n.server, n.method, n.params)
    }
    return () => {
      this._notificationListeners.delete(listener)
    }
  }

  /**
   * @param {(serverName: string, method: string, params: unknown) => void} listener
   * @param {string} server
   * @param {string} method
   * @param {unknown} params
   */
  _tell(listener, server, method, params) {
    try {
      listener(server, method, params)
    } catch (err) {
      this._logger.debug('MCP notification listener threw', { path: `mcp:${server}`, method, error: messageOf(err) })
    }
  }

  /**
   * Listens to catalog refreshes (`{serverName, kind: 'resources' | 'prompts'}`).
   * @param {(event: { serverName: string, kind: 'resources' | 'prompts' }) => void} listener
   * @returns {() => void} removes it
   */
  addCatalogChangeListener(listener) {
    this._catalogListeners.add(listener)
    return () => {
      this._catalogListeners.delete(listener)
    }
  }

  /** @param {{ serverName: string, kind: 'resources' | 'prompts' }} event */
  _catalogChanged(event) {
    for (const listener of this._catalogListeners) {
      try {
        listener(event)
      } catch (err) {
        this._logger.debug('MCP catalog change listener threw', { error: messageOf(err) })
      }
    }
  }

  /** @param {(serverName: string, uri: string) => void} handler a subscribed resource changed */
  setOnResourcesChanged(handler) {
    this._onResourcesChanged = handler
  }

  /** @param {(serverName: string) => void} handler told at once for servers that have prompts */
  setOnPromptsChanged(handler) {
    this._onPromptsChanged = handler
    for (const [name, connection] of this._connections) {
      if (connection.prompts?.length) this._guard(() => handler(name))
    }
  }

  /**
   * Subscribes to (or unsubscribes from) every connected server's resources; a subscription that
   * settles after the setting changed again is rolled back.
   * @param {boolean} enabled
   */
  setNotificationsEnabled(enabled) {
    const was = this._notificationsEnabled
    this._notificationsEnabled = enabled
    if (enabled === was) return
    this._notificationsEpoch += 1
    const epoch = this._notificationsEpoch
    if (enabled) {
      for (const [name, connection] of this._connections) {
        if (connection.capabilities?.resources?.subscribe && connection.resources) {
          this._subscribe(
            name,
            connection,
            connection.resources.map((r) => r.uri),
            epoch,
          )
        }
      }
      return
    }
    for (const [name, connection] of this._connections) {
      const uris = this._subscribed.get(name)
      if (uris && uris.size > 0) {
        client
          .unsubscribeFromResources(connection, [...uris])
          .catch((err) => this._logger.debug('Failed to unsubscribe MCP resources', { path: `mcp:${name}`, error: messageOf(err) }))
      }
    }
    this._subscribed.clear()
  }

  /**
   * @param {string} name
   * @param {MCPServerConnection} connection
   * @param {string[]} uris
   * @param {number} epoch
   */
  _subscribe(name, connection, uris, epoch) {
    client
      .subscribeToResources(connection, uris, { logger: this._logger })
      .then(() => {
        const action = resolveSubscriptionPostAction(this._notificationsEnabled, this._notificationsEpoch, epoch)
        if (action === 'rollback') {
          client.unsubscribeFromResources(connection, uris).catch(() => {})
          return
        }
        if (action === 'apply') this._subscribed.set(name, new Set(uris))
      })
      .catch((err) => this._logger.debug('Failed to subscribe to MCP resources', { path: `mcp:${name}`, error: messageOf(err) }))
  }

  /** Whether notifications are on, and each server's subscribed URIs. */
  getNotificationState() {
    return { enabled: this._notificationsEnabled, subscriptions: /** @type {Map<string, ReadonlySet<string>>} */ (this._subscribed) }
  }

  /**
   * Lists server `name`'s resources and templates again (a template failure keeps the
   * resources), re-subscribes when notifications are on, then tells the catalog listeners.
   * Concurrent calls for the same connection share one refresh.
   * @param {string} name
   * @returns {Promise<void>}
   */
  refreshServerResources(name) {
    const connection = this._connections.get(name)
    if (!connection || !client.serverSupportsResources(connection.capabilities)) return Promise.resolve()
    const running = this._resourceRefresh.get(name)
    if (running && running.connection === connection) return running.promise
    const c = /** @type {any} */ (connection)
    const work = async () => {
      c.resources = undefined
      c.resourceTemplates = undefined
      const [resources, templates] = await Promise.allSettled([client.listResources(connection), client.listResourceTemplates(connection)])
      if (templates.status === 'rejected') {
        this._logger.debug('Failed to list MCP resource templates', { path: `mcp:${name}`, error: messageOf(templates.reason) })
      }
      if (resources.status === 'rejected') throw resources.reason
      if (!this._notificationsEnabled || !connection.capabilities?.resources?.subscribe) return
      const fresh = new Set(resources.value.map((r) => r.uri))
      const old = this._subscribed.get(name)
      const gone = old ? [...old].filter((u) => !fresh.has(u)) : []
      if (gone.length > 0) await client.unsubscribeFromResources(connection, gone).catch(() => {})
      const epoch = this._notificationsEpoch
      await client.subscribeToResources(connection, [...fresh], { logger: this._logger })
      const action = resolveSubscriptionPostAction(this._notificationsEnabled, this._notificationsEpoch, epoch)
      if (action === 'rollback') await client.unsubscribeFromResources(connection, [...fresh]).catch(() => {})
      else if (action === 'apply') this._subscribed.set(name, fresh)
    }
    const promise = work()
      .then(() => this._catalogChanged({ serverName: name, kind: 'resources' }))
      .finally(() => {
        if (this._resourceRefresh.get(name)?.promise === promise) this._resourceRefresh.delete(name)
      })
    this._resourceRefresh.set(name, { connection, promise })
    return promise
  }

  /**
   * Waits until a connected server's resource catalog is loaded.
   * @param {string} name
   */
  async ensureServerResources(name) {
    const connection = this._connections.get(name)
    if (!connection || !client.serverSupportsResources(connection.capabilities)) return
    if (connection.resources !== undefined && connection.resourceTemplates !== undefined) return
    await this.refreshServerResources(name)
  }

  /**
   * Lists server `name`'s prompts again, then tells `setOnPromptsChanged`'s handler and the
   * catalog listeners.
   * @param {string} name
   */
  async refreshServerPrompts(name) {
    const connection = this._connections.get(name)
    if (!connection || !client.serverSupportsPrompts(connection.capabilities)) return
    connection.prompts = undefined
    await client.listPrompts(connection)
    const handler = this._onPromptsChanged
    if (handler) this._guard(() => handler(name))
    this._catalogChanged({ serverName: name, kind: 'prompts' })
  }

  /**
   * @param {string} name
   * @returns {{ resources: import('../index.js').MCPResource[], templates: import('../index.js').MCPResourceTemplate[] } | undefined}
   */
  getServerResources(name) {
    const connection = this._connections.get(name)
    if (!connection) return undefined
    return { resources: connection.resources ?? [], templates: connection.resourceTemplates ?? [] }
  }

  /**
   * @param {string} name
   * @param {string} uri
   * @param {import('../index.js').MCPRequestOptions} [options]
   */
  async readServerResource(name, uri, options) {
    const connection = this._connections.get(name)
    if (!connection) return undefined
    return client.readResource(connection, uri, options)
  }

  /** @param {string} name */
  getServerPrompts(name) {
    const connection = this._connections.get(name)
    if (!connection) return undefined
    return connection.prompts ?? []
  }

  /**
   * @param {string} name
   * @param {string} promptName
   * @param {Record<string, string>} [args]
   * @param {import('../index.js').MCPRequestOptions} [options]
   */
  async executePrompt(name, promptName, args, options) {
    const connection = this._connections.get(name)
    if (!connection) return undefined
    return client.getPrompt(connection, promptName, args, options)
  }

  /**
   * Each connected server's instructions, unless its config says `instructions: false`.
   * @returns {Map<string, string>}
   */
  getServerInstructions() {
    /** @type {Map<string, string>} */
    const out = new Map()
    for (const [name, connection] of this._connections) {
      const config = /** @type {any} */ (connection.config)
      if (config?.instructions !== false && connection.instructions) out.set(name, connection.instructions)
    }
    return out
  }

  /**
   * A server's notification: the manager's handling first (a list change refreshes that
   * catalog, and is awaited), then the listeners — or the buffer when there are none.
   * @param {string} name
   * @param {string} method
   * @param {unknown} params
   */
  async _serverNotification(name, method, params) {
    const known = this._connections.has(name)
    /** @type {Promise<void> | undefined} */
    let refresh
    const quietly = (/** @type {Promise<void>} */ p, /** @type {string} */ kind) =>
      p.catch((err) => this._logger.debug('Failed MCP notification refresh', { path: `mcp:${name}`, kind, error: messageOf(err) }))
    if (method === 'notifications/tools/list_changed' && known) refresh = quietly(this.refreshServerTools(name), 'tools')
    else if (method === 'notifications/resources/list_changed' && known) refresh = quietly(this.refreshServerResources(name), 'resources')
    else if (method === 'notifications/prompts/list_changed' && known) refresh = quietly(this.refreshServerPrompts(name), 'prompts')
    else if (method === 'notifications/resources/updated') {
      const uri =
        params && typeof params === 'object' && typeof (/** @type {any} */ (params).uri) === 'string'
          ? /** @type {any} */ (params).uri
          : undefined
      const handler = this._onResourcesChanged
      if (uri && handler && this._subscribed.get(name)?.has(uri)) this._guard(() => handler(name, uri))
    }
    if (refresh) await refresh
    if (this._notificationListeners.size === 0) {
      this._pendingNotifications.push({ server: name, method, params })
      if (this._pendingNotifications.length > NOTIFICATION_BUFFER_CAP) this._pendingNotifications.shift()
      return
    }
    for (const listener of this._notificationListeners) this._tell(listener, name, method, params)
  }

  /**
   * Resources and prompts of a server that came up (best effort).
   * @param {string} name
   */
  async _loadCatalogs(name) {
    const connection = this._connections.get(name)
    if (!connection) return
    if (client.serverSupportsResources(connection.capabilities)) {
      await this.refreshServerResources(name).catch((err) =>
        this._logger.debug('Failed to load MCP resources', { path: `mcp:${name}`, error: messageOf(err) }),
      )
    }
    if (client.serverSupportsPrompts(connection.capabilities)) {
      await this.refreshServerPrompts(name).catch((err) =>
        this._logger.debug('Failed to load MCP prompts', { path: `mcp:${name}`, error: messageOf(err) }),
      )
    }
  }

  /**
   * Listens to the connection status events (`connecting`, `reconnecting`, `connected`,
   * `failed`); a listener that throws does not keep the others from hearing them.
   * @param {(event: McpConnectionStatusEvent) => void} listener
   * @returns {() => void} removes it
   */
  addConnectionStatusListener(listener) {
    this._statusListeners.add(listener)
    return () => {
      this._statusListeners.delete(listener)
    }
  }

  /**
   * Called with `getTools()` whenever a server's tools change; awaited when a server comes up or
   * lists its tools again.
   * @param {(tools: TTool[]) => void | Promise<void>} handler
   */
  setOnToolsChanged(handler) {
    this._onToolsChanged = handler
  }

  /** @param {MCPAuthHandler | undefined} handler completes OAuth after a tool-level challenge */
  setAuthHandler(handler) {
    this._authHandler = handler
  }

  /**
   * @param {MCPCurrentDiscoverOptions} [options]
   * @returns {Promise<MCPLoadResult<TTool>>}
   */
  discoverAndConnect(options) {
    const discovery = this._discoverAndConnect(options)
    this._discoveryInFlight = discovery.catch(() => undefined)
    return discovery
  }

  /**
   * @param {MCPCurrentDiscoverOptions} [options]
   * @returns {Promise<MCPLoadResult<TTool>>}
   */
  async _discoverAndConnect(options) {
    const o = options || {}
    this._discoverOptions = { ...o }
    /** @type {import('../index.js').MCPLoadedConfigs} */
    let loaded
    try {
      // The agent's loader takes these options (its `MCPConfigLoader`); the default one ignores
      // the two it does not know (`filterBrowser`, `extensionRoots`).
      const load = /** @type {import('../index.js').MCPConfigLoader} */ (this._loadConfigs)
      loaded = await load(this.cwd, {
        enableProjectConfig: o.enableProjectConfig ?? true,
        filterExa: o.filterExa ?? true,
        filterBrowser: o.filterBrowser,
        extensionRoots: o.extensionRoots,
        disabledProviders: o.disabledProviders ?? this._disabledProviders,
      })
    } catch (err) {
      // As 18.3.4: the loader's failure is the startup's, under the name `.mcp.json`.
      const message = messageOf(err)
      const onStatus = o.onStatus
      if (typeof onStatus === 'function') this._guard(() => onStatus({ type: 'failed', serverName: '.mcp.json', error: message }))
      this._native.startupFailed('.mcp.json', message)
      this._drain()
      throw err
    }
    const result = await this.connectServers(loaded.configs || {}, loaded.sources || {}, o.onStatus, o.startupTimeoutMs)
    result.exaApiKeys = loaded.exaApiKeys || []
    return result
  }

  /**
   * 18.3.4: the browser-automation servers follow the agent's browser setting — when it turns on
   * (`enabled`: the agent's own browser is in use) they are disconnected; when it turns off they
   * are loaded again (the loader asked not to filter them) and connected. Which servers are
   * browser servers is the agent's `isBrowserMCPServer` (injected); without it, none. Calls run
   * one after the other, with `reconcileProjectConfig`'s.
   * @param {boolean} enabled
   * @returns {Promise<void>}
   */
  reconcileBrowserFilter(enabled) {
    const next = this._reconcileTail.then(() => this._applyBrowserFilter(enabled))
    this._reconcileTail = next.catch(() => undefined)
    return next
  }

  /**
   * 18.3.4: a live change of the agent's project-config setting — project-level servers are
   * disconnected when it turns off (user-level servers they shadowed come back) and connected
   * when it turns on. Nothing before the first discovery, which reads the setting itself.
   * @param {boolean} enabled
   * @returns {Promise<void>}
   */
  reconcileProjectConfig(enabled) {
    const next = this._reconcileTail.then(() => this._applyProjectConfig(enabled))
    this._reconcileTail = next.catch(() => undefined)
    return next
  }

  /**
   * The loader's answer with the discovery's options, `changes` over them.
   * @param {MCPCurrentDiscoverOptions | undefined} o
   * @param {{ enableProjectConfig?: boolean, filterBrowser?: boolean }} changes
   */
  _reload(o, changes) {
    const load = /** @type {import('../index.js').MCPConfigLoader} */ (this._loadConfigs)
    return load(this.cwd, {
      enableProjectConfig: o?.enableProjectConfig ?? true,
      filterExa: o?.filterExa ?? true,
      filterBrowser: o?.filterBrowser,
      extensionRoots: o?.extensionRoots,
      disabledProviders: o?.disabledProviders ?? this._disabledProviders,
      ...changes,
    })
  }

  /** @param {boolean} enabled */
  async _applyProjectConfig(enabled) {
    await this._discoveryInFlight
    const o = this._discoverOptions
    if (!o || (o.enableProjectConfig ?? true) === enabled) return
    this._discoverOptions = { ...o, enableProjectConfig: enabled }
    const loaded = await this._reload(o, { enableProjectConfig: enabled })
    const sources = loaded.sources || {}
    const configs = loaded.configs || {}
    // Every server whose resolution depends on the setting: the project-level ones known now and
    // those the new load has.
    const affected = new Set(this.getAllServerNames().filter((name) => this.getSource(name)?.level === 'project'))
    for (const name of Object.keys(sources)) if (sources[name]?.level === 'project') affected.add(name)
    if (affected.size === 0) return
    await Promise.all([...affected].map((name) => this.disconnectServer(name)))
    /** @type {Record<string, MCPServerConfig>} */
    const again = {}
    /** @type {Record<string, SourceMeta>} */
    const againSources = {}
    for (const name of affected) {
      if (!configs[name]) continue
      again[name] = configs[name]
      if (sources[name]) againSources[name] = sources[name]
    }
    if (Object.keys(again).length === 0) return
    await this.connectServers(again, againSources, o.onStatus, o.startupTimeoutMs)
  }

  /** @param {boolean} enabled */
  async _applyBrowserFilter(enabled) {
    const o = this._discoverOptions
    const isBrowser = hooks.isBrowserMCPServer
    /** @param {string} name @param {MCPServerConfig | undefined} config */
    const browser = (name, config) => {
      if (typeof isBrowser !== 'function' || !config) return false
      try {
        return Boolean(isBrowser(name, config))
      } catch (error) {
        this._logger.warn('isBrowserMCPServer failed', { path: `mcp:${name}`, error })
        return false
      }
    }
    const loaded = await this._reload(o, { filterBrowser: false })
    /** @type {Record<string, MCPServerConfig>} */
    const configs = {}
    /** @type {Record<string, SourceMeta>} */
    const sources = {}
    for (const [name, config] of Object.entries(loaded.configs || {})) {
      if (!browser(name, config)) continue
      configs[name] = config
      const source = loaded.sources?.[name]
      if (source) sources[name] = source
    }
    if (!enabled) {
      await this.connectServers(configs, sources, o?.onStatus, o?.startupTimeoutMs)
      this._discoverOptions = { ...o, filterBrowser: false }
      return
    }
    const names = new Set(Object.keys(configs))
    for (const name of this.getAllServerNames()) if (browser(name, this.getServerConfig(name))) names.add(name)
    await Promise.all([...names].map((name) => this.disconnectServer(name)))
    this._discoverOptions = { ...o, filterBrowser: true }
  }

  /**
   * Starts the servers of `configs` and returns after the startup window (`startupTimeoutMs`,
   * default 250 ms, `OMP_MCP_STARTUP_TIMEOUT_MS` wins, 0 waits for all): slow servers with cached
   * tools stand in with them, the others finish in the background and their tools are added then.
   * `onStatus` hears this call's status events, also those of the reconnect that follows a start
   * that timed out.
   * @param {Record<string, MCPServerConfig>} configs
   * @param {Record<string, SourceMeta>} [sources]
   * @param {(event: McpConnectionStatusEvent) => void} [onStatus]
   * @param {number} [startupTimeoutMs]
   * @returns {Promise<MCPLoadResult<TTool>>}
   */
  // @ts-expect-error the agent's signature (SPEC 11.3): the 12.7 profile's third argument is `onConnecting`
  async connectServers(configs, sources, onStatus, startupTimeoutMs) {
    const windowMs = resolveMCPStartupTimeoutMs(startupTimeoutMs, this._logger)
    const { errors, connectedServers } = await this._connect(configs || {}, sources || {}, {
      windowMs,
      validate: (name, config) => this._validate(name, config),
      onStart: (start) => {
        if (typeof onStatus === 'function') this._calls.set(start.call, { onStatus, retrying: new Set() })
        // `connecting` (and validation failures) are told before this call goes on, as 18.3.4 does.
        this._drain()
      },
    })
    for (const [name, message] of errors) errors.set(name, agentConnectFailureText(message, this.getServerConfig(name)))
    return { tools: [...this._tools], errors, connectedServers, exaApiKeys: [] }
  }

  /**
   * The agent's injected `validateServerConfig` (SPEC 11.2) on a config about to start: its
   * problems (strings), or undefined when none is injected or it throws or returns something
   * else (the package's own check stands alone then).
   * @param {string} name
   * @param {MCPServerConfig} config
   * @returns {string[] | undefined}
   */
  _validate(name, config) {
    const validate = hooks.validateServerConfig
    if (typeof validate !== 'function') return undefined
    try {
      const problems = validate(name, config)
      if (Array.isArray(problems)) return problems.map(String)
      this._logger.warn('validateServerConfig returned no list; the package checks the config', { path: `mcp:${name}` })
    } catch (error) {
      this._logger.warn('validateServerConfig failed; the package checks the config', { path: `mcp:${name}`, error })
    }
    return undefined
  }

  /**
   * @param {any[]} ev `[kind, 'connection', call, type, server(s), error?]`
   */
  _onConnection(ev) {
    const [, , call, type, who, rawError] = ev
    // The failure's text as 18.3.4 words it (a failed spawn as Bun's, …: lib/root-errors.js).
    const error = agentConnectFailureText(rawError, typeof who === 'string' ? this.getServerConfig(who) : undefined)
    const tracked = call == null ? undefined : this._calls.get(call)
    /** @type {McpConnectionStatusEvent} */
    let event
    let forwardedAfter = false
    switch (type) {
      case 'connecting':
        event = { type, serverNames: who }
        break
      case 'reconnecting':
        event = { type, serverName: who }
        tracked?.retrying.add(who)
        break
      case 'connected':
        event = { type, serverName: who }
        forwardedAfter = tracked?.retrying.delete(who) ?? false
        break
      default: {
        // A connection that is gone (the crash-storm breaker's teardown, a failed reconnect) is
        // no longer handed out (18.3.4); its tools stay.
        const gone = this._connections.get(who)
        if (gone && !gone.transport?.connected) this._connections.delete(who)
        const retry = tracked?.retrying.delete(who) ?? false
        forwardedAfter = retry
        const sourcePath = call != null && !retry ? this._sources.get(who)?.path : undefined
        event = sourcePath ? { type: 'failed', serverName: who, error, sourcePath } : { type: 'failed', serverName: who, error }
      }
    }
    // 18.3.4: the call's own listener first, except for the outcome of a timed-out start's
    // retry, which reaches it through a listener added last.
    if (tracked && !forwardedAfter) this._guard(() => tracked.onStatus(event))
    for (const listener of this._statusListeners) {
      try {
        listener(event)
      } catch (err) {
        this._logger.debug('MCP connection status listener threw', { error: messageOf(err) })
      }
    }
    if (tracked && forwardedAfter) this._guard(() => tracked.onStatus(event))
  }

  /**
   * @param {string} kind
   * @param {any} payload
   * @returns {Promise<string>}
   */
  async _host(kind, payload) {
    const out = await super._host(kind, payload)
    if (kind === 'tools') {
      const name = payload.name
      const connection = this._connections.get(name)
      if (connection) this._wireAuthRefresh(name, connection)
      const face = this._faces.get(/** @type {number} */ (this._tags.get(name)))
      // A (re)connected server: its instructions, its catalogs loaded again (in the background).
      if (connection && face && connection !== this._catalogsOf.get(name)) {
        this._catalogsOf.set(name, connection)
        const instructions = face.instructions
        if (instructions !== undefined) connection.instructions = instructions
        void this._loadCatalogs(name)
      }
      await this._toolsChanged()
    }
    return out
  }

  /** Tells `setOnToolsChanged`'s handler; its failure is logged (the server stays up). */
  async _toolsChanged() {
    const handler = this._onToolsChanged
    if (typeof handler !== 'function') return
    try {
      await handler(this._tools)
    } catch (err) {
      this._logger.error(`MCP tools-changed callback threw: ${messageOf(err)}`)
    }
  }

  /** @param {string} name */
  _forget(name) {
    const had = (this._serverTools.get(name)?.length ?? 0) > 0
    super._forget(name)
    if (had) void this._toolsChanged()
  }

  _rebuildTools() {
    super._rebuildTools()
    sortMCPToolsByName(/** @type {Array<{ name: string }>} */ (/** @type {unknown} */ (this._tools)))
  }

  /**
   * 18.3.4 `prepareConfig`: a copy of `config` with the OAuth credential injected (unless
   * `opts.oauth` is false) as a generated `Authorization` header (http, sse; it replaces a
   * configured one in any case) or `OAUTH_ACCESS_TOKEN` (stdio), and the config's values resolved:
   * env values (not with `envPolicy: "literal"`; `envLiteralKeys` kept as they are) or headers
   * (not with `headerPolicy: "origin-locked"`), an empty result dropped. The credential comes
   * through the agent's injected `lookupMcpOAuthCredential` and
   * `refreshStoredManagedMcpOAuthCredential` (refreshed ahead of its expiry; `opts.forceRefresh`
   * always) when both are given, else from the auth storage by `auth.credentialId`; values
   * through the injected `resolveConfigValue`, else the manager's.
   * @param {MCPServerConfig} config
   * @param {{ oauth?: boolean, forceRefresh?: boolean }} [opts]
   * @returns {Promise<MCPServerConfig>}
   */
  async prepareConfig(config, opts) {
    /** @type {Record<string, any>} */
    let out = { ...config }
    const http = out.type === 'http' || out.type === 'sse'
    const credential = opts?.oauth === false ? undefined : await this._credentialFor(config, opts)
    if (credential) {
      if (http) {
        const headers = { ...out.headers }
        setGeneratedHeader(headers, 'Authorization', `Bearer ${credential.access}`)
        out = { ...out, headers }
      } else {
        out = { ...out, env: { ...out.env, OAUTH_ACCESS_TOKEN: credential.access } }
      }
    }
    const resolve = typeof hooks.resolveConfigValue === 'function' ? hooks.resolveConfigValue : this._resolveValue
    /** @param {string} key @param {unknown} value */
    const resolved = async (key, value) => {
      try {
        return await resolve(value)
      } catch (err) {
        this._logger.warn(`MCP config value "${key}" could not be resolved: ${messageOf(err)}`)
        return undefined
      }
    }
    if (!http && out.env && typeof out.env === 'object' && out.envPolicy !== 'literal') {
      // A null prototype: a `__proto__` key is a variable like any other.
      /** @type {Record<string, string>} */
      const env = Object.create(null)
      const literal = new Set(Array.isArray(out.envLiteralKeys) ? out.envLiteralKeys : [])
      for (const [key, value] of Object.entries(out.env)) {
        if (literal.has(key)) {
          env[key] = value
          continue
        }
        const v = await resolved(key, value)
        if (v) env[key] = v
      }
      out = { ...out, env }
    } else if (http && out.headers && typeof out.headers === 'object' && out.headerPolicy !== 'origin-locked') {
      /** @type {Record<string, string>} */
      const headers = {}
      for (const [key, value] of Object.entries(out.headers)) {
        const v = await resolved(key, value)
        if (v) headers[key] = v
      }
      out = { ...out, headers }
    }
    return /** @type {MCPServerConfig} */ (out)
  }

  /**
   * The OAuth credential to inject for `config`, or undefined (none, or a failure, logged).
   * @param {MCPServerConfig} config
   * @param {{ forceRefresh?: boolean } | undefined} opts
   * @returns {Promise<{ access: string } | undefined>}
   */
  async _credentialFor(config, opts) {
    const storage = this._authStorage
    if (!storage) return undefined
    const c = /** @type {Record<string, any>} */ (config)
    const lookup = hooks.lookupMcpOAuthCredential
    const refresh = hooks.refreshStoredManagedMcpOAuthCredential
    if (typeof lookup === 'function' && typeof refresh === 'function') {
      /** @type {{ credentialId: unknown, credential?: { access?: string } } | undefined} */
      let found
      try {
        found = lookup(storage, config)
      } catch (error) {
        this._logger.warn('Failed to resolve OAuth credential', { error })
        return undefined
      }
      if (!found) return undefined
      const credentialId = found.credentialId
      try {
        const result = await refresh(storage, credentialId, {
          serverUrl: c.type === 'http' || c.type === 'sse' ? c.url : undefined,
          auth: c.auth,
          forceRefresh: opts?.forceRefresh,
          keepCredentialOnRefreshFailure: true,
          onRefreshFailure: (/** @type {unknown} */ error) =>
            this._logger.warn('MCP OAuth refresh failed, using existing token', { credentialId, error }),
        })
        if (result?.removed) this._logger.warn('MCP OAuth refresh failed definitively; cleared credential', { credentialId })
        const access = result?.credential?.access
        return typeof access === 'string' && access !== '' ? { access } : undefined
      } catch (error) {
        this._logger.warn('Failed to resolve OAuth credential', { credentialId, error })
        return undefined
      }
    }
    // The package's own: the stored credential named by `auth.credentialId` (SPEC 6.3).
    const auth = c.auth
    if (auth?.type !== 'oauth' || !auth.credentialId) return undefined
    try {
      const credential = /** @type {{ type?: string, access?: unknown } | null | undefined} */ (await storage.get(auth.credentialId))
      const access = credential?.type === 'oauth' ? credential.access : undefined
      return typeof access === 'string' && access !== '' ? { access } : undefined
    } catch (err) {
      this._logger.warn('MCP auth storage lookup failed', { credentialId: auth.credentialId, error: messageOf(err) })
      return undefined
    }
  }

  /**
   * 18.3.4: the transport of an http/sse server whose credential the agent manages (the injected
   * `lookupMcpOAuthCredential` finds one in the auth storage) gets an `onAuthError` that refreshes
   * it: a request refused with 401/403 is sent once more with the headers of `prepareConfig(config,
   * { forceRefresh: true })`. Set at every (re)connect, as the agent sets it on each new
   * connection; removed (when it is this manager's) once the credential is no longer managed.
   * The package's own credential (`auth.credentialId` read from the auth storage without the
   * agent's hooks, SPEC 6.3) is not wired: it is never refreshed (SPEC 10.3), so asking again
   * would read the token just refused and only double each refusal.
   * @param {string} name
   * @param {MCPServerConnection} connection
   */
  _wireAuthRefresh(name, connection) {
    const transport = /** @type {any} */ (connection.transport)
    if (!transport || typeof transport !== 'object' || !('onAuthError' in transport)) return
    const config = this._configs.get(name)
    if (config && this._managesCredential(config)) {
      const refresh = async () => {
        const refreshed = await this.prepareConfig(config, { forceRefresh: true })
        return refreshed.type === 'http' || refreshed.type === 'sse' ? (refreshed.headers ?? null) : null
      }
      AUTH_REFRESHERS.add(refresh)
      transport.onAuthError = refresh
    } else if (AUTH_REFRESHERS.has(transport.onAuthError)) {
      transport.onAuthError = undefined
    }
  }

  /**
   * Whether the agent manages `config`'s credential: an http/sse server, an auth storage, both
   * injected credential hooks, and a credential the lookup finds (its failure: logged, no).
   * @param {MCPServerConfig} config
   */
  _managesCredential(config) {
    const storage = this._authStorage
    const lookup = hooks.lookupMcpOAuthCredential
    if ((config.type !== 'http' && config.type !== 'sse') || !storage) return false
    if (typeof lookup !== 'function' || typeof hooks.refreshStoredManagedMcpOAuthCredential !== 'function') return false
    try {
      return Boolean(lookup(storage, config))
    } catch (error) {
      this._logger.warn('Failed to resolve OAuth credential', { error })
      return false
    }
  }

  /**
   * The deadline as the agent resolves it: `OMP_MCP_TIMEOUT_MS`, else the config's, else 30 s;
   * 0 = none.
   * @param {MCPServerConfig} config
   */
  _connectConfig(config) {
    // A GET stream that is lost closes the connection, so that the reconnect policy notices a
    // server that went away while idle (18.3.4 reconnects on the stream's end; 18.2.1).
    return config ? /** @type {MCPServerConfig} */ ({ ...withDeadline(config), closeOnStreamLoss: true }) : config
  }

  /**
   * A server's client: without an `onRequest` option, `ping` and `roots/list` (the manager's
   * `cwd`) are answered as the agent answers them; anything else is refused (-32601).
   * @param {string} name
   * @param {number} tag
   */
  _startFace(name, tag) {
    super._startFace(name, tag)
    const face = this._faces.get(tag)
    if (face) {
      // The manager's handling of the server's notifications, then the [beyond] option's.
      face.onNotification = (/** @type {string} */ method, /** @type {unknown} */ params) => {
        void this._serverNotification(name, method, params)
        if (typeof this.onNotification === 'function') this._guard(() => this.onNotification?.(name, method, params))
      }
    }
    if (face && !this._onRequest) {
      face.onRequest = async (/** @type {string} */ method) => {
        if (method === 'ping') return {}
        if (method === 'roots/list') return { roots: [{ uri: nodeUrl.pathToFileURL(this.cwd).href, name: nodePath.basename(this.cwd) }] }
        throw Object.assign(new Error(`Unsupported server request: ${method}`), { code: -32601 })
      }
    }
  }

  /**
   * @param {string} name
   * @returns {(options?: { authChallenge?: MCPAuthChallenge }) => Promise<MCPServerConnection | null>}
   */
  _reconnectFor(name) {
    return (options) => this.reconnectServer(name, options)
  }

  /**
   * Connects server `name` again: shares a reconnect in flight; `manual` (the user asked) starts
   * the crash-storm breaker's window over; `authChallenge` goes to the auth handler first, whose
   * config is used from then on. The new connection, or `null`.
   * @param {string} name
   * @param {{ manual?: boolean, authChallenge?: MCPAuthChallenge }} [options]
   * @returns {Promise<MCPServerConnection | null>}
   */
  async reconnectServer(name, options) {
    if (options?.authChallenge) {
      const handler = this._authHandler
      if (!handler) {
        this._logger.error('MCP auth challenge cannot be handled; no auth handler is configured', { path: `mcp:${name}` })
        return null
      }
      try {
        const config = await handler(name, options.authChallenge)
        if (!config) return null
        this._configs.set(name, config)
      } catch (err) {
        this._logger.error('MCP auth challenge handling failed', { path: `mcp:${name}`, error: messageOf(err) })
        return null
      }
    }
    const ok = await this._settle(this._native.reconnect(name, options?.manual === true))
    return ok ? (this._connections.get(name) ?? null) : null
  }

  /**
   * Waits until no server is starting or reconnecting, or `timeoutMs` passed (0: no deadline),
   * then tells how the servers given to `connectServers` stand.
   * @param {number} timeoutMs
   * @returns {Promise<MCPStartupStatus>}
   */
  async waitForStartup(timeoutMs) {
    const ms = Number(timeoutMs)
    /** @type {{ connected: string[], pending: string[], failed: Array<[string, string]> }} */
    const status = JSON.parse(await this._settle(this._native.waitForStartup(ms > 0 ? ms : undefined)))
    return {
      connected: status.connected,
      pending: status.pending,
      failed: status.failed.map(([name, error]) => ({ name, error: agentConnectFailureText(error, this.getServerConfig(name)) })),
    }
  }

  /** Waits until no server is starting or reconnecting. */
  async waitForPendingConnections() {
    await this._settle(this._native.waitForPending())
  }

  /**
   * The config server `name` was given (before resolution), connected or not.
   * @param {string} name
   * @returns {MCPServerConfig | undefined}
   */
  getServerConfig(name) {
    return this._connections.get(name)?.config ?? this._configs.get(name)
  }

  /**
   * A server's connection as the base registers it; its transport's requests and notifications
   * fail with the agent's errors (lib/root-errors.js).
   * @param {string} name
   * @param {number} generation
   * @param {any[]} tools
   */
  _register(name, generation, tools) {
    super._register(name, generation, tools)
    mapTransportErrors(this._connections.get(name)?.transport, this.getServerConfig(name))
  }

  async disconnectAll() {
    await super.disconnectAll()
    this._calls.clear()
    this._subscribed.clear()
    this._resourceRefresh.clear()
    this._catalogsOf.clear()
  }

  /** @param {string} name */
  async disconnectServer(name) {
    const connection = this._connections.get(name)
    const uris = this._subscribed.get(name)
    if (connection && uris && uris.size > 0) client.unsubscribeFromResources(connection, [...uris]).catch(() => {})
    this._subscribed.delete(name)
    this._resourceRefresh.delete(name)
    this._catalogsOf.delete(name)
    const hadPrompts = Boolean(connection?.prompts?.length)
    await super.disconnectServer(name)
    const handler = this._onPromptsChanged
    if (hadPrompts && handler) this._guard(() => handler(name))
  }
}

/**
 * `{ manager, result }`: a manager without tool cache, after discovery.
 * @template [TTool=Tool]
 * @param {string} cwd
 * @param {MCPCurrentDiscoverOptions & MCPManagerOptions<TTool>} [options]
 */
async function createMCPManager(cwd, options) {
  /** @type {MCPManager<TTool>} */
  const manager = new MCPManager(cwd, null, options ?? {})
  const result = await manager.discoverAndConnect(options)
  return { manager, result }
}

const { createMCPToolName } = toolBridge
const { formatToolResult, loadConfigs, resolveConfigValue } = base
const defaultToolFactory = currentToolFactory(undefined)

// Shorthand only: Node's ESM import finds a CommonJS module's names by reading this statement.
module.exports = {
  MCPManager,
  createMCPManager,
  sortMCPToolsByName,
  resolveSubscriptionPostAction,
  createMCPToolName,
  formatToolResult,
  loadConfigs,
  resolveConfigValue,
  defaultToolFactory,
}

/**
 * Type check only (no code): this module's exports match the declarations users see (manager.d.ts).
 * @template {typeof import('./entries/manager.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
