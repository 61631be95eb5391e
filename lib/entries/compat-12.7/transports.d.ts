// mcp-native/compat-12.7/transports: the 12.7 profile of mcp-native/transports (SPEC 11.3); the same objects.
export * from '../transports'
