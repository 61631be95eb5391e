// mcp-native/compat-12.7/json-rpc: the 12.7 profile of mcp-native/json-rpc (SPEC 11.3); the same objects.
export * from '../json-rpc'
