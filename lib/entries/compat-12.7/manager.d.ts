// mcp-native/compat-12.7/manager: the 12.7 profile of mcp-native/manager (SPEC 11.3); the same objects.
export * from '../manager'
