'use strict'
// What both profiles' tool objects share (lib/tool-bridge.js, 12.7; lib/tool-bridge-current.js, the
// agent as it ships today): the abort error, the schema rule, the abort race, hidden fields.

/** A tool call ends this way when it was aborted (SPEC 8.1 "Aborts"). */
class ToolAbortError extends Error {
  /** @type {'Operation aborted'} */
  static MESSAGE = 'Operation aborted'

  // A field rather than `this.name = …` in the constructor (the same own property, set at the
  // same moment): only a field can narrow Error's `name: string` to the declared literal.
  /** @type {'ToolAbortError'} */
  name = 'ToolAbortError'

  /** @param {string} [message] */
  constructor(message = ToolAbortError.MESSAGE) {
    super(message)
  }
}

/**
 * `parameters`: the input schema itself, or a copy with `properties: {}` when an object schema
 * has none (SPEC 8.1). A tool without a schema (a broken server) gets an empty object schema.
 * @param {unknown} schema
 * @returns {Record<string, unknown>}
 */
function parametersOf(schema) {
  if (!schema || typeof schema !== 'object') return { type: 'object', properties: {} }
  const s = /** @type {Record<string, unknown>} */ (schema)
  if (s.type === 'object' && !('properties' in s)) return { ...s, properties: {} }
  return s
}

/**
 * `signal.reason` if it is a ToolAbortError, otherwise a new one.
 * @param {AbortSignal} signal
 */
function abortError(signal) {
  return signal.reason instanceof ToolAbortError ? signal.reason : new ToolAbortError()
}

/**
 * Waits for `promise`, or rejects when `signal` aborts (with its reason if that is an Error,
 * otherwise a ToolAbortError); the listener is removed either way.
 * @template T
 * @param {Promise<T>} promise
 * @param {AbortSignal | undefined} signal
 * @returns {Promise<T>}
 */
function raceAbort(promise, signal) {
  if (!signal) return promise
  return new Promise((resolve, reject) => {
    const onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new ToolAbortError())
    if (signal.aborted) return onAbort()
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (err) => {
        signal.removeEventListener('abort', onAbort)
        reject(err)
      },
    )
  })
}

/**
 * Sets `fields` as own, non-enumerable properties (as the reference's private constructor
 * parameters, but out of `JSON.stringify` and spreads: the connection holds the server's
 * resolved config, secrets included, and a tool object gets logged).
 * @param {object} target
 * @param {Record<string, unknown>} fields
 */
function hidden(target, fields) {
  for (const [key, value] of Object.entries(fields)) {
    Object.defineProperty(target, key, { value, enumerable: false, writable: true, configurable: true })
  }
}

/**
 * The options of a tool's `tools/call` ([beyond] SPEC 8.11 long tools): progress keeps it alive, up
 * to 10 × its `timeout`, and reaches `onUpdate` as a text update with `details()`.
 * @param {number} timeout
 * @param {AbortSignal | undefined} signal
 * @param {((update: any) => void) | undefined} onUpdate
 * @param {() => object} details
 * @returns {Record<string, unknown>}
 */
function callOptions(timeout, signal, onUpdate, details) {
  /** @type {Record<string, unknown>} */
  const options = { signal, resetTimeoutOnProgress: true, maxTotalTimeout: 10 * timeout }
  if (typeof onUpdate === 'function') {
    options.onProgress = (/** @type {{ progress: number, total?: number, message?: string }} */ p) => {
      const text = p.message || (p.total !== undefined ? `${p.progress}/${p.total}` : String(p.progress))
      onUpdate({ content: [{ type: 'text', text }], details: details() })
    }
  }
  return options
}

module.exports = { ToolAbortError, abortError, callOptions, hidden, parametersOf, raceAbort }
