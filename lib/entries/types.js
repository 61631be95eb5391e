'use strict'
// mcp-native/types: type declarations only (see types.d.ts).
