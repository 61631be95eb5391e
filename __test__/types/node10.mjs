// `moduleResolution: node10` consumers (TypeScript's old `node`) read no "exports" map: they
// resolve `mcp-native/<sub-path>` types through "typesVersions" alone. This type-checks one import
// of every sub-path entry (and the root) from a package installed as a consumer has it
// (node_modules/mcp-native, a link to this checkout), with strict TypeScript. Run by
// `npm run test:types`; exits with tsc's status.
import { spawnSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..')
/** @param {string} dir */
const dts = (dir) =>
  readdirSync(dir)
    .filter((f) => f.endsWith('.d.ts'))
    .map((f) => f.slice(0, -'.d.ts'.length))
// The package's sub-paths and the 12.7 profile's (`compat-12.7` and `compat-12.7/<sub-path>`).
const top = dts(join(ROOT, 'lib', 'entries'))
const compat = dts(join(ROOT, 'lib', 'entries', 'compat-12.7'))
if (top.length < 13 || compat.length < 12)
  throw new Error(`expected the 12 sub-path entries twice, found ${top.join(', ')}; ${compat.join(', ')}`)
const entries = [...top, ...compat.map((e) => `compat-12.7/${e}`)]

const dir = mkdtempSync(join(tmpdir(), 'mcp-native-node10-'))
try {
  mkdirSync(join(dir, 'node_modules'))
  symlinkSync(ROOT, join(dir, 'node_modules', 'mcp-native'), 'dir')
  // Each entry as a namespace, one value or type read from each, so that an unresolved module
  // (implicitly `any` is an error under strict) or an empty one fails.
  const lines = [
    "import type { MCPServerConfig } from 'mcp-native/compat-12.7'",
    ...entries.map((e, i) => `import type * as E${i} from 'mcp-native/${e}'`),
    ...entries.map((e, i) => `export type Keys${i} = keyof typeof E${i} // ${e}`),
    "export const config: MCPServerConfig = { type: 'stdio', command: 'node' }",
    "import type { MCPToolCacheStorage } from 'mcp-native/compat-12.7/tool-cache'",
    'export type Storage = MCPToolCacheStorage',
    "import type { StdioTransport } from 'mcp-native/compat-12.7/transports'",
    "export type Pid = StdioTransport['pid']",
  ]
  writeFileSync(join(dir, 'consumer.ts'), `${lines.join('\n')}\n`)
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        strict: true,
        noEmit: true,
        target: 'es2022',
        module: 'commonjs',
        moduleResolution: 'node10',
        lib: ['es2022', 'dom'],
        types: ['node'],
        typeRoots: [join(ROOT, 'node_modules', '@types')],
        skipLibCheck: false,
      },
      files: ['consumer.ts'],
    }),
  )
  const tsc = join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc')
  const r = spawnSync(process.execPath, [tsc, '-p', dir], { encoding: 'utf8' })
  process.stdout.write(r.stdout)
  process.stderr.write(r.stderr)
  if (r.status === 0) console.log(`moduleResolution node10: the root and ${entries.length} sub-path entries resolve`)
  process.exitCode = r.status ?? 1
} finally {
  rmSync(dir, { recursive: true, force: true })
}
