// The parity scenarios (SPEC 11.7): one file each in scenarios/, run by runner.mjs in both trees.
//   fast:     part of the quick subset (npm test); the full set runs in npm run test:ci
//   budgetMs: the scenario's whole budget (default 20 s); the runner kills a run 15 s after it
//   covers:   the SPEC 11.4 / 11.5 bullets it checks
//   fixes:    differences that are [fix] under SPEC 11.7's rule: the record path, the reason
//             (the [fix]/[beyond] of sections 3–10 or the scenario that shows the defect), the
//             README line; any other difference is "differs"
//   env:      extra environment of both runs

/**
 * @typedef {{ name: string, fast?: boolean, budgetMs?: number, covers: string[],
 *   fixes?: Array<{ path: string, reason: string }>, env?: Record<string, string> }} ScenarioSpec
 */

// The reasons a difference may be [fix] (SPEC 11.7): each follows a [fix]/[beyond] of sections
// 3–10 and has its line in the README's "Differences from the TypeScript implementation".
const CODE = 'a string `code` where 18.3.4 has none (SPEC 1 [beyond], kept at the root by 11.3)'
const RPC_CODE = '`rpcCode` on JSON-RPC errors (SPEC 1 [beyond])'
const PROGRESS = 'tools/call asks for progress, `_meta.progressToken` (SPEC 8.11 [beyond] long tools)'
const LOST_CHALLENGE =
  "18.3.4 loses a tool result's WWW-Authenticate challenge for tools rebuilt on tools/list_changed (a lost message: 11.5 17.0.9 requires it to reach the auth handler)"
const LEGACY_HEADER = 'MCP-Protocol-Version on the POSTs after initialize, legacy fallback included (SPEC 3.3 [beyond])'

/** @type {ScenarioSpec[]} */
export const SCENARIOS = [
  { name: 'client-handshake', fast: true, covers: ['11.3 roots/list and ping answered by default', '11.3 protocol version 2025-11-25'] },
  { name: 'client-list-tools', fast: true, covers: ['client.ts listTools: pages, cache, no capability'] },
  { name: 'client-call-tool', fast: true, covers: ['client.ts callTool'] },
  { name: 'client-resources', fast: true, covers: ['11.4 resources, templates -32601 → [] (16.0.6), subscriptions'] },
  { name: 'client-prompts', covers: ['11.4 listPrompts, getPrompt omitting empty arguments'] },
  {
    name: 'client-timeouts',
    covers: ['11.3 timeout: 0 = no deadline', 'MCPConnectionTimeoutError'],
    fixes: [
      { path: 'record.timedOut.error.code', reason: CODE },
      { path: 'record.slowCall.error.code', reason: CODE },
    ],
  },
  {
    name: 'client-epipe',
    covers: ['11.5 EPIPE between initialize and initialized fails the connect (15.8.1)'],
    fixes: [{ path: 'record.error.code', reason: CODE }],
  },
  {
    name: 'client-errors',
    covers: ['errors of requests: JSON-RPC error, -32601, server exit'],
    fixes: [
      { path: 'record.crash.error.code', reason: CODE },
      { path: 'record.afterCrash.error.code', reason: CODE },
      { path: 'record.rpc.error.rpcCode', reason: RPC_CODE },
      { path: 'record.unknown.error.rpcCode', reason: RPC_CODE },
    ],
  },
  {
    name: 'client-http',
    fast: true,
    covers: ['transports/http.ts: frames, headers, session, SSE answers, DELETE'],
    fixes: [{ path: 'record.rpcError.error.rpcCode', reason: RPC_CODE }],
  },
  {
    name: 'client-sse-legacy',
    covers: ['11.3 type "sse" is the legacy HTTP+SSE transport'],
    fixes: [
      { path: 'record.missing.error.code', reason: CODE },
      { path: 'record.missing.error.rpcCode', reason: RPC_CODE },
      { path: 'record.frames[*].headers.mcp-protocol-version', reason: LEGACY_HEADER },
    ],
  },
  { name: 'stdio-session', covers: ['11.6 Linux: the stdio server in its own session (setsid)', 'cwd and args'] },
  { name: 'manager-connect-events', fast: true, covers: ['11.4 status events through onStatus and listeners', 'waitForStartup'] },
  {
    name: 'manager-tool-names',
    fast: true,
    covers: ['11.3 tool names (18.2.1 digits kept, 64-char cap)', 'list_changed refresh', 'setOnToolsChanged'],
  },
  {
    name: 'manager-execute',
    fast: true,
    covers: [
      '11.5 image blocks kept (17.3.8), structuredContent (18.1.3, 18.3.3)',
      '11.5 intent stripped (16.2.0), empty optional placeholders omitted (16.1.17)',
      '11.5 approval "write" (15.10.2)',
    ],
    fixes: [{ path: 'record.framesFx.requests[*].params._meta', reason: PROGRESS }],
  },
  { name: 'tool-failures', covers: ['11.3 failures as formatMCPToolFailure text'] },
  {
    name: 'manager-slow-uncached',
    covers: ['11.5 startup not blocked by an uncached slow server (15.10.7)', '11.5 tools after the startup window are added (17.1.0)'],
  },
  { name: 'manager-wait-startup', covers: ["11.5 print mode's waitForStartup reports slow servers (18.3.0)", 'waitForPendingConnections'] },
  {
    name: 'manager-startup-timeout-reconnect',
    budgetMs: 25_000,
    covers: ['11.5 a reconnect after a transient startup handshake timeout (18.1.5)'],
  },
  { name: 'manager-reconnect', covers: ['11.4 reconnectServer shared while in flight, tools kept, reconnect on exit'] },
  { name: 'manager-crash-storm', budgetMs: 30_000, covers: ['11.5 the reconnect storm breaker (15.7.5), manual reset'] },
  { name: 'manager-instructions', covers: ['11.4 getServerInstructions honouring instructions: false'] },
  {
    name: 'manager-catalogs',
    covers: [
      '11.4 catalogs after tools, ensureServerResources, executePrompt',
      '11.5 a template failure keeps the resources (16.0.6, 17.1.6)',
    ],
  },
  { name: 'manager-notifications', covers: ['11.4 notifications: subscribe/unsubscribe, resources/updated filter, listeners, buffering'] },
  { name: 'manager-import-alone', fast: true, covers: ['manager.ts imported alone (loader.ts, read-cli.ts): complete tool objects'] },
  { name: 'manager-roots', covers: ["11.3 roots/list answered with the manager's cwd"] },
  { name: 'manager-surface', covers: ['11.4 instance/setInstance, getServerConfig, prepareConfig, sortMCPToolsByName, reconcile*'] },
  { name: 'loader-discover', covers: ['loader.ts discoverAndLoadMCPTools over a project .mcp.json'] },
  { name: 'tool-cache-deferred', covers: ['11.4 servers with cached tools stand in (DeferredMCPTool)'] },
  {
    name: 'json-rpc-callmcp',
    fast: true,
    covers: [
      '11.4 callMCP, readMcpJsonRpcResponse, redactUrlForLog',
      '11.5 callMCP picks the matching response after notifications (18.2.0)',
    ],
  },
  {
    name: 'pure-functions',
    fast: true,
    covers: ['11.4 tool-bridge naming, aliases, dedupe (17.1.6 stable winner)', 'errors, timeout, request-id'],
  },
  {
    name: 'env-timeouts',
    covers: ['11.2 OMP_MCP_TIMEOUT_MS=0 and OMP_MCP_STARTUP_TIMEOUT_MS read at the root'],
    env: { OMP_MCP_TIMEOUT_MS: '0', OMP_MCP_STARTUP_TIMEOUT_MS: '1234' },
  },
  { name: 'read-mcp-waits', covers: ['11.5 read mcp:// waits for servers still connecting (18.2.1)'] },
  {
    name: 'auth-challenge-retry',
    covers: ['11.5 a tool-result WWW-Authenticate challenge → one retry (17.0.9)'],
    fixes: [
      { path: 'record.framesNew.requests[*].params._meta', reason: PROGRESS },
      // This scenario shows it: the reference's tools rebuilt on tools/list_changed reconnect
      // without passing the challenge on, so the auth handler never hears it and the retry gets
      // the same challenge (README "Against the agent as it ships today").
      { path: 'record.handled[*]', reason: LOST_CHALLENGE },
      { path: 'record.handledByRefreshed', reason: LOST_CHALLENGE },
    ],
  },
  { name: 'config-writer', covers: ['11.4 config writer', '11.5 concurrent config writes lose nothing (17.1.0, one process)'] },
  {
    name: 'http-idle-reconnect',
    budgetMs: 25_000,
    covers: ['11.5 an idle remote server that drops comes back on its schedule (18.2.1)', 'reconnect policy argument'],
  },
  {
    name: 'auth-storage',
    covers: [
      '11.4 setAuthStorage: refresh, Authorization as a generated header, OAUTH_ACCESS_TOKEN for stdio',
      '11.4 HttpTransport.onAuthError → new headers → one retry',
    ],
  },
  {
    name: 'auth-sse-resume',
    covers: ['11.4 onAuthError on a refused SSE resume: one refresh, then the resume; never a replay after an accepted SSE stream'],
  },
  {
    name: 'origin-locked-redirects',
    covers: [
      '11.4 headerPolicy "origin-locked": manual redirects, at most 5, no 301/302/303 for POST, configured headers dropped across origins',
      'without a policy: redirects followed as fetch follows them',
    ],
    fixes: [{ path: 'record.tooMany.connect.error.code', reason: CODE }],
  },
  {
    name: 'manager-reconcile',
    covers: ['11.4 reconcileProjectConfig (serialized), reconcileBrowserFilter after a discovery, the config loader argument'],
  },
  {
    name: 'config-lock-processes',
    budgetMs: 45_000,
    covers: ["11.5 concurrent config writes lose nothing (17.1.0), across processes, under the agent's withFileLock"],
  },
  {
    name: 'manager-ladder-timing',
    budgetMs: 30_000,
    covers: ['11.4 the default reconnect ladder 500/1000/2000/4000 ms, then failed; stdio stops at the ladder'],
  },
]
