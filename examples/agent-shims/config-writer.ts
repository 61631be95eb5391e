// The agent's src/mcp/config-writer.ts on mcp-native (SPEC 11.2): its file lock (so that agents on
// either layer exclude each other) and its discovery cache's invalidation injected.
import { withFileLock } from '@oh-my-pi/pi-utils/file-lock'
import { configureMCP } from 'mcp-native/configure'
import { invalidate } from '../capability/fs'

configureMCP({ withFileLock, invalidateConfigCache: invalidate })
export * from 'mcp-native/config-writer'
