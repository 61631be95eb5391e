// mcp-native/compat-12.7/loader: the 12.7 loader (SPEC 8.4): its manager is the 12.7 one.
import type { Tool } from './tool-bridge'
import type { MCPManager } from './manager'
import type { MCPToolsLoadOptions as CurrentOptions, MCPToolsLoadResult as CurrentResult } from '../loader'
export type { AgentStorage, LoadedMCPTool } from '../loader'

/** Options of `discoverAndLoadMCPTools`; every `MCPManager` option is passed to its manager. [beyond] */
export interface MCPToolsLoadOptions<TTool = Tool> extends Omit<CurrentOptions<TTool>, 'onStatus' | 'startupTimeoutMs' | 'filterBrowser'> {
  onConnecting?: (serverNames: string[]) => void
}

export interface MCPToolsLoadResult<TTool = Tool> extends Omit<CurrentResult<TTool>, 'manager'> {
  manager: MCPManager<TTool>
}

/** Discovers every server, connects them (250 ms gate, cached tools for slow ones), and loads their tools. */
export declare function discoverAndLoadMCPTools<TTool = Tool>(
  cwd: string,
  options?: MCPToolsLoadOptions<TTool>,
): Promise<MCPToolsLoadResult<TTool>>
