// mcp-native/manager: the manager as the agent ships it today (18.3.4 `manager.ts`, SPEC 11.3).
import type { MCPLoadedConfigs, MCPToolCallResult, MCPToolFactory } from '../../index'
export { MCPManager, createMCPManager } from '../../index'
export type {
  McpConnectionStatusEvent,
  MCPStartupStatus,
  MCPReconnectPolicy,
  MCPAuthChallenge,
  MCPAuthHandler,
  MCPConfigLoader,
  MCPCurrentDiscoverOptions,
  AuthStorage,
  MCPDiscoverOptions,
  MCPLoadResult,
  MCPManagerOptions,
  MCPToolFactory,
  MCPLoadedConfigs,
  Tool,
} from '../../index'
/** The tool objects' names (the same function as mcp-native/tool-bridge's). */
export { createMCPToolName } from './tool-bridge'
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
/** Sorts tools by name in place (the agent's order: stable across reconnects). */
export declare function sortMCPToolsByName<T extends { name: string }>(tools: T[]): T[]
/** What to do with a resource subscription that settled: the agent's rule. */
export declare function resolveSubscriptionPostAction(
  notificationsEnabled: boolean,
  currentEpoch: number,
  subscriptionEpoch: number,
): 'rollback' | 'ignore' | 'apply'
