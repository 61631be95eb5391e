// The agent's src/mcp/loader.ts on mcp-native (SPEC 11.2): its storage (the tool cache's) and
// logger injected; the manager it imports configured too.
import './manager'
import { logger } from '@oh-my-pi/pi-utils'
import { configureMCP } from 'mcp-native/configure'
import { AgentStorage } from '../session/agent-storage'

configureMCP({ AgentStorage, logger })
export * from 'mcp-native/loader'
