'use strict'
// mcp-native/client at the root: the function API as the agent ships it today (18.3.4 `client.ts`,
// SPEC 11.3–11.4): the handshake at protocol revision 2025-11-25; the connect deadline from
// `OMP_MCP_TIMEOUT_MS`, else `config.timeout`, else 30 s, where 0 means none, and its failure an
// `MCPConnectionTimeoutError`; `roots/list` answered with the project directory; resources,
// resource templates (a server without the method has none), subscriptions and prompts, cached on
// the connection as the agent reads them. Everything else is the 12.7 function API's (client.js),
// which mcp-native/compat-12.7/client keeps whole — but the errors: here they are the agent's
// (`MCPTransportError` …, lib/root-errors.js), on the functions and on the connection's transport.

const { hookLogger, projectDir } = require('./hooks.js')
const path = require('node:path')
const url = require('node:url')
const { createSseTransport } = require('./sse.js')
const { createHttpTransport, createStdioTransport } = require('./transports-current.js')
const base = require('./client.js')
const { resolveMCPTimeoutMs, describeMCPTimeout } = require('./timeout.js')
const { toAgentError, mapTransportErrors, transportKindOf } = require('./root-errors.js')

/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {import('../index.js').MCPServerConnection} MCPServerConnection */
/** @typedef {import('../index.js').MCPServerCapabilities} MCPServerCapabilities */
/** @typedef {import('../index.js').MCPRequestOptions} MCPRequestOptions */
/** @typedef {import('../index.js').MCPResource} MCPResource */
/** @typedef {import('../index.js').MCPResourceTemplate} MCPResourceTemplate */
/** @typedef {import('../index.js').MCPResourceReadResult} MCPResourceReadResult */
/** @typedef {import('../index.js').MCPPrompt} MCPPrompt */
/** @typedef {import('../index.js').MCPGetPromptResult} MCPGetPromptResult */

/** The protocol revision the agent asks for today. */
const MCP_PROTOCOL_VERSION = '2025-11-25'
/**
 * "No deadline": the package's longest one (its deadlines are clamped to what a JS timer can
 * hold, 2^31 − 1 ms, about 24.8 days).
 */
const NO_DEADLINE = 2 ** 31 - 1

/** A connect that did not finish within the server's timeout (18.3.4 `MCPConnectionTimeoutError`). */
class MCPConnectionTimeoutError extends Error {
  // Fields, not assignments: only a field can narrow Error's `name: string` to the literal.
  /** @type {'MCPConnectionTimeoutError'} */
  name = 'MCPConnectionTimeoutError'
  /** @type {'MCP_TIMEOUT'} [beyond] the package's stable code (SPEC 11.3: kept where 18.3.4 has none) */
  code = 'MCP_TIMEOUT'

  /**
   * @param {string} serverName
   * @param {number} timeoutMs
   */
  constructor(serverName, timeoutMs) {
    super(`Connection to MCP server "${serverName}" timed out after ${describeMCPTimeout(timeoutMs)}`)
    /** @readonly */
    this.serverName = serverName
    /** @readonly */
    this.timeoutMs = timeoutMs
  }
}

/**
 * 18.3.4 `createTransport`: a connected transport of the config's type; `type: "sse"` is the
 * legacy HTTP+SSE transport; the others are the root's (the agent's rules and errors:
 * lib/transports-current.js).
 * @param {MCPServerConfig} config
 */
async function createTransport(config) {
  if (config?.type === 'sse') return createSseTransport(config)
  if (config?.type === 'http') return createHttpTransport(/** @type {any} */ (config))
  if (config?.type === undefined || config?.type === 'stdio') return createStdioTransport(/** @type {any} */ (config))
  return base.createTransport(config)
}

/**
 * The config as the package's transports take it: the deadline resolved as the agent resolves it,
 * 0 (none) as the longest the package has.
 * @template {MCPServerConfig} C
 * @param {C} config
 * @returns {C}
 */
function withDeadline(config) {
  const ms = resolveMCPTimeoutMs(config?.timeout)
  // `type: "sse"` is the legacy HTTP+SSE transport itself at the root (18.3.4), not a fallback;
  // and configured headers never replace the protocol headers (18.3.4; 12.7 let them).
  const legacy = config?.type === 'sse' ? { legacyOnly: true } : undefined
  return { ...config, timeout: ms > 0 ? ms : NO_DEADLINE, protocolHeadersWin: true, ...legacy }
}

/**
 * The agent's default answers to a server's requests: `ping`, and `roots/list` with the project
 * directory, read at each request; anything else is refused (-32601).
 * @param {string} method
 * @param {unknown} _params
 */
async function defaultRequestHandler(method, _params) {
  if (method === 'ping') return {}
  if (method === 'roots/list') {
    const dir = projectDir()
    return { roots: [{ uri: url.pathToFileURL(dir).href, name: path.basename(dir) }] }
  }
  throw Object.assign(new Error(`Unsupported server request: ${method}`), { code: -32601 })
}

/**
 * Connects to server `name` (18.3.4 `connectToServer`): `options.onNotification` and
 * `options.onRequest` (default: `ping` and `roots/list`) are the connection's; the handshake
 * options of this package ([beyond]) may follow in the same object.
 * @param {string} name
 * @param {MCPServerConfig} config
 * @param {import('./entries/client.js').MCPCurrentConnectOptions} [options]
 * @returns {Promise<MCPServerConnection>}
 */
async function connectToServer(name, config, options) {
  const timeoutMs = resolveMCPTimeoutMs(config?.timeout)
  const { signal, onNotification, onRequest, ...handshake } = options ?? {}
  const client = new base.MCPClient(name, withDeadline(config), { protocolVersion: MCP_PROTOCOL_VERSION, ...handshake })
  if (typeof onNotification === 'function') client.onNotification = onNotification
  client.onRequest = typeof onRequest === 'function' ? onRequest : defaultRequestHandler
  let connection
  try {
    connection = await client.connect({ signal })
  } catch (error) {
    const e = /** @type {any} */ (error)
    if (e?.code === 'MCP_TIMEOUT' && timeoutMs > 0 && /^Connection to MCP server .* timed out after/.test(String(e.message))) {
      throw Object.assign(new MCPConnectionTimeoutError(name, timeoutMs), { cause: error })
    }
    throw toAgentError(error, { kind: transportKindOf(config), phase: 'connect', config })
  }
  // The agent's connection object: its config as given, the server's instructions; its
  // transport's requests and notifications fail as the agent's transports do.
  connection.config = config
  mapTransportErrors(connection.transport, config)
  const instructions = client.instructions
  if (instructions !== undefined) connection.instructions = instructions
  return connection
}

/**
 * `run()`, its failure as the agent's transports report it (lib/root-errors.js): for the root's
 * own functions on any connection (a manager's too).
 * @template T
 * @param {MCPServerConnection} connection
 * @param {string} method
 * @param {() => Promise<T>} run
 * @returns {Promise<T>}
 */
async function agentErrors(connection, method, run) {
  const wasConnected = connection?.transport?.connected !== false
  try {
    return await run()
  } catch (error) {
    throw toAgentError(error, { kind: transportKindOf(connection?.config), phase: 'request', method, wasConnected })
  }
}

/**
 * All items of a paged list method, cached on the connection under `cache`; `[]` without the
 * capability.
 * @param {MCPServerConnection} connection
 * @param {'resources' | 'prompts'} capability
 * @param {string} method
 * @param {string} key
 * @param {'resources' | 'resourceTemplates' | 'prompts'} cache
 * @param {MCPRequestOptions} [options]
 */
async function cachedList(connection, capability, method, key, cache, options) {
  if (!connection.capabilities?.[capability]) return []
  const c = /** @type {any} */ (connection)
  if (c[cache]) return c[cache]
  const items = await agentErrors(connection, method, () => base.listAll(connection, method, key, options))
  c[cache] = items
  return items
}

/**
 * @param {MCPServerConnection} connection
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<MCPResource[]>}
 */
function listResources(connection, options) {
  return cachedList(connection, 'resources', 'resources/list', 'resources', 'resources', options)
}

/**
 * A server may declare resources without the optional templates method: its -32601 is "no
 * templates" (and cached), so that the resources are not lost with it (16.0.6).
 * @param {MCPServerConnection} connection
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<MCPResourceTemplate[]>}
 */
async function listResourceTemplates(connection, options) {
  try {
    return await cachedList(connection, 'resources', 'resources/templates/list', 'resourceTemplates', 'resourceTemplates', options)
  } catch (error) {
    const e = /** @type {any} */ (error)
    const message = error instanceof Error ? error.message : String(error)
    if (e?.rpcCode === -32601 || message.includes('-32601') || /method not found/i.test(message)) {
      /** @type {any} */
      connection.resourceTemplates = []
      return []
    }
    throw error
  }
}

/**
 * @param {MCPServerConnection} connection
 * @param {string} uri
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<MCPResourceReadResult>}
 */
function readResource(connection, uri, options) {
  return agentErrors(connection, 'resources/read', () => base.rpc(connection, 'resources/read', { uri }, options))
}

/**
 * One request per URI (all settled; a failure is logged to `options.logger`, not thrown); nothing
 * without the `resources.subscribe` capability.
 * @param {'resources/subscribe' | 'resources/unsubscribe'} method
 * @param {MCPServerConnection} connection
 * @param {string[]} uris
 * @param {MCPRequestOptions & { logger?: { warn?(message: string, details?: unknown): void } }} [options]
 */
async function eachUri(method, connection, uris, options) {
  if (!Array.isArray(uris) || uris.length === 0 || !connection.capabilities?.resources?.subscribe) return
  const { logger = hookLogger(), ...request } = options ?? {}
  const results = await Promise.allSettled(
    uris.map((uri) => agentErrors(connection, method, () => base.rpc(connection, method, { uri }, request))),
  )
  for (const r of results) {
    if (r.status === 'rejected') {
      try {
        logger?.warn?.(`Failed to ${method === 'resources/subscribe' ? 'subscribe to' : 'unsubscribe from'} MCP resource`, {
          error: r.reason,
        })
      } catch {
        // a broken logger loses the line
      }
    }
  }
}

/**
 * @param {MCPServerConnection} connection
 * @param {string[]} uris
 * @param {MCPRequestOptions & { logger?: { warn?(message: string, details?: unknown): void } }} [options]
 */
function subscribeToResources(connection, uris, options) {
  return eachUri('resources/subscribe', connection, uris, options)
}

/**
 * @param {MCPServerConnection} connection
 * @param {string[]} uris
 * @param {MCPRequestOptions & { logger?: { warn?(message: string, details?: unknown): void } }} [options]
 */
function unsubscribeFromResources(connection, uris, options) {
  return eachUri('resources/unsubscribe', connection, uris, options)
}

/**
 * @param {MCPServerConnection} connection
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<MCPPrompt[]>}
 */
function listPrompts(connection, options) {
  return cachedList(connection, 'prompts', 'prompts/list', 'prompts', 'prompts', options)
}

/**
 * `prompts/get`; empty arguments are not sent.
 * @param {MCPServerConnection} connection
 * @param {string} name
 * @param {Record<string, string>} [args]
 * @param {MCPRequestOptions} [options]
 * @returns {Promise<MCPGetPromptResult>}
 */
function getPrompt(connection, name, args, options) {
  /** @type {Record<string, unknown>} */
  const params = { name }
  if (args && Object.keys(args).length > 0) params.arguments = args
  return agentErrors(connection, 'prompts/get', () => base.rpc(connection, 'prompts/get', params, options))
}

/** @param {MCPServerCapabilities} capabilities */
function serverSupportsResources(capabilities) {
  return capabilities?.resources !== undefined
}

/** @param {MCPServerCapabilities} capabilities */
function serverSupportsResourceSubscriptions(capabilities) {
  return capabilities?.resources?.subscribe === true
}

/** @param {MCPServerCapabilities} capabilities */
function serverSupportsPrompts(capabilities) {
  return capabilities?.prompts !== undefined
}

module.exports = {
  connectToServer,
  // The 12.7 function's very objects (SPEC 11.3: where the profiles agree, the same objects): a
  // connection of the root's connectToServer fails with the agent's errors by itself.
  listTools: base.listTools,
  callTool: base.callTool,
  disconnectServer: base.disconnectServer,
  serverSupportsTools: base.serverSupportsTools,
  createTransport,
  MCPClient: base.MCPClient,
  MCPConnectionTimeoutError,
  listResources,
  listResourceTemplates,
  readResource,
  subscribeToResources,
  unsubscribeFromResources,
  listPrompts,
  getPrompt,
  serverSupportsResources,
  serverSupportsResourceSubscriptions,
  serverSupportsPrompts,
  MCP_PROTOCOL_VERSION,
  withDeadline,
}

/**
 * Type check only (no code): the public names match the declarations users see (client.d.ts).
 * @template {Omit<typeof import('./entries/client.js'), 'SUPPORTED_PROTOCOL_VERSIONS' | 'DEFAULT_CAPABILITIES'>} T
 * @typedef {T} MatchesDeclarations
 */
/** @typedef {MatchesDeclarations<typeof module.exports>} ExportsMatchDeclarations */
