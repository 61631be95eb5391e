// Focused HTTP benchmark: one large `tools/call` result over Streamable HTTP (a JSON body or one
// SSE event), this package (connectToServer + callTool) against the runtime's floor client
// (bench/floor.mjs: node:http keep-alive / fetch, one JSON.parse of the body) and, on Node, the
// official SDK. Prints, per size, the median time to the parsed result and the median longest
// main-thread block (the largest gap of a 1 ms setInterval, as the main bench measures it).
//
//   node bench/http-large.mjs [json|sse]        (or: bun bench/http-large.mjs …)
//
// (A measuring aid beside `npm run bench`, bench/run.mjs, whose workloads are the issue's.) The
// server is this file run with `--serve`: its answers are serialized once, at start, so that the
// clients are what is timed, not the building of an 8 MiB string per call.
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { fileURLToPath } from 'node:url'
import { blockDuring, median } from './rates.mjs'

const SIZES_MIB = [1, 8]
const ROUNDS = 7

if (process.argv.includes('--serve')) serve()
else await measure(process.argv[2] === 'sse' ? 'sse' : 'json')

/** A Streamable HTTP server with one tool, `big` {bytes}: a text result of that many bytes. */
function serve() {
  const sse = process.argv.includes('sse')
  // The large results' bytes, made once; an answer is a head with its id, the result, a tail.
  const results = new Map(SIZES_MIB.map((m) => [m << 20, Buffer.from(`{"content":[{"type":"text","text":"${'x'.repeat(m << 20)}"}]}`)]))
  const head = (id) => Buffer.from(`${sse ? 'data: ' : ''}{"jsonrpc":"2.0","id":${JSON.stringify(id)},"result":`)
  const tail = Buffer.from(sse ? '}\n\n' : '}')
  const server = createServer((req, res) => {
    if (req.method !== 'POST') {
      res.writeHead(req.method === 'DELETE' ? 200 : 405)
      return res.end()
    }
    const parts = []
    req.on('data', (c) => parts.push(c))
    req.on('end', () => {
      const msg = JSON.parse(Buffer.concat(parts).toString() || 'null')
      if (!msg || msg.id === undefined) {
        res.writeHead(202)
        return res.end()
      }
      let result = results.get(msg.params?.arguments?.bytes)
      if (msg.method !== 'tools/call' || !result) {
        const small =
          msg.method === 'initialize'
            ? {
                protocolVersion: msg.params?.protocolVersion ?? '2025-06-18',
                capabilities: { tools: {} },
                serverInfo: { name: 'big', version: '1' },
              }
            : msg.method === 'tools/list'
              ? { tools: [{ name: 'big', inputSchema: { type: 'object' } }] }
              : {}
        result = Buffer.from(JSON.stringify(small))
      }
      const pieces = [head(msg.id), result, tail]
      const length = pieces.reduce((n, p) => n + p.length, 0)
      res.writeHead(200, {
        'content-type': sse ? 'text/event-stream' : 'application/json',
        'mcp-session-id': 'bench',
        ...(sse ? {} : { 'content-length': length }),
      })
      for (const p of pieces.slice(0, -1)) res.write(p)
      res.end(pieces[pieces.length - 1])
    })
  })
  server.listen(0, '127.0.0.1', () => process.stdout.write(`${JSON.stringify({ port: server.address().port })}\n`))
}

async function measure(mode) {
  const { callTool, connectToServer, disconnectServer } = await import('mcp-native')
  const { startHttpFloor } = await import('./floor.mjs')
  const self = fileURLToPath(import.meta.url)
  const server = spawn('node', [self, '--serve', mode], { stdio: ['ignore', 'pipe', 'inherit'] })
  try {
    const { port } = await new Promise((resolve) => server.stdout.once('data', (d) => resolve(JSON.parse(String(d)))))
    const url = `http://127.0.0.1:${port}/mcp`
    const clients = {}
    const pkg = await connectToServer('bench', { type: 'http', url })
    clients.package = { call: (a) => callTool(pkg, 'big', a), close: () => disconnectServer(pkg) }
    const floor = await startHttpFloor(url)
    clients.floor = { call: (a) => floor.callTool('big', a), close: () => floor.close() }
    if (!process.versions.bun) {
      const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
      const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
      const sdk = new Client({ name: 'sdk', version: '1' })
      await sdk.connect(new StreamableHTTPClientTransport(new URL(url)))
      clients.sdk = { call: (a) => sdk.callTool({ name: 'big', arguments: a }), close: () => sdk.close() }
    }
    const runtime = process.versions.bun ? `Bun ${process.versions.bun}` : `Node ${process.version}`
    for (const mib of SIZES_MIB) {
      const bytes = mib << 20
      const times = {}
      const blocks = {}
      for (let r = 0; r < ROUNDS; r++) {
        // Alternating order, as in bench/worker.mjs; the first round also warms each client up.
        const names = Object.keys(clients)
        for (const name of names.map((_, i) => names[(i + r) % names.length])) {
          const c = clients[name]
          if (r === 0) await c.call({ bytes })
          const { value, ms, block } = await blockDuring(() => c.call({ bytes }))
          if (value.content[0].text.length !== bytes) throw new Error(`${name}: wrong result`)
          ;(times[name] ??= []).push(ms)
          ;(blocks[name] ??= []).push(block)
        }
      }
      const cells = Object.keys(clients).map((n) => `${n} ${median(times[n]).toFixed(1)} ms (block ${median(blocks[n]).toFixed(1)} ms)`)
      console.log(`${runtime}, HTTP ${mode} reply, ${mib} MiB result, medians of ${ROUNDS}: ${cells.join(', ')}`)
    }
    for (const c of Object.values(clients)) await c.close()
  } finally {
    server.kill()
  }
}
