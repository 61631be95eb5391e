// A consumer without @sinclair/typebox still type-checks (SPEC 8.11): the package's declaration
// files are copied into a temporary project that has no TypeBox, and a strict consumer that uses
// the tool objects is compiled there. Run by `npm run test:types`.
import { execFileSync } from 'node:child_process'
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const root = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
const dir = mkdtempSync(join(tmpdir(), 'mcp-native-no-typebox-'))
try {
  const pkg = join(dir, 'node_modules', 'mcp-native')
  mkdirSync(pkg, { recursive: true })
  for (const f of readdirSync(root)) if (f.endsWith('.d.ts') || f === 'package.json') copyFileSync(join(root, f), join(pkg, f))
  // The sub-path entries' declarations (the 12.7 profile's folder too), where the root's refer to them.
  for (const sub of [join('lib', 'entries'), join('lib', 'entries', 'compat-12.7')]) {
    mkdirSync(join(pkg, sub), { recursive: true })
    for (const f of readdirSync(join(root, sub))) {
      if (f.endsWith('.d.ts')) copyFileSync(join(root, sub, f), join(pkg, sub, f))
    }
  }
  mkdirSync(join(dir, 'node_modules', '@types'), { recursive: true })
  execFileSync('cp', ['-r', join(root, 'node_modules', '@types', 'node'), join(dir, 'node_modules', '@types', 'node')])
  execFileSync('cp', ['-r', join(root, 'node_modules', 'undici-types'), join(dir, 'node_modules', 'undici-types')])
  writeFileSync(
    join(dir, 'consumer.ts'),
    `import { MCPManager, type MCPToolDetails } from 'mcp-native/compat-12.7'
export async function use(cwd: string): Promise<string[]> {
  const manager = new MCPManager(cwd)
  const out: string[] = []
  for (const tool of manager.getTools()) {
    const r = await tool.execute('id', {}, undefined, {})
    const d: MCPToolDetails = r.details
    out.push(tool.name, tool.label, tool.description, tool.mcpServerName, d.serverName, JSON.stringify(tool.parameters))
  }
  return out
}
`,
  )
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { strict: true, noEmit: true, target: 'es2022', module: 'node16', moduleResolution: 'node16', types: ['node'] },
      files: ['consumer.ts'],
    }),
  )
  execFileSync(process.execPath, [join(root, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { stdio: 'inherit' })
  console.log('a consumer without @sinclair/typebox type-checks')
} finally {
  rmSync(dir, { recursive: true, force: true })
}
