// mcp-native/loader: mirrors the reference module `loader.ts` (SPEC 8.4).
import type { MCPManager, MCPManagerOptions, AuthStorage, Tool } from '../../index'
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
  onConnecting?: (serverNames: string[]) => void
  enableProjectConfig?: boolean
  filterExa?: boolean
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

/** Discovers every server, connects them (250 ms gate, cached tools for slow ones), and loads their tools. */
export declare function discoverAndLoadMCPTools<TTool = Tool>(
  cwd: string,
  options?: MCPToolsLoadOptions<TTool>,
): Promise<MCPToolsLoadResult<TTool>>
