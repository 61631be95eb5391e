// mcp-native/transports: mirrors the reference module `transports/index.ts`.
export { StdioTransport, createStdioTransport, HttpTransport, createHttpTransport } from '../../index'
