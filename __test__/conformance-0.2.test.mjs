// The official MCP conformance suite 0.2.0-alpha.12 (client mode), its `--quick` set: one run per
// area and era, through conformance/run-0.2.mjs (which starts the suite on a pinned Node 22 from
// scripts/runtimes.mjs and runs conformance/client-0.2.mjs). The whole matrix is
// `npm run conformance`. The 0.1.13 runs stay in conformance.test.mjs.
import { describe, expect, it } from 'vitest'

import { runScenario } from '../conformance/run-0.2.mjs'

/** Runs one scenario and asserts it passed; on failure the message has the checks and the output. */
async function passes(scenario, revision) {
  // The client gives up at 20 s, the suite kills it at 25 s, the runner kills the suite at 55 s.
  const result = await runScenario(scenario, revision, { timeoutMs: 25000 })
  const why = `${result.reasons.join('; ')}\n${result.output}\n${result.client.stderr ?? ''}`
  expect(
    result.failing.map((c) => `${c.id}: ${c.status} ${c.message ?? ''}`),
    why,
  ).toEqual([])
  expect(result.reasons, why).toEqual([])
  expect(result.status, why).toBe('PASS')
}

describe('official conformance suite 0.2.0-alpha.12 (client, quick set)', () => {
  it('core: tools_call @ 2025-11-25', () => passes('tools_call', '2025-11-25'), 60000)

  it('core: tools_call @ 2026-07-28', () => passes('tools_call', '2026-07-28'), 60000)

  it('core: sep-2322-client-request-state @ 2026-07-28', () => passes('sep-2322-client-request-state', '2026-07-28'), 60000)

  // The OAuth client (SPEC 10): MCPClient's `oauth` option with the headless authorizer (PRM from
  // WWW-Authenticate, AS metadata, DCR, PKCE, token request, bearer retry).
  it('auth: auth/metadata-default @ 2025-11-25', () => passes('auth/metadata-default', '2025-11-25'), 60000)

  // The 2026-07-28 era: stateless requests carry the token; RFC 9207 `iss` checked.
  it('auth: auth/iss-supported @ 2026-07-28', () => passes('auth/iss-supported', '2026-07-28'), 60000)
})
