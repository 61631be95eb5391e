// mcp-native: public type declarations (hand-written; the generated loader's are in native/index.d.ts).

// ---------------------------------------------------------------------------------------------
// JSON-RPC

export interface JsonRpcRequest {
  jsonrpc: '2.0'
  id: string | number
  method: string
  params?: Record<string, unknown>
}

export interface JsonRpcNotification {
  jsonrpc: '2.0'
  method: string
  params?: Record<string, unknown>
}

export interface JsonRpcError {
  code: number
  message: string
  data?: unknown
}

export interface JsonRpcResponse<T = unknown> {
  jsonrpc: '2.0'
  id: string | number
  result?: T
  error?: JsonRpcError
}

export type JsonRpcMessage = JsonRpcRequest | JsonRpcNotification | JsonRpcResponse

// ---------------------------------------------------------------------------------------------
// Server configuration (the .mcp.json shape)

export interface MCPAuthConfig {
  type: 'oauth' | 'apikey'
  credentialId?: string
  /** The token endpoint, kept for refreshing the credential (18.3.4). */
  tokenUrl?: string
  /** The OAuth client, kept for refreshing (18.3.4). */
  clientId?: string
  clientSecret?: string
  /** The resource indicator (RFC 8707) used when refreshing (18.3.4). */
  resource?: string
}

/** How outgoing JSON-RPC request ids are written (18.3.4 `requestIdFormat`). */
export type MCPRequestIdFormat = 'string' | 'number'

interface MCPServerConfigBase {
  /** Default true. */
  enabled?: boolean
  /** Per-request timeout in milliseconds. Default 30000; 0 times out at once. */
  timeout?: number
  auth?: MCPAuthConfig
  /** How request ids are written: JSON numbers (default), or `"string"`. */
  requestIdFormat?: MCPRequestIdFormat
  /** Whether the server's instructions reach the agent (default true; the root manager's
   * `getServerInstructions` honours it). */
  instructions?: boolean
  /** The agent's OAuth client settings for this server (its login flow reads them; carried as they are). */
  oauth?: {
    clientId?: string
    clientSecret?: string
    scope?: string
    redirectUri?: string
    callbackPort?: number
    callbackPath?: string
    prompt?: string
  }
}

export interface MCPStdioServerConfig extends MCPServerConfigBase {
  /** A missing type means stdio. */
  type?: 'stdio'
  command: string
  args?: string[]
  /** Merged over `process.env`. */
  env?: Record<string, string>
  /** `"literal"`: env values are the package's data as they are (the root manager resolves none). */
  envPolicy?: 'literal'
  /** Env keys whose values the root manager keeps as they are. */
  envLiteralKeys?: string[]
  /** Default: the project directory ($PWD when it is the process's working directory). */
  cwd?: string
  /** [beyond] Longest accepted message line in bytes; longer ones are discarded. Default 128 MiB. */
  maxMessageBytes?: number
  /** [beyond] How long close() waits after SIGTERM before SIGKILL. Default 2000. */
  killGraceMs?: number
}

export interface MCPHttpServerConfig extends MCPServerConfigBase {
  type: 'http'
  url: string
  headers?: Record<string, string>
  /** [beyond] Configured headers never replace the protocol headers (content type, `Accept`), and a
   * configured `MCP-Protocol-Version` is dropped: the agent's rule (18.3.4), which the root's client,
   * manager and `createTransport` set. Without it (12.7, SPEC 3.3) configured headers override them. */
  protocolHeadersWin?: boolean
  /** [beyond] The GET stream of server messages ending with nothing to resume from (or its
   * resumption failing) closes the transport, so that a server that went away while idle is
   * noticed (18.2.1): the root manager sets it on its connections (18.3.4 reconnects on the
   * stream's end). A GET answered with a 2xx that is not an event stream is no stream. Without it
   * the stream is reconnected quietly. */
  closeOnStreamLoss?: boolean
  /** `"origin-locked"`: header values are literal (the root manager resolves none); configured
   * headers never go to another origin (the package's transports never follow a redirect to one). */
  headerPolicy?: 'origin-locked'
  /** [beyond] Largest accepted SSE event or JSON body in bytes. Default 128 MiB. */
  maxMessageBytes?: number
}

export interface MCPSseServerConfig extends MCPServerConfigBase {
  type: 'sse'
  url: string
  headers?: Record<string, string>
  /** See MCPHttpServerConfig. */
  headerPolicy?: 'origin-locked'
  /** [beyond] Largest accepted SSE event or JSON body in bytes. Default 128 MiB. */
  maxMessageBytes?: number
}

export type MCPServerConfig = MCPStdioServerConfig | MCPHttpServerConfig | MCPSseServerConfig

export interface MCPConfigFile {
  $schema?: string
  mcpServers?: Record<string, MCPServerConfig>
  /** Names hidden whatever a source says. */
  disabledServers?: string[]
  /** Names shown although a read-only source disables them. */
  enabledServers?: string[]
}

// ---------------------------------------------------------------------------------------------
// Protocol

/** An icon of a server, tool or resource. */
export interface MCPIcon {
  src: string
  mimeType?: string
  sizes?: string[]
  theme?: 'light' | 'dark'
}

export interface MCPImplementation {
  name: string
  title?: string
  version: string
  description?: string
  websiteUrl?: string
  icons?: MCPIcon[]
}

export interface MCPClientCapabilities {
  roots?: { listChanged?: boolean }
  sampling?: Record<string, never>
  experimental?: Record<string, unknown>
}

export interface MCPServerCapabilities {
  tools?: { listChanged?: boolean }
  resources?: { subscribe?: boolean; listChanged?: boolean }
  prompts?: { listChanged?: boolean }
  logging?: Record<string, never>
  experimental?: Record<string, unknown>
}

export interface MCPInitializeParams {
  protocolVersion: string
  capabilities: MCPClientCapabilities
  clientInfo: MCPImplementation
}

export interface MCPInitializeResult {
  protocolVersion: string
  capabilities: MCPServerCapabilities
  serverInfo: MCPImplementation
  instructions?: string
}

export interface MCPToolAnnotations {
  title?: string
  readOnlyHint?: boolean
  destructiveHint?: boolean
  idempotentHint?: boolean
  openWorldHint?: boolean
}

export interface MCPToolExecution {
  taskSupport?: 'forbidden' | 'optional' | 'required'
}

export interface MCPToolDefinition {
  name: string
  title?: string
  description?: string
  icons?: MCPIcon[]
  inputSchema: {
    type: 'object'
    properties?: Record<string, unknown>
    required?: string[]
    [key: string]: unknown
  }
  outputSchema?: Record<string, unknown>
  execution?: MCPToolExecution
  annotations?: MCPToolAnnotations
  _meta?: Record<string, unknown>
}

export interface MCPToolsListResult {
  tools: MCPToolDefinition[]
  nextCursor?: string
}

export interface MCPToolCallParams {
  name: string
  arguments?: Record<string, unknown>
}

export interface MCPTextContent {
  type: 'text'
  text: string
}

export interface MCPImageContent {
  type: 'image'
  data: string
  mimeType: string
}

export interface MCPResourceContent {
  type: 'resource'
  resource: { uri: string; mimeType?: string; text?: string; blob?: string }
}

export type MCPContent = MCPTextContent | MCPImageContent | MCPResourceContent

export interface MCPToolCallResult {
  content: MCPContent[]
  isError?: boolean
  structuredContent?: Record<string, unknown>
  _meta?: Record<string, unknown>
}

// ---------------------------------------------------------------------------------------------
// Transport contract

export interface MCPRequestOptions {
  /** Aborting rejects the request with `signal.reason` and tells the server. */
  signal?: AbortSignal
  /** [beyond] Overrides `config.timeout` for this request (milliseconds). */
  timeout?: number
  /** [beyond] Sets `params._meta.progressToken` and receives the matching `notifications/progress`. */
  onProgress?: (progress: { progress: number; total?: number; message?: string }) => void
  /** [beyond] A progress notification restarts the request's timer (default false). */
  resetTimeoutOnProgress?: boolean
  /** [beyond] With `resetTimeoutOnProgress`: the timer never runs past this many ms from the start. */
  maxTotalTimeout?: number
}

/** [beyond] Handler for server→client requests; its value (or thrown error) is the reply. */
export type MCPRequestHandler = (method: string, params: unknown) => unknown | Promise<unknown>

export interface MCPTransport {
  request<T = unknown>(method: string, params?: Record<string, unknown>, options?: MCPRequestOptions): Promise<T>
  notify(method: string, params?: Record<string, unknown>): Promise<void>
  close(): Promise<void>
  readonly connected: boolean
  onClose?: () => void
  onError?: (error: Error) => void
  onNotification?: (method: string, params: unknown) => void
  /** [beyond] */
  onRequest?: MCPRequestHandler
}

export type TransportFactory = (config: MCPServerConfig) => Promise<MCPTransport>

// ---------------------------------------------------------------------------------------------
// Client state

export interface SourceMeta {
  provider: string
  providerName: string
  path: string
  level: 'user' | 'project' | 'native'
}

export interface MCPServerConnection {
  name: string
  config: MCPServerConfig
  transport: MCPTransport
  serverInfo: MCPImplementation
  capabilities: MCPServerCapabilities
  tools?: MCPToolDefinition[]
  _source?: SourceMeta
  /** The server's instructions (root `connectToServer`). */
  instructions?: string
  /** Cached by `listResources` / `listResourceTemplates` / `listPrompts` (root). */
  resources?: MCPResource[]
  resourceTemplates?: MCPResourceTemplate[]
  prompts?: MCPPrompt[]
}

export interface MCPToolWithServer {
  server: MCPServerConnection
  tool: MCPToolDefinition
}

/** The stable `code` of the package's errors ([beyond]); a failed spawn has the OS error name (`ENOENT`). */
export type MCPErrorCode =
  | 'MCP_TIMEOUT'
  | 'MCP_TRANSPORT_CLOSED'
  | 'MCP_NOT_CONNECTED'
  | 'MCP_RPC_ERROR'
  | 'MCP_MESSAGE_TOO_LARGE'
  | 'MCP_HTTP_ERROR'
  | 'MCP_SESSION_EXPIRED'
  | 'MCP_NO_RESPONSE'
  | 'MCP_PARSE_ERROR'
  | 'MCP_IO_ERROR'
  | 'MCP_BACKLOG'
  | 'MCP_UNSUPPORTED_PROTOCOL'
  | 'MCP_INVALID_CONFIG'
  | 'MCP_INVALID_PARAMS'
  | 'MCP_INTERNAL'
  | 'MCP_OAUTH_ERROR'
  | 'MCP_STORE_ERROR'

/**
 * Errors are plain `Error`s; these optional members say more. [beyond]
 * `code`: one of {@link MCPErrorCode}, or the OS error name (`ENOENT`, `EACCES`) for a failed
 * spawn. `MCP_INVALID_CONFIG` messages name the field; `MCP_INTERNAL` is a defect of this
 * package caught at its boundary (a Rust panic), never a crash of the host.
 */
export interface MCPError extends Error {
  code?: MCPErrorCode | (string & {})
  /** JSON-RPC `error.code`. */
  rpcCode?: number
  /** JSON-RPC `error.data`. */
  data?: unknown
  /** Stdio: exit code of a server that ended on its own. */
  exitCode?: number | null
  /** Stdio: signal that ended the server. */
  signal?: string | null
  /** Stdio: the last 64 KiB of the server's stderr. */
  stderr?: string
  /** HTTP: the status of a non-2xx answer. */
  status?: number
  /** `MCP_TIMEOUT`: the deadline that passed, in milliseconds. */
  timeout?: number
  /** `MCP_UNSUPPORTED_PROTOCOL`: the revision the server answered with. */
  protocolVersion?: unknown
  /** A failed spawn, as Node's own: `spawn <command>`. */
  syscall?: string
  /** A failed spawn: the command. */
  path?: string
  /**
   * `MCP_OAUTH_ERROR` of the `oauth` option: what kind of failure (`needs_client_credentials`,
   * `iss_mismatch`, `state_mismatch`, `resource_mismatch`, `issuer_mismatch`, `pkce_unsupported`,
   * `insufficient_scope`, `token_endpoint`, `token_rejected`, `authorization_denied`, `discovery`,
   * `registration`, `callback`, `authorizer`, `store`, `config`).
   */
  reason?: string
}

// ---------------------------------------------------------------------------------------------
// Transports

/** MCP over a child process's stdin/stdout, newline-delimited JSON. */
export declare class StdioTransport implements MCPTransport {
  /** Spawns nothing; `connect()` does. */
  constructor(config: MCPStdioServerConfig)
  readonly config: MCPStdioServerConfig
  readonly connected: boolean
  /** [beyond] The server's process id while connected. */
  readonly pid: number | null
  onClose?: () => void
  onError?: (error: Error) => void
  onNotification?: (method: string, params: unknown) => void
  /** [beyond] Receives the server's stderr as it arrives. */
  onStderr?: (chunk: string) => void
  /** [beyond] Answers server→client requests other than `ping`. */
  onRequest?: MCPRequestHandler
  /** Spawns the server; resolves once the process has started. No-op while connected. */
  connect(): Promise<void>
  request<T = unknown>(method: string, params?: Record<string, unknown>, options?: MCPRequestOptions): Promise<T>
  notify(method: string, params?: Record<string, unknown>): Promise<void>
  /** Closes stdin, SIGTERMs the process group, SIGKILLs after `killGraceMs`, reaps; then onClose. */
  close(): Promise<void>
}

export declare function createStdioTransport(config: MCPStdioServerConfig): Promise<StdioTransport>

/**
 * MCP over Streamable HTTP: one POST per message, JSON or SSE replies, session id kept.
 * For `type: "http"` and `type: "sse"` configs.
 */
export declare class HttpTransport implements MCPTransport {
  /** Does no I/O; neither does `connect()`. */
  constructor(config: MCPHttpServerConfig | MCPSseServerConfig)
  readonly config: MCPHttpServerConfig | MCPSseServerConfig
  readonly url: string
  readonly connected: boolean
  /** [beyond] The session id the server assigned, if any. */
  readonly sessionId: string | undefined
  /** [beyond] The protocol version negotiated by a successful `initialize`. */
  readonly protocolVersion: string | undefined
  onClose?: () => void
  onError?: (error: Error) => void
  onNotification?: (method: string, params: unknown) => void
  /** [beyond] Answers server→client requests other than `ping`. */
  onRequest?: MCPRequestHandler
  /**
   * The agent's hook (18.3.4): a request or notification refused with HTTP 401 or 403 calls it,
   * and the headers it resolves to replace the configured ones (for this and later requests)
   * before the request is sent once more; that outcome is final (a second 401 is thrown). Never
   * for a request the server accepted (an SSE reply whose resumption is refused fails as the lost
   * answer). `null`, a throw or rejection (told to `onError`), anything but an object of strings,
   * a header the config would refuse (a value with CR/LF), or no answer within the request's
   * timeout (at most 60 s) leave the refusal's error as it was. Refusals that arrive while a call
   * is in flight share it; a request made before new headers arrived is retried with them.
   */
  onAuthError?: () => Promise<Record<string, string> | null>
  /** Marks the transport connected; no I/O. */
  connect(): Promise<void>
  /**
   * Opens the GET stream for server-initiated messages; resolves when it ends for good (405,
   * too many failed reconnects) or close() stops it; at once when not connected or already listening.
   */
  startSSEListener(options?: { keepAlive?: boolean }): Promise<void>
  request<T = unknown>(method: string, params?: Record<string, unknown>, options?: MCPRequestOptions): Promise<T>
  notify(method: string, params?: Record<string, unknown>): Promise<void>
  /** Rejects pending requests, sends DELETE for the session (outcome ignored), then onClose. */
  close(): Promise<void>
}

export declare function createHttpTransport(config: MCPHttpServerConfig | MCPSseServerConfig): Promise<HttpTransport>

// ---------------------------------------------------------------------------------------------
// One-shot HTTP helpers (mcp-native/json-rpc)

/** [beyond] Options of the 12.7 `callMCP` (mcp-native/compat-12.7/json-rpc); the root's take them too. */
export interface CallMCPOptions {
  headers?: Record<string, string>
  /** A deadline in milliseconds (12.7: 60 s by default in every case). */
  timeout?: number
  signal?: AbortSignal
}

/** A `fetch` as `callMCP` calls it. */
export type MCPFetchImpl = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** Options of the root's `callMCP` (18.3.4 `CallMcpOptions`), and this package's `timeout`. */
export interface CallMcpOptions {
  /** Without it, the request has a 60 s deadline. */
  signal?: AbortSignal
  /** The `fetch` to use; the global one by default. */
  fetch?: MCPFetchImpl
  /** Headers over the JSON-RPC defaults. */
  headers?: Record<string, string>
  /** The error to throw for a non-2xx answer (its body already read). */
  onHttpError?: (response: Response, body: string) => Error
  /** The error to throw for a malformed answer or one to another request. */
  onParseError?: (error: unknown) => Error
  /** [beyond] A deadline in milliseconds, with or without `signal`. */
  timeout?: number
}

/**
 * Parses an MCP HTTP response body: the first truthy JSON value of a `data: ` line (`[DONE]`
 * skipped; an invalid one throws SyntaxError), else the whole text as JSON, else null.
 */
export declare function parseSSE(text: string): unknown

/**
 * POSTs one JSON-RPC request and resolves with the answer to it, from a JSON or SSE body
 * (notifications and answers to other ids passed over); a JSON-RPC `error` is returned, not thrown.
 */
export declare function callMCP<T = unknown>(
  url: string,
  method: string,
  params?: Record<string, unknown>,
  options?: CallMcpOptions,
): Promise<JsonRpcResponse<T>>

/** The answer to request `expectedId` in an HTTP response (JSON or SSE); malformed messages fail. */
export declare function readMcpJsonRpcResponse(
  response: Response,
  expectedId: string | number,
  signal?: AbortSignal,
): Promise<JsonRpcResponse>

/** `url` with credential-like query values (key, token, secret, auth) replaced by `[redacted]`. */
export declare function redactUrlForLog(url: string): string

// ---------------------------------------------------------------------------------------------
// Client (mcp-native/client)

/** Options of the handshake. [beyond] (the reference hard-codes the defaults) */
export interface MCPHandshakeOptions {
  /** Default `"2025-03-26"`. The server may answer with another supported revision. */
  protocolVersion?: string
  /** Default `{ roots: { listChanged: false } }`. */
  capabilities?: MCPClientCapabilities & Record<string, unknown>
  /** Default `{ name: "omp-coding-agent", version: "1.0.0" }`. */
  clientInfo?: MCPImplementation
  /**
   * [beyond] OAuth for Streamable HTTP servers (SPEC 10): a 401 starts discovery, registration
   * and authorization; every request then carries the bearer token, refreshed when near expiry.
   * A static `Authorization` header in the config wins (the flow never starts). Failures reject
   * with code `MCP_OAUTH_ERROR` (and `reason`, e.g. `needs_client_credentials`).
   */
  oauth?: MCPOAuthOptions
}

/** [beyond] What `onAuthorize` is shown. */
export interface MCPAuthorizationPrompt {
  /** The authorization URL to open. */
  url: string
  /** The server's name. */
  serverName?: string
  /** The MCP server's URL. */
  serverUrl: string
  /** The scopes requested. */
  scopes: string[]
  /** Where the authorization server will redirect. */
  redirectUri: string
}

/** [beyond] Where tokens and registrations are kept; values are JSON text. Keep them confidential. */
export interface MCPOAuthStore {
  get(key: string): string | null | undefined | Promise<string | null | undefined>
  set(key: string, value: string): void | Promise<void>
  delete(key: string): void | Promise<void>
}

/** [beyond] The `oauth` option (SPEC 10.3). */
export interface MCPOAuthOptions {
  /** `client_name` of a dynamic registration. */
  clientName: string
  /** The redirect URI (a loopback `http://127.0.0.1:<port>/callback` for `"loopback"`). */
  redirectUri: string
  /** Default: `native` for a loopback redirect URI, else `web`. */
  applicationType?: 'native' | 'web'
  /** A client ID metadata document URL (https, with a path), used where the server supports it. */
  clientMetadataUrl?: string
  /** Credentials registered beforehand; without `issuer`, bound to the first issuer used. */
  preRegistered?: Array<{ issuer?: string; clientId: string; clientSecret?: string }>
  /**
   * A function shown the prompt that resolves with the full callback URL (query intact; bounded
   * by 5 minutes); `"loopback"`: listen on the redirect URI's port and call `openUrl`;
   * `"headless"`: GET the URL without following the redirect (tests, servers that need no user).
   */
  onAuthorize: ((prompt: MCPAuthorizationPrompt) => string | Promise<string>) | 'loopback' | 'headless'
  /** For `"loopback"`: opens the URL (without it: the manager's logger at `warn`, a client's `onWarning`, else a process warning). */
  openUrl?: (url: string) => void | Promise<void>
  /** Default: in memory (`MCPClient`), `mcp-oauth.json` (0600) in the agent directory (`MCPManager`). */
  store?: MCPOAuthStore
}

/** [beyond] Reconnect after an unexpected close, with capped exponential backoff. */
export interface MCPReconnectOptions {
  /** Default 5. */
  maxAttempts?: number
  /** Delay before the first attempt; doubles after each failure. Default 500. */
  initialDelayMs?: number
  /** Default 30000. */
  maxDelayMs?: number
}

export interface MCPConnectOptions extends MCPHandshakeOptions {
  /** Aborting cancels the attempt and closes its transport. */
  signal?: AbortSignal
}

export interface MCPClientOptions extends MCPHandshakeOptions {
  /** Off by default; `true` uses the defaults. */
  reconnect?: boolean | MCPReconnectOptions
}

/** A transport for `config` by its `type` (`stdio` when missing). [beyond: exported] */
export declare function createTransport(config: MCPServerConfig): Promise<MCPTransport>

/** `connectToServer`'s options at the root (18.3.4), and this package's handshake options ([beyond]). */
export interface MCPCurrentConnectOptions extends MCPConnectOptions {
  /** The server's notifications. */
  onNotification?: (method: string, params: unknown) => void
  /** The server's requests. Default: `ping`, and `roots/list` with the project directory; others -32601. */
  onRequest?: (method: string, params: unknown) => Promise<unknown>
}

/** A connect that did not finish within the server's timeout. */
export declare class MCPConnectionTimeoutError extends Error {
  constructor(serverName: string, timeoutMs: number)
  readonly name: 'MCPConnectionTimeoutError'
  readonly serverName: string
  readonly timeoutMs: number
  /** [beyond] */
  readonly code: 'MCP_TIMEOUT'
}

/**
 * Creates the transport and runs the handshake (protocol revision 2025-11-25), within
 * `OMP_MCP_TIMEOUT_MS`, else `config.timeout`, else 30 s — 0 means no deadline — or rejects with
 * `MCPConnectionTimeoutError`. On any failure the transport is closed before the promise rejects.
 * The 12.7 function is `mcp-native/compat-12.7`'s.
 */
export declare function connectToServer(
  name: string,
  config: MCPServerConfig,
  options?: MCPCurrentConnectOptions,
): Promise<MCPServerConnection>

export interface MCPAnnotations {
  audience?: ('user' | 'assistant')[]
  priority?: number
  lastModified?: string
}
/** A resource of `resources/list`. */
export interface MCPResource {
  uri: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  size?: number
  annotations?: MCPAnnotations
}
/** A template of `resources/templates/list`. */
export interface MCPResourceTemplate {
  uriTemplate: string
  name: string
  title?: string
  description?: string
  mimeType?: string
  annotations?: MCPAnnotations
}
export interface MCPResourcesListResult {
  resources: MCPResource[]
  nextCursor?: string
}
export interface MCPResourceTemplatesListResult {
  resourceTemplates: MCPResourceTemplate[]
  nextCursor?: string
}
export interface MCPResourceContentItem {
  uri: string
  mimeType?: string
  text?: string
  blob?: string
}
export interface MCPResourceReadResult {
  contents: MCPResourceContentItem[]
}
export interface MCPResourceReadParams {
  uri: string
}
export interface MCPResourceSubscribeParams {
  uri: string
}
export interface MCPPromptArgument {
  name: string
  description?: string
  required?: boolean
}
/** A prompt of `prompts/list`. */
export interface MCPPrompt {
  name: string
  title?: string
  description?: string
  arguments?: MCPPromptArgument[]
}
export interface MCPPromptsListResult {
  prompts: MCPPrompt[]
  nextCursor?: string
}
export interface MCPAudioContent {
  type: 'audio'
  data: string
  mimeType: string
}
export type MCPPromptContent = MCPTextContent | MCPImageContent | MCPAudioContent | MCPResourceContent
export interface MCPPromptMessage {
  role: 'user' | 'assistant'
  content: MCPPromptContent | MCPPromptContent[]
}
export interface MCPGetPromptParams {
  name: string
  arguments?: Record<string, string>
}
export interface MCPGetPromptResult {
  description?: string
  messages: MCPPromptMessage[]
}

/** All resources (paged), cached on `connection.resources`; `[]` without the capability. */
export declare function listResources(connection: MCPServerConnection, options?: MCPRequestOptions): Promise<MCPResource[]>
/** All templates, cached; a server without the method (-32601) has none. */
export declare function listResourceTemplates(connection: MCPServerConnection, options?: MCPRequestOptions): Promise<MCPResourceTemplate[]>
export declare function readResource(
  connection: MCPServerConnection,
  uri: string,
  options?: MCPRequestOptions,
): Promise<MCPResourceReadResult>
/** One request per URI, failures logged (`options.logger`), nothing without `resources.subscribe`. */
export declare function subscribeToResources(
  connection: MCPServerConnection,
  uris: string[],
  options?: MCPRequestOptions & { logger?: { warn?(message: string, details?: unknown): void } },
): Promise<void>
export declare function unsubscribeFromResources(
  connection: MCPServerConnection,
  uris: string[],
  options?: MCPRequestOptions & { logger?: { warn?(message: string, details?: unknown): void } },
): Promise<void>
/** All prompts, cached on `connection.prompts`; `[]` without the capability. */
export declare function listPrompts(connection: MCPServerConnection, options?: MCPRequestOptions): Promise<MCPPrompt[]>
/** `prompts/get`; empty arguments are not sent. */
export declare function getPrompt(
  connection: MCPServerConnection,
  name: string,
  args?: Record<string, string>,
  options?: MCPRequestOptions,
): Promise<MCPGetPromptResult>
export declare function serverSupportsResources(capabilities: MCPServerCapabilities): boolean
export declare function serverSupportsResourceSubscriptions(capabilities: MCPServerCapabilities): boolean
export declare function serverSupportsPrompts(capabilities: MCPServerCapabilities): boolean

/** All tools (paged, at most 1000 pages), cached on `connection.tools`; `[]` without the tools capability. */
export declare function listTools(connection: MCPServerConnection, options?: { signal?: AbortSignal }): Promise<MCPToolDefinition[]>

/** `tools/call`; resolves with the raw result (`isError: true` is not thrown). */
export declare function callTool(
  connection: MCPServerConnection,
  toolName: string,
  args?: Record<string, unknown>,
  options?: MCPRequestOptions,
): Promise<MCPToolCallResult>

export declare function disconnectServer(connection: MCPServerConnection): Promise<void>

export declare function serverSupportsTools(capabilities: MCPServerCapabilities): boolean

/** [beyond] One server, one object: the function API's semantics plus events and reconnect. */
export declare class MCPClient {
  static connect(name: string, config: MCPServerConfig, options?: MCPClientOptions & { signal?: AbortSignal }): Promise<MCPClient>
  /** Connects nothing; `connect()` does. */
  constructor(name: string, config: MCPServerConfig, options?: MCPClientOptions)
  readonly name: string
  readonly config: MCPServerConfig
  readonly connected: boolean
  readonly state: 'idle' | 'connecting' | 'connected' | 'reconnecting' | 'closed'
  readonly serverInfo: MCPImplementation | undefined
  readonly capabilities: MCPServerCapabilities | undefined
  readonly instructions: string | undefined
  readonly protocolVersion: string | undefined
  readonly transport: MCPTransport | undefined
  /** The `MCPServerConnection` for the function API and the manager (same object across reconnects). */
  readonly connection: MCPServerConnection | undefined
  onNotification?: (method: string, params: unknown) => void
  /** Once, when the client is closed for good (close(), a drop without reconnect, reconnect gave up). */
  onClose?: () => void
  onError?: (error: Error) => void
  onStderr?: (chunk: string) => void
  /** Server→client requests (`ping` is always answered; without a handler `roots/list` gets no roots). */
  onRequest?: MCPRequestHandler
  /** Every status change: `connecting` (also while reconnecting), `connected`, `disconnected`. */
  onStatus?: (status: 'connecting' | 'connected' | 'disconnected', error?: Error) => void
  /** [beyond] Something worth a log line (a tool left out of `tools/list` for an invalid `x-mcp-header`, SPEC 9.1). */
  onWarning?: (message: string) => void
  connect(options?: { signal?: AbortSignal }): Promise<MCPServerConnection>
  close(): Promise<void>
  request<T = unknown>(method: string, params?: Record<string, unknown>, options?: MCPRequestOptions): Promise<T>
  notify(method: string, params?: Record<string, unknown>): Promise<void>
  ping(): Promise<void>
  listTools(options?: { signal?: AbortSignal }): Promise<MCPToolDefinition[]>
  refreshTools(options?: { signal?: AbortSignal }): Promise<MCPToolDefinition[]>
  callTool(name: string, args?: Record<string, unknown>, options?: MCPRequestOptions): Promise<MCPToolCallResult>
  listResources(options?: MCPRequestOptions): Promise<Array<{ uri: string; name?: string; mimeType?: string; [key: string]: unknown }>>
  readResource(
    uri: string,
    options?: MCPRequestOptions,
  ): Promise<{ contents: Array<{ uri: string; mimeType?: string; text?: string; blob?: string }> }>
  listPrompts(
    options?: MCPRequestOptions,
  ): Promise<Array<{ name: string; description?: string; arguments?: unknown[]; [key: string]: unknown }>>
  getPrompt(
    name: string,
    args?: Record<string, string>,
    options?: MCPRequestOptions,
  ): Promise<{ description?: string; messages: unknown[] }>
}

// ---------------------------------------------------------------------------------------------
// Manager (mcp-native/manager)

import type { MCPToolCache } from './lib/entries/tool-cache'
export { MCPToolCache } from './lib/entries/tool-cache'
export type { MCPToolCacheStorage, MCPToolCacheStore, MCPToolCacheOptions, OpenMCPToolCache } from './lib/entries/tool-cache'
export {
  readMCPConfigFile,
  writeMCPConfigFile,
  validateServerName,
  addMCPServer,
  updateMCPServer,
  removeMCPServer,
  getMCPServer,
  listMCPServers,
  getMCPConfigPath,
  readDisabledServers,
  setServerDisabled,
  readEnabledServers,
  setServerForceEnabled,
  setMcpServerEnabled,
} from './lib/entries/config-writer'
export type { SetMcpServerEnabledOptions } from './lib/entries/config-writer'
export { discoverAndLoadMCPTools } from './lib/entries/loader'
export { loadAllMCPConfigs, validateServerConfig, isExaMCPServer, filterExaMCPServers, extractExaApiKey } from './lib/entries/config'
export type { LoadMCPConfigsOptions, LoadMCPConfigsResult, ExaFilterResult, MCPConfigProviderId } from './lib/entries/config'
export {
  analyzeAuthError,
  detectAuthError,
  discoverOAuthEndpoints,
  extractOAuthEndpoints,
  extractMcpAuthServerUrl,
  extractOAuthChallengeScopes,
  rfc9728ProtectedResourceMetadataUrl,
  fetchResourceMetadataScopes,
  buildWellKnownUrls,
} from './lib/entries/oauth-discovery'
export type {
  AuthDetectionResult,
  OAuthEndpoints,
  DiscoverOAuthEndpointsOptions,
  FetchResourceMetadataScopesOptions,
} from './lib/entries/oauth-discovery'
export { MCPOAuthFlow } from './lib/entries/oauth-flow'
export type { MCPOAuthConfig, OAuthController, OAuthCredentials, MCPOAuthFlowOptions } from './lib/entries/oauth-flow'
export type { MCPToolsLoadOptions, MCPToolsLoadResult, LoadedMCPTool, AgentStorage } from './lib/entries/loader'

export interface AuthStorage {
  get(
    credentialId: string,
  ):
    | { type: 'oauth'; access: string }
    | { type: string }
    | undefined
    | Promise<{ type: 'oauth'; access: string } | { type: string } | undefined>
}

export interface MCPDiscoverOptions {
  enableProjectConfig?: boolean
  filterExa?: boolean
  /** [beyond] Discovery provider ids to skip (`claude`, `cursor`, …); wins over the manager's option. */
  disabledProviders?: string[]
  onConnecting?: (serverNames: string[]) => void
}

/** What `getTools()` holds by default: the tool bridge's objects (SPEC 6.2, 8.1). */
export type Tool = MCPTool | DeferredMCPTool

export interface MCPLoadResult<TTool = Tool> {
  tools: TTool[]
  errors: Map<string, string>
  connectedServers: string[]
  exaApiKeys: string[]
}

export interface MCPLoadedConfigs {
  configs: Record<string, MCPServerConfig>
  sources: Record<string, SourceMeta>
  exaApiKeys: string[]
}

/** What makes the objects of `getTools()` (default: `MCPTool.fromTools` / `DeferredMCPTool.fromTools`). */
export interface MCPToolFactory<TTool = Tool> {
  /** `reconnect`: the root manager's `reconnectServer` for this server (the 12.7 manager passes none). */
  fromTools(
    connection: MCPServerConnection,
    tools: MCPToolDefinition[],
    reconnect?: (options?: { authChallenge?: MCPAuthChallenge }) => Promise<MCPServerConnection | null>,
  ): TTool[]
  deferredFromTools(
    serverName: string,
    tools: MCPToolDefinition[],
    getConnection: () => Promise<MCPServerConnection>,
    source: SourceMeta | undefined,
    reconnect?: (options?: { authChallenge?: MCPAuthChallenge }) => Promise<MCPServerConnection | null>,
  ): TTool[]
}

/** [beyond] Options of `MCPManager` (each part of the agent the reference depended on). */
export interface MCPManagerOptions<TTool = Tool> extends MCPHandshakeOptions {
  /** Default: `loadAllMCPConfigs` (SPEC 7: every discovery source; warnings go to `logger.warn`). */
  loadConfigs?: (
    cwd: string,
    options: { enableProjectConfig: boolean; filterExa: boolean; disabledProviders?: string[] },
  ) => Promise<MCPLoadedConfigs>
  toolFactory?: MCPToolFactory<TTool>
  /** The agent's `renderMCPCall` / `renderMCPResult` for the default tool objects (SPEC 8.11). */
  renderer?: MCPToolRenderer
  /** Default: `!command` runs in a shell (10 s, cached); other values are env names or themselves. */
  resolveConfigValue?: (value: string) => Promise<string | undefined>
  /** Default: silent. */
  logger?: { error(...args: unknown[]): void; warn(...args: unknown[]): void; debug(...args: unknown[]): void }
  reconnect?: boolean | MCPReconnectOptions
  onNotification?: (serverName: string, method: string, params: unknown) => void
  onServerStatus?: (serverName: string, status: 'connecting' | 'connected' | 'disconnected', error?: Error) => void
  /**
   * Answers server→client requests (elicitation, sampling, roots) of every server. Giving it
   * declares the `elicitation` and `sampling` capabilities unless `capabilities` is given.
   */
  onRequest?: (serverName: string, method: string, params: unknown) => unknown | Promise<unknown>
  /** Discovery provider ids to skip (SPEC 7.10). */
  disabledProviders?: string[]
}

/** 18.3.4 `McpConnectionStatusEvent` (`startup-events.ts`): what `onStatus` and the status listeners hear. */
export type McpConnectionStatusEvent =
  | { type: 'connecting'; serverNames: string[] }
  | { type: 'reconnecting'; serverName: string }
  | { type: 'connected'; serverName: string }
  | { type: 'failed'; serverName: string; error: string; sourcePath?: string }

/** How the servers given to `connectServers` stand (`waitForStartup`). */
export interface MCPStartupStatus {
  /** Tools registered. */
  connected: string[]
  /** Still starting or reconnecting. */
  pending: string[]
  /** Neither, with the reason. */
  failed: Array<{ name: string; error: string }>
}

/** How the manager paces reconnects (18.3.4's default: `[500, 1000, 2000, 4000]`, 15 s, 5 min). */
export interface MCPReconnectPolicy {
  /** The waits between the attempts of one reconnect. */
  readonly ladderMs: readonly number[]
  /** A lost remote server's first quiet retry, after the ladder failed. */
  readonly retryBaseMs: number
  /** The longest wait between quiet retries (each doubles up to it). */
  readonly retryMaxMs: number
}

/** A tool result's `_meta["mcp/www_authenticate"]`. */
export interface MCPAuthChallenge {
  readonly wwwAuthenticate: readonly string[]
}

/** Completes OAuth after a tool-level challenge: the config to reconnect with, or nothing. */
export type MCPAuthHandler = (serverName: string, challenge: MCPAuthChallenge) => Promise<MCPServerConfig | undefined>

/** The agent's config loader (`loadAllMCPConfigs` and its options). */
export type MCPConfigLoader = (
  cwd: string,
  options?: {
    enableProjectConfig?: boolean
    filterExa?: boolean
    filterBrowser?: boolean
    extensionRoots?: unknown
    disabledProviders?: string[]
  },
) => Promise<MCPLoadedConfigs>

/** `discoverAndConnect`'s options at the root (18.3.4 `MCPDiscoverOptions`). */
export interface MCPCurrentDiscoverOptions {
  /** Default true. */
  enableProjectConfig?: boolean
  /** Default true. */
  filterExa?: boolean
  filterBrowser?: boolean
  extensionRoots?: unknown
  /** [beyond] Discovery provider ids to skip; wins over the manager's option. */
  disabledProviders?: string[]
  /** This discovery's status events. */
  onStatus?: (event: McpConnectionStatusEvent) => void
  /** The startup window (default 250 ms; `OMP_MCP_STARTUP_TIMEOUT_MS` wins; 0 waits for all). */
  startupTimeoutMs?: number
}

/**
 * The manager as the agent ships it today (18.3.4, SPEC 11.3–11.4): the startup window leaves
 * servers without cached tools to finish in the background; dropped servers are reconnected on a
 * ladder behind a crash-storm breaker; the agent's status events. `mcp-native/compat-12.7` has
 * the 12.7 manager.
 */
export declare class MCPManager<TTool = Tool> {
  /** The process-wide instance. */
  static instance(): MCPManager | undefined
  // biome-ignore lint/suspicious/noExplicitAny: a manager of any tool type
  static setInstance(value: MCPManager<any> | undefined): void
  static resetForTests(): void
  /**
   * The agent's positional arguments, then this package's options; a plain object in third place
   * is the options (`reconnect: false` turns the reconnect policy off).
   */
  constructor(
    cwd: string,
    toolCache?: MCPToolCache | null,
    loadConfigs?: MCPConfigLoader | MCPManagerOptions<TTool> | null,
    reconnectPolicy?: MCPReconnectPolicy | null,
    options?: MCPManagerOptions<TTool>,
  )
  readonly cwd: string
  readonly toolCache: MCPToolCache | null
  readonly reconnectPolicy: MCPReconnectPolicy
  /** [beyond] */
  onNotification?: (serverName: string, method: string, params: unknown) => void
  /** [beyond] */
  onServerStatus?: (serverName: string, status: 'connecting' | 'connected' | 'disconnected', error?: Error) => void
  addConnectionStatusListener(listener: (event: McpConnectionStatusEvent) => void): () => void
  setOnToolsChanged(handler: (tools: TTool[]) => void | Promise<void>): void
  setAuthStorage(storage: AuthStorage): void
  setAuthHandler(handler: MCPAuthHandler | undefined): void
  discoverAndConnect(options?: MCPCurrentDiscoverOptions): Promise<MCPLoadResult<TTool>>
  /** The browser-automation servers (the injected `isBrowserMCPServer`'s) disconnected when `enabled`,
   * loaded and connected again when not; serialized with `reconcileProjectConfig`. */
  reconcileBrowserFilter(enabled: boolean): Promise<void>
  /** Project-level servers disconnected when `enabled` turns false, connected when it turns true
   * (nothing before the first discovery). */
  reconcileProjectConfig(enabled: boolean): Promise<void>
  connectServers(
    configs: Record<string, MCPServerConfig>,
    sources: Record<string, SourceMeta>,
    onStatus?: (event: McpConnectionStatusEvent) => void,
    startupTimeoutMs?: number,
  ): Promise<MCPLoadResult<TTool>>
  /** All current tools, sorted by name; the same array, updated in place. */
  getTools(): TTool[]
  getConnection(name: string): MCPServerConnection | undefined
  getConnectionStatus(name: string): 'connected' | 'connecting' | 'disconnected'
  getSource(name: string): SourceMeta | undefined
  getServerConfig(name: string): MCPServerConfig | undefined
  /** Rejects with `MCP server not connected: <name>` when it is neither connected nor connecting. */
  waitForConnection(name: string): Promise<MCPServerConnection>
  /** Waits for the servers still starting or reconnecting, at most `timeoutMs` (0: no deadline). */
  waitForStartup(timeoutMs: number): Promise<MCPStartupStatus>
  waitForPendingConnections(): Promise<void>
  reconnectServer(name: string, options?: { manual?: boolean; authChallenge?: MCPAuthChallenge }): Promise<MCPServerConnection | null>
  /** Every server's notifications, after the manager's own handling; buffered (100) until the first listener. */
  addNotificationListener(listener: (serverName: string, method: string, params: unknown) => void): () => void
  addCatalogChangeListener(listener: (event: { serverName: string; kind: 'resources' | 'prompts' }) => void): () => void
  setOnResourcesChanged(handler: (serverName: string, uri: string) => void): void
  setOnPromptsChanged(handler: (serverName: string) => void): void
  /** Subscribes to (or unsubscribes from) every connected server's resources. */
  setNotificationsEnabled(enabled: boolean): void
  getNotificationState(): { enabled: boolean; subscriptions: Map<string, ReadonlySet<string>> }
  refreshServerResources(name: string): Promise<void>
  ensureServerResources(name: string): Promise<void>
  refreshServerPrompts(name: string): Promise<void>
  getServerResources(name: string): { resources: MCPResource[]; templates: MCPResourceTemplate[] } | undefined
  readServerResource(name: string, uri: string, options?: MCPRequestOptions): Promise<MCPResourceReadResult | undefined>
  getServerPrompts(name: string): MCPPrompt[] | undefined
  executePrompt(
    name: string,
    promptName: string,
    args?: Record<string, string>,
    options?: MCPRequestOptions,
  ): Promise<MCPGetPromptResult | undefined>
  /** Each connected server's instructions, unless its config says `instructions: false`. */
  getServerInstructions(): Map<string, string>
  /** The config a server is connected with: the OAuth credential injected (not with `oauth: false`;
   * refreshed first with `forceRefresh`), env or header values resolved as the config allows. */
  prepareConfig(config: MCPServerConfig, options?: { oauth?: boolean; forceRefresh?: boolean }): Promise<MCPServerConfig>
  getConnectedServers(): string[]
  getAllServerNames(): string[]
  disconnectServer(name: string): Promise<void>
  disconnectAll(): Promise<void>
  refreshServerTools(name: string): Promise<void>
  refreshAllTools(): Promise<void>
}

export declare function createMCPManager<TTool = Tool>(
  cwd: string,
  options?: MCPCurrentDiscoverOptions & MCPManagerOptions<TTool>,
): Promise<{ manager: MCPManager<TTool>; result: MCPLoadResult<TTool> }>

export { sortMCPToolsByName, resolveSubscriptionPostAction } from './lib/entries/manager'

// ---------------------------------------------------------------------------------------------
// Tool bridge (mcp-native/tool-bridge)

import type { DeferredMCPTool, MCPTool, MCPToolRenderer } from './lib/entries/tool-bridge'
export {
  MCPTool,
  DeferredMCPTool,
  ToolAbortError,
  createMCPToolName,
  parseMCPToolName,
  createLegacyMCPToolName,
  canonicalMCPToolNameCandidates,
  resolveMCPToolAlias,
  getMCPToolOriginKey,
  deduplicateMCPToolsByName,
  isRetriableConnectionError,
  type MCPReconnect,
  type MCPToolDetails,
  type MCPToolParameters,
  type MCPToolResult,
  type MCPToolRenderer,
  type MCPToolOptions,
} from './lib/entries/tool-bridge'

// ---------------------------------------------------------------------------------------------
// The agent's objects, injected (mcp-native/configure, SPEC 11.2)

export { configureMCP, configuredHooks } from './lib/entries/configure'
export type { MCPHooks, MCPHookLogger } from './lib/entries/configure'
