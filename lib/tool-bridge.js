'use strict'
// mcp-native/tool-bridge (SPEC 8.1, 8.11): MCP tools as the agent's tool objects. The objects are
// JavaScript on purpose — the agent reads and calls them; a call is one `tools/call` through the
// client (one crossing into Rust), names come from the Rust core.

const native = require('../native/index.js')
const { callTool } = require('./client.js')
const { safeString } = require('./core.js')
const { ToolAbortError, abortError, callOptions, hidden, parametersOf, raceAbort } = require('./tool-support.js')

/** @typedef {import('./entries/compat-12.7/tool-bridge.js').MCPToolResult} MCPToolResult */
/** @typedef {import('./entries/compat-12.7/tool-bridge.js').MCPToolDetails} MCPToolDetails */

/**
 * `mcp_<server>_<tool>` (SPEC 8.1 "Tool names").
 * @param {string} serverName
 * @param {string} toolName
 * @returns {string}
 */
function createMCPToolName(serverName, toolName) {
  return native.mcpToolName(String(serverName), String(toolName))
}

/**
 * The parts of a tool name, split at the first `_` after `mcp_`; no sanitizing (SPEC 8.1).
 * @param {string} name
 * @returns {{ serverName: string, toolName: string } | null}
 */
function parseMCPToolName(name) {
  if (typeof name !== 'string' || !name.startsWith('mcp_')) return null
  const rest = name.slice(4)
  const at = rest.indexOf('_')
  if (at === -1) return null
  return { serverName: rest.slice(0, at), toolName: rest.slice(at + 1) }
}

/**
 * The text of one content item, or undefined for the types the reference skips.
 * @param {any} item
 * @returns {string | undefined}
 */
function contentText(item) {
  switch (item?.type) {
    case 'text':
      return item.text
    case 'image':
      return `[Image: ${item.mimeType}]`
    case 'resource': {
      const r = item.resource
      return r?.text ? `[Resource: ${r.uri}]\n${r.text}` : `[Resource: ${r?.uri}]`
    }
    default:
      return undefined
  }
}

/**
 * SPEC 8.1 step 4: the content items in order, joined with a blank line (throws, like the
 * reference, when `content` is missing).
 * @param {any} result
 * @returns {string}
 */
function resultText(result) {
  const parts = []
  for (const item of result.content) {
    const text = contentText(item)
    if (text !== undefined) parts.push(text)
  }
  const text = parts.join('\n\n')
  return result.isError ? `Error: ${text}` : text
}

const DEFAULT_TIMEOUT = native.DEFAULT_TIMEOUT_MS

/**
 * What both tool classes share: the fields of SPEC 8.1, `execute`, and the render hooks when a
 * renderer was given.
 */
class MCPToolBase {
  /**
   * @param {string} serverName
   * @param {any} tool the MCP tool definition
   * @param {{ renderer?: any } | undefined} options
   */
  constructor(serverName, tool, options) {
    /** @readonly */
    this.name = createMCPToolName(serverName, tool.name)
    /** @readonly */
    this.label = `${serverName}/${tool.name}`
    /** @readonly */
    this.description = tool.description ?? `MCP tool from ${serverName}`
    /** @readonly */
    this.parameters = parametersOf(tool.inputSchema)
    /** @readonly */
    this.mcpToolName = tool.name
    /** @readonly */
    this.mcpServerName = serverName
    const renderer = options?.renderer
    if (renderer) {
      // SPEC 8.11: only with a renderer do the objects have render members.
      /** @type {((args: unknown, theme: unknown) => unknown) | undefined} */
      this.renderCall = (args, theme) => renderer.renderCall(args ?? {}, theme, this.label)
      /** @type {((result: unknown, options: unknown, theme: unknown, args?: unknown) => unknown) | undefined} */
      this.renderResult = (result, opts, theme, args) => renderer.renderResult(result, opts, theme, args ?? {})
    }
  }

  /**
   * SPEC 8.1 `execute`: one `tools/call`; the result as one text block; errors as an
   * `MCP error: …` result; aborts as a thrown ToolAbortError.
   * @param {string} _toolCallId
   * @param {unknown} params
   * @param {((update: any) => void) | undefined} onUpdate
   * @param {unknown} _ctx
   * @param {AbortSignal} [signal]
   * @returns {Promise<MCPToolResult>}
   */
  async execute(_toolCallId, params, onUpdate, _ctx, signal) {
    if (signal?.aborted) throw abortError(signal)
    try {
      const connection = await this._connection(signal)
      if (signal?.aborted) throw abortError(signal)
      const timeout = typeof connection.config?.timeout === 'number' ? connection.config.timeout : DEFAULT_TIMEOUT
      const options = callOptions(timeout, signal, onUpdate, () => this._details(connection, { isError: undefined }))
      const result = /** @type {any} */ (await callTool(connection, this.mcpToolName, /** @type {any} */ (params ?? {}), options))
      const text = resultText(result)
      return {
        content: [{ type: 'text', text }],
        details: this._details(connection, { isError: result.isError, rawContent: result.content }),
      }
    } catch (err) {
      if (err instanceof ToolAbortError) throw err
      if (/** @type {any} */ (err)?.name === 'AbortError') throw new ToolAbortError()
      if (signal?.aborted) throw new ToolAbortError()
      const message = err instanceof Error ? err.message : safeString(err)
      return {
        content: [{ type: 'text', text: `MCP error: ${message}` }],
        details: this._details(undefined, { isError: true }),
      }
    }
  }

  /**
   * @param {AbortSignal | undefined} _signal
   * @returns {Promise<any>}
   */
  async _connection(_signal) {
    throw new Error('not implemented')
  }

  /**
   * `details` of SPEC 8.1 step 5/6, in the reference's key order.
   * @param {any} connection the connection, or undefined on the error path
   * @param {{ isError: boolean | undefined, rawContent?: MCPToolDetails['rawContent'] }} parts
   * @returns {MCPToolDetails}
   */
  _details(connection, parts) {
    const source = this._source(connection)
    /** @type {MCPToolDetails} */
    const details = { serverName: this.mcpServerName, mcpToolName: this.mcpToolName, isError: parts.isError }
    if ('rawContent' in parts) details.rawContent = parts.rawContent
    details.provider = source?.provider
    details.providerName = source?.providerName
    return details
  }

  /**
   * @param {any} _connection
   * @returns {{ provider?: string, providerName?: string } | undefined}
   */
  _source(_connection) {
    return undefined
  }
}

/** A tool of a connected server (SPEC 8.1). */
class MCPTool extends MCPToolBase {
  /**
   * @param {any} connection an MCPServerConnection
   * @param {any[]} tools
   * @param {{ renderer?: any }} [options]
   */
  static fromTools(connection, tools, options) {
    return tools.map((tool) => new MCPTool(connection, tool, options))
  }

  /**
   * @param {any} connection an MCPServerConnection
   * @param {any} tool an MCPToolDefinition
   * @param {{ renderer?: any }} [options]
   */
  constructor(connection, tool, options) {
    super(connection.name, tool, options)
    /** @private @type {any} */
    this.connection = undefined
    /** @private @type {any} */
    this.tool = undefined
    hidden(this, { connection, tool })
  }

  async _connection() {
    return this.connection
  }

  /** @param {any} _connection */
  _source(_connection) {
    return this.connection?._source
  }
}

/** A tool known from the cache while its server still connects (SPEC 8.1). */
class DeferredMCPTool extends MCPToolBase {
  /**
   * @param {string} serverName
   * @param {any[]} tools
   * @param {() => Promise<any>} getConnection
   * @param {{ provider?: string, providerName?: string }} [source]
   * @param {{ renderer?: any }} [options]
   */
  static fromTools(serverName, tools, getConnection, source, options) {
    return tools.map((tool) => new DeferredMCPTool(serverName, tool, getConnection, source, options))
  }

  /**
   * @param {string} serverName
   * @param {any} tool an MCPToolDefinition
   * @param {() => Promise<any>} getConnection called only when the tool runs
   * @param {{ provider?: string, providerName?: string }} [source]
   * @param {{ renderer?: any }} [options]
   */
  constructor(serverName, tool, getConnection, source, options) {
    super(serverName, tool, options)
    /** @private @type {any} */
    this.tool = undefined
    /** @private @type {() => Promise<any>} */
    this.getConnection = getConnection
    /** @private @type {{ provider?: string, providerName?: string } | undefined} */
    this.source = undefined
    hidden(this, { tool, getConnection, source })
  }

  /** @param {AbortSignal | undefined} signal */
  _connection(signal) {
    return raceAbort(
      Promise.resolve().then(() => this.getConnection()),
      signal,
    )
  }

  /** @param {any} connection */
  _source(connection) {
    const fallback = this.source
    // On the error path only the constructor's source counts (SPEC 8.1 step 6).
    if (!connection) return fallback
    const own = connection._source
    return {
      provider: own?.provider ?? fallback?.provider,
      providerName: own?.providerName ?? fallback?.providerName,
    }
  }
}

module.exports = { MCPTool, DeferredMCPTool, createMCPToolName, parseMCPToolName, ToolAbortError, resultText }

/**
 * Type check only (no code): the tool objects have the public members tool-bridge.d.ts declares.
 * Its classes have private members, which TypeScript compares by declaration, so the public
 * shape (`Pick<C, keyof C>`) is what is compared — all but `parameters`, a plain JSON Schema
 * object that the declaration types as TypeBox's `TSchema` for the agent when TypeBox is installed.
 * @template {Omit<Pick<D, keyof D>, 'parameters'>} T
 * @template D
 * @typedef {T} HasPublicShapeOf
 */
/** @typedef {HasPublicShapeOf<MCPTool, import('./entries/compat-12.7/tool-bridge.js').MCPTool>} MCPToolMatchesDeclaration */
/** @typedef {HasPublicShapeOf<DeferredMCPTool, import('./entries/compat-12.7/tool-bridge.js').DeferredMCPTool>} DeferredMCPToolMatchesDeclaration */
