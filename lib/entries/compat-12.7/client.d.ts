// mcp-native/compat-12.7/client: the 12.7 profile of mcp-native/client (SPEC 11.3); the same objects.
export * from '../client'
