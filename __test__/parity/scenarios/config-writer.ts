// The config writer: add/update/get/list/remove, disabled and enabled lists, setMcpServerEnabled,
// validateServerName, $schema on write, the file as written; and concurrent updates of one file
// from one process losing nothing (17.1.0).
import { readFileSync } from 'node:fs'
import { type Ctx, settle } from '../harness.ts'

export default async function (ctx: Ctx) {
  const w = await ctx.mod('mcp/config-writer.ts')
  const user = `${ctx.tmp}/user/mcp.json`
  const project = `${ctx.project}/.omp/mcp.json`
  const file = (p: string) => {
    try {
      return JSON.parse(readFileSync(p, 'utf8'))
    } catch (e) {
      return { unreadable: String((e as Error).message).split(':')[0] }
    }
  }
  const steps: Record<string, unknown> = {}
  steps.readMissing = await settle(w.readMCPConfigFile(project))
  steps.add = await settle(w.addMCPServer(project, 'alpha', { command: 'node', args: ['a.js'] }))
  steps.addAgain = await settle(w.addMCPServer(project, 'alpha', { command: 'node' }))
  steps.addBadName = await settle(w.addMCPServer(project, 'bad name!', { command: 'node' }))
  steps.update = await settle(w.updateMCPServer(project, 'alpha', { type: 'http', url: 'http://127.0.0.1:9/mcp' }))
  steps.updateInvalid = await settle(w.updateMCPServer(project, 'alpha', { type: 'http' }))
  steps.get = await settle(w.getMCPServer(project, 'alpha'))
  steps.getMissing = await settle(w.getMCPServer(project, 'nope'))
  steps.list = await settle(w.listMCPServers(project))
  steps.names = ['ok-name', 'bad name', '', 'x'.repeat(120), 'dots.ok', 'under_score'].map((n) => w.validateServerName(n) ?? null)
  steps.disable = await settle(w.setServerDisabled(user, 'ghost', true))
  steps.disabled = await settle(w.readDisabledServers(user))
  steps.force = await settle(w.setServerForceEnabled(user, 'ghost', true))
  steps.enabledList = await settle(w.readEnabledServers(user))
  steps.toggleProject = await settle(w.setMcpServerEnabled({ userPath: user, projectPath: project, name: 'alpha', enabled: false }))
  steps.toggleGhost = await settle(w.setMcpServerEnabled({ userPath: user, projectPath: project, name: 'ghost', enabled: false }))
  steps.concurrent = await settle(
    ctx.within(
      'concurrent',
      15_000,
      Promise.all(Array.from({ length: 12 }, (_, i) => w.updateMCPServer(project, `srv${i}`, { command: 'node', args: [String(i)] }))),
    ),
  )
  // The order of concurrent writers is the lock's: what counts is that none is lost.
  steps.listAfter = await settle(w.listMCPServers(project).then((l: string[]) => [...l].sort()))
  steps.remove = await settle(w.removeMCPServer(project, 'srv3'))
  steps.removeMissing = await settle(w.removeMCPServer(project, 'srv3'))
  const projectFile = file(project)
  if (projectFile.mcpServers)
    projectFile.mcpServers = Object.fromEntries(Object.entries(projectFile.mcpServers).sort(([a], [b]) => a.localeCompare(b)))
  return { steps, projectFile, userFile: file(user) }
}
