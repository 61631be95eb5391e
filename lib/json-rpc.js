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

exports.callMCP = callMCP
exports.parseSSE = parseSSE

/**
 * Type check only (no code): this module's exports match the declarations users see (json-rpc.d.ts).
 * @template {typeof import('./entries/json-rpc.js')} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof exports>} ExportsMatchDeclarations */
