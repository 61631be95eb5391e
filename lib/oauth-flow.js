'use strict'
// mcp-native/oauth-flow (SPEC 8.7, 8.11): `MCPOAuthFlow`, the reference's authorization-code
// login with PKCE, as the agent's `/mcp` wizard drives it.
//
// Rust (src/oauth/flow.rs) does the callback listener, dynamic registration, the authorization
// URL, PKCE and `state`, the token request — and keeps their secrets. This file sequences the
// steps and owns what must be JavaScript: the promise, the AbortSignal, and the controller's
// callbacks. A callback that throws, rejects or never returns cannot crash the host or leave
// `login()` unsettled: every wait is bounded by the flow's own deadlines.

const native = require('../native/index.js')
const { safeString, swallow, toError } = require('./core.js')

/** @typedef {import('./entries/oauth-flow.js').MCPOAuthConfig} MCPOAuthConfig */
/** @typedef {import('./entries/oauth-flow.js').OAuthController} OAuthController */
/** @typedef {import('./entries/oauth-flow.js').OAuthCredentials} OAuthCredentials */
/** @typedef {import('./entries/oauth-flow.js').MCPOAuthFlowOptions} MCPOAuthFlowOptions */
/** @typedef {import('../native/index.js').NativeOAuthFlow} NativeOAuthFlow */

/**
 * The token endpoint's 2xx body (RFC 6749 §5.1), parsed but not checked: Rust passes it on as
 * the server sent it, and `login()` reads it as the reference does.
 * @typedef {{ access_token?: unknown, refresh_token?: unknown, expires_in?: unknown }} TokenResponse
 */

/**
 * [fix] The credentials of a 2xx token answer, checked: the reference returned whatever the body
 * held (`access: undefined` without `access_token`, a SyntaxError for a body that is not JSON).
 * Here such an answer rejects with `Token exchange failed: <why>` (MCP_OAUTH_ERROR); a
 * `refresh_token` that is not a string reads as none, an `expires_in` that is not a positive
 * number as 3600.
 * @param {string} body
 * @returns {OAuthCredentials}
 */
function credentialsFrom(body) {
  /** @type {unknown} */
  let parsed
  try {
    parsed = JSON.parse(body)
  } catch {
    throw tokenError('the answer is not JSON')
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) throw tokenError('the answer is not a JSON object')
  const data = /** @type {TokenResponse} */ (parsed)
  if (typeof data.access_token !== 'string' || data.access_token === '') throw tokenError('the answer has no access_token')
  const expiresIn = typeof data.expires_in === 'number' && data.expires_in > 0 ? data.expires_in : 3600
  return {
    access: data.access_token,
    refresh: typeof data.refresh_token === 'string' ? data.refresh_token : '',
    expires: Date.now() + expiresIn * 1000,
  }
}

/** @param {string} why */
function tokenError(why) {
  return Object.assign(new Error(`Token exchange failed: ${why}`), { code: 'MCP_OAUTH_ERROR' })
}

/** The port the reference listens on first (a free one when it is taken). */
const PREFERRED_PORT = 3000
/** How long `login()` waits for the browser, in milliseconds. */
const CALLBACK_TIMEOUT = 120000
/** [fix] Deadline of each registration and token request, in milliseconds. */
const REQUEST_TIMEOUT = 10000
/** How often an unusable pasted answer (no code in it) is asked for again. */
const MANUAL_INPUT_ATTEMPTS = 5

/** @type {Promise<never>} */
const NEVER = new Promise(() => {})

/**
 * `OAuth callback cancelled: <reason>` (code `MCP_ABORTED`, or `MCP_TIMEOUT` at the deadline).
 * @param {unknown} reason
 * @param {'MCP_ABORTED' | 'MCP_TIMEOUT'} [code]
 * @returns {Error & { code: string }}
 */
function cancelled(reason, code = 'MCP_ABORTED') {
  return Object.assign(new Error(`OAuth callback cancelled: ${safeString(reason)}`, { cause: reason }), { code })
}

/**
 * The reason `AbortSignal.timeout` gives, as the reference's deadline reported it.
 * @returns {DOMException}
 */
function timeoutReason() {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError')
}

/**
 * @param {unknown} value
 * @returns {string | undefined}
 */
function optionalString(value) {
  return value === undefined || value === null ? undefined : safeString(value)
}

/**
 * `options[name]`, checked (a JS caller may pass anything), or `fallback`.
 * @param {MCPOAuthFlowOptions | undefined} options
 * @param {keyof MCPOAuthFlowOptions} name
 * @param {number} fallback
 * @returns {number}
 */
function millisOption(options, name, fallback) {
  const value = /** @type {unknown} */ (options?.[name])
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw Object.assign(new Error(`Invalid options: "${name}" must be a non-negative number`), { code: 'MCP_INVALID_CONFIG' })
  }
  return value
}

/**
 * A controller callback whose failure only matters to the caller of `login()` when `fatal`.
 * @template {'onAuth' | 'onProgress'} K
 * @param {OAuthController} ctrl
 * @param {K} name
 * @param {Parameters<NonNullable<OAuthController[K]>>[0]} arg
 * @param {boolean} fatal
 */
function callController(ctrl, name, arg, fatal) {
  // The user's, as assigned: called only if it is a function.
  const fn = /** @type {unknown} */ (ctrl?.[name])
  if (typeof fn !== 'function') return
  try {
    swallow(fn.call(ctrl, arg))
  } catch (err) {
    if (fatal) throw toError(err)
  }
}

/**
 * What a pasted answer holds: the redirect URL, its query string, or the bare code (`code#state`).
 * @param {unknown} input what `onManualCodeInput` resolved with (a string, unless the user erred)
 * @returns {{ code?: string, state?: string }}
 */
function pastedCode(input) {
  const text = safeString(input ?? '').trim()
  if (text === '') return {}
  const fromParams = (/** @type {URLSearchParams} */ params) => ({
    code: params.get('code') ?? undefined,
    state: params.get('state') ?? undefined,
  })
  if (URL.canParse(text)) return fromParams(new URL(text).searchParams)
  if (text.includes('code=')) return fromParams(new URLSearchParams(text.replace(/^[?#]/, '')))
  const hash = text.indexOf('#')
  return hash < 0 ? { code: text } : { code: text.slice(0, hash), state: text.slice(hash + 1) || undefined }
}

/** @returns {Promise<void>} */
function nextTurn() {
  return new Promise((resolve) => setTimeout(resolve, 0))
}

class MCPOAuthFlow {
  /**
   * `config`: `{ authorizationUrl, tokenUrl, clientId?, clientSecret?, scopes? }`; `ctrl`:
   * `{ onAuth?, onProgress?, onManualCodeInput?, signal? }`. [beyond] `options`:
   * `{ callbackTimeout?, requestTimeout? }` in milliseconds (defaults 120000 and 10000).
   * @param {MCPOAuthConfig} config
   * @param {OAuthController} ctrl
   * @param {MCPOAuthFlowOptions} [options]
   */
  constructor(config, ctrl, options) {
    this.config = config
    this.ctrl = ctrl
    this.options = options
    /** The port tried first for the callback listener (`http://localhost:<port>/callback`). */
    this.preferredPort = PREFERRED_PORT
  }

  /**
   * Runs the whole flow; resolves with `{ access, refresh, expires }` (SPEC 8.7).
   * @returns {Promise<OAuthCredentials>}
   */
  async login() {
    /** @type {OAuthController} */
    const ctrl = this.ctrl ?? {}
    const signal = ctrl.signal
    const callbackTimeout = millisOption(this.options, 'callbackTimeout', CALLBACK_TIMEOUT)
    const requestTimeout = millisOption(this.options, 'requestTimeout', REQUEST_TIMEOUT)
    if (signal?.aborted) throw cancelled(signal.reason)

    const cancel = new native.OAuthCancel()
    /** @type {(() => void) | undefined} set at once by the executor below */
    let onAbort
    /** @type {Promise<never>} */
    const aborted = new Promise((_resolve, reject) => {
      onAbort = () => {
        cancel.cancel()
        reject(cancelled(/** @type {AbortSignal} */ (signal).reason))
      }
    })
    swallow(aborted)
    signal?.addEventListener('abort', /** @type {() => void} */ (onAbort), { once: true })
    /**
     * Each step races the abort; a step left behind rejects later with MCP_ABORTED, unheard.
     * @template T
     * @param {Promise<T>} promise
     * @returns {Promise<T>}
     */
    const step = (promise) => {
      swallow(promise)
      return Promise.race([promise, aborted])
    }

    /** @type {NativeOAuthFlow} */
    let flow
    const starting = native.oauthFlowStart(JSON.stringify(this.#nativeConfig()), this.#port(), cancel)
    try {
      flow = await step(starting)
    } catch (err) {
      signal?.removeEventListener('abort', /** @type {() => void} */ (onAbort))
      starting.then(
        (late) => late.stop(),
        () => {},
      )
      throw err
    }
    try {
      if (flow.fellBack) {
        callController(ctrl, 'onProgress', `Preferred port ${this.#port()} unavailable, using port ${flow.port}`, false)
      }
      await step(flow.register(requestTimeout))
      const url = flow.authorizationUrl()
      callController(ctrl, 'onAuth', { url }, true)
      callController(ctrl, 'onProgress', 'Waiting for browser authentication...', false)
      await step(this.#waitForCode(flow, ctrl, callbackTimeout))
      callController(ctrl, 'onProgress', 'Exchanging authorization code for tokens...', false)
      return credentialsFrom(await step(flow.exchange(requestTimeout)))
    } finally {
      signal?.removeEventListener('abort', /** @type {() => void} */ (onAbort))
      await flow.stop().catch(() => {})
    }
  }

  /** @returns {number} */
  #port() {
    const p = this.preferredPort
    return Number.isInteger(p) && p >= 0 && p <= 65535 ? p : PREFERRED_PORT
  }

  /** The config as Rust reads it: strings, or absent (the URLs as ''). */
  #nativeConfig() {
    /** @type {Partial<MCPOAuthConfig>} */
    const c = this.config ?? {}
    return {
      authorizationUrl: optionalString(c.authorizationUrl) ?? '',
      tokenUrl: optionalString(c.tokenUrl) ?? '',
      clientId: optionalString(c.clientId),
      clientSecret: optionalString(c.clientSecret),
      scopes: optionalString(c.scopes),
    }
  }

  /**
   * Resolves once Rust holds a code: from the browser's redirect, or pasted through
   * `onManualCodeInput` (asked again after an answer without a code, at most
   * MANUAL_INPUT_ATTEMPTS times). Rejects with the callback's refusal, or at the deadline.
   * @param {NativeOAuthFlow} flow
   * @param {OAuthController} ctrl
   * @param {number} timeout
   * @returns {Promise<void>}
   */
  #waitForCode(flow, ctrl, timeout) {
    const browser = flow.waitForCode(timeout).then((arrived) => {
      if (!arrived) throw cancelled(timeoutReason(), 'MCP_TIMEOUT')
    })
    if (typeof ctrl.onManualCodeInput !== 'function') return browser
    let done = false
    browser.then(
      () => (done = true),
      () => (done = true),
    )
    const pasted = (async () => {
      for (let attempt = 0; attempt < MANUAL_INPUT_ATTEMPTS; attempt++) {
        /** @type {unknown} */
        let input
        try {
          // Checked above (narrowing does not reach this closure); the parentheses keep `this`.
          input = await /** @type {NonNullable<OAuthController['onManualCodeInput']>} */ (ctrl.onManualCodeInput)()
        } catch {
          return NEVER // no prompt: the browser (or the deadline) decides
        }
        if (done) return NEVER
        const { code, state } = pastedCode(input)
        if (code) return flow.supplyCode(code, state)
        await nextTurn()
      }
      return NEVER
    })()
    swallow(pasted)
    return Promise.race([browser, pasted])
  }
}

exports.MCPOAuthFlow = MCPOAuthFlow
