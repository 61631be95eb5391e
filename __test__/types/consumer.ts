// Type-checked by `npm run test:types` (tsc --noEmit): uses the API the way the reference's callers
// do. It is never run.
import { StdioTransport, createStdioTransport } from 'mcp-native/compat-12.7'
import type {
  MCPTransport,
  MCPStdioServerConfig,
  MCPToolsListResult,
  MCPInitializeResult,
  MCPError,
  TransportFactory,
} from 'mcp-native/compat-12.7/types'
import * as transports from 'mcp-native/compat-12.7/transports'
import { callMCP, parseSSE } from 'mcp-native/compat-12.7/json-rpc'
import type { JsonRpcResponse, MCPToolCallResult } from 'mcp-native/compat-12.7/types'

async function useIt(): Promise<void> {
  const config: MCPStdioServerConfig = { command: 'node', args: ['server.js'], env: { A: 'b' }, timeout: 5000 }
  const transport: MCPTransport = await createStdioTransport(config)
  transport.onNotification = (method: string, params: unknown) => void [method, params]
  transport.onClose = () => {}
  transport.onError = (error: Error) => void error.message
  transport.onNotification = undefined
  const init = await transport.request<MCPInitializeResult>('initialize', { protocolVersion: '2025-03-26' })
  const version: string = init.protocolVersion
  const ac = new AbortController()
  const list = await transport.request<MCPToolsListResult>('tools/list', {}, { signal: ac.signal, timeout: 100 })
  const names: string[] = list.tools.map((t) => t.name)
  await transport.notify('notifications/initialized')
  const connected: boolean = transport.connected
  await transport.close()

  const direct = new transports.StdioTransport(config)
  direct.onStderr = (chunk: string) => void chunk.length
  direct.onRequest = async (method: string) => ({ method })
  await direct.connect()
  const pid: number | null = direct.pid
  try {
    await direct.request('x')
  } catch (e) {
    const err = e as MCPError
    const code: string | undefined = err.code
    void [code, err.rpcCode, err.stderr, err.exitCode]
  }
  const factory: TransportFactory = async (c) => {
    if (c.type === undefined || c.type === 'stdio') return createStdioTransport(c)
    if (c.type === 'http' || c.type === 'sse') return transports.createHttpTransport(c)
    throw new Error(`Unknown server type: ${(c as { type: string }).type}`)
  }
  const http = new transports.HttpTransport({ type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { A: 'b' } })
  const sid: string | undefined = http.sessionId
  void sid
  const envelope: JsonRpcResponse<MCPToolCallResult> = await callMCP<MCPToolCallResult>(
    'http://127.0.0.1:1/mcp',
    'tools/call',
    { name: 'x' },
    { timeout: 100, headers: { A: 'b' } },
  )
  const text: string | undefined = envelope.result?.content[0]?.type === 'text' ? envelope.result.content[0].text : undefined
  const parsed: unknown = parseSSE('data: {}')
  void [version, names, connected, pid, factory, StdioTransport, text, parsed]
}
void useIt

// SPEC 5 and 6, the way the reference's callers use them.
import {
  connectToServer,
  listTools,
  callTool,
  disconnectServer,
  serverSupportsTools,
  createTransport,
  MCPClient,
} from 'mcp-native/compat-12.7/client'
import { MCPManager, createMCPManager } from 'mcp-native/compat-12.7/manager'
import type {
  MCPServerConnection,
  MCPToolDefinition,
  MCPToolCache,
  AuthStorage,
  MCPLoadResult,
  MCPDiscoverOptions,
  MCPServerConfig,
  SourceMeta,
  MCPToolWithServer,
  MCPConfigFile,
} from 'mcp-native/compat-12.7/types'
import * as root from 'mcp-native/compat-12.7'

async function useClientAndManager(): Promise<void> {
  const config: MCPServerConfig = { type: 'http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer x' }, timeout: 1000 }
  const connection: MCPServerConnection = await connectToServer('srv', config, { signal: AbortSignal.timeout(1000) })
  connection.transport.onNotification = (method: string, params: unknown) => void [method, params]
  connection.transport.onNotification = undefined
  if (serverSupportsTools(connection.capabilities)) {
    const tools: MCPToolDefinition[] = await listTools(connection)
    connection.tools = tools
    const withServer: MCPToolWithServer[] = tools.map((tool) => ({ server: connection, tool }))
    const result = await callTool(connection, withServer[0].tool.name, { q: 1 }, { signal: new AbortController().signal })
    const first = result.content[0]
    const text: string = first.type === 'text' ? first.text : first.type === 'image' ? first.mimeType : first.resource.uri
    void [text, result.isError]
  }
  connection._source = { provider: 'mcp-json', providerName: 'MCP Config', path: '/p', level: 'project' }
  connection.config = { command: 'node', args: [] }
  await disconnectServer(connection)
  const transport = await createTransport({ command: 'node' })
  await transport.close()

  const client = await MCPClient.connect('srv', config, { reconnect: { maxAttempts: 3 }, clientInfo: { name: 'me', version: '1' } })
  client.onNotification = (method) => void method
  client.onRequest = async (method, params) => ({ method, params })
  client.onStatus = (status, error) => void [status, error?.message]
  const conn: MCPServerConnection | undefined = client.connection
  const version: string | undefined = client.protocolVersion
  const tools: MCPToolDefinition[] = await client.listTools()
  await client.ping()
  await client.getPrompt('p', { a: 'b' })
  await client.close()
  void [conn, version, tools]

  const cache: MCPToolCache = { get: async () => null, set: async () => {} }
  const storage: AuthStorage = { get: (id: string) => (id ? { type: 'oauth', access: 'tok' } : undefined) }
  const manager = new MCPManager('/project', cache, { logger: console, reconnect: true })
  manager.setAuthStorage(storage)
  const discover: MCPDiscoverOptions = { enableProjectConfig: false, onConnecting: (names: string[]) => void names }
  const loaded: MCPLoadResult = await manager.discoverAndConnect(discover)
  const errors: Map<string, string> = loaded.errors
  const file: MCPConfigFile = { mcpServers: { a: config }, disabledServers: ['b'] }
  const sources: Record<string, SourceMeta> = {}
  const again = await manager.connectServers(file.mcpServers ?? {}, sources, (names) => void names)
  const status: 'connected' | 'connecting' | 'disconnected' = manager.getConnectionStatus('a')
  const waited: MCPServerConnection = await manager.waitForConnection('a')
  const prepared: MCPServerConfig = await manager.prepareConfig(config)
  const all: string[] = manager.getAllServerNames()
  await manager.refreshServerTools('a')
  await manager.disconnectServer('a')
  await manager.disconnectAll()
  const created = await createMCPManager('/project', { filterExa: false })
  const keys: string[] = created.result.exaApiKeys
  void [
    errors,
    again.tools.length,
    status,
    waited,
    prepared,
    all,
    keys,
    manager.getTools(),
    manager.cwd,
    manager.toolCache,
    root.MCPManager,
  ]
}
void useClientAndManager
