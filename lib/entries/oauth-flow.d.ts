// mcp-native/oauth-flow: the reference module `oauth-flow.ts` (SPEC 8.7, 8.11).

/** Endpoints and client of one OAuth login. */
export interface MCPOAuthConfig {
  authorizationUrl: string
  tokenUrl: string
  /** A pre-registered client id; without one (and without `client_id` in `authorizationUrl`) the flow registers a client. */
  clientId?: string
  clientSecret?: string
  /** Space-separated scopes, added to the authorization URL when it has no `scope`. */
  scopes?: string
}

/** Where the login shows its URL and progress (the agent's UI). */
export interface OAuthController {
  /** Called once with the URL the user must open. A throw fails the login. */
  onAuth?(info: { url: string; instructions?: string }): void
  /** Progress messages. A throw is ignored. */
  onProgress?(message: string): void
  /** Asked for a pasted redirect URL or code, racing the browser's redirect; asked again (a few times) after an answer without a code. */
  onManualCodeInput?(): Promise<string>
  /** Unused by this flow (the reference's controller type has it). */
  onPrompt?(prompt: { message: string; placeholder?: string; allowEmpty?: boolean }): Promise<string>
  /** Aborts the login: it rejects with `OAuth callback cancelled: <reason>`. */
  signal?: AbortSignal
}

/** What a successful login returns. */
export interface OAuthCredentials {
  access: string
  /** The refresh token, or `""`. */
  refresh: string
  /** When the access token expires, in milliseconds since the epoch. */
  expires: number
}

/** [beyond] Deadlines of {@link MCPOAuthFlow}, in milliseconds. */
export interface MCPOAuthFlowOptions {
  /** How long `login()` waits for the browser (default 120000). */
  callbackTimeout?: number
  /** Deadline of each registration and token request (default 10000). */
  requestTimeout?: number
}

/**
 * The authorization-code login with PKCE: a callback listener on `localhost:3000` (or a free port),
 * dynamic client registration when there is no client id, the authorization URL through
 * `ctrl.onAuth`, the browser's redirect (or a pasted code), and the token exchange. Failures reject
 * with `Error`s: `Authorization failed: …`, `Missing authorization code`,
 * `State mismatch - possible CSRF attack`, `OAuth callback cancelled: …`, `Token exchange failed: …`.
 */
export declare class MCPOAuthFlow {
  constructor(config: MCPOAuthConfig, ctrl: OAuthController, options?: MCPOAuthFlowOptions)
  readonly config: MCPOAuthConfig
  readonly ctrl: OAuthController
  /** The port tried first for the callback listener (default 3000). */
  preferredPort: number
  login(): Promise<OAuthCredentials>
}
