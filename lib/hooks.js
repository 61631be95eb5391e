'use strict'
// The process-wide configuration call (SPEC 11.2): the agent's own objects, injected once by its
// shims (examples/agent-shims), never imported by the package. Each call sets the hooks it names
// and leaves the others; a hook never given (or given as undefined) falls back to the package's own
// behaviour. The modules read `hooks` at the moment they need one, so order of imports is free.

/**
 * The hooks and what each must be: 'function' (a class counts), or 'object' (a non-null object
 * or a function).
 * @type {Record<string, 'function' | 'object'>}
 */
const KINDS = {
  // tool-bridge
  ToolAbortError: 'function',
  normalizeSchemaForMCP: 'function',
  schemaDeclaresIntentField: 'function',
  renderMCPCall: 'function',
  renderMCPResult: 'function',
  InternalUrlRouter: 'object',
  extractUriScheme: 'function',
  // manager (config.ts, oauth-credentials.ts, config/resolve-config-value.ts)
  loadAllMCPConfigs: 'function',
  isBrowserMCPServer: 'function',
  validateServerConfig: 'function',
  resolveConfigValue: 'function',
  lookupMcpOAuthCredential: 'function',
  refreshStoredManagedMcpOAuthCredential: 'function',
  // config-writer
  withFileLock: 'function',
  invalidateConfigCache: 'function',
  // loader, tool-cache
  AgentStorage: 'object',
  // client, stdio
  getProjectDir: 'function',
  hostHasInheritableConsole: 'function',
  // everywhere
  logger: 'object',
}

/** @type {Record<string, any>} */
const hooks = Object.create(null)

/**
 * Sets the hooks named in `given`; `undefined` resets one to the package's own behaviour. An
 * unknown name or a value of the wrong kind throws a TypeError and sets nothing.
 * @param {import("./entries/configure.js").MCPHooks} given
 */
function configureMCP(given) {
  if (given === null || typeof given !== 'object') throw new TypeError('configureMCP takes an object of hooks')
  for (const [name, value] of Object.entries(/** @type {Record<string, unknown>} */ (given))) {
    const kind = KINDS[name]
    if (!kind) throw new TypeError(`configureMCP: unknown hook "${name}" (known: ${Object.keys(KINDS).join(', ')})`)
    if (value === undefined) continue
    const ok =
      kind === 'function' ? typeof value === 'function' : (typeof value === 'object' && value !== null) || typeof value === 'function'
    if (!ok) throw new TypeError(`configureMCP: hook "${name}" must be ${kind === 'function' ? 'a function' : 'an object'}`)
  }
  for (const [name, value] of Object.entries(/** @type {Record<string, unknown>} */ (given))) {
    if (value === undefined) delete hooks[name]
    else hooks[name] = value
  }
}

/**
 * The hooks set now, by name (a copy).
 * @returns {import('./entries/configure.js').MCPHooks}
 */
function configuredHooks() {
  return { ...hooks }
}

/**
 * The injected logger made safe (one that throws loses its line, nothing else), or `fallback`.
 * @param {{ error?: Function, warn?: Function, debug?: Function } | undefined} [fallback]
 */
function hookLogger(fallback) {
  /** @param {'error' | 'warn' | 'debug' | 'info'} level */
  const call =
    (level) =>
    (/** @type {unknown[]} */ ...args) => {
      const target = hooks.logger ?? fallback
      try {
        const fn = target?.[level]
        if (typeof fn === 'function') {
          const out = fn.apply(target, args)
          if (out && typeof out.then === 'function') out.then(undefined, () => {})
        }
      } catch {
        // a broken logger loses the line
      }
    }
  return { error: call('error'), warn: call('warn'), info: call('info'), debug: call('debug') }
}

/** The project directory: the injected `getProjectDir`, else the process's cwd. */
function projectDir() {
  const fn = hooks.getProjectDir
  if (typeof fn === 'function') {
    try {
      const dir = fn()
      if (typeof dir === 'string' && dir !== '') return dir
    } catch {
      // a broken hook: the package's own answer
    }
  }
  return process.cwd()
}

module.exports = { hooks, configureMCP, configuredHooks, hookLogger, projectDir, HOOK_NAMES: Object.keys(KINDS) }
