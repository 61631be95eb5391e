// mcp-native/transports/stdio: the stdio transport (18.3.4 `transports/stdio.ts`).
export { StdioTransport, createStdioTransport } from '../../../index'
