// Type-checked by `npm run test:types` under strict TypeScript with `moduleResolution: bundler`
// and `node16` (issue 9): the agent's own statements that touch its MCP layer, unchanged, with
// the agent's `CustomTool` contract as SPEC 8.2 gives it (TypeBox 0.34). It is never run.
import type { Static, TSchema } from '@sinclair/typebox'
import type { JsonRpcResponse } from 'mcp-native/compat-12.7/json-rpc'
import { createMCPManager, MCPManager } from 'mcp-native/compat-12.7/manager'
import type { MCPToolDetails } from 'mcp-native/compat-12.7'
import { DeferredMCPTool, MCPTool } from 'mcp-native/compat-12.7/tool-bridge'

// --- the agent's types (SPEC 8.2) ------------------------------------------------------------
interface TextContent {
  type: 'text'
  text: string
  textSignature?: string
}
interface ImageContent {
  type: 'image'
  data: string
  mimeType: string
}
interface AgentToolResult<T, TParams extends TSchema = TSchema> {
  content: (TextContent | ImageContent)[]
  details?: T
  $normative?: Partial<Static<TParams>>
}
type AgentToolUpdateCallback<T, TParams extends TSchema = TSchema> = (partialResult: AgentToolResult<T, TParams>) => void
interface CustomToolContext {
  cwd: string
  hasUI: boolean
}
interface Theme {
  fg(color: string, text: string): string
}
interface Component {
  render(width: number): string[]
}
interface RenderResultOptions {
  expanded: boolean
  isPartial: boolean
  spinnerFrame?: number
}
type CustomToolResult<T> = AgentToolResult<T>
// biome-ignore lint/suspicious/noExplicitAny: as the agent declares it
interface CustomTool<TParams extends TSchema = TSchema, TDetails = any> {
  name: string
  label: string
  description: string
  parameters: TParams
  hidden?: boolean
  execute(
    toolCallId: string,
    params: Static<TParams>,
    onUpdate: AgentToolUpdateCallback<TDetails, TParams> | undefined,
    ctx: CustomToolContext,
    signal?: AbortSignal,
  ): Promise<AgentToolResult<TDetails, TParams>>
  onSession?(event: unknown, ctx: CustomToolContext): void | Promise<void>
  renderCall?(args: Static<TParams>, theme: Theme): Component
  renderResult?(result: CustomToolResult<TDetails>, options: RenderResultOptions, theme: Theme, args?: Static<TParams>): Component
}
interface LoadedCustomTool {
  path: string
  resolvedPath: string
  tool: CustomTool
}
declare const session: {
  refreshMCPTools(tools: CustomTool<TSchema, MCPToolDetails>[]): Promise<void>
}

// --- the agent's call sites ---------------------------------------------------------------------
export async function agent(cwd: string): Promise<void> {
  const manager = new MCPManager(cwd, null)
  await manager.discoverAndConnect({ enableProjectConfig: true, filterExa: true })
  await session.refreshMCPTools(manager.getTools())

  const { manager: created, result } = await createMCPManager(cwd)
  await session.refreshMCPTools(created.getTools())
  await session.refreshMCPTools(result.tools)

  // The proxy tool built from getTools() entries.
  const proxies: CustomTool<TSchema, MCPToolDetails>[] = manager.getTools().map((tool) => {
    const name: string = tool.name
    const label: string = tool.label
    const description: string = tool.description
    const server: string = tool.mcpServerName
    const original: string = tool.mcpToolName
    void [server, original]
    return {
      name,
      label,
      description,
      parameters: tool.parameters,
      execute: (toolCallId, params, onUpdate, ctx, signal) => tool.execute(toolCallId, params, onUpdate, ctx, signal),
    }
  })
  await session.refreshMCPTools(proxies)

  // The classes themselves are CustomTools, render hooks included.
  const connection = await manager.waitForConnection('x')
  const one: CustomTool<TSchema, MCPToolDetails> = MCPTool.fromTools(connection, [])[0]
  const deferred: CustomTool<TSchema, MCPToolDetails> = DeferredMCPTool.fromTools('x', [], () => manager.waitForConnection('x'))[0]
  const loaded: LoadedCustomTool[] = [one, deferred].map((tool) => ({ path: `mcp:${tool.name}`, resolvedPath: `mcp:${tool.name}`, tool }))
  void loaded

  const envelope: JsonRpcResponse<{ tools: unknown[] }> = { jsonrpc: '2.0', id: 1, result: { tools: [] } }
  void envelope
}
