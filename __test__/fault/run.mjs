#!/usr/bin/env node
// The fault suite's CLI runner (`npm run test:fault`): FAULT_CASES cases (default 200, the CI
// count) of run seed FAULT_SEED (default random, printed), or exactly the case seeds of
// FAULT_CASE_SEED=a,b (FAULT_REPEAT=n runs them n times). FAULT_PATHS=client,manager restricts
// the client paths; FAULT_GRACE_MS changes the slack on every deadline. Exits 1 on any failure.
// Works under Node and Bun (`bun __test__/fault/run.mjs`).
import { planRun, runAll } from './harness.mjs'

const plan = planRun({ defaultCases: 200 })
const { failed, orphans } = await runAll(plan)
process.exitCode = failed.length > 0 || orphans.length > 0 ? 1 : 0
// The package must let the process exit by itself; a safety net in case it does not.
setTimeout(() => {
  console.error('fault suite: the process did not exit by itself 10 s after the last case (something keeps the event loop alive)')
  process.exit(2)
}, 10000).unref()
