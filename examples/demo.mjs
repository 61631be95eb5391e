#!/usr/bin/env node
// mcp-native demo: what a coding agent does with its MCP servers, through MCPManager.
//
//   npm run demo                         # the project's own fixture server (no config needed)
//   npm run demo -- npx -y some-server   # any stdio MCP server: command and args
//   npm run demo -- --discover           # the servers discovered for the current directory (SPEC 7)
//
// It connects (as the agent does today: servers slower than the 250 ms startup window go on in the
// background, and the demo then waits for them as the agent's print mode does), lists the tools as
// the agent sees them, calls the first tool that takes a `message` (or `echo`), and disconnects,
// printing what it sees and how long each step took.
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { MCPManager } from 'mcp-native'

const here = dirname(fileURLToPath(import.meta.url))
const argv = process.argv.slice(2)
const discover = argv[0] === '--discover'
const [command, ...args] = argv.length > 0 && !discover ? argv : [process.execPath, join(here, '..', '__test__', 'fixture', 'server.mjs')]

const manager = new MCPManager(process.cwd(), null, {
  // Without --discover: one embedded server instead of the discovered ones.
  loadConfigs: discover ? undefined : async () => ({ configs: { demo: { command, args, timeout: 30000 } }, sources: {}, exaApiKeys: [] }),
  onNotification: (name, method) => console.log(`  [${name}] ← ${method}`),
})
manager.addConnectionStatusListener((e) =>
  console.log(
    e.type === 'connecting'
      ? `connecting to ${e.serverNames.join(', ')}…`
      : `  [${e.serverName}] ${e.type}${e.type === 'failed' ? `: ${e.error}` : ''}`,
  ),
)

const started = performance.now()
await manager.discoverAndConnect()
const startup = await manager.waitForStartup(60000)
console.log(`connected to ${startup.connected.join(', ') || 'nothing'} in ${(performance.now() - started).toFixed(0)} ms`)
for (const { name, error } of startup.failed) console.log(`  ${name}: ${error}`)
for (const name of startup.pending) console.log(`  ${name}: still connecting after 60 s`)
for (const name of startup.connected) {
  const c = manager.getConnection(name)
  console.log(`  ${name}: ${c.serverInfo.name} ${c.serverInfo.version}, ${c.tools.length} tools`)
}
console.log(
  `tools: ${manager
    .getTools()
    .map((t) => t.name)
    .join(', ')}`,
)

const tool = manager.getTools().find((t) => t.mcpToolName === 'echo') ?? manager.getTools().find((t) => t.parameters?.properties?.message)
if (tool) {
  const t0 = performance.now()
  const out = await tool.execute('demo-call', { message: 'Hello from Rust!' })
  console.log(`${tool.label} → ${JSON.stringify(out.content[0].text)} (${(performance.now() - t0).toFixed(2)} ms)`)
}

await manager.disconnectAll()
console.log('disconnected')
