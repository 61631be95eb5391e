'use strict'
// mcp-native/errors: MCP failures as the agent classifies and reports them today (18.3.4
// `errors.ts`, SPEC 11.3): `MCPTransportError` (transport, stage, failure class, retryable, code,
// redacted data, trace id) and the diagnostic text a failed tool call returns
// (`formatMCPToolFailure`). Pure JavaScript: it reads errors, it never touches a connection.

const LIMITS = Object.freeze({ message: 1000, data: 2000, traceId: 128, dataString: 256, depth: 5, entries: 30 })

// Keys whose values never reach the diagnostic (matched anywhere in the key: `client_secret`,
// `accessToken`, …), and keys that name a trace.
const SECRET_KEY =
  /authorization|bearer|cookie|secret|passw(?:or)?d|pwd|token|credential|api[-_]?key|private[-_]?key|access[-_]?key|signature/i
const TRACE_KEY = /^(?:trace[-_]?id|request[-_]?id|correlation[-_]?id|traceparent)$/i
const TRACE_HEADERS = ['traceparent', 'x-request-id', 'x-trace-id', 'x-correlation-id', 'cf-ray']

/**
 * A message or data string made safe to show: Bun's fetch advice dropped, credentials in
 * `Bearer …`, query strings and `key: value` pairs redacted, at most `max` characters, trimmed.
 * @param {string} text
 * @param {number} max
 */
function redact(text, max) {
  return text
    .replace(/\s*For more information, pass `verbose: true` in the second argument to fetch\(\)\.?\s*$/i, '')
    .replace(/\b(Bearer|Basic)\s+[^\s,;]+/gi, '$1 [redacted]')
    .replace(/([?&](?:access[-_]?token|api[-_]?key|key|token|secret|password)=)[^&#\s]+/gi, '$1[redacted]')
    .replace(
      /((?:authorization|api[-_]?key|private[-_]?key|access[-_]?key|token|secret|passw(?:or)?d|pwd|credential)\s*[:=]\s*)[^\s,;}]+/gi,
      '$1[redacted]',
    )
    .slice(0, max)
    .trim()
}

/** @param {unknown} v @returns {v is Record<string, unknown>} */
function isRecord(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v)
}

/**
 * JSON-RPC error data made safe: secrets' values replaced, strings redacted and short, depth,
 * entries and cycles bounded.
 * @param {unknown} value
 * @param {number} depth
 * @param {WeakSet<object>} seen
 * @returns {unknown}
 */
function safeData(value, depth, seen) {
  if (depth > LIMITS.depth) return '[truncated]'
  if (typeof value === 'string') return redact(value, LIMITS.dataString)
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return value
  if (Array.isArray(value)) {
    if (seen.has(value)) return '[circular]'
    seen.add(value)
    return value.slice(0, LIMITS.entries).map((item) => safeData(item, depth + 1, seen))
  }
  if (!isRecord(value)) return String(value)
  if (seen.has(value)) return '[circular]'
  seen.add(value)
  /** @type {Record<string, unknown>} */
  const out = {}
  let n = 0
  for (const key in value) {
    if (n++ === LIMITS.entries) break
    out[key] = SECRET_KEY.test(key) ? '[redacted]' : safeData(value[key], depth + 1, seen)
  }
  return out
}

/**
 * The data as bounded JSON text (a `{truncated, preview}` object when too long).
 * @param {unknown} value
 * @returns {string | undefined}
 */
function dataText(value) {
  if (value === undefined) return undefined
  try {
    const text = JSON.stringify(safeData(value, 0, new WeakSet()))
    if (text.length <= LIMITS.data) return text
    let keep = LIMITS.data - 64
    for (;;) {
      const bounded = JSON.stringify({ truncated: true, preview: text.slice(0, keep) })
      if (bounded.length <= LIMITS.data) return bounded
      keep -= bounded.length - LIMITS.data
    }
  } catch {
    return undefined
  }
}

/**
 * A trace id that is safe to show (short, of URL-safe characters), or undefined.
 * @param {unknown} value
 */
function safeTraceId(value) {
  if (typeof value !== 'string') return undefined
  const id = value.trim()
  return id && id.length <= LIMITS.traceId && /^[A-Za-z0-9._:/-]+$/.test(id) ? id : undefined
}

/**
 * The first safe trace id under a trace-like key, depth first.
 * @param {unknown} value
 * @param {number} [depth]
 * @returns {string | undefined}
 */
function traceIn(value, depth = 0) {
  if (depth > LIMITS.depth || !isRecord(value)) return undefined
  for (const key in value) {
    const found = (TRACE_KEY.test(key) ? safeTraceId(value[key]) : undefined) ?? traceIn(value[key], depth + 1)
    if (found) return found
  }
  return undefined
}

/** An MCP failure with its diagnosis (18.3.4 `MCPTransportError`). */
class MCPTransportError extends Error {
  /**
   * @param {{ transport: 'http' | 'stdio' | 'unknown', stage: 'connect' | 'send' | 'receive' | 'decode' | 'protocol',
   *   failure: 'connect' | 'timeout' | 'eof' | 'reset' | 'malformed_response' | 'json_rpc' | 'http_status' | 'closed' | 'unknown',
   *   message: string, retryable: boolean, code?: string | number, data?: string, traceId?: string, cause?: unknown }} o
   */
  constructor(o) {
    super(redact(o.message, LIMITS.message), o.cause === undefined ? undefined : { cause: o.cause })
    this.name = 'MCPTransportError'
    /** @readonly */
    this.transport = o.transport
    /** @readonly */
    this.stage = o.stage
    /** @readonly */
    this.failure = o.failure
    /** @readonly */
    this.retryable = o.retryable
    /** @readonly @type {string | number | undefined} */
    this.code = o.code
    /** @readonly @type {string | undefined} */
    this.data = o.data
    /** @readonly @type {string | undefined} */
    this.traceId = o.traceId
  }
}

/**
 * A safe trace id from an HTTP response's headers.
 * @param {{ get(name: string): string | null }} headers
 */
function mcpTraceIdFromHeaders(headers) {
  for (const name of TRACE_HEADERS) {
    const id = safeTraceId(headers.get(name))
    if (id) return id
  }
  return undefined
}

/**
 * A server's JSON-RPC error as an `MCPTransportError` (its data redacted).
 * @param {'http' | 'stdio' | 'unknown'} transport
 * @param {{ code: number, message: string, data?: unknown }} error
 * @param {string} [traceId]
 */
function createMCPJsonRpcError(transport, error, traceId) {
  return new MCPTransportError({
    transport,
    stage: 'protocol',
    failure: 'json_rpc',
    message: `MCP error ${error.code}: ${error.message}`,
    retryable: false,
    code: error.code,
    data: dataText(error.data),
    traceId: safeTraceId(traceId) ?? traceIn(error.data),
  })
}

/**
 * The string or numeric `code` of an error or of its causes.
 * @param {unknown} error
 * @returns {string | number | undefined}
 */
function codeOf(error) {
  if (!isRecord(error) && !(error instanceof Error)) return undefined
  const e = /** @type {any} */ (error)
  if (typeof e.code === 'string' || typeof e.code === 'number') return e.code
  return e.cause === undefined ? undefined : codeOf(e.cause)
}

/**
 * Any error, classified (18.3.4 `normalizeMCPTransportError`): what failed, at which stage, and
 * whether a reconnect and one retry are safe.
 * @param {unknown} error
 * @param {{ transport: 'http' | 'stdio' | 'unknown', stage: 'connect' | 'send' | 'receive' | 'decode' | 'protocol', traceId?: string }} options
 */
function normalizeMCPTransportError(error, options) {
  if (error instanceof MCPTransportError) return error
  const message = redact(error instanceof Error ? error.message : String(error), LIMITS.message)
  let code = codeOf(error)
  const upper = typeof code === 'string' ? code.toUpperCase() : code
  const status = /^HTTP (\d{3}):/i.exec(message)
  /** @type {MCPTransportError['failure']} */
  let failure = 'unknown'
  let retryable = false
  const has = (/** @type {RegExp} */ re) => re.test(message)
  if (
    ['ECONNREFUSED', 'CONNECTIONREFUSED', 'ENETUNREACH', 'EHOSTUNREACH'].includes(String(upper)) ||
    has(/\b(?:ECONNREFUSED|ConnectionRefused|ENETUNREACH|EHOSTUNREACH)\b/i)
  ) {
    failure = 'connect'
    retryable = true
  } else if (upper === 'ECONNRESET' || has(/\bECONNRESET\b/i)) {
    failure = 'reset'
    retryable = true
  } else if (upper === 'EPIPE' || has(/\b(?:EPIPE|eof|transport closed|socket closed)\b/i)) {
    failure = 'eof'
    retryable = true
  } else if (has(/timeout|timed out/i)) {
    failure = 'timeout'
  } else if (error instanceof SyntaxError || has(/(?:invalid|unexpected end).*(?:json|jsonl)|jsonl? (?:parse|parser) error|malformed/i)) {
    failure = 'malformed_response'
  } else if (status) {
    code = Number(status[1])
    failure = 'http_status'
    retryable = code === 404 || code === 502 || code === 503
  } else if (has(/not connected|connection failed|fetch failed/i)) {
    failure = 'connect'
    retryable = true
  }
  return new MCPTransportError({
    transport: options.transport,
    stage: failure === 'connect' ? 'connect' : failure === 'malformed_response' ? 'decode' : options.stage,
    failure,
    message: message || 'Unknown MCP transport failure',
    retryable,
    code,
    traceId: safeTraceId(options.traceId),
    cause: error,
  })
}

/**
 * Whether `code` is one of this package's own string codes (`MCP_` and capitals).
 * @param {unknown} code
 */
function isPackageCode(code) {
  return typeof code === 'string' && /^MCP_[A-Z_]+$/.test(code)
}

/** @param {MCPTransportError} e */
function nextStep(e) {
  switch (e.failure) {
    case 'connect':
      return 'Check that the MCP server is running and reachable, then retry.'
    case 'timeout':
      return 'Check server health or increase the MCP timeout; the request outcome is unknown.'
    case 'eof':
    case 'reset':
      return e.transport === 'stdio'
        ? 'Inspect the MCP subprocess logs, restart the server, then retry.'
        : 'Check the MCP server logs and availability, then retry.'
    case 'malformed_response':
      return 'Inspect the MCP server logs for an invalid JSON-RPC response.'
    case 'json_rpc':
      return 'Address the server-reported MCP error before retrying.'
    case 'http_status':
      return e.retryable ? 'Check the MCP server status, then retry.' : 'Check the MCP endpoint and authentication configuration.'
    case 'closed':
      return 'Reconnect the MCP server, then retry.'
    default:
      return 'Inspect the MCP server logs and transport configuration.'
  }
}

/**
 * The text a failed tool call returns: one `key: value` line per fact, then what to do next.
 * @param {unknown} error
 * @param {string} serverName
 * @param {string} toolName
 */
function formatMCPToolFailure(error, serverName, toolName) {
  const d = error instanceof MCPTransportError ? error : normalizeMCPTransportError(error, { transport: 'unknown', stage: 'protocol' })
  const lines = [
    'MCP failure',
    `server: ${redact(serverName, LIMITS.message)}`,
    `tool: ${redact(toolName, LIMITS.message)}`,
    `transport: ${d.transport}`,
    `stage: ${d.stage}`,
    `failure: ${d.failure}`,
    `retryable: ${d.retryable ? 'yes' : 'no'}`,
    `message: ${d.message}`,
  ]
  // The package's own string codes (`MCP_TIMEOUT`, …) stay on its errors but are no line here: the
  // text is 18.3.4's, whose codes are JSON-RPC codes, HTTP statuses, exit codes and OS names.
  if (d.code !== undefined && !isPackageCode(d.code)) lines.push(`code: ${String(d.code)}`)
  if (d.traceId !== undefined) lines.push(`trace_id: ${d.traceId}`)
  if (d.data !== undefined) lines.push(`data: ${d.data}`)
  lines.push(`next: ${nextStep(d)}`)
  return lines.join('\n')
}

module.exports = {
  MCPTransportError,
  mcpTraceIdFromHeaders,
  createMCPJsonRpcError,
  normalizeMCPTransportError,
  formatMCPToolFailure,
  // Internal (lib/root-errors.js), not of mcp-native/errors:
  safeTraceId,
}
