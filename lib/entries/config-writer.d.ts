// mcp-native/config-writer: mirrors the reference module `config-writer.ts` (SPEC 8.5, 8.11).
import type { MCPConfigFile, MCPServerConfig } from '../../index'

/** The file's config, unvalidated; `{ mcpServers: {} }` when it does not exist. A bad file rejects with a `SyntaxError`. */
export declare function readMCPConfigFile(filePath: string): Promise<MCPConfigFile>
/** Writes `config` as 2-space JSON through `<filePath>.tmp` (0o600) and a rename; parents are created (0o700). */
export declare function writeMCPConfigFile(filePath: string, config: MCPConfigFile): Promise<void>
/** Why `name` cannot name a server, or undefined when it can. */
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
/**
 * [beyond] The agent's own config file: `user` → `<agent dir>/mcp.json` (`$PI_CODING_AGENT_DIR`,
 * else `~/<$PI_CONFIG_DIR or .omp>/agent`), `project` → `<cwd>/.omp/mcp.json` (cwd default
 * `process.cwd()`).
 */
export declare function getMCPConfigPath(scope: 'user' | 'project', cwd?: string): string
