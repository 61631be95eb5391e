#!/usr/bin/env node
// The differential type check of SPEC.md 11.7: the agent's own files compile against the package.
//
//   node scripts/agent-typecheck.mjs [--repo <dir>] [--shims <dir>] [--json <file>] [--tmp <dir>]
//                                    [--shipped-only] [--no-cache] [--parallel | --sequential] [--refresh]
//
// The agent's src/ (@oh-my-pi/pi-coding-agent 18.3.4, set up by scripts/agent-setup.mjs, which this
// runs first) is type-checked twice with the same compiler options and the same stand-ins for its
// dependencies, in <tmp>/mcp-native-agent-tsc/{shipped,shimmed}:
//   1. shipped: as in the tarball;
//   2. shimmed: each module of 11.2 for which <shims>/<path> exists (default
//      <repo>/examples/agent-shims) replaced by that shim; the glue modules and the two index.ts
//      stay as shipped. `mcp-native` resolves to <repo> (default: this repository) in both trees.
// Diagnostics are compared as multisets of (file, code, message), line and column left out (a
// shim moves lines only in its own file). Errors in both runs are the stand-ins' noise; an error
// that only run 2 has is an error the package adds.
//
// Compiler options: the agent's tsconfig.json where the tarball has one (18.3.4 has none), else
// `strict` with `moduleResolution: bundler` (see COMPILER_OPTIONS), plus a declaration file that
// gives Bun's text/file imports of .md/.py/.sh/.css/.applescript files a type (bun-types declares
// .txt/.html/.toml/… itself; the agent's monorepo declares the rest outside the tarball) and a
// `declare module` stub for every dependency the registry has no version of.
//
// Run 1 depends only on the tarball and the stand-ins: its result is cached in <tmp> under a key of
// both (and the options); --no-cache runs it again. --shipped-only runs run 1 alone and prints its
// noise. The two compilations run at once (about 1.8 GB and one core each; 45 s instead of 85 s on
// 2 cores) when the machine has 2 cores and 6 GB free, else one after the other; --parallel and
// --sequential choose.
//
// Exit code: 0 when run 2 adds no error, 1 when it adds some, 2 when the setup fails.
import { spawn } from 'node:child_process'
import { createHash } from 'node:crypto'
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs'
import { availableParallelism, freemem, tmpdir } from 'node:os'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

import { AGENT_VERSION, ensureAgent, SetupError, SHIMMED_MODULES } from './agent-setup.mjs'

const SELF_REPO = join(dirname(fileURLToPath(import.meta.url)), '..')
/** Bumped when the way a tree is built or checked changes: invalidates the cached run 1. */
const SCHEMA = 1

/** Used when the tarball has no tsconfig.json (18.3.4 has none). The same for both runs. */
export const COMPILER_OPTIONS = {
  strict: true,
  moduleResolution: 'bundler',
  module: 'esnext',
  target: 'esnext',
  skipLibCheck: true,
  noEmit: true,
  types: ['bun'],
  // The source imports .ts and .d.ts files by their extension and JSON files (its package.json).
  allowImportingTsExtensions: true,
  resolveJsonModule: true,
}

/** Bun's loaders for imports `with { type: "text" | "file" }` that bun-types does not declare. */
const AMBIENT_EXTENSIONS = ['md', 'py', 'sh', 'css', 'applescript']

/**
 * @typedef {{ file: string, line: number, col: number, code: string, message: string }} Diagnostic
 * @typedef {{ name: string, ms: number, maxRssKb: number | null, stats: Record<string, string>,
 *   diagnostics: Diagnostic[], unparsed: string[], exitCode: number | null, cached?: boolean }} Run
 */

/** @param {string[]} argv */
function parseArgs(argv) {
  /** @type {{ repo: string, shims?: string, json?: string, tmp: string, shippedOnly: boolean, cache: boolean, parallel: boolean, refresh: boolean }} */
  const opts = {
    repo: SELF_REPO,
    tmp: join(tmpdir(), 'mcp-native-agent-tsc'),
    shippedOnly: false,
    cache: true,
    parallel: availableParallelism() >= 2 && freemem() >= 6 * 2 ** 30,
    refresh: false,
  }
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]
    const value = () => {
      const v = argv[++i]
      if (v === undefined) throw new SetupError(`${a} needs a value`)
      return resolve(v)
    }
    if (a === '--repo') opts.repo = value()
    else if (a === '--shims') opts.shims = value()
    else if (a === '--json') opts.json = value()
    else if (a === '--tmp') opts.tmp = value()
    else if (a === '--shipped-only') opts.shippedOnly = true
    else if (a === '--no-cache') opts.cache = false
    else if (a === '--parallel') opts.parallel = true
    else if (a === '--sequential') opts.parallel = false
    else if (a === '--refresh') opts.refresh = true
    else throw new SetupError(`unknown argument ${a}`)
  }
  return opts
}

/** @param {string} dir @returns {string[]} files under dir, relative, with '/' */
function walk(dir, prefix = '') {
  /** @type {string[]} */
  const out = []
  for (const entry of readdirSync(join(dir, prefix), { withFileTypes: true })) {
    const rel = prefix ? `${prefix}/${entry.name}` : entry.name
    if (entry.isDirectory()) out.push(...walk(dir, rel))
    else out.push(rel)
  }
  return out
}

/**
 * The agent's files outside src/mcp that import a module of src/mcp (relative specifiers, static,
 * dynamic and re-exports), with the modules they import.
 * @param {string} srcDir @returns {Map<string, Set<string>>} 'src/x.ts' → {'src/mcp/manager', …}
 */
function mcpImporters(srcDir) {
  const mcpDir = join(srcDir, 'mcp')
  const found = new Map()
  const re = /(?:\bfrom|\bimport)\s*\(?\s*["']([^"']+)["']/g
  for (const rel of walk(srcDir)) {
    if (!/\.tsx?$/.test(rel) || rel.startsWith('mcp/')) continue
    const text = readFileSync(join(srcDir, rel), 'utf8')
    for (const m of text.matchAll(re)) {
      const spec = m[1]
      if (!spec.startsWith('.')) continue
      const target = resolve(dirname(join(srcDir, rel)), spec)
      if (target !== mcpDir && !target.startsWith(mcpDir + sep)) continue
      const key = `src/${rel}`
      if (!found.has(key)) found.set(key, new Set())
      found.get(key).add(
        `src/${relative(srcDir, target)
          .split(sep)
          .join('/')
          .replace(/\.(js|ts)$/, '')}`,
      )
    }
  }
  return new Map([...found].sort(([a], [b]) => a.localeCompare(b)))
}

/** @param {string[]} missing dependencies the registry has no version of */
function ambientDeclarations(missing) {
  const lines = ['// Written by mcp-native scripts/agent-typecheck.mjs; the same in both trees.']
  for (const ext of AMBIENT_EXTENSIONS) lines.push(`declare module '*.${ext}' {`, '  const value: string', '  export default value', '}')
  for (const name of missing) lines.push(`declare module '${name}'`, `declare module '${name}/*'`)
  return `${lines.join('\n')}\n`
}

/**
 * Builds one tree: src/ and package.json of the tarball, node_modules linking each package of the
 * deps folder and `mcp-native` → repo, tsconfig.json and the ambient declarations.
 * @param {string} dir @param {{ packageDir: string, depsDir: string, repo: string, tsconfig: object, ambient: string }} p
 */
function buildTree(dir, { packageDir, depsDir, repo, tsconfig, ambient }) {
  rmSync(dir, { recursive: true, force: true })
  mkdirSync(dir, { recursive: true })
  cpSync(join(packageDir, 'src'), join(dir, 'src'), { recursive: true })
  cpSync(join(packageDir, 'package.json'), join(dir, 'package.json'))
  const nm = join(dir, 'node_modules')
  mkdirSync(nm)
  for (const entry of readdirSync(join(depsDir, 'node_modules'))) {
    if (entry.startsWith('.')) continue
    symlinkSync(join(depsDir, 'node_modules', entry), join(nm, entry))
  }
  symlinkSync(repo, join(nm, 'mcp-native'))
  writeFileSync(join(dir, 'tsconfig.json'), `${JSON.stringify(tsconfig, null, 2)}\n`)
  writeFileSync(join(dir, 'agent-typecheck.d.ts'), ambient)
}

/** @param {string} text */
function firstLine(text, max = 200) {
  const line = text.split('\n')[0]
  return line.length > max ? `${line.slice(0, max - 1)}…` : line
}

/**
 * Parses `tsc --pretty false --diagnostics` output.
 * @param {string} out @param {(s: string) => string} normalize
 * @returns {{ diagnostics: Diagnostic[], stats: Record<string, string>, unparsed: string[] }}
 */
export function parseTsc(out, normalize) {
  /** @type {Diagnostic[]} */
  const diagnostics = []
  /** @type {Record<string, string>} */
  const stats = {}
  /** @type {string[]} */
  const unparsed = []
  /** @type {Diagnostic | undefined} */
  let last
  for (const line of out.split(/\r?\n/)) {
    if (!line) continue
    const m = /^(.+?)\((\d+),(\d+)\): error (TS\d+): (.*)$/.exec(line)
    const g = m ? null : /^error (TS\d+): (.*)$/.exec(line)
    if (m) {
      last = { file: normalize(m[1]), line: Number(m[2]), col: Number(m[3]), code: m[4], message: normalize(m[5]) }
      diagnostics.push(last)
    } else if (g) {
      last = { file: '', line: 0, col: 0, code: g[1], message: normalize(g[2]) }
      diagnostics.push(last)
    } else if (/^\s/.test(line) && last) {
      last.message += `\n${normalize(line.trimEnd())}`
    } else {
      const s = /^([A-Z][\w /-]*?):\s+(\S.*)$/.exec(line)
      if (s) stats[s[1]] = s[2]
      else unparsed.push(line)
      last = undefined
    }
  }
  return { diagnostics, stats, unparsed }
}

/**
 * Runs tsc in a tree, with /usr/bin/time for the peak memory where the machine has it.
 * @param {string} name @param {string} dir @param {string} tsc @returns {Promise<Run>}
 */
function runTsc(name, dir, tsc) {
  const timeFile = join(dir, '.time')
  const hasTime = existsSync('/usr/bin/time')
  const node = [process.execPath, '--max-old-space-size=8192', tsc, '-p', 'tsconfig.json', '--pretty', 'false', '--diagnostics']
  const [cmd, ...args] = hasTime ? ['/usr/bin/time', '-f', '%M', '-o', timeFile, ...node] : node
  const started = Date.now()
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.setEncoding('utf8').on('data', (d) => (out += d))
    child.stderr.setEncoding('utf8').on('data', (d) => (err += d))
    child.on('error', reject)
    child.on('close', (exitCode) => {
      const ms = Date.now() - started
      const real = realpathSync(dir)
      /** @param {string} s */
      const normalize = (s) => s.split(`${real}/`).join('').split(`${dir}/`).join('')
      const parsed = parseTsc(out, normalize)
      if (err.trim()) parsed.unparsed.push(...err.trim().split('\n'))
      let maxRssKb = null
      if (hasTime && existsSync(timeFile)) {
        const n = Number(readFileSync(timeFile, 'utf8').trim().split('\n').at(-1))
        if (Number.isFinite(n)) maxRssKb = n
        rmSync(timeFile, { force: true })
      }
      // tsc exits 0 (clean) or 2 (errors, output written); anything else is a crash.
      if (exitCode !== 0 && exitCode !== 2) {
        reject(new SetupError(`tsc in ${dir} exited with ${exitCode}:\n${(err || out).trim().split('\n').slice(-20).join('\n')}`))
        return
      }
      resolvePromise({ name, ms, maxRssKb, exitCode, ...parsed })
    })
  })
}

/** @param {Diagnostic} d */
const keyOf = (d) => `${d.file}\u0000${d.code}\u0000${d.message}`

/** @param {Diagnostic[]} list @returns {Map<string, Diagnostic[]>} */
function group(list) {
  const map = new Map()
  for (const d of list) {
    const k = keyOf(d)
    if (!map.has(k)) map.set(k, [])
    map.get(k).push(d)
  }
  return map
}

/**
 * The multiset difference: what `b` has more of than `a` (with b's positions, those not at a
 * position `a` has first), and the common count.
 * @param {Diagnostic[]} a @param {Diagnostic[]} b
 */
export function diff(a, b) {
  const ga = group(a)
  const gb = group(b)
  /** @type {Diagnostic[]} */
  const added = []
  /** @type {Diagnostic[]} */
  const removed = []
  let common = 0
  for (const [k, listB] of gb) {
    const listA = ga.get(k) ?? []
    common += Math.min(listA.length, listB.length)
    const surplus = listB.length - listA.length
    if (surplus > 0) {
      const at = new Set(listA.map((d) => `${d.line}:${d.col}`))
      const ordered = [...listB].sort((x, y) => Number(at.has(`${x.line}:${x.col}`)) - Number(at.has(`${y.line}:${y.col}`)))
      added.push(...ordered.slice(0, surplus))
    }
  }
  for (const [k, listA] of ga) {
    const surplus = listA.length - (gb.get(k)?.length ?? 0)
    if (surplus > 0) removed.push(...listA.slice(listA.length - surplus))
  }
  /** @param {Diagnostic} x @param {Diagnostic} y */
  const byPos = (x, y) => x.file.localeCompare(y.file) || x.line - y.line || x.col - y.col
  return { added: added.sort(byPos), removed: removed.sort(byPos), common }
}

/** @param {Iterable<string>} keys @returns {[string, number][]} */
function countBy(keys) {
  const m = new Map()
  for (const k of keys) m.set(k, (m.get(k) ?? 0) + 1)
  return [...m].sort((x, y) => y[1] - x[1] || x[0].localeCompare(y[0]))
}

/** @param {Diagnostic} d */
const show = (d) => `${d.file}(${d.line},${d.col}): ${d.code}: ${d.message.split('\n').join('\n    ')}`
/** @param {Diagnostic} d */
const brief = (d) => `${d.file}(${d.line},${d.col}): ${d.code}: ${firstLine(d.message, 160)}`

/** @param {Run} r */
function describeRun(r) {
  const mem = r.maxRssKb ? `, peak RSS ${(r.maxRssKb / 1024).toFixed(0)} MB` : ''
  const heap = r.stats['Memory used'] ? `, tsc heap ${r.stats['Memory used']}` : ''
  return `${r.name}: ${r.diagnostics.length} errors in ${(r.ms / 1000).toFixed(1)} s${mem}${heap}${r.cached ? ' (cached result)' : ''}`
}

async function main() {
  const opts = parseArgs(process.argv.slice(2))
  const setup = await ensureAgent({ refresh: opts.refresh })
  const repo = realpathSync(opts.repo)
  const shims = opts.shims ?? join(repo, 'examples', 'agent-shims')
  for (const f of ['package.json', 'index.d.ts']) {
    if (!existsSync(join(repo, f))) throw new SetupError(`--repo ${repo} has no ${f}: it must be the mcp-native package root`)
  }
  if (JSON.parse(readFileSync(join(repo, 'package.json'), 'utf8')).name !== 'mcp-native')
    throw new SetupError(`${repo} is not the mcp-native package`)

  const missingDirect = setup.stamp.missing.filter(
    (n) => n in setup.stamp.inputs.dependencies || n in setup.stamp.inputs.optionalDependencies,
  )
  const ambient = ambientDeclarations(missingDirect)
  const agentTsconfig = join(setup.packageDir, 'tsconfig.json')
  const tsconfig = existsSync(agentTsconfig)
    ? {
        extends: agentTsconfig,
        compilerOptions: { skipLibCheck: true, noEmit: true, types: ['bun'] },
        include: ['src', 'agent-typecheck.d.ts'],
      }
    : { compilerOptions: COMPILER_OPTIONS, include: ['src', 'agent-typecheck.d.ts'] }
  const tscVersion = JSON.parse(readFileSync(join(setup.depsDir, 'node_modules', 'typescript', 'package.json'), 'utf8')).version
  console.log(
    `\ntypescript ${tscVersion}; options: ${existsSync(agentTsconfig) ? `the agent's ${agentTsconfig}` : JSON.stringify(COMPILER_OPTIONS)}`,
  )
  if (missingDirect.length > 0) console.log(`declare-module stubs for: ${missingDirect.join(', ')}`)

  const common = { packageDir: setup.packageDir, depsDir: setup.depsDir, repo, tsconfig, ambient }
  const shippedDir = join(opts.tmp, 'shipped')
  const shimmedDir = join(opts.tmp, 'shimmed')
  mkdirSync(opts.tmp, { recursive: true })

  // Run 1, cached under a key of everything it depends on.
  const cacheKey = createHash('sha256')
    .update(JSON.stringify({ SCHEMA, stamp: setup.stamp.key, tsconfig, ambient, tscVersion, agent: AGENT_VERSION }))
    .digest('hex')
    .slice(0, 16)
  const cacheFile = join(opts.tmp, `shipped-${cacheKey}.json`)
  /** @type {Run | undefined} */
  let run1 = opts.cache && existsSync(cacheFile) ? { ...JSON.parse(readFileSync(cacheFile, 'utf8')), cached: true } : undefined
  const tasks = []
  if (!run1) {
    buildTree(shippedDir, common)
    tasks.push(async () => {
      console.log(`run 1 (shipped): tsc in ${shippedDir}`)
      run1 = await runTsc('run 1 (shipped)', shippedDir, setup.tsc)
      writeFileSync(cacheFile, JSON.stringify(run1))
    })
  }

  /** @type {Run | undefined} */
  let run2
  /** @type {string[]} */
  const replaced = []
  /** @type {string[]} */
  const kept = []
  /** @type {string[]} */
  let ignored = []
  if (!opts.shippedOnly) {
    if (!existsSync(shims) || !statSync(shims).isDirectory()) throw new SetupError(`the shim folder ${shims} is missing (--shims <dir>)`)
    for (const mod of SHIMMED_MODULES) (existsSync(join(shims, mod)) ? replaced : kept).push(mod)
    ignored = walk(shims).filter((f) => !SHIMMED_MODULES.includes(f))
    console.log(`\nshims from ${shims}:`)
    console.log(`  replaced (${replaced.length}/${SHIMMED_MODULES.length}): ${replaced.join(', ') || 'none'}`)
    console.log(`  as shipped (${kept.length}): ${kept.join(', ') || 'none'}`)
    if (ignored.length > 0) console.log(`  other files in the folder, not copied: ${ignored.join(', ')}`)
    if (replaced.length === 0) throw new SetupError(`${shims} has no shim of any module of 11.2: the check would compare run 1 with itself`)
    buildTree(shimmedDir, common)
    for (const mod of replaced) cpSync(join(shims, mod), join(shimmedDir, 'src', 'mcp', mod))
    tasks.push(async () => {
      console.log(`run 2 (shimmed): tsc in ${shimmedDir}`)
      run2 = await runTsc('run 2 (shimmed)', shimmedDir, setup.tsc)
    })
  }
  if (tasks.length > 1) console.log(opts.parallel ? 'the two runs at once (--sequential to change)' : 'one run after the other')
  if (opts.parallel) await Promise.all(tasks.map((t) => t()))
  else for (const t of tasks) await t()
  if (!run1) throw new SetupError('run 1 produced nothing')
  const r1 = run1

  const importers = mcpImporters(join(setup.packageDir, 'src'))
  const inImporters = r1.diagnostics.filter((d) => importers.has(d.file))

  console.log(`\n${describeRun(r1)}`)
  if (run2) console.log(describeRun(run2))
  for (const r of [r1, run2]) {
    if (r && r.unparsed.length > 0) console.log(`  ${r.name}: ${r.unparsed.length} unparsed output line(s), e.g. ${r.unparsed[0]}`)
  }

  /** @type {Record<string, unknown>} */
  const report = {
    agent: `@oh-my-pi/pi-coding-agent@${AGENT_VERSION}`,
    typescript: tscVersion,
    tsconfig,
    dependencies: setup.stamp.installed,
    repo,
    shims: opts.shippedOnly ? null : { dir: shims, replaced, asShipped: kept, ignored },
    runs: [r1, run2].filter(Boolean).map((r) => ({
      name: r?.name,
      seconds: (r?.ms ?? 0) / 1000,
      errors: r?.diagnostics.length,
      maxRssKb: r?.maxRssKb,
      stats: r?.stats,
      cached: !!r?.cached,
    })),
    noise: {
      byCode: Object.fromEntries(countBy(r1.diagnostics.map((d) => d.code))),
      byFile: Object.fromEntries(countBy(r1.diagnostics.map((d) => d.file))),
    },
    mcpImporters: [...importers].map(([file, mods]) => ({
      file,
      imports: [...mods],
      run1Errors: r1.diagnostics.filter((d) => d.file === file),
    })),
  }

  if (opts.shippedOnly || !run2) {
    console.log('\nrun 1 errors by code (top 12):')
    for (const [code, n] of countBy(r1.diagnostics.map((d) => d.code)).slice(0, 12)) console.log(`  ${String(n).padStart(5)}  ${code}`)
    console.log('run 1 errors by file (top 12):')
    for (const [file, n] of countBy(r1.diagnostics.map((d) => d.file)).slice(0, 12)) console.log(`  ${String(n).padStart(5)}  ${file}`)
  }

  console.log(`\nfiles outside src/mcp that import src/mcp: ${importers.size}; run 1 errors inside them: ${inImporters.length}`)
  for (const [file, mods] of importers) {
    const n = inImporters.filter((d) => d.file === file).length
    console.log(`  ${String(n).padStart(3)}  ${file}  (${[...mods].map((m) => m.replace(/^src\/mcp\/?/, '') || 'index').join(', ')})`)
  }
  for (const d of inImporters) console.log(`    ${brief(d)}`)
  const inMcp = r1.diagnostics.filter((d) => d.file.startsWith('src/mcp/'))
  console.log(`run 1 errors inside src/mcp itself: ${inMcp.length}`)
  for (const [file, n] of countBy(inMcp.map((d) => d.file))) console.log(`  ${String(n).padStart(3)}  ${file}`)

  let exitCode = 0
  if (run2) {
    const { added, removed, common: same } = diff(r1.diagnostics, run2.diagnostics)
    const shimFiles = new Set(replaced.map((m) => `src/mcp/${m}`))
    /** @param {string} file */
    const role = (file) =>
      shimFiles.has(file)
        ? 'shim'
        : file.startsWith('src/mcp/')
          ? 'src/mcp, as shipped'
          : importers.has(file)
            ? 'imports src/mcp'
            : file === ''
              ? 'global'
              : 'other'
    console.log(`\ncommon (the stand-ins' noise): ${same}`)
    console.log(`removed (in run 1, not in run 2): ${removed.length}`)
    for (const [file, n] of countBy(removed.map((d) => d.file))) console.log(`  ${String(n).padStart(4)}  ${file}  [${role(file)}]`)
    for (const d of removed.slice(0, 30)) console.log(`    ${brief(d)}`)
    if (removed.length > 30) console.log(`    … ${removed.length - 30} more (--json for all)`)
    console.log(`ADDED (in run 2, not in run 1): ${added.length}`)
    if (added.length > 0) {
      console.log('added errors by file:')
      for (const [file, n] of countBy(added.map((d) => d.file)))
        console.log(`  ${String(n).padStart(4)}  ${file || '(global)'}  [${role(file)}]`)
      console.log('added errors by code:')
      for (const [code, n] of countBy(added.map((d) => d.code))) console.log(`  ${String(n).padStart(4)}  ${code}`)
      console.log('added errors, in full:')
      for (const d of added) console.log(`  ${show(d)}`)
    }
    report.common = same
    report.added = added
    report.addedByFile = Object.fromEntries(countBy(added.map((d) => d.file)))
    report.removed = removed
    exitCode = added.length > 0 ? 1 : 0
    console.log(
      exitCode === 0
        ? `\nOK: the shimmed agent (${replaced.length} of ${SHIMMED_MODULES.length} modules replaced) adds no type error`
        : `\nFAIL: the shimmed agent adds ${added.length} type error(s) in ${countBy(added.map((d) => d.file)).length} file(s)`,
    )
  }
  report.exitCode = exitCode
  if (opts.json) {
    mkdirSync(dirname(opts.json), { recursive: true })
    writeFileSync(opts.json, `${JSON.stringify(report, null, 2)}\n`)
    console.log(`report: ${opts.json}`)
  }
  return exitCode
}

try {
  process.exitCode = await main()
} catch (e) {
  if (e instanceof SetupError) {
    console.error(`\nagent-typecheck: SETUP FAILED: ${e.message}`)
    process.exitCode = 2
  } else {
    console.error(e)
    process.exitCode = 2
  }
}
