'use strict'
// mcp-native/client (SPEC 5): the face of the Rust client (src/client/). Rust owns the protocol
// state — handshake, version negotiation, paging, session re-initialization, reconnect, the
// answers to the server's requests, the GET stream. This file keeps what must be JavaScript:
// promises and AbortSignals, the callbacks, the `MCPServerConnection` object (whose `tools`
// array is the tool cache by identity), requests waiting out a reconnect — and a transport face
// whose requests go straight to the client's connection (one crossing per call).

const root = require('./core.js')
const native = require('../native/index.js')
const { nativeOAuth } = require('./oauth-client.js')

// The kinds of the events from Rust (src/sink.rs `EventKind`).
const K = native.EventKind

/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('../index.js').MCPStdioServerConfig} MCPStdioServerConfig */
/** @typedef {import('../index.js').MCPServerConnection} MCPServerConnection */
/** @typedef {import('../index.js').MCPServerCapabilities} MCPServerCapabilities */
/** @typedef {import('../index.js').MCPInitializeResult} MCPInitializeResult */
/** @typedef {import('../index.js').MCPHandshakeOptions} MCPHandshakeOptions */
/** @typedef {import('../index.js').MCPClientOptions} MCPClientOptions */
/** @typedef {import('../index.js').MCPConnectOptions} MCPConnectOptions */
/** @typedef {import('../index.js').MCPReconnectOptions} MCPReconnectOptions */
/** @typedef {import('../index.js').MCPRequestOptions} MCPRequestOptions */
/** @typedef {import('../index.js').MCPRequestHandler} MCPRequestHandler */
/** @typedef {import('../index.js').MCPToolDefinition} MCPToolDefinition */
/** @typedef {import('../index.js').MCPToolCallResult} MCPToolCallResult */
/** @typedef {import('./core.js').StdioTransport | import('./core.js').HttpTransport} Transport */
/** @typedef {Required<MCPHandshakeOptions>} Handshake the handshake options with their defaults */
/** @typedef {{ transport: Transport, init: MCPInitializeResult }} Session */
/** @typedef {Required<MCPReconnectOptions>} ReconnectPolicy */
/** @typedef {'idle' | 'connecting' | 'connected' | 'reconnecting' | 'closed'} ClientState */
/** @typedef {import('../index.js').MCPClient} DeclaredClient the declaration this class implements */

/** Protocol revisions this client speaks (SPEC 5.1), as the core defines them. */
const SUPPORTED_PROTOCOL_VERSIONS = native.supportedProtocolVersions()
const DEFAULT_PROTOCOL_VERSION = native.DEFAULT_PROTOCOL_VERSION
const DEFAULT_CAPABILITIES = { roots: { listChanged: false } }
const DEFAULT_CLIENT_INFO = { name: 'omp-coding-agent', version: '1.0.0' }
/** `listTools` and the list helpers stop after this many pages (SPEC 5.1). */
const MAX_PAGES = native.MAX_PAGES
/** Defaults of the `reconnect` option (`true` means all of them). */
const RECONNECT_DEFAULTS = { maxAttempts: 5, initialDelayMs: 500, maxDelayMs: 30000 }

const { makeError, notConnected, transportClosed, methodNotFound, timeoutOf, callGuarded } = root

/**
 * SPEC 5.1: a transport for `config` by its type.
 * @param {MCPServerConfig} config
 * @returns {Promise<Transport>}
 */
async function createTransport(config) {
  const type = config?.type ?? 'stdio'
  // The casts: `type` (a missing one means stdio) says which config this is.
  if (type === 'stdio') return root.createStdioTransport(/** @type {MCPStdioServerConfig} */ (config))
  if (type === 'http' || type === 'sse') return root.createHttpTransport(/** @type {import('./core.js').MCPHttpConfig} */ (config))
  throw new Error(`Unknown server type: ${type}`)
}

/**
 * The options `NativeClient` reads (src/client.rs), as JSON text.
 * @param {MCPClientOptions | undefined} options
 * @param {boolean} forwardRequests
 * @param {any} [oauth] the NativeOAuth of `options.oauth` (oauth-client.js)
 */
function nativeOptions(options, forwardRequests, oauth) {
  const o = options || {}
  const r = o.reconnect === true ? {} : o.reconnect || null
  return JSON.stringify({
    oauthId: oauth ? oauth.id : undefined,
    protocolVersion: o.protocolVersion ?? DEFAULT_PROTOCOL_VERSION,
    capabilities: o.capabilities ?? DEFAULT_CAPABILITIES,
    clientInfo: o.clientInfo ?? DEFAULT_CLIENT_INFO,
    reconnect: r && {
      maxAttempts: Number(r.maxAttempts ?? RECONNECT_DEFAULTS.maxAttempts),
      initialDelayMs: Number(r.initialDelayMs ?? RECONNECT_DEFAULTS.initialDelayMs),
      maxDelayMs: Number(r.maxDelayMs ?? RECONNECT_DEFAULTS.maxDelayMs),
    },
    forwardRequests,
  })
}

// Connections made by a client (MCPClient or connectToServer) → that client, so that the function
// API gets the client's behaviour (session re-initialization, waiting out a reconnect).
/** @type {WeakMap<MCPServerConnection, MCPClient>} */
const owners = new WeakMap()

/**
 * @template [T=unknown]
 * @param {MCPServerConnection} connection
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<T>}
 */
function rpc(connection, method, params, options) {
  const client = owners.get(connection)
  return client ? client.request(method, params, options) : connection.transport.request(method, params, options)
}

/**
 * Pages through a list method (tools/list, resources/list, …): all items of `key`, at most
 * MAX_PAGES pages. Every connection the package makes (connectToServer, MCPClient, each server
 * of MCPManager) pages in Rust (one crossing for the whole list). The loop below is only for a
 * connection a caller built around a transport object of their own: each page is a call of it.
 * @template T what the server's items are said to be (they are not checked)
 * @param {MCPServerConnection} connection
 * @param {string} method
 * @param {string} key
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<T[]>}
 */
async function listAll(connection, method, key, options) {
  const client = owners.get(connection)
  if (client) return client._listAll(method, key, options)
  /** @type {T[]} */
  const items = []
  /** @type {unknown} */
  let cursor
  for (let page = 0; page < MAX_PAGES; page++) {
    /** @type {Record<string, unknown> | null | undefined} a page as the server sent it */
    const result = await rpc(connection, method, cursor ? { cursor } : {}, options)
    const got = result?.[key]
    if (Array.isArray(got)) for (const item of got) items.push(item)
    cursor = result?.nextCursor
    if (!cursor) break
  }
  return items
}

/**
 * SPEC 5.1 `listTools`.
 * @param {MCPServerConnection} connection
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<MCPToolDefinition[]>}
 */
async function listTools(connection, options) {
  if (!connection.capabilities?.tools) return []
  if (connection.tools) return connection.tools
  /** @type {MCPToolDefinition[]} */
  const tools = await listAll(connection, 'tools/list', 'tools', options)
  connection.tools = tools
  return tools
}

/**
 * SPEC 5.1 `callTool`: the raw result (`isError: true` is not thrown).
 * @param {MCPServerConnection} connection
 * @param {string} toolName
 * @param {Record<string, unknown>} [args]
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<MCPToolCallResult>}
 */
function callTool(connection, toolName, args = {}, options) {
  return rpc(connection, 'tools/call', { name: toolName, arguments: args }, options)
}

/**
 * SPEC 5.1 `disconnectServer`.
 * @param {MCPServerConnection} connection
 */
async function disconnectServer(connection) {
  const client = owners.get(connection)
  if (client) await client.close()
  else await connection.transport.close()
}

/**
 * SPEC 5.1 `serverSupportsTools`.
 * @param {MCPServerCapabilities} capabilities
 */
function serverSupportsTools(capabilities) {
  return capabilities.tools !== undefined
}

/**
 * SPEC 5.1 `connectToServer`: `{ name, config, transport, serverInfo, capabilities }`.
 * @param {string} name
 * @param {MCPServerConfig} config
 * @param {MCPConnectOptions} [options]
 * @returns {Promise<MCPServerConnection>}
 */
async function connectToServer(name, config, options) {
  const client = new MCPClient(name, config, options)
  return client.connect({ signal: options?.signal })
}

/**
 * A client's transport face: a `StdioTransport` / `HttpTransport` whose native is the client's
 * `NativeClient`, so that its requests go straight to the client's current connection (one
 * crossing per call). It stays the same object across reconnects; opening and closing are the
 * client's.
 * @param {MCPClient} client
 * @param {MCPServerConfig} config
 * @param {string} optionsJson
 * @param {any} [managed] a manager's handle on its server's Rust client
 * @returns {Transport}
 */
function makeFace(client, config, optionsJson, managed) {
  const type = config?.type ?? 'stdio'
  // A manager's server: its NativeClient is the manager's handle, whose events come through the
  // manager (tagged), not through a callback of its own.
  const makeNative = managed ? () => managed : nativeMaker(client.name, optionsJson, new WeakRef(client))
  const face =
    type === 'http' || type === 'sse'
      ? new ClientHttpTransport(/** @type {any} */ (config), makeNative)
      : new ClientStdioTransport(/** @type {MCPStdioServerConfig} */ (config), makeNative)
  face._client = client
  return face
}

/**
 * Makes the NativeClient. Its callbacks live as long as it does, so they hold nothing of the
 * client but a weak reference (a forgotten client is collected, and its connection ends).
 * @param {string} name
 * @param {string} optionsJson
 * @param {WeakRef<MCPClient>} weak
 */
function nativeMaker(name, optionsJson, weak) {
  /** @param {(batch: import('./core.js').Batch) => void} onEvents */
  return (onEvents) =>
    new native.NativeClient(name, optionsJson, onEvents, () => {
      // The config as it is now (a reconnect may come after its owner changed it).
      const c = weak.deref()
      try {
        return c ? root.nativeConfig(c.config) : 'null'
      } catch {
        return 'null'
      }
    })
}

/**
 * Where the loopback authorizer's URL goes without `openUrl`: the client's `onWarning`, else a
 * process warning. The client is held weakly (the native side keeps this alive as long as the
 * client's OAuth config lives).
 * @param {WeakRef<MCPClient>} weak
 */
function warnTo(weak) {
  return {
    warn: (/** @type {string} */ message) => {
      const c = weak.deref()
      if (c && typeof c.onWarning === 'function') callGuarded(c, c.onWarning, message)
      else process.emitWarning(message)
    },
  }
}

/** A client's face over stdio: opening and closing are the client's. */
class ClientStdioTransport extends root.StdioTransport {
  async connect() {
    await /** @type {MCPClient} */ (/** @type {any} */ (this)._client).connect()
  }
  async close() {
    await /** @type {MCPClient} */ (/** @type {any} */ (this)._client).close()
  }
}

/** A client's face over HTTP: opening and closing are the client's. */
class ClientHttpTransport extends root.HttpTransport {
  async connect() {
    await /** @type {MCPClient} */ (/** @type {any} */ (this)._client).connect()
  }
  async close() {
    await /** @type {MCPClient} */ (/** @type {any} */ (this)._client).close()
  }
  /**
   * @param {number} id @param {string} method @param {string} body @param {number} timeout
   * @returns {string | null | undefined}
   */
  _notifyNative(id, method, body, timeout) {
    // The NativeClient names the HTTP notification `notifyAs` (its `notify` is the stdio one).
    return /** @type {any} */ (this._native).notifyAs(id, method, body, timeout)
  }
}

/**
 * One server, one object (SPEC 5.2), over the Rust client (`NativeClient`), which owns the
 * connection's protocol state: the handshake, version negotiation, reconnect, session
 * re-initialization, the answers to the server's requests and the GET stream. This object keeps
 * what must be JavaScript: promises and AbortSignals, the callbacks, the `connection` object
 * (whose `tools` array is the tool cache by identity) and requests waiting out a reconnect.
 * @implements {DeclaredClient}
 */
class MCPClient {
  /**
   * @param {string} name
   * @param {MCPServerConfig} config
   * @param {MCPClientOptions & { signal?: AbortSignal }} [options]
   */
  static async connect(name, config, options) {
    const client = new MCPClient(name, config, options)
    await client.connect(options)
    return client
  }

  /**
   * @param {string} name
   * @param {MCPServerConfig} config
   * @param {MCPClientOptions} [options]
   * @param {any} [managed] internal: a manager's handle on its server's Rust client
   */
  constructor(name, config, options, managed) {
    this.name = name
    this.config = config
    /** @type {((method: string, params: unknown) => void) | undefined} */
    this.onNotification = undefined
    /** @type {(() => void) | undefined} */
    this.onClose = undefined
    /** @type {((error: Error) => void) | undefined} */
    this.onError = undefined
    /** @type {((message: string) => void) | undefined} */
    this.onWarning = undefined
    /**
     * [beyond] `(status, error?)` on every change: "connecting" | "connected" | "disconnected".
     * @type {((status: 'connecting' | 'connected' | 'disconnected', error?: Error) => void) | undefined}
     */
    this.onStatus = undefined
    /** @type {((chunk: string) => void) | undefined} */
    this._onStderr = undefined
    /** @type {MCPRequestHandler | undefined} */
    this._onRequest = undefined
    /** @type {ClientState} mirrors the Rust client's state (its status events) */
    this._state = 'idle'
    /** @type {MCPServerConnection | null} made by the first connect, then kept across reconnects */
    this._connection = null
    /** @type {MCPInitializeResult | null} */
    this._init = null
    /** @type {Promise<MCPServerConnection> | null} */
    this._connecting = null
    /** @type {Set<{ resolve(transport: Transport): void, reject(err: unknown): void }>} */
    this._waiters = new Set()
    /** @type {import("./core.js").SignalWatch<{ reject(err: unknown): void }>} requests waiting for a connection: one abort listener per signal */
    this._waitSignals = new root.SignalWatch((signal, waiters) => {
      for (const w of waiters) w.reject(signal.reason)
    })
    /** @type {unknown} the reason of the last connect aborted by its caller's signal */
    this._abortReason = undefined
    this._generation = 0
    this._reconnectHold = false
    /** Whether a connection was up since the last close (onClose fires only then). */
    this._wasConnected = false
    this._tokens = 0
    this._capabilities = options?.capabilities ?? DEFAULT_CAPABILITIES
    /** @type {Transport} */
    /** @type {any} the NativeOAuth of `options.oauth`, kept while the client lives */
    this._oauth = managed ? null : nativeOAuth(options?.oauth, { logger: warnTo(new WeakRef(this)) })
    this._face = makeFace(this, config, nativeOptions(options, false, this._oauth), managed)
    this._wire(this._face)
  }

  /** @returns {any} the Rust client */
  get _native() {
    return this._face._native
  }

  get connected() {
    return this._state === 'connected' && this._face.connected
  }
  get transport() {
    return this._connection ? this._face : undefined
  }
  get connection() {
    return this._connection ?? undefined
  }
  get serverInfo() {
    return this._init ? this._init.serverInfo : undefined
  }
  get capabilities() {
    return this._connection ? this._connection.capabilities : undefined
  }
  get instructions() {
    return this._init ? this._init.instructions : undefined
  }
  get protocolVersion() {
    return this._init ? this._init.protocolVersion : undefined
  }
  /** [beyond] "idle" | "connecting" | "connected" | "reconnecting" | "closed". */
  get state() {
    return this._state
  }

  get onStderr() {
    return this._onStderr
  }
  /** @param {((chunk: string) => void) | undefined} fn */
  set onStderr(fn) {
    this._onStderr = fn
    this._wireStderr(this._face)
  }
  get onRequest() {
    return this._onRequest
  }
  /** @param {MCPRequestHandler | undefined} fn */
  set onRequest(fn) {
    this._onRequest = fn
    this._face.onRequest = typeof fn === 'function' ? (method, params) => this._answer(method, params) : undefined
  }

  /**
   * Connects (no-op while connected; shares a connect in progress). Resolves with `connection`.
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<MCPServerConnection>}
   */
  connect(options) {
    // Connected: the connection is there.
    if (this._state === 'connected') return Promise.resolve(/** @type {MCPServerConnection} */ (this._connection))
    // A second caller shares the attempt in progress; if that attempt is aborted by the first
    // caller's signal, the second hears a transport error (the reason as its cause), not an
    // abort it never asked for.
    if (this._connecting) return this._connecting.catch((err) => Promise.reject(this._notOurAbort(err)))
    const signal = options?.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    const type = this.config?.type ?? 'stdio'
    if (type !== 'stdio' && type !== 'http' && type !== 'sse') return Promise.reject(new Error(`Unknown server type: ${type}`))
    /** @type {string} */
    let config
    try {
      config = root.nativeConfig(this.config)
    } catch (err) {
      return Promise.reject(err)
    }
    root.installExitHook()
    const face = this._face
    face._hold() // the event loop stays up while connecting
    const attempt = new Promise((resolve, reject) => {
      let settled = false
      const onAbort = () => {
        if (settled) return
        settled = true
        this._abortReason = /** @type {AbortSignal} */ (signal).reason
        this._failWaiters(this._notOurAbort(this._abortReason))
        // SPEC 5.1: the attempt is cancelled and its transport closed before the caller hears.
        this._native.close().then(
          () => reject(/** @type {AbortSignal} */ (signal).reason),
          () => reject(/** @type {AbortSignal} */ (signal).reason),
        )
      }
      if (signal) signal.addEventListener('abort', onAbort, { once: true })
      this._native.connect(config).then(
        (/** @type {string} */ text) => {
          if (signal) signal.removeEventListener('abort', onAbort)
          if (settled) return
          settled = true
          const { generation, init } = JSON.parse(text)
          this._adopt(init)
          // The client's own events may come after this promise settles: act on them now (they
          // are idempotent when they arrive).
          this._onClientEvent([K.ClientConnected, generation, init])
          this._onClientEvent([K.ClientStatus, 'connected', null])
          resolve(/** @type {MCPServerConnection} */ (this._connection))
        },
        (/** @type {unknown} */ err) => {
          if (signal) signal.removeEventListener('abort', onAbort)
          if (settled) return
          settled = true
          this._failWaiters(err)
          reject(err)
        },
      )
    }).finally(() => {
      this._connecting = null
      if (this._state === 'connecting') this._state = 'idle' // (the Rust status may say more)
      face._release()
    })
    this._connecting = attempt
    // Requests made from now on wait for this attempt (the Rust status event comes later).
    if (this._state === 'idle' || this._state === 'closed') this._state = 'connecting'
    return attempt
  }

  /**
   * What someone other than the aborting caller hears when a connect was aborted:
   * `Transport not connected` (MCP_NOT_CONNECTED) with the abort reason as `cause`.
   * @param {unknown} err
   */
  _notOurAbort(err) {
    if (err === undefined || err !== this._abortReason) return err
    const wrapped = notConnected()
    Object.defineProperty(wrapped, 'cause', { value: err, configurable: true, writable: true })
    return wrapped
  }

  /** Closes the connection and stops any reconnect; `onClose` once if it was open. */
  async close() {
    this._failWaiters(transportClosed())
    const was = this._state
    await this._native.close()
    // As on connect: the client's own status event may come later; it is a no-op then.
    if (was !== 'idle' && was !== 'closed') this._onClientEvent([K.ClientStatus, 'closed', null])
    this._state = 'closed'
  }

  /**
   * A request on the current connection; waits out a (re)connect. (An expired session is
   * re-opened by the Rust client, and the request sent once more.)
   * @template [T=unknown]
   * @param {string} method
   * @param {Record<string, unknown>} [params]
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<T>}
   */
  request(method, params, options) {
    // Not an async function: on the hot path its extra promise cost ~2 µs a call on Bun
    // (measured, 64 echo calls in flight: ~128k → ~160k calls/s).
    if (this._state === 'connected') {
      try {
        return this._face.request(method, params, options)
      } catch (e) {
        return Promise.reject(e)
      }
    }
    return this._whenConnected(options).then(() => this._face.request(method, params, options))
  }

  /**
   * @param {string} method
   * @param {Record<string, unknown>} [params]
   * @returns {Promise<void>}
   */
  async notify(method, params) {
    if (this._state !== 'connected') await this._whenConnected()
    return this._face.notify(method, params)
  }

  async ping() {
    await this.request('ping')
  }

  /** @param {MCPRequestOptions} [options] */
  async listTools(options) {
    return listTools(await this._connectionFor(options), options)
  }

  /**
   * The connection object, once the first connect in progress (if any) is done; like `request`,
   * a list made in the same tick as `connect()` waits for it.
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<MCPServerConnection>}
   */
  async _connectionFor(options) {
    if (!this._connection && this._connecting) await this._whenConnected(options)
    if (!this._connection) throw notConnected()
    return this._connection
  }

  /**
   * Drops the tool cache and lists again.
   * @param {MCPRequestOptions} [options]
   */
  refreshTools(options) {
    if (this._connection) delete this._connection.tools
    return this.listTools(options)
  }

  /**
   * @param {string} name
   * @param {Record<string, unknown>} [args]
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<MCPToolCallResult>}
   */
  callTool(name, args = {}, options) {
    return this.request('tools/call', { name, arguments: args }, options)
  }

  /**
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<Array<{ uri: string, name?: string, mimeType?: string, [key: string]: unknown }>>}
   */
  async listResources(options) {
    return listAll(await this._connectionFor(options), 'resources/list', 'resources', options)
  }

  /**
   * @param {string} uri
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<{ contents: Array<{ uri: string, mimeType?: string, text?: string, blob?: string }> }>}
   */
  readResource(uri, options) {
    return this.request('resources/read', { uri }, options)
  }

  /**
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<Array<{ name: string, description?: string, arguments?: unknown[], [key: string]: unknown }>>}
   */
  async listPrompts(options) {
    return listAll(await this._connectionFor(options), 'prompts/list', 'prompts', options)
  }

  /**
   * @param {string} name
   * @param {Record<string, string>} [args]
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<{ description?: string, messages: unknown[] }>}
   */
  getPrompt(name, args, options) {
    const params = args === undefined ? { name } : { name, arguments: args }
    return this.request('prompts/get', params, options)
  }

  // --- internals ---------------------------------------------------------------------------

  /**
   * Every item of a paged list, paged by the Rust client; abandoned (and stopped in Rust) when
   * the signal aborts.
   * @param {string} method
   * @param {string} key
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<any[]>}
   */
  _listAll(method, key, options) {
    const signal = options?.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    const token = ++this._tokens
    const face = this._face
    face._hold()
    /** @type {Promise<any[]>} */
    const listed = this._native.listAll(method, key, token).then((/** @type {string} */ text) => JSON.parse(text))
    if (!signal) return listed.finally(() => face._release())
    /** @type {() => void} */
    let onAbort = () => {}
    /** @type {Promise<never>} */
    const aborted = new Promise((_, reject) => {
      onAbort = () => {
        this._native.cancelTask(token)
        reject(signal.reason)
      }
    })
    signal.addEventListener('abort', onAbort, { once: true })
    // The listener goes when the list settles, either way (a turn-wide signal outlives many calls).
    return Promise.race([listed, aborted]).finally(() => {
      signal.removeEventListener('abort', onAbort)
      face._release()
    })
  }

  /** @param {Transport} transport */
  _wire(transport) {
    transport.onNotification = (method, params) => {
      if (method === 'notifications/tools/list_changed' && this._connection) delete this._connection.tools
      callGuarded(this, this.onNotification, method, params)
    }
    transport.onError = (err) => callGuarded(this, this.onError, err)
    this._wireStderr(transport)
  }

  /** @param {Transport} transport */
  _wireStderr(transport) {
    if (!(transport instanceof root.StdioTransport)) return
    transport.onStderr = typeof this._onStderr === 'function' ? (chunk) => callGuarded(this, this._onStderr, chunk) : undefined
  }

  /**
   * A server→client request, when an `onRequest` handler is set (otherwise the Rust client
   * answers: `roots/list` with no roots when `roots` is declared, anything else `-32601`).
   * @param {string} method
   * @param {unknown} params
   */
  _answer(method, params) {
    if (typeof this._onRequest === 'function') return this._onRequest(method, params)
    if (method === 'roots/list' && this._capabilities?.roots) return { roots: [] }
    throw methodNotFound()
  }

  /**
   * The first connection's `initialize` result: the connection object.
   * @param {MCPInitializeResult} init
   */
  _adopt(init) {
    if (!this._connection) {
      this._connection = {
        name: this.name,
        config: this.config,
        transport: this._face,
        serverInfo: init.serverInfo,
        capabilities: init.capabilities ?? {},
      }
      owners.set(this._connection, this)
    }
    this._setSession(init)
  }

  /**
   * Records an initialize result: on the client and on its connection.
   * @param {MCPInitializeResult} init
   */
  _setSession(init) {
    this._init = init
    if (!this._connection) return
    this._connection.serverInfo = init.serverInfo
    this._connection.capabilities = init.capabilities ?? {}
  }

  /**
   * The Rust client's own events (src/sink.rs `EventKind`: the client's kinds).
   * @param {any[]} ev
   */
  _onClientEvent(ev) {
    const face = this._face
    switch (ev[0]) {
      case K.ClientStatus: {
        const state = /** @type {ClientState} */ (ev[1])
        if (state === this._state && (state === 'connected' || state === 'closed')) break // seen already
        const error = ev[2] ? root.makeError(ev[2]) : undefined
        this._state = state
        if (state === 'reconnecting' && !this._reconnectHold) {
          this._reconnectHold = true
          face._hold()
        } else if (state !== 'reconnecting' && this._reconnectHold) {
          this._reconnectHold = false
          face._release()
        }
        const status = state === 'reconnecting' ? 'connecting' : state === 'closed' || state === 'idle' ? 'disconnected' : state
        if (state === 'closed') {
          this._failWaiters(error ?? transportClosed())
          // The face's onClose: once per connected period, whichever of this and the
          // transport's own close event comes first.
          if (face._connected) {
            face._connected = false
            face._emitClose()
          }
        }
        callGuarded(this, this.onStatus, status, error)
        if (state === 'closed' && this._wasConnected) {
          this._wasConnected = false
          callGuarded(this, this.onClose)
        }
        break
      }
      case K.ClientConnected: {
        const generation = ev[1]
        const init = ev[2]
        if (!this._connection) this._adopt(init) // a manager's server: no connect() promise here
        if (generation !== this._generation) {
          // A new process or session: its tools are listed again.
          this._generation = generation
          if (this._connection) delete this._connection.tools
        }
        face._connected = true
        this._wasConnected = true
        this._setSession(init)
        // Rust tells the status right after; told here first, so that onStatus hears `connected`
        // before a request that waited for the connection is sent (its answer may come on the
        // JS stdout reader, ahead of the status's batch). The status event is then seen already.
        if (this._state !== 'connected') this._onClientEvent([K.ClientStatus, 'connected', null])
        for (const w of [...this._waiters]) w.resolve(face)
        break
      }
      case K.ClientAttemptFailed:
        callGuarded(this, this.onError, root.makeError(ev[1]))
        break
      case K.ClientWarning:
        callGuarded(this, this.onWarning, String(ev[1]))
        break
      case K.ClientOpened:
        if (root.JS_READER && face instanceof root.StdioTransport) {
          const fd = this._native.takeStdoutFd(ev[1])
          if (typeof fd === 'number') root.attachReader(face, fd, ev[1])
        }
        break
    }
  }

  /**
   * Waits for the (re)connection in progress, bounded by the request's timeout and signal.
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<Transport>}
   */
  _whenConnected(options) {
    if (this._state !== 'connecting' && this._state !== 'reconnecting' && !this._connecting) return Promise.reject(notConnected())
    const signal = options?.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    const t = timeoutOf(options && options.timeout !== undefined ? options : this.config)
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (/** @type {Transport} */ transport) => {
          done()
          resolve(transport)
        },
        reject: (/** @type {unknown} */ err) => {
          done()
          reject(err)
        },
      }
      const timer = setTimeout(
        () => waiter.reject(makeError({ message: `Request timeout after ${t}ms`, code: 'MCP_TIMEOUT', timeout: t })),
        t,
      )
      const done = () => {
        clearTimeout(timer)
        this._waiters.delete(waiter)
        if (signal) this._waitSignals.delete(signal, waiter)
      }
      if (signal) this._waitSignals.add(signal, waiter)
      this._waiters.add(waiter)
    })
  }

  /** @param {unknown} err */
  _failWaiters(err) {
    for (const w of [...this._waiters]) w.reject(err)
  }
}

module.exports = {
  createTransport,
  connectToServer,
  rpc,
  listAll,
  listTools,
  callTool,
  disconnectServer,
  serverSupportsTools,
  MCPClient,
  SUPPORTED_PROTOCOL_VERSIONS,
  DEFAULT_CAPABILITIES,
}

/**
 * Type check only (no code): this module's exports match the declarations users see
 * (compat-12.7/client.d.ts: this is the 12.7 function API).
 * @template {typeof import('./entries/compat-12.7/client.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
