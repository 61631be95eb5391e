// Runs one parity scenario in one tree (a Bun process of its own, started by runner.mjs):
//   PARITY_TREE=<tree> PARITY_SIDE=reference|package PARITY_TMP=<dir> PARITY_MARKER=<text> \
//     bun __test__/parity/host.ts <scenario file>
// and prints its record, normalised, on one line after RECORD_PREFIX. The scenario has
// PARITY_BUDGET_MS (default 20 s) in all; its clean-up is bounded too, then the process exits.
import { Ctx, describeError, type Json, normalizeRecord, toJson, within } from './harness.ts'

export const RECORD_PREFIX = '\u0001PARITY-RECORD '

const file = process.argv[2]
if (!file) {
  console.error('usage: bun __test__/parity/host.ts <scenario file>')
  process.exit(2)
}
const ctx = new Ctx()
const budget = Number(process.env.PARITY_BUDGET_MS ?? 20_000)
let record: Json = null
let error: Json | undefined
try {
  const scenario = await import(file)
  record = toJson(await within('scenario', budget, Promise.resolve(scenario.default(ctx))))
} catch (e) {
  error = describeError(e)
  if (process.env.PARITY_DEBUG) console.error(e)
}
await ctx.cleanup()
const out = normalizeRecord(toJson({ record, events: ctx.events, ...(error === undefined ? {} : { error }) }), ctx)
process.stdout.write(`${RECORD_PREFIX}${JSON.stringify(out)}\n`, () => process.exit(0))
