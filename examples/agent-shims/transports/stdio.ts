// The agent's src/mcp/transports/stdio.ts on mcp-native (SPEC 11.2): its project directory, console
// probe (Windows) and logger injected.
import { getProjectDir, logger } from '@oh-my-pi/pi-utils'
import { configureMCP } from 'mcp-native/configure'
import { hostHasInheritableConsole } from '../../eval/py/spawn-options'

configureMCP({ getProjectDir, hostHasInheritableConsole, logger })
export * from 'mcp-native/transports/stdio'
