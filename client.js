'use strict'
// mcp-native/client (SPEC 5): the handshake, paging, tools/call, session re-initialization and
// reconnect, over the native transports. This layer stays in JavaScript on purpose: its contract
// is about JS objects (the mutable `MCPServerConnection` whose `tools` array is the cache, the
// assignable callbacks, AbortSignal), every byte of I/O already runs in Rust below it, and a
// call through it is one `transport.request` (no extra crossing of the JS/Rust boundary).

const root = require('./core.js')

/** @typedef {import('./index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('./index.js').MCPStdioServerConfig} MCPStdioServerConfig */
/** @typedef {import('./index.js').MCPServerConnection} MCPServerConnection */
/** @typedef {import('./index.js').MCPServerCapabilities} MCPServerCapabilities */
/** @typedef {import('./index.js').MCPInitializeResult} MCPInitializeResult */
/** @typedef {import('./index.js').MCPHandshakeOptions} MCPHandshakeOptions */
/** @typedef {import('./index.js').MCPClientOptions} MCPClientOptions */
/** @typedef {import('./index.js').MCPConnectOptions} MCPConnectOptions */
/** @typedef {import('./index.js').MCPReconnectOptions} MCPReconnectOptions */
/** @typedef {import('./index.js').MCPRequestOptions} MCPRequestOptions */
/** @typedef {import('./index.js').MCPRequestHandler} MCPRequestHandler */
/** @typedef {import('./index.js').MCPToolDefinition} MCPToolDefinition */
/** @typedef {import('./index.js').MCPToolCallResult} MCPToolCallResult */
/** @typedef {import('./core.js').StdioTransport | import('./core.js').HttpTransport} Transport */
/** @typedef {Required<MCPHandshakeOptions>} Handshake the handshake options with their defaults */
/** @typedef {{ transport: Transport, init: MCPInitializeResult }} Session */
/** @typedef {Required<MCPReconnectOptions>} ReconnectPolicy */
/** @typedef {'idle' | 'connecting' | 'connected' | 'reconnecting' | 'closed'} ClientState */
/** @typedef {import('./index.js').MCPClient} DeclaredClient the declaration this class implements */

/** Protocol revisions this client speaks (SPEC 5.1). */
const SUPPORTED_PROTOCOL_VERSIONS = ['2024-11-05', '2025-03-26', '2025-06-18', '2025-11-25']
const DEFAULT_PROTOCOL_VERSION = '2025-03-26'
const DEFAULT_CAPABILITIES = { roots: { listChanged: false } }
const DEFAULT_CLIENT_INFO = { name: 'omp-coding-agent', version: '1.0.0' }
/** `listTools` and the list helpers stop after this many pages (SPEC 5.1). */
const MAX_PAGES = 1000
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
 * @param {MCPHandshakeOptions | undefined} options
 * @returns {Handshake}
 */
function handshakeOptions(options) {
  const o = options || {}
  return {
    protocolVersion: o.protocolVersion ?? DEFAULT_PROTOCOL_VERSION,
    capabilities: o.capabilities ?? DEFAULT_CAPABILITIES,
    clientInfo: o.clientInfo ?? DEFAULT_CLIENT_INFO,
  }
}

/**
 * `initialize` + `notifications/initialized` with version negotiation; the initialize result.
 * @param {Transport} transport
 * @param {Handshake} hs
 * @param {MCPRequestOptions} requestOptions
 * @returns {Promise<MCPInitializeResult>}
 */
async function handshake(transport, hs, requestOptions) {
  /** @type {MCPInitializeResult | null | undefined} the server's answer, checked below */
  const init = await transport.request(
    'initialize',
    { protocolVersion: hs.protocolVersion, capabilities: hs.capabilities, clientInfo: hs.clientInfo },
    requestOptions,
  )
  const version = init?.protocolVersion
  if (version !== hs.protocolVersion && !(/** @type {readonly unknown[]} */ (SUPPORTED_PROTOCOL_VERSIONS).includes(version))) {
    throw makeError({ message: `Unsupported protocol version: ${version}`, code: 'MCP_UNSUPPORTED_PROTOCOL', protocolVersion: version })
  }
  await transport.notify('notifications/initialized')
  // Streamable HTTP: servers send requests and notifications that belong to no request (an
  // elicitation, list_changed) on the GET stream, as the official SDK client opens it. It does not
  // keep the event loop alive; a 405 ends it quietly; on the legacy protocol it is a no-op.
  if (transport instanceof root.HttpTransport) transport.startSSEListener({ keepAlive: false })
  // Not null: it has a protocol version this client speaks.
  return /** @type {MCPInitializeResult} */ (init)
}

/**
 * Creates a transport and runs the handshake within `config.timeout ?? 30000` ms. On failure,
 * timeout or abort, the transport is closed (awaited: when this rejects, nothing it started is
 * still running) and the error is rethrown. Resolves with `{ transport, init }`.
 * @param {string} name
 * @param {MCPServerConfig} config
 * @param {Handshake} hs
 * @param {AbortSignal | undefined} signal
 * @param {(transport: Transport) => void} prepare
 * @returns {Promise<Session>}
 */
function openSession(name, config, hs, signal, prepare) {
  if (signal?.aborted) return Promise.reject(signal.reason)
  const ms = timeoutOf(config)
  const inner = new AbortController()
  return new Promise((resolve, reject) => {
    let finished = false // the deadline and the abort listener are gone
    let gaveUp = false // timeout or abort: `reject` is called once the transport is closed
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer
    const cleanup = () => {
      finished = true
      clearTimeout(timer)
      if (signal) signal.removeEventListener('abort', onAbort)
    }
    const creating = createTransport(config)
    const giveUp = (/** @type {unknown} */ error) => {
      if (finished) return
      cleanup()
      gaveUp = true
      inner.abort(error)
      // Whether the transport is still starting or already talking: it is closed before the
      // caller hears of the failure, so nothing outlives the attempt.
      creating
        .then((t) => t.close())
        .catch(() => {})
        .then(() => reject(error))
    }
    // Registered only when there is a signal.
    const onAbort = () => giveUp(/** @type {AbortSignal} */ (signal).reason)
    timer = setTimeout(
      () => giveUp(makeError({ message: `Connection to MCP server "${name}" timed out after ${ms}ms`, code: 'MCP_TIMEOUT', timeout: ms })),
      ms,
    )
    if (signal) signal.addEventListener('abort', onAbort, { once: true })
    creating
      .then(async (t) => {
        if (gaveUp) return undefined
        if (prepare) prepare(t)
        try {
          // The connect deadline above bounds the handshake; the request's own timer is later.
          const init = await handshake(t, hs, { signal: inner.signal, timeout: ms + 1000 })
          return { transport: t, init }
        } catch (err) {
          if (!gaveUp) {
            cleanup()
            await t.close().catch(() => {})
          }
          throw err
        }
      })
      .then(
        (session) => {
          if (gaveUp || !session) return
          cleanup()
          resolve(session)
        },
        (err) => {
          if (gaveUp) return
          cleanup()
          reject(err)
        },
      )
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
 * Pages through a list method (tools/list, resources/list, …): all items of `key`, at most MAX_PAGES pages.
 * @template T what the server's items are said to be (they are not checked)
 * @param {MCPServerConnection} connection
 * @param {string} method
 * @param {string} key
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<T[]>}
 */
async function listAll(connection, method, key, options) {
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
 * @param {boolean | MCPReconnectOptions | undefined} option
 * @returns {ReconnectPolicy | null}
 */
function reconnectPolicy(option) {
  if (!option) return null
  const o = option === true ? {} : option
  return {
    maxAttempts: Math.max(1, Number(o.maxAttempts ?? RECONNECT_DEFAULTS.maxAttempts)),
    initialDelayMs: Math.max(0, Number(o.initialDelayMs ?? RECONNECT_DEFAULTS.initialDelayMs)),
    maxDelayMs: Math.max(0, Number(o.maxDelayMs ?? RECONNECT_DEFAULTS.maxDelayMs)),
  }
}

/**
 * One server, one object (SPEC 5.2). States: idle → connecting → connected → (reconnecting →
 * connected)* → closed; `connect()` after `close()` starts again.
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
   */
  constructor(name, config, options) {
    this.name = name
    this.config = config
    /** @type {((method: string, params: unknown) => void) | undefined} */
    this.onNotification = undefined
    /** @type {(() => void) | undefined} */
    this.onClose = undefined
    /** @type {((error: Error) => void) | undefined} */
    this.onError = undefined
    /**
     * [beyond] `(status, error?)` on every change: "connecting" | "connected" | "disconnected".
     * @type {((status: 'connecting' | 'connected' | 'disconnected', error?: Error) => void) | undefined}
     */
    this.onStatus = undefined
    /** @type {((chunk: string) => void) | undefined} */
    this._onStderr = undefined
    /** @type {MCPRequestHandler | undefined} */
    this._onRequest = undefined
    this._hs = handshakeOptions(options)
    this._policy = reconnectPolicy(options?.reconnect)
    /** @type {ClientState} */
    this._state = 'idle'
    /** @type {Transport | null} */
    this._transport = null
    /** @type {MCPServerConnection | null} set by the first `_adopt`, then kept across reconnects */
    this._connection = null
    /** @type {MCPInitializeResult | null} */
    this._init = null
    /** @type {Promise<MCPServerConnection> | null} */
    this._connecting = null
    /** @type {Set<{ resolve(transport: Transport): void, reject(err: unknown): void }>} */
    this._waiters = new Set()
    /** @type {Promise<void> | null} */
    this._reinit = null
    /** @type {ReturnType<typeof setTimeout> | null} */
    this._retryTimer = null
    this._epoch = 0
  }

  get connected() {
    return this._state === 'connected' && this._transport !== null && this._transport.connected
  }
  get transport() {
    return this._transport ?? undefined
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
    if (this._transport) this._wireStderr(this._transport)
  }
  get onRequest() {
    return this._onRequest
  }
  /** @param {MCPRequestHandler | undefined} fn */
  set onRequest(fn) {
    this._onRequest = fn
  }

  /**
   * Connects (no-op while connected; shares a connect in progress). Resolves with `connection`.
   * @param {{ signal?: AbortSignal }} [options]
   * @returns {Promise<MCPServerConnection>}
   */
  connect(options) {
    // Connected: `_adopt` has set the connection.
    if (this._state === 'connected') return Promise.resolve(/** @type {MCPServerConnection} */ (this._connection))
    if (this._connecting) return this._connecting
    this._setState('connecting')
    const epoch = ++this._epoch
    const attempt = this._open(options?.signal).then(
      ({ transport, init }) => {
        this._connecting = null
        if (epoch !== this._epoch) {
          // close() ran meanwhile.
          return transport.close().then(() => Promise.reject(transportClosed()))
        }
        this._adopt(transport, init)
        return /** @type {MCPServerConnection} */ (this._connection)
      },
      (err) => {
        this._connecting = null
        if (epoch === this._epoch) {
          this._state = 'closed'
          this._failWaiters(err)
          callGuarded(this, this.onStatus, 'disconnected', err)
        }
        throw err
      },
    )
    this._connecting = attempt
    return attempt
  }

  /** @param {AbortSignal | undefined} signal */
  _open(signal) {
    return openSession(this.name, this.config, this._hs, signal, (t) => this._wire(t))
  }

  /** Closes the connection and stops any reconnect; `onClose` once if it was open. */
  async close() {
    const was = this._state
    this._state = 'closed'
    this._epoch++
    this._connecting = null
    clearTimeout(this._retryTimer ?? undefined)
    this._retryTimer = null
    this._failWaiters(transportClosed())
    const t = this._transport
    if (t) await t.close()
    if (was !== 'closed' && was !== 'idle') {
      callGuarded(this, this.onStatus, 'disconnected')
      callGuarded(this, this.onClose)
    }
  }

  /**
   * A request on the current connection; waits out a (re)connect, retries once on session expiry.
   * @template [T=unknown]
   * @param {string} method
   * @param {Record<string, unknown>} [params]
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<T>}
   */
  async request(method, params, options) {
    // Connected: `_adopt` has set the transport.
    const transport = this._state === 'connected' ? /** @type {Transport} */ (this._transport) : await this._whenConnected(options)
    try {
      return await transport.request(method, params, options)
    } catch (err) {
      if (!this._sessionExpired(err, transport)) throw err
      await this._reinitialize(transport)
      return transport.request(method, params, options)
    }
  }

  /**
   * @param {string} method
   * @param {Record<string, unknown>} [params]
   * @returns {Promise<void>}
   */
  async notify(method, params) {
    const transport = this._state === 'connected' ? /** @type {Transport} */ (this._transport) : await this._whenConnected()
    try {
      return await transport.notify(method, params)
    } catch (err) {
      if (!this._sessionExpired(err, transport)) throw err
      await this._reinitialize(transport)
      return transport.notify(method, params)
    }
  }

  async ping() {
    await this.request('ping')
  }

  /** @param {MCPRequestOptions} [options] */
  listTools(options) {
    return this._connection ? listTools(this._connection, options) : Promise.reject(notConnected())
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
   * @returns {ReturnType<DeclaredClient['listResources']>}
   */
  listResources(options) {
    return this._connection ? listAll(this._connection, 'resources/list', 'resources', options) : Promise.reject(notConnected())
  }

  /**
   * @param {string} uri
   * @param {MCPRequestOptions} [options]
   * @returns {ReturnType<DeclaredClient['readResource']>}
   */
  readResource(uri, options) {
    return this.request('resources/read', { uri }, options)
  }

  /**
   * @param {MCPRequestOptions} [options]
   * @returns {ReturnType<DeclaredClient['listPrompts']>}
   */
  listPrompts(options) {
    return this._connection ? listAll(this._connection, 'prompts/list', 'prompts', options) : Promise.reject(notConnected())
  }

  /**
   * @param {string} name
   * @param {Record<string, string>} [args]
   * @param {MCPRequestOptions} [options]
   * @returns {ReturnType<DeclaredClient['getPrompt']>}
   */
  getPrompt(name, args, options) {
    const params = args === undefined ? { name } : { name, arguments: args }
    return this.request('prompts/get', params, options)
  }

  // --- internals ---------------------------------------------------------------------------

  /**
   * @param {ClientState} state
   * @param {unknown} [error]
   */
  _setState(state, error) {
    this._state = state
    const status = state === 'reconnecting' ? 'connecting' : state === 'closed' || state === 'idle' ? 'disconnected' : state
    callGuarded(this, this.onStatus, status, error)
  }

  /** @param {Transport} transport */
  _wire(transport) {
    transport.onNotification = (method, params) => {
      if (method === 'notifications/tools/list_changed' && this._connection && this._transport === transport) {
        delete this._connection.tools
      }
      callGuarded(this, this.onNotification, method, params)
    }
    transport.onError = (err) => callGuarded(this, this.onError, err)
    transport.onClose = () => this._onTransportClosed(transport)
    transport.onRequest = (method, params) => this._answer(method, params)
    this._wireStderr(transport)
  }

  /** @param {Transport} transport */
  _wireStderr(transport) {
    if (!(transport instanceof root.StdioTransport)) return
    transport.onStderr = typeof this._onStderr === 'function' ? (chunk) => callGuarded(this, this._onStderr, chunk) : undefined
  }

  /**
   * @param {string} method
   * @param {unknown} params
   */
  _answer(method, params) {
    if (typeof this._onRequest === 'function') return this._onRequest(method, params)
    // We declare `roots` by default: say there are none rather than refuse the request.
    if (method === 'roots/list' && this._hs.capabilities && this._hs.capabilities.roots) return { roots: [] }
    throw methodNotFound()
  }

  /**
   * @param {Transport} transport
   * @param {MCPInitializeResult} init
   */
  _adopt(transport, init) {
    this._transport = transport
    if (this._connection) {
      this._connection.transport = transport
      delete this._connection.tools // a new process or session: its tools are listed again
    } else {
      // serverInfo and capabilities are written again by `_setSession` below, as on every session.
      this._connection = {
        name: this.name,
        config: this.config,
        transport,
        serverInfo: init.serverInfo,
        capabilities: init.capabilities ?? {},
      }
      owners.set(this._connection, this)
    }
    this._setSession(init)
    this._setState('connected')
    for (const w of [...this._waiters]) w.resolve(transport)
  }

  /**
   * Records an initialize result: on the client and on its connection (which `_adopt` has made).
   * @param {MCPInitializeResult} init
   */
  _setSession(init) {
    this._init = init
    const connection = /** @type {MCPServerConnection} */ (this._connection)
    connection.serverInfo = init.serverInfo
    connection.capabilities = init.capabilities ?? {}
  }

  /** @param {Transport} transport */
  _onTransportClosed(transport) {
    if (transport !== this._transport || this._state !== 'connected') return
    if (!this._policy) {
      this._state = 'closed'
      this._failWaiters(transportClosed())
      callGuarded(this, this.onStatus, 'disconnected')
      callGuarded(this, this.onClose)
      return
    }
    this._setState('reconnecting')
    this._reconnect(this._epoch, 1, this._policy.initialDelayMs, undefined)
  }

  /**
   * One reconnect attempt after `delay` ms; called only when there is a reconnect policy.
   * @param {number} epoch
   * @param {number} attempt
   * @param {number} delay
   * @param {unknown} lastError
   */
  _reconnect(epoch, attempt, delay, lastError) {
    const policy = /** @type {ReconnectPolicy} */ (this._policy)
    if (attempt > policy.maxAttempts) {
      this._state = 'closed'
      const error = lastError ?? transportClosed()
      this._failWaiters(error)
      callGuarded(this, this.onStatus, 'disconnected', error)
      callGuarded(this, this.onClose)
      return
    }
    this._retryTimer = setTimeout(() => {
      this._retryTimer = null
      if (epoch !== this._epoch || this._state !== 'reconnecting') return
      this._open(undefined).then(
        ({ transport, init }) => {
          if (epoch !== this._epoch || this._state !== 'reconnecting') return transport.close()
          this._adopt(transport, init)
          return undefined
        },
        (err) => {
          if (epoch !== this._epoch || this._state !== 'reconnecting') return
          callGuarded(this, this.onError, err)
          this._reconnect(epoch, attempt + 1, Math.min(delay * 2, policy.maxDelayMs), err)
        },
      )
    }, delay)
  }

  /**
   * Waits for the (re)connection in progress, bounded by the request's timeout and signal.
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<Transport>}
   */
  _whenConnected(options) {
    if (this._state !== 'connecting' && this._state !== 'reconnecting') return Promise.reject(notConnected())
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
      // Registered only when there is a signal.
      const onAbort = () => waiter.reject(/** @type {AbortSignal} */ (signal).reason)
      const timer = setTimeout(
        () => waiter.reject(makeError({ message: `Request timeout after ${t}ms`, code: 'MCP_TIMEOUT', timeout: t })),
        t,
      )
      const done = () => {
        clearTimeout(timer)
        this._waiters.delete(waiter)
        if (signal) signal.removeEventListener('abort', onAbort)
      }
      if (signal) signal.addEventListener('abort', onAbort, { once: true })
      this._waiters.add(waiter)
    })
  }

  /** @param {unknown} err */
  _failWaiters(err) {
    for (const w of [...this._waiters]) w.reject(err)
  }

  /**
   * @param {unknown} err
   * @param {Transport} transport
   */
  _sessionExpired(err, transport) {
    return (
      !!err &&
      /** @type {{ code?: unknown }} */ (err).code === 'MCP_SESSION_EXPIRED' &&
      transport === this._transport &&
      this._state === 'connected'
    )
  }

  /**
   * Re-runs the handshake on the same transport (its session id was cleared); shared by callers.
   * @param {Transport} transport
   * @returns {Promise<void>}
   */
  _reinitialize(transport) {
    if (!this._reinit) {
      this._reinit = handshake(transport, this._hs, { timeout: timeoutOf(this.config) }).then(
        (init) => {
          this._reinit = null
          if (transport === this._transport) this._setSession(init)
        },
        (err) => {
          this._reinit = null
          throw err
        },
      )
    }
    return this._reinit
  }
}

module.exports = {
  createTransport,
  connectToServer,
  listTools,
  callTool,
  disconnectServer,
  serverSupportsTools,
  MCPClient,
  SUPPORTED_PROTOCOL_VERSIONS,
  DEFAULT_CAPABILITIES,
}

/**
 * Type check only (no code): this module's exports match the declarations users see (client.d.ts).
 * @template {typeof import('./client.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
