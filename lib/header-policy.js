'use strict'
// mcp-native/transports/header-policy: the agent's header precedence and redirect rules as
// functions (18.3.4 `transports/header-policy.ts`, SPEC 11.4), for callers that fetch MCP
// endpoints themselves. The package's own HTTP transport applies the same rules in Rust.

/**
 * Configured headers under generated ones: a configured header is dropped when a generated one
 * has its name, in any case.
 * @param {{ generated: Record<string, string>, configured?: Record<string, string> }} sources
 * @returns {Record<string, string>}
 */
function mergeMCPHeaders({ generated, configured }) {
  if (!configured) return { ...generated }
  const names = new Set(Object.keys(generated).map((n) => n.toLowerCase()))
  /** @type {Record<string, string>} */
  const merged = {}
  for (const name in configured) {
    if (!names.has(name.toLowerCase())) merged[name] = configured[name]
  }
  return { ...merged, ...generated }
}

/**
 * Sets `name` in `headers`, removing entries of the same name in another case first.
 * @param {Record<string, string>} headers
 * @param {string} name
 * @param {string} value
 */
function setGeneratedHeader(headers, name, value) {
  const lower = name.toLowerCase()
  for (const existing in headers) {
    if (existing.toLowerCase() === lower) delete headers[existing]
  }
  headers[name] = value
}

/**
 * `headers` without `name` (any case): the same object when it has no such entry.
 * @param {Record<string, string> | undefined} headers
 * @param {string} name
 * @returns {Record<string, string> | undefined}
 */
function withoutHeader(headers, name) {
  if (!headers) return headers
  const lower = name.toLowerCase()
  if (!Object.keys(headers).some((k) => k.toLowerCase() === lower)) return headers
  /** @type {Record<string, string>} */
  const out = {}
  for (const key in headers) {
    if (key.toLowerCase() !== lower) out[key] = headers[key]
  }
  return out
}

const { redactUrlForLog } = require('./json-rpc.js')

const REDIRECTS = new Set([301, 302, 303, 307, 308])
const MAX_REDIRECT_HOPS = 5

/**
 * A fetch of an MCP endpoint with the header precedence; for an origin-locked server, redirects
 * are followed by hand (at most 5), configured headers only sent to the configured origin, and a
 * 301/302/303 of a request other than GET refused.
 * @param {string} url
 * @param {{ method: 'GET' | 'POST' | 'DELETE', body?: string, signal?: AbortSignal }} init
 * @param {{ generated: Record<string, string>, configured?: Record<string, string> }} sources
 * @param {boolean} originLocked
 * @returns {Promise<Response>}
 */
async function mcpFetch(url, init, sources, originLocked) {
  // `timeout: false` is Bun's: no socket idle timer on a long-poll (other runtimes ignore it).
  if (!originLocked) return fetch(url, /** @type {RequestInit} */ ({ ...init, headers: mergeMCPHeaders(sources), timeout: false }))
  const origin = new URL(url).origin
  let current = url
  for (let hop = 0; hop <= MAX_REDIRECT_HOPS; hop++) {
    const headers = mergeMCPHeaders(new URL(current).origin === origin ? sources : { generated: sources.generated })
    const response = await fetch(current, /** @type {RequestInit} */ ({ ...init, headers, redirect: 'manual', timeout: false }))
    if (!REDIRECTS.has(response.status)) return response
    const location = response.headers.get('location')
    if (!location) return response
    await response.body?.cancel()
    if (init.method !== 'GET' && response.status !== 307 && response.status !== 308) {
      throw new Error(`HTTP ${response.status}: server redirected a ${init.method} request; refusing to follow`)
    }
    current = new URL(location, current).href
  }
  // [fix] The URL redacted (18.3.4 puts it whole in the message; its query may hold a key).
  throw new Error(`Too many redirects (> ${MAX_REDIRECT_HOPS}) fetching ${redactUrlForLog(url)}`)
}

module.exports = { mergeMCPHeaders, setGeneratedHeader, withoutHeader, mcpFetch }
