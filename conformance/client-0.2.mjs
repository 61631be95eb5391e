#!/usr/bin/env node
// The client that the official conformance suite 0.2.0-alpha.12 drives (client mode; run by
// conformance/run-0.2.mjs). It uses only the package's public API, as an agent would: it gets the
// scenario's server URL as its last argument and, in its environment, MCP_CONFORMANCE_SCENARIO,
// MCP_CONFORMANCE_PROTOCOL_VERSION (the revision under test, passed on as `protocolVersion`) and,
// for some scenarios, MCP_CONFORMANCE_CONTEXT (JSON). What it does per scenario is SPEC 9.4 (core)
// and 10.4 (auth: the package's `oauth` option, SPEC 10.3). It always exits by itself: 0 when every
// step worked, 1 on an error, 2 when its own deadline passes.
import { pathToFileURL } from 'node:url'
import { MCPClient } from 'mcp-native'

const url = process.argv.at(-1)
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? ''
const protocolVersion = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION || undefined
const context = parseContext(process.env.MCP_CONFORMANCE_CONTEXT)
// Below the suite's client timeout (the runner sets it 5 s below), so that the suite sees our exit code.
const deadlineMs = Number(process.env.MCP_CONFORMANCE_CLIENT_TIMEOUT_MS) || 25000

setTimeout(() => {
  console.error(`conformance client: no exit after ${deadlineMs} ms (${scenario}), giving up`)
  process.exit(2)
}, deadlineMs).unref()

function parseContext(text) {
  if (!text) return {}
  try {
    return JSON.parse(text)
  } catch {
    console.error('conformance client: MCP_CONFORMANCE_CONTEXT is not JSON')
    return {}
  }
}

/** A value for one schema property: its default, else the first enum member, else a simple value of its type. */
function valueFor(prop) {
  if (!prop || typeof prop !== 'object') return undefined
  if ('default' in prop) return prop.default
  if (Array.isArray(prop.enum) && prop.enum.length > 0) return prop.enum[0]
  const type = Array.isArray(prop.type) ? prop.type.find((t) => t !== 'null') : prop.type
  if (type === 'string') return 'test'
  if (type === 'number' || type === 'integer') return 1
  if (type === 'boolean') return true
  if (type === 'object') return {}
  if (type === 'array') return []
  return undefined
}

/** Arguments for a tool (or answers for a form) from an object schema: every property with a value. */
function fill(schema) {
  const out = {}
  for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
    const value = valueFor(prop)
    if (value !== undefined) out[key] = value
  }
  return out
}

/** Arguments for a prompt: strings for every declared argument. */
function promptArguments(prompt) {
  const args = {}
  for (const arg of prompt?.arguments ?? []) if (arg && typeof arg.name === 'string') args[arg.name] = 'test'
  return args
}

// The package's OAuth options (SPEC 10.3, "Node/Bun"): the test mode of the suite, where the mock
// authorization server redirects at once and the headless authorizer reads `Location`.
const oauth = {
  clientName: 'mcp-native-conformance',
  redirectUri: 'http://localhost:3000/callback',
  applicationType: 'native',
  clientMetadataUrl: 'https://conformance-test.local/client-metadata.json',
  onAuthorize: 'headless',
}
if (context.client_id) {
  oauth.preRegistered = [{ issuer: context.issuer, clientId: context.client_id, clientSecret: context.client_secret }]
}

const client = new MCPClient(
  'conformance',
  { type: 'http', url, timeout: 20000 },
  {
    protocolVersion,
    // SEP-1034: the client fills the requested schema's defaults into its answer.
    capabilities: { roots: { listChanged: false }, elicitation: { form: { applyDefaults: true } } },
    clientInfo: { name: 'mcp-native-conformance', version: '1.0.0' },
    oauth,
  },
)

// Called while a `test_mrtr_echo_state` round is open (sep-2322), to show that an unrelated
// request carries none of that round's fields.
let duringInput = null

// Server→client requests in the legacy era, and `inputRequests` of an input_required result in the
// modern era: both come here (SPEC 9.1, "How the package surfaces these").
client.onRequest = async (method, params) => {
  if (method === 'elicitation/create') {
    if (duringInput) {
      const task = duringInput
      duringInput = null
      await task()
    }
    return { action: 'accept', content: fill(params?.requestedSchema) }
  }
  if (method === 'roots/list') return { roots: [{ uri: pathToFileURL(process.cwd()).href, name: 'cwd' }] }
  if (method === 'sampling/createMessage') {
    return { role: 'assistant', content: { type: 'text', text: 'ok' }, model: 'mcp-native-conformance', stopReason: 'endTurn' }
  }
  throw Object.assign(new Error(`Method not found: ${method}`), { rpcCode: -32601 })
}
client.onNotification = (method) => console.log(`notification ${method}`)

async function call(name, args) {
  const result = await client.callTool(name, args)
  console.log(`${name} → ${JSON.stringify(result?.content ?? result)}`)
  return result
}

/**
 * Lists the tools and calls each one the library returns, with arguments from its schema; a failed
 * call does not stop the others, but fails the run at the end.
 */
async function callEveryTool() {
  const tools = await client.listTools()
  console.log(`tools: ${tools.map((t) => t.name).join(', ')}`)
  const failed = []
  for (const tool of tools) {
    try {
      await call(tool.name, fill(tool.inputSchema))
    } catch (err) {
      console.error(`${tool.name} failed: ${err?.message ?? err}`)
      failed.push(tool.name)
    }
  }
  if (failed.length > 0) throw new Error(`tool calls failed: ${failed.join(', ')}`)
}

/** What the client does, per scenario (SPEC 9.4 and 10.4); anything else gets `callEveryTool`. */
const steps = {
  // The handshake is the scenario.
  initialize: async () => {},
  tools_call: async () => {
    await client.listTools()
    await call('add_numbers', { a: 2, b: 3 })
  },
  'request-metadata': async () => {
    await client.listTools()
  },
  'sep-2322-client-request-state': async () => {
    await client.listTools()
    duringInput = () => call('test_mrtr_unrelated', {})
    await call('test_mrtr_echo_state', {})
    if (duringInput) {
      // No input round reached the handler: still make the unrelated call.
      duringInput = null
      await call('test_mrtr_unrelated', {})
    }
    await call('test_mrtr_no_state', {})
    await call('test_mrtr_no_result_type', {})
  },
  'http-standard-headers': async () => {
    await callEveryTool()
    for (const resource of await client.listResources()) {
      const read = await client.readResource(resource.uri)
      console.log(`${resource.uri} → ${read.contents?.length ?? 0} content(s)`)
    }
    for (const prompt of await client.listPrompts()) {
      const got = await client.getPrompt(prompt.name, promptArguments(prompt))
      console.log(`${prompt.name} → ${got.messages?.length ?? 0} message(s)`)
    }
  },
  'http-custom-headers': async () => {
    await client.listTools()
    for (const { name, arguments: args } of context.toolCalls ?? []) await call(name, args)
  },
  // Every tool the library keeps: the ones with an invalid x-mcp-header must not be among them.
  'http-invalid-tool-headers': callEveryTool,
  'json-schema-ref-no-deref': async () => {
    const tools = await client.listTools()
    console.log(`tools: ${tools.map((t) => t.name).join(', ')}`)
  },
  'json-schema-2020-12-preservation': async () => {
    const tools = await client.listTools()
    const focal = tools.find((t) => t.name === 'json_schema_2020_12_tool')
    if (!focal) throw new Error('json_schema_2020_12_tool is not in the tools list')
    await call('json_schema_echo', { schema: focal.inputSchema })
  },
}

/** Every auth/* scenario: connect (with the OAuth flow), tools/list, then test-tool {}. */
async function auth() {
  await client.listTools()
  await call('test-tool', {})
}

let code = 0
try {
  await client.connect()
  console.log(`connected (${scenario}): ${client.serverInfo?.name} protocol ${client.protocolVersion}`)
  const run = scenario.startsWith('auth/') ? auth : (steps[scenario] ?? callEveryTool)
  await run()
} catch (err) {
  console.error(`conformance client failed (${scenario}): ${err?.message ?? err}`)
  code = 1
}
try {
  await client.close()
} catch (err) {
  console.error(`close failed: ${err?.message ?? err}`)
}
process.exit(code)
