// jest (CommonJS): the package required by its name, as the agent's jest tests require it.
const { smoke } = require('./smoke.cjs')

test('connect, list, call, disconnect through the manager', async () => {
  const out = await smoke(require('mcp-native/compat-12.7'))
  expect(out).toEqual({ connected: ['smoke'], toolCount: 6, text: 'hello from the runner', isTool: true })
}, 20000)
