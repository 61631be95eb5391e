'use strict'
// mcp-native/oauth-discovery: is a transport error an authentication error, which OAuth endpoints
// does it name, and which does the server publish. Two forms live here:
// - the root's (18.3.4 `oauth-discovery.ts`, SPEC 11.3): `analyzeAuthError(error, serverUrl?)` with
//   the challenge's hints (`Mcp-Auth-Server`, `resource_metadata`, `scope`), and
//   `discoverOAuthEndpoints(url, authServerUrl?, resourceMetadataUrl?, options?)` following RFC 9728
//   and RFC 8414 through the caller's `fetch`;
// - 12.7's (SPEC 8.6, mcp-native/compat-12.7/oauth-discovery), whose probes run in Rust
//   (crates/mcp-native-core/src/oauth/discovery.rs) through the package's HTTP client (proxies,
//   extra CAs), each bounded by a deadline.
// The error heuristics stay in JavaScript on purpose: their contract is JavaScript's own behaviour
// (regular expressions, `JSON.parse`, `URL`, truthiness and `||`), which a port could only imitate.

const native = require('../native/index.js')
const { swallow } = require('./core.js')

/** @typedef {import('./entries/compat-12.7/oauth-discovery.js').OAuthEndpoints} OAuthEndpoints */
/** @typedef {import('./entries/compat-12.7/oauth-discovery.js').AuthDetectionResult} AuthDetectionResult */
/** @typedef {import('./entries/compat-12.7/oauth-discovery.js').DiscoverOAuthEndpointsOptions} DiscoverOAuthEndpointsOptions */
/** @typedef {import('./entries/oauth-discovery.js').OAuthEndpoints} CurrentOAuthEndpoints */
/** @typedef {import('./entries/oauth-discovery.js').AuthDetectionResult} CurrentAuthDetectionResult */
/** @typedef {import('./entries/oauth-discovery.js').DiscoverOAuthEndpointsOptions} CurrentDiscoverOptions */
/** @typedef {import('./entries/oauth-discovery.js').FetchResourceMetadataScopesOptions} FetchResourceMetadataScopesOptions */
/** @typedef {import('../index.js').MCPFetchImpl} MCPFetchImpl */

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
 * @param {{ timeout?: unknown } | undefined} options
 * @returns {number}
 */
function probeTimeoutOf(options) {
  const t = options?.timeout
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

// ---------------------------------------------------------------------------------------------
// The root's forms (18.3.4 `oauth-discovery.ts`, SPEC 11.3). Discovery goes through the caller's
// `fetch` (the global one by default), as the agent's does. Kept from this package: every GET has
// a deadline (10 s, `options.timeout` [beyond]) and reads at most MAX_METADATA_BYTES [fix]; a
// value without a string `message` reads as '' rather than throwing [fix]; a recursion that would
// repeat one already on the stack is cut [fix] (see `discoverOAuthEndpointsCurrent`).

/** [fix] The largest metadata document read, as the Rust client's (oauth/request.rs). */
const MAX_METADATA_BYTES = 1024 * 1024
/** The longest deadline a JS timer holds. */
const MAX_TIMER_MS = 2 ** 31 - 1

const AS_METADATA = '/.well-known/oauth-authorization-server'
const OIDC_METADATA = '/.well-known/openid-configuration'
const PR_METADATA = '/.well-known/oauth-protected-resource'
/** The paths tried on an authorization-server base, in order. */
const ISSUER_PATHS = [AS_METADATA, OIDC_METADATA, PR_METADATA, '/oauth/metadata', '/.mcp/auth', '/authorize']
/** The paths tried on the MCP server's own URL: protected-resource metadata first. */
const RESOURCE_PATHS = [PR_METADATA, AS_METADATA, OIDC_METADATA, '/oauth/metadata', '/.mcp/auth', '/authorize']

const OAUTH_MESSAGE = 'Server requires OAuth authentication. Launching authorization flow...'
const APIKEY_MESSAGE = 'Server requires API key authentication.'
const UNKNOWN_MESSAGE = 'Server requires authentication but type could not be determined.'

/** The agent's auth-failure classification (pi-ai `AIError`): the text of any link of the cause chain. */
const AUTH_FAILURE_TEXT =
  /\b(?:401|403|unauthorized|forbidden|authentication|auth[_ ]?unavailable|no auth available|(?:invalid|no)[_ ]?api[_ ]?key)\b/i
/** Where that classification finds an HTTP status in a message, the first pattern that matches winning. */
const STATUS_IN_TEXT = [
  /\bstatus(?:_code)?[:=]\s*(\d{3})\b/i,
  /\bstatus\s+(\d{3})\b/i,
  /\bHTTP\s+(\d{3})\b/i,
  /\b(?:error|failed)\s*[:=]?\s*(\d{3})\b/i,
  /(?:^|\s)(\d{3})\s+[A-Z][a-z]/,
]
/** pi-ai's `Flag.AuthFailed` bit of an already classified error's `errorId`. */
const AUTH_FAILED_FLAG = 0x0100_0000

/**
 * A number that is an HTTP status (100–599), or undefined.
 * @param {unknown} value
 */
function httpStatus(value) {
  return typeof value === 'number' && value >= 100 && value <= 599 ? value : undefined
}

/**
 * The status a message names, by STATUS_IN_TEXT.
 * @param {string} text
 * @returns {number | undefined}
 */
function statusInText(text) {
  for (const pattern of STATUS_IN_TEXT) {
    const found = pattern.exec(text)
    const status = found ? httpStatus(Number(found[1])) : undefined
    if (status !== undefined) return status
  }
  return undefined
}

/**
 * The HTTP status of an error: its `status`, `statusCode`, `errorStatus` or `response.status`,
 * else its cause's (two levels at most), else the one its message names.
 * @param {unknown} error
 * @param {number} depth
 * @returns {number | undefined}
 */
function statusOf(error, depth) {
  if (depth > 2 || error === null || typeof error !== 'object') return undefined
  const e = /** @type {Record<string, any>} */ (error)
  const own = httpStatus(e.status) ?? httpStatus(e.statusCode) ?? httpStatus(e.errorStatus)
  if (own !== undefined) return own
  if (typeof e.response === 'object' && e.response !== null) {
    const fromResponse = httpStatus(e.response.status)
    if (fromResponse !== undefined) return fromResponse
  }
  if ('cause' in e) {
    const nested = statusOf(e.cause, depth + 1)
    if (nested !== undefined) return nested
  }
  return typeof e.message === 'string' ? statusInText(e.message) : undefined
}

/**
 * The text one link of a cause chain carries: an error's message, a string itself, or an object's
 * `message` or `errorMessage`.
 * @param {unknown} link
 * @returns {string | undefined}
 */
function linkText(link) {
  if (typeof link === 'string') return link
  if (link === null || typeof link !== 'object') return undefined
  const l = /** @type {{ message?: unknown, errorMessage?: unknown }} */ (link)
  if (typeof l.message === 'string') return l.message
  return typeof l.errorMessage === 'string' ? l.errorMessage : undefined
}

/**
 * Whether the agent would classify `error` as an authentication failure: along its cause chain, a
 * link whose text names 401, 403, unauthorized, forbidden, authentication, an unavailable auth or
 * an invalid or missing API key; whose status is 401 or 403; or already flagged so by pi-ai.
 * (pi-ai gives way to a bare 401/403 status when the text names another failure kind, e.g. a
 * timeout; this package counts the status in every case.)
 * @param {unknown} error
 * @returns {boolean}
 */
function isAuthFailure(error) {
  /** @type {Set<object>} */
  const seen = new Set()
  let link = error
  while (link !== undefined && link !== null) {
    if (typeof link === 'object') {
      if (seen.has(link)) break
      seen.add(link)
      const id = /** @type {{ errorId?: unknown }} */ (link).errorId
      if (typeof id === 'number' && (id & AUTH_FAILED_FLAG) !== 0) return true
    }
    const text = linkText(link)
    if (text && AUTH_FAILURE_TEXT.test(text)) return true
    const status = statusOf(link, 0) ?? (text ? statusInText(text) : undefined)
    if (status === 401 || status === 403) return true
    link = typeof link === 'object' && 'cause' in link ? link.cause : undefined
  }
  return false
}

/**
 * A non-blank string, else undefined.
 * @param {unknown} value
 * @returns {string | undefined}
 */
function nonBlank(value) {
  return typeof value === 'string' && value.trim() !== '' ? value : undefined
}

/**
 * The first of `keys` that is not null or undefined (`a ?? b ?? …`), if it is a non-blank string.
 * @param {Record<string, unknown>} obj
 * @param {readonly string[]} keys
 * @returns {string | undefined}
 */
function firstDefinedNonBlank(obj, keys) {
  for (const key of keys) {
    const value = obj[key]
    if (value !== undefined && value !== null) return nonBlank(value)
  }
  return undefined
}

const ISSUER_KEYS = ['issuer', 'issuer_url', 'issuerUrl']
const REGISTRATION_KEYS = [
  'registration_endpoint',
  'registrationEndpoint',
  'registration_url',
  'registrationUrl',
  'registration_uri',
  'registrationUri',
]
const RESOURCE_KEYS = ['resource', 'resource_uri', 'resourceUri']

/**
 * The `Mcp-Auth-Server` an error's message names, resolved against `serverUrl`; undefined when
 * there is none or it does not resolve.
 * @param {unknown} error any thrown value (the declaration says Error); only a string `message` counts
 * @param {string} [serverUrl]
 * @returns {string | undefined}
 */
function extractMcpAuthServerUrl(error, serverUrl) {
  const found = /Mcp-Auth-Server:\s*([^;\]\s]+)/i.exec(messageOf(error))
  if (!found?.[1]) return undefined
  try {
    return new URL(found[1], serverUrl).toString()
  } catch {
    return undefined
  }
}

/**
 * The first non-blank `scope="…"` or `scopes="…"` (any case) of a challenge in the message, as written.
 * @param {unknown} error any thrown value (the declaration says Error); only a string `message` counts
 * @returns {string | undefined}
 */
function extractOAuthChallengeScopes(error) {
  for (const [, key, value] of messageOf(error).matchAll(/([a-zA-Z_][a-zA-Z0-9_-]*)="([^"]+)"/g)) {
    const name = key.toLowerCase()
    if ((name === 'scope' || name === 'scopes') && value.trim() !== '') return value
  }
  return undefined
}

/**
 * A JSON error body's endpoints at one level, with the issuer, registration and resource fields.
 * @param {Record<string, unknown>} obj
 */
function currentEndpointsInObject(obj) {
  const found = endpointsInObject(obj)
  if (!found) return null
  return {
    authorizationUrl: found.authorizationUrl,
    tokenUrl: found.tokenUrl,
    issuerUrl: firstDefinedNonBlank(obj, ISSUER_KEYS),
    registrationUrl: firstDefinedNonBlank(obj, REGISTRATION_KEYS),
    clientId: found.clientId,
    scopes: found.scopes,
    resource: firstTruthy(obj, RESOURCE_KEYS),
  }
}

/**
 * The OAuth endpoints an auth error's message names: a JSON body (nested auth object first), then
 * `key="value"` challenge pairs, then `realm`/`token_url`; with the issuer, registration endpoint
 * and resource where the source gives them.
 * @param {unknown} error any thrown value (the declaration says Error); only a string `message` counts
 * @returns {CurrentOAuthEndpoints | null} a JSON body's values as they were
 */
function extractOAuthEndpointsCurrent(error) {
  const message = messageOf(error)
  const text = message.match(/\{[\s\S]*\}/)
  if (text) {
    try {
      const body = /** @type {Record<string, unknown>} */ (JSON.parse(text[0]))
      const nested = /** @type {Record<string, unknown> | undefined} */ (body.oauth || body.authorization || body.auth)
      const found = (nested && currentEndpointsInObject(nested)) || currentEndpointsInObject(body)
      if (found) {
        return /** @type {CurrentOAuthEndpoints} */ ({
          ...found,
          clientId: found.clientId || queryParam(found.authorizationUrl, 'client_id'),
          scopes: found.scopes || queryParam(found.authorizationUrl, 'scope'),
        })
      }
    } catch {
      // not JSON: the other sources
    }
  }
  /** @type {Map<string, string>} */
  const pairs = new Map()
  for (const [, key, value] of message.matchAll(/([a-zA-Z_][a-zA-Z0-9_-]*)="([^"]+)"/g)) pairs.set(key.toLowerCase(), value)
  const pick = (/** @type {readonly string[]} */ keys) => keys.map((key) => pairs.get(key)).find(Boolean)
  const authorizationUrl = pick(CHALLENGE_AUTHORIZATION_KEYS)
  const tokenUrl = pick(CHALLENGE_TOKEN_KEYS)
  if (authorizationUrl && tokenUrl) {
    return {
      authorizationUrl,
      tokenUrl,
      issuerUrl: pick(['issuer', 'issuer_url']),
      registrationUrl: pick(['registration_endpoint', 'registration_url', 'registration_uri']),
      clientId: pairs.get('client_id') || queryParam(authorizationUrl, 'client_id'),
      scopes: pick(['scope', 'scopes']) || queryParam(authorizationUrl, 'scope'),
      resource: pick(['resource', 'resource_uri']),
    }
  }
  return fromRealm(message)
}

/**
 * What kind of authentication an error asks for, with the hints its challenge gives: the
 * `Mcp-Auth-Server` (resolved against `serverUrl`), the `resource_metadata` URL (else RFC 9728's
 * for `serverUrl`) and the challenged scopes.
 * @param {unknown} error any thrown value (the declaration says Error); only a string `message` is read for hints
 * @param {string} [serverUrl]
 * @returns {CurrentAuthDetectionResult}
 */
function analyzeAuthErrorCurrent(error, serverUrl) {
  if (!isAuthFailure(error)) return { requiresAuth: false }
  const message = messageOf(error)
  const authServerUrl = extractMcpAuthServerUrl(error, serverUrl)
  const resourceMetadataUrl = /resource_metadata\s*=\s*"([^"]+)"/i.exec(message)?.[1] ?? rfc9728ProtectedResourceMetadataUrl(serverUrl)
  const oauth = extractOAuthEndpointsCurrent(error)
  const challengeScopes = extractOAuthChallengeScopes(error)
  if (oauth) {
    const scopes = oauth.scopes ?? challengeScopes
    return {
      requiresAuth: true,
      authType: 'oauth',
      oauth: scopes === oauth.scopes ? oauth : { ...oauth, scopes },
      authServerUrl,
      resourceMetadataUrl,
      scopes,
      message: OAUTH_MESSAGE,
    }
  }
  const lower = message.toLowerCase()
  /** @type {(authType: 'oauth' | 'apikey' | 'unknown', text: string) => CurrentAuthDetectionResult} */
  const result = (authType, text) => ({
    requiresAuth: true,
    authType,
    authServerUrl,
    resourceMetadataUrl,
    scopes: challengeScopes,
    message: text,
  })
  // A 401 that speaks of a JWT is a bearer (OAuth) challenge, not an API key.
  if (/\bjwt\b/.test(lower) && lower.includes('token')) return result('oauth', OAUTH_MESSAGE)
  if (APIKEY_MARKERS.some((marker) => lower.includes(marker))) return result('apikey', APIKEY_MESSAGE)
  return result('unknown', UNKNOWN_MESSAGE)
}

/**
 * RFC 9728's metadata URL for a resource: `/.well-known/oauth-protected-resource` inserted between
 * the origin and the path (trailing slashes dropped). Undefined for no URL or one that does not parse.
 * @param {string | undefined} serverUrl
 * @returns {string | undefined}
 */
function rfc9728ProtectedResourceMetadataUrl(serverUrl) {
  if (!serverUrl) return undefined
  try {
    const parsed = new URL(serverUrl)
    return `${parsed.origin}${PR_METADATA}${parsed.pathname.replace(/\/+$/, '')}`
  } catch {
    return undefined
  }
}

/**
 * The scopes a metadata document advertises: `scopes_supported` (its strings, space-joined, if
 * any), else a non-blank `scopes`, else a non-blank `scope`.
 * @param {Record<string, unknown>} metadata
 * @returns {string | undefined}
 */
function metadataScopes(metadata) {
  if (Array.isArray(metadata.scopes_supported)) {
    const joined = metadata.scopes_supported.filter((/** @type {unknown} */ s) => typeof s === 'string').join(' ')
    if (joined) return joined
  }
  return nonBlank(metadata.scopes) ?? nonBlank(metadata.scope)
}

/**
 * The caller's signal joined with a deadline.
 * @param {number} ms
 * @param {AbortSignal | undefined} signal
 * @returns {AbortSignal}
 */
function withDeadline(ms, signal) {
  const deadline = AbortSignal.timeout(Math.min(ms, MAX_TIMER_MS))
  return signal ? AbortSignal.any([signal, deadline]) : deadline
}

/**
 * Lets a response go without reading it (the connection is released at once).
 * @param {Response} response
 */
function discard(response) {
  const body = response.body
  if (body && typeof body.cancel === 'function') body.cancel().catch(() => {})
}

/**
 * A response body as JSON, like `response.json()` but [fix] at most MAX_METADATA_BYTES read; a
 * larger body fails (and is dropped). A response without a readable stream is left to its `json()`.
 * @param {Response} response
 * @returns {Promise<unknown>}
 */
async function boundedJson(response) {
  const body = response.body
  if (!body || typeof body.getReader !== 'function') return response.json()
  const tooLarge = () => new Error(`metadata document exceeds ${MAX_METADATA_BYTES} bytes`)
  if (Number(response.headers?.get('content-length')) > MAX_METADATA_BYTES) {
    discard(response)
    throw tooLarge()
  }
  const reader = body.getReader()
  /** @type {Uint8Array[]} */
  const chunks = []
  let size = 0
  for (;;) {
    const { done, value } = await reader.read()
    if (done) break
    size += value.byteLength
    if (size > MAX_METADATA_BYTES) {
      reader.cancel().catch(() => {})
      throw tooLarge()
    }
    chunks.push(value)
  }
  const bytes = new Uint8Array(size)
  let at = 0
  for (const chunk of chunks) {
    bytes.set(chunk, at)
    at += chunk.byteLength
  }
  return JSON.parse(new TextDecoder().decode(bytes))
}

/**
 * One metadata GET as the agent sends it. Resolves with the response when it is 2xx (its body
 * unread), else with null (the body dropped); rejects when the request fails.
 * @param {MCPFetchImpl} fetchImpl
 * @param {string} url
 * @param {number} timeout
 * @param {AbortSignal | undefined} signal
 */
async function getMetadata(fetchImpl, url, timeout, signal) {
  const response = await fetchImpl(url, {
    method: 'GET',
    headers: { Accept: 'application/json' },
    redirect: 'follow',
    signal: withDeadline(timeout, signal),
  })
  if (response.ok) return response
  discard(response)
  return null
}

/**
 * The scopes the protected-resource metadata at `resourceMetadataUrl` advertises; undefined on any
 * failure or when it lists none.
 * @param {string} resourceMetadataUrl
 * @param {FetchResourceMetadataScopesOptions} [options]
 * @returns {Promise<string | undefined>}
 */
async function fetchResourceMetadataScopes(resourceMetadataUrl, options) {
  const timeout = probeTimeoutOf(options)
  try {
    const response = await getMetadata(options?.fetch ?? fetch, resourceMetadataUrl, timeout, options?.signal)
    if (!response) return undefined
    return metadataScopes(/** @type {Record<string, unknown>} */ (await boundedJson(response)))
  } catch {
    return undefined
  }
}

/**
 * Trailing slashes off the path, query and fragment dropped, for RFC 8414 §3.3's issuer comparison.
 * @param {string} value
 * @returns {string | undefined}
 */
function normalizedIssuer(value) {
  try {
    const u = new URL(value)
    return `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`
  } catch {
    return undefined
  }
}

/**
 * Whether a document may be used for `baseUrl`: it names no issuer, or one equal to `baseUrl`
 * (both normalized; one that does not parse counts as a match).
 * @param {unknown} issuer
 * @param {string} baseUrl
 */
function issuerMatches(issuer, baseUrl) {
  if (typeof issuer !== 'string' || !issuer.trim()) return true
  const a = normalizedIssuer(issuer)
  const b = normalizedIssuer(baseUrl)
  return !a || !b || a === b
}

/**
 * The first string of `keys` in `obj`, else undefined.
 * @param {Record<string, unknown>} obj
 * @param {readonly string[]} keys
 * @returns {string | undefined}
 */
function firstString(obj, keys) {
  const key = keys.find((k) => typeof obj[k] === 'string')
  return key === undefined ? undefined : /** @type {string} */ (obj[key])
}

/**
 * The endpoints one metadata document gives: top-level `authorization_endpoint` and
 * `token_endpoint`, else the nested auth object's `authorization_url` and `token_url` (strings).
 * `scopes` are the protected resource's when known; `resource` is the document's, else the
 * protected resource's.
 * @param {Record<string, unknown>} metadata
 * @param {string | undefined} protectedResource
 * @param {string | undefined} protectedScopes
 * @returns {CurrentOAuthEndpoints | null}
 */
function endpointsOfMetadata(metadata, protectedResource, protectedScopes) {
  if (metadata.authorization_endpoint && metadata.token_endpoint) {
    return {
      authorizationUrl: String(metadata.authorization_endpoint),
      tokenUrl: String(metadata.token_endpoint),
      issuerUrl: firstDefinedNonBlank(metadata, ISSUER_KEYS),
      registrationUrl: firstDefinedNonBlank(metadata, REGISTRATION_KEYS),
      clientId: firstString(metadata, CLIENT_ID_KEYS),
      scopes: protectedScopes ?? metadataScopes(metadata),
      resource: typeof metadata.resource === 'string' ? metadata.resource : protectedResource,
    }
  }
  const nested = /** @type {Record<string, unknown> | undefined} */ (metadata.oauth || metadata.authorization || metadata.auth)
  if (!nested || typeof nested.authorization_url !== 'string' || typeof nested.token_url !== 'string') return null
  return {
    // An empty string falls back to the camel-case key, stringified, as the agent's does.
    authorizationUrl: nested.authorization_url || String(nested.authorizationUrl),
    tokenUrl: nested.token_url || String(nested.tokenUrl),
    issuerUrl: firstDefinedNonBlank(nested, ISSUER_KEYS) ?? firstDefinedNonBlank(metadata, ISSUER_KEYS),
    registrationUrl: firstDefinedNonBlank(nested, REGISTRATION_KEYS),
    clientId: firstString(nested, CLIENT_ID_KEYS),
    scopes: protectedScopes ?? metadataScopes(nested),
    resource: typeof nested.resource === 'string' ? nested.resource : protectedResource,
  }
}

/**
 * The string entries of a document's `authorization_servers`.
 * @param {Record<string, unknown>} metadata
 * @returns {string[]}
 */
function authorizationServers(metadata) {
  const list = metadata.authorization_servers
  return Array.isArray(list) ? list.filter((/** @type {unknown} */ s) => typeof s === 'string') : []
}

/**
 * A JSON value that has properties to read (an object or an array); anything else has no endpoints.
 * @param {unknown} value
 * @returns {value is Record<string, unknown>}
 */
function isDocument(value) {
  return typeof value === 'object' && value !== null
}

/**
 * @typedef {{ url: string, issuerCandidate: boolean }} DiscoveryBase
 * @typedef {CurrentDiscoverOptions & { ancestors?: Set<string> }} DiscoveryRun the options with the
 *   discoveries on the stack (by their bases), for the recursion
 */

/**
 * The OAuth endpoints of an MCP server, found through its metadata. First, when given, the
 * protected-resource metadata at `resourceMetadataUrl` (RFC 9728): its scopes, resource and
 * authorization servers. Then, one GET at a time, each base in turn: those authorization servers
 * and `authServerUrl` (issuer candidates: RFC 8414 and OpenID metadata, whose `issuer` must match),
 * then `serverUrl` itself (protected-resource metadata first), at the well-known URLs of
 * `buildWellKnownUrls`. Protected-resource metadata found on the way leads to a discovery of each
 * authorization server it names. A failed, non-2xx, unparsable or unmatched probe moves on; null
 * when none gives endpoints.
 *
 * `discoverOAuthEndpoints(serverUrl, options)` with an object second argument is 12.7's (SPEC 8.6).
 * @param {string} serverUrl
 * @param {string | DiscoverOAuthEndpointsOptions} [authServerUrl]
 * @param {string} [resourceMetadataUrl]
 * @param {CurrentDiscoverOptions} [options]
 * @returns {Promise<CurrentOAuthEndpoints | OAuthEndpoints | null>}
 */
function discoverOAuthEndpointsCurrent(serverUrl, authServerUrl, resourceMetadataUrl, options) {
  if (typeof authServerUrl === 'object' && authServerUrl !== null) return discoverOAuthEndpoints(serverUrl, authServerUrl)
  return discover(serverUrl, authServerUrl, resourceMetadataUrl, options)
}

/**
 * The 18.3.4 discovery. [fix] The agent's recursion starts afresh for each authorization server a
 * protected-resource document names, and probes the server's own URL again there; two servers
 * that have no metadata of their own, named by that document, send it round forever. A discovery
 * whose bases equal one already on the stack would repeat it request for request, so it is skipped.
 * @param {string} serverUrl
 * @param {string | undefined} authServerUrl
 * @param {string | undefined} resourceMetadataUrl
 * @param {DiscoveryRun | undefined} options
 * @returns {Promise<CurrentOAuthEndpoints | null>}
 */
async function discover(serverUrl, authServerUrl, resourceMetadataUrl, options) {
  const timeout = probeTimeoutOf(options)
  const fetchImpl = options?.fetch ?? fetch
  const signal = options?.signal
  /** @type {DiscoveryBase[]} */
  const bases = []
  /** @type {Set<string>} */
  const visited = new Set()
  let protectedResource = options?.protectedResource
  let protectedScopes = options?.protectedScopes
  /** @type {(url: string | undefined, issuerCandidate: boolean) => void} */
  const addBase = (url, issuerCandidate) => {
    if (!url || visited.has(url)) return
    bases.push({ url, issuerCandidate })
    visited.add(url)
  }

  if (resourceMetadataUrl) {
    visited.add(resourceMetadataUrl)
    try {
      const response = await getMetadata(fetchImpl, resourceMetadataUrl, timeout, signal)
      if (response) {
        const meta = await boundedJson(response)
        if (isDocument(meta)) {
          protectedScopes = metadataScopes(meta) ?? protectedScopes
          protectedResource = nonBlank(meta.resource) ?? protectedResource
          for (const server of authorizationServers(meta)) addBase(server, true)
        }
      }
    } catch {
      // no metadata there: the other bases
    }
  }
  addBase(authServerUrl, true)
  addBase(serverUrl, false)

  const key = (/** @type {DiscoveryBase[]} */ list) => JSON.stringify(list.map((b) => [b.url, b.issuerCandidate]))
  const ancestors = new Set(options?.ancestors)
  ancestors.add(key(bases))

  for (const base of bases) {
    for (const path of base.issuerCandidate ? ISSUER_PATHS : RESOURCE_PATHS) {
      for (const url of buildWellKnownUrls(path, base.url, base.issuerCandidate)) {
        try {
          const response = await getMetadata(fetchImpl, url.toString(), timeout, signal)
          if (!response) continue
          const metadata = await boundedJson(response)
          if (!isDocument(metadata)) continue
          // RFC 8414 §3.3 / OIDC Discovery §4.3: an authorization server's own document names itself.
          const checkIssuer = base.issuerCandidate && (path === AS_METADATA || path === OIDC_METADATA)
          if (!checkIssuer || issuerMatches(metadata.issuer, base.url)) {
            const endpoints = endpointsOfMetadata(metadata, protectedResource, protectedScopes)
            if (endpoints) return endpoints
          }
          if (path !== PR_METADATA) continue
          const resource = nonBlank(metadata.resource) ?? protectedResource
          const scopes = metadataScopes(metadata) ?? protectedScopes
          for (const server of authorizationServers(metadata)) {
            if (visited.has(server)) continue
            const nestedBases = [{ url: server, issuerCandidate: true }]
            if (server !== serverUrl) nestedBases.push({ url: serverUrl, issuerCandidate: false })
            if (ancestors.has(key(nestedBases))) continue
            const found = await discover(serverUrl, server, undefined, {
              fetch: fetchImpl,
              protectedResource: resource,
              protectedScopes: scopes,
              signal,
              timeout,
              ancestors,
            })
            if (found) return found
          }
        } catch {
          // a failed probe: the next URL
        }
      }
    }
  }
  return null
}

/**
 * The URLs at which a metadata document for `baseUrl` may be, most specific first. A bare origin
 * has only `<origin><path>`. Otherwise, with `<parent>` the base's path without its last segment
 * (or the one segment itself):
 * - a resource (`issuerCandidate` false): for a `/.well-known/` path, RFC 9728's
 *   `<origin><path><base path>`; then `<origin><parent>/<path>`;
 * - an issuer, `openid-configuration`: `<origin><base path><path>`, `<origin><parent>/<path>`,
 *   `<origin><path><base path>`;
 * - an issuer, another `/.well-known/` path: RFC 8414's `<origin><path><base path>`, then
 *   `<origin><parent>/<path>`, `<origin><base path><path>`;
 * - an issuer, any other path: `<origin><parent>/<path>`;
 * and last `<origin><path>`; each URL once. [] when `baseUrl` does not parse.
 * @param {string} wellKnownPath
 * @param {string} baseUrl
 * @param {boolean} issuerCandidate
 * @returns {URL[]}
 */
function buildWellKnownUrls(wellKnownPath, baseUrl, issuerCandidate) {
  /** @type {URL} */
  let base
  try {
    base = new URL(baseUrl)
  } catch {
    return []
  }
  const atOrigin = new URL(wellKnownPath, base)
  if (!wellKnownPath.startsWith('/')) return [atOrigin]
  const path = base.pathname.replace(/\/$/, '')
  const lastSlash = path.lastIndexOf('/')
  if (lastSlash < 0) return [atOrigin]
  const parent = lastSlash === 0 ? path : path.slice(0, lastSlash)
  const underParent = new URL(wellKnownPath.slice(1), `${base.origin}${parent}/`)
  const inserted = () => new URL(`${wellKnownPath}${path}`, base.origin)
  const appended = () => new URL(`${path}${wellKnownPath}`, base.origin)
  const wellKnown = wellKnownPath.startsWith('/.well-known/')

  /** @type {URL[]} */
  const ordered = []
  if (!issuerCandidate) {
    if (wellKnown) ordered.push(inserted())
    ordered.push(underParent)
  } else if (wellKnownPath === OIDC_METADATA) {
    ordered.push(appended(), underParent, inserted())
  } else if (wellKnown) {
    ordered.push(inserted(), underParent, appended())
  } else {
    ordered.push(underParent)
  }
  ordered.push(underParent, atOrigin)
  /** @type {Set<string>} */
  const seen = new Set()
  return ordered.filter((u) => !seen.has(u.href) && seen.add(u.href))
}

exports.detectAuthError = detectAuthError
exports.extractMcpAuthServerUrl = extractMcpAuthServerUrl
exports.extractOAuthChallengeScopes = extractOAuthChallengeScopes
exports.extractOAuthEndpoints = extractOAuthEndpointsCurrent
exports.analyzeAuthError = analyzeAuthErrorCurrent
exports.rfc9728ProtectedResourceMetadataUrl = rfc9728ProtectedResourceMetadataUrl
exports.fetchResourceMetadataScopes = fetchResourceMetadataScopes
exports.discoverOAuthEndpoints = discoverOAuthEndpointsCurrent
exports.buildWellKnownUrls = buildWellKnownUrls
// 12.7's (SPEC 8.6): mcp-native/compat-12.7/oauth-discovery.
exports.extractOAuthEndpoints127 = extractOAuthEndpoints
exports.analyzeAuthError127 = analyzeAuthError
exports.discoverOAuthEndpoints127 = discoverOAuthEndpoints
