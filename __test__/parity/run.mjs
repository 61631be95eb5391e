#!/usr/bin/env node
// The parity suite as a table (SPEC 11.7):
//
//   node __test__/parity/run.mjs [--fast] [--json <file>] [--keep] [--bun <runtime>] [scenario…]
//
// Runs each scenario in the reference tree and in the package tree (one at a time), prints
// `scenario | result`, and exits 1 when a scenario differs, 2 when the cache is missing (the
// message names the setup command). --bun takes a key of scripts/runtimes.mjs (default
// bun-oldest, the agent's floor); --keep leaves the trees in the temporary folder.
import { writeFileSync } from 'node:fs'

import { describeOutcome, prepare, runScenario, selectScenarios } from './runner.mjs'
import { bunPath } from './setup.mjs'
import { ParityCacheError } from './trees.mjs'

const args = process.argv.slice(2)
/** @type {{ fast: boolean, keep: boolean, json?: string, bun?: string, names: string[] }} */
const opts = { fast: false, keep: false, names: [] }
for (let i = 0; i < args.length; i++) {
  const a = args[i]
  if (a === '--fast') opts.fast = true
  else if (a === '--keep') opts.keep = true
  else if (a === '--json') opts.json = args[++i]
  else if (a === '--bun') opts.bun = args[++i]
  else if (a.startsWith('--')) {
    console.error(`parity: unknown option ${a}`)
    process.exit(2)
  } else opts.names.push(a)
}

let env
try {
  env = prepare({ bun: opts.bun ? bunPath(opts.bun) : undefined, keep: opts.keep })
} catch (e) {
  console.error(`parity: ${e instanceof Error ? e.message : e}`)
  process.exit(e instanceof ParityCacheError ? 2 : 1)
}
const started = Date.now()
const specs = selectScenarios({ fast: opts.fast, names: opts.names })
console.log(`parity: ${specs.length} scenario(s), Bun ${env.bun}; trees in ${env.root}`)
console.log(
  `package tree: ${env.trees.package.replaced.length} module(s) shimmed; as shipped: ${env.trees.package.kept.join(', ') || 'none'}\n`,
)
console.log('| scenario | result |')
console.log('|---|---|')
const outcomes = []
try {
  for (const spec of specs) {
    const o = await runScenario(env, spec)
    outcomes.push(o)
    console.log(`| ${spec.name} | ${describeOutcome(o).replaceAll('|', '\\|')} |`)
  }
} finally {
  env.dispose()
}
const count = (s) => outcomes.filter((o) => o.status === s).length
console.log(
  `\n${count('identical')} identical, ${count('fix')} [fix], ${count('differs')} differ; ${((Date.now() - started) / 1000).toFixed(1)} s`,
)
if (opts.json) writeFileSync(opts.json, `${JSON.stringify(outcomes, null, 2)}\n`)
process.exitCode = count('differs') > 0 ? 1 : 0
