// mcp-native/transports/http: the Streamable HTTP transport (18.3.4 `transports/http.ts`).
export { HttpTransport, createHttpTransport } from '../../../index'
