// Type-checked by `npm run test:types` (tsc --noEmit): mcp-native/config used as the reference's callers use config.ts.
import {
  type ExaFilterResult,
  type LoadMCPConfigsOptions,
  type LoadMCPConfigsResult,
  extractExaApiKey,
  filterExaMCPServers,
  isExaMCPServer,
  loadAllMCPConfigs,
  validateServerConfig,
} from 'mcp-native/compat-12.7/config'
import type { MCPServerConfig, SourceMeta } from 'mcp-native/compat-12.7/types'

export async function discover(cwd: string): Promise<string[]> {
  const options: LoadMCPConfigsOptions = { enableProjectConfig: true, filterExa: true, disabledProviders: ['vscode'] }
  const { configs, sources, exaApiKeys, warnings } = await loadAllMCPConfigs(cwd, { ...options, logger: console })
  const first: string | undefined = warnings[0]
  const source: SourceMeta | undefined = sources.a
  const config: MCPServerConfig | undefined = configs.a
  const problems: string[] = config ? validateServerConfig('a', config) : []
  const exa: boolean = config ? isExaMCPServer('a', config) : false
  const key: string | undefined = config ? extractExaApiKey(config) : undefined
  const filtered: ExaFilterResult = filterExaMCPServers(configs, sources)
  // A result built by hand (an injected loader) needs no warnings.
  const injected: LoadMCPConfigsResult = { configs: {}, sources: {}, exaApiKeys: [] }
  return [
    first ?? '',
    source?.path ?? '',
    ...problems,
    String(exa),
    key ?? '',
    ...filtered.exaApiKeys,
    ...exaApiKeys,
    ...Object.keys(injected.configs),
  ]
}
