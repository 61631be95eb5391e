'use strict'
// The transports: a thin JS layer over the generated loader (native.js). What lives
// here is what only JS can do: promises, AbortSignal, assignable onX properties, the exit hook.
// Everything else (framing, correlation, deadlines, process lifecycle) is in Rust.

const net = require('node:net')
const native = require('./native.js')

// On Node, the JS thread reads the server's stdout itself (a net.Socket on the pipe) and hands
// each chunk to Rust to decode: one wake-up per answer instead of two (I/O thread, then JS
// thread). Bun's net.Socket cannot wrap a descriptor, so there the Rust I/O thread reads.
// MCP_NATIVE_RUST_READER=1 forces the Rust reader (the tests run both).
const JS_READER = !process.versions.bun && process.env.MCP_NATIVE_RUST_READER !== '1'

const DEFAULT_TIMEOUT = 30000

/** Builds an Error from a Rust error descriptor `{ message, code, ...extra }`. */
function makeError(desc) {
  const d = typeof desc === 'string' ? JSON.parse(desc) : desc
  const err = new Error(d.message)
  for (const key of Object.keys(d)) {
    if (key !== 'message') err[key] = d[key]
  }
  return err
}

function notConnected() {
  return makeError({ message: 'Transport not connected', code: 'MCP_NOT_CONNECTED' })
}

function transportClosed() {
  return makeError({ message: 'Transport closed', code: 'MCP_TRANSPORT_CLOSED' })
}

/** What a request handler throws for a method it does not serve (answered as JSON-RPC -32601). */
function methodNotFound() {
  return Object.assign(new Error('Method not found'), { rpcCode: -32601 })
}

/** `config.timeout ?? 30000` in milliseconds, never negative (SPEC 3.1). */
function timeoutOf(config) {
  const t = config?.timeout
  return t === undefined || t === null ? DEFAULT_TIMEOUT : Math.max(0, Number(t))
}

/** Runs a user callback of `owner`; a throw goes to `owner.onError`, never to the host. */
function callGuarded(owner, fn, ...args) {
  if (typeof fn !== 'function') return undefined
  try {
    return fn(...args)
  } catch (err) {
    if (fn !== owner.onError && typeof owner.onError === 'function') {
      try {
        owner.onError(err)
      } catch {
        // onError itself threw: nothing sensible is left to tell.
      }
    }
    return undefined
  }
}

let exitHookInstalled = false
function installExitHook() {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // No server may outlive the host process.
  process.on('exit', () => native.killAllChildren())
}

function reasonText(reason) {
  if (reason instanceof Error) return reason.message || reason.name
  if (reason && typeof reason === 'object' && typeof reason.message === 'string') return reason.message
  return String(reason)
}

/** Starts reading a caller-read stdout pipe on the JS thread (see JS_READER). */
function attachReader(transport, fd) {
  const socket = new net.Socket({ fd, readable: true, writable: false })
  const weak = new WeakRef(transport)
  const holder = transport._holder
  const current = () => {
    const t = holder.strong || weak.deref()
    return t && t._socket === socket ? t : undefined
  }
  const end = () => {
    const t = current()
    if (!t) return
    t._socket = null
    t._onEvents(t._native.feedEnd())
  }
  socket.on('data', (chunk) => {
    const t = current()
    if (t) t._onEvents(t._native.feed(chunk))
  })
  socket.on('end', end)
  socket.on('close', end)
  socket.on('error', (err) => {
    const t = current()
    if (t?._connected) t._call(t.onError, err)
    end()
  })
  if (!transport._held) socket.unref()
  transport._socket = socket
}

// The native callback holds only this closure: a weak reference to the transport while it is idle
// (so an unreferenced transport can be collected, which kills its server) and a strong one while
// something is pending (so pending promises always settle).
function makeEventHandler(weak, holder) {
  return (batch) => {
    const transport = holder.strong || weak.deref()
    if (transport) transport._onEvents(batch)
  }
}

/**
 * What both transports share: request ids, the per-tick request batch, pending promises with
 * their abort listeners, the event-loop hold, event dispatch and the assignable callbacks.
 * Subclasses create `this._native` with `this._eventHandler()` and implement connect/close/notify.
 */
class NativeTransport {
  constructor(config) {
    this.config = config
    this.onClose = undefined
    this.onError = undefined
    this.onNotification = undefined
    this._onStderr = undefined
    this._onRequest = undefined
    this._connected = false
    this._pending = new Map()
    this._holds = 0
    this._closing = null
    this._closeDone = null
    this._holder = { strong: null }
    this._socket = null
    this._nextId = 1
    this._queue = []
    this._flushQueued = false
    this._flush = () => this._flushNow()
    this._held = false
    this._releaseQueued = false
    this._releaseIfIdle = () => this._letGo()
    this._native = null
  }

  _eventHandler() {
    return makeEventHandler(new WeakRef(this), this._holder)
  }

  get connected() {
    return this._connected
  }

  get onRequest() {
    return this._onRequest
  }
  set onRequest(fn) {
    this._onRequest = fn
    this._syncListeners()
  }

  _syncListeners() {
    this._native.setListeners(typeof this._onStderr === 'function', typeof this._onRequest === 'function')
  }

  // Keeps the event loop alive while anything is pending. Letting go is deferred to the check
  // phase, so that the usual pattern (an answer whose handler makes the next request) does not
  // unref and ref again on every call.
  _hold() {
    this._holds++
    if (this._held) return
    this._held = true
    this._holder.strong = this
    this._native.hold(true)
    if (this._socket) this._socket.ref()
  }

  _release() {
    if (--this._holds === 0 && !this._releaseQueued) {
      this._releaseQueued = true
      setImmediate(this._releaseIfIdle)
    }
  }

  _letGo() {
    this._releaseQueued = false
    if (this._holds !== 0 || !this._held) return
    this._held = false
    this._holder.strong = null
    this._native.hold(false)
    if (this._socket) this._socket.unref()
  }

  _dropReader() {}

  request(method, params, options) {
    if (!this._connected) return Promise.reject(notConnected())
    const signal = options?.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    const id = this._nextId++
    // [beyond] SPEC 3.4: progress goes to onProgress and/or restarts the deadline; the request
    // id is the progress token.
    const onProgress = options && typeof options.onProgress === 'function' ? options.onProgress : undefined
    const reset = !!options?.resetTimeoutOnProgress
    let body
    try {
      let p = params ?? {}
      if (onProgress || reset) p = { ...p, _meta: { ...(p._meta || {}), progressToken: id } }
      body = JSON.stringify(p)
    } catch (e) {
      return Promise.reject(e)
    }
    let deadline = String(timeoutOf(options && options.timeout !== undefined ? options : this.config))
    if (reset) {
      const max = options.maxTotalTimeout
      deadline += `r${max === undefined || max === null ? '' : Math.max(0, Number(max))}`
    }
    // Requests made in the same tick go to Rust together: one call, one write.
    this._queue.push(id, deadline, JSON.stringify(String(method)), body)
    if (!this._flushQueued) {
      this._flushQueued = true
      queueMicrotask(this._flush)
    }
    return new Promise((resolve, reject) => {
      const entry = { resolve, reject, signal, onAbort: undefined, queued: true, onProgress }
      if (signal) {
        entry.onAbort = () => {
          if (!this._settle(id)) return
          // Still queued: it is simply never sent. Sent: Rust tells the server.
          if (!entry.queued) this._native.cancel(id, reasonText(signal.reason))
          reject(signal.reason)
        }
        signal.addEventListener('abort', entry.onAbort, { once: true })
      }
      this._pending.set(id, entry)
      this._hold()
    })
  }

  _flushNow() {
    this._flushQueued = false
    const q = this._queue
    if (q.length === 0) return
    this._queue = []
    let batch = ''
    const sent = []
    for (let i = 0; i < q.length; i += 4) {
      const entry = this._pending.get(q[i])
      if (!entry) continue // aborted before it was sent
      entry.queued = false
      sent.push(q[i])
      batch += `${q[i]} ${q[i + 1]} ${q[i + 2]}${q[i + 3]}\n`
    }
    if (batch !== '' && !this._native.sendRequests(batch)) {
      // The connection just ended; its `closed` event rejects the rest with the details.
      for (const id of sent) {
        const entry = this._settle(id)
        if (entry) entry.reject(transportClosed())
      }
    }
  }

  /** Removes a pending entry with its abort listener; false if it had already settled. */
  _settle(id) {
    const entry = this._pending.get(id)
    if (!entry) return undefined
    this._pending.delete(id)
    if (entry.signal) entry.signal.removeEventListener('abort', entry.onAbort)
    if (!entry.unheld) this._release()
    return entry
  }

  /** Rejects pending requests, closes (stdio: the shutdown sequence; HTTP: the session DELETE),
   * then calls onClose once. Not connected: returns at once. */
  async close() {
    if (!this._connected) {
      if (this._closing) await this._closing
      return
    }
    this._connected = false
    this._queue = []
    this._rejectAll(transportClosed())
    this._hold()
    this._closing = new Promise((resolve) => {
      this._closeDone = resolve
    })
    if (!this._native.close()) this._finishClose()
    await this._closing
  }

  _finishClose() {
    const done = this._closeDone
    if (!done) return false
    this._closeDone = null
    this._closing = null
    this._dropReader()
    this._release()
    done()
    this._emitClose()
    return true
  }

  _rejectAll(error) {
    for (const id of [...this._pending.keys()]) {
      const entry = this._settle(id)
      if (entry) entry.reject(error)
    }
  }

  _emitClose() {
    this._call(this.onClose)
  }

  /** Runs a user callback; a throw goes to onError (and never crashes the host). */
  _call(fn, ...args) {
    callGuarded(this, fn, ...args)
  }

  _onEvents(batch) {
    if (batch.length === 2) return // "[]"
    const events = JSON.parse(batch)
    for (const ev of events) {
      switch (ev[0]) {
        case 0: {
          const entry = this._settle(ev[1])
          if (entry) entry.resolve(ev[2])
          break
        }
        case 1: {
          const entry = this._settle(ev[1])
          if (entry) entry.reject(makeError(ev[2]))
          break
        }
        case 2:
          if (ev[1] === 'notifications/progress' && ev[2]) {
            const entry = this._pending.get(ev[2].progressToken)
            if (entry?.onProgress) {
              const { progress, total, message } = ev[2]
              const info = { progress }
              if (total !== undefined) info.total = total
              if (message !== undefined) info.message = message
              this._call(entry.onProgress, info)
            }
          }
          this._call(this.onNotification, ev[1], ev[2])
          break
        case 3:
          this._answer(ev[1], ev[2], ev[3])
          break
        case 4:
          this._call(this._onStderr, ev[1])
          break
        case 5:
          if (this._connected) this._call(this.onError, makeError(ev[1]))
          break
        case 6:
          this._onClosed(ev[1])
          break
      }
    }
  }

  _onClosed(desc) {
    if (this._finishClose()) return
    // Closed on its own.
    const wasConnected = this._connected
    this._connected = false
    this._dropReader()
    this._rejectAll(desc ? makeError(desc) : transportClosed())
    if (wasConnected) this._emitClose()
  }

  async _answer(id, method, params) {
    const idText = JSON.stringify(id)
    const handler = this._onRequest
    let result
    try {
      if (typeof handler !== 'function') throw methodNotFound()
      result = await handler(method, params)
    } catch (err) {
      const code = err && Number.isInteger(err.rpcCode) ? err.rpcCode : err && Number.isInteger(err.code) ? err.code : -32603
      const error = { code, message: err?.message || String(err) }
      if (err && err.data !== undefined) error.data = err.data
      this._native.reply(idText, null, JSON.stringify(error))
      return
    }
    this._native.reply(idText, JSON.stringify(result ?? {}), null)
  }
}

/**
 * MCP transport over a child process's stdin/stdout (newline-delimited JSON).
 */
class StdioTransport extends NativeTransport {
  constructor(config) {
    super(config)
    this._native = new native.NativeStdio(this._eventHandler())
  }

  /** Server process id while connected. [beyond] */
  get pid() {
    return this._connected ? this._native.pid : null
  }

  get onStderr() {
    return this._onStderr
  }
  set onStderr(fn) {
    this._onStderr = fn
    this._syncListeners()
  }

  _dropReader() {
    const socket = this._socket
    this._socket = null
    if (socket) socket.destroy()
  }

  async connect() {
    if (this._connected) return
    if (this._closing) await this._closing
    if (this._connected) return
    const c = this.config || {}
    const config = {
      command: c.command,
      args: Array.isArray(c.args) ? c.args.map(String) : [],
      env: Object.entries({ ...process.env, ...(c.env || {}) })
        .filter(([, v]) => v !== undefined && v !== null)
        .map(([k, v]) => [k, String(v)]),
    }
    if (c.cwd !== undefined && c.cwd !== null) config.cwd = String(c.cwd)
    if (c.maxMessageBytes !== undefined) config.maxMessageBytes = Math.max(0, Math.floor(Number(c.maxMessageBytes)))
    if (c.killGraceMs !== undefined) config.killGraceMs = Math.max(0, Math.floor(Number(c.killGraceMs)))
    if (typeof config.command !== 'string') {
      throw makeError({ message: 'Invalid config: "command" must be a string', code: 'MCP_INVALID_CONFIG' })
    }
    config.callerReadsStdout = JS_READER
    installExitHook()
    this._syncListeners()
    const err = this._native.connect(JSON.stringify(config))
    if (err) throw makeError(err)
    if (JS_READER) attachReader(this, this._native.takeStdoutFd())
    this._connected = true
  }

  async notify(method, params) {
    if (!this._connected) throw notConnected()
    const body = JSON.stringify(params ?? {})
    if (!this._native.notify(String(method), body)) throw transportClosed()
  }
}

/**
 * MCP transport over Streamable HTTP (POST per message; JSON or SSE replies).
 */
class HttpTransport extends NativeTransport {
  constructor(config) {
    super(config)
    const c = config || {}
    this.url = c.url
    const headers = Object.entries(c.headers || {}).map(([k, v]) => [k, String(v)])
    const t = timeoutOf(c)
    const spec = { url: String(c.url), headers, timeoutMs: Number.isFinite(t) ? t : DEFAULT_TIMEOUT, legacyFallback: c.type === 'sse' }
    if (c.maxMessageBytes !== undefined) spec.maxMessageBytes = Math.max(0, Math.floor(Number(c.maxMessageBytes)))
    this._native = new native.NativeHttp(JSON.stringify(spec), this._eventHandler())
  }

  /**
   * Opens the GET stream for server-initiated messages (notifications to onNotification, requests
   * answered). Resolves when the stream ends for good (405 or another refusal, too many failed
   * reconnects) or close() stops it; at once when not connected or already listening.
   */
  startSSEListener(options) {
    if (!this._connected || this._listening) return Promise.resolve()
    const id = this._nextId++
    // [beyond] keepAlive: false — the open stream does not keep the event loop alive by itself
    // (MCPClient's listener: a script that forgets to close still exits).
    const keepAlive = !(options && options.keepAlive === false)
    return new Promise((resolve) => {
      const done = () => {
        this._listening = false
        resolve()
      }
      this._pending.set(id, { resolve: done, reject: done, signal: undefined, onAbort: undefined, queued: false, unheld: !keepAlive })
      if (keepAlive) this._hold()
      this._listening = true
      if (!this._native.startListener(id)) {
        const entry = this._settle(id)
        if (entry) entry.resolve()
      }
    })
  }

  /** The session id the server assigned, if any. [beyond] */
  get sessionId() {
    return this._native.sessionId ?? undefined
  }

  /** The negotiated protocol version, after a successful initialize. [beyond] */
  get protocolVersion() {
    return this._native.protocolVersion ?? undefined
  }

  async connect() {
    if (this._connected) return
    if (this._closing) await this._closing
    if (this._connected) return
    this._syncListeners()
    this._native.connect()
    this._connected = true
  }

  notify(method, params) {
    if (!this._connected) return Promise.reject(notConnected())
    let body
    try {
      body = JSON.stringify(params ?? {})
    } catch (e) {
      return Promise.reject(e)
    }
    const timeout = timeoutOf(this.config)
    const id = this._nextId++
    return new Promise((resolve, reject) => {
      this._pending.set(id, { resolve: () => resolve(), reject, signal: undefined, onAbort: undefined, queued: false })
      this._hold()
      const err = this._native.notify(id, String(method), body, timeout)
      if (err) {
        const entry = this._settle(id)
        if (entry) entry.reject(makeError(err))
      }
    })
  }
}

async function createStdioTransport(config) {
  const transport = new StdioTransport(config)
  await transport.connect()
  return transport
}

async function createHttpTransport(config) {
  const transport = new HttpTransport(config)
  await transport.connect()
  return transport
}

exports.StdioTransport = StdioTransport
exports.createStdioTransport = createStdioTransport
exports.HttpTransport = HttpTransport
exports.createHttpTransport = createHttpTransport
// For client.js and manager.js (not re-exported by index.js).
exports.makeError = makeError
exports.notConnected = notConnected
exports.transportClosed = transportClosed
exports.methodNotFound = methodNotFound
exports.timeoutOf = timeoutOf
exports.callGuarded = callGuarded
