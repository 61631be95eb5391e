'use strict'
// mcp-native/client (SPEC 5): the handshake, paging, tools/call, session re-initialization and
// reconnect, over the native transports. This layer stays in JavaScript on purpose: its contract
// is about JS objects (the mutable `MCPServerConnection` whose `tools` array is the cache, the
// assignable callbacks, AbortSignal), every byte of I/O already runs in Rust below it, and a
// call through it is one `transport.request` (no extra crossing of the JS/Rust boundary).

const root = require('./core.js')

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

/** SPEC 5.1: a transport for `config` by its type. */
async function createTransport(config) {
  const type = config?.type ?? 'stdio'
  if (type === 'stdio') return root.createStdioTransport(config)
  if (type === 'http' || type === 'sse') return root.createHttpTransport(config)
  throw new Error(`Unknown server type: ${type}`)
}

function handshakeOptions(options) {
  const o = options || {}
  return {
    protocolVersion: o.protocolVersion ?? DEFAULT_PROTOCOL_VERSION,
    capabilities: o.capabilities ?? DEFAULT_CAPABILITIES,
    clientInfo: o.clientInfo ?? DEFAULT_CLIENT_INFO,
  }
}

/** `initialize` + `notifications/initialized` with version negotiation; the initialize result. */
async function handshake(transport, hs, requestOptions) {
  const init = await transport.request(
    'initialize',
    { protocolVersion: hs.protocolVersion, capabilities: hs.capabilities, clientInfo: hs.clientInfo },
    requestOptions,
  )
  const version = init?.protocolVersion
  if (version !== hs.protocolVersion && !SUPPORTED_PROTOCOL_VERSIONS.includes(version)) {
    throw makeError({ message: `Unsupported protocol version: ${version}`, code: 'MCP_UNSUPPORTED_PROTOCOL', protocolVersion: version })
  }
  await transport.notify('notifications/initialized')
  // Streamable HTTP: servers send requests and notifications that belong to no request (an
  // elicitation, list_changed) on the GET stream, as the official SDK client opens it. It does not
  // keep the event loop alive; a 405 ends it quietly; on the legacy protocol it is a no-op.
  if (transport instanceof root.HttpTransport) transport.startSSEListener({ keepAlive: false })
  return init
}

/**
 * Creates a transport and runs the handshake within `config.timeout ?? 30000` ms. On failure,
 * timeout or abort, the transport is closed (awaited: when this rejects, nothing it started is
 * still running) and the error is rethrown. Resolves with `{ transport, init }`.
 */
function openSession(name, config, hs, signal, prepare) {
  if (signal?.aborted) return Promise.reject(signal.reason)
  const ms = timeoutOf(config)
  const inner = new AbortController()
  return new Promise((resolve, reject) => {
    let finished = false // the deadline and the abort listener are gone
    let gaveUp = false // timeout or abort: `reject` is called once the transport is closed
    let timer
    const cleanup = () => {
      finished = true
      clearTimeout(timer)
      if (signal) signal.removeEventListener('abort', onAbort)
    }
    const creating = createTransport(config)
    const giveUp = (error) => {
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
    const onAbort = () => giveUp(signal.reason)
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
const owners = new WeakMap()

function rpc(connection, method, params, options) {
  const client = owners.get(connection)
  return client ? client.request(method, params, options) : connection.transport.request(method, params, options)
}

// Pages through a list method (tools/list, resources/list, …): all items of `key`, at most MAX_PAGES pages.
async function listAll(connection, method, key, options) {
  const items = []
  let cursor
  for (let page = 0; page < MAX_PAGES; page++) {
    const result = await rpc(connection, method, cursor ? { cursor } : {}, options)
    const got = result?.[key]
    if (Array.isArray(got)) for (const item of got) items.push(item)
    cursor = result?.nextCursor
    if (!cursor) break
  }
  return items
}

/** SPEC 5.1 `listTools`. */
async function listTools(connection, options) {
  if (!connection.capabilities?.tools) return []
  if (connection.tools) return connection.tools
  const tools = await listAll(connection, 'tools/list', 'tools', options)
  connection.tools = tools
  return tools
}

/** SPEC 5.1 `callTool`: the raw result (`isError: true` is not thrown). */
function callTool(connection, toolName, args = {}, options) {
  return rpc(connection, 'tools/call', { name: toolName, arguments: args }, options)
}

/** SPEC 5.1 `disconnectServer`. */
async function disconnectServer(connection) {
  const client = owners.get(connection)
  if (client) await client.close()
  else await connection.transport.close()
}

/** SPEC 5.1 `serverSupportsTools`. */
function serverSupportsTools(capabilities) {
  return capabilities.tools !== undefined
}

/** SPEC 5.1 `connectToServer`: `{ name, config, transport, serverInfo, capabilities }`. */
async function connectToServer(name, config, options) {
  const client = new MCPClient(name, config, options)
  return client.connect({ signal: options?.signal })
}

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
  static async connect(name, config, options) {
    const client = new MCPClient(name, config, options)
    await client.connect(options)
    return client
  }

  constructor(name, config, options) {
    this.name = name
    this.config = config
    this.onNotification = undefined
    this.onClose = undefined
    this.onError = undefined
    /** [beyond] `(status, error?)` on every change: "connecting" | "connected" | "disconnected". */
    this.onStatus = undefined
    this._onStderr = undefined
    this._onRequest = undefined
    this._hs = handshakeOptions(options)
    this._policy = reconnectPolicy(options?.reconnect)
    this._state = 'idle'
    this._transport = null
    this._connection = null
    this._init = null
    this._connecting = null
    this._waiters = new Set()
    this._reinit = null
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
  set onStderr(fn) {
    this._onStderr = fn
    if (this._transport) this._wireStderr(this._transport)
  }
  get onRequest() {
    return this._onRequest
  }
  set onRequest(fn) {
    this._onRequest = fn
  }

  /** Connects (no-op while connected; shares a connect in progress). Resolves with `connection`. */
  connect(options) {
    if (this._state === 'connected') return Promise.resolve(this._connection)
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
        return this._connection
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

  _open(signal) {
    return openSession(this.name, this.config, this._hs, signal, (t) => this._wire(t))
  }

  /** Closes the connection and stops any reconnect; `onClose` once if it was open. */
  async close() {
    const was = this._state
    this._state = 'closed'
    this._epoch++
    this._connecting = null
    clearTimeout(this._retryTimer)
    this._retryTimer = null
    this._failWaiters(transportClosed())
    const t = this._transport
    if (t) await t.close()
    if (was !== 'closed' && was !== 'idle') {
      callGuarded(this, this.onStatus, 'disconnected')
      callGuarded(this, this.onClose)
    }
  }

  /** A request on the current connection; waits out a (re)connect, retries once on session expiry. */
  async request(method, params, options) {
    const transport = this._state === 'connected' ? this._transport : await this._whenConnected(options)
    try {
      return await transport.request(method, params, options)
    } catch (err) {
      if (!this._sessionExpired(err, transport)) throw err
      await this._reinitialize(transport)
      return transport.request(method, params, options)
    }
  }

  async notify(method, params) {
    const transport = this._state === 'connected' ? this._transport : await this._whenConnected()
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

  listTools(options) {
    return this._connection ? listTools(this._connection, options) : Promise.reject(notConnected())
  }

  /** Drops the tool cache and lists again. */
  refreshTools(options) {
    if (this._connection) delete this._connection.tools
    return this.listTools(options)
  }

  callTool(name, args = {}, options) {
    return this.request('tools/call', { name, arguments: args }, options)
  }

  listResources(options) {
    return this._connection ? listAll(this._connection, 'resources/list', 'resources', options) : Promise.reject(notConnected())
  }

  readResource(uri, options) {
    return this.request('resources/read', { uri }, options)
  }

  listPrompts(options) {
    return this._connection ? listAll(this._connection, 'prompts/list', 'prompts', options) : Promise.reject(notConnected())
  }

  getPrompt(name, args, options) {
    const params = args === undefined ? { name } : { name, arguments: args }
    return this.request('prompts/get', params, options)
  }

  // --- internals ---------------------------------------------------------------------------

  _setState(state, error) {
    this._state = state
    const status = state === 'reconnecting' ? 'connecting' : state === 'closed' || state === 'idle' ? 'disconnected' : state
    callGuarded(this, this.onStatus, status, error)
  }

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

  _wireStderr(transport) {
    if (!(transport instanceof root.StdioTransport)) return
    transport.onStderr = typeof this._onStderr === 'function' ? (chunk) => callGuarded(this, this._onStderr, chunk) : undefined
  }

  _answer(method, params) {
    if (typeof this._onRequest === 'function') return this._onRequest(method, params)
    // We declare `roots` by default: say there are none rather than refuse the request.
    if (method === 'roots/list' && this._hs.capabilities && this._hs.capabilities.roots) return { roots: [] }
    throw methodNotFound()
  }

  _adopt(transport, init) {
    this._transport = transport
    if (this._connection) {
      this._connection.transport = transport
      delete this._connection.tools // a new process or session: its tools are listed again
    } else {
      this._connection = { name: this.name, config: this.config, transport, serverInfo: undefined, capabilities: undefined }
      owners.set(this._connection, this)
    }
    this._setSession(init)
    this._setState('connected')
    for (const w of [...this._waiters]) w.resolve(transport)
  }

  /** Records an initialize result: on the client and on its connection. */
  _setSession(init) {
    this._init = init
    this._connection.serverInfo = init.serverInfo
    this._connection.capabilities = init.capabilities ?? {}
  }

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

  _reconnect(epoch, attempt, delay, lastError) {
    if (attempt > this._policy.maxAttempts) {
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
          this._reconnect(epoch, attempt + 1, Math.min(delay * 2, this._policy.maxDelayMs), err)
        },
      )
    }, delay)
  }

  /** Waits for the (re)connection in progress, bounded by the request's timeout and signal. */
  _whenConnected(options) {
    if (this._state !== 'connecting' && this._state !== 'reconnecting') return Promise.reject(notConnected())
    const signal = options?.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    const t = timeoutOf(options && options.timeout !== undefined ? options : this.config)
    return new Promise((resolve, reject) => {
      const waiter = {
        resolve: (transport) => {
          done()
          resolve(transport)
        },
        reject: (err) => {
          done()
          reject(err)
        },
      }
      const onAbort = () => waiter.reject(signal.reason)
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

  _failWaiters(err) {
    for (const w of [...this._waiters]) w.reject(err)
  }

  _sessionExpired(err, transport) {
    return !!err && err.code === 'MCP_SESSION_EXPIRED' && transport === this._transport && this._state === 'connected'
  }

  /** Re-runs the handshake on the same transport (its session id was cleared); shared by callers. */
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
