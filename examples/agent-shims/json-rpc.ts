// The agent's src/mcp/json-rpc.ts on mcp-native (SPEC 11.2): its logger injected.
import { logger } from '@oh-my-pi/pi-utils'
import { configureMCP } from 'mcp-native/configure'

configureMCP({ logger })
export * from 'mcp-native/json-rpc'
