// SPEC 7: config discovery (mcp-native/config) in temporary HOME and project directories — every
// acceptance case of 7.9 (with 7.10's changes where 7.10 makes them) and each 7.10 item.
// vitest (Node) and `bun test` (Bun).
// biome-ignore-all lint/suspicious/noTemplateCurlyInString: `${VAR}` in plain strings is the syntax under test
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { afterEach, beforeEach, describe, expect, it } from 'vitest'

import { MCPManager } from 'mcp-native/compat-12.7'
import {
  extractExaApiKey,
  filterExaMCPServers,
  isExaMCPServer,
  loadAllMCPConfigs,
  validateServerConfig,
} from 'mcp-native/compat-12.7/config'

const T = 15000

// Each test gets its own HOME and project directory; the variables it sets are restored after it.
const VARS = ['HOME', 'FOO', 'NOPE', 'E', 'T', 'P', 'X', 'B', 'PI_CODING_AGENT_DIR', 'PI_CONFIG_DIR']
let saved
let root
let home
let cwd
beforeEach(() => {
  saved = Object.fromEntries(VARS.map((v) => [v, process.env[v]]))
  for (const v of VARS) delete process.env[v]
  root = mkdtempSync(join(tmpdir(), 'mcp-native-config-'))
  home = join(root, 'home')
  cwd = join(root, 'project')
  mkdirSync(home)
  mkdirSync(cwd)
  process.env.HOME = home
})
afterEach(() => {
  for (const v of VARS) {
    if (saved[v] === undefined) delete process.env[v]
    else process.env[v] = saved[v]
  }
  rmSync(root, { recursive: true, force: true })
})

/** Writes `text` (an object is written as JSON) at `rel` under HOME (`~/…`) or the project; returns the path. */
function put(rel, text) {
  const path = rel.startsWith('~/') ? join(home, rel.slice(2)) : join(cwd, rel)
  mkdirSync(dirname(path), { recursive: true })
  writeFileSync(path, typeof text === 'string' ? text : JSON.stringify(text))
  return path
}
const servers = (mcpServers) => ({ mcpServers })
const load = (options) => loadAllMCPConfigs(cwd, options)

describe('7.9 acceptance', () => {
  it(
    '.omp/mcp.json gives a stdio config and its source',
    async () => {
      const path = put('.omp/mcp.json', servers({ a: { command: 'x' } }))
      const { configs, sources, exaApiKeys, warnings } = await load()
      expect(configs.a).toEqual({ type: 'stdio', command: 'x' })
      expect(sources.a).toEqual({ provider: 'native', providerName: 'OMP', path, level: 'project' })
      expect(exaApiKeys).toEqual([])
      expect(warnings).toEqual([])
    },
    T,
  )

  it(
    'native: project beats ~/.omp/agent, .omp/mcp.json beats .omp/.mcp.json',
    async () => {
      put('~/.omp/agent/mcp.json', servers({ a: { command: 'user' }, u: { command: 'u' } }))
      put('.omp/mcp.json', servers({ a: { command: 'project' } }))
      let r = await load()
      expect(r.configs.a.command).toBe('project')
      expect(r.sources.u.level).toBe('user')
      put('.omp/.mcp.json', servers({ a: { command: 'dot' } }))
      r = await load()
      expect(r.configs.a.command).toBe('project')
    },
    T,
  )

  it(
    'native beats .mcp.json; .mcp.json alone is mcp-json; mcp.json beats .mcp.json',
    async () => {
      const dot = put('.mcp.json', servers({ a: { command: 'dot' } }))
      let r = await load()
      expect(r.sources.a).toEqual({ provider: 'mcp-json', providerName: 'MCP Config', path: dot, level: 'project' })
      put('mcp.json', servers({ a: { command: 'plain' } }))
      r = await load()
      expect(r.configs.a.command).toBe('plain')
      put('.omp/mcp.json', servers({ a: { command: 'native' } }))
      r = await load()
      expect(r.configs.a.command).toBe('native')
      expect(r.sources.a.provider).toBe('native')
    },
    T,
  )

  it(
    'Claude: ~/.claude.json beats .claude/.mcp.json; an empty ~/.claude.json falls through to ~/.claude/mcp.json',
    async () => {
      put('~/.claude.json', servers({ a: { command: 'user' } }))
      put('.claude/.mcp.json', servers({ a: { command: 'project' } }))
      let r = await load()
      expect(r.configs.a.command).toBe('user')
      expect(r.sources.a.provider).toBe('claude')
      put('~/.claude.json', servers({}))
      put('~/.claude/mcp.json', servers({ b: { command: 'b' } }))
      r = await load()
      expect(r.configs.b).toEqual({ type: 'stdio', command: 'b' })
    },
    T,
  )

  it(
    'Claude beats Cursor, Cursor beats Windsurf',
    async () => {
      put('~/.claude.json', servers({ a: { command: 'claude' } }))
      put('.cursor/mcp.json', servers({ a: { command: 'cursor' }, b: { command: 'cursor' } }))
      put('.windsurf/mcp_config.json', servers({ b: { command: 'windsurf' } }))
      const { configs, sources } = await load()
      expect(configs.a.command).toBe('claude')
      expect(configs.b.command).toBe('cursor')
      expect(sources.b.providerName).toBe('Cursor')
    },
    T,
  )

  it(
    'Codex: bearer_token_env_var becomes an Authorization header',
    async () => {
      process.env.T = 'tok'
      put('~/.codex/config.toml', '[mcp_servers.a]\nurl = "https://h"\nbearer_token_env_var = "T"\n')
      const { configs, sources } = await load()
      expect(configs.a).toEqual({ type: 'http', url: 'https://h', headers: { Authorization: 'Bearer tok' } })
      expect(sources.a).toMatchObject({ provider: 'codex', providerName: 'OpenAI Codex', level: 'user' })
    },
    T,
  )

  it(
    'Codex: env_vars override env from the process; ${X} stays literal',
    async () => {
      process.env.P = '1'
      process.env.X = 'expanded?'
      put('.codex/config.toml', '[mcp_servers.s]\ncommand = "${X}"\nenv_vars = ["P"]\nenv = { P = "0" }\n')
      const { configs } = await load()
      expect(configs.s).toEqual({ type: 'stdio', command: '${X}', env: { P: '1' } })
    },
    T,
  )

  it(
    'VS Code: mcp.servers gives an sse config; [7.10] top-level servers is read too',
    async () => {
      put('.vscode/mcp.json', { mcp: { servers: { v: { url: 'https://h', transport: 'sse' } } } })
      let r = await load()
      expect(r.configs.v).toEqual({ type: 'sse', url: 'https://h' })
      put('.vscode/mcp.json', { servers: { top: { url: 'https://t', type: 'http' } } })
      r = await load()
      expect(r.configs.top).toEqual({ type: 'http', url: 'https://t' })
      expect(r.sources.top).toMatchObject({ provider: 'vscode', providerName: 'VS Code', level: 'project' })
    },
    T,
  )

  it(
    '[7.10] Gemini httpUrl-only and Windsurf serverUrl-only servers are http servers',
    async () => {
      put('~/.gemini/settings.json', servers({ g: { httpUrl: 'https://g' } }))
      put('~/.codeium/windsurf/mcp_config.json', servers({ w: { serverUrl: 'https://w' } }))
      const { configs, sources } = await load()
      expect(configs.g).toEqual({ type: 'http', url: 'https://g' })
      expect(configs.w).toEqual({ type: 'http', url: 'https://w' })
      expect(sources.g.providerName).toBe('Gemini CLI')
      expect(sources.w.providerName).toBe('Windsurf')
    },
    T,
  )

  it(
    '[7.10] Claude "type":"HTTP" with a url is http (in Cursor too); an unknown type is kept and the manager names it',
    async () => {
      put('~/.claude.json', servers({ a: { type: 'HTTP', url: 'https://h' }, w: { type: 'ws', url: 'wss://h' } }))
      put('.cursor/mcp.json', servers({ c: { type: 'HTTP', url: 'https://c' } }))
      const { configs } = await load()
      expect(configs.a).toEqual({ type: 'http', url: 'https://h' })
      expect(configs.c).toEqual({ type: 'http', url: 'https://c' })
      expect(configs.w).toEqual({ type: 'ws', url: 'wss://h' })
      expect(validateServerConfig('a', configs.a)).toEqual([])

      const manager = new MCPManager(cwd, null, {
        loadConfigs: (dir, options) => loadAllMCPConfigs(dir, { ...options, disabledProviders: ['cursor'] }).then(only('w')),
      })
      const result = await manager.discoverAndConnect()
      expect([...result.errors]).toEqual([['w', 'Server "w": unknown server type "ws"']])
      await manager.disconnectAll()
    },
    T,
  )

  it(
    'native command+url is stdio without the url; with type sse it is sse without the command',
    async () => {
      put('.omp/mcp.json', servers({ s: { command: 'c', url: 'https://h' }, e: { command: 'c', url: 'https://h', type: 'sse' } }))
      const { configs } = await load()
      expect(configs.s).toEqual({ type: 'stdio', command: 'c' })
      expect(configs.e).toEqual({ type: 'sse', url: 'https://h' })
    },
    T,
  )

  it(
    'native enabled: "FALSE" is absent, "yes" is kept, "${E:-false}" with E unset is absent',
    async () => {
      put(
        '.omp/mcp.json',
        servers({
          off: { command: 'x', enabled: 'FALSE' },
          yes: { command: 'x', enabled: 'yes' },
          env: { command: 'x', enabled: '${E:-false}' },
        }),
      )
      const { configs, sources } = await load()
      expect(Object.keys(configs)).toEqual(['yes'])
      expect(Object.keys(sources)).toEqual(['yes'])
    },
    T,
  )

  it(
    'timeouts: native "5000" is 5000, 0 and "abc" are undefined; mcp-json "5000" is undefined',
    async () => {
      put(
        '.omp/mcp.json',
        servers({ s: { command: 'x', timeout: '5000' }, z: { command: 'x', timeout: 0 }, a: { command: 'x', timeout: 'abc' } }),
      )
      put('.mcp.json', servers({ m: { command: 'x', timeout: '5000' } }))
      const { configs } = await load()
      expect(configs.s.timeout).toBe(5000)
      expect(configs.z.timeout).toBeUndefined()
      expect(configs.a.timeout).toBeUndefined()
      expect(configs.m.timeout).toBeUndefined()
    },
    T,
  )

  it(
    'Claude "enabled": false still loads',
    async () => {
      put('~/.claude.json', servers({ a: { command: 'x', enabled: false } }))
      const { configs } = await load()
      expect(configs.a).toEqual({ type: 'stdio', command: 'x' })
    },
    T,
  )

  it(
    "a native project a with enabled:false, or one that is {}, hides Claude's a",
    async () => {
      put('~/.claude.json', servers({ a: { command: 'claude' }, b: { command: 'claude' } }))
      put('.omp/mcp.json', servers({ a: { command: 'x', enabled: false }, b: {} }))
      const { configs } = await load()
      expect(configs).toEqual({})
    },
    T,
  )

  it(
    'enableProjectConfig:false: a project a that shadows a user a is absent; a user-only b stays',
    async () => {
      put('~/.omp/agent/mcp.json', servers({ a: { command: 'user' }, b: { command: 'user' } }))
      put('.omp/mcp.json', servers({ a: { command: 'project' } }))
      const { configs } = await load({ enableProjectConfig: false })
      expect(Object.keys(configs)).toEqual(['b'])
    },
    T,
  )

  it(
    '${VAR} expansion: defined, undefined, default, $NAME; an empty value is defined',
    async () => {
      process.env.FOO = 'bar'
      put('.omp/mcp.json', servers({ s: { command: 'x', args: ['${FOO}', '${NOPE}', '${NOPE:-d}', '$FOO'] } }))
      let r = await load()
      expect(r.configs.s.args).toEqual(['bar', '${NOPE}', 'd', '$FOO'])
      process.env.FOO = ''
      put('.omp/mcp.json', servers({ s: { command: 'x', args: ['${FOO:-d}'] } }))
      r = await load()
      expect(r.configs.s.args).toEqual([''])
    },
    T,
  )

  it(
    'Exa: the exa server is removed and its key collected; filterExa:false keeps it',
    async () => {
      put('.omp/mcp.json', servers({ exa: { type: 'http', url: 'https://mcp.exa.ai/mcp?exaApiKey=K1&x' }, keep: { command: 'k' } }))
      let r = await load()
      expect(Object.keys(r.configs)).toEqual(['keep'])
      expect(Object.keys(r.sources)).toEqual(['keep'])
      expect(r.exaApiKeys).toEqual(['K1'])
      r = await load({ filterExa: false })
      expect(Object.keys(r.configs)).toEqual(['exa', 'keep'])
      expect(r.exaApiKeys).toEqual([])
    },
    T,
  )

  it(
    'Exa: a stdio server whose args name MCP.EXA.AI is removed; its key is env.EXA_API_KEY',
    async () => {
      put(
        '.omp/mcp.json',
        servers({ search: { command: 'npx', args: ['mcp-remote', 'https://MCP.EXA.AI/x'], env: { EXA_API_KEY: 'K2' } } }),
      )
      const r = await load()
      expect(r.configs).toEqual({})
      expect(r.exaApiKeys).toEqual(['K2'])
    },
    T,
  )

  it(
    'validateServerConfig: unknown type; command and url give only the conflict',
    () => {
      expect(validateServerConfig('s', { type: 'ws' })).toEqual(['Server "s": unknown server type "ws"'])
      expect(validateServerConfig('s', { command: 'c', url: 'u' })).toEqual([
        'Server "s": both "command" and "url" are set - server should be either stdio (command) OR http/sse (url), not both',
      ])
      expect(validateServerConfig('s', { type: 'sse' })).toEqual(['Server "s": sse server requires "url" field'])
      expect(validateServerConfig('s', {})).toEqual(['Server "s": stdio server requires "command" field'])
      expect(validateServerConfig('s', { type: 'http', url: 'https://h' })).toEqual([])
    },
    T,
  )

  it(
    '[7.10] a null entry in .omp/mcp.json skips only itself, with a warning; the call resolves',
    async () => {
      const path = put('.omp/mcp.json', servers({ a: { command: 'x' }, n: null, s: 'str', b: { command: 'y' } }))
      const { configs, warnings } = await load()
      expect(Object.keys(configs)).toEqual(['a', 'b'])
      expect(warnings).toEqual([`[OMP] Invalid config for server "n" in ${path}`, `[OMP] Invalid config for server "s" in ${path}`])
    },
    T,
  )

  it(
    '[7.10] no read cache: an edit between two calls is seen',
    async () => {
      put('.omp/mcp.json', servers({ a: { command: 'one' } }))
      expect((await load()).configs.a.command).toBe('one')
      put('.omp/mcp.json', servers({ a: { command: 'two' }, b: { command: 'new' } }))
      const { configs } = await load()
      expect(configs.a.command).toBe('two')
      expect(configs.b.command).toBe('new')
    },
    T,
  )
})

/** A loadConfigs result narrowed to one name (so the manager connects nothing else). */
function only(name) {
  return (r) => ({ configs: { [name]: r.configs[name] }, sources: { [name]: r.sources[name] }, exaApiKeys: r.exaApiKeys })
}

describe('7.10', () => {
  it(
    'VS Code: comments, trailing commas, type or transport, checked field types',
    async () => {
      const path = put(
        '.vscode/mcp.json',
        `{
  // VS Code's own format, with a comment
  "servers": {
    "a": { "type": "SSE", "url": "https://a", /* inline */ },
    "b": { "command": "node", "args": ["server.js", ], "env": { "K": "v" }, "cwd": "/work", },
    "c": { "command": 7, "url": "https://c", "transport": "http" },
  },
}`,
      )
      const { configs, sources, warnings } = await load()
      expect(configs.a).toEqual({ type: 'sse', url: 'https://a' })
      expect(configs.b).toEqual({ type: 'stdio', command: 'node', args: ['server.js'], env: { K: 'v' }, cwd: '/work' })
      expect(configs.c).toEqual({ type: 'http', url: 'https://c' })
      expect(sources.b.path).toBe(path)
      expect(warnings).toEqual([])
    },
    T,
  )

  it(
    'cwd of a stdio entry is passed through from every source that has it',
    async () => {
      put('.omp/mcp.json', servers({ n: { command: 'x', cwd: '/n' } }))
      put('~/.claude.json', servers({ c: { command: 'x', cwd: '/c' } }))
      put('~/.codex/config.toml', '[mcp_servers.x]\ncommand = "x"\ncwd = "/x"\n')
      put('~/.gemini/settings.json', servers({ g: { command: 'x', cwd: '/g' } }))
      put('.cursor/mcp.json', servers({ u: { command: 'x', cwd: '/u' } }))
      put('.windsurf/mcp_config.json', servers({ w: { command: 'x', cwd: '/w' } }))
      put('.vscode/mcp.json', { servers: { v: { command: 'x', cwd: '/v' } } })
      put('.mcp.json', servers({ m: { command: 'x', cwd: '/m' }, r: { url: 'https://r', cwd: '/r' } }))
      const { configs } = await load()
      for (const n of ['n', 'c', 'x', 'g', 'u', 'w', 'v', 'm']) expect(configs[n]).toEqual({ type: 'stdio', command: 'x', cwd: `/${n}` })
      expect(configs.r).toEqual({ type: 'http', url: 'https://r' })
    },
    T,
  )

  it(
    'a null or non-object entry skips only itself in every provider',
    async () => {
      put('~/.claude.json', servers({ c: null, c2: { command: 'x' } }))
      put('.cursor/mcp.json', servers({ u: 1, u2: { command: 'x' } }))
      put('.mcp.json', servers({ m: [], m2: { command: 'x' } }))
      const gemini = put('~/.gemini/settings.json', servers({ g: null, g2: { command: 'x' } }))
      const windsurf = put('.windsurf/mcp_config.json', servers({ w: 'x', w2: { command: 'x' } }))
      const { configs, warnings } = await load()
      expect(Object.keys(configs).sort()).toEqual(['c2', 'g2', 'm2', 'u2', 'w2'])
      expect(warnings).toContain(`[Gemini CLI] Invalid config for server "g" in ${gemini}`)
      expect(warnings).toContain(`[Windsurf] Invalid server config for "w" in ${windsurf}`)
      expect(warnings).toHaveLength(5)
    },
    T,
  )

  it(
    'transport names compare case-insensitively; a type that names no transport is kept',
    async () => {
      put(
        '.omp/mcp.json',
        servers({ s: { type: 'Stdio', command: 'x' }, h: { type: 'Http', url: 'https://h' }, q: { type: 'quic', command: 'x' } }),
      )
      const { configs } = await load()
      expect(configs.s).toEqual({ type: 'stdio', command: 'x' })
      expect(configs.h).toEqual({ type: 'http', url: 'https://h' })
      expect(configs.q).toEqual({ type: 'quic', command: 'x' })
      expect(validateServerConfig('q', configs.q)).toEqual(['Server "q": unknown server type "quic"'])
    },
    T,
  )

  it(
    'the OMP user files come from $PI_CODING_AGENT_DIR, else ~/<$PI_CONFIG_DIR or .omp>/agent',
    async () => {
      put('~/.omp/agent/mcp.json', servers({ dflt: { command: 'x' } }))
      const pi = put('~/.pi/agent/mcp.json', servers({ configDir: { command: 'x' } }))
      const agentDir = join(root, 'agent')
      mkdirSync(agentDir)
      writeFileSync(join(agentDir, 'mcp.json'), JSON.stringify(servers({ agentDir: { command: 'x' } })))
      expect(Object.keys((await load()).configs)).toEqual(['dflt'])
      process.env.PI_CONFIG_DIR = '.pi'
      const r = await load()
      expect(Object.keys(r.configs)).toEqual(['configDir'])
      expect(r.sources.configDir).toEqual({ provider: 'native', providerName: 'OMP', path: pi, level: 'user' })
      process.env.PI_CODING_AGENT_DIR = agentDir
      expect(Object.keys((await load()).configs)).toEqual(['agentDir'])
    },
    T,
  )

  it(
    'warnings are returned and each goes to logger.warn; a throwing logger changes nothing',
    async () => {
      const omp = put('.omp/mcp.json', '{ "mcpServers": ')
      const codex = put('.codex/config.toml', '[mcp_servers.a]\ntoken = "sk-secret\n')
      put('.mcp.json', servers({ ok: { command: 'x' }, bad: { url: 'https://h', type: 'stdio' } }))
      const logged = []
      const r = await load({ logger: { warn: (...args) => logged.push(args) } })
      expect(Object.keys(r.configs)).toEqual(['ok'])
      expect(r.warnings).toHaveLength(3)
      expect(r.warnings[0]).toMatch(new RegExp(`^\\[OMP\\] Invalid JSON in ${omp}: EOF while parsing`))
      expect(r.warnings[1]).toMatch(/^\[OpenAI Codex\] Failed to parse TOML config .* at line 2, column \d+$/)
      expect(r.warnings[1]).toContain(codex)
      expect(r.warnings[1]).not.toContain('sk-secret')
      expect(r.warnings[2]).toBe(`[MCP Config] Invalid item at ${join(cwd, '.mcp.json')}: stdio transport requires command field`)
      expect(logged).toEqual(r.warnings.map((w) => [w]))

      const again = await load({
        logger: {
          warn() {
            throw new Error('broken logger')
          },
        },
      })
      expect(again.warnings).toEqual(r.warnings)
      const rejecting = await load({ logger: { warn: async () => Promise.reject(new Error('no')) } })
      expect(rejecting.warnings).toEqual(r.warnings)
    },
    T,
  )

  it(
    'disabledServers in any file skips those names everywhere',
    async () => {
      put('~/.claude.json', { mcpServers: { a: { command: 'x' }, b: { command: 'x' } }, disabledServers: ['b'] })
      put('.mcp.json', { mcpServers: { c: { command: 'x' } }, disabledServers: ['a'] })
      expect(Object.keys((await load()).configs)).toEqual(['c'])
      // The list of a project file is not applied when project files are off.
      expect(Object.keys((await load({ enableProjectConfig: false })).configs)).toEqual(['a'])
    },
    T,
  )

  it(
    'disabledProviders skips those providers (unknown ids are ignored)',
    async () => {
      put('.omp/mcp.json', servers({ a: { command: 'native' } }))
      put('~/.claude.json', servers({ a: { command: 'claude' }, b: { command: 'claude' } }))
      put('.vscode/mcp.json', { servers: { v: { command: 'x' } } })
      let r = await load({ disabledProviders: ['native', 'vscode', 'nope'] })
      expect(r.configs.a.command).toBe('claude')
      expect(Object.keys(r.configs)).toEqual(['a', 'b'])
      r = await load({ disabledProviders: [] })
      expect(Object.keys(r.configs)).toEqual(['a', 'b', 'v'])
    },
    T,
  )

  it(
    "Claude's local scope (projects[cwd] in ~/.claude.json) beats user, which beats project",
    async () => {
      const claudeJson = put('~/.claude.json', {
        mcpServers: { a: { command: 'user' }, u: { command: 'user' } },
        projects: {
          [cwd]: { mcpServers: { a: { command: 'local' }, l: { command: 'local' } } },
          [join(root, 'other')]: { mcpServers: { other: { command: 'x' } } },
        },
      })
      put('.claude/.mcp.json', servers({ a: { command: 'project' }, l: { command: 'project' }, p: { command: 'project' } }))
      const { configs, sources } = await load()
      expect(Object.keys(configs)).toEqual(['a', 'l', 'u', 'p'])
      expect(configs.a.command).toBe('local')
      expect(configs.l.command).toBe('local')
      expect(sources.a).toEqual({ provider: 'claude', providerName: 'Claude Code', path: claudeJson, level: 'project' })
      expect(sources.u.level).toBe('user')
      expect(sources.p.path).toBe(join(cwd, '.claude', '.mcp.json'))
    },
    T,
  )

  it(
    'local scope alone makes ~/.claude.json yield (~/.claude/mcp.json is not read); the real path of cwd matches too',
    async () => {
      put('~/.claude.json', { projects: { [realpathSync(cwd)]: { mcpServers: { l: { command: 'x' } } } } })
      put('~/.claude/mcp.json', servers({ never: { command: 'x' } }))
      expect(Object.keys((await load()).configs)).toEqual(['l'])
      const link = join(root, 'link')
      symlinkSync(cwd, link)
      expect(Object.keys((await loadAllMCPConfigs(link)).configs)).toEqual(['l'])
      unlinkSync(link)
    },
    T,
  )
})

describe('Exa helpers and the module', () => {
  it(
    'isExaMCPServer and extractExaApiKey follow the reference rules',
    () => {
      expect(isExaMCPServer('EXA', { command: 'x' })).toBe(true)
      expect(isExaMCPServer('s', { type: 'sse', url: 'https://Mcp.Exa.Ai/x' })).toBe(true)
      expect(isExaMCPServer('s', { command: 'x', url: 'https://mcp.exa.ai' })).toBe(false)
      expect(isExaMCPServer('s', { command: 'npx', args: ['mcp.exa.ai'] })).toBe(true)
      expect(isExaMCPServer('s', { type: 'http', url: 'https://h', headers: { A: 'b' } })).toBe(false)
      expect(extractExaApiKey({ type: 'http', url: 'https://mcp.exa.ai/mcp?exaApiKey=K1&x' })).toBe('K1')
      expect(extractExaApiKey({ command: 'x', args: ['a', '--url=https://h?EXAAPIKEY=A1', 'exaApiKey=A2'] })).toBe('A1')
      expect(extractExaApiKey({ command: 'x', env: { EXA_API_KEY: 'E' } })).toBe('E')
      expect(extractExaApiKey({ command: 'x', env: { EXA_API_KEY: '' } })).toBeUndefined()
    },
    T,
  )

  it(
    'filterExaMCPServers keeps the very config objects, keys in order with duplicates, sources of kept names',
    () => {
      const keep = { command: 'k' }
      const configs = {
        a: keep,
        exa: { type: 'http', url: 'https://mcp.exa.ai/?exaApiKey=K' },
        b: { type: 'sse', url: 'https://mcp.exa.ai/?exaApiKey=K' },
        c: { command: 'x', args: ['https://mcp.exa.ai'] },
      }
      const sources = {
        a: { provider: 'native', providerName: 'OMP', path: '/p', level: 'project' },
        exa: { provider: 'native', providerName: 'OMP', path: '/e', level: 'project' },
      }
      const r = filterExaMCPServers(configs, sources)
      expect(r.configs).toEqual({ a: keep })
      expect(r.configs.a).toBe(keep)
      expect(r.exaApiKeys).toEqual(['K', 'K'])
      expect(r.sources).toEqual({ a: sources.a })
    },
    T,
  )

  it(
    'require and import give the same functions',
    () => {
      const required = createRequire(import.meta.url)('mcp-native/compat-12.7/config')
      expect(required.loadAllMCPConfigs).toBe(loadAllMCPConfigs)
      expect(required.filterExaMCPServers).toBe(filterExaMCPServers)
    },
    T,
  )
})
