// Shared helpers for the JS tests (vitest under Node, `bun test` under Bun).
import { readFileSync, readdirSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
export const FIXTURE = join(ROOT, '__test__', 'fixture', 'server.mjs')
export const NODE = process.versions.bun ? 'node' : process.execPath

/** A stdio config for the fixture server with extra flags and config fields. */
export function fixture(flags = [], extra = {}) {
  return { command: NODE, args: [FIXTURE, ...flags], ...extra }
}

/** True while `pid` exists and is not a zombie. */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    const state = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0]
    return state !== 'Z' && state !== 'X'
  } catch {
    return false
  }
}

/** Polls `predicate` every 10 ms until it holds or `ms` pass; returns its last value. */
export async function waitFor(predicate, ms = 5000) {
  const deadline = Date.now() + ms
  for (;;) {
    const value = await predicate()
    if (value || Date.now() > deadline) return value
    await new Promise((r) => setTimeout(r, 10))
  }
}

/** Settles to `{ value }` or `{ error }`, never throws. */
export async function settle(promise) {
  try {
    return { value: await promise }
  } catch (error) {
    return { error }
  }
}

/** Process ids whose command line contains `text` (for "nothing is left running" checks). */
export function processesWith(text) {
  const found = []
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue
    try {
      const cmdline = readFileSync(`/proc/${entry}/cmdline`, 'utf8')
      if (cmdline.includes(text) && alive(Number(entry))) found.push(Number(entry))
    } catch {
      // gone meanwhile
    }
  }
  return found
}

let markerSeq = 0
/** A unique `--marker=` flag for the fixture server. */
export function marker() {
  return `--marker=mcp-native-${process.pid}-${Date.now()}-${++markerSeq}`
}
