#!/usr/bin/env node
// `npm run pack:all` (issue 30): the packages as they would be published, into target/pack/.
//
// - One tarball per platform package under npm/<platform>/ whose `.node` is there (`npm run
//   build:targets` puts each target's binary in its folder; `--local` copies the host build from
//   native/ into its own platform's folder first).
// - The root `mcp-native`: its `files`, and a package.json with `optionalDependencies` on every
//   platform package (what `napi pre-publish` adds), written to a copy: the repository's own
//   package.json keeps no such dependency, so `npm ci` works on every platform (the platform
//   packages are not on the registry). The root ships no `.node`; its loader (native/index.js)
//   finds the platform package.
//
// Prints one line per tarball: its path, its size, and what it holds.
import { execFileSync } from 'node:child_process'
import { copyFileSync, cpSync, existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const OUT = join(ROOT, 'target', 'pack')
const NPM = process.platform === 'win32' ? 'npm.cmd' : 'npm'

/** The platform packages: their folder, name, version and the one file they ship. */
export function platformPackages() {
  return readdirSync(join(ROOT, 'npm'))
    .filter((dir) => existsSync(join(ROOT, 'npm', dir, 'package.json')))
    .map((dir) => {
      const pkg = JSON.parse(readFileSync(join(ROOT, 'npm', dir, 'package.json'), 'utf8'))
      return { dir: join(ROOT, 'npm', dir), platform: dir, name: pkg.name, version: pkg.version, binary: pkg.main }
    })
}

/** `npm pack` of `dir` into OUT: the tarball's path and its file list. */
function pack(dir) {
  const out = execFileSync(NPM, ['pack', '--json', '--pack-destination', OUT], {
    cwd: dir,
    encoding: 'utf8',
    shell: process.platform === 'win32',
  })
  const [info] = JSON.parse(out)
  return { path: join(OUT, info.filename), files: info.files.map((/** @type {{path: string}} */ f) => f.path) }
}

/** The root as published: a staging copy of its `files` and a package.json with the platform packages. */
function packRoot() {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const stage = join(OUT, 'root')
  rmSync(stage, { recursive: true, force: true })
  mkdirSync(stage, { recursive: true })
  for (const entry of [...pkg.files, 'README.md']) {
    const from = join(ROOT, entry)
    if (!existsSync(from)) throw new Error(`pack: ${entry} (package.json "files") is missing: run npm run build first`)
    const to = join(stage, entry)
    mkdirSync(dirname(to), { recursive: true })
    if (statSync(from).isDirectory()) cpSync(from, to, { recursive: true })
    else copyFileSync(from, to)
  }
  pkg.optionalDependencies = Object.fromEntries(platformPackages().map((p) => [p.name, p.version]))
  // Installed from the registry, the package builds nothing: its binary is a platform package.
  delete pkg.scripts
  delete pkg.devDependencies
  writeFileSync(join(stage, 'package.json'), `${JSON.stringify(pkg, null, 2)}\n`)
  return pack(stage)
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  mkdirSync(OUT, { recursive: true })
  const hostBinary = readdirSync(join(ROOT, 'native')).find((f) => f.endsWith('.node'))
  if (process.argv.includes('--local')) {
    if (!hostBinary) throw new Error('pack --local: no .node in native/: run npm run build first')
    const platform = hostBinary.replace(/^mcp-native\./, '').replace(/\.node$/, '')
    copyFileSync(join(ROOT, 'native', hostBinary), join(ROOT, 'npm', platform, hostBinary))
  }
  const made = []
  for (const p of platformPackages()) {
    if (!existsSync(join(p.dir, p.binary))) {
      process.stderr.write(`pack: ${p.name}: no ${p.binary} (not built here), skipped\n`)
      continue
    }
    made.push(pack(p.dir))
  }
  made.push(packRoot())
  for (const t of made) process.stdout.write(`${t.path} ${statSync(t.path).size} bytes: ${t.files.join(', ')}\n`)
}
