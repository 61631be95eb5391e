// mcp-native/compat-12.7/manager: the 12.7 manager (SPEC 6), with 12.7's defaults: the gate awaits
// servers without cached tools, reconnect is the client's and opt-in (`reconnect`), the
// `onConnecting` callback. The root's manager is the agent's as it ships today (SPEC 11.3).
import type {
  AuthStorage,
  MCPDiscoverOptions,
  MCPLoadResult,
  MCPManagerOptions,
  MCPServerConfig,
  MCPServerConnection,
  MCPToolCache,
  SourceMeta,
} from '../../../index'
import type { Tool } from './tool-bridge'
export {
  createMCPToolName,
  formatToolResult,
  loadConfigs,
  resolveConfigValue,
  defaultToolFactory,
} from '../manager'
export type {
  MCPToolCache,
  AuthStorage,
  MCPDiscoverOptions,
  MCPLoadResult,
  MCPManagerOptions,
  MCPTool,
  MCPToolFactory,
  MCPLoadedConfigs,
} from '../../../index'
export type { Tool } from './tool-bridge'

/** The 12.7 manager (SPEC 6). */
export declare class MCPManager<TTool = Tool> {
  constructor(cwd: string, toolCache?: MCPToolCache | null, options?: MCPManagerOptions<TTool>)
  readonly cwd: string
  readonly toolCache: MCPToolCache | null
  /** [beyond] */
  onNotification?: (serverName: string, method: string, params: unknown) => void
  /** [beyond] */
  onServerStatus?: (serverName: string, status: 'connecting' | 'connected' | 'disconnected', error?: Error) => void
  setAuthStorage(storage: AuthStorage): void
  discoverAndConnect(options?: MCPDiscoverOptions): Promise<MCPLoadResult<TTool>>
  connectServers(
    configs: Record<string, MCPServerConfig>,
    sources: Record<string, SourceMeta>,
    onConnecting?: (serverNames: string[]) => void,
  ): Promise<MCPLoadResult<TTool>>
  /** All current tools; the same array, updated in place. */
  getTools(): TTool[]
  getConnection(name: string): MCPServerConnection | undefined
  getConnectionStatus(name: string): 'connected' | 'connecting' | 'disconnected'
  getSource(name: string): SourceMeta | undefined
  /** Rejects with `MCP server not connected: <name>` when it is neither connected nor connecting. */
  waitForConnection(name: string): Promise<MCPServerConnection>
  prepareConfig(config: MCPServerConfig): Promise<MCPServerConfig>
  getConnectedServers(): string[]
  getAllServerNames(): string[]
  disconnectServer(name: string): Promise<void>
  disconnectAll(): Promise<void>
  refreshServerTools(name: string): Promise<void>
  refreshAllTools(): Promise<void>
}

export declare function createMCPManager<TTool = Tool>(
  cwd: string,
  options?: MCPDiscoverOptions & MCPManagerOptions<TTool>,
): Promise<{ manager: MCPManager<TTool>; result: MCPLoadResult<TTool> }>
