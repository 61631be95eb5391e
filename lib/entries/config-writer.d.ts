// mcp-native/config-writer: the agent's 18.3.4 `config-writer.ts` (SPEC 11.4). Every
// read-modify-write runs under a per-file lock across processes: the `withFileLock` given to
// `configureMCP`, else the package's own OS lock on `<absolute path>.lock` (retried 50 times
// 100 ms apart). After each write, the `invalidateConfigCache` given to `configureMCP` is called
// with the path (its failures are logged, never thrown).
import type { MCPConfigFile, MCPServerConfig } from '../../index'

/** The file's config, unvalidated; `{ mcpServers: {} }` when it does not exist. A bad file rejects with a `SyntaxError`. */
export declare function readMCPConfigFile(filePath: string): Promise<MCPConfigFile>
/**
 * Writes `config` as 2-space JSON with `$schema` first (the config's own, else
 * `MCP_CONFIG_SCHEMA_URL`) through a temporary file (0o600) and a rename; parents are created
 * (0o700). Takes no lock (as 18.3.4).
 */
export declare function writeMCPConfigFile(filePath: string, config: MCPConfigFile): Promise<void>
/** Why `name` cannot name a server, or undefined when it can: letters, digits, `_.:-`, words joined by single spaces, at most 100 characters. */
export declare function validateServerName(name: string): string | undefined
/** Adds a server last in `mcpServers`; rejects when the name or config is invalid or the name is taken. */
export declare function addMCPServer(filePath: string, name: string, config: MCPServerConfig): Promise<void>
/** Replaces a server's config in place, or adds it; rejects when the name or config is invalid. */
export declare function updateMCPServer(filePath: string, name: string, config: MCPServerConfig): Promise<void>
/** Removes a server; rejects (writing nothing) when it or the file is missing. */
export declare function removeMCPServer(filePath: string, name: string): Promise<void>
/** One server's config, or undefined. */
export declare function getMCPServer(filePath: string, name: string): Promise<MCPServerConfig | undefined>
/** The server names of the file, in file order. */
export declare function listMCPServers(filePath: string): Promise<string[]>
/** The file's `disabledServers` (names hidden whatever their source says), or `[]`. */
export declare function readDisabledServers(filePath: string): Promise<string[]>
/** Adds `name` to the file's `disabledServers` or removes it; the list is kept sorted and dropped when empty. */
export declare function setServerDisabled(filePath: string, name: string, disabled: boolean): Promise<void>
/** The file's `enabledServers` (names forced on over a read-only source's `enabled: false`), or `[]`. */
export declare function readEnabledServers(filePath: string): Promise<string[]>
/** Adds `name` to the file's `enabledServers` or removes it; the list is kept sorted and dropped when empty. */
export declare function setServerForceEnabled(filePath: string, name: string, force: boolean): Promise<void>

/** The files `setMcpServerEnabled` may write, and what to set. */
export interface SetMcpServerEnabledOptions {
  /** The user's `mcp.json`: its lists take what no entry can say. */
  userPath: string
  /** The project's `mcp.json`. */
  projectPath: string
  /** The `mcp.json` the server was loaded from, only when it is a file this layer owns (never another tool's config). */
  sourcePath?: string
  name: string
  enabled: boolean
}

/**
 * Turns a server on or off wherever it is defined: `enabled` written on its entry in the first of
 * `sourcePath`, `projectPath`, `userPath` that has it; otherwise (a server of another tool's file,
 * or discovered) through the user file's `enabledServers` / `disabledServers`. Enabling always
 * clears the name from `disabledServers`; disabling always clears it from `enabledServers`.
 */
export declare function setMcpServerEnabled(options: SetMcpServerEnabledOptions): Promise<void>
/**
 * [beyond] The agent's own config file: `user` → `<agent dir>/mcp.json` (`$PI_CODING_AGENT_DIR`,
 * else `~/<$PI_CONFIG_DIR or .omp>/agent`), `project` → `<cwd>/.omp/mcp.json` (cwd default
 * `process.cwd()`).
 */
export declare function getMCPConfigPath(scope: 'user' | 'project', cwd?: string): string

// biome-ignore lint/complexity/noUselessEmptyExport: without it a .d.ts exports every declaration, MCPConfigFile too
export {}
