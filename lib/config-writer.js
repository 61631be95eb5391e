'use strict'
// mcp-native/config-writer (SPEC 8.5, 8.11): read and edit an `.omp/mcp.json`-style file. The
// file work (private directories, `<path>.tmp` then rename, "absent" told apart) is in Rust
// (src/files.rs); the JSON is `JSON.stringify(config, null, 2)` and `JSON.parse` here, so the
// text and the `SyntaxError` of a bad file are exactly the reference's.

const path = require('node:path')
const { fileURLToPath } = require('node:url')
const native = require('../native/index.js')
const { agentDir } = require('./agent-dir.js')

/** @typedef {import('../index.js').MCPConfigFile} MCPConfigFile */
/** @typedef {import('../index.js').MCPServerConfig} MCPServerConfig */
/** @typedef {string | URL | Buffer} FilePath what Node's fs takes (the declarations say string) */

const MAX_NAME_LENGTH = 100
const NAME_PATTERN = /^[a-zA-Z0-9_.-]+$/

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

// Edits of one file in this process run one after another (keyed by absolute path), so that two
// concurrent `addMCPServer` calls both land instead of the second overwriting the first.
/** @type {Map<string, Promise<void>>} */
const queues = new Map()

/**
 * @template T
 * @param {FilePath} filePath
 * @param {() => T | PromiseLike<T>} work
 * @returns {Promise<T>}
 */
function exclusive(filePath, work) {
  const key = path.resolve(toPath(filePath))
  const previous = queues.get(key) ?? Promise.resolve()
  const run = previous.then(work)
  const tail = run.then(
    () => {},
    () => {},
  )
  queues.set(key, tail)
  tail.then(() => {
    if (queues.get(key) === tail) queues.delete(key)
  })
  return run
}

/**
 * The file's config (unvalidated `JSON.parse`); `{ mcpServers: {} }` when it does not exist.
 * @param {FilePath} filePath
 * @returns {Promise<MCPConfigFile>}
 */
async function readMCPConfigFile(filePath) {
  const text = await native.readTextFile(toPath(filePath))
  if (text === null) return { mcpServers: {} }
  return JSON.parse(text)
}

/**
 * @param {FilePath} filePath
 * @param {unknown} config
 */
async function writeFile(filePath, config) {
  const text = JSON.stringify(config, null, 2)
  if (typeof text !== 'string') throw new TypeError('The MCP config must be a JSON object')
  await native.writeFileAtomic(toPath(filePath), text)
}

/**
 * Replaces the file with `config` (2-space JSON, no trailing newline), atomically.
 * @param {FilePath} filePath
 * @param {MCPConfigFile} config
 */
async function writeMCPConfigFile(filePath, config) {
  await exclusive(filePath, () => writeFile(filePath, config))
}

/**
 * The reason `name` cannot name a server, or undefined when it can.
 * @param {string} name
 * @returns {string | undefined}
 */
function validateServerName(name) {
  if (!name) return 'Server name cannot be empty'
  if (name.length > MAX_NAME_LENGTH) return `Server name is too long (max ${MAX_NAME_LENGTH} characters)`
  if (!NAME_PATTERN.test(name)) return 'Server name can only contain letters, numbers, dash, underscore, and dot'
  return undefined
}

/**
 * The checks of add and update: the name, then the config (SPEC 8.5 messages).
 * @param {string} name
 * @param {unknown} config
 */
function checkServer(name, config) {
  const nameError = validateServerName(name)
  if (nameError) throw new Error(nameError)
  const errors = native.validateServerConfig(String(name), JSON.stringify(config) ?? 'null')
  if (errors.length > 0) throw new Error(`Invalid server config: ${errors.join('; ')}`)
}

/**
 * Adds a server (last in `mcpServers`); throws when the name is taken. Other keys are kept.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {MCPServerConfig} config
 */
async function addMCPServer(filePath, name, config) {
  checkServer(name, config)
  await exclusive(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    if (existing.mcpServers?.[name]) throw new Error(`Server "${name}" already exists in ${filePath}`)
    await writeFile(filePath, { ...existing, mcpServers: { ...existing.mcpServers, [name]: config } })
  })
}

/**
 * Replaces a server's config in place, or adds it last.
 * @param {FilePath} filePath
 * @param {string} name
 * @param {MCPServerConfig} config
 */
async function updateMCPServer(filePath, name, config) {
  checkServer(name, config)
  await exclusive(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    await writeFile(filePath, { ...existing, mcpServers: { ...existing.mcpServers, [name]: config } })
  })
}

/**
 * Removes a server; throws (writing nothing) when it or the file is missing.
 * @param {FilePath} filePath
 * @param {string} name
 */
async function removeMCPServer(filePath, name) {
  await exclusive(filePath, async () => {
    const existing = await readMCPConfigFile(filePath)
    if (!existing.mcpServers?.[name]) throw new Error(`Server "${name}" not found in ${filePath}`)
    const { [name]: _removed, ...remaining } = existing.mcpServers
    await writeFile(filePath, { ...existing, mcpServers: remaining })
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

exports.readMCPConfigFile = readMCPConfigFile
exports.writeMCPConfigFile = writeMCPConfigFile
exports.validateServerName = validateServerName
exports.addMCPServer = addMCPServer
exports.updateMCPServer = updateMCPServer
exports.removeMCPServer = removeMCPServer
exports.getMCPServer = getMCPServer
exports.listMCPServers = listMCPServers
exports.getMCPConfigPath = getMCPConfigPath
