// The agent's src/mcp/types.ts on mcp-native (SPEC 11.2): nothing of the agent's to inject.
export * from 'mcp-native/types'
