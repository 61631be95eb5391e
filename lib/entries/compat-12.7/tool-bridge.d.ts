// mcp-native/compat-12.7/tool-bridge: the 12.7 tool objects (SPEC 8.1, 8.11): `mcp_` names, one text block
// per result, `MCP error: …` for failures. The root's are the agent's as it ships today (SPEC 11.3).
import type { MCPContent, MCPServerConnection, MCPToolDefinition } from '../../../index'
export { ToolAbortError, type MCPToolParameters, type MCPToolRenderer, type MCPToolOptions } from '../tool-bridge'
import type { MCPToolParameters, MCPToolOptions } from '../tool-bridge'

/** `details` of a tool result (SPEC 8.1). */
export interface MCPToolDetails {
  serverName: string
  mcpToolName: string
  /** As the server sent it (`undefined` when absent). */
  isError?: boolean
  rawContent?: MCPContent[]
  provider?: string
  providerName?: string
}

/** What `execute` resolves with (and what `onUpdate` receives for progress). */
export interface MCPToolResult {
  content: Array<{ type: 'text'; text: string }>
  details: MCPToolDetails
}

/** What both tool classes share; assignable to the agent's `CustomTool<TSchema, MCPToolDetails>`. */
declare abstract class MCPToolBase {
  /** `mcp_<server>_<tool>`. */
  readonly name: string
  /** `<server>/<tool>`, raw names. */
  readonly label: string
  readonly description: string
  readonly parameters: MCPToolParameters
  /** The tool's name on its server. */
  readonly mcpToolName: string
  readonly mcpServerName: string
  /**
   * One `tools/call`. Resolves with one text block (also for server errors: `Error: …`, and for
   * failures: `MCP error: …`); throws `ToolAbortError` when aborted. Progress reaches `onUpdate`.
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
  renderCall?(args: any, theme: any): any
  /** Only when a renderer was given. */
  // biome-ignore lint/suspicious/noExplicitAny: the agent's types
  renderResult?(result: any, options: any, theme: any, args?: any): any
}

/** A tool of a connected server. */
export declare class MCPTool extends MCPToolBase {
  static fromTools(connection: MCPServerConnection, tools: MCPToolDefinition[], options?: MCPToolOptions): MCPTool[]
  constructor(connection: MCPServerConnection, tool: MCPToolDefinition, options?: MCPToolOptions)
  private readonly connection
  private readonly tool
}

/** A tool known from the tool cache while its server still connects; connects when it runs. */
export declare class DeferredMCPTool extends MCPToolBase {
  static fromTools(
    serverName: string,
    tools: MCPToolDefinition[],
    getConnection: () => Promise<MCPServerConnection>,
    source?: { provider?: string; providerName?: string },
    options?: MCPToolOptions,
  ): DeferredMCPTool[]
  constructor(
    serverName: string,
    tool: MCPToolDefinition,
    getConnection: () => Promise<MCPServerConnection>,
    source?: { provider?: string; providerName?: string },
    options?: MCPToolOptions,
  )
  private readonly tool
  private readonly getConnection
  private readonly source
}

/** `mcp_<server>_<tool>`: each part lower-cased, runs outside `[a-z_]` → `_`, trimmed. */
export declare function createMCPToolName(serverName: string, toolName: string): string
/** Splits at the first `_` after `mcp_`; null when the name is not of that form. */
export declare function parseMCPToolName(name: string): { serverName: string; toolName: string } | null

/** What `getTools()` of the 12.7 manager holds by default. */
export type Tool = MCPTool | DeferredMCPTool
