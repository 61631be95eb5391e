// Type-checked by `npm run test:types` (tsc --noEmit), never run: the tool cache and the config
// writer used the way the reference's callers use them.
import { MCPToolCache } from 'mcp-native/compat-12.7/tool-cache'
import type { MCPToolCacheStore, OpenMCPToolCache } from 'mcp-native/compat-12.7/tool-cache'
import {
  addMCPServer,
  getMCPConfigPath,
  getMCPServer,
  listMCPServers,
  readMCPConfigFile,
  removeMCPServer,
  updateMCPServer,
  validateServerName,
  writeMCPConfigFile,
} from 'mcp-native/compat-12.7/config-writer'
import type { MCPConfigFile, MCPServerConfig, MCPToolDefinition } from 'mcp-native/compat-12.7/types'

// The agent's AgentStorage, as it is declared there.
declare class AgentStorage {
  getCache(key: string): string | null
  setCache(key: string, value: string, expiresAtSec: number): void
  cleanExpiredCache(): void
}

async function useCache(storage: AgentStorage): Promise<void> {
  const cache = new MCPToolCache(storage)
  const config: MCPServerConfig = { command: 'npx', args: ['-y', 'server'] }
  const tools: MCPToolDefinition[] | null = await cache.get('files', config)
  if (tools) await cache.set('files', config, tools)

  const logged = new MCPToolCache(storage, { logger: { warn: (...args: unknown[]) => void args }, timeout: 100 })
  // Any object with get and set is an MCPToolCache (the manager's parameter type).
  const custom: MCPToolCache = { get: async () => null, set: async () => {} }
  void [logged, custom]

  const opened: OpenMCPToolCache = MCPToolCache.open()
  const asCache: MCPToolCache = opened
  const store: MCPToolCacheStore = opened.storage
  const expires: number | null = store.expiresAt('mcp_tools:files')
  const path: string = store.path
  void [expires, path]
  void asCache
  opened.close()
  MCPToolCache.open(new URL('file:///tmp/x.db'), { timeout: 10 }).close()
}

async function useWriter(): Promise<void> {
  const user: string = getMCPConfigPath('user')
  const project: string = getMCPConfigPath('project', process.cwd())
  const file: MCPConfigFile = await readMCPConfigFile(user)
  await writeMCPConfigFile(project, file)
  const problem: string | undefined = validateServerName('a b')
  void problem
  await addMCPServer(user, 'github', { type: 'http', url: 'https://api.example.com/mcp' })
  await updateMCPServer(user, 'github', { type: 'sse', url: 'https://api.example.com/sse', headers: { A: 'b' } })
  const one: MCPServerConfig | undefined = await getMCPServer(user, 'github')
  const names: string[] = await listMCPServers(user)
  void [one, names]
  await removeMCPServer(user, 'github')
}

void useCache
void useWriter
