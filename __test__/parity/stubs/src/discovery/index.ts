// Parity stub (SPEC 11.7) of the agent's src/discovery/index.ts, which does not load here: it
// registers every config provider, and most of them reach modules that import pi-tui sub-paths
// pi-tui 18.2.9 does not have (`tools/cfg-url`, `prompt/word-completion`). This stub registers the
// MCP capability and only the `.mcp.json` provider (which loads), and re-exports the capability
// registry as the real module does. The scenarios hand configs to the manager; the loader scenarios
// read a project `.mcp.json`.
import '../capability/mcp'
import './mcp-json'

export * from '../capability'
export type { MCPServer } from '../capability/mcp'
export type * from '../capability/types'
