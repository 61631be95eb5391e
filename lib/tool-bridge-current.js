'use strict'
// mcp-native/tool-bridge at the root: MCP tools as the agent's tool objects as it ships them today
// (18.3.4 `tool-bridge.ts`, SPEC 11.3–11.4): `mcp__` names (digits kept, 64-character cap, from the
// Rust core) with `legacyName`, `approval: "write"`, `strict: false`, `mergeCallAndResult`; the
// arguments prepared (non-object → {}, the harness's intent field stripped unless the tool declares
// it, optional empty placeholders omitted); results with image blocks kept, `structuredContent`
// surfaced, failures as the agent's diagnostic text (of the agent's errors, lib/root-errors.js);
// one reconnect and retry through the `reconnect` argument on a retriable error or a tool-level
// auth challenge. The 12.7 objects are mcp-native/compat-12.7/tool-bridge's.

const native = require('../native/index.js')
const { callTool } = require('./client.js')
const { MCPTransportError, formatMCPToolFailure } = require('./errors.js')
const { toAgentError, transportKindOf } = require('./root-errors.js')
const { ToolAbortError, callOptions, hidden, parametersOf, raceAbort } = require('./tool-support.js')
const { hooks, hookLogger } = require('./hooks.js')

/** @typedef {import('./entries/tool-bridge.js').MCPReconnect} MCPReconnect */
/** @typedef {import('./entries/tool-bridge.js').MCPToolDetails} MCPToolDetails */
/** @typedef {import('./entries/tool-bridge.js').MCPToolResult} MCPToolResult */
/** @typedef {import('./entries/tool-bridge.js').MCPToolOptions} MCPToolOptions */

/** The field the agent's harness adds to every tool call (`INTENT_FIELD` of `@oh-my-pi/pi-wire`). */
const INTENT_FIELD = 'i'
const DEFAULT_TIMEOUT = native.DEFAULT_TIMEOUT_MS

/** The agent's `createMCPToolName`. @param {string} serverName @param {string} toolName */
function createMCPToolName(serverName, toolName) {
  return native.mcpToolNameCurrent(String(serverName), String(toolName))
}

/** The agent's `createLegacyMCPToolName`. @param {string} serverName @param {string} toolName */
function createLegacyMCPToolName(serverName, toolName) {
  return native.mcpToolNameLegacy(String(serverName), String(toolName)) ?? undefined
}

/** The agent's `canonicalMCPToolNameCandidates`. @param {string} name @returns {string[]} */
function canonicalMCPToolNameCandidates(name) {
  return typeof name === 'string' ? native.mcpToolNameCandidates(name) : []
}

/**
 * The one registered tool a model-emitted `mcp__` spelling means, through `lookup`; none when no
 * candidate or more than one resolves.
 * @template {{ readonly name: string }} T
 * @param {string} name
 * @param {(candidate: string) => T | undefined} lookup
 * @returns {T | undefined}
 */
function resolveMCPToolAlias(name, lookup) {
  /** @type {T[]} */
  const found = []
  for (const candidate of canonicalMCPToolNameCandidates(name)) {
    const hit = lookup(candidate)
    if (hit !== undefined && !found.some((t) => t.name === hit.name)) found.push(hit)
  }
  return found.length === 1 ? found[0] : undefined
}

/**
 * A tool's original MCP route (server and tool name), when it is an MCP tool.
 * @param {{ name: string, mcpServerName?: unknown, mcpToolName?: unknown }} tool
 */
function getMCPToolOriginKey(tool) {
  if (typeof tool.mcpServerName !== 'string' || typeof tool.mcpToolName !== 'string') return undefined
  return `${tool.mcpServerName}\u0000${tool.mcpToolName}`
}

/**
 * One MCP tool per minted name; between two origins the one with the smaller origin key wins,
 * whatever the order (a reconnect must not flip who owns a name). Other tools pass through.
 * @template {{ name: string, mcpServerName?: unknown, mcpToolName?: unknown }} T
 * @param {readonly T[]} tools
 * @param {{ warn?: (message: string, details?: unknown) => void }} [logger]
 * @returns {T[]}
 */
function deduplicateMCPToolsByName(tools, logger) {
  /** @type {T[]} */
  const out = []
  /** @type {Map<string, { tool: T, key: string, at: number }>} */
  const byName = new Map()
  for (const tool of tools) {
    const key = getMCPToolOriginKey(tool)
    if (key === undefined) {
      out.push(tool)
      continue
    }
    const held = byName.get(tool.name)
    if (!held) {
      byName.set(tool.name, { tool, key, at: out.length })
      out.push(tool)
      continue
    }
    if (held.key === key) continue
    const keep = held.key < key
    const [winner, loser] = keep ? [held.tool, tool] : [tool, held.tool]
    if (!keep) {
      out[held.at] = tool
      held.tool = tool
      held.key = key
    }
    try {
      logger?.warn?.('MCP tool name collision; keeping stable winner', {
        name: tool.name,
        keptServer: winner.mcpServerName,
        keptTool: winner.mcpToolName,
        ignoredServer: loser.mcpServerName,
        ignoredTool: loser.mcpToolName,
      })
    } catch {
      // a broken logger loses the line
    }
  }
  return out
}

const RETRIABLE = [
  'econnrefused',
  'econnreset',
  'epipe',
  'enetunreach',
  'ehostunreach',
  'fetch failed',
  'transport not connected',
  'transport closed',
  'network error',
]

/**
 * Whether a failed call is worth one reconnect and retry: the server is likely alive and only the
 * connection stale.
 * @param {unknown} error
 */
function isRetriableConnectionError(error) {
  if (!(error instanceof Error)) return false
  if (error instanceof MCPTransportError) {
    if (['connect', 'reset', 'eof', 'closed'].includes(error.failure)) return error.retryable
    return error.failure === 'http_status' && (error.code === 404 || error.code === 502 || error.code === 503)
  }
  const message = error.message.toLowerCase()
  return /^http (404|502|503):/.test(message) || RETRIABLE.some((p) => message.includes(p))
}

/** @param {unknown} value @returns {Record<string, unknown>} */
function argsObject(value) {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? /** @type {Record<string, unknown>} */ (value) : {}
}

/**
 * Whether the tool's own schema has the intent field as a parameter.
 * @param {any} schema
 */
function declaresIntent(schema) {
  if (typeof hooks.schemaDeclaresIntentField === 'function') {
    try {
      return Boolean(hooks.schemaDeclaresIntentField(schema))
    } catch {
      // a broken hook: the package's own rule
    }
  }
  const props = schema && typeof schema === 'object' ? schema.properties : undefined
  return Boolean(props && typeof props === 'object' && Object.hasOwn(props, INTENT_FIELD))
}

/** @param {unknown} v */
function emptyPlaceholder(v) {
  return v === undefined || v === '' || (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0)
}

/**
 * The arguments sent (18.3.4 `prepareOutboundArgs`, less the agent's internal-URL translation):
 * an object; the intent field gone unless declared; optional declared parameters left empty
 * (`undefined`, `""`, `{}`) omitted.
 * @param {unknown} params
 * @param {any} schema
 */
function prepareArgs(params, schema) {
  let args = argsObject(params)
  if (Object.hasOwn(args, INTENT_FIELD) && !declaresIntent(schema)) {
    const { [INTENT_FIELD]: _intent, ...rest } = args
    args = rest
  }
  const props = schema && typeof schema === 'object' ? schema.properties : undefined
  if (!props || typeof props !== 'object') return args
  const required = new Set(Array.isArray(schema.required) ? schema.required : [])
  /** @type {Record<string, unknown> | undefined} */
  let out
  for (const [key, value] of Object.entries(args)) {
    if (required.has(key) || !Object.hasOwn(props, key) || !emptyPlaceholder(value)) continue
    out ??= { ...args }
    delete out[key]
  }
  return out ?? args
}

/**
 * Deep equality of JSON values.
 * @param {unknown} a
 * @param {unknown} b
 * @returns {boolean}
 */
function jsonEqual(a, b) {
  if (a === b) return true
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false
  if (Array.isArray(a) !== Array.isArray(b)) return false
  const ka = Object.keys(a)
  const kb = Object.keys(b)
  if (ka.length !== kb.length) return false
  const ra = /** @type {Record<string, unknown>} */ (a)
  const rb = /** @type {Record<string, unknown>} */ (b)
  return ka.every((k) => Object.hasOwn(rb, k) && jsonEqual(ra[k], rb[k]))
}

/**
 * The agent's content blocks: text items (and resources as text) joined with a blank line between
 * image blocks, which are kept as they are; at least one block.
 * @param {any[]} content
 * @returns {Array<{ type: 'text', text: string } | { type: 'image', data: string, mimeType: string }>}
 */
function contentBlocks(content) {
  /** @type {Array<any>} */
  const blocks = []
  let text = ''
  const flush = () => {
    if (text) blocks.push({ type: 'text', text })
    text = ''
  }
  for (const item of Array.isArray(content) ? content : []) {
    if (item?.type === 'text') text += text ? `\n\n${item.text}` : item.text
    else if (item?.type === 'image') {
      flush()
      blocks.push(item)
    } else if (item?.type === 'resource') {
      const r = item.resource
      const piece = r?.text ? `[Resource: ${r.uri}]\n${r.text}` : `[Resource: ${r?.uri}]`
      text += text ? `\n\n${piece}` : piece
    }
  }
  flush()
  return blocks.length > 0 ? blocks : [{ type: 'text', text: '' }]
}

/**
 * A `tools/call` result as the agent's tool result.
 * @param {any} result
 * @param {string} serverName
 * @param {string} mcpToolName
 * @param {{ provider?: string, providerName?: string } | undefined} source
 * @returns {MCPToolResult}
 */
function buildResult(result, serverName, mcpToolName, source) {
  const content = contentBlocks(result.content)
  /** @type {MCPToolDetails} */
  const details = {
    serverName,
    mcpToolName,
    isError: result.isError,
    rawContent: result.content,
    mcpMeta: result._meta,
    provider: source?.provider,
    providerName: source?.providerName,
  }
  if (result.isError) {
    const first = content[0]
    if (first?.type === 'text') content[0] = { type: 'text', text: `Error: ${first.text}` }
    else content.unshift({ type: 'text', text: 'Error:' })
  }
  const structured = result.structuredContent
  if (structured !== undefined) {
    details.structuredContent = structured
    const already = (Array.isArray(result.content) ? result.content : []).some((/** @type {any} */ item) => {
      if (item?.type !== 'text' || !String(item.text).trim()) return false
      try {
        return jsonEqual(JSON.parse(String(item.text).trim()), structured)
      } catch {
        return false
      }
    })
    if (!already) {
      let json
      try {
        json = JSON.stringify(structured, null, 2)
      } catch {
        json = undefined
      }
      if (json !== undefined) content.push({ type: 'text', text: `\`\`\`json\n${json}\n\`\`\`` })
    }
  }
  /** @type {MCPToolResult} */
  const out = { content, details }
  if (result.isError) out.isError = true
  return out
}

/**
 * A failure as the agent's tool result.
 * @param {unknown} error
 * @param {string} serverName
 * @param {string} mcpToolName
 * @param {{ provider?: string, providerName?: string } | undefined} source
 * @returns {MCPToolResult}
 */
function buildErrorResult(error, serverName, mcpToolName, source) {
  return {
    content: [{ type: 'text', text: formatMCPToolFailure(error, serverName, mcpToolName) }],
    details: { serverName, mcpToolName, isError: true, provider: source?.provider, providerName: source?.providerName },
    isError: true,
  }
}

/**
 * A tool-level auth challenge of a failed result (`_meta["mcp/www_authenticate"]`).
 * @param {any} result
 */
function authChallenge(result) {
  if (!result?.isError) return undefined
  const values = result._meta?.['mcp/www_authenticate']
  if (!Array.isArray(values)) return undefined
  const wwwAuthenticate = values.filter((v) => typeof v === 'string' && v.trim() !== '')
  return wwwAuthenticate.length > 0 ? { wwwAuthenticate } : undefined
}

/** A new abort error: of the agent's injected `ToolAbortError` class, else the package's. */
function toolAbort() {
  const Injected = hooks.ToolAbortError
  if (typeof Injected === 'function') {
    try {
      const error = new Injected()
      if (error instanceof Error) return error
    } catch {
      // a broken class: the package's own
    }
  }
  return new ToolAbortError()
}

/** @param {unknown} error whether it is an abort error of the class in force */
function isToolAbort(error) {
  const Injected = hooks.ToolAbortError
  return typeof Injected === 'function' ? error instanceof Injected : error instanceof ToolAbortError
}

/**
 * The abort error of an aborted call: the signal's reason when it is one, else a new one.
 * @param {AbortSignal} signal
 */
function abortError(signal) {
  return isToolAbort(signal.reason) ? signal.reason : toolAbort()
}

/**
 * An abort surfaces as ToolAbortError (the agent's injected class, else the package's), whatever
 * carried it.
 * @param {unknown} error
 * @param {AbortSignal | undefined} signal
 */
function rethrowIfAborted(error, signal) {
  if (isToolAbort(error)) throw error
  if (error instanceof ToolAbortError) throw toolAbort()
  if (error instanceof Error && error.name === 'AbortError') throw toolAbort()
  if (signal?.aborted) throw toolAbort()
}

/**
 * `parameters`: the agent's injected `normalizeSchemaForMCP` of the input schema, else the
 * package's rule (SPEC 8.1).
 * @param {unknown} schema
 */
function toolParameters(schema) {
  if (typeof hooks.normalizeSchemaForMCP === 'function') {
    try {
      const out = hooks.normalizeSchemaForMCP(schema)
      if (out && typeof out === 'object') return out
    } catch (error) {
      hookLogger().warn('normalizeSchemaForMCP failed; the schema is used as it is', { error: String(error) })
    }
  }
  return parametersOf(schema)
}

/**
 * 18.3.4 `resolveOutboundUrlArgs`: string arguments that are file-backed internal URLs of the
 * agent (`InternalUrlRouter` and `extractUriScheme` injected) become the paths behind them. Without
 * the hooks the arguments go as they are.
 * @param {unknown} value
 * @param {any} context the tool call's context
 * @param {WeakSet<object>} [seen]
 * @returns {Promise<unknown>}
 */
async function resolveOutboundUrlArgs(value, context, seen = new WeakSet()) {
  const Router = hooks.InternalUrlRouter
  const scheme = hooks.extractUriScheme
  if (!Router || typeof scheme !== 'function') return value
  if (typeof value === 'string') {
    const router = typeof Router.instance === 'function' ? Router.instance() : Router
    const url = router.normalize(value)
    if (!router.canHandle(url)) return value
    const name = scheme(url)
    if (!name || router.spec(name)?.backing !== 'file') return value
    const located = await router.locate(url, {
      cwd: context?.sessionManager?.getCwd?.(),
      settings: context?.settings,
      localProtocolOptions: context?.localProtocolOptions,
    })
    return located ?? value
  }
  if (typeof value !== 'object' || value === null || seen.has(value)) return value
  seen.add(value)
  if (Array.isArray(value)) {
    /** @type {unknown[] | undefined} */
    let resolved
    for (let i = 0; i < value.length; i++) {
      const next = await resolveOutboundUrlArgs(value[i], context, seen)
      if (next === value[i] && !resolved) continue
      resolved ??= value.slice()
      resolved[i] = next
    }
    return resolved ?? value
  }
  const input = /** @type {Record<string, unknown>} */ (value)
  /** @type {Record<string, unknown> | undefined} */
  let resolved
  for (const key in input) {
    const next = await resolveOutboundUrlArgs(input[key], context, seen)
    if (next === input[key] && !resolved) continue
    resolved ??= { ...input }
    resolved[key] = next
  }
  return resolved ?? value
}

/**
 * The reconnect, raced against the abort; a failure is `null`.
 * @param {MCPReconnect} reconnect
 * @param {AbortSignal | undefined} signal
 * @param {{ authChallenge?: { wwwAuthenticate: string[] } }} [options]
 */
async function reconnectOrNull(reconnect, signal, options) {
  try {
    return await raceAbort(
      Promise.resolve().then(() => reconnect(options)),
      signal,
    )
  } catch (error) {
    rethrowIfAborted(error, signal)
    return null
  }
}

/**
 * The agent's injected `renderMCPCall` / `renderMCPResult` as a renderer, when both are given.
 * @returns {import('../index.js').MCPToolRenderer | undefined}
 */
function injectedRenderer() {
  const call = hooks.renderMCPCall
  const result = hooks.renderMCPResult
  if (typeof call !== 'function' || typeof result !== 'function') return undefined
  return { renderCall: (args, theme, label) => call(args, theme, label), renderResult: (r, o, theme, args) => result(r, o, theme, args) }
}

/** What both tool classes share. */
class MCPToolBase {
  /**
   * @param {string} serverName
   * @param {any} tool the MCP tool definition
   * @param {MCPReconnect | undefined} reconnect
   * @param {MCPToolOptions | undefined} options
   */
  constructor(serverName, tool, reconnect, options) {
    /** @readonly */
    this.name = createMCPToolName(serverName, tool.name)
    /** @readonly @type {string | undefined} the name before digits were kept, when it differs */
    this.legacyName = createLegacyMCPToolName(serverName, tool.name)
    /** @readonly */
    this.label = `${serverName}/${tool.name}`
    /** @readonly */
    this.description = tool.description ?? `MCP tool from ${serverName}`
    /** @readonly */
    this.parameters = toolParameters(tool.inputSchema)
    /** @readonly */
    this.mcpToolName = tool.name
    /** @readonly */
    this.mcpServerName = serverName
    /** @readonly @type {'write'} */
    this.approval = 'write'
    /** @readonly @type {true} */
    this.mergeCallAndResult = true
    /** @readonly @type {false} */
    this.strict = false
    /** @private @type {any} */
    this.tool = undefined
    /** @private @type {MCPReconnect | undefined} */
    this.reconnect = undefined
    hidden(this, { tool, reconnect })
    const renderer = options?.renderer ?? injectedRenderer()
    if (renderer) {
      /** @type {((args: unknown, options: unknown, theme: unknown) => unknown) | undefined} */
      this.renderCall = (args, _options, theme) => renderer.renderCall(argsObject(args), theme, this.label)
      /** @type {((result: unknown, options: unknown, theme: unknown, args?: unknown) => unknown) | undefined} */
      this.renderResult = (result, opts, theme, args) =>
        renderer.renderResult(/** @type {any} */ (result), /** @type {any} */ (opts), theme, argsObject(args))
    }
  }

  /**
   * One `tools/call` with the options of this package ([beyond]: progress keeps a long tool alive,
   * up to 10 × its timeout, and reaches `onUpdate`).
   * @param {any} connection
   * @param {Record<string, unknown>} args
   * @param {((update: any) => void) | undefined} onUpdate
   * @param {AbortSignal | undefined} signal
   */
  _call(connection, args, onUpdate, signal) {
    const timeout =
      typeof connection.config?.timeout === 'number' && connection.config.timeout > 0 ? connection.config.timeout : DEFAULT_TIMEOUT
    const details = () => ({ serverName: this.mcpServerName, mcpToolName: this.mcpToolName, isError: undefined })
    const options = callOptions(timeout, signal, onUpdate, details)
    const wasConnected = connection?.transport?.connected !== false
    return callTool(connection, this.mcpToolName, /** @type {any} */ (args), options).catch((error) => {
      // The failure as the agent's transports report it (its kind, stage and class are the text).
      throw toAgentError(error, { kind: transportKindOf(connection?.config), phase: 'request', method: 'tools/call', wasConnected })
    })
  }

  /**
   * A call, and on a tool-level auth challenge one reconnect (through the auth handler) and one
   * retry on the new connection.
   * @param {any} connection
   * @param {Record<string, unknown>} args
   * @param {((update: any) => void) | undefined} onUpdate
   * @param {AbortSignal | undefined} signal
   * @returns {Promise<{ connection: any, result?: any, error?: unknown }>}
   */
  async _callWithAuthRetry(connection, args, onUpdate, signal) {
    const result = await this._call(connection, args, onUpdate, signal)
    const challenge = authChallenge(result)
    if (!challenge || !this.reconnect) return { connection, result }
    let fresh
    try {
      fresh = await reconnectOrNull(this.reconnect, signal, { authChallenge: challenge })
    } catch (error) {
      rethrowIfAborted(error, signal)
      return { connection, error }
    }
    if (!fresh) return { connection, result }
    try {
      return { connection: fresh, result: await this._call(fresh, args, onUpdate, signal) }
    } catch (error) {
      rethrowIfAborted(error, signal)
      return { connection: fresh, error }
    }
  }

  /**
   * After a retriable failure: one reconnect and one retry, or the failure.
   * @param {unknown} error
   * @param {Record<string, unknown>} args
   * @param {((update: any) => void) | undefined} onUpdate
   * @param {AbortSignal | undefined} signal
   * @param {boolean} always retry whatever the failure (a deferred tool whose server never connected)
   * @returns {Promise<MCPToolResult>}
   */
  async _retry(error, args, onUpdate, signal, always) {
    rethrowIfAborted(error, signal)
    const origin = this._origin()
    if (this.reconnect && (always || isRetriableConnectionError(error))) {
      const fresh = await reconnectOrNull(this.reconnect, signal)
      if (fresh) {
        this._rebind(fresh)
        const source = merged(fresh, origin)
        try {
          return buildResult(await this._call(fresh, args, onUpdate, signal), this._serverOf(fresh), this.mcpToolName, source)
        } catch (retryError) {
          rethrowIfAborted(retryError, signal)
          return buildErrorResult(retryError, this._serverOf(fresh), this.mcpToolName, always ? origin : source)
        }
      }
    }
    return buildErrorResult(error, this._serverOf(undefined), this.mcpToolName, origin)
  }

  /**
   * 18.3.4 `execute`: the prepared arguments, one call (with the auth retry), the result shaped;
   * a retriable failure reconnects and retries once; an abort throws ToolAbortError.
   * @param {string} _toolCallId
   * @param {unknown} params
   * @param {((update: any) => void) | undefined} onUpdate
   * @param {any} ctx the call's context (the agent's; internal URLs resolve through it)
   * @param {AbortSignal} [signal]
   * @returns {Promise<MCPToolResult>}
   */
  async execute(_toolCallId, params, onUpdate, ctx, signal) {
    if (signal?.aborted) throw abortError(signal)
    let args = prepareArgs(params, this.tool?.inputSchema)
    try {
      args = /** @type {Record<string, unknown>} */ (await raceAbort(resolveOutboundUrlArgs(args, ctx), signal))
    } catch (error) {
      rethrowIfAborted(error, signal)
      throw error
    }
    let connection
    try {
      connection = await this._connection(signal)
      if (signal?.aborted) throw abortError(signal)
    } catch (error) {
      // A deferred tool whose server never connected: always worth a reconnect.
      return this._retry(error, args, onUpdate, signal, true)
    }
    try {
      const origin = this._origin()
      const attempt = await this._callWithAuthRetry(connection, args, onUpdate, signal)
      if (attempt.error !== undefined) {
        return buildErrorResult(
          attempt.error,
          this._serverOf(connection),
          this.mcpToolName,
          this._failureSource(attempt.connection, origin),
        )
      }
      if (!attempt.result) {
        return buildErrorResult(new Error('MCP tool call returned no result'), this._serverOf(connection), this.mcpToolName, origin)
      }
      this._rebind(attempt.connection)
      return buildResult(attempt.result, this._serverOf(attempt.connection), this.mcpToolName, merged(attempt.connection, origin))
    } catch (error) {
      return this._retry(error, args, onUpdate, signal, false)
    }
  }

  /** @param {AbortSignal | undefined} _signal @returns {Promise<any>} */
  async _connection(_signal) {
    throw new Error('not implemented')
  }

  /** @param {any} _connection */
  _rebind(_connection) {}

  /** @param {any} connection */
  _serverOf(connection) {
    return connection?.name ?? this.mcpServerName
  }

  /**
   * The provider the tool had before this call (its connection's, or a deferred tool's source).
   * @returns {{ provider?: string, providerName?: string } | undefined}
   */
  _origin() {
    return undefined
  }

  /**
   * The provider reported with a failure of the auth retry.
   * @param {any} _connection
   * @param {{ provider?: string, providerName?: string } | undefined} origin
   */
  _failureSource(_connection, origin) {
    return origin
  }
}

/**
 * A connection's provider, each field falling back to `origin`'s.
 * @param {any} connection
 * @param {{ provider?: string, providerName?: string } | undefined} origin
 */
function merged(connection, origin) {
  const own = connection?._source
  return { provider: own?.provider ?? origin?.provider, providerName: own?.providerName ?? origin?.providerName }
}

/** A tool of a connected server. */
class MCPTool extends MCPToolBase {
  /**
   * @param {any} connection an MCPServerConnection
   * @param {any[]} tools
   * @param {MCPReconnect} [reconnect]
   * @param {MCPToolOptions} [options]
   */
  static fromTools(connection, tools, reconnect, options) {
    return tools.map((tool) => new MCPTool(connection, tool, reconnect, options))
  }

  /**
   * @param {any} connection an MCPServerConnection
   * @param {any} tool an MCPToolDefinition
   * @param {MCPReconnect} [reconnect] connects the server again (the manager's `reconnectServer`)
   * @param {MCPToolOptions} [options]
   */
  constructor(connection, tool, reconnect, options) {
    super(connection.name, tool, reconnect, options)
    /** @private @type {any} */
    this.connection = undefined
    hidden(this, { connection })
  }

  async _connection() {
    return this.connection
  }

  /** @param {any} connection */
  _rebind(connection) {
    this.connection = connection
  }

  _origin() {
    return this.connection?._source
  }
}

/** A tool known from the tool cache while its server still connects. */
class DeferredMCPTool extends MCPToolBase {
  /**
   * @param {string} serverName
   * @param {any[]} tools
   * @param {() => Promise<any>} getConnection
   * @param {{ provider?: string, providerName?: string }} [source]
   * @param {MCPReconnect} [reconnect]
   * @param {MCPToolOptions} [options]
   */
  static fromTools(serverName, tools, getConnection, source, reconnect, options) {
    return tools.map((tool) => new DeferredMCPTool(serverName, tool, getConnection, source, reconnect, options))
  }

  /**
   * @param {string} serverName
   * @param {any} tool an MCPToolDefinition
   * @param {() => Promise<any>} getConnection called only when the tool runs
   * @param {{ provider?: string, providerName?: string }} [source]
   * @param {MCPReconnect} [reconnect]
   * @param {MCPToolOptions} [options]
   */
  constructor(serverName, tool, getConnection, source, reconnect, options) {
    super(serverName, tool, reconnect, options)
    /** @private @type {() => Promise<any>} */
    this.getConnection = getConnection
    /** @private @type {{ provider?: string, providerName?: string } | undefined} */
    this.source = undefined
    hidden(this, { getConnection, source })
  }

  /** @param {AbortSignal | undefined} signal */
  _connection(signal) {
    return raceAbort(
      Promise.resolve().then(() => this.getConnection()),
      signal,
    )
  }

  /** A deferred tool reports its own server name. @param {any} _connection */
  _serverOf(_connection) {
    return this.mcpServerName
  }

  _origin() {
    return this.source
  }

  /**
   * @param {any} connection
   * @param {{ provider?: string, providerName?: string } | undefined} origin
   */
  _failureSource(connection, origin) {
    return merged(connection, origin)
  }
}

/**
 * The parts of an `mcp__` name, split at the first `_` after the prefix (no sanitizing); null
 * for another name.
 * @param {string} name
 */
function parseMCPToolName(name) {
  if (typeof name !== 'string' || !name.startsWith('mcp__')) return null
  const rest = name.slice(5)
  const at = rest.indexOf('_')
  if (at <= 0) return null
  return { serverName: rest.slice(0, at), toolName: rest.slice(at + 1) }
}

module.exports = {
  MCPTool,
  DeferredMCPTool,
  ToolAbortError,
  createMCPToolName,
  createLegacyMCPToolName,
  parseMCPToolName,
  canonicalMCPToolNameCandidates,
  resolveMCPToolAlias,
  getMCPToolOriginKey,
  deduplicateMCPToolsByName,
  isRetriableConnectionError,
}

/**
 * Type check only (no code): the tool objects have the public members tool-bridge.d.ts declares
 * (its classes have private members, which TypeScript compares by declaration: the public shape is
 * what is compared, all but `parameters`, TypeBox's `TSchema` there when TypeBox is installed).
 * @template {Omit<Pick<D, keyof D>, 'parameters'>} T
 * @template D
 * @typedef {T} HasPublicShapeOf
 */
/** @typedef {HasPublicShapeOf<MCPTool, import('./entries/tool-bridge.js').MCPTool>} MCPToolMatchesDeclaration */
/** @typedef {HasPublicShapeOf<DeferredMCPTool, import('./entries/tool-bridge.js').DeferredMCPTool>} DeferredMCPToolMatchesDeclaration */
