// mcp-native/compat-12.7: the 12.7 profile of the package (SPEC 11.3); today the same as the root.
export * from '../../index'
