// The agent's src/mcp/tool-bridge.ts on mcp-native (SPEC 11.2): its abort error, schema rules,
// renderers, internal-URL router and logger injected.
import { normalizeSchemaForMCP } from '@oh-my-pi/pi-ai/utils/schema'
import { renderMCPCall, renderMCPResult } from '@oh-my-pi/pi-tui/tools/mcp'
import { logger } from '@oh-my-pi/pi-utils'
import { configureMCP } from 'mcp-native/configure'
import { extractUriScheme } from '../internal-urls/parse'
import { InternalUrlRouter } from '../internal-urls/router'
import { ToolAbortError } from '../tools/tool-errors'
import { schemaDeclaresIntentField } from '../utils/tool-schema'

configureMCP({ ToolAbortError, normalizeSchemaForMCP, schemaDeclaresIntentField, renderMCPCall, renderMCPResult, logger })
configureMCP({ InternalUrlRouter, extractUriScheme })
export * from 'mcp-native/tool-bridge'
