// SPEC 5: the function API and MCPClient, against the fixture servers (stdio and HTTP) as real
// child processes. Runs under vitest (Node) and `bun test` (Bun) alike.
import { spawn } from 'node:child_process'
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest'

import {
  connectToServer,
  listTools,
  callTool,
  disconnectServer,
  serverSupportsTools,
  createTransport,
  MCPClient,
  StdioTransport,
  HttpTransport,
} from 'mcp-native/compat-12.7'
import {
  ROOT,
  COMPAT,
  SCRIPT_NODE,
  WORKER_END_CRASHES_BUN,
  fixture,
  alive,
  marker,
  processesWith,
  settle,
  startHttpFixture,
  waitFor,
} from './helpers.mjs'

const cleanup = []
afterEach(async () => {
  await Promise.all(cleanup.splice(0).map((c) => c()))
})
function track(connectionOrClient) {
  cleanup.push(() => (connectionOrClient instanceof MCPClient ? connectionOrClient.close() : disconnectServer(connectionOrClient)))
  return connectionOrClient
}

let http
let base
beforeAll(async () => {
  ;({ child: http, base } = await startHttpFixture())
})
afterAll(() => http.kill())

describe('createTransport', () => {
  it('picks the transport by type and refuses unknown types', async () => {
    const stdio = await createTransport(fixture())
    expect(stdio).toBeInstanceOf(StdioTransport)
    expect(stdio.connected).toBe(true)
    await stdio.close()
    for (const type of ['http', 'sse']) {
      const t = await createTransport({ type, url: `${base}/mcp` })
      expect(t).toBeInstanceOf(HttpTransport)
      await t.close()
    }
    await expect(createTransport({ type: 'ws', url: 'ws://x' })).rejects.toThrow(/^Unknown server type: ws$/)
  })
})

describe('connectToServer', () => {
  it('runs the reference handshake and resolves with exactly the connection fields', async () => {
    const config = fixture()
    const c = track(await connectToServer('fx', config))
    expect(Object.keys(c).sort()).toEqual(['capabilities', 'config', 'name', 'serverInfo', 'transport'])
    expect(c.name).toBe('fx')
    expect(c.config).toBe(config)
    expect(c.serverInfo).toEqual({ name: 'mcp-native-fixture', version: '1.0.0' })
    expect(c.capabilities.tools).toEqual({ listChanged: true })
    const { requests } = await c.transport.request('requests')
    expect(requests.slice(0, 1)).toEqual([
      {
        id: requests[0].id,
        method: 'initialize',
        params: {
          protocolVersion: '2025-03-26',
          capabilities: { roots: { listChanged: false } },
          clientInfo: { name: 'omp-coding-agent', version: '1.0.0' },
        },
      },
    ])
    expect(requests.map((r) => r.method)).toEqual(['initialize', 'requests'])
    const { received } = await c.transport.request('received')
    expect(received).toEqual([{ method: 'notifications/initialized', params: {} }])
  })

  it('accepts another supported version and refuses an unsupported one (transport closed)', async () => {
    const older = track(await MCPClient.connect('old', fixture(['--init-version=2024-11-05'])))
    expect(older.protocolVersion).toBe('2024-11-05')
    const m = marker()
    const { error } = await settle(connectToServer('new', fixture(['--init-version=2099-01-01', m])))
    expect(error.message).toBe('Unsupported protocol version: 2099-01-01')
    expect(processesWith(m)).toEqual([])
  })

  it('passes protocolVersion, capabilities and clientInfo options through', async () => {
    const c = track(
      await connectToServer('fx', fixture(), {
        protocolVersion: '2025-06-18',
        capabilities: { sampling: {} },
        clientInfo: { name: 'me', version: '2' },
      }),
    )
    const { requests } = await c.transport.request('requests')
    expect(requests[0].params).toEqual({
      protocolVersion: '2025-06-18',
      capabilities: { sampling: {} },
      clientInfo: { name: 'me', version: '2' },
    })
  })

  it('a hung server: the connect timeout message, and afterwards no process is left', async () => {
    const m = marker()
    const started = Date.now()
    const { error } = await settle(
      connectToServer('hung', fixture(['--init-hang', '--ignore-sigterm', m], { timeout: 300, killGraceMs: 200 })),
    )
    expect(error.message).toBe('Connection to MCP server "hung" timed out after 300ms')
    expect(error.code).toBe('MCP_TIMEOUT')
    expect(Date.now() - started).toBeLessThan(3000)
    expect(processesWith(m)).toEqual([])
  })

  it('timeout 0 gives up at once', async () => {
    const m = marker()
    const { error } = await settle(connectToServer('zero', fixture([m], { timeout: 0 })))
    expect(error.message).toBe('Connection to MCP server "zero" timed out after 0ms')
    expect(processesWith(m)).toEqual([])
  })

  it('an initialize error closes the transport and rethrows the original error', async () => {
    const m = marker()
    const { error } = await settle(connectToServer('bad', fixture(['--init-error', m])))
    expect(error.message).toBe('MCP error -32603: initialize refused')
    expect(error.rpcCode).toBe(-32603)
    expect(processesWith(m)).toEqual([])
  })

  it('abort cancels the attempt; an aborted signal spawns nothing', async () => {
    const m = marker()
    const ac = new AbortController()
    const pending = connectToServer('slow', fixture(['--init-hang', m]), { signal: ac.signal })
    await waitFor(() => processesWith(m).length === 1)
    ac.abort(new Error('user gave up'))
    const { error } = await settle(pending)
    expect(error.message).toBe('user gave up')
    expect(processesWith(m)).toEqual([])

    const m2 = marker()
    const { error: early } = await settle(connectToServer('never', fixture([m2]), { signal: AbortSignal.abort() }))
    expect(early.name).toBe('AbortError')
    expect(processesWith(m2)).toEqual([])
  })

  it('a failing spawn rejects with the OS reason', async () => {
    const { error } = await settle(connectToServer('nope', { command: '/nonexistent/mcp-server' }))
    expect(error.message).toBe('spawn /nonexistent/mcp-server ENOENT')
  })

  it('works over HTTP, where the initialize is sent without cancelled notifications on timeout', async () => {
    const c = track(await connectToServer('h', { type: 'http', url: `${base}/mcp` }))
    expect(c.serverInfo.name).toBe('mcp-native-http-fixture')
    expect(c.transport.protocolVersion).toBe('2025-03-26')
    const headers = await c.transport.request('headers')
    expect(headers['mcp-protocol-version']).toBe('2025-03-26')
  })
})

describe('listTools, callTool, serverSupportsTools, disconnectServer', () => {
  it('pages until nextCursor is empty, stores the array and returns the same one again', async () => {
    const c = track(await connectToServer('fx', fixture(['--pages=3'])))
    const tools = await listTools(c)
    expect(tools.map((t) => t.name)).toEqual(['echo', 'big', 'add', 'mixed', 'fail', 'slow'])
    expect(c.tools).toBe(tools)
    expect(await listTools(c)).toBe(tools)
    const { requests } = await c.transport.request('requests')
    expect(requests.filter((r) => r.method === 'tools/list').map((r) => r.params)).toEqual([{}, { cursor: 'page-1' }, { cursor: 'page-2' }])
  })

  it('stops after 1000 pages', async () => {
    const c = track(await connectToServer('fx', fixture(['--endless-pages'])))
    const tools = await listTools(c)
    expect(tools.length).toBe(1000)
    const { requests } = await c.transport.request('requests')
    expect(requests.filter((r) => r.method === 'tools/list').length).toBe(1000)
  })

  it('an error mid-way propagates and nothing is stored', async () => {
    const c = track(await connectToServer('fx', fixture(['--pages=3', '--pages-fail-at=1'])))
    await expect(listTools(c)).rejects.toThrow(/^MCP error -32000: page failed$/)
    expect(c.tools).toBeUndefined()
  })

  it('no tools capability: [] without a request', async () => {
    const c = track(await connectToServer('fx', fixture(['--no-tools-cap'])))
    expect(await listTools(c)).toEqual([])
    const { requests } = await c.transport.request('requests')
    expect(requests.map((r) => r.method)).toEqual(['initialize', 'requests'])
  })

  it('serverSupportsTools is `tools !== undefined`', () => {
    expect(serverSupportsTools({ tools: null })).toBe(true)
    expect(serverSupportsTools({ tools: {} })).toBe(true)
    expect(serverSupportsTools({})).toBe(false)
  })

  // The issue's own reproduction: Bun 1.3.x cut 512 KiB out of an 8 MiB tool result (no error).
  it('callTool: an 8 MiB text block comes back whole, and the next call is answered', async () => {
    const c = track(await connectToServer('fx', fixture()))
    const bytes = 8 << 20
    for (let i = 0; i < 5; i++) {
      const result = await callTool(c, 'big', { bytes })
      expect(result.content[0].text.length).toBe(bytes)
      expect(await callTool(c, 'echo', { message: `after ${i}` })).toEqual({ content: [{ type: 'text', text: `after ${i}` }] })
    }
  }, 60000)

  it('callTool returns the raw result, isError included, with arguments defaulting to {}', async () => {
    const c = track(await connectToServer('fx', fixture()))
    expect(await callTool(c, 'echo', { message: 'hi' })).toEqual({ content: [{ type: 'text', text: 'hi' }] })
    expect(await callTool(c, 'fail')).toEqual({ content: [{ type: 'text', text: 'it broke' }], isError: true })
    const { requests } = await c.transport.request('requests')
    expect(requests.find((r) => r.params?.name === 'fail').params).toEqual({ name: 'fail', arguments: {} })
    await expect(callTool(c, 'slow', { ms: 5000 }, { timeout: 50 })).rejects.toThrow(/^Request timeout after 50ms$/)
  })

  it('disconnectServer closes the transport and the process', async () => {
    const c = await connectToServer('fx', fixture())
    const pid = c.transport.pid
    await disconnectServer(c)
    expect(c.transport.connected).toBe(false)
    expect(alive(pid)).toBe(false)
    await expect(callTool(c, 'echo')).rejects.toThrow(/^Transport not connected$/)
  })
})

describe('MCPClient', () => {
  it('exposes the session and the helpers: ping, resources, prompts, request, notify', async () => {
    const client = track(new MCPClient('fx', fixture(['--instructions=Be brief'])))
    expect(client.connected).toBe(false)
    await expect(client.request('echo')).rejects.toThrow(/^Transport not connected$/)
    await client.connect()
    expect(client.connected).toBe(true)
    expect(client.serverInfo).toEqual({ name: 'mcp-native-fixture', version: '1.0.0' })
    expect(client.instructions).toBe('Be brief')
    expect(client.protocolVersion).toBe('2025-03-26')
    expect(client.connection.transport).toBe(client.transport)
    expect(client.capabilities).toBe(client.connection.capabilities)
    await client.ping()
    expect(await client.listResources()).toEqual([{ uri: 'fixture://a', name: 'a', mimeType: 'text/plain' }])
    expect(await client.readResource('fixture://a')).toEqual({
      contents: [{ uri: 'fixture://a', mimeType: 'text/plain', text: 'content of fixture://a' }],
    })
    expect(await client.listPrompts()).toEqual([{ name: 'greet', arguments: [{ name: 'who' }] }])
    expect((await client.getPrompt('greet', { who: 'Ann' })).messages[0].content.text).toBe('Hello Ann from greet')
    expect(await client.request('echo', { a: 1 })).toEqual({ a: 1 })
    await client.notify('custom/note', { x: 1 })
    const { received } = await client.request('received')
    expect(received.at(-1)).toEqual({ method: 'custom/note', params: { x: 1 } })
    const tools = await client.listTools()
    expect(await client.listTools()).toBe(tools)
    expect(await client.refreshTools()).not.toBe(tools)
    expect((await client.callTool('add', { a: 2, b: 3 })).content[0].text).toBe('5')
  })

  it('wires every event: notifications, stderr, server requests (roots answered by default), errors, close', async () => {
    const client = track(await MCPClient.connect('fx', fixture()))
    const notes = []
    const stderr = []
    client.onNotification = (method, params) => notes.push([method, params])
    client.onStderr = (chunk) => stderr.push(chunk)
    await client.request('notify', { count: 2 })
    expect(notes).toEqual([
      ['fixture/note', { i: 0 }],
      ['fixture/note', { i: 1 }],
    ])
    await client.request('stderr', { bytes: 5 })
    await waitFor(() => stderr.join('').length >= 5)
    expect(stderr.join('')).toBe('eeeee')

    const roots = await client.request('reverse', { method: 'roots/list' })
    expect(roots.answer.result).toEqual({ roots: [] })
    const other = await client.request('reverse', { method: 'sampling/createMessage' })
    expect(other.answer.error.code).toBe(-32601)
    client.onRequest = async (method, params) => ({ handled: method, params })
    const handled = await client.request('reverse', { method: 'elicitation/create', params: { q: 1 } })
    expect(handled.answer.result).toEqual({ handled: 'elicitation/create', params: { q: 1 } })

    const events = []
    client.onError = (e) => events.push(['error', e.message, e.exitCode])
    client.onClose = () => events.push(['close'])
    const { error } = await settle(client.request('crash', { code: 7 }))
    expect(error.message).toBe('Transport closed')
    await waitFor(() => events.length >= 2)
    expect(events).toEqual([['error', 'Transport closed', 7], ['close']])
    expect(client.connected).toBe(false)
    expect(client.state).toBe('closed')
  })

  it('tools/list_changed drops the tool cache', async () => {
    const client = track(await MCPClient.connect('fx', fixture()))
    const before = await client.listTools()
    expect(before.length).toBe(6)
    const seen = []
    client.onNotification = (method) => seen.push(method)
    await client.request('set-tools', { names: ['one', 'two'] })
    expect(seen).toEqual(['notifications/tools/list_changed'])
    expect(client.connection.tools).toBeUndefined()
    expect((await client.listTools()).map((t) => t.name)).toEqual(['one', 'two'])
  })

  it('reconnect: comes back after a crash, in-flight requests fail, later ones wait', async () => {
    const m = marker()
    const statuses = []
    const client = track(new MCPClient('fx', fixture([m]), { reconnect: { maxAttempts: 3, initialDelayMs: 50, maxDelayMs: 200 } }))
    client.onStatus = (s) => statuses.push(s)
    let closed = 0
    client.onClose = () => closed++
    await client.connect()
    const firstPid = client.transport.pid
    await client.listTools()
    const inflight = client.request('delay', { ms: 5000 })
    const crash = settle(client.request('crash', { code: 1 }))
    expect((await settle(inflight)).error.message).toBe('Transport closed')
    expect((await crash).error.message).toBe('Transport closed')
    // Made while reconnecting: waits for the new connection.
    const later = await client.request('echo', { after: 'reconnect' })
    expect(later).toEqual({ after: 'reconnect' })
    expect(client.transport.pid).not.toBe(firstPid)
    expect(client.connection.transport).toBe(client.transport)
    expect(client.connection.tools).toBeUndefined()
    expect(statuses).toEqual(['connecting', 'connected', 'connecting', 'connected'])
    expect(closed).toBe(0)
    expect(alive(firstPid)).toBe(false)
  })

  it('reconnect gives up after maxAttempts: waiting requests fail, onClose once, nothing left', async () => {
    const m = marker()
    const config = fixture([m], { timeout: 2000 })
    const statuses = []
    const client = track(new MCPClient('fx', config, { reconnect: { maxAttempts: 2, initialDelayMs: 20, maxDelayMs: 40 } }))
    client.onStatus = (s, e) => statuses.push(e ? `${s}: ${e.message}` : s)
    let closed = 0
    client.onClose = () => closed++
    await client.connect()
    config.args = [...config.args, '--init-error'] // every later attempt fails its handshake
    await settle(client.request('crash'))
    const waiting = await settle(client.request('echo'))
    expect(waiting.error.message).toBe('MCP error -32603: initialize refused')
    await waitFor(() => closed === 1)
    expect(statuses).toEqual(['connecting', 'connected', 'connecting', 'disconnected: MCP error -32603: initialize refused'])
    expect(processesWith(m)).toEqual([])
  })

  it('requests waiting for a reconnect are bounded by their own timeout', async () => {
    const client = track(new MCPClient('fx', fixture(), { reconnect: { maxAttempts: 1, initialDelayMs: 3000 } }))
    await client.connect()
    await settle(client.request('crash'))
    const { error } = await settle(client.request('echo', {}, { timeout: 100 }))
    expect(error.message).toBe('Request timeout after 100ms')
    expect(client.state).toBe('reconnecting')
  })

  it('close() during connect: the attempt is closed, connect rejects, nothing left', async () => {
    const m = marker()
    const client = new MCPClient('fx', fixture(['--init-delay-ms=300', m]))
    const connecting = settle(client.connect())
    await waitFor(() => processesWith(m).length === 1)
    await client.close()
    expect((await connecting).error.message).toBe('Transport closed')
    await waitFor(() => processesWith(m).length === 0)
    expect(processesWith(m)).toEqual([])
  })

  it('HTTP session expiry (404 and 400): re-initializes and retries once', async () => {
    for (const how of ['expire-session', 'expire-session-400']) {
      const client = track(await MCPClient.connect('h', { type: 'http', url: `${base}/mcp` }))
      const first = client.transport.sessionId
      await client.request(how)
      expect(await client.request('echo', { again: how })).toEqual({ again: how })
      expect(client.transport.sessionId).not.toBe(first)
      expect(client.transport.sessionId).toMatch(/^sess-/)
      // The function API on the client's connection gets the same treatment.
      await client.request(how)
      expect((await callTool(client.connection, 'echo', { message: 'x' })).content[0].text).toBe('x')
    }
  })
})

describe("a client's plain functions (NativeClient.hot)", () => {
  // JS makes its requests and feeds stdout through functions that hold the client's state (an
  // Arc) and free it when the engine collects them: a client nobody holds must still go away.
  it('dropping every reference to a connected MCPClient kills its server', async () => {
    const { execFile } = await import('node:child_process')
    const gc = process.versions.bun ? 'Bun.gc(true)' : 'globalThis.gc()'
    // The server's state is read in the child, before it exits: at exit the exit hook kills every
    // server anyway, so only what the collection did counts.
    const script = `const { MCPClient } = require(${JSON.stringify(COMPAT)});
      // Made in a function of its own, so that no stack slot keeps it (Bun's GC scans stacks).
      async function make() {
        const c = new MCPClient('fx', ${JSON.stringify(fixture())})
        await c.connect()
        await c.callTool('echo', { message: 'hi' })
        return c.transport.pid
      }
      make().then(async (pid) => {
        const keepAlive = setInterval(() => {}, 1000)
        // Windows has no /proc: there the process is gone once it cannot be opened.
        const win = process.platform === 'win32'
        const exists = (p) => { if (!win) return require('node:fs').existsSync('/proc/' + p); try { process.kill(p, 0); return true } catch { return false } }
        for (let i = 0; i < 100 && exists(pid); i++) { ${gc}; await new Promise((r) => setTimeout(r, 20)) }
        let state = 'gone'; try { state = win ? (exists(pid) ? 'R' : 'gone') : require('node:fs').readFileSync('/proc/' + pid + '/stat', 'utf8').split(') ')[1][0] } catch {}
        console.log(JSON.stringify({ pid, state })); clearInterval(keepAlive)
      })`
    const flags = process.versions.bun ? [] : ['--expose-gc']
    const r = await new Promise((resolve) =>
      execFile(process.execPath, [...flags, '-e', script], { timeout: 20000, cwd: ROOT }, (error, stdout, stderr) =>
        resolve({ error, stdout, stderr }),
      ),
    )
    expect(r.error).toBeNull()
    const out = JSON.parse(r.stdout)
    expect(out.pid).toBeGreaterThan(0)
    expect(['gone', 'Z']).toContain(out.state)
  }, 30000)

  // A worker's servers go with its engine (the functions' state with it), and the host's stay:
  // the exit hook ran in workers too, and killed every server of the process.
  it.skipIf(WORKER_END_CRASHES_BUN)(
    "a worker thread that exits or is terminated takes its own servers, not the host's",
    async () => {
      const host = track(await MCPClient.connect('host', fixture()))
      const hostPid = host.transport.pid
      const { Worker } = await import('node:worker_threads')
      const code = (end) => `
      const { MCPClient } = require(${JSON.stringify(COMPAT)})
      const { parentPort } = require('node:worker_threads')
      ;(async () => {
        const c = new MCPClient('w', ${JSON.stringify(fixture())})
        await c.connect()
        globalThis.kept = [c, await c.callTool('echo', { message: 'x'.repeat(100 << 10) })]
        parentPort.postMessage(c.transport.pid)
        ${end}
      })()`
      for (const end of ['process.exit(0)', 'setInterval(() => {}, 1000)']) {
        const worker = new Worker(code(end), { eval: true })
        const exited = new Promise((resolve) => worker.once('exit', resolve))
        const pid = await new Promise((resolve, reject) => {
          worker.once('message', resolve)
          worker.once('error', reject)
        })
        if (end !== 'process.exit(0)') await worker.terminate()
        await exited
        expect(await waitFor(() => !alive(pid), 5000)).toBe(true)
        expect(alive(hostPid)).toBe(true)
        expect(host.state).toBe('connected')
        expect(await host.request('echo', { after: end })).toEqual({ after: end })
      }
    },
    30000,
  )

  it('refuse arguments of the wrong kind with an Error, and keep working', async () => {
    const client = track(new MCPClient('fx', fixture()))
    await client.connect()
    const hot = client._face._native.hot()
    expect(() => hot.feed(1, 'not bytes')).toThrow(/Uint8Array/)
    expect(() => hot.feed(1, new Uint16Array(4))).toThrow(/Uint8Array/)
    expect(() => hot.feed('one', new Uint8Array(4))).toThrow(Error)
    expect(() => hot.sendRequests(42)).toThrow(Error)
    // a generation that is not the client's: no events
    expect(hot.feed(999, new Uint8Array(0))).toBe('[]')
    // an empty batch sends nothing, on a live connection
    expect(hot.sendRequests('')).toBe(true)
    expect(await client.request('echo', { still: 1 })).toEqual({ still: 1 })
  })
})

describe('initialize is never followed by notifications/cancelled (SPEC 3.1)', () => {
  it('stdio: a timed-out initialize sends nothing, another method sends the notification', async () => {
    const t = await createTransport(fixture(['--init-hang']))
    cleanup.push(() => t.close())
    await expect(t.request('initialize', {}, { timeout: 30 })).rejects.toThrow(/^Request timeout after 30ms$/)
    const ac = new AbortController()
    const aborted = t.request('initialize', {}, { signal: ac.signal })
    setTimeout(() => ac.abort(new Error('stop')), 30)
    await expect(aborted).rejects.toThrow(/^stop$/)
    await expect(t.request('no-reply', {}, { timeout: 30 })).rejects.toThrow(/^Request timeout after 30ms$/)
    const { received } = await t.request('received')
    expect(received.map((n) => n.method)).toEqual(['notifications/cancelled'])
  })

  it('HTTP: the same', async () => {
    const t = await createTransport({ type: 'http', url: `${base}/mcp` })
    cleanup.push(() => t.close())
    await expect(t.request('initialize', { delayMs: 500 }, { timeout: 30 })).rejects.toThrow(/^Request timeout after 30ms$/)
    const ac = new AbortController()
    const aborted = t.request('initialize', { delayMs: 500 }, { signal: ac.signal })
    setTimeout(() => ac.abort(new Error('stop')), 30)
    await expect(aborted).rejects.toThrow(/^stop$/)
    await expect(t.request('slow-headers', { ms: 500 }, { timeout: 30 })).rejects.toThrow(/^Request timeout after 30ms$/)
    // The notification for the timed-out slow-headers request is the last one sent: once it is
    // in, any for the initialize requests (sent before it) would be too.
    const cancelledNow = async () => {
      const { received } = await t.request('received')
      return received.filter((n) => n.method === 'notifications/cancelled' && n.session === null).map((n) => n.params.reason)
    }
    await waitFor(async () => (await cancelledNow()).length > 0, 3000)
    expect(await cancelledNow()).toEqual(['Request timeout after 30ms'])
  })
})

describe('MCPClient over HTTP: the GET stream', () => {
  const setListener = (mode) =>
    fetch(`${base}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'listener-mode', params: { mode } }),
    })
  const stats = async () => (await fetch(`${base}/stats`)).json()

  it('is opened after the handshake; notifications and requests pushed on it arrive', async () => {
    await setListener('stream')
    try {
      const client = track(await MCPClient.connect('h', { type: 'http', url: `${base}/mcp` }))
      const session = client.transport.sessionId
      await waitFor(async () => (await stats()).gets.some((g) => g.session === session))
      const notes = []
      client.onNotification = (method, params) => notes.push([method, params])
      const { streams } = await client.request('push', { hello: 1 })
      expect(streams).toBeGreaterThanOrEqual(1)
      await waitFor(() => notes.some(([m]) => m === 'fixture/pushed'))
      expect(notes.find(([m]) => m === 'fixture/pushed')[1]).toEqual({ hello: 1 })
    } finally {
      await setListener('405')
    }
  })

  it('does not keep a script alive that forgets to close', async () => {
    await setListener('stream')
    try {
      const script = `import { MCPClient } from 'mcp-native/compat-12.7'
        const c = await MCPClient.connect('h', { type: 'http', url: ${JSON.stringify(`${base}/mcp`)} })
        console.log(JSON.stringify(await c.request('echo', { ok: 1 })))`
      const started = Date.now()
      const out = await new Promise((resolve, reject) => {
        const child = spawn(SCRIPT_NODE, ['--input-type=module', '-e', script], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
        let text = ''
        child.stdout.on('data', (d) => (text += d))
        const timer = setTimeout(() => {
          child.kill('SIGKILL')
          reject(new Error('the script did not exit by itself'))
        }, 10000)
        child.on('exit', (code) => {
          clearTimeout(timer)
          resolve({ code, text })
        })
      })
      expect(out).toEqual({ code: 0, text: '{"ok":1}\n' })
      expect(Date.now() - started).toBeLessThan(10000)
    } finally {
      await setListener('405')
    }
  })

  it('on the legacy protocol there is only the one stream', async () => {
    const before = (await stats()).legacyOpened
    const client = track(await MCPClient.connect('legacy', { type: 'sse', url: `${base}/sse` }))
    expect(client.protocolVersion).toBe('2024-11-05')
    expect(await client.request('echo', { x: 1 })).toEqual({ x: 1 })
    await client.transport.startSSEListener()
    expect((await stats()).legacyOpened).toBe(before + 1)
  })
})
