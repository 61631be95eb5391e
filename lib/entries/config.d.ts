// mcp-native/config: mirrors the reference module `config.ts` (SPEC 7): config discovery.
import type { MCPServerConfig, SourceMeta } from '../../index'

/** The discovery sources, highest priority first (`SourceMeta.provider`, `disabledProviders`). */
export type MCPConfigProviderId = 'native' | 'claude' | 'codex' | 'gemini' | 'cursor' | 'windsurf' | 'vscode' | 'mcp-json'

/** Options of `loadAllMCPConfigs`. */
export interface LoadMCPConfigsOptions {
  /** Keep project-level servers (default true). `false` drops them after precedence is decided. */
  enableProjectConfig?: boolean
  /** Remove Exa servers and collect their API keys (default true). */
  filterExa?: boolean
  /** [beyond] Provider ids to skip (see `MCPConfigProviderId`); unknown ids are ignored. */
  disabledProviders?: string[]
  /** [beyond] Gets each discovery warning (`warn(message)`); a logger that throws is ignored. */
  logger?: { warn(...args: unknown[]): void }
}

/** What `loadAllMCPConfigs` found. */
export interface LoadMCPConfigsResult {
  /** Server configs by name, in precedence order. */
  configs: Record<string, MCPServerConfig>
  /** The API keys of the Exa servers removed (`filterExa`), in order, duplicates kept. */
  exaApiKeys: string[]
  /** Where each config came from. */
  sources: Record<string, SourceMeta>
  /** [beyond] `[<provider name>] <problem>` for unreadable or invalid files and entries and ignored values. */
  warnings?: string[]
}

/** What `filterExaMCPServers` returns. */
export interface ExaFilterResult {
  configs: Record<string, MCPServerConfig>
  exaApiKeys: string[]
  sources: Record<string, SourceMeta>
}

/**
 * Every configured server of the project `cwd`: the agent's own `.omp` files, `mcp.json` /
 * `.mcp.json`, Claude Code, OpenAI Codex, Gemini CLI, Cursor, Windsurf and VS Code, with their
 * precedence, `${VAR}` expansion, `enabled`, `disabledServers` and Exa filtering. Files are read
 * afresh on every call; problems in them are warnings, never rejections.
 */
export declare function loadAllMCPConfigs(
  cwd: string,
  options?: LoadMCPConfigsOptions,
): Promise<LoadMCPConfigsResult & { warnings: string[] }>
/** The problems of one server config, in order (empty: none). */
export declare function validateServerConfig(name: string, config: MCPServerConfig): string[]
/** Named `exa`, or its url (http/sse) or one of its args (stdio) names `mcp.exa.ai`. */
export declare function isExaMCPServer(name: string, config: MCPServerConfig): boolean
/** The Exa servers removed from `configs` (and `sources`), with their API keys. */
export declare function filterExaMCPServers(configs: Record<string, MCPServerConfig>, sources: Record<string, SourceMeta>): ExaFilterResult
/** The `exaApiKey=` of the url (http/sse) or of an arg (stdio), or `env.EXA_API_KEY`. */
export declare function extractExaApiKey(config: MCPServerConfig): string | undefined
