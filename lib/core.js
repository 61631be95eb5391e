'use strict'
// The transports: a thin JS layer over the generated loader (native/index.js). What lives
// here is what only JS can do: promises, AbortSignal, assignable onX properties, the exit hook.
// Everything else (framing, correlation, deadlines, process lifecycle) is in Rust.

const { hooks, projectDir } = require('./hooks.js')
const net = require('node:net')
const { isMainThread } = require('node:worker_threads')
const native = require('../native/index.js')

/** The request numbers of the Rust core's own requests on a transport (RUST_IDS_FROM inclusive). */
const RUST_IDS_FROM = 2 ** 30
const RUST_IDS_END = 2 ** 31

// The kinds of the events from Rust (src/sink.rs `EventKind`), defined there once.
const K = native.EventKind

// The JS thread reads the server's stdout itself and hands each chunk to Rust to decode: one
// wake-up per answer instead of two (I/O thread, then JS thread). The server's stdout is then a
// Unix socket (Rust makes a socket pair, as Node's own child_process does), read with a
// net.Socket on Node and with Bun.connect({ fd }) on Bun, whose net.Socket cannot wrap a
// descriptor. MCP_NATIVE_RUST_READER=1 makes the Rust I/O thread read instead (the tests run both).
// Windows: always the Rust side (the server's pipes are Windows pipes, with no socket to share).
/** @type {any} Bun's global, when running on Bun */
const Bun = /** @type {any} */ (globalThis).Bun
const JS_READER =
  process.platform !== 'win32' &&
  process.env.MCP_NATIVE_RUST_READER !== '1' &&
  (!process.versions.bun || typeof Bun?.connect === 'function')

const DEFAULT_TIMEOUT = native.DEFAULT_TIMEOUT_MS
/** The longest close() waits for the `closed` event of a stdio connection that ended on its own:
 * the owner reports it after the server's exit (100 ms), stderr (100 ms) and a busy JS thread
 * catching up on stdout (CALLER_CATCH_UP, 10 s), whichever apply. */
const CLOSED_EVENT_WAIT_MS = 15000

// Requests made in one tick go to Rust together, but in groups of at most 8 (four queue entries
// each): with many in flight, the server then starts on the first ones while the rest are still
// being made, instead of client and server taking turns. Measured, 64 echo calls in flight over
// stdio, medians of 3: one write per tick ~112k calls/s on Node, ~100k on Bun; per 8 requests
// ~146k and ~116k (per 4 and per 16 about the same; the floor clients, one write per request,
// ~147k and ~154k).
// Over stdio a group is also written as soon as it is half as large as the work the server still
// holds (requests written and not answered; at least 1): with few in flight the server would
// otherwise wait for 8 requests, or for the end of the tick, with nothing to do. Side by side
// (2026-12-02, echo calls over stdio, 7 alternating rounds, this rule ÷ groups of 8 alone), Node /
// Bun: 4 in flight 1.08 / 1.04, 8 in flight 1.15 / 1.13, 16 in flight 1.32 / 1.18, 32 in flight
// 1.16 / 1.01; 1, 2 and 64 in flight 0.98–1.03 (the floor clients were ahead at 4 to 16 before).
// With nothing in flight a lone request still waits for the end of its tick (or a second one),
// so that one aborted in the tick it was made is never written; with others in flight it may
// already be written, and one aborted then is cancelled at the server like any other.
const FLUSH_AT = 8 * 4

/**
 * The longest an `onAuthError` call is awaited (HttpTransport): the request's timeout, and never
 * more than this, so that a request without a deadline cannot hang on a callback that never
 * answers. A token refresh is one HTTP exchange; a minute is far beyond it.
 */
const AUTH_ERROR_WAIT_MAX_MS = 60000

/** @typedef {import('../native/index.js').NativeStdio} NativeStdio */
/** @typedef {import('../native/index.js').NativeHttp} NativeHttp */
/** @typedef {import('../index.js').MCPError} MCPError */
/** @typedef {import('../index.js').MCPRequestOptions} MCPRequestOptions */
/** @typedef {import('../index.js').MCPRequestHandler} MCPRequestHandler */
/** @typedef {import('../index.js').MCPStdioServerConfig} MCPStdioServerConfig */
/** @typedef {import('../index.js').MCPHttpServerConfig | import('../index.js').MCPSseServerConfig} MCPHttpConfig */
/** @typedef {import('../index.js').StdioTransport} DeclaredStdioTransport */
/** @typedef {import('../index.js').HttpTransport} DeclaredHttpTransport */
/** @typedef {{ progress: number, total?: number, message?: string }} ProgressInfo */
/** An error as Rust describes it (src/errors.rs): the message, a `code`, and extra members. */
/** @typedef {{ message: string, code?: string, [key: string]: unknown }} ErrorDescriptor */
/**
 * One event of a batch from Rust (src/sink.rs): its kind (`EventKind`, from the addon) first.
 * Results and params are the server's JSON as it came: any JSON value, hence `any`.
 * @typedef {[number, ...any[]]} NativeEvent
 */
/**
 * A batch of events from Rust (src/sink.rs): its JSON text, or, when it carries large answers
 * as they came (events `[RawAnswer, id, k]`, or `[RawAnswer, id, k, tag, paths]` with the long strings cut out of
 * the answer, which follow it), an array of the text and those texts.
 * @typedef {string | string[]} Batch
 */

/**
 * The events of a batch, each large answer's text in place of its index.
 * @param {Batch} batch
 * @returns {any[]} the events: {@link NativeEvent}s, or a manager's (src/manager.rs)
 */
function readBatch(batch) {
  if (typeof batch === 'string') return JSON.parse(batch)
  const events = JSON.parse(batch[0])
  for (const ev of events) {
    // A manager wraps its servers' events: [Server, tag, event].
    const inner = ev[0] === K.Server ? ev[2] : ev
    if (inner[0] === K.RawAnswer) {
      const k = inner[2] + 1
      inner[2] = batch[k]
      // [RawAnswer, id, k, tag, paths]: the answer's long strings follow its skeleton (src/sink.rs).
      if (inner.length > 3) inner[5] = batch.slice(k + 1, k + 1 + inner[4].length)
    }
  }
  return events
}

/**
 * Puts the long strings cut out of a large answer back where their placeholders are, which
 * makes it what `JSON.parse` of the whole answer gives (src/jsonrpc/long_strings.rs). Where a
 * later duplicate key replaced a placeholder (or the object holding it), nothing is put there,
 * as `JSON.parse` keeps the later value too.
 * @param {any} root the parsed skeleton
 * @param {string} tag the placeholders' tag
 * @param {(string | number)[][]} paths where each string goes, from the root
 * @param {string[]} strings
 */
function putLongStrings(root, tag, paths, strings) {
  for (let k = 0; k < paths.length; k++) {
    const path = paths[k]
    let node = root
    for (let j = 0; j < path.length - 1 && typeof node === 'object' && node !== null; j++) node = node[path[j]]
    const last = path[path.length - 1]
    // An own property holds the placeholder (JSON.parse defines even `__proto__` as one).
    if (typeof node === 'object' && node !== null && node[last] === `\0${tag}:${k}`) node[last] = strings[k]
  }
}

/**
 * A request in flight (or the HTTP listener / a notification exchange, which use the same
 * slots). Methods, not function properties: a `Promise<T>`'s resolve is stored as is.
 * @typedef {{
 *   resolve(value?: unknown): void,
 *   reject(reason: unknown): void,
 *   signal: AbortSignal | undefined,
 *   queued: boolean,
 *   onProgress?: ((progress: ProgressInfo) => void) | undefined,
 *   unheld?: boolean,
 * }} PendingEntry
 */

/**
 * Builds an Error from a Rust error descriptor `{ message, code, ...extra }`.
 * @param {string | ErrorDescriptor} desc the descriptor, or its JSON text
 * @returns {MCPError}
 */
function makeError(desc) {
  /** @type {ErrorDescriptor} */
  const d = typeof desc === 'string' ? JSON.parse(desc) : desc
  const err = /** @type {MCPError & Record<string, unknown>} */ (new Error(d.message))
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

/**
 * @param {string} field
 * @param {string} what
 */
function invalidConfig(field, what) {
  return makeError({ message: `Invalid config: "${field}" ${what}`, code: 'MCP_INVALID_CONFIG' })
}

/** @param {string} what */
function invalidParams(what) {
  return makeError({ message: `Invalid params: ${what}`, code: 'MCP_INVALID_PARAMS' })
}

/**
 * `config.timeout ?? 30000` in milliseconds (SPEC 3.1). Anything but a non-negative number is a
 * config error naming the field. Rounding happens once, in Rust (src/convert.rs).
 * @param {{ timeout?: unknown } | null | undefined} config a server config or request options, as given
 * @returns {number}
 */
function timeoutOf(config) {
  const t = config?.timeout
  if (t === undefined || t === null) return DEFAULT_TIMEOUT
  if (typeof t !== 'number' || Number.isNaN(t) || t < 0) throw invalidConfig('timeout', 'must be a non-negative number')
  return t
}

/**
 * A config object as JSON for Rust; non-finite numbers travel as text, so Rust can name them.
 * @param {object} config
 * @returns {string}
 */
function configJson(config) {
  return JSON.stringify(config, (_key, value) => (typeof value === 'number' && !Number.isFinite(value) ? String(value) : value))
}

/**
 * An error's message, or any other thrown value as text (never throws).
 * @param {unknown} err
 * @returns {string}
 */
function messageOf(err) {
  return err instanceof Error ? err.message : safeString(err)
}

/**
 * `String(value)` that never throws (a null-prototype object has no `toString`).
 * @param {unknown} value
 * @returns {string}
 */
function safeString(value) {
  try {
    return String(value)
  } catch {
    return Object.prototype.toString.call(value)
  }
}

/**
 * `value` as an Error: itself, or an Error that says what was thrown (and keeps it as `cause`).
 * @param {unknown} value
 * @returns {Error}
 */
function toError(value) {
  if (value instanceof Error) return value
  return new Error(`A callback threw a non-Error value: ${safeString(value)}`, { cause: value })
}

/**
 * The owner of user callbacks: a transport, an MCPClient. `onError` is whatever the user assigned.
 * @typedef {{ onError?: unknown }} CallbackOwner
 */

/**
 * Tells `owner.onError` of `err`, unless the failing callback was onError itself.
 * @param {CallbackOwner | null | undefined} owner
 * @param {unknown} failed the callback that failed, if any
 * @param {unknown} err what it threw
 */
function reportTo(owner, failed, err) {
  const onError = owner?.onError
  if (typeof onError !== 'function' || failed === onError) return
  try {
    swallow(onError.call(owner, toError(err)))
  } catch {
    // onError itself threw: nothing sensible is left to tell.
  }
}

/**
 * A rejection of `value`, if it is a promise, goes nowhere (instead of to the host).
 * @param {any} value what a user callback returned: anything, probed for a `then` method
 */
function swallow(value) {
  if (value && typeof value.then === 'function') {
    try {
      value.then(undefined, () => {})
    } catch {
      // a thenable whose `then` throws
    }
  }
}

/**
 * Runs a user callback of `owner`; a throw, or a rejection of the promise it returns, goes to
 * `owner.onError` — never to the host as an uncaught exception or unhandled rejection.
 * @param {CallbackOwner | null | undefined} owner
 * @param {unknown} fn the user's callback, as assigned (not called unless a function)
 * @param {...unknown} args
 * @returns {unknown} what it returned
 */
function callGuarded(owner, fn, ...args) {
  if (typeof fn !== 'function') return undefined
  /** @type {any} what user code returned: anything, probed for a `then` method */
  let out
  try {
    out = fn(...args)
  } catch (err) {
    reportTo(owner, fn, err)
    return undefined
  }
  if (out && typeof out.then === 'function') {
    try {
      out.then(undefined, (/** @type {unknown} */ err) => reportTo(owner, fn, err))
    } catch (err) {
      reportTo(owner, fn, err)
    }
  }
  return out
}

/**
 * The JSON-RPC error object a request handler's failure becomes (SPEC 3.1); never throws.
 * @param {CallbackOwner} owner
 * @param {any} err what the handler threw: anything, probed for `message`, `rpcCode`, `code`, `data`
 * @returns {string} the error object as JSON
 */
function errorReply(owner, err) {
  if (!(err instanceof Error) && !(err && typeof err === 'object' && typeof err.message === 'string')) {
    // A thrown string, undefined, a null-prototype object...: answered, and reported.
    reportTo(owner, undefined, err)
    return JSON.stringify({ code: -32603, message: `Request handler failed: ${safeString(err)}` })
  }
  const code = Number.isInteger(err.rpcCode) ? err.rpcCode : Number.isInteger(err.code) ? err.code : -32603
  /** @type {{ code: number, message: string, data?: unknown }} */
  const error = { code, message: safeString(err.message) || 'Internal error' }
  if (err.data !== undefined) {
    try {
      const data = JSON.stringify(err.data)
      if (data !== undefined) error.data = err.data
    } catch (e) {
      reportTo(owner, undefined, e)
    }
  }
  return JSON.stringify(error)
}

let exitHookInstalled = false
function installExitHook() {
  if (exitHookInstalled) return
  exitHookInstalled = true
  // In a worker thread, 'exit' ends that thread only, and the addon's list of servers is the whole
  // process's: killing it there took the host's servers down with the worker. A worker's own
  // servers go with its environment (their native objects are finalized with it). A process that
  // uses the package in workers only and exits from the main thread has no hook then; the kill of a
  // finalized object runs on the I/O thread, and on Linux a server also gets SIGTERM when that
  // thread ends (PR_SET_PDEATHSIG); elsewhere its stdin's end is what is left to stop it.
  if (!isMainThread) {
    // This worker's environment is ending: nothing more is delivered into it (Bun 1.3 on Windows
    // aborts on a call into an ended worker; see src/sink.rs).
    process.on('exit', () => native.envClosing())
    return
  }
  // No server may outlive the host process.
  process.on('exit', () => native.killAllChildren())
}

/**
 * The text `notifications/cancelled` gives for an abort reason.
 * @param {any} reason an AbortSignal's reason: anything, probed for `message`
 * @returns {string}
 */
function reasonText(reason) {
  if (reason instanceof Error) return reason.message || reason.name
  if (reason && typeof reason === 'object' && typeof reason.message === 'string') return reason.message
  return String(reason)
}

/**
 * Starts reading a caller-read stdout pipe on the JS thread (see JS_READER). With `generation`,
 * the transport is a client's face and the chunks belong to that connection of the client.
 * @param {StdioTransport} transport
 * @param {number} fd
 * @param {number} [generation]
 */
function attachReader(transport, fd, generation) {
  const weak = new WeakRef(transport)
  const holder = transport._holder
  const current = () => {
    const t = holder.strong || weak.deref()
    return t && t._socket === socket ? t : undefined
  }
  // `any`: a client face's native is a NativeClient, whose feed takes the generation. (Reached
  // through the transport, never captured: the socket must not keep a forgotten client alive.)
  /** @param {any} t the transport (a face, or a transport of its own) */
  const feedEnd = (t) => (generation === undefined ? t._native.feedEnd() : t._native.feedEnd(generation))
  /** @param {any} t @param {Uint8Array} chunk */
  const feed = (t, chunk) => (generation === undefined ? t._native.feed(chunk) : t._feedAt(generation, chunk))
  const end = () => {
    const t = current()
    if (!t) return
    t._socket = null
    t._onEvents(feedEnd(t))
  }
  /** @type {ReaderEvents} */
  const on = {
    data: (chunk) => {
      const t = current()
      if (t) t._onEvents(feed(t, chunk))
    },
    end,
    error: (err) => {
      const t = current()
      if (t?._connected) t._call(t.onError, err)
      end()
    },
  }
  const socket = Bun ? new BunReader(fd, on) : nodeReader(fd, on)
  if (!transport._held) socket.unref()
  const previous = transport._socket
  transport._socket = socket
  // The second step of a hand-over (event CallerStops): the reader was paused a turn ago, and whatever
  // the runtime delivered since was fed in order; now the Rust I/O thread reads. (Bun 1.3.x
  // delivers one more read after pause() in the same turn; fed after this, a chunk would end
  // the connection with an error, see src/transport/stdio/shared.rs LATE_CHUNK.)
  transport._handOver = () => {
    const t = current()
    if (t) t._onEvents(generation === undefined ? t._native.handOver() : t._native.handOver(generation))
  }
  // A reader of an earlier connection of the same face stops delivering (its socket is replaced).
  if (previous) previous.destroy()
}

/**
 * What a stdout reader reports: each chunk, the end of the stream (possibly twice), a failure.
 * @typedef {{ data(chunk: Uint8Array): void, end(): void, error(err: Error): void }} ReaderEvents
 */
/** A stdout reader: reading keeps the event loop alive only while referenced. @typedef {{ ref(): void, unref(): void, destroy(): void, pause(): void, resume(): void }} Reader */

/** Where Node's stdout readers read (see nodeReader): 256 KiB, a read of a large answer. */
let readBuffer = Buffer.alloc(0)

/**
 * @param {number} fd
 * @param {ReaderEvents} on
 * @returns {Reader}
 */
function nodeReader(fd, on) {
  if (readBuffer.length === 0) readBuffer = Buffer.allocUnsafe(256 * 1024)
  // `onread`: libuv reads into one buffer, shared by every connection (each chunk is consumed,
  // copied into Rust, before the next read anywhere), and pause() stops reading at once. (Node's
  // socket constructor takes `onread` as net.connect does; its types only list it for the latter.)
  const socket = new net.Socket(
    /** @type {import('node:net').SocketConstructorOpts} */ ({
      fd,
      readable: true,
      writable: false,
      onread: { buffer: readBuffer, callback: (/** @type {number} */ n, /** @type {Buffer} */ buf) => on.data(buf.subarray(0, n)) },
    }),
  )
  socket.on('end', on.end)
  socket.on('close', on.end)
  socket.on('error', on.error)
  return socket
}

/** A socket descriptor read on Bun's event loop (Bun.connect({ fd }); ready a tick later). */
class BunReader {
  /**
   * @param {number} fd
   * @param {ReaderEvents} on
   */
  constructor(fd, on) {
    /** @type {any} Bun's Socket, once connected */
    this._sock = null
    this._refd = true
    this._paused = false
    this._destroyed = false
    Bun.connect({
      fd,
      socket: {
        // The socket comes with its first chunk, maybe before the promise: adopted then, so
        // that a pause asked for by that chunk's events takes effect before the next read.
        data: (/** @type {any} */ sock, /** @type {Uint8Array} */ chunk) => {
          if (!this._sock) this._adopt(sock)
          on.data(chunk)
        },
        end: () => on.end(),
        close: () => on.end(),
        error: (/** @type {any} */ _s, /** @type {Error} */ err) => on.error(err),
      },
    }).then(
      (/** @type {any} */ sock) => {
        if (!this._sock) this._adopt(sock)
      },
      (/** @type {Error} */ err) => on.error(err),
    )
  }

  ref() {
    this._refd = true
    this._sock?.ref()
  }

  unref() {
    this._refd = false
    this._sock?.unref()
  }

  /** @param {any} sock Bun's Socket: takes on the state asked for before it came */
  _adopt(sock) {
    this._sock = sock
    if (this._destroyed) return sock.terminate()
    if (!this._refd) sock.unref()
    if (this._paused) sock.pause()
  }

  pause() {
    this._paused = true
    this._sock?.pause()
  }

  resume() {
    this._paused = false
    this._sock?.resume()
  }

  destroy() {
    this._destroyed = true
    this._sock?.terminate()
  }
}

// The native callback holds only this closure: a weak reference to the transport while it is idle
// (so an unreferenced transport can be collected, which kills its server) and a strong one while
// something is pending (so pending promises always settle).
/**
 * @template {{ _onEvents(batch: Batch): void }} T
 * @param {WeakRef<T>} weak
 * @param {{ strong: T | null }} holder
 * @returns {(batch: Batch) => void}
 */
function makeEventHandler(weak, holder) {
  return (batch) => {
    const transport = holder.strong || weak.deref()
    if (transport) transport._onEvents(batch)
  }
}

/**
 * One abort listener per signal, however many waiters (requests) share it — an agent passes one
 * turn-wide signal to parallel tool calls — removed when the last of them is done with it.
 * @template K a waiter
 */
class SignalWatch {
  /** @param {(signal: AbortSignal, waiters: K[]) => void} onAbort called once, with the waiters then */
  constructor(onAbort) {
    /** @type {Map<AbortSignal, { waiters: Set<K>, onAbort: () => void }>} */
    this._watched = new Map()
    this._onAbort = onAbort
  }

  /**
   * @param {AbortSignal} signal
   * @param {K} waiter
   */
  add(signal, waiter) {
    let watched = this._watched.get(signal)
    if (!watched) {
      /** @type {Set<K>} */
      const waiters = new Set()
      const onAbort = () => {
        this._watched.delete(signal)
        this._onAbort(signal, [...waiters])
      }
      watched = { waiters, onAbort }
      this._watched.set(signal, watched)
      signal.addEventListener('abort', onAbort, { once: true })
    }
    watched.waiters.add(waiter)
  }

  /**
   * @param {AbortSignal} signal
   * @param {K} waiter
   */
  delete(signal, waiter) {
    const watched = this._watched.get(signal)
    if (!watched) return
    watched.waiters.delete(waiter)
    if (watched.waiters.size === 0) {
      this._watched.delete(signal)
      signal.removeEventListener('abort', watched.onAbort)
    }
  }
}

/**
 * The agent's `hostHasInheritableConsole` (configureMCP), called now; undefined without it or when
 * it throws or answers something else than a boolean.
 * @returns {boolean | undefined}
 */
function injectedConsoleProbe() {
  const probe = hooks.hostHasInheritableConsole
  if (typeof probe !== 'function') return undefined
  try {
    const answer = probe()
    return typeof answer === 'boolean' ? answer : undefined
  } catch {
    return undefined
  }
}

/**
 * A server config as Rust reads it (src/convert.rs), as JSON text: Rust checks and converts
 * every field; here only the environment is merged (stdio) and the timeout checked, so that a bad
 * one is a config error at connect rather than a surprise at the first request.
 * @param {any} config a `MCPServerConfig`
 * @returns {string}
 */
function nativeConfig(config) {
  const c = config || {}
  timeoutOf(c)
  const type = c.type ?? 'stdio'
  if (type === 'http' || type === 'sse') {
    return configJson({
      type,
      url: c.url,
      headers: c.headers,
      timeout: c.timeout,
      maxMessageBytes: c.maxMessageBytes,
      requestIdFormat: c.requestIdFormat,
      // The root's `type: "sse"` (lib/client-current.js withDeadline, lib/sse.js): legacy from the start.
      legacyOnly: type === 'sse' && /** @type {{ legacyOnly?: unknown }} */ (c).legacyOnly === true,
      // The root's header rule (lib/client-current.js withDeadline): protocol headers win.
      protocolHeadersWin: /** @type {{ protocolHeadersWin?: unknown }} */ (c).protocolHeadersWin === true,
      // The root's rule: a lost GET stream closes the transport (lib/client-current.js withDeadline).
      closeOnStreamLoss: /** @type {{ closeOnStreamLoss?: unknown }} */ (c).closeOnStreamLoss === true,
      // The root's redirects (18.3.4 mcpFetch): as fetch follows them, or by hand for
      // `headerPolicy: "origin-locked"`; 12.7's profile follows them within the origin only.
      redirects:
        /** @type {{ protocolHeadersWin?: unknown }} */ (c).protocolHeadersWin === true
          ? c.headerPolicy === 'origin-locked'
            ? 'origin-locked'
            : 'follow'
          : undefined,
    })
  }
  if (c.env !== undefined && c.env !== null && typeof c.env !== 'object') throw invalidConfig('env', 'must be an object of strings')
  return configJson({
    type: 'stdio',
    command: c.command,
    args: c.args,
    env: { ...process.env, ...c.env },
    // The agent's project directory when it injected `getProjectDir` (18.3.4), else inherited.
    cwd: c.cwd ?? (hooks.getProjectDir ? projectDir() : undefined),
    timeout: c.timeout,
    maxMessageBytes: c.maxMessageBytes,
    killGraceMs: c.killGraceMs,
    requestIdFormat: c.requestIdFormat,
    // Windows: the agent's injected console probe, when given (else Rust asks Windows).
    hostHasConsole: process.platform === 'win32' ? injectedConsoleProbe() : undefined,
    callerReadsStdout: JS_READER,
    // The Rust I/O thread reads long lines (events 15, 16): the JS thread only parses them.
    handOverLongLines: JS_READER,
  })
}

/**
 * What both transports share: request ids, the per-tick request batch, pending promises with
 * their abort listeners, the event-loop hold, event dispatch and the assignable callbacks.
 * Subclasses create `this._native` with `this._eventHandler()` and implement connect/close/notify.
 * @template {NativeStdio | NativeHttp} N the Rust side
 * @template {{ timeout?: number }} C the config
 */
class NativeTransport {
  /** @param {C} config */
  constructor(config) {
    this.config = config
    /** @type {(() => void) | undefined} */
    this.onClose = undefined
    /** @type {((error: Error) => void) | undefined} */
    this.onError = undefined
    /** @type {((method: string, params: unknown) => void) | undefined} */
    this.onNotification = undefined
    /** @type {((chunk: string) => void) | undefined} */
    this._onStderr = undefined
    /** @type {MCPRequestHandler | undefined} */
    this._onRequest = undefined
    this._connected = false
    /** @type {Map<number, PendingEntry>} */
    this._pending = new Map()
    /** @type {SignalWatch<number>} the pending requests' signals */
    this._signals = new SignalWatch((signal, ids) => this._aborted(signal, ids))
    this._holds = 0
    /** @type {Promise<void> | null} */
    this._closing = null
    /** @type {(() => void) | null} */
    this._closeDone = null
    /** @type {ReturnType<typeof setTimeout> | null} the bound on waiting for a `closed` event (close()) */
    this._closeTimer = null
    /** @type {{ strong: NativeTransport<N, C> | null }} */
    this._holder = { strong: null }
    /** @type {Reader | null} the stdout reader (stdio with JS_READER) */
    this._socket = null
    /** The second step of a hand-over to the Rust reader, for the current reader (attachReader) */
    this._handOver = () => {}
    this._nextId = 1
    /** @type {Array<number | string>} four entries a request: id, deadline, method JSON, params JSON */
    this._queue = []
    this._flushQueued = false
    this._flush = () => this._flushNow()
    /** Whether requests are written by the server's backlog too (stdio), see FLUSH_AT. */
    this._groupByBacklog = false
    /** Requests in `_queue` still pending (not aborted there); the rest of `_pending` is written. */
    this._queuedLive = 0
    this._held = false
    this._releaseQueued = false
    this._releaseIfIdle = () => this._letGo()
    /** @type {N} set by the subclass constructor right after `super()`; never seen as null */
    this._native = /** @type {never} */ (null)
    /** @type {{ _onClientEvent(ev: any[]): void } | null} the client this is the face of, if any */
    this._client = null
    /**
     * What a request's failure becomes (the root's 18.3.4 errors: lib/root-errors.js), applied
     * where the request is rejected: no promise more per request. `wasConnected`: whether the
     * transport was connected when the request was made.
     * @type {((error: unknown, method: string, wasConnected: boolean) => unknown) | undefined}
     */
    this._mapError = undefined
    /** @type {(batch: string) => boolean} `_native.sendRequests`, set by `_bindCalls` */
    this._sendRequests = () => {
      throw new Error('internal: a transport made without _bindCalls()')
    }
    /** @type {((generation: number, chunk: Uint8Array) => string | string[]) | null} a client face's `feed` (null for a transport of its own, whose `feed` takes no generation) */
    this._feedAt = null
  }

  /** After `_native` is set: a client's plain functions (NativeClient.hot), else the methods of a
   * transport of its own (which reads no generation: `_feedAt` stays null). */
  _bindCalls() {
    const n = /** @type {any} */ (this._native)
    const hot = typeof n.hot === 'function' ? n.hot() : null
    this._sendRequests = hot ? hot.sendRequests : (/** @type {string} */ batch) => n.sendRequests(batch)
    this._feedAt = hot ? hot.feed : null
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
  /** @param {MCPRequestHandler | undefined} fn */
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

  /**
   * @template [T=unknown]
   * @param {string} method
   * @param {Record<string, unknown> | null} [params] an object (or array), or nothing
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<T>}
   */
  request(method, params, options) {
    const map = this._mapError
    if (!this._connected) return Promise.reject(map ? map(notConnected(), method, false) : notConnected())
    const signal = options?.signal
    if (signal?.aborted) return Promise.reject(signal.reason)
    const id = this._takeId()
    // [beyond] SPEC 3.4: progress goes to onProgress and/or restarts the deadline; the request's
    // number is the progress token (and its id on the wire, unless requestIdFormat is "string").
    const onProgress = options && typeof options.onProgress === 'function' ? options.onProgress : undefined
    const reset = !!options?.resetTimeoutOnProgress
    let body
    let deadline
    let methodText
    try {
      methodText = methodJson(method)
      body = paramsJson(params, onProgress || reset ? id : undefined)
      deadline = String(timeoutOf(options && options.timeout !== undefined ? options : this.config))
      if (reset) {
        const max = options.maxTotalTimeout
        deadline += `r${max === undefined || max === null ? '' : timeoutOf({ timeout: max })}`
      }
    } catch (e) {
      return Promise.reject(map ? map(e, method, true) : e)
    }
    // Requests made in the same tick go to Rust together: one call, one write.
    this._queue.push(id, deadline, methodText, body)
    this._queuedLive++
    if (!this._flushQueued) {
      this._flushQueued = true
      queueMicrotask(this._flush)
    }
    return new Promise((resolve, reject) => {
      const entry = {
        resolve,
        reject: map ? (/** @type {unknown} */ e) => reject(map(e, method, true)) : reject,
        signal,
        queued: true,
        onProgress,
      }
      this._pending.set(id, entry)
      if (signal) this._watch(signal, id)
      this._hold()
      if (this._queue.length >= FLUSH_AT || (this._groupByBacklog && this._serverWantsMore())) this._flushNow()
    })
  }

  /**
   * Whether the queued requests should go now (stdio, see FLUSH_AT): once they are half as many
   * as the requests the server holds, at least 1; with none there, once they are 2.
   */
  _serverWantsMore() {
    // Over stdio `_pending` holds requests only: those not queued are written and unanswered.
    const open = this._pending.size - this._queuedLive
    return this._queuedLive >= (open > 0 ? Math.max(1, open >> 1) : 2)
  }

  /**
   * @param {AbortSignal} signal
   * @param {number} id
   */
  _watch(signal, id) {
    this._signals.add(signal, id)
  }

  /**
   * @param {AbortSignal} signal
   * @param {number} id
   */
  _unwatch(signal, id) {
    this._signals.delete(signal, id)
  }

  /**
   * @param {AbortSignal} signal
   * @param {number[]} ids the requests that used it
   */
  _aborted(signal, ids) {
    const reason = signal.reason
    for (const id of ids) {
      const entry = this._settle(id)
      if (!entry) continue
      // Still queued: it is simply never sent. Sent: Rust tells the server.
      if (entry.queued) this._queuedLive--
      else this._native.cancel(id, reasonText(reason))
      entry.reject(reason)
    }
  }

  /**
   * The next request number: from 1, passing over the numbers the Rust core numbers its own
   * requests with on a shared transport (src/transport/stdio/mod.rs OWN_IDS_FROM: [2^30, 2^31)),
   * so that ids stay small numbers a server with 32-bit ids reads too.
   */
  _takeId() {
    const id = this._nextId
    this._nextId = id + 1 === RUST_IDS_FROM ? RUST_IDS_END : id + 1
    return id
  }

  _flushNow() {
    this._flushQueued = false
    const q = this._queue
    if (q.length === 0) return
    this._queue = []
    this._queuedLive = 0
    let batch = ''
    const sent = []
    for (let i = 0; i < q.length; i += 4) {
      const id = /** @type {number} */ (q[i])
      const entry = this._pending.get(id)
      if (!entry) continue // aborted before it was sent
      entry.queued = false
      // The id is left out where it is the one after the line before's (src/convert.rs
      // request_line; the first line's is always written). Where written, JSON.stringify, not
      // `${id}`: V8 (Node 20) turns a number into text through its number-to-string cache, whose
      // strings it allocates in the old generation, and with one such string a request its young
      // collections kept ~10x more (bench/NOTES.md, "Young collections").
      const follows = sent.length > 0 && id === sent[sent.length - 1] + 1
      sent.push(id)
      batch += `${follows ? '' : JSON.stringify(id)} ${q[i + 1]} ${q[i + 2]}${q[i + 3]}\n`
    }
    if (batch !== '' && !this._sendRequests(batch)) {
      // The connection just ended; its `closed` event rejects the rest with the details.
      for (const id of sent) {
        const entry = this._settle(id)
        if (entry) entry.reject(transportClosed())
      }
    }
  }

  /**
   * Removes a pending entry with its abort listener; undefined if it had already settled.
   * @param {number} id
   * @returns {PendingEntry | undefined}
   */
  _settle(id) {
    const entry = this._pending.get(id)
    if (!entry) return undefined
    this._pending.delete(id)
    if (entry.signal) this._unwatch(entry.signal, id)
    if (!entry.unheld) this._release()
    return entry
  }

  /** Rejects pending requests, closes (stdio: the shutdown sequence; HTTP: the session DELETE),
   * then calls onClose once. Not connected: returns once a close in progress (if any) has finished. */
  async close() {
    if (!this._connected) {
      if (this._closing) await this._closing
      return
    }
    this._connected = false
    this._queue = []
    this._queuedLive = 0
    this._rejectAll(transportClosed())
    this._hold()
    this._closing = new Promise((resolve) => {
      this._closeDone = resolve
    })
    if (!this._native.close()) {
      // False: the native connection is no longer open. Still connected here means it ended on
      // its own and its `closed` event is on its way; where one always follows (stdio), wait for
      // it — else it arrives after a reconnect and is taken for the new connection's (which was
      // then never closed: found by the fault suite, seed 2276810851). Bounded all the same.
      if (this._closedEventDue()) {
        this._closeTimer = setTimeout(() => this._finishClose(), CLOSED_EVENT_WAIT_MS)
        this._closeTimer.unref?.()
      } else {
        this._finishClose()
      }
    }
    await this._closing
  }

  /** Whether a connection that ended on its own always reports a `closed` event (see close()). */
  _closedEventDue() {
    return false
  }

  _finishClose() {
    if (this._closeTimer) {
      clearTimeout(this._closeTimer)
      this._closeTimer = null
    }
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

  /** @param {Error} error */
  _rejectAll(error) {
    for (const id of [...this._pending.keys()]) {
      const entry = this._settle(id)
      if (entry) entry.reject(error)
    }
  }

  _emitClose() {
    this._call(this.onClose)
  }

  /**
   * Runs a user callback; a throw goes to onError (and never crashes the host).
   * @param {unknown} fn
   * @param {...unknown} args
   */
  _call(fn, ...args) {
    callGuarded(this, fn, ...args)
  }

  /** @param {Batch} batch a JSON array of {@link NativeEvent}s, with raw answers */
  _onEvents(batch) {
    if (typeof batch === 'string' && batch.length === 2) return // "[]"
    for (const ev of readBatch(batch)) this._onEvent(ev)
  }

  /** @param {NativeEvent} ev one event (a manager hands its servers' events over one by one) */
  _onEvent(ev) {
    switch (ev[0]) {
      case K.Result: {
        const entry = this._settle(ev[1])
        if (entry) entry.resolve(ev[2])
        break
      }
      case K.Failed: {
        const entry = this._settle(ev[1])
        if (entry) entry.reject(makeError(ev[2]))
        break
      }
      case K.RawAnswer: {
        // A large answer, as the server wrote it (src/sink.rs): parsed here, once.
        const entry = this._settle(ev[1])
        if (!entry) break
        /** @type {any} */
        let message
        try {
          message = JSON.parse(ev[2])
          if (ev.length > 3) {
            const [, , , tag, paths, strings] = /** @type {[number, number, string, string, (string | number)[][], string[]]} */ (ev)
            putLongStrings(message, tag, paths, strings)
          }
        } catch (err) {
          entry.reject(makeError({ message: `Invalid JSON in the answer: ${/** @type {Error} */ (err).message}`, code: 'MCP_PARSE_ERROR' }))
          break
        }
        entry.resolve(message.result)
        break
      }
      case K.CallerStops: // a long line is arriving: stop reading; the Rust I/O thread reads it from the next turn (handOverLongLines)
        if (this._socket) {
          this._socket.pause()
          setImmediate(this._handOver)
        }
        break
      case K.CallerReads: // it is in: read again
        this._socket?.resume()
        break
      case K.Notification:
        if (ev[1] === 'notifications/progress' && ev[2]) {
          const entry = this._pending.get(ev[2].progressToken)
          if (entry?.onProgress) {
            const { progress, total, message } = ev[2]
            /** @type {ProgressInfo} */
            const info = { progress }
            if (total !== undefined) info.total = total
            if (message !== undefined) info.message = message
            this._call(entry.onProgress, info)
          }
        }
        this._call(this.onNotification, ev[1], ev[2])
        break
      case K.Request:
        this._answer(ev[1], ev[2], ev[3])
        break
      case K.Stderr:
        this._call(this._onStderr, ev[1])
        break
      case K.Error:
        if (this._connected) this._call(this.onError, makeError(ev[1]))
        break
      case K.Closed:
        this._onClosed(ev[1])
        break
      default:
        // A client's own events (src/sink.rs), when this is its face.
        this._client?._onClientEvent(ev)
    }
  }

  /** @param {ErrorDescriptor | null} desc */
  _onClosed(desc) {
    if (this._finishClose()) return
    // Closed on its own.
    const wasConnected = this._connected
    this._connected = false
    this._dropReader()
    this._rejectAll(desc ? makeError(desc) : transportClosed())
    if (wasConnected) this._emitClose()
  }

  /** Answers a server→client request. Whatever the handler does, the server gets an answer
   * (`-32603` when it cannot be sent as given) and nothing escapes to the host.
   * @param {string | number} id
   * @param {string} method
   * @param {unknown} params */
  async _answer(id, method, params) {
    let result
    let error
    try {
      const handler = this._onRequest
      if (typeof handler !== 'function') throw methodNotFound()
      const value = await handler(method, params)
      try {
        result = JSON.stringify(value ?? {}) ?? '{}'
      } catch (err) {
        reportTo(this, undefined, err)
        error = JSON.stringify({
          code: -32603,
          message: `Request handler's answer could not be sent: ${safeString(/** @type {any} */ (err)?.message)}`,
        })
      }
    } catch (err) {
      error = errorReply(this, err)
    }
    try {
      this._native.reply(JSON.stringify(id), error === undefined ? result : null, error ?? null)
    } catch (err) {
      reportTo(this, undefined, err)
    }
  }
}

/**
 * Request params as JSON: an object (or array) or nothing; `progressToken` set when given.
 * @param {Record<string, unknown> | null | undefined} params checked here: JS callers may pass anything
 * @param {number} [progressToken]
 * @returns {string}
 */
function paramsJson(params, progressToken) {
  if (params !== undefined && params !== null && typeof params !== 'object') {
    throw invalidParams(`must be an object, not ${typeof params}`)
  }
  let p = params ?? {}
  if (progressToken !== undefined) p = { ...p, _meta: { ...(p._meta || {}), progressToken } }
  let body
  let plain
  try {
    // An array, or an object with Object.prototype and no toJSON, is written as '[…]' or '{…}':
    // only other objects (toJSON, boxed primitives, raw JSON) have the text's first character
    // read. Reading it makes V8 flatten the text it built in parts, ~45 ns a request (Node 20).
    // (Read before JSON.stringify, which may run a toJSON that changes the object; a text that is
    // not '{…}'/'[…]' all the same fails its request in Rust, src/convert.rs request_line.)
    plain = typeof p.toJSON !== 'function' && (Array.isArray(p) || Object.getPrototypeOf(p) === Object.prototype)
    body = JSON.stringify(p)
  } catch (err) {
    throw invalidParams(safeString(/** @type {any} */ (err)?.message))
  }
  if (typeof body !== 'string' || (!plain && body[0] !== '{' && body[0] !== '[')) throw invalidParams('must serialize to a JSON object')
  return body
}

let lastMethod = ''
let lastMethodJson = '""'
/**
 * A method name as JSON text; the last one is kept (a client's calls are mostly one method, and
 * a JSON.stringify costs ~40 ns).
 * @param {unknown} method
 */
function methodJson(method) {
  const m = String(method)
  if (m !== lastMethod) {
    lastMethodJson = JSON.stringify(m)
    lastMethod = m
  }
  return lastMethodJson
}

/**
 * MCP transport over a child process's stdin/stdout (newline-delimited JSON).
 * @extends {NativeTransport<NativeStdio, MCPStdioServerConfig>}
 * @implements {DeclaredStdioTransport} the declaration users see (index.d.ts)
 */
class StdioTransport extends NativeTransport {
  /**
   * @param {MCPStdioServerConfig} config
   * @param {(onEvents: (batch: Batch) => void) => any} [makeNative] internal: a client's face
   */
  constructor(config, makeNative) {
    super(config)
    this._native = makeNative ? makeNative(this._eventHandler()) : new native.NativeStdio(this._eventHandler())
    this._bindCalls()
    this._groupByBacklog = true
  }

  /** Server process id while connected. [beyond] */
  get pid() {
    return this._connected ? this._native.pid : null
  }

  get onStderr() {
    return this._onStderr
  }
  /** @param {((chunk: string) => void) | undefined} fn */
  set onStderr(fn) {
    this._onStderr = fn
    this._syncListeners()
  }

  /** The owner reports every end with one `closed` event (src/transport/stdio/owner.rs). */
  _closedEventDue() {
    return true
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
    const config = nativeConfig(this.config)
    installExitHook()
    this._syncListeners()
    const err = this._native.connect(config)
    if (err) throw makeError(err)
    // Not null: the connect above succeeded with `callerReadsStdout`, and the descriptor is taken once.
    if (JS_READER) attachReader(this, /** @type {number} */ (this._native.takeStdoutFd()))
    this._connected = true
  }

  /**
   * @param {string} method
   * @param {Record<string, unknown> | null} [params]
   * @returns {Promise<void>}
   */
  async notify(method, params) {
    if (!this._connected) throw notConnected()
    const body = paramsJson(params)
    if (!this._native.notify(String(method), body)) throw transportClosed()
  }
}

/**
 * Whether `err` is a request refused with HTTP 401 or 403 (a Rust `Error::Http`, src/errors.rs).
 * Rust reports a status only for a refused POST (or a refused legacy stream): never once the
 * server accepted the request (an SSE reply whose resumption is refused fails as the lost answer,
 * src/transport/http/sse.rs), so a request retried after such a refusal was never accepted.
 * @param {unknown} err
 */
function isAuthRefusal(err) {
  const outer = /** @type {{ code?: unknown, status?: unknown, cause?: unknown } | null | undefined} */ (err)
  // At the root the package's error is the `cause` of 18.3.4's (lib/root-errors.js).
  const e = /** @type {{ code?: unknown, status?: unknown } | null | undefined} */ (outer?.code === 'MCP_HTTP_ERROR' ? outer : outer?.cause)
  return e?.code === 'MCP_HTTP_ERROR' && (e.status === 401 || e.status === 403)
}

/**
 * Whether `value` is an object of strings (what `onAuthError` may resolve to); never throws.
 * @param {unknown} value
 * @returns {value is Record<string, string>}
 */
function isHeaderObject(value) {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  try {
    return Object.values(value).every((v) => typeof v === 'string')
  } catch {
    return false
  }
}

/**
 * MCP transport over Streamable HTTP (POST per message; JSON or SSE replies).
 * @extends {NativeTransport<NativeHttp, MCPHttpConfig>}
 * @implements {DeclaredHttpTransport} the declaration users see (index.d.ts)
 */
class HttpTransport extends NativeTransport {
  /**
   * @param {MCPHttpConfig} config
   * @param {(onEvents: (batch: Batch) => void) => any} [makeNative] internal: a client's face
   */
  constructor(config, makeNative) {
    super(config)
    this.url = config?.url
    this._listening = false
    /** @type {(() => Promise<Record<string, string> | null>) | undefined} see `onAuthError` */
    this._onAuthError = undefined
    /** Counts the headers `onAuthError` gave: a refusal of a request made before the latest
     * ones is retried with them without asking again. */
    this._authEpoch = 0
    /** @type {Promise<boolean> | null} the `onAuthError` call in flight, which a burst of refusals shares */
    this._authAsk = null
    this._native = makeNative ? makeNative(this._eventHandler()) : new native.NativeHttp(this._eventHandler())
    this._bindCalls()
  }

  /**
   * The agent's hook (18.3.4): new headers after a 401/403 refusal, for one more try — of a
   * request or notification here, and of a refused SSE resumption in Rust (which asks through
   * the refresher registered below and then resumes with the new headers).
   * @returns {(() => Promise<Record<string, string> | null>) | undefined}
   */
  get onAuthError() {
    return this._onAuthError
  }

  set onAuthError(fn) {
    this._onAuthError = fn
    // A weak reference: the refresher lives in Rust, which this object owns; a strong one would
    // keep both alive forever.
    const self = new WeakRef(this)
    this._native.setHeadersRefresher(
      typeof fn === 'function'
        ? () => {
            const transport = self.deref()
            return transport ? transport._newHeaders(undefined).then((applied) => String(applied)) : Promise.resolve('false')
          }
        : null,
    )
  }

  /**
   * Opens the GET stream for server-initiated messages (notifications to onNotification, requests
   * answered). Resolves when the stream ends for good (405 or another refusal, too many failed
   * reconnects) or close() stops it; at once when not connected or already listening.
   * @param {{ keepAlive?: boolean }} [options]
   * @returns {Promise<void>}
   */
  startSSEListener(options) {
    if (!this._connected || this._listening) return Promise.resolve()
    const id = this._takeId()
    // [beyond] keepAlive: false — the open stream does not keep the event loop alive by itself
    // (MCPClient's listener: a script that forgets to close still exits).
    const keepAlive = !(options && options.keepAlive === false)
    return new Promise((resolve) => {
      const done = () => {
        this._listening = false
        resolve()
      }
      this._pending.set(id, { resolve: done, reject: done, signal: undefined, queued: false, unheld: !keepAlive })
      if (keepAlive) this._hold()
      this._listening = true
      if (!this._native.startListener(id)) {
        const entry = this._settle(id)
        if (entry) entry.resolve()
      }
    })
  }

  /**
   * A notification as exchange `id` (a client's face sends it through its NativeClient).
   * @param {number} id @param {string} method @param {string} body @param {number} timeout
   * @returns {string | null | undefined}
   */
  _notifyNative(id, method, body, timeout) {
    return this._native.notify(id, method, body, timeout)
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
    const err = this._native.connect(nativeConfig(this._transportConfig()))
    if (err) throw makeError(err)
    this._syncListeners()
    this._connected = true
  }

  /** The config the native transport is made with (the legacy transport's adds `legacyOnly`). */
  _transportConfig() {
    return this.config
  }

  /**
   * A request; with `onAuthError` set, a 401/403 refusal gets new headers and one more try.
   * @template [T=unknown]
   * @param {string} method
   * @param {Record<string, unknown> | null} [params]
   * @param {MCPRequestOptions} [options]
   * @returns {Promise<T>}
   */
  request(method, params, options) {
    /** @type {Promise<T>} */
    const sent = super.request(method, params, options)
    // Without the hook, the hot path as it was: no extra promise.
    if (typeof this.onAuthError !== 'function') return sent
    const epoch = this._authEpoch
    return sent.catch((err) =>
      this._afterRefusal(err, epoch, options, () => /** @type {Promise<T>} */ (super.request(method, params, options))),
    )
  }

  /**
   * A notification; with `onAuthError` set, a 401/403 refusal gets new headers and one more try.
   * @param {string} method
   * @param {Record<string, unknown> | null} [params]
   * @returns {Promise<void>}
   */
  notify(method, params) {
    const sent = this._notifyOnce(method, params)
    if (typeof this.onAuthError !== 'function') return sent
    const epoch = this._authEpoch
    return sent.catch((err) => this._afterRefusal(err, epoch, undefined, () => this._notifyOnce(method, params)))
  }

  /**
   * After a failure: a 401/403 refusal is sent once more (by `again`, whose outcome is final)
   * with the headers `onAuthError` gives — or, when it was made before the latest headers
   * arrived (another refusal's call), with those, without asking again. Anything else, or no
   * headers, rethrows `err`.
   * @template T
   * @param {unknown} err
   * @param {number} epoch `_authEpoch` when the request was made
   * @param {MCPRequestOptions | undefined} options its deadline and signal
   * @param {() => Promise<T>} again
   * @returns {Promise<T>}
   */
  async _afterRefusal(err, epoch, options, again) {
    if (!isAuthRefusal(err)) throw err
    if (epoch === this._authEpoch && !(await this._newHeaders(options))) throw err
    return again()
  }

  /**
   * Asks `onAuthError` for headers (one call for every refusal that comes while it runs) and
   * applies them; false when there are none to apply. Rejects only with the caller's abort
   * reason (the call goes on for the others).
   * @param {MCPRequestOptions | undefined} options
   * @returns {Promise<boolean>}
   */
  _newHeaders(options) {
    let asking = this._authAsk
    if (!asking) {
      let wait = DEFAULT_TIMEOUT
      try {
        wait = timeoutOf(options && options.timeout !== undefined ? options : this.config)
      } catch {
        // the request itself was sent with it: unreachable
      }
      const ask = this._askForHeaders(wait > 0 ? Math.min(wait, AUTH_ERROR_WAIT_MAX_MS) : AUTH_ERROR_WAIT_MAX_MS)
      asking = ask.then((applied) => {
        this._authAsk = null
        return applied
      })
      this._authAsk = asking
    }
    const signal = options?.signal
    if (!signal) return asking
    if (signal.aborted) return Promise.reject(signal.reason)
    const shared = asking
    return new Promise((resolve, reject) => {
      const onAbort = () => reject(signal.reason)
      signal.addEventListener('abort', onAbort, { once: true })
      shared.then((applied) => {
        signal.removeEventListener('abort', onAbort)
        resolve(applied)
      })
    })
  }

  /**
   * One `onAuthError` call, awaited at most `ms`: its headers replace the configured ones here
   * and in Rust (the same checks as the config's). A throw or rejection, a late answer, anything
   * but an object of strings or headers Rust refuses count as none (told to `onError`, except a
   * plain `null`). Never rejects.
   * @param {number} ms
   * @returns {Promise<boolean>}
   */
  async _askForHeaders(ms) {
    const fn = this.onAuthError
    if (typeof fn !== 'function') return false
    /** @type {ReturnType<typeof setTimeout> | undefined} */
    let timer
    const late = Symbol('late')
    /** @type {Promise<typeof late>} */
    const timedOut = new Promise((resolve) => {
      timer = setTimeout(resolve, ms, late)
    })
    /** @type {unknown} */
    let headers
    try {
      // A throw or a rejection goes to onError (callGuarded), and counts as no headers.
      headers = await Promise.race([callGuarded(this, () => fn.call(this)), timedOut])
    } catch {
      return false
    } finally {
      clearTimeout(timer)
    }
    if (headers === late) {
      reportTo(this, undefined, new Error(`onAuthError did not answer within ${ms}ms`))
      return false
    }
    if (headers === null || headers === undefined) return false
    if (!isHeaderObject(headers)) {
      reportTo(this, undefined, new Error('onAuthError must resolve to an object of strings or null'))
      return false
    }
    const refused = this._native.setHeaders(JSON.stringify(Object.entries(headers)))
    if (refused) {
      reportTo(this, undefined, makeError(refused))
      return false
    }
    this.config = { ...this.config, headers: { ...headers } }
    this._authEpoch++
    return true
  }

  /**
   * @param {string} method
   * @param {Record<string, unknown> | null} [params]
   * @returns {Promise<void>}
   */
  _notifyOnce(method, params) {
    if (!this._connected) return Promise.reject(notConnected())
    let body
    let timeout
    try {
      body = paramsJson(params)
      timeout = timeoutOf(this.config)
    } catch (e) {
      return Promise.reject(e)
    }
    const id = this._takeId()
    return new Promise((resolve, reject) => {
      this._pending.set(id, { resolve: () => resolve(), reject, signal: undefined, queued: false })
      this._hold()
      const err = this._notifyNative(id, String(method), body, timeout)
      if (err) {
        const entry = this._settle(id)
        if (entry) entry.reject(makeError(err))
      }
    })
  }
}

/** @param {MCPStdioServerConfig} config */
function createStdioTransport(config) {
  return connected(new StdioTransport(config))
}

/** @param {MCPHttpConfig} config */
function createHttpTransport(config) {
  return connected(new HttpTransport(config))
}

/**
 * `transport`, once connected (what every `create…Transport` returns).
 * @template {{ connect(): Promise<void> }} T
 * @param {T} transport
 * @returns {Promise<T>}
 */
async function connected(transport) {
  await transport.connect()
  return transport
}

exports.StdioTransport = StdioTransport
exports.createStdioTransport = createStdioTransport
exports.HttpTransport = HttpTransport
exports.createHttpTransport = createHttpTransport
exports.connected = connected
// For client.js and manager.js (not re-exported by index.js).
exports.makeError = makeError
exports.notConnected = notConnected
exports.transportClosed = transportClosed
exports.methodNotFound = methodNotFound
exports.timeoutOf = timeoutOf
exports.callGuarded = callGuarded
exports.invalidConfig = invalidConfig
exports.toError = toError
exports.swallow = swallow
exports.safeString = safeString
exports.messageOf = messageOf
exports.nativeConfig = nativeConfig
exports.installExitHook = installExitHook
exports.attachReader = attachReader
exports.JS_READER = JS_READER
exports.readBatch = readBatch
exports.SignalWatch = SignalWatch
