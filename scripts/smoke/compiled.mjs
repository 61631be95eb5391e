#!/usr/bin/env node
// The agent's single-file binaries (issue 30 item 5): `bun build --compile` of a script that
// imports `mcp-native`, installed from the packed root and the host's platform package, then the
// binary copied to an empty folder and the installation deleted: the binary must still make a
// stdio call.
//
//   node scripts/smoke/compiled.mjs [--bun=PATH]   (after `npm run pack:all -- --local`)
import { execFileSync, spawnSync } from 'node:child_process'
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { runtimePath } from '../runtimes.mjs'
import { installPacked, ROOT } from './install.mjs'

const bun = process.argv.find((a) => a.startsWith('--bun='))?.slice(6) ?? runtimePath('bun-newest')

// This machine's platform package (a glibc Linux here).
const build = installPacked(`${process.platform}-${process.arch}-gnu`)
const empty = mkdtempSync(join(tmpdir(), 'mcp-native-empty-'))
try {
  writeFileSync(
    join(build, 'app.mjs'),
    [
      "import { callTool, connectToServer, disconnectServer } from 'mcp-native'",
      "const c = await connectToServer('s', { command: process.argv[2], args: [process.argv[3]] })",
      "const r = await callTool(c, 'echo', { message: 'from a compiled binary' })",
      'await disconnectServer(c)',
      'console.log(r.content[0].text)',
    ].join('\n'),
  )
  execFileSync(bun, ['build', '--compile', 'app.mjs', '--outfile', 'app'], { cwd: build, stdio: ['ignore', 'ignore', 'inherit'] })
  copyFileSync(join(build, 'app'), join(empty, 'app'))
  execFileSync('chmod', ['+x', join(empty, 'app')])
  rmSync(build, { recursive: true, force: true })
  const run = spawnSync(join(empty, 'app'), [process.execPath, join(ROOT, '__test__', 'fixture', 'server.mjs')], {
    cwd: empty,
    encoding: 'utf8',
    timeout: 60_000,
  })
  const said = run.stdout.trim()
  const ok = said === 'from a compiled binary'
  process.stdout.write(
    `compiled binary (${bun}) in an empty folder, the package deleted: ${ok ? 'ok' : 'FAILED'} ${JSON.stringify(said)} ${run.stderr.trim()}\n`,
  )
  if (!ok) process.exitCode = 1
} finally {
  rmSync(build, { recursive: true, force: true })
  rmSync(empty, { recursive: true, force: true })
}
