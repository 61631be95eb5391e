// The smoke test the agent's own test runners must be able to run (issue 9): connect, list,
// call and disconnect through the manager, with the package loaded the way the runner loads it.
// Shared by the jest file (CommonJS) and the vitest file (threads, forks and vmThreads pools).
const { join } = require('node:path')

const ROOT = join(__dirname, '..', '..')

/** Runs the manager round trip with `pkg` (the loaded package); returns what the test checks. */
async function smoke(pkg) {
  const manager = new pkg.MCPManager(ROOT)
  try {
    const config = {
      command: process.versions.bun ? 'node' : process.execPath,
      args: [join(ROOT, '__test__', 'fixture', 'server.mjs')],
      killGraceMs: 200,
    }
    const result = await manager.connectServers({ smoke: config }, {})
    const tools = manager.getTools()
    const echo = tools.find((t) => t.name === 'mcp_smoke_echo')
    const out = await echo.execute('call-1', { message: 'hello from the runner' }, undefined, {})
    return { connected: result.connectedServers, toolCount: tools.length, text: out.content[0].text, isTool: echo instanceof pkg.MCPTool }
  } finally {
    await manager.disconnectAll()
  }
}

module.exports = { smoke }
