// mcp-native/tool-cache: mirrors the reference module `tool-cache.ts` (SPEC 7.8, 8.3, 8.11).
import type { MCPServerConfig, MCPToolDefinition } from '../../index'

/**
 * What `MCPToolCache` reads and writes: the agent's `AgentStorage` fits as it is. Keys are
 * `mcp_tools:<server>`, values JSON text, `expiresAtSec` Unix seconds. A storage may also answer
 * with promises (bounded by the `timeout` option).
 */
export interface MCPToolCacheStorage {
  getCache(key: string): string | null | undefined | Promise<string | null | undefined>
  setCache(key: string, value: string, expiresAtSec: number): void | Promise<void>
}

/** [beyond] The SQLite store behind `MCPToolCache.open()`: a synchronous `MCPToolCacheStorage`. */
export interface MCPToolCacheStore extends MCPToolCacheStorage {
  /** The SQLite file. */
  readonly path: string
  /** The value of `key`, or null when there is none or it has expired. */
  getCache(key: string): string | null
  /** Stores `value` under `key` until `expiresAtSec`, replacing any earlier value. */
  setCache(key: string, value: string, expiresAtSec: number): void
  /** The `expires_at` of `key`'s row, expired or not; null without a row. */
  expiresAt(key: string): number | null
  /** Closes the file; later calls throw. */
  close(): void
}

/** [beyond] Options of `MCPToolCache`. */
export interface MCPToolCacheOptions {
  /**
   * Gets the cache's warnings as the reference logs them: `warn("MCP tool cache parse failed",
   * { serverName, error })`, also `… hash failed`, `… serialize failed`, and `… read failed` /
   * `… write failed` when the storage throws. Default: silent.
   */
  logger?: { warn(message: string, context: { serverName: string; error: string }): unknown }
  /** Milliseconds a storage that returns a promise may take (default 5000); then a miss. */
  timeout?: number
}

/**
 * Tool definitions per server, valid for one server config (SHA-256 of its key-sorted JSON) and
 * 30 days. `get` answers null for anything it cannot use; `set` never throws.
 *
 * Its instance type is exactly `get` and `set`, so any object with those two methods is an
 * `MCPToolCache` for `MCPManager`, as the structural type was before.
 */
export declare class MCPToolCache {
  constructor(storage: MCPToolCacheStorage, options?: MCPToolCacheOptions)
  /**
   * [beyond] A cache over an SQLite file with the agent's `cache` table, by default
   * `<agent dir>/mcp-cache.db` (`$PI_CODING_AGENT_DIR`, else `~/<$PI_CONFIG_DIR or .omp>/agent`);
   * the file and its directories are created when absent. Throws when it cannot be opened.
   */
  static open(path?: string | URL, options?: MCPToolCacheOptions): OpenMCPToolCache
  /** The cached tools of `serverName` if they were stored for this very config, else null. */
  get(serverName: string, config: MCPServerConfig): Promise<MCPToolDefinition[] | null>
  /** Stores the tools of `serverName` for this config, for 30 days. */
  set(serverName: string, config: MCPServerConfig, tools: MCPToolDefinition[]): Promise<void>
}

/** [beyond] What `MCPToolCache.open()` returns: the cache, its store, and a way to close it. */
export interface OpenMCPToolCache extends MCPToolCache {
  /** The SQLite store this cache reads and writes. */
  readonly storage: MCPToolCacheStore
  /** Closes the file; later reads miss and writes are dropped (with a warning). */
  close(): void
}
