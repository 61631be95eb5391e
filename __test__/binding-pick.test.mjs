// Which binary the generated loader (napi-rs's, native/index.js) asks for on each platform the agent
// ships for (issue 30): the loader runs with `process.platform`, `process.arch` and /usr/bin/ldd
// faked, and every `require` it makes is recorded and refused, so the order of what it tries is
// what a machine of that kind would load first: the `.node` beside the loader (a local build),
// then the platform's package.
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { NATIVE_DIR } from './helpers.mjs'

const LOADER = readFileSync(join(NATIVE_DIR, 'index.js'), 'utf8')
const BINARY = 'mcp-native'

/**
 * What the loader requires, in order, on a machine of this kind (nothing it asks for exists).
 * @param {{ platform: string, arch: string, libc?: 'glibc' | 'musl', msvc?: boolean }} machine
 */
function asked({ platform, arch, libc, msvc = true }) {
  const requests = []
  const missing = (/** @type {string} */ what) => Object.assign(new Error(`Cannot find module '${what}'`), { code: 'MODULE_NOT_FOUND' })
  const fakeRequire = (/** @type {string} */ what) => {
    if (what === 'fs') {
      return {
        readFileSync: (/** @type {string} */ path) => {
          if (path === '/usr/bin/ldd' && platform === 'linux')
            return libc === 'musl' ? '#!/bin/sh\n# musl libc (x86_64)\n' : '#!/bin/bash\n# GNU C Library\n'
          throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' })
        },
      }
    }
    if (what === 'child_process') return { execSync: () => (libc === 'musl' ? 'musl libc' : 'ldd (GNU libc) 2.36') }
    requests.push(what)
    throw missing(what)
  }
  fakeRequire.resolve = (/** @type {string} */ what) => {
    throw missing(what)
  }
  // The official Node for Windows is an MSVC build (process.config tells the loader which).
  const config = { variables: platform === 'win32' && !msvc ? { shlib_suffix: 'dll.a' } : {} }
  const fakeProcess = { platform, arch, env: {}, config, report: undefined, versions: process.versions, version: process.version }
  const module = { exports: {} }
  const run = new Function('require', 'module', 'exports', 'process', '__dirname', '__filename', LOADER)
  expect(() => run(fakeRequire, module, module.exports, fakeProcess, NATIVE_DIR, join(NATIVE_DIR, 'index.js'))).toThrow()
  return requests
}

// Every platform the agent ships for (PLATFORMS.md), with the package name it must pick.
const MACHINES = [
  { platform: 'linux', arch: 'x64', libc: 'glibc', abi: 'linux-x64-gnu' },
  { platform: 'linux', arch: 'x64', libc: 'musl', abi: 'linux-x64-musl' },
  { platform: 'linux', arch: 'arm64', libc: 'glibc', abi: 'linux-arm64-gnu' },
  { platform: 'linux', arch: 'arm64', libc: 'musl', abi: 'linux-arm64-musl' },
  { platform: 'darwin', arch: 'x64', abi: 'darwin-x64' },
  { platform: 'darwin', arch: 'arm64', abi: 'darwin-arm64' },
  { platform: 'win32', arch: 'x64', abi: 'win32-x64-msvc' },
  { platform: 'win32', arch: 'arm64', abi: 'win32-arm64-msvc' },
]

describe('the loader picks the binary of the machine it runs on', () => {
  for (const machine of MACHINES) {
    const { abi, ...kind } = machine
    it(`${Object.values(kind).join(' ')} → ${abi}`, () => {
      // On macOS a universal binary comes first if there is one (we ship none); nothing else does.
      const requests = asked(kind).filter((r) => !r.includes('darwin-universal'))
      expect(requests.slice(0, 2)).toEqual([`./${BINARY}.${abi}.node`, `${BINARY}-${abi}`])
    })
  }

  it('a platform nobody ships for asks for nothing it could load by mistake', () => {
    const requests = asked({ platform: 'aix', arch: 'ppc64' })
    expect(requests.filter((r) => r.endsWith('.node') || r.startsWith(`${BINARY}-`))).toEqual([])
  })
})
