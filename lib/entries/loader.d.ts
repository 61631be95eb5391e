// mcp-native/loader: the loader as the agent ships it today (18.3.4 `loader.ts`, SPEC 8.4, 11.3).
import type { MCPManager, MCPManagerOptions, AuthStorage, Tool, McpConnectionStatusEvent } from '../../index'
import type { MCPToolCacheStorage } from './tool-cache'

/** The agent's storage as the loader uses it (`getCache` / `setCache`). */
export type AgentStorage = MCPToolCacheStorage

/** A loaded tool as the agent's tool registry takes it (`LoadedCustomTool`). */
export interface LoadedMCPTool<TTool = Tool> {
  /** `mcp:<server> via <providerName>`, or `mcp:<tool name>` when either is unknown. */
  path: string
  /** `mcp:<tool name>`. */
  resolvedPath: string
  tool: TTool
}

/** Options of `discoverAndLoadMCPTools`; every `MCPManager` option is passed to its manager. [beyond] */
export interface MCPToolsLoadOptions<TTool = Tool> extends MCPManagerOptions<TTool> {
  /** The connection status events of the discovery. */
  onStatus?: (event: McpConnectionStatusEvent) => void
  /** The startup window (default 250 ms; `OMP_MCP_STARTUP_TIMEOUT_MS` wins; 0 waits for all). */
  startupTimeoutMs?: number
  enableProjectConfig?: boolean
  filterExa?: boolean
  filterBrowser?: boolean
  /** `null`: no tool cache; `undefined`: the package's SQLite store (`<agent dir>/mcp-cache.db`); else a cache over it. */
  cacheStorage?: AgentStorage | null
  authStorage?: AuthStorage
}

export interface MCPToolsLoadResult<TTool = Tool> {
  manager: MCPManager<TTool>
  tools: LoadedMCPTool<TTool>[]
  errors: { path: string; error: string }[]
  connectedServers: string[]
  exaApiKeys: string[]
}

/** Discovers every server, connects them (the startup window; slow servers stand in with cached tools or finish in the background), and loads their tools. */
export declare function discoverAndLoadMCPTools<TTool = Tool>(
  cwd: string,
  options?: MCPToolsLoadOptions<TTool>,
): Promise<MCPToolsLoadResult<TTool>>
