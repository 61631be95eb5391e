// Proxies and extra CA certificates for every HTTP request of the package (src/net.rs): a local
// forward proxy (absolute-URI requests and CONNECT) and a plain and an HTTPS MCP-ish server
// (certificate from a test-only CA, __test__/fixture/tls), all on 127.0.0.1. The client runs in
// a child process with the variables under test, so that nothing of this process's environment
// (which may hold NODE_EXTRA_CA_CERTS) decides the outcome. Runs under vitest and `bun test`.
import { execFile } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer, request as httpRequest } from 'node:http'
import { createServer as createHttpsServer } from 'node:https'
import { connect } from 'node:net'
import { join } from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'

import { ROOT } from './helpers.mjs'

const TLS = join(ROOT, '__test__', 'fixture', 'tls')
const CLIENT = join(ROOT, '__test__', 'fixture', 'net-client.mjs')
const PROXY_VARS = ['HTTP_PROXY', 'HTTPS_PROXY', 'ALL_PROXY', 'NO_PROXY', 'REQUEST_METHOD', 'NODE_EXTRA_CA_CERTS']

function listen(server) {
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server.address().port)))
}

function closeAll(server, sockets) {
  for (const s of sockets) s.destroy()
  return new Promise((resolve) => server.close(() => resolve()))
}

function track(server) {
  const sockets = new Set()
  server.on('connection', (s) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  })
  server.on('secureConnection', (s) => {
    sockets.add(s)
    s.once('close', () => sockets.delete(s))
  })
  return sockets
}

/** An MCP-ish endpoint: answers `initialize` on POST /mcp and a metadata document; records hits. */
function mcpHandler(hits) {
  return (req, res) => {
    let body = ''
    req.on('data', (c) => {
      body += c
    })
    req.on('end', () => {
      hits.push(`${req.method} ${req.url}`)
      if (req.method === 'GET' && req.url === '/.well-known/oauth-authorization-server') {
        res.writeHead(200, { 'Content-Type': 'application/json' })
        res.end(JSON.stringify({ authorization_endpoint: 'https://as/authorize', token_endpoint: 'https://as/token' }))
        return
      }
      if (req.method !== 'POST' || req.url !== '/mcp') {
        res.writeHead(404)
        res.end()
        return
      }
      const { id } = JSON.parse(body)
      res.writeHead(200, { 'Content-Type': 'application/json' })
      res.end(
        JSON.stringify({
          jsonrpc: '2.0',
          id,
          result: { protocolVersion: '2025-03-26', capabilities: {}, serverInfo: { name: 'stub', version: '1' } },
        }),
      )
    })
  }
}

/** A forward proxy: absolute-URI requests are relayed, CONNECT is tunnelled; both are recorded. */
function startProxy(seen) {
  const server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`)
    const target = new URL(req.url)
    const upstream = httpRequest(
      {
        host: target.hostname,
        port: target.port,
        path: `${target.pathname}${target.search}`,
        method: req.method,
        headers: req.headers,
        agent: false,
      },
      (up) => {
        res.writeHead(up.statusCode, up.headers)
        up.pipe(res)
      },
    )
    upstream.on('error', () => {
      res.writeHead(502)
      res.end()
    })
    req.pipe(upstream)
  })
  server.on('connect', (req, client, head) => {
    seen.push(`CONNECT ${req.url}`)
    const [host, port] = req.url.split(':')
    const upstream = connect(Number(port), host, () => {
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n')
      upstream.write(head)
      upstream.pipe(client)
      client.pipe(upstream)
    })
    upstream.on('error', () => client.destroy())
    client.on('error', () => upstream.destroy())
  })
  return server
}

let plain
let secure
let proxy
const hits = { plain: [], secure: [] }
const seen = []

beforeAll(async () => {
  const plainServer = createServer(mcpHandler(hits.plain))
  const secureServer = createHttpsServer(
    { key: readFileSync(join(TLS, 'server-key.pem')), cert: readFileSync(join(TLS, 'server.pem')) },
    mcpHandler(hits.secure),
  )
  const proxyServer = startProxy(seen)
  plain = { server: plainServer, sockets: track(plainServer), port: await listen(plainServer) }
  secure = { server: secureServer, sockets: track(secureServer), port: await listen(secureServer) }
  proxy = { server: proxyServer, sockets: track(proxyServer), port: await listen(proxyServer) }
})

afterAll(async () => {
  await Promise.all([plain, secure, proxy].filter(Boolean).map((s) => closeAll(s.server, s.sockets)))
})

/** Runs the client fixture with this environment (proxy and CA variables removed first, then `env`). */
function run(mode, url, env) {
  const base = { ...process.env }
  for (const name of PROXY_VARS) {
    delete base[name]
    delete base[name.toLowerCase()]
  }
  return new Promise((resolve, reject) => {
    execFile(process.execPath, [CLIENT, mode, url], { env: { ...base, ...env }, cwd: ROOT, timeout: 20000 }, (error, stdout, stderr) => {
      const line = String(stdout).trim().split('\n').pop()
      try {
        resolve(JSON.parse(line))
      } catch {
        reject(new Error(`client failed: ${error?.message}\n${stdout}\n${stderr}`))
      }
    })
  })
}

function reset() {
  seen.length = 0
  hits.plain.length = 0
  hits.secure.length = 0
}

const proxyUrl = () => `http://127.0.0.1:${proxy.port}`
const plainUrl = () => `http://127.0.0.1:${plain.port}/mcp`
const secureUrl = () => `https://127.0.0.1:${secure.port}/mcp`

describe('HTTP requests honour proxy variables', () => {
  it('HTTP_PROXY: an http: server is reached through the proxy (absolute-URI request)', async () => {
    reset()
    const out = await run('initialize', plainUrl(), { HTTP_PROXY: proxyUrl() })
    expect(out.ok).toBe(true)
    expect(out.result.serverInfo.name).toBe('stub')
    expect(seen).toEqual([`POST ${plainUrl()}`])
    expect(hits.plain).toEqual(['POST /mcp'])
  }, 30000)

  it('http_proxy (lower case) and ALL_PROXY work too', async () => {
    reset()
    expect((await run('initialize', plainUrl(), { http_proxy: proxyUrl() })).ok).toBe(true)
    expect((await run('initialize', plainUrl(), { ALL_PROXY: proxyUrl() })).ok).toBe(true)
    expect(seen).toEqual([`POST ${plainUrl()}`, `POST ${plainUrl()}`])
  }, 30000)

  it('NO_PROXY bypasses the proxy', async () => {
    reset()
    const out = await run('initialize', plainUrl(), { HTTP_PROXY: proxyUrl(), NO_PROXY: 'localhost,127.0.0.1' })
    expect(out.ok).toBe(true)
    expect(seen).toEqual([])
    expect(hits.plain).toEqual(['POST /mcp'])
  }, 30000)

  it('HTTPS_PROXY: an https: server is reached through a CONNECT tunnel', async () => {
    reset()
    const out = await run('initialize', secureUrl(), { HTTPS_PROXY: proxyUrl(), NODE_EXTRA_CA_CERTS: join(TLS, 'ca.pem') })
    expect(out.ok).toBe(true)
    expect(seen).toEqual([`CONNECT 127.0.0.1:${secure.port}`])
    expect(hits.secure).toEqual(['POST /mcp'])
  }, 30000)

  it('OAuth discovery goes through the proxy as well', async () => {
    reset()
    const out = await run('discover', plainUrl(), { HTTP_PROXY: proxyUrl() })
    expect(out).toEqual({ ok: true, result: { authorizationUrl: 'https://as/authorize', tokenUrl: 'https://as/token' } })
    expect(seen).toEqual([`GET http://127.0.0.1:${plain.port}/.well-known/oauth-authorization-server`])
  }, 30000)
})

describe('HTTPS trusts NODE_EXTRA_CA_CERTS', () => {
  it('a server whose CA is not trusted fails the TLS handshake', async () => {
    reset()
    const out = await run('initialize', secureUrl(), {})
    expect(out.ok).toBe(false)
    expect(out.message).toMatch(/certificate|UnknownIssuer|invalid peer/i)
    expect(hits.secure).toEqual([])
  }, 30000)

  it('with NODE_EXTRA_CA_CERTS naming its CA the same server is trusted', async () => {
    reset()
    const out = await run('initialize', secureUrl(), { NODE_EXTRA_CA_CERTS: join(TLS, 'ca.pem') })
    expect(out.ok).toBe(true)
    expect(hits.secure).toEqual(['POST /mcp'])
  }, 30000)

  it('an unreadable NODE_EXTRA_CA_CERTS is ignored (the bundled roots still apply)', async () => {
    reset()
    const bad = await run('initialize', secureUrl(), { NODE_EXTRA_CA_CERTS: join(TLS, 'missing.pem') })
    expect(bad.ok).toBe(false)
    const plainStill = await run('initialize', plainUrl(), { NODE_EXTRA_CA_CERTS: join(TLS, 'README.md') })
    expect(plainStill.ok).toBe(true)
  }, 30000)
})
