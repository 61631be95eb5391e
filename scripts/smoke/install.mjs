// What both smoke checks do first: the packed root and one platform package (`npm run pack:all`,
// in target/pack/) installed by npm into a fresh folder, as a user installs them (no scripts run,
// no Rust needed).
import { execFileSync } from 'node:child_process'
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

import { isMusl } from '../runtimes.mjs'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')

/**
 * A new folder holding `mcp-native` and `mcp-native-<platform>`, installed from their tarballs.
 * @param {string} platform an npm/ folder name
 * @returns {string} the folder
 */
export function installPacked(platform) {
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version
  const leaf = JSON.parse(readFileSync(join(ROOT, 'npm', platform, 'package.json'), 'utf8'))
  const pack = join(ROOT, 'target', 'pack')
  const dir = mkdtempSync(join(tmpdir(), 'mcp-native-consumer-'))
  writeFileSync(join(dir, 'package.json'), '{"name":"consumer","version":"1.0.0","private":true}\n')
  const [os, cpu, libc] = [leaf.os?.[0], leaf.cpu?.[0], leaf.libc?.[0]]
  const args = ['install', '--no-audit', '--no-fund', '--ignore-scripts', `--os=${os}`, `--cpu=${cpu}`]
  if (libc) args.push(`--libc=${libc}`)
  // Another machine's package (run here under an emulator, or a musl runtime on this glibc
  // machine): npm would refuse it (EBADPLATFORM).
  if (os !== process.platform || cpu !== process.arch || (libc && (libc === 'musl') !== isMusl())) args.push('--force')
  args.push(join(pack, `mcp-native-${version}.tgz`), join(pack, `${leaf.name}-${leaf.version}.tgz`))
  execFileSync('npm', args, { cwd: dir, stdio: ['ignore', 'ignore', 'inherit'] })
  return dir
}
