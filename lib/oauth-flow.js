'use strict'
// mcp-native/oauth-flow (SPEC 8.7, 8.11): `MCPOAuthFlow`, the reference's authorization-code
// login with PKCE, as the agent's `/mcp` wizard drives it.
//
// Rust (src/oauth/flow.rs) does the callback listener, dynamic registration, the authorization
// URL, PKCE and `state`, the token request — and keeps their secrets. This file sequences the
// steps and owns what must be JavaScript: the promise, the AbortSignal, and the controller's
// callbacks. A callback that throws, rejects or never returns cannot crash the host or leave
// `login()` unsettled: every wait is bounded by the flow's own deadlines.

const native = require('../native.js')
const { safeString, swallow, toError } = require('../core.js')

/** The port the reference listens on first (a free one when it is taken). */
const PREFERRED_PORT = 3000
/** How long `login()` waits for the browser, in milliseconds. */
const CALLBACK_TIMEOUT = 120000
/** [fix] Deadline of each registration and token request, in milliseconds. */
const REQUEST_TIMEOUT = 10000
/** How often an unusable pasted answer (no code in it) is asked for again. */
const MANUAL_INPUT_ATTEMPTS = 5

const NEVER = new Promise(() => {})

/** `OAuth callback cancelled: <reason>` (code `MCP_ABORTED`, or `MCP_TIMEOUT` at the deadline). */
function cancelled(reason, code = 'MCP_ABORTED') {
  return Object.assign(new Error(`OAuth callback cancelled: ${safeString(reason)}`, { cause: reason }), { code })
}

/** The reason `AbortSignal.timeout` gives, as the reference's deadline reported it. */
function timeoutReason() {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError')
}

function optionalString(value) {
  return value === undefined || value === null ? undefined : safeString(value)
}

function millisOption(options, name, fallback) {
  const value = options?.[name]
  if (value === undefined || value === null) return fallback
  if (typeof value !== 'number' || Number.isNaN(value) || value < 0) {
    throw Object.assign(new Error(`Invalid options: "${name}" must be a non-negative number`), { code: 'MCP_INVALID_CONFIG' })
  }
  return value
}

/** A controller callback whose failure only matters to the caller of `login()` when `fatal`. */
function callController(ctrl, name, arg, fatal) {
  const fn = ctrl?.[name]
  if (typeof fn !== 'function') return
  try {
    swallow(fn.call(ctrl, arg))
  } catch (err) {
    if (fatal) throw toError(err)
  }
}

/** What a pasted answer holds: the redirect URL, its query string, or the bare code (`code#state`). */
function pastedCode(input) {
  const text = safeString(input ?? '').trim()
  if (text === '') return {}
  const fromParams = (params) => ({ code: params.get('code') ?? undefined, state: params.get('state') ?? undefined })
  if (URL.canParse(text)) return fromParams(new URL(text).searchParams)
  if (text.includes('code=')) return fromParams(new URLSearchParams(text.replace(/^[?#]/, '')))
  const hash = text.indexOf('#')
  return hash < 0 ? { code: text } : { code: text.slice(0, hash), state: text.slice(hash + 1) || undefined }
}

function nextTurn() {
  return new Promise((resolve) => setTimeout(resolve, 0))
}

class MCPOAuthFlow {
  /**
   * `config`: `{ authorizationUrl, tokenUrl, clientId?, clientSecret?, scopes? }`; `ctrl`:
   * `{ onAuth?, onProgress?, onManualCodeInput?, signal? }`. [beyond] `options`:
   * `{ callbackTimeout?, requestTimeout? }` in milliseconds (defaults 120000 and 10000).
   */
  constructor(config, ctrl, options) {
    this.config = config
    this.ctrl = ctrl
    this.options = options
    /** The port tried first for the callback listener (`http://localhost:<port>/callback`). */
    this.preferredPort = PREFERRED_PORT
  }

  /** Runs the whole flow; resolves with `{ access, refresh, expires }` (SPEC 8.7). */
  async login() {
    const ctrl = this.ctrl ?? {}
    const signal = ctrl.signal
    const callbackTimeout = millisOption(this.options, 'callbackTimeout', CALLBACK_TIMEOUT)
    const requestTimeout = millisOption(this.options, 'requestTimeout', REQUEST_TIMEOUT)
    if (signal?.aborted) throw cancelled(signal.reason)

    const cancel = new native.OAuthCancel()
    let onAbort
    const aborted = new Promise((_resolve, reject) => {
      onAbort = () => {
        cancel.cancel()
        reject(cancelled(signal.reason))
      }
    })
    swallow(aborted)
    signal?.addEventListener('abort', onAbort, { once: true })
    // Each step races the abort; a step left behind rejects later with MCP_ABORTED, unheard.
    const step = (promise) => {
      swallow(promise)
      return Promise.race([promise, aborted])
    }

    let flow
    const starting = native.oauthFlowStart(JSON.stringify(this.#nativeConfig()), this.#port(), cancel)
    try {
      flow = await step(starting)
    } catch (err) {
      signal?.removeEventListener('abort', onAbort)
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
      const data = JSON.parse(await step(flow.exchange(requestTimeout)))
      return { access: data.access_token, refresh: data.refresh_token ?? '', expires: Date.now() + (data.expires_in ?? 3600) * 1000 }
    } finally {
      signal?.removeEventListener('abort', onAbort)
      await flow.stop().catch(() => {})
    }
  }

  #port() {
    const p = this.preferredPort
    return Number.isInteger(p) && p >= 0 && p <= 65535 ? p : PREFERRED_PORT
  }

  #nativeConfig() {
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
        let input
        try {
          input = await ctrl.onManualCodeInput()
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
