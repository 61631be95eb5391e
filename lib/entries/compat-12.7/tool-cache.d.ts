// mcp-native/compat-12.7/tool-cache: the 12.7 profile of mcp-native/tool-cache (SPEC 11.3); the same objects.
export * from '../tool-cache'
