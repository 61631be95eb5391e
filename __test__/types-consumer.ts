// Type-checked by `npm run test:types` (tsc --noEmit): uses the API the way the reference's callers
// do. It is never run.
import { StdioTransport, createStdioTransport } from 'mcp-native'
import type { MCPTransport, MCPStdioServerConfig, MCPToolsListResult, MCPInitializeResult, MCPError, TransportFactory } from 'mcp-native/types'
import * as transports from 'mcp-native/transports'
import { callMCP, parseSSE } from 'mcp-native/json-rpc'
import type { JsonRpcResponse, MCPToolCallResult } from 'mcp-native/types'

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
  const envelope: JsonRpcResponse<MCPToolCallResult> = await callMCP<MCPToolCallResult>('http://127.0.0.1:1/mcp', 'tools/call', { name: 'x' }, { timeout: 100, headers: { A: 'b' } })
  const text: string | undefined = envelope.result?.content[0]?.type === 'text' ? envelope.result.content[0].text : undefined
  const parsed: unknown = parseSSE('data: {}')
  void [version, names, connected, pid, factory, StdioTransport, text, parsed]
}
void useIt
