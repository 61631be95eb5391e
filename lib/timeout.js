'use strict'
// The agent's deadlines as it ships today (18.3.4 `timeout.ts`, SPEC 11.3): the per-request
// deadline and the startup window, each overridable by an environment variable that the package
// reads at the root (never in the 12.7 profile).

const { hookLogger } = require('./hooks.js')

const DEFAULT_MCP_TIMEOUT_MS = 30000
const DEFAULT_MCP_STARTUP_TIMEOUT_MS = 250

/**
 * A non-negative number from environment variable `name`, read now; an invalid value is reported
 * and ignored.
 * @param {string} name
 * @param {{ warn(message: string, details?: unknown): void } | undefined} logger
 * @returns {number | undefined}
 */
function fromEnv(name, logger) {
  logger ??= hookLogger()
  const raw = process.env[name]?.trim()
  if (!raw) return undefined
  const value = Number(raw)
  if (Number.isFinite(value) && value >= 0) return value
  logger?.warn(`Ignoring invalid ${name} env value; expected a non-negative number`, { value: raw })
  return undefined
}

/**
 * A request's deadline in milliseconds: `OMP_MCP_TIMEOUT_MS`, else the config's, else 30 s;
 * 0 means none.
 * @param {number} [configTimeout]
 * @param {{ warn(message: string, details?: unknown): void }} [logger]
 */
function resolveMCPTimeoutMs(configTimeout, logger) {
  return fromEnv('OMP_MCP_TIMEOUT_MS', logger) ?? configTimeout ?? DEFAULT_MCP_TIMEOUT_MS
}

/**
 * The startup window in milliseconds: `OMP_MCP_STARTUP_TIMEOUT_MS`, else the caller's, else
 * 250 ms; 0 waits for every server.
 * @param {number} [startupTimeoutMs]
 * @param {{ warn(message: string, details?: unknown): void }} [logger]
 */
function resolveMCPStartupTimeoutMs(startupTimeoutMs, logger) {
  return fromEnv('OMP_MCP_STARTUP_TIMEOUT_MS', logger) ?? startupTimeoutMs ?? DEFAULT_MCP_STARTUP_TIMEOUT_MS
}

/** @param {number} timeoutMs */
function isMCPTimeoutEnabled(timeoutMs) {
  return timeoutMs > 0
}

/** @param {number} timeoutMs */
function describeMCPTimeout(timeoutMs) {
  return isMCPTimeoutEnabled(timeoutMs) ? `${timeoutMs}ms` : 'disabled'
}

/** @type {AbortController | undefined} */
let neverAbort

/** A signal that never aborts (one for the process), for a request without a deadline. */
function getNeverAbortSignal() {
  neverAbort ??= new AbortController()
  return neverAbort.signal
}

/**
 * A deadline of `timeoutMs` (none when it is not positive) over the caller's `signal`, which
 * remembers which of the two fired first: a caller's abort is never taken for the deadline, nor
 * a late timer for the caller's abort.
 * @param {number} timeoutMs
 * @param {AbortSignal} [signal]
 * @returns {import('./entries/timeout.js').MCPTimeoutOperation}
 */
function createMCPTimeout(timeoutMs, signal) {
  if (!isMCPTimeoutEnabled(timeoutMs)) {
    return { signal, clear: () => {}, isTimeoutAbort: () => false, timedOut: () => false }
  }
  const controller = new AbortController()
  let timerFired = false
  let callerAborted = false
  /** @type {ReturnType<typeof setTimeout> | undefined} */
  let timer
  const onCallerAbort = () => {
    callerAborted = true
    clearTimeout(timer)
  }
  if (signal?.aborted) {
    callerAborted = true
    controller.abort(signal.reason)
  } else {
    // The package's longest timer (a JS timer's limit); a longer deadline waits that long.
    timer = setTimeout(
      () => {
        if (callerAborted) return
        timerFired = true
        controller.abort()
      },
      Math.min(timeoutMs, 2 ** 31 - 1),
    )
    signal?.addEventListener('abort', onCallerAbort, { once: true })
  }
  const operation = signal ? AbortSignal.any([signal, controller.signal]) : controller.signal
  return {
    signal: operation,
    clear: () => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', onCallerAbort)
    },
    isTimeoutAbort: (error) =>
      timerFired && error instanceof Error && (error.name === 'AbortError' || (error.name === 'SyntaxError' && operation.aborted)),
    timedOut: () => timerFired,
  }
}

module.exports = {
  resolveMCPTimeoutMs,
  resolveMCPStartupTimeoutMs,
  isMCPTimeoutEnabled,
  describeMCPTimeout,
  getNeverAbortSignal,
  createMCPTimeout,
}
