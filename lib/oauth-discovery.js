'use strict'
// mcp-native/oauth-discovery (SPEC 8.6): is a transport error an authentication error, which
// OAuth endpoints does it name, and which does the server's origin publish.
//
// The three error heuristics stay in JavaScript on purpose: their contract is JavaScript's own
// behaviour (regular expressions, `JSON.parse`, `URL`, truthiness and `||`), which a port could
// only imitate. The discovery GETs run in Rust (src/oauth/discovery.rs), each bounded by a
// deadline, through the package's HTTP client (proxies, extra CAs).

const native = require('../native/index.js')
const { swallow } = require('./core.js')

/** @typedef {import('./entries/oauth-discovery.js').OAuthEndpoints} OAuthEndpoints */
/** @typedef {import('./entries/oauth-discovery.js').AuthDetectionResult} AuthDetectionResult */
/** @typedef {import('./entries/oauth-discovery.js').DiscoverOAuthEndpointsOptions} DiscoverOAuthEndpointsOptions */

/**
 * Endpoints as a source found them. A JSON source's values come through as they were — any
 * truthy JSON value for the URLs, any JSON value for the client id and scopes — as in the
 * reference; only a challenge's or realm's are always strings. They become the declared
 * `OAuthEndpoints` (strings) unchecked, in `completed` and `discoverOAuthEndpoints`.
 * @typedef {{ authorizationUrl: unknown, tokenUrl: unknown, clientId?: unknown, scopes?: unknown }} FoundEndpoints
 */

/** [fix] Deadline of each discovery GET, in milliseconds; a probe that times out is a failed probe. */
const PROBE_TIMEOUT = 10000

const AUTH_MARKERS = ['401', '403', 'unauthorized', 'forbidden', 'authentication required', 'authentication failed']
const APIKEY_MARKERS = ['api key', 'api_key', 'token', 'bearer']

const AUTHORIZATION_KEYS = [
  'authorization_url',
  'authorizationUrl',
  'authorization_endpoint',
  'authorizationEndpoint',
  'authorization_uri',
  'authorizationUri',
]
const TOKEN_KEYS = ['token_url', 'tokenUrl', 'token_endpoint', 'tokenEndpoint', 'token_uri', 'tokenUri']
const CLIENT_ID_KEYS = ['client_id', 'clientId', 'default_client_id', 'public_client_id']
const CHALLENGE_AUTHORIZATION_KEYS = ['authorization_uri', 'authorization_url', 'authorization_endpoint', 'authorize_url', 'realm']
const CHALLENGE_TOKEN_KEYS = ['token_url', 'token_uri', 'token_endpoint']

/**
 * The `message` of whatever was thrown, if it is a string; otherwise ''.
 * @param {unknown} error
 * @returns {string}
 */
function messageOf(error) {
  const message = /** @type {{ message?: unknown } | null | undefined} */ (error)?.message
  return typeof message === 'string' ? message : ''
}

/**
 * `a || b || … || z` over the named properties of `obj`.
 * @param {Record<string, unknown>} obj
 * @param {readonly string[]} keys
 * @returns {unknown}
 */
function firstTruthy(obj, keys) {
  /** @type {unknown} */
  let value
  for (const key of keys) {
    value = obj[key]
    if (value) return value
  }
  return value
}

/**
 * True when the lower-cased message names an HTTP 401/403 or an authentication failure.
 * @param {unknown} error any thrown value (the declaration says Error); only a string `message` counts
 * @returns {boolean}
 */
function detectAuthError(error) {
  const message = messageOf(error).toLowerCase()
  return AUTH_MARKERS.some((marker) => message.includes(marker))
}

/**
 * The endpoints a JSON error body names at one level (both URLs needed), or null.
 * @param {Record<string, unknown>} obj
 * @returns {FoundEndpoints | null}
 */
function endpointsInObject(obj) {
  const authorizationUrl = firstTruthy(obj, AUTHORIZATION_KEYS)
  const tokenUrl = firstTruthy(obj, TOKEN_KEYS)
  if (!authorizationUrl || !tokenUrl) return null
  const listed = Array.isArray(obj.scopes_supported)
    ? obj.scopes_supported.filter((/** @type {unknown} */ s) => typeof s === 'string').join(' ')
    : undefined
  return {
    authorizationUrl,
    tokenUrl,
    clientId: firstTruthy(obj, CLIENT_ID_KEYS),
    scopes: obj.scopes || obj.scope || listed,
  }
}

/**
 * Query parameter `name` of `url`, or undefined (also when `url` does not parse).
 * @param {unknown} url whatever a source found; `URL` stringifies it, and a throw reads as undefined
 * @param {string} name
 * @returns {string | undefined}
 */
function queryParam(url, name) {
  try {
    return new URL(/** @type {string} */ (url)).searchParams.get(name) ?? undefined
  } catch {
    return undefined
  }
}

/**
 * A found result, its missing client id and scopes taken from the authorization URL's query.
 * @param {FoundEndpoints} found
 * @returns {OAuthEndpoints} strings when the source was text; a JSON body's values as they were
 */
function completed(found) {
  return /** @type {OAuthEndpoints} */ ({
    authorizationUrl: found.authorizationUrl,
    tokenUrl: found.tokenUrl,
    clientId: found.clientId || queryParam(found.authorizationUrl, 'client_id'),
    scopes: found.scopes || queryParam(found.authorizationUrl, 'scope'),
  })
}

/**
 * Source 1: the JSON text from the first `{` to the last `}`, nested auth object first.
 * @param {string} message
 * @returns {OAuthEndpoints | null}
 */
function fromJson(message) {
  const text = message.match(/\{[\s\S]*\}/)
  if (!text) return null
  try {
    // Text from `{` to `}` that parses is a JSON object.
    const body = /** @type {Record<string, unknown>} */ (JSON.parse(text[0]))
    // Any JSON value (a falsy one skips it); on a non-object, the property reads find nothing.
    const nested = /** @type {Record<string, unknown> | undefined} */ (body.oauth || body.authorization || body.auth)
    const found = (nested && endpointsInObject(nested)) || endpointsInObject(body)
    return found && completed(found)
  } catch {
    return null
  }
}

/**
 * Source 2: `key="value"` pairs (keys lower-cased, a later duplicate wins).
 * @param {string} message
 * @returns {OAuthEndpoints | null}
 */
function fromChallenge(message) {
  /** @type {Map<string, string>} */
  const pairs = new Map()
  for (const [, key, value] of message.matchAll(/([a-zA-Z_][a-zA-Z0-9_-]*)="([^"]+)"/g)) pairs.set(key.toLowerCase(), value)
  const pick = (/** @type {readonly string[]} */ keys) => keys.map((key) => pairs.get(key)).find(Boolean)
  const authorizationUrl = pick(CHALLENGE_AUTHORIZATION_KEYS)
  const tokenUrl = pick(CHALLENGE_TOKEN_KEYS)
  if (!authorizationUrl || !tokenUrl) return null
  return completed({ authorizationUrl, tokenUrl, clientId: pairs.get('client_id'), scopes: pairs.get('scope') || pairs.get('scopes') })
}

/**
 * Source 3: `realm="X"` followed, on the same line, by `token_url="Y"`.
 * @param {string} message
 * @returns {OAuthEndpoints | null}
 */
function fromRealm(message) {
  const match = message.match(/realm="([^"]+)".*token_url="([^"]+)"/)
  return match ? completed({ authorizationUrl: match[1], tokenUrl: match[2] }) : null
}

/**
 * The OAuth endpoints an auth error's message names (JSON body, challenge pairs, realm), or null.
 * @param {unknown} error any thrown value (the declaration says Error)
 * @returns {OAuthEndpoints | null}
 */
function extractOAuthEndpoints(error) {
  const message = messageOf(error)
  return fromJson(message) ?? fromChallenge(message) ?? fromRealm(message)
}

/**
 * What kind of authentication an error asks for (SPEC 8.6).
 * @param {unknown} error any thrown value (the declaration says Error)
 * @returns {AuthDetectionResult}
 */
function analyzeAuthError(error) {
  if (!detectAuthError(error)) return { requiresAuth: false }
  const oauth = extractOAuthEndpoints(error)
  if (oauth) {
    return {
      requiresAuth: true,
      authType: 'oauth',
      oauth,
      message: 'Server requires OAuth authentication. Launching authorization flow...',
    }
  }
  const message = messageOf(error).toLowerCase()
  if (APIKEY_MARKERS.some((marker) => message.includes(marker))) {
    return { requiresAuth: true, authType: 'apikey', message: 'Server requires API key authentication.' }
  }
  return { requiresAuth: true, authType: 'unknown', message: 'Server requires authentication but type could not be determined.' }
}

/**
 * The deadline of each probe: `options.timeout`, checked (a JS caller may pass anything), or the default.
 * @param {DiscoverOAuthEndpointsOptions | undefined} options
 * @returns {number}
 */
function probeTimeoutOf(options) {
  const t = /** @type {unknown} */ (options?.timeout)
  if (t === undefined || t === null) return PROBE_TIMEOUT
  if (typeof t !== 'number' || Number.isNaN(t) || t < 0) {
    throw Object.assign(new Error('Invalid options: "timeout" must be a non-negative number'), { code: 'MCP_INVALID_CONFIG' })
  }
  return t
}

/**
 * Probes the well-known metadata paths of `serverUrl`'s origin, one GET at a time, for an
 * authorization and a token endpoint; null when none names them. [fix] Each GET has a 10 s
 * deadline (`options.timeout` [beyond]); `options.signal` aborts at once with its reason.
 * @param {string} serverUrl
 * @param {DiscoverOAuthEndpointsOptions} [options]
 * @returns {Promise<OAuthEndpoints | null>}
 */
async function discoverOAuthEndpoints(serverUrl, options) {
  const signal = options?.signal
  const timeout = probeTimeoutOf(options)
  if (signal?.aborted) throw signal.reason
  const cancel = new native.OAuthCancel()
  const work = native.oauthDiscover(String(serverUrl), timeout, cancel)
  /** @type {(() => void) | undefined} set at once by the executor below */
  let onAbort
  /** @type {Promise<never>} */
  const aborted = new Promise((_resolve, reject) => {
    onAbort = () => {
      cancel.cancel()
      reject(/** @type {AbortSignal} */ (signal).reason)
    }
  })
  signal?.addEventListener('abort', /** @type {() => void} */ (onAbort), { once: true })
  swallow(work)
  try {
    const json = await (signal ? Promise.race([work, aborted]) : work)
    if (json === null || json === undefined) return null
    /** @type {FoundEndpoints} */
    const found = JSON.parse(json)
    // Rust's values as a metadata document held them (src/oauth/discovery.rs), like the reference's.
    return /** @type {OAuthEndpoints} */ ({
      authorizationUrl: found.authorizationUrl,
      tokenUrl: found.tokenUrl,
      clientId: found.clientId,
      scopes: found.scopes,
    })
  } finally {
    signal?.removeEventListener('abort', /** @type {() => void} */ (onAbort))
  }
}

exports.detectAuthError = detectAuthError
exports.extractOAuthEndpoints = extractOAuthEndpoints
exports.analyzeAuthError = analyzeAuthError
exports.discoverOAuthEndpoints = discoverOAuthEndpoints
