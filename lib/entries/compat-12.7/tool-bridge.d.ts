// mcp-native/compat-12.7/tool-bridge: the 12.7 profile of mcp-native/tool-bridge (SPEC 11.3); the same objects.
export * from '../tool-bridge'
