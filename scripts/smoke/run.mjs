#!/usr/bin/env node
// Smoke-tests one platform package (issue 30) the way a user gets it: the root tarball and the
// platform tarball (`npm run pack:all`) installed into an empty folder by npm, no Rust anywhere,
// then scripts/smoke/client.mjs run by the target's own runtime against an HTTPS MCP server on
// 127.0.0.1 (its certificate from the tests' CA, trusted through NODE_EXTRA_CA_CERTS) and the
// stdio fixture server.
//
//   node scripts/smoke/run.mjs --platform=linux-arm64-gnu -- <runtime command…>
//
// The runtime command may be a plain binary, or an emulator and a binary. Exits non-zero, saying
// why, unless the stdio call, the HTTPS call and the SQLite cache all worked.
import { spawn } from 'node:child_process'
import { closeSync, openSync, readFileSync, rmSync } from 'node:fs'
import { createServer } from 'node:https'
import { join } from 'node:path'

import { installPacked, ROOT } from './install.mjs'

const TLS = join(ROOT, '__test__', 'fixture', 'tls')
const args = process.argv.slice(2)
const dash = args.indexOf('--')
const platform = args.find((a) => a.startsWith('--platform='))?.slice(11)
const runtime = dash >= 0 ? args.slice(dash + 1) : []
if (!platform || runtime.length === 0) {
  process.stderr.write('usage: node scripts/smoke/run.mjs --platform=<npm/ folder> -- <runtime command…>\n')
  process.exit(2)
}

/** A tiny MCP server over HTTPS: initialize, tools/list (echo), tools/call echo. */
function httpsServer() {
  const server = createServer(
    { key: readFileSync(join(TLS, 'server-key.pem')), cert: readFileSync(join(TLS, 'server.pem')) },
    (req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        const msg = JSON.parse(body || '{}')
        if (msg.id === undefined) return res.writeHead(202).end()
        const results = {
          initialize: () => ({
            protocolVersion: msg.params?.protocolVersion,
            capabilities: { tools: {} },
            serverInfo: { name: 'smoke', version: '1' },
          }),
          'tools/list': () => ({ tools: [{ name: 'echo', inputSchema: { type: 'object' } }] }),
          'tools/call': () => ({ content: [{ type: 'text', text: String(msg.params?.arguments?.message ?? '') }] }),
        }
        const result = results[msg.method]?.()
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(
          JSON.stringify(
            result ? { jsonrpc: '2.0', id: msg.id, result } : { jsonrpc: '2.0', id: msg.id, error: { code: -32601, message: 'no' } },
          ),
        )
      })
    },
  )
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)))
}

const consumer = installPacked(platform)
let server
try {
  server = await httpsServer()
  const url = `https://127.0.0.1:${server.address().port}/mcp`
  // Not spawnSync: the HTTPS server above runs on this process's event loop.
  // Output goes to files, not pipes: Node for Windows under wine cannot open a Linux pipe as its
  // stdout (EBADF).
  const outFile = join(consumer, 'smoke.out')
  const errFile = join(consumer, 'smoke.err')
  const child = await new Promise((resolve) => {
    const args = [...runtime.slice(1), join(ROOT, 'scripts', 'smoke', 'client.mjs'), url, join(ROOT, '__test__', 'fixture', 'server.mjs')]
    const [outFd, errFd] = [openSync(outFile, 'w'), openSync(errFile, 'w')]
    const p = spawn(runtime[0], args, {
      cwd: consumer,
      env: { ...process.env, NODE_EXTRA_CA_CERTS: join(TLS, 'ca.pem') },
      stdio: ['ignore', outFd, errFd],
    })
    closeSync(outFd)
    closeSync(errFd)
    const out = { stdout: '', stderr: '', status: /** @type {number | null} */ (null), error: /** @type {unknown} */ (null) }
    const timer = setTimeout(() => p.kill('SIGKILL'), 300_000)
    p.on('error', (e) => (out.error = e))
    p.on('close', (code) => {
      clearTimeout(timer)
      out.status = code
      out.stdout = readFileSync(outFile, 'utf8')
      out.stderr = readFileSync(errFile, 'utf8')
      resolve(out)
    })
  })
  const line = child.stdout?.trim().split('\n').pop() ?? ''
  let seen
  try {
    seen = JSON.parse(line)
  } catch {
    throw new Error(`smoke ${platform}: no result (exit ${child.status}, ${child.error ?? ''})\n${child.stdout}\n${child.stderr}`)
  }
  const ok = seen.stdio === 'over stdio' && seen.https === 'over https' && JSON.stringify(seen.cache) === '["cached"]'
  process.stdout.write(`smoke ${platform} (${seen.runtime}): ${ok ? 'ok' : 'FAILED'} ${JSON.stringify(seen)}\n`)
  if (!ok) process.exitCode = 1
} finally {
  server?.close()
  rmSync(consumer, { recursive: true, force: true })
}
