// mcp-native/compat-12.7: the 12.7 profile of the package (SPEC 11.3): the root's names, with
// 12.7's where the two conflict.
export * from '../../index'
export { MCPManager, createMCPManager } from './compat-12.7/manager'
export {
  discoverAndLoadMCPTools,
  type MCPToolsLoadOptions,
  type MCPToolsLoadResult,
} from './compat-12.7/loader'
