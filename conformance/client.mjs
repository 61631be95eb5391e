#!/usr/bin/env node
// The client the official conformance suite drives (@modelcontextprotocol/conformance, client
// mode): it gets the scenario's server URL as its last argument and MCP_CONFORMANCE_SCENARIO in
// its environment, does what a coding agent does with a server (handshake, tools/list, call every
// tool, answer elicitation with the schema's defaults), and exits by itself.
import { MCPClient } from 'mcp-native'

const url = process.argv.at(-1)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''

/** Arguments for a tool from its input schema: defaults where given, simple values otherwise. */
function argumentsFor(schema) {
  const args = {}
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop && 'default' in prop) args[key] = prop.default
    else if (prop?.type === 'number' || prop?.type === 'integer') args[key] = 1
    else if (prop?.type === 'boolean') args[key] = true
    else if (prop?.type === 'string') args[key] = 'test'
  }
  return args
}

/** An elicitation answer that applies the requested schema's defaults (SEP-1034). */
function elicitationDefaults(schema) {
  const content = {}
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    if (prop && 'default' in prop) content[key] = prop.default
  }
  return content
}

const client = new MCPClient(
  'conformance',
  { type: 'http', url, timeout: 20000 },
  {
    capabilities: { roots: { listChanged: false }, elicitation: { form: { applyDefaults: true } } },
    // The suite checks that a client asks for the latest revision; the reference default is older.
    protocolVersion: '2025-11-25',
    clientInfo: { name: 'mcp-native-conformance', version: '1.0.0' },
  },
)
client.onRequest = async (method, params) => {
  if (method === 'elicitation/create') return { action: 'accept', content: elicitationDefaults(params?.requestedSchema) }
  throw Object.assign(new Error('Method not found'), { rpcCode: -32601 })
}
client.onNotification = (method) => console.log(`notification ${method}`)

try {
  await client.connect()
  console.log(`connected (${scenario}): ${client.serverInfo?.name} protocol ${client.protocolVersion}`)
  const tools = await client.listTools()
  for (const tool of tools) {
    const result = await client.callTool(tool.name, argumentsFor(tool.inputSchema))
    console.log(`${tool.name} → ${JSON.stringify(result.content)}`)
  }
  await client.close()
} catch (err) {
  console.error(`conformance client failed: ${err.message}`)
  await client.close()
  process.exitCode = 1
}
