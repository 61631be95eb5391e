// mcp-native/compat-12.7/config-writer: the 12.7 profile of mcp-native/config-writer (SPEC 8.5, 8.11,
// 11.3). Edits of one file run one after another in this process; there is no cross-process lock.
import type { MCPConfigFile, MCPServerConfig } from '../../../index'
export { readMCPConfigFile, getMCPServer, listMCPServers, getMCPConfigPath } from '../config-writer'

/** Writes `config` as 2-space JSON (no `$schema` added) through `<filePath>.tmp` (0o600) and a rename; parents are created (0o700). */
export declare function writeMCPConfigFile(filePath: string, config: MCPConfigFile): Promise<void>
/** Why `name` cannot name a server, or undefined when it can: letters, digits, `_.-`, at most 100 characters. */
export declare function validateServerName(name: string): string | undefined
/** Adds a server last in `mcpServers`; rejects when the name or config is invalid or the name is taken. */
export declare function addMCPServer(filePath: string, name: string, config: MCPServerConfig): Promise<void>
/** Replaces a server's config in place, or adds it; rejects when the name or config is invalid. */
export declare function updateMCPServer(filePath: string, name: string, config: MCPServerConfig): Promise<void>
/** Removes a server; rejects (writing nothing, creating nothing) when it or the file is missing. */
export declare function removeMCPServer(filePath: string, name: string): Promise<void>
