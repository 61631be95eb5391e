// biome-ignore-all lint/suspicious/noExplicitAny: the hooks take the agent's own objects, whose types are the agent's
// mcp-native/configure: the process-wide configuration call that takes the agent's own objects
// (SPEC 11.2). Each call sets the hooks it names and leaves the others; `undefined` resets one.

/** A logger as the agent's (`@oh-my-pi/pi-utils` `logger`). */
export interface MCPHookLogger {
  error?(message: string, details?: unknown): unknown
  warn?(message: string, details?: unknown): unknown
  info?(message: string, details?: unknown): unknown
  debug?(message: string, details?: unknown): unknown
}

/** The agent's objects the package's modules use when given (the package's own behaviour otherwise). */
export interface MCPHooks {
  /** The class of tool-call aborts (`tools/tool-errors`): thrown by the tool objects. */
  ToolAbortError?: new (
    message?: string,
  ) => Error
  /** The tool objects' `parameters` from an MCP input schema (`@oh-my-pi/pi-ai/utils/schema`). */
  normalizeSchemaForMCP?: (schema: any) => any
  /** Whether a tool's schema declares the harness's intent field (`utils/tool-schema`). */
  schemaDeclaresIntentField?: (schema: any) => boolean
  /** The tool objects' renderers (`@oh-my-pi/pi-tui/tools/mcp`); both are needed. */
  renderMCPCall?: (args: Record<string, unknown>, theme: any, label: string) => any
  renderMCPResult?: (result: any, options: any, theme: any, args: Record<string, unknown>) => any
  /** The internal-URL router (`internal-urls/router`, its class or an instance) and `extractUriScheme`
   * (`internal-urls/parse`): file-backed internal URLs in tool arguments become their paths. */
  InternalUrlRouter?: any
  extractUriScheme?: (url: string) => string | null | undefined
  /** The agent's config discovery and checks (`mcp/config`, `config/resolve-config-value`). */
  loadAllMCPConfigs?: (cwd: string, options?: any) => Promise<any>
  isBrowserMCPServer?: (name: string, config: any) => boolean
  validateServerConfig?: (name: string, config: any) => string[]
  resolveConfigValue?: (value: string, options?: any) => any
  /** The agent's managed OAuth credentials (`mcp/oauth-credentials`). */
  lookupMcpOAuthCredential?: (...args: any[]) => any
  refreshStoredManagedMcpOAuthCredential?: (...args: any[]) => any
  /** The config writer's lock (`@oh-my-pi/pi-utils/file-lock`) and the discovery cache's
   * invalidation after a write (`capability/fs` `invalidate`). */
  withFileLock?: <T>(path: string, fn: () => Promise<T>, options?: any) => Promise<T>
  invalidateConfigCache?: (path: string) => unknown
  /** The agent's storage (`session/agent-storage`): the tool cache's store. */
  AgentStorage?: any
  /** The project directory (`@oh-my-pi/pi-utils`): `roots/list`, a stdio server's default cwd. */
  getProjectDir?: () => string
  /** Whether the host has a console its children can share (`eval/py/spawn-options`; Windows). */
  hostHasInheritableConsole?: () => boolean
  /** The logger of every module. */
  logger?: MCPHookLogger
}

/** Sets the hooks named; an unknown name or a value of the wrong kind throws and sets nothing. */
export declare function configureMCP(hooks: MCPHooks): void
/** The hooks in force, by name. */
export declare function configuredHooks(): MCPHooks
