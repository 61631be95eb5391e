// The smoke test of one built target (issue 30), run by the target's own runtime (natively, under
// qemu-user or under wine) from a folder where `mcp-native` is installed the way a user installs
// it: `<runtime> client.mjs <https url> <stdio server script>`. It makes a stdio call (the runtime
// itself runs the fixture server), an HTTPS call (the CA in NODE_EXTRA_CA_CERTS) and a round trip
// through the SQLite tool cache, and prints one JSON line: what it saw. It checks nothing itself:
// the driver (scripts/smoke/run.mjs) does.
import { mkdtempSync, rmSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

const require = createRequire(join(process.cwd(), 'package.json'))
const { connectToServer, callTool, disconnectServer } = require('mcp-native')
const { MCPToolCache } = require('mcp-native/tool-cache')

const [httpsUrl, stdioServer] = process.argv.slice(2)
const seen = {
  runtime: `${typeof Bun === 'undefined' ? `node ${process.version}` : `bun ${Bun.version}`} ${process.platform}-${process.arch}`,
}
const text = (result) => result?.content?.map((c) => c.text).join('')

try {
  const stdio = await connectToServer('stdio', { command: process.execPath, args: [stdioServer], timeout: 30000 })
  seen.stdio = text(await callTool(stdio, 'echo', { message: 'over stdio' }))
  await disconnectServer(stdio)

  const https = await connectToServer('https', { type: 'http', url: httpsUrl, timeout: 30000 })
  seen.https = text(await callTool(https, 'echo', { message: 'over https' }))
  await disconnectServer(https)

  const dir = mkdtempSync(join(tmpdir(), 'mcp-native-smoke-'))
  try {
    const cache = MCPToolCache.open(join(dir, 'cache.db'))
    const config = { command: 'x' }
    await cache.set('s', config, [{ name: 'cached', inputSchema: { type: 'object' } }])
    seen.cache = (await cache.get('s', config))?.map((t) => t.name)
    cache.close()
  } finally {
    // Bun for Windows under wine fails this (EFAULT in its recursive rm): noted, not the smoke's
    // business.
    try {
      rmSync(dir, { recursive: true, force: true })
    } catch (e) {
      seen.cleanup = String(e)
    }
  }
} catch (e) {
  seen.error = String(e?.stack ?? e)
}
process.stdout.write(`${JSON.stringify(seen)}\n`)
process.exit(0)
