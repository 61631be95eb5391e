// The agent's src/mcp/client.ts on mcp-native (SPEC 11.2): its project directory and logger injected.
import { getProjectDir, logger } from '@oh-my-pi/pi-utils'
import { configureMCP } from 'mcp-native/configure'

configureMCP({ getProjectDir, logger })
export * from 'mcp-native/client'
