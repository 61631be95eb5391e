#!/usr/bin/env node
// mcp-native demo: talk MCP to a stdio server by hand with the transport API.
//
//   npm run demo                         # the project's own fixture server (no config needed)
//   npm run demo -- npx -y some-server   # any stdio MCP server: command and args
//
// It initializes, lists the tools, calls the first tool that takes a `message` (or `echo`), and
// closes, printing what it sees.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createStdioTransport } from 'mcp-native'

const here = dirname(fileURLToPath(import.meta.url))
const [command, ...args] = process.argv.length > 2 ? process.argv.slice(2) : [process.execPath, join(here, '..', '__test__', 'fixture', 'server.mjs')]

const started = performance.now()
const transport = await createStdioTransport({ command, args, timeout: 30000 })
transport.onNotification = (method, params) => console.log(`  ← notification ${method}`, params ?? '')
transport.onStderr = (text) => process.stderr.write(`  [server stderr] ${text}`)

const init = await transport.request('initialize', {
  protocolVersion: '2025-03-26',
  capabilities: { roots: { listChanged: false } },
  clientInfo: { name: 'mcp-native-demo', version: '1.0.0' },
})
await transport.notify('notifications/initialized')
console.log(`connected to ${init.serverInfo.name} ${init.serverInfo.version} (protocol ${init.protocolVersion}) in ${(performance.now() - started).toFixed(0)} ms`)

const { tools } = await transport.request('tools/list')
console.log(`tools: ${tools.map((t) => t.name).join(', ')}`)

const tool = tools.find((t) => t.name === 'echo') ?? tools.find((t) => t.inputSchema?.properties?.message)
if (tool) {
  const t0 = performance.now()
  const result = await transport.request('tools/call', { name: tool.name, arguments: { message: 'Hello from Rust!' } })
  console.log(`tools/call ${tool.name} → ${JSON.stringify(result.content)} (${(performance.now() - t0).toFixed(2)} ms)`)
}

await transport.close()
console.log(`closed (connected: ${transport.connected})`)
