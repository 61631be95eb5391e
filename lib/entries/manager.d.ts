// mcp-native/manager: mirrors the reference module `manager.ts`.
import type { MCPLoadedConfigs, MCPToolCallResult, MCPToolFactory } from '../../index'
export { MCPManager, createMCPManager } from '../../index'
export type {
  MCPToolCache,
  AuthStorage,
  MCPDiscoverOptions,
  MCPLoadResult,
  MCPManagerOptions,
  MCPTool,
  MCPToolFactory,
  MCPLoadedConfigs,
  Tool,
} from '../../index'
/** [beyond] SPEC 6.2 tool names: `mcp_<server part>_<tool part>`. */
export declare function createMCPToolName(serverName: string, toolName: string): string
/** [beyond] SPEC 6.2 text of a tool result. */
export declare function formatToolResult(result: MCPToolCallResult): string
/** [beyond] The default `loadConfigs`: `loadAllMCPConfigs` (SPEC 7). */
export declare function loadConfigs(
  cwd: string,
  options?: {
    enableProjectConfig?: boolean
    filterExa?: boolean
    disabledProviders?: string[]
    logger?: { warn(message: string): void }
  },
): Promise<MCPLoadedConfigs>
/** [beyond] The default `resolveConfigValue`. */
export declare function resolveConfigValue(value: string): Promise<string | undefined>
/** [beyond] The default `toolFactory`. */
export declare const defaultToolFactory: MCPToolFactory
