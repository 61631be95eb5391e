// mcp-native/compat-12.7/config: the 12.7 profile of mcp-native/config (SPEC 11.3); the same objects.
export * from '../config'
