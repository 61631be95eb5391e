'use strict'
// mcp-native/config-writer: read and edit an `.omp/mcp.json`-style file, in two profiles (SPEC 11.3).
// - The root (SPEC 11.4, the agent's 18.3.4 `config-writer.ts`): `$schema` on every write, the
//   disabled and force-enabled lists, `setMcpServerEnabled`, 18.3.4's server names, and every
//   read-modify-write under a per-file lock across processes (the agent's 17.1.0 fix): the agent's
//   injected `withFileLock` when it gave one, else the package's own OS lock on
//   `<absolute file>.lock` (src/file_lock.rs: the same OS lock as the agent's on Linux and macOS,
//   so the two layers exclude each other even without the injection there). After each write the
//   agent's injected `invalidateConfigCache(path)` is told, and its failures stay here.
// - 12.7 (SPEC 8.5, 8.11; `…127` below, `mcp-native/compat-12.7/config-writer`): no `$schema`,
//   12.7's server names, edits of one file queued in this process only.
// The file work (private directories, `<path>.tmp` then rename, "absent" told apart) is in Rust
// (src/files.rs); the JSON is `JSON.stringify(config, null, 2)` and `JSON.parse` here, so the
// text and the `SyntaxError` of a bad file are exactly the reference's.

const fsp = require('node:fs/promises')
const path = require('node:path')
const { setTimeout: sleep } = require('node:timers/promises')
const { fileURLToPath } = require('node:url')
const native = require('../native/index.js')
const { agentDir } = require('./agent-dir.js')
const { validateServerConfig: ownValidateServerConfig } = require('./config.js')
const { hookLogger, hooks } = require('./hooks.js')
const { MCP_CONFIG_SCHEMA_URL } = require('./types.js')

/** @typedef {import('../index.js').MCPConfigFile} MCPConfigFile */
/** @typedef {MCPConfigFile & { $schema?: string, enabledServers?: string[] }} CurrentConfigFile the root's: with `$schema`, `enabledServers` */
/** @typedef {import('./entries/config-writer.js').SetMcpServerEnabledOptions} SetMcpServerEnabledOptions */
/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {string | URL | Buffer} FilePath what Node's fs takes (the declarations say string) */

const MAX_NAME_LENGTH = 100
/** 12.7: letters, digits, `_`, `.`, `-`. */
const NAME_PATTERN_127 = /^[a-zA-Z0-9_.-]+$/
/** 18.3.4: the same plus `:`, in words joined by single spaces. */
const NAME_PATTERN = /^[a-zA-Z0-9_.:-]+(?: [a-zA-Z0-9_.:-]+)*$/
/** The own lock's attempts and the pause between them: pi-utils' `withFileLock` defaults. */
const LOCK_ATTEMPTS = 50
const LOCK_RETRY_MS = 100

/**
 * A path as Node's fs takes it: a string, a Buffer or a file: URL.
 * @param {unknown} filePath checked here: JS callers may pass anything
 * @returns {string}
 */
function toPath(filePath) {
  if (typeof filePath === 'string') return filePath
  if (filePath instanceof URL) return fileURLToPath(filePath)
  if (Buffer.isBuffer(filePath)) return filePath.toString()
  const err = /** @type {TypeError & { code?: string }} */ (
    new TypeError(`The "path" argument must be of type string or an instance of Buffer or URL. Received ${typeof filePath}`)
  )
  err.code = 'ERR_INVALID_ARG_TYPE'
  throw err
}

/**
 * Runs `work` after every earlier work of `queue` under the same key has settled (keyed by
 * absolute path), so that work of one file in this process never overlaps.
 * @template T
 * @param {Map<string, Promise<void>>} queue
 * @param {string} key an absolute path
 * @param {() => T | PromiseLike<T>} work
 * @returns {Promise<T>}
 */
function serialized(queue, key, work) {
  const previous = queue.get(key) ?? Promise.resolve()
  const run = previous.then(work)
  const tail = run.then(
    () => {},
    () => {},
  )
  queue.set(key, tail)
  tail.then(() => {
    if (queue.get(key) === tail) queue.delete(key)
  })
  return run
}

/**
 * Writes of a file's `<path>.tmp` in this process, one at a time: 12.7's edits hold it for the
 * whole edit, a root write for its write.
 * @type {Map<string, Promise<void>>}
 */
const writes = new Map()
/**
 * The root's read-modify-writes of a file in this process, one at a time, in front of the
 * cross-process lock (so that contention inside one process never spends the lock's attempts).
 * @type {Map<string, Promise<void>>}
 */
const edits = new Map()

/**
 * The file's config (unvalidated `JSON.parse`); `{ mcpServers: {} }` when it does not exist.
 * @param {FilePath} filePath
 * @returns {Promise<any>}
 */
async function readMCPConfigFile(filePath) {
  const text = await native.readTextFile(toPath(filePath))
  if (text === null) return { mcpServers: {} }
  return JSON.parse(text)
}

/**
 * The JSON text of a config: 2-space, no trailing newline.
 * @param {unknown} config
 */
function jsonText(config) {
  const text = JSON.stringify(config, null, 2)
  if (typeof text !== 'string') throw new TypeError('The MCP config must be a JSON object')
  return text
}

/**
 * @param {FilePath} filePath
 * @param {unknown} config
 */
async function writeFile127(filePath, config) {
  await native.writeFileAtomic(toPath(filePath), jsonText(config))
}

// ---------------------------------------------------------------------------------------------
// The root (18.3.4)
// ---------------------------------------------------------------------------------------------

/**
 * Tells the agent's discovery cache that `file` changed; a throwing or rejecting hook is logged.
 * @param {string} file
 */
function invalidateCache(file) {
  const invalidate = hooks.invalidateConfigCache
  if (typeof invalidate !== 'function') return
  /** @param {unknown} error */
  const report = (error) =>
    hookLogger().warn('invalidateConfigCache failed after an MCP config write', { path: file, error: String(error) })
  try {
    const out = invalidate(file)
    if (out && typeof out.then === 'function') out.then(undefined, report)
  } catch (error) {
    report(error)
  }
}

/**
 * Replaces the file with `config` plus `$schema` (kept when `config` has one, else
 * MCP_CONFIG_SCHEMA_URL, first), atomically; then the injected cache invalidation.
 * @param {FilePath} filePath
 * @param {CurrentConfigFile} config
 */
async function writeMCPConfigFile(filePath, config) {
  const file = toPath(filePath)
  const text = jsonText({ $schema: config.$schema ?? MCP_CONFIG_SCHEMA_URL, ...config })
  await serialized(writes, path.resolve(file), async () => {
    try {
      await native.writeFileAtomic(file, text)
    } catch (error) {
      await fsp.rm(`${file}.tmp`, { force: true }).catch(() => {})
      throw error
    }
  })
  invalidateCache(file)
}

/**
 * The package's own lock: up to LOCK_ATTEMPTS tries LOCK_RETRY_MS apart, released when `work` ends.
 * @template T
 * @param {string} file as the caller gave it (the message names it so)
 * @param {string} lockPath
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
async function withOwnLock(file, lockPath, work) {
  for (let attempt = 0; attempt < LOCK_ATTEMPTS; attempt++) {
    const lock = native.tryFileLock(lockPath)
    if (lock) {
      try {
        return await work()
      } finally {
        lock.release()
      }
    }
    if (attempt + 1 < LOCK_ATTEMPTS) await sleep(LOCK_RETRY_MS)
  }
  throw new Error(`Failed to acquire lock for ${file} after ${LOCK_ATTEMPTS} attempts`)
}

/**
 * Runs a read-modify-write of `filePath` alone: in this process's queue (so in call order), the
 * file's directory made (0o700: the lock may need it), then under the cross-process lock (the
 * injected `withFileLock`, else our own).
 * @template T
 * @param {FilePath} filePath
 * @param {() => Promise<T>} work
 * @returns {Promise<T>}
 */
async function withConfigLock(filePath, work) {
  const file = toPath(filePath)
  const absolute = path.resolve(file)
  return serialized(edits, absolute, async () => {
    await native.createPrivateDirs(path.dirname(absolute))
    const injected = hooks.withFileLock
    if (typeof injected === 'function') return injected(file, work)
    return withOwnLock(file, `${absolute}.lock`, work)
  })
}

/**
 * The reason `name` cannot name a server, or undefined when it can (18.3.4: `:` and single
 * spaces allowed).
 * @param {string} name
 * @returns {string | undefined}
 */
function validateServerName(name) {
  if (!name) return 'Server name cannot be empty'
  if (name.length > MAX_NAME_LENGTH) return `Server name is too long (max ${MAX_NAME_LENGTH} characters)`
  if (!NAME_PATTERN.test(name)) return 'Server name can only contain letters, numbers, dash, underscore, dot, colon, and single spaces'
  return undefined
}

/**
 * The checks of add and update: the name, then the config (the agent's `validateServerConfig`
 * when injected, else the package's).
 * @param {string} name
 * @param {MCPServerConfig} config
 */
function checkServer(name, config) {
  const nameError = validateServerName(name)
  if (nameError) throw new Error(nameError)
  const validate = hooks.validateServerConfig ?? ownValidateServerConfig
  const errors = validate(name, config)
  if (errors.length > 0) throw new Error(`Invalid server config: ${errors.join('; ')}`)
}

/**
 * Adds a server (last in `mcpServers`) under the file's lock; throws when the name is taken.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {MCPServerConfig} config
 */
async function addMCPServer(filePath, name, config) {
  checkServer(name, config)
  await withConfigLock(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    if (existing.mcpServers?.[name]) throw new Error(`Server "${name}" already exists in ${filePath}`)
    await writeMCPConfigFile(filePath, { ...existing, mcpServers: { ...existing.mcpServers, [name]: config } })
  })
}

/**
 * Replaces a server's config in place, or adds it last, under the file's lock.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {MCPServerConfig} config
 */
async function updateMCPServer(filePath, name, config) {
  checkServer(name, config)
  await withConfigLock(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    await writeMCPConfigFile(filePath, { ...existing, mcpServers: { ...existing.mcpServers, [name]: config } })
  })
}

/**
 * Removes a server under the file's lock; throws (writing nothing) when it or the file is missing.
 * @param {FilePath} filePath
 * @param {string} name
 */
async function removeMCPServer(filePath, name) {
  await withConfigLock(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    if (!existing.mcpServers?.[name]) throw new Error(`Server "${name}" not found in ${filePath}`)
    const { [name]: _removed, ...remaining } = existing.mcpServers
    await writeMCPConfigFile(filePath, { ...existing, mcpServers: remaining })
  })
}

/**
 * One server's config, or undefined.
 * @param {FilePath} filePath
 * @param {string} name
 */
async function getMCPServer(filePath, name) {
  const config = await readMCPConfigFile(filePath)
  return config.mcpServers?.[name]
}

/**
 * The server names of the file, in file order.
 * @param {FilePath} filePath
 */
async function listMCPServers(filePath) {
  const config = await readMCPConfigFile(filePath)
  return Object.keys(config.mcpServers ?? {})
}

/**
 * A name list of the file (`disabledServers`, `enabledServers`): the array as written, else [].
 * @param {FilePath} filePath
 * @param {'disabledServers' | 'enabledServers'} key
 * @returns {Promise<string[]>}
 */
async function readNameList(filePath, key) {
  const config = await readMCPConfigFile(filePath)
  return Array.isArray(config[key]) ? config[key] : []
}

/**
 * Adds `name` to, or takes it from, a name list of the file under its lock. The list is written
 * sorted, and dropped from the file when it becomes empty; the file is written either way.
 * @param {FilePath} filePath
 * @param {'disabledServers' | 'enabledServers'} key
 * @param {string} name
 * @param {boolean} present
 */
async function setInNameList(filePath, key, name, present) {
  await withConfigLock(filePath, async () => {
    const config = await readMCPConfigFile(filePath)
    const names = new Set(config[key] ?? [])
    if (present) names.add(name)
    else names.delete(name)
    /** @type {Record<string, unknown>} */
    const updated = { ...config, [key]: names.size > 0 ? [...names].sort() : undefined }
    if (!updated[key]) delete updated[key]
    await writeMCPConfigFile(filePath, updated)
  })
}

/**
 * The file's `disabledServers` (names hidden whatever their source says), or [].
 * @param {FilePath} filePath
 */
function readDisabledServers(filePath) {
  return readNameList(filePath, 'disabledServers')
}

/**
 * Adds `name` to the file's `disabledServers` (disabled true) or removes it.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {boolean} disabled
 */
function setServerDisabled(filePath, name, disabled) {
  return setInNameList(filePath, 'disabledServers', name, disabled)
}

/**
 * The file's `enabledServers` (names forced on over a read-only source's `enabled: false`), or [].
 * @param {FilePath} filePath
 */
function readEnabledServers(filePath) {
  return readNameList(filePath, 'enabledServers')
}

/**
 * Adds `name` to the file's `enabledServers` (force true) or removes it.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {boolean} force
 */
function setServerForceEnabled(filePath, name, force) {
  return setInNameList(filePath, 'enabledServers', name, force)
}

/**
 * Turns a server on or off wherever it is defined: `enabled` written on its entry in the first of
 * `sourcePath`, `projectPath`, `userPath` that has it; otherwise the user file's lists. Enabling
 * clears the user's `disabledServers` entry and forces the name on only when no entry was written
 * (dropping a force that an entry makes redundant); disabling clears the force and, when no entry
 * was written, adds the name to `disabledServers`.
 * @param {SetMcpServerEnabledOptions} options
 */
async function setMcpServerEnabled(options) {
  const { userPath, projectPath, sourcePath, name, enabled } = options
  const candidates = [...new Set([sourcePath, projectPath, userPath].filter((p) => p !== undefined))]
  let written = false
  for (const filePath of candidates) {
    const server = (await readMCPConfigFile(/** @type {string} */ (filePath))).mcpServers?.[name]
    if (server === undefined) continue
    await updateMCPServer(/** @type {string} */ (filePath), name, { ...server, enabled })
    written = true
    break
  }
  if (enabled) {
    if ((await readDisabledServers(userPath)).includes(name)) await setServerDisabled(userPath, name, false)
    const forced = (await readEnabledServers(userPath)).includes(name)
    if (!written && !forced) await setServerForceEnabled(userPath, name, true)
    else if (written && forced) await setServerForceEnabled(userPath, name, false)
    return
  }
  if ((await readEnabledServers(userPath)).includes(name)) await setServerForceEnabled(userPath, name, false)
  if (!written) await setServerDisabled(userPath, name, true)
}

/**
 * [beyond] Where the agent keeps its own MCP config: `user` → `<agent dir>/mcp.json`, `project`
 * → `<cwd>/.omp/mcp.json` (cwd defaults to `process.cwd()`).
 * @param {'user' | 'project'} scope
 * @param {string} [cwd]
 * @returns {string}
 */
function getMCPConfigPath(scope, cwd) {
  if (scope === 'user') return path.join(agentDir(), 'mcp.json')
  return path.join(cwd ?? process.cwd(), '.omp', 'mcp.json')
}

// ---------------------------------------------------------------------------------------------
// 12.7 (mcp-native/compat-12.7/config-writer)
// ---------------------------------------------------------------------------------------------

/**
 * @template T
 * @param {FilePath} filePath
 * @param {() => T | PromiseLike<T>} work
 * @returns {Promise<T>}
 */
function exclusive127(filePath, work) {
  return serialized(writes, path.resolve(toPath(filePath)), work)
}

/**
 * 12.7: replaces the file with `config` (2-space JSON, no trailing newline, no `$schema`), atomically.
 * @param {FilePath} filePath
 * @param {MCPConfigFile} config
 */
async function writeMCPConfigFile127(filePath, config) {
  await exclusive127(filePath, () => writeFile127(filePath, config))
}

/**
 * 12.7: the reason `name` cannot name a server, or undefined when it can.
 * @param {string} name
 * @returns {string | undefined}
 */
function validateServerName127(name) {
  if (!name) return 'Server name cannot be empty'
  if (name.length > MAX_NAME_LENGTH) return `Server name is too long (max ${MAX_NAME_LENGTH} characters)`
  if (!NAME_PATTERN_127.test(name)) return 'Server name can only contain letters, numbers, dash, underscore, and dot'
  return undefined
}

/**
 * 12.7's checks of add and update: the name, then the config (SPEC 8.5 messages).
 * @param {string} name
 * @param {unknown} config
 */
function checkServer127(name, config) {
  const nameError = validateServerName127(name)
  if (nameError) throw new Error(nameError)
  const errors = native.validateServerConfig(String(name), JSON.stringify(config) ?? 'null')
  if (errors.length > 0) throw new Error(`Invalid server config: ${errors.join('; ')}`)
}

/**
 * 12.7: adds a server (last in `mcpServers`); throws when the name is taken. Other keys are kept.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {MCPServerConfig} config
 */
async function addMCPServer127(filePath, name, config) {
  checkServer127(name, config)
  await exclusive127(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    if (existing.mcpServers?.[name]) throw new Error(`Server "${name}" already exists in ${filePath}`)
    await writeFile127(filePath, { ...existing, mcpServers: { ...existing.mcpServers, [name]: config } })
  })
}

/**
 * 12.7: replaces a server's config in place, or adds it last.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {MCPServerConfig} config
 */
async function updateMCPServer127(filePath, name, config) {
  checkServer127(name, config)
  await exclusive127(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    await writeFile127(filePath, { ...existing, mcpServers: { ...existing.mcpServers, [name]: config } })
  })
}

/**
 * 12.7: removes a server; throws (writing nothing, creating nothing) when it or the file is missing.
 * @param {FilePath} filePath
 * @param {string} name
 */
async function removeMCPServer127(filePath, name) {
  await exclusive127(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    if (!existing.mcpServers?.[name]) throw new Error(`Server "${name}" not found in ${filePath}`)
    const { [name]: _removed, ...remaining } = existing.mcpServers
    await writeFile127(filePath, { ...existing, mcpServers: remaining })
  })
}

exports.readMCPConfigFile = readMCPConfigFile
exports.writeMCPConfigFile = writeMCPConfigFile
exports.validateServerName = validateServerName
exports.addMCPServer = addMCPServer
exports.updateMCPServer = updateMCPServer
exports.removeMCPServer = removeMCPServer
exports.getMCPServer = getMCPServer
exports.listMCPServers = listMCPServers
exports.readDisabledServers = readDisabledServers
exports.setServerDisabled = setServerDisabled
exports.readEnabledServers = readEnabledServers
exports.setServerForceEnabled = setServerForceEnabled
exports.setMcpServerEnabled = setMcpServerEnabled
exports.getMCPConfigPath = getMCPConfigPath
exports.writeMCPConfigFile127 = writeMCPConfigFile127
exports.validateServerName127 = validateServerName127
exports.addMCPServer127 = addMCPServer127
exports.updateMCPServer127 = updateMCPServer127
exports.removeMCPServer127 = removeMCPServer127
