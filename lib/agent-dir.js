'use strict'
// The agent directory (SPEC 7.10, 8.11): `$PI_CODING_AGENT_DIR`, else `~/<$PI_CONFIG_DIR or
// ".omp">/agent`, read at each call (tests and hosts change the environment). Used for the user
// config path of the writer and the default tool cache file.

const os = require('node:os')
const path = require('node:path')

/** `~`: `$HOME` first, as Node's os.homedir() does (Bun's ignores a changed $HOME). */
function homeDir() {
  return process.env.HOME || os.homedir()
}

/** The agent directory, absolute (a relative `$PI_CODING_AGENT_DIR` is taken from the cwd). */
function agentDir() {
  const override = process.env.PI_CODING_AGENT_DIR
  if (override) return path.resolve(override)
  return path.join(homeDir(), process.env.PI_CONFIG_DIR || '.omp', 'agent')
}

exports.homeDir = homeDir
exports.agentDir = agentDir
