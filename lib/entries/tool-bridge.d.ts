// mcp-native/tool-bridge: MCP tools as the agent's tool objects as it ships them today (18.3.4
// `tool-bridge.ts`, SPEC 11.3–11.4). The 12.7 objects are mcp-native/compat-12.7/tool-bridge's.
import type { MCPAuthChallenge, MCPContent, MCPServerConnection, MCPToolDefinition } from '../../index'

// `parameters` is typed as the agent types it: TypeBox's `TSchema` when the consumer has
// `@sinclair/typebox` (an optional peer dependency), and `any` without it, so that a consumer
// without TypeBox still type-checks.
// @ts-ignore -- resolves only where @sinclair/typebox is installed
type TypeboxSchema = import('@sinclair/typebox').TSchema

/** An MCP tool's JSON Schema, as the agent's `CustomTool` types `parameters`. */
export type MCPToolParameters = TypeboxSchema

/** Connects the tool's server again (the manager's `reconnectServer`), optionally after an auth challenge. */
export type MCPReconnect = (options?: { authChallenge?: MCPAuthChallenge }) => Promise<MCPServerConnection | null>

/** `details` of a tool result. */
export interface MCPToolDetails {
  serverName: string
  mcpToolName: string
  /** As the server sent it (`undefined` when absent). */
  isError?: boolean
  rawContent?: MCPContent[]
  /** The result's `_meta`. */
  mcpMeta?: Record<string, unknown>
  /** The result's `structuredContent`, as sent. */
  structuredContent?: Record<string, unknown>
  provider?: string
  providerName?: string
}

/** What `execute` resolves with (and what `onUpdate` receives for progress). */
export interface MCPToolResult {
  /** Text (the text items joined) and image blocks, in order. */
  content: Array<{ type: 'text'; text: string } | { type: 'image'; data: string; mimeType: string }>
  details: MCPToolDetails
  /** Set when the server reported an error or the call failed. */
  isError?: true
}

/** The agent's `renderMCPCall` / `renderMCPResult`, injected ([beyond]: SPEC 8.11). */
export interface MCPToolRenderer {
  // biome-ignore lint/suspicious/noExplicitAny: the agent's Theme and Component types
  renderCall(args: Record<string, unknown>, theme: any, label: string): any
  renderResult(
    result: { content: Array<{ type: string; text?: string }>; details?: MCPToolDetails; isError?: boolean },
    options: { expanded: boolean; isPartial: boolean; spinnerFrame?: number },
    // biome-ignore lint/suspicious/noExplicitAny: the agent's Theme and Component types
    theme: any,
    args: Record<string, unknown>,
    // biome-ignore lint/suspicious/noExplicitAny: the agent's Component type
  ): any
}

export interface MCPToolOptions {
  /** When given, the tool objects have `renderCall` / `renderResult` delegating to it. */
  renderer?: MCPToolRenderer
}

/** An abort always surfaces as this error (`Operation aborted`). */
export declare class ToolAbortError extends Error {
  static readonly MESSAGE: 'Operation aborted'
  constructor(message?: string)
  name: 'ToolAbortError'
}

/** What both tool classes share; assignable to the agent's `CustomTool<TSchema, MCPToolDetails>`. */
declare abstract class MCPToolBase {
  /** `mcp__<server>_<tool>`, digits kept, at most 64 characters. */
  readonly name: string
  /** The name before digits were kept, when it differs (approval policies written against it). */
  readonly legacyName?: string
  /** `<server>/<tool>`, raw names. */
  readonly label: string
  readonly description: string
  readonly parameters: MCPToolParameters
  /** The tool's name on its server. */
  readonly mcpToolName: string
  readonly mcpServerName: string
  readonly approval: 'write'
  readonly mergeCallAndResult: true
  readonly strict: false
  /**
   * One `tools/call` with the arguments prepared; a retriable failure or a tool-level auth
   * challenge reconnects (through the `reconnect` argument) and retries once; failures resolve
   * as the agent's diagnostic text; throws `ToolAbortError` when aborted. Progress reaches `onUpdate`.
   */
  execute(
    toolCallId: string,
    params: unknown,
    onUpdate: ((partial: MCPToolResult) => void) | undefined,
    ctx: unknown,
    signal?: AbortSignal,
  ): Promise<MCPToolResult>
  /** Only when a renderer was given. */
  // biome-ignore lint/suspicious/noExplicitAny: the agent's Theme and Component types
  renderCall?(args: any, options: any, theme: any): any
  /** Only when a renderer was given. */
  // biome-ignore lint/suspicious/noExplicitAny: the agent's types
  renderResult?(result: any, options: any, theme: any, args?: any): any
}

/** A tool of a connected server. */
export declare class MCPTool extends MCPToolBase {
  static fromTools(
    connection: MCPServerConnection,
    tools: MCPToolDefinition[],
    reconnect?: MCPReconnect,
    options?: MCPToolOptions,
  ): MCPTool[]
  constructor(connection: MCPServerConnection, tool: MCPToolDefinition, reconnect?: MCPReconnect, options?: MCPToolOptions)
  private readonly connection
  private readonly tool
  private readonly reconnect
}

/** A tool known from the tool cache while its server still connects; connects when it runs. */
export declare class DeferredMCPTool extends MCPToolBase {
  static fromTools(
    serverName: string,
    tools: MCPToolDefinition[],
    getConnection: () => Promise<MCPServerConnection>,
    source?: { provider?: string; providerName?: string },
    reconnect?: MCPReconnect,
    options?: MCPToolOptions,
  ): DeferredMCPTool[]
  constructor(
    serverName: string,
    tool: MCPToolDefinition,
    getConnection: () => Promise<MCPServerConnection>,
    source?: { provider?: string; providerName?: string },
    reconnect?: MCPReconnect,
    options?: MCPToolOptions,
  )
  private readonly tool
  private readonly reconnect
  private readonly getConnection
  private readonly source
}

/** `mcp__<server>_<tool>`: parts lower-cased, runs outside `[a-z0-9_]` → `_`, the redundant server prefix stripped, capped at 64 characters (wyhash suffix). */
export declare function createMCPToolName(serverName: string, toolName: string): string
/** The name before digits were kept, when it differs. */
export declare function createLegacyMCPToolName(serverName: string, toolName: string): string | undefined
/** Splits an `mcp__` name at the first `_` after the prefix; null for another name. */
export declare function parseMCPToolName(name: string): { serverName: string; toolName: string } | null
/** The registry keys a model-emitted `mcp__` spelling may have meant, in order (never the name itself). */
export declare function canonicalMCPToolNameCandidates(name: string): string[]
/** The one tool `lookup` finds among the candidates; undefined when none or several. */
export declare function resolveMCPToolAlias<T extends { readonly name: string }>(
  name: string,
  lookup: (candidate: string) => T | undefined,
): T | undefined
/** `<server>\0<tool>` for an MCP tool. */
export declare function getMCPToolOriginKey(tool: {
  readonly name: string
  readonly mcpServerName?: unknown
  readonly mcpToolName?: unknown
}): string | undefined
/** One MCP tool per name, the winner chosen by origin (stable across reconnects); a collision is logged. */
export declare function deduplicateMCPToolsByName<
  T extends { readonly name: string; readonly mcpServerName?: unknown; readonly mcpToolName?: unknown },
>(tools: readonly T[], logger?: { warn?(message: string, details?: unknown): void }): T[]
/** Whether a failed call is worth one reconnect and retry. */
export declare function isRetriableConnectionError(error: unknown): boolean
