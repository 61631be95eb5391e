// The agent's src/mcp/manager.ts on mcp-native (SPEC 11.2): its discovery, config checks, config
// values, managed OAuth credentials and logger injected; the modules it imports configured too.
import './client'
import './tool-bridge'
import { logger } from '@oh-my-pi/pi-utils'
import { configureMCP } from 'mcp-native/configure'
import { resolveConfigValue } from '../config/resolve-config-value'
import { isBrowserMCPServer, loadAllMCPConfigs, validateServerConfig } from './config'
import { lookupMcpOAuthCredential, refreshStoredManagedMcpOAuthCredential } from './oauth-credentials'

configureMCP({ isBrowserMCPServer, loadAllMCPConfigs, validateServerConfig, resolveConfigValue, logger })
configureMCP({ lookupMcpOAuthCredential, refreshStoredManagedMcpOAuthCredential })
export * from 'mcp-native/manager'
