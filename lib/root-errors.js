'use strict'
// The errors of the root (SPEC 11.3): what the package's transports report (lib/core.js
// `makeError`: plain `Error`s with a string `code`), turned at the root's entry points into what
// the agent's 18.3.4 transports throw in the same situation — `MCPTransportError` with its
// transport, stage, failure class, retryable flag, code, redacted data and trace id (stdio and
// Streamable HTTP), or the legacy HTTP+SSE transport's plain `Error`s. The original error is the
// `cause`; its other members (`rpcCode`, `status`, `exitCode`, `signal`, `stderr`, `timeout`, …)
// stay; its string `code` stays where 18.3.4 sets none. The 12.7 profile never comes here.

const fs = require('node:fs')
const nodePath = require('node:path')
const { MCPTransportError, createMCPJsonRpcError, normalizeMCPTransportError, safeTraceId } = require('./errors.js')

/** @typedef {'stdio' | 'http' | 'sse'} TransportKind the config's `type` (`sse`: the legacy HTTP+SSE transport) */
/** @typedef {'connect' | 'send' | 'receive' | 'decode' | 'protocol'} Stage */
/**
 * What is known where the error surfaced.
 * @typedef {object} AgentErrorContext
 * @property {TransportKind} kind
 * @property {'connect' | 'request' | 'notify'} phase the connect (spawn, `initialize`,
 *   `notifications/initialized`), a request, or a notification
 * @property {string} [method] the request's or notification's method
 * @property {boolean} [wasConnected] whether the transport was connected when the call began
 * @property {unknown} [config] the server's config (a failed spawn is told as Bun tells it, which
 *   depends on its `env.PATH`)
 */

/** Codes of the package's transport and protocol errors (README "Errors"); others pass unchanged. */
const TRANSPORT_CODES = new Set([
  'MCP_NOT_CONNECTED',
  'MCP_TRANSPORT_CLOSED',
  'MCP_TIMEOUT',
  'MCP_RPC_ERROR',
  'MCP_MESSAGE_TOO_LARGE',
  'MCP_IO_ERROR',
  'MCP_BACKLOG',
  'MCP_HTTP_ERROR',
  'MCP_SESSION_EXPIRED',
  'MCP_NO_RESPONSE',
  'MCP_PARSE_ERROR',
  'MCP_INTERNAL',
  'MCP_UNSUPPORTED_PROTOCOL',
])

/** Members of the original error that the mapped one does not take over. */
const NOT_CARRIED = new Set(['message', 'stack', 'name', 'cause', 'code', 'data', 'transport', 'stage', 'failure', 'retryable', 'traceId'])

/** Bun's text for a refused TCP connection (its `fetch`, code `ConnectionRefused`). */
const BUN_REFUSED = 'Unable to connect. Is the computer able to access the url?'

/** The descriptions Bun puts in a failed `posix_spawn`'s message (`ENOENT: no such file …`). */
/** @type {Record<string, string>} */
const SPAWN_TEXT = {
  ENOENT: 'no such file or directory',
  EACCES: 'permission denied',
  ENOTDIR: 'not a directory',
  ENAMETOOLONG: 'name too long',
  ELOOP: 'too many symbolic links encountered',
  EPERM: 'operation not permitted',
  EMFILE: 'too many open files',
  ENFILE: 'file table overflow',
  E2BIG: 'argument list too long',
  ENOMEM: 'not enough memory',
  ETXTBSY: 'text file is busy',
  EAGAIN: 'resource temporarily unavailable',
}

/**
 * The transport a config names: `stdio` unless `type` says `http` or `sse`.
 * @param {unknown} config
 * @returns {TransportKind}
 */
function transportKindOf(config) {
  const type = /** @type {any} */ (config)?.type
  return type === 'http' ? 'http' : type === 'sse' ? 'sse' : 'stdio'
}

/**
 * Whether `command` (no slash) is an executable file on the `PATH` the server is started with
 * (the config's `env` over the process's, as 18.3.4 hands Bun).
 * @param {string} command
 * @param {AgentErrorContext['config']} config
 */
function onPath(command, config) {
  const env = /** @type {{ env?: Record<string, unknown> } | undefined} */ (config)?.env
  const value = typeof env?.PATH === 'string' ? env.PATH : process.env.PATH
  for (const dir of String(value ?? '').split(nodePath.delimiter)) {
    if (!dir) continue
    try {
      const file = nodePath.join(dir, command)
      if (fs.statSync(file).isFile()) {
        fs.accessSync(file, fs.constants.X_OK)
        return true
      }
    } catch {
      // not here
    }
  }
  return false
}

/**
 * A failed spawn as Bun (18.3.4's `Bun.spawn`) reports it: a command without a slash that is not
 * on `PATH` is `Executable not found in $PATH: "<cmd>"` (ENOENT), any other failure
 * `<ERRNO>: <text>, posix_spawn '<cmd>'`. Undefined on Windows, where 18.3.4 resolves and runs
 * commands otherwise (11.6): the package's text stays.
 * @param {string} command
 * @param {string} errno
 * @param {AgentErrorContext['config']} config
 * @returns {{ message: string, code: string } | undefined}
 */
function bunSpawnFailure(command, errno, config) {
  if (process.platform === 'win32') return undefined
  if (!command.includes('/') && !onPath(command, config)) return { message: `Executable not found in $PATH: "${command}"`, code: 'ENOENT' }
  return { message: `${errno}: ${SPAWN_TEXT[errno] ?? 'unknown error'}, posix_spawn '${command}'`, code: errno }
}

/** @param {string} message whether a failed fetch is a refused connection */
function refused(message) {
  return /^fetch failed\b/i.test(message) && /connection refused|actively refused/i.test(message)
}

/**
 * An `MCPTransportError` for `original`: `code` is 18.3.4's when it sets one, else the package's;
 * the original's other members are carried over.
 * @param {Error & Record<string, unknown>} original
 * @param {ConstructorParameters<typeof MCPTransportError>[0]} o
 */
function make(original, o) {
  const code = o.code ?? (typeof original.code === 'string' ? original.code : undefined)
  return carry(new MCPTransportError({ ...o, code, cause: original }), original)
}

/**
 * @template {Error} T
 * @param {T} mapped
 * @param {Error & Record<string, unknown>} original
 * @returns {T}
 */
function carry(mapped, original) {
  const target = /** @type {Record<string, unknown>} */ (/** @type {unknown} */ (mapped))
  for (const key of Object.keys(original)) {
    if (!NOT_CARRIED.has(key) && !(key in target)) target[key] = original[key]
  }
  return mapped
}

/**
 * 18.3.4's generic rule (`normalizeMCPTransportError` at `stage`), the original's members kept.
 * @param {Error & Record<string, unknown>} original
 * @param {TransportKind} kind
 * @param {Stage} stage
 */
function normalized(original, kind, stage) {
  const traceId = typeof original.traceId === 'string' ? original.traceId : undefined
  return carry(normalizeMCPTransportError(original, { transport: kind === 'http' ? 'http' : 'stdio', stage, traceId }), original)
}

/**
 * The error 18.3.4 surfaces where the package's `error` surfaced (see the file's header);
 * anything that is not one of the package's transport errors (an abort reason, a caller's own
 * error, an `MCPTransportError` already) is returned as it is.
 * @param {unknown} error
 * @param {AgentErrorContext} ctx
 * @returns {unknown}
 */
function toAgentError(error, ctx) {
  if (!(error instanceof Error) || error instanceof MCPTransportError || error.name !== 'Error') return error
  const e = /** @type {Error & Record<string, unknown>} */ (error)
  const code = e.code
  const message = e.message
  const spawn =
    ctx.phase === 'connect' && typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? /^spawn (.+) E[A-Z0-9]+$/.exec(message) : null
  if (!spawn && !(typeof code === 'string' && TRANSPORT_CODES.has(code))) return error
  const kind = ctx.kind
  if (kind === 'sse') return legacyError(e)
  const transport = kind
  if (spawn) {
    const command = typeof e.path === 'string' ? e.path : spawn[1]
    const bun = bunSpawnFailure(command, /** @type {string} */ (code), ctx.config)
    if (!bun) return normalized(e, kind, 'connect')
    const shaped = normalizeMCPTransportError(Object.assign(new Error(bun.message), { code: bun.code }), { transport, stage: 'connect' })
    return make(e, {
      transport,
      stage: 'connect',
      failure: shaped.failure,
      message: bun.message,
      retryable: shaped.retryable,
      code: bun.code,
    })
  }
  const traceId = safeTraceId(e.traceId)
  switch (code) {
    case 'MCP_RPC_ERROR': {
      const rpcCode = /** @type {any} */ (e.rpcCode)
      // 18.3.4's HTTP transport checks a JSON answer's error member (a number `code`).
      if (kind === 'http' && typeof rpcCode !== 'number') {
        return make(e, {
          transport,
          stage: 'decode',
          failure: 'malformed_response',
          message: 'Malformed JSON-RPC error response',
          retryable: false,
          traceId,
        })
      }
      const prefix = `MCP error ${String(rpcCode)}: `
      const text = message.startsWith(prefix) ? message.slice(prefix.length) : message
      const mapped = createMCPJsonRpcError(transport, { code: rpcCode, message: text, data: e.data }, traceId)
      if (mapped.code === undefined) /** @type {any} */ (mapped).code = code
      Object.defineProperty(mapped, 'cause', { value: e, configurable: true, writable: true })
      return carry(mapped, e)
    }
    case 'MCP_NOT_CONNECTED':
      return make(e, { transport, stage: 'connect', failure: 'closed', message: 'Transport not connected', retryable: true })
    case 'MCP_TRANSPORT_CLOSED':
      if (ctx.wasConnected === false) {
        return make(e, { transport, stage: 'connect', failure: 'closed', message: 'Transport not connected', retryable: true })
      }
      if (kind === 'stdio' && ctx.phase === 'notify') return notificationLost(e, ctx.method)
      // A server process that ended (or closed its stdout) under pending requests: the package
      // knows how it ended (`exitCode`, `signal`); 18.3.4 tells it as the end of its stdout.
      if (kind === 'stdio' && (ctx.phase === 'connect' || 'exitCode' in e || 'signal' in e)) {
        return make(e, {
          transport,
          stage: 'receive',
          failure: 'eof',
          message: 'MCP subprocess closed stdout before responding',
          retryable: true,
        })
      }
      return make(e, { transport, stage: 'receive', failure: 'closed', message: 'Transport closed', retryable: true })
    case 'MCP_TIMEOUT': {
      const m = /^(Request|SSE response|Notify) timeout after (\d+)ms$/.exec(message)
      if (!m) return normalized(e, kind, 'receive')
      // 18.3.4's HTTP transport: before the answer's headers the stage is `send`; an SSE answer
      // that does not bring the result in time is its request's timeout, at `receive`.
      const stage = kind === 'http' && m[1] !== 'SSE response' ? 'send' : 'receive'
      const text = m[1] === 'Notify' ? message : `Request timeout after ${m[2]}ms`
      return make(e, { transport, stage, failure: 'timeout', message: text, retryable: false, traceId })
    }
    case 'MCP_HTTP_ERROR':
    case 'MCP_SESSION_EXPIRED': {
      const status = typeof e.status === 'number' ? e.status : Number(/^HTTP (\d{3}):/.exec(message)?.[1])
      if (!/^HTTP \d{3}:/.test(message) || !Number.isInteger(status)) return normalized(e, kind, 'receive')
      const retryable = status === 404 || status === 502 || status === 503
      return make(e, { transport, stage: 'receive', failure: 'http_status', message, retryable, code: status, traceId })
    }
    case 'MCP_NO_RESPONSE':
      return make(e, { transport, stage: 'receive', failure: 'eof', message, retryable: false, traceId })
    case 'MCP_PARSE_ERROR':
      return make(e, { transport, stage: 'decode', failure: 'malformed_response', message, retryable: false, traceId })
    case 'MCP_IO_ERROR':
      // The package's stdio transport: stdin broke under a notification (15.8.1: between
      // `initialize` and `notifications/initialized` it fails the connect).
      if (kind === 'stdio' && /^write (?:E[A-Z]+|failed)$/.test(message)) {
        return notificationLost(e, ctx.phase === 'connect' ? 'notifications/initialized' : ctx.method)
      }
      if (kind === 'http' && /^HTTP \d{3} resuming MCP SSE stream: /.test(message)) return resumeError(e)
      if (kind === 'http' && refused(message)) {
        return make(e, {
          transport,
          stage: 'connect',
          failure: 'connect',
          message: BUN_REFUSED,
          retryable: true,
          code: 'ConnectionRefused',
        })
      }
      return normalized(e, kind, kind === 'http' && !/^(?:reading the response|SSE stream)/.test(message) ? 'send' : 'receive')
    case 'MCP_BACKLOG':
      return normalized(e, kind, 'send')
    case 'MCP_MESSAGE_TOO_LARGE':
      return normalized(e, kind, 'receive')
    default:
      return normalized(e, kind, 'protocol')
  }
}

/**
 * 18.3.4's error of a refused SSE resumption (a plain `Error` of its own class, which its
 * request retry never sends again: the server accepted the request); the package's members kept.
 */
class SSEResumeError extends Error {}

/**
 * @param {Error & Record<string, unknown>} original
 * @returns {Error}
 */
function resumeError(original) {
  return carry(new SSEResumeError(original.message, { cause: original }), original)
}

/**
 * 18.3.4's stdio notification that could not be written: the transport is closed.
 * @param {Error & Record<string, unknown>} original
 * @param {string | undefined} method
 */
function notificationLost(original, method) {
  return make(original, {
    transport: 'stdio',
    stage: 'send',
    failure: 'eof',
    message: `Transport closed while sending notification "${method ?? 'notifications/initialized'}"`,
    retryable: true,
  })
}

/**
 * The legacy HTTP+SSE transport of 18.3.4 throws plain `Error`s, whose messages the package's
 * already are; only a refused connection reads as Bun's `fetch` tells it.
 * @param {Error & Record<string, unknown>} e
 */
function legacyError(e) {
  if (e.code !== 'MCP_IO_ERROR' || !refused(e.message)) return e
  return Object.assign(new Error(BUN_REFUSED, { cause: e }), { code: 'ConnectionRefused' })
}

/**
 * The text of a failed connect as 18.3.4 reports it (the manager's `errors`, its `failed` status
 * events and `waitForStartup`): the message of `toAgentError` for the package's text.
 * @param {string} message
 * @param {unknown} config the server's config
 */
function agentConnectFailureText(message, config) {
  if (typeof message !== 'string') return message
  const spawn = /^spawn .+ (E[A-Z0-9]+)$/.exec(message)
  /** @type {string | undefined} */
  let code = spawn?.[1]
  if (!code) {
    if (message === 'Transport closed') code = 'MCP_TRANSPORT_CLOSED'
    else if (/^write (?:E[A-Z]+|failed)$/.test(message) || refused(message)) code = 'MCP_IO_ERROR'
    else return message
  }
  const mapped = toAgentError(Object.assign(new Error(message), { code }), {
    kind: transportKindOf(config),
    phase: 'connect',
    config,
  })
  return mapped instanceof Error ? mapped.message : message
}

/** Marks a transport whose calls are already mapped. */
const MAPPED = Symbol('mcp-native.agentErrors')

/**
 * Replaces `target[key]` (a method) by `wrap(original)`, as an own property that is not listed.
 * @param {any} target
 * @param {string} key
 * @param {(original: Function) => Function} wrap
 */
function replace(target, key, wrap) {
  const original = target?.[key]
  if (typeof original !== 'function') return
  Object.defineProperty(target, key, { value: wrap(original), configurable: true, writable: true, enumerable: false })
}

/**
 * A promise of `run()` (a throw becomes a rejection) whose failure is mapped by `map`.
 * @param {() => unknown} run
 * @param {(error: unknown) => unknown} map
 * @returns {Promise<any>}
 */
function mapped(run, map) {
  /** @type {Promise<unknown>} */
  let answer
  try {
    answer = Promise.resolve(run())
  } catch (error) {
    answer = Promise.reject(error)
  }
  return answer.then(undefined, (error) => {
    throw map(error)
  })
}

/**
 * Makes a connection of this package fail with 18.3.4's errors, as the agent's transports do, once
 * per transport object: its transport's `request` and `notify` (callers use them directly), and,
 * when it is a client's face, the client's waiting for its connection and its paged lists (the
 * function API: `listTools`, `callTool`, … go through the client).
 * @param {any} transport a connection's `transport`
 * @param {unknown} config the server's config (its `type`)
 */
function mapTransportErrors(transport, config) {
  if (!transport || typeof transport !== 'object' || transport[MAPPED]) return
  Object.defineProperty(transport, MAPPED, { value: true })
  const kind = transportKindOf(config)
  if ('_mapError' in transport) {
    // The package's transports map where they reject (lib/core.js): no promise more per request.
    transport._mapError = (/** @type {unknown} */ error, /** @type {string} */ method, /** @type {boolean} */ wasConnected) =>
      toAgentError(error, { kind, phase: 'request', method, wasConnected })
  } else {
    replace(
      transport,
      'request',
      (request) =>
        /**
         * @this {any}
         * @param {string} method
         * @param {Record<string, unknown>} [params]
         * @param {any} [options]
         */
        function (method, params, options) {
          const wasConnected = this.connected !== false
          return mapped(
            () => request.call(this, method, params, options),
            (error) => toAgentError(error, { kind, phase: 'request', method, wasConnected }),
          )
        },
    )
  }
  replace(
    transport,
    'notify',
    (notify) =>
      /**
       * @this {any}
       * @param {string} method
       * @param {Record<string, unknown>} [params]
       */
      function (method, params) {
        return mapped(
          () => notify.call(this, method, params),
          (error) => toAgentError(error, { kind, phase: 'notify', method }),
        )
      },
  )
  const client = transport._client
  if (!client || typeof client !== 'object') return
  // A request made while the client is not connected waits here (or fails at once): the
  // transport was not connected when it began.
  replace(
    client,
    '_whenConnected',
    (whenConnected) =>
      /** @this {any} @param {any} [options] */
      function (options) {
        return mapped(
          () => whenConnected.call(this, options),
          (error) => toAgentError(error, { kind, phase: 'request', wasConnected: false }),
        )
      },
  )
  replace(
    client,
    '_listAll',
    (listAll) =>
      /** @this {any} @param {string} method @param {string} key @param {any} [options] */
      function (method, key, options) {
        const wasConnected = transport.connected !== false
        return mapped(
          () => listAll.call(this, method, key, options),
          (error) => toAgentError(error, { kind, phase: 'request', method, wasConnected }),
        )
      },
  )
}

module.exports = { toAgentError, agentConnectFailureText, mapTransportErrors, transportKindOf }
