'use strict'
// The `oauth` option of MCPClient, connectToServer and MCPManager (SPEC 10.3): the OAuth client
// of Streamable HTTP servers runs in Rust (src/oauth/client/); this file turns the option into a
// `NativeOAuth` (src/oauth_client.rs) and answers what only JavaScript can: the user's
// `onAuthorize` and `openUrl`, and a JS `store`. Every user call is bounded here: a throw, a
// rejection, a wrong type or a promise that never settles becomes a rejection with a fixed text
// (never the user's message, which might hold a token), so the Rust side always gets an answer.

const native = require('../native/index.js')
const { makeError } = require('./core.js')

/** How long `onAuthorize` may take (the user's time in the browser): 5 minutes (SPEC 10.3). */
const AUTHORIZE_TIMEOUT_MS = 300_000
/** How long a store call may take. */
const STORE_TIMEOUT_MS = 10_000

/**
 * @typedef {import('../index.js').MCPOAuthOptions} MCPOAuthOptions
 * @typedef {{ warn?: (message: string, details?: unknown) => void }} WarnLogger
 */

/**
 * `value` settled within `ms`, else a rejection with `what` timed out.
 * @template T
 * @param {() => T | Promise<T>} call
 * @param {number} ms
 * @param {string} what
 * @returns {Promise<T>}
 */
function bounded(call, ms, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${what} did not settle within ${ms}ms`)), ms)
    /** @param {unknown} err */
    const fail = (err) => {
      clearTimeout(timer)
      // The user's own message is not passed on: it might hold a token or a secret.
      const name = err instanceof Error ? err.name : typeof err
      reject(new Error(`${what} failed (${name})`))
    }
    try {
      Promise.resolve(call()).then((v) => {
        clearTimeout(timer)
        resolve(v)
      }, fail)
    } catch (err) {
      fail(err)
    }
  })
}

/**
 * The Rust side's calls: `authorize`, `openUrl`, `get`, `set`, `delete`.
 * @param {MCPOAuthOptions} o
 * @param {WarnLogger | undefined} logger
 * @param {string} kind
 * @param {any} payload
 * @returns {Promise<string>}
 */
async function answer(o, logger, kind, payload) {
  const store = /** @type {any} */ (o.store)
  switch (kind) {
    case 'authorize': {
      const onAuthorize = /** @type {Function} */ (o.onAuthorize)
      const prompt = {
        url: payload.url,
        serverName: payload.serverName ?? undefined,
        serverUrl: payload.serverUrl,
        scopes: payload.scopes,
        redirectUri: payload.redirectUri,
      }
      const url = await bounded(() => onAuthorize(prompt), AUTHORIZE_TIMEOUT_MS, 'onAuthorize')
      if (typeof url !== 'string' || url === '') throw new Error('onAuthorize must resolve with the callback URL (a string)')
      return url
    }
    case 'openUrl': {
      if (typeof o.openUrl === 'function') {
        const open = /** @type {Function} */ (o.openUrl)
        await bounded(() => open(payload.url), STORE_TIMEOUT_MS, 'openUrl').catch(() => {})
      } else {
        const message = `Open this URL to authorize ${payload.url}`
        try {
          if (logger && typeof logger.warn === 'function') logger.warn(message)
          else process.emitWarning(message)
        } catch {}
      }
      return ''
    }
    case 'get': {
      const v = await bounded(() => store.get(payload.key), STORE_TIMEOUT_MS, 'the store’s get')
      return JSON.stringify({ value: typeof v === 'string' ? v : null })
    }
    case 'set':
      await bounded(() => store.set(payload.key, payload.value), STORE_TIMEOUT_MS, 'the store’s set')
      return ''
    case 'delete':
      await bounded(() => store.delete(payload.key), STORE_TIMEOUT_MS, 'the store’s delete')
      return ''
    default:
      throw new Error(`unknown oauth host call ${kind}`)
  }
}

/**
 * The `NativeOAuth` of an `oauth` option, or null without one. Throws `MCP_INVALID_CONFIG` for an
 * unusable option.
 * @param {MCPOAuthOptions | undefined | null} oauth
 * @param {{ logger?: WarnLogger, defaultStoreFile?: string }} [context] the manager's logger and
 *   its default store file (the agent directory's mcp-oauth.json)
 * @returns {any} the NativeOAuth, or null
 */
function nativeOAuth(oauth, context) {
  if (oauth == null) return null
  const invalid = (/** @type {string} */ why) => makeError({ message: `Invalid config: oauth: ${why}`, code: 'MCP_INVALID_CONFIG' })
  if (typeof oauth !== 'object') throw invalid('must be an object')
  const o = oauth
  const how = o.onAuthorize
  if (typeof how !== 'function' && how !== 'loopback' && how !== 'headless') {
    throw invalid('onAuthorize must be a function, "loopback" or "headless"')
  }
  /** @type {unknown} */
  let store = 'memory'
  if (o.store != null) {
    const s = /** @type {any} */ (o.store)
    if (typeof s !== 'object' || typeof s.get !== 'function' || typeof s.set !== 'function' || typeof s.delete !== 'function') {
      throw invalid('store must have get, set and delete functions')
    }
    store = 'js'
  } else if (context?.defaultStoreFile) {
    store = { file: context.defaultStoreFile }
  }
  /** @type {Record<string, unknown>} */
  const settings = {
    clientName: o.clientName,
    redirectUri: o.redirectUri,
    authorizer: typeof how === 'function' ? 'function' : how,
    store,
  }
  if (o.applicationType != null) settings.applicationType = o.applicationType
  if (o.clientMetadataUrl != null) settings.clientMetadataUrl = o.clientMetadataUrl
  if (o.preRegistered != null) settings.preRegistered = o.preRegistered
  const logger = context?.logger
  try {
    return new native.NativeOAuth(
      JSON.stringify(settings),
      /** @param {any[]} args `(kind, payload)` */
      (...args) => {
        const [kind, payload] = args.length === 1 && Array.isArray(args[0]) ? args[0] : args
        return answer(o, logger, kind, JSON.parse(payload))
      },
    )
  } catch (err) {
    throw invalid(/** @type {Error} */ (err).message.replace(/^Invalid config: oauth: /, ''))
  }
}

exports.nativeOAuth = nativeOAuth
