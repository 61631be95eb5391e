'use strict'
// mcp-native/compat-12.7/types: the 12.7 profile of mcp-native/types (SPEC 11.3): types only, as
// 12.7's module (see types.d.ts).
