'use strict'
// mcp-native/json-rpc: the reference's one-shot HTTP helpers, `callMCP` and `parseSSE`.
//
// These stay in JavaScript on purpose: their contract is JavaScript's own behaviour (`fetch`'s
// statusText, `JSON.parse`'s SyntaxError, truthiness of the first parsed value), which a port
// could only imitate. Connections that are kept (transports) are Rust's job.

/** @typedef {import('../index.js').CallMCPOptions} CallMCPOptions */
/** @typedef {import('../index.js').MCPError} MCPError */

let seq = 0
function randomId() {
  return Math.random().toString(36).slice(2) + (++seq).toString(36) + Date.now().toString(36)
}

/**
 * Parses a (possibly SSE-framed) MCP HTTP response body: the first truthy JSON value of a
 * `data: ` line (`[DONE]` skipped; an invalid one throws SyntaxError), else the whole text as
 * JSON, else null.
 * @param {string} text
 * @returns {unknown}
 */
function parseSSE(text) {
  for (const line of String(text).split('\n')) {
    if (!line.startsWith('data: ')) continue
    const data = line.slice(6).trim()
    if (data === '[DONE]') continue
    const value = JSON.parse(data)
    if (value) return value
  }
  try {
    return JSON.parse(text)
  } catch {
    return null
  }
}

/**
 * @param {number} ms
 * @returns {MCPError}
 */
function timeoutError(ms) {
  const err = /** @type {MCPError} */ (new Error(`Request timeout after ${ms}ms`))
  err.code = 'MCP_TIMEOUT'
  err.timeout = ms
  return err
}

/** [fix] SPEC 4: the reference had no timeout, so a silent host hung the caller forever. */
const DEFAULT_TIMEOUT_MS = 60000

/**
 * Header values are checked here, naming only the header: fetch's own message would quote the
 * value, which may be a secret.
 * @param {Record<string, unknown>} headers as given: JS callers may pass any values
 */
function checkHeaders(headers) {
  for (const [name, value] of Object.entries(headers)) {
    const text = String(value)
    if (/[\r\n]/.test(text)) throw configError(`header "${name}" contains CR or LF`)
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    if (/[\x00-\x08\x0a-\x1f\x7f]/.test(text)) throw configError(`header "${name}" has an invalid value`)
  }
}

/**
 * @param {string} what
 * @returns {MCPError}
 */
function configError(what) {
  const err = /** @type {MCPError} */ (new Error(`Invalid config: ${what}`))
  err.code = 'MCP_INVALID_CONFIG'
  return err
}

/**
 * A network failure without the URL (its query may carry an API key) in any of its members.
 * @param {any} err what fetch threw: anything, probed for `message`, `cause` and `code`
 * @param {string | URL} url
 * @returns {MCPError}
 */
function networkError(err, url) {
  const strip = (/** @type {unknown} */ text) => String(text).split(String(url)).join('<url>')
  const out = /** @type {MCPError} */ (new Error(strip(err?.message ?? err), err?.cause ? { cause: err.cause } : undefined))
  if (typeof err?.code === 'string') out.code = err.code
  return out
}

/**
 * One JSON-RPC request by HTTP POST; resolves with the whole response envelope (a JSON-RPC
 * `error` member is returned, not thrown). [beyond] `options`: `{ headers, timeout, signal }`;
 * the timeout defaults to 60 s [fix].
 * @template [T=unknown]
 * @param {string | URL} url
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @param {CallMCPOptions} [options]
 * @returns {Promise<import('../index.js').JsonRpcResponse<T>>} the server's envelope as it came (not validated)
 */
async function callMCP(url, method, params, options) {
  const body = JSON.stringify({ jsonrpc: '2.0', id: randomId(), method, params: params ?? {} })
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...options?.headers }
  const signal = options?.signal
  const timeout = options?.timeout ?? DEFAULT_TIMEOUT_MS
  if (signal?.aborted) throw signal.reason
  checkHeaders(headers)
  const ac = new AbortController()
  let timer
  let timedOut = false
  // Registered only when there is a signal.
  const onAbort = () => ac.abort(/** @type {AbortSignal} */ (signal).reason)
  if (signal) signal.addEventListener('abort', onAbort, { once: true })
  timer = setTimeout(
    () => {
      timedOut = true
      ac.abort(timeoutError(timeout))
    },
    Math.max(0, Number(timeout)),
  )
  try {
    const response = await fetch(url, { method: 'POST', headers, body, signal: ac.signal })
    if (!response.ok) throw new Error(`MCP request failed: ${response.status} ${response.statusText}`)
    const text = await response.text()
    const parsed = parseSSE(text)
    if (!parsed) throw new Error('Failed to parse MCP response')
    return /** @type {import('../index.js').JsonRpcResponse<T>} */ (parsed)
  } catch (err) {
    if (timedOut) throw timeoutError(timeout)
    if (signal?.aborted) throw signal.reason
    if (err instanceof Error && /^(MCP request failed|Failed to parse MCP response)/.test(err.message)) throw err
    if (err instanceof SyntaxError) throw err
    throw networkError(err, url)
  } finally {
    if (timer) clearTimeout(timer)
    if (signal) signal.removeEventListener('abort', onAbort)
  }
}

// ---------------------------------------------------------------------------------------------
// The root's forms (18.3.4 `json-rpc.ts`, SPEC 11.4): the response matched by id after any
// notifications, the caller's fetch and error mappers, and URLs redacted for logs.

const SENSITIVE_QUERY_PARAM = /key|token|secret|auth/i

/**
 * `url` with the values of credential-like query parameters (names matching key, token, secret,
 * auth) replaced by `[redacted]`; an unparseable URL loses its whole query.
 * @param {string} url
 */
function redactUrlForLog(url) {
  try {
    const parsed = new URL(url)
    for (const name of new Set(parsed.searchParams.keys())) {
      if (SENSITIVE_QUERY_PARAM.test(name)) parsed.searchParams.set(name, '[redacted]')
    }
    return parsed.toString()
  } catch {
    return String(url).split('?')[0]
  }
}

/** The largest SSE event or JSON body `readMcpJsonRpcResponse` holds: the transports' default. */
const MAX_MESSAGE_BYTES = 64 * 1024 * 1024

/**
 * A JSON-RPC response envelope from a decoded message; null for a request or notification (not
 * the answer); SyntaxError for anything that is not JSON-RPC 2.0.
 * @param {unknown} message
 * @returns {import('../index.js').JsonRpcResponse | null}
 */
function decodeResponse(message) {
  const m = /** @type {Record<string, any>} */ (message)
  if (m === null || typeof m !== 'object' || Array.isArray(m) || m.jsonrpc !== '2.0') {
    throw new SyntaxError('Malformed JSON-RPC message')
  }
  const hasResult = Object.hasOwn(m, 'result')
  const hasError = Object.hasOwn(m, 'error')
  const idOk = (/** @type {unknown} */ id) => typeof id === 'string' || typeof id === 'number'
  if ('method' in m) {
    if (typeof m.method !== 'string' || hasResult || hasError || ('id' in m && !idOk(m.id))) {
      throw new SyntaxError('Malformed JSON-RPC request')
    }
    const params = m.params
    if ('params' in m && (params === null || typeof params !== 'object')) throw new SyntaxError('Malformed JSON-RPC request')
    return null
  }
  if (!idOk(m.id) || hasResult === hasError) throw new SyntaxError('Malformed JSON-RPC response')
  if (hasError) {
    const e = m.error
    if (e === null || typeof e !== 'object' || Array.isArray(e) || typeof e.code !== 'number' || typeof e.message !== 'string') {
      throw new SyntaxError('Malformed JSON-RPC error response')
    }
    const error = { code: e.code, message: e.message }
    if (Object.hasOwn(e, 'data')) Object.assign(error, { data: e.data })
    return { jsonrpc: '2.0', id: m.id, error }
  }
  return { jsonrpc: '2.0', id: m.id, result: m.result }
}

/**
 * The `data` of each event of an SSE body, as it arrives (comments and other fields skipped; an
 * event cut by the end of the stream is still delivered). An event over MAX_MESSAGE_BYTES fails.
 * @param {ReadableStream<Uint8Array>} body
 * @param {AbortSignal | undefined} signal
 * @returns {AsyncGenerator<string>}
 */
async function* sseData(body, signal) {
  const reader = body.getReader()
  const decoder = new TextDecoder()
  const onAbort = () => reader.cancel(signal?.reason).catch(() => {})
  signal?.addEventListener('abort', onAbort, { once: true })
  let buffer = ''
  /** @type {string[]} */
  let data = []
  let size = 0
  let first = true
  /** @param {string} line */
  const field = (line) => {
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const name = colon < 0 ? line : line.slice(0, colon)
    if (name !== 'data') return
    let value = colon < 0 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    size += value.length
    if (size > MAX_MESSAGE_BYTES) throw new Error(`MCP SSE event exceeds ${MAX_MESSAGE_BYTES} bytes`)
    data.push(value)
  }
  try {
    for (;;) {
      signal?.throwIfAborted()
      const { done, value } = await reader.read()
      signal?.throwIfAborted()
      let text = done ? decoder.decode() : decoder.decode(value, { stream: true })
      if (first && text.length > 0) {
        if (text.charCodeAt(0) === 0xfeff) text = text.slice(1)
        first = false
      }
      buffer += text
      // Lines end at CRLF, LF or CR; a CR at the end of the buffer may be half a CRLF.
      let start = 0
      for (;;) {
        const m = /\r\n|\n|\r/g
        m.lastIndex = start
        const hit = m.exec(buffer)
        if (!hit || (hit[0] === '\r' && hit.index === buffer.length - 1 && !done)) break
        const line = buffer.slice(start, hit.index)
        start = hit.index + hit[0].length
        if (line === '') {
          if (data.length > 0) yield data.join('\n')
          data = []
          size = 0
        } else {
          field(line)
        }
      }
      buffer = buffer.slice(start)
      if (buffer.length > MAX_MESSAGE_BYTES) throw new Error(`MCP SSE event exceeds ${MAX_MESSAGE_BYTES} bytes`)
      if (done) {
        if (buffer !== '') field(buffer)
        if (data.length > 0) yield data.join('\n')
        return
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort)
    reader.cancel().catch(() => {})
  }
}

/**
 * The response to request `expectedId` in an HTTP response, JSON or SSE: notifications, server
 * requests and answers to other ids are passed over; a malformed message fails the read.
 * @param {Response} response
 * @param {string | number} expectedId
 * @param {AbortSignal} [signal]
 * @returns {Promise<import('../index.js').JsonRpcResponse>}
 */
async function readMcpJsonRpcResponse(response, expectedId, signal) {
  let sawOther = false
  /** @param {unknown} payload */
  const select = (payload) => {
    for (const message of Array.isArray(payload) ? payload : [payload]) {
      const decoded = decodeResponse(message)
      if (!decoded) continue
      if (decoded.id === expectedId) return decoded
      sawOther = true
    }
    return null
  }
  signal?.throwIfAborted()
  if (response.headers.get('content-type')?.toLowerCase().includes('text/event-stream')) {
    if (!response.body) throw new Error('MCP SSE response did not include a body')
    for await (const data of sseData(response.body, signal)) {
      if (data === '') continue
      if (data === '[DONE]') break
      const matched = select(JSON.parse(data))
      if (matched) return matched
    }
  } else {
    // The runtime's own JSON reader, as the agent's: its SyntaxError (Bun 1.3: "Failed to parse JSON").
    const payload = await response.json()
    signal?.throwIfAborted()
    const matched = select(payload)
    if (matched) return matched
  }
  signal?.throwIfAborted()
  if (sawOther) throw new Error('MCP response ID did not match request ID')
  throw new Error('MCP response did not include a result or error')
}

/**
 * One JSON-RPC request by HTTP POST, as the agent calls it today: `options.fetch` instead of the
 * global one; `options.headers` over the defaults; a 60 s deadline only when there is no
 * `options.signal` ([beyond]: `options.timeout` sets one in any case); a non-2xx status through
 * `options.onHttpError(response, body)`, else `MCP request failed: <status> <text>`; an answer
 * that is not the request's through `options.onParseError`. The server's JSON-RPC `error` is
 * returned, not thrown. Network failures never carry the URL (its query may hold a key).
 * @param {string} url
 * @param {string} method
 * @param {Record<string, unknown>} [params]
 * @param {import('./entries/json-rpc.js').CallMcpOptions} [options]
 * @returns {Promise<import('../index.js').JsonRpcResponse>}
 */
async function callMCPCurrent(url, method, params, options) {
  const id = randomId()
  const body = JSON.stringify({ jsonrpc: '2.0', id, method, params: params ?? {} })
  const headers = { 'Content-Type': 'application/json', Accept: 'application/json, text/event-stream', ...options?.headers }
  checkHeaders(headers)
  const given = options?.signal
  const timeout = options?.timeout ?? (given ? undefined : DEFAULT_TIMEOUT_MS)
  // An aborted signal goes to the fetch too (which rejects with its reason), as the agent's does.
  const deadline = timeout === undefined ? undefined : AbortSignal.timeout(Math.max(0, Number(timeout)))
  const signal = given && deadline ? AbortSignal.any([given, deadline]) : (given ?? deadline)
  const fetchImpl = options?.fetch ?? fetch
  // What an abort became: the caller's reason, or the deadline's error; undefined when neither.
  const aborted = () => {
    if (given?.aborted) return { error: given.reason }
    if (deadline?.aborted) return { error: timeoutError(/** @type {number} */ (timeout)) }
    return undefined
  }
  let response
  try {
    response = await fetchImpl(url, { method: 'POST', headers, body, signal })
  } catch (err) {
    throw (aborted() ?? { error: networkError(err, url) }).error
  }
  if (!response.ok) {
    const text = await response.text().catch(() => '')
    if (options?.onHttpError) throw options.onHttpError(response, text)
    throw new Error(`MCP request failed: ${response.status} ${response.statusText}`)
  }
  try {
    return await readMcpJsonRpcResponse(response, id, signal)
  } catch (err) {
    const abort = aborted()
    if (abort) throw abort.error
    throw options?.onParseError?.(err) ?? err
  }
}

exports.callMCP = callMCPCurrent
exports.callMCP127 = callMCP
exports.parseSSE = parseSSE
exports.readMcpJsonRpcResponse = readMcpJsonRpcResponse
exports.redactUrlForLog = redactUrlForLog

/**
 * Type check only (no code): this module's exports match the declarations users see (json-rpc.d.ts).
 * @template {typeof import('./entries/json-rpc.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
