// mcp-native/compat-12.7/oauth-discovery: the 12.7 profile of mcp-native/oauth-discovery (SPEC 8.6,
// 11.3): the types and functions of the 12.7 agent's `oauth-discovery.ts`.

/** OAuth endpoints named by an error or published by a server's origin. */
export interface OAuthEndpoints {
  authorizationUrl: string
  tokenUrl: string
  clientId?: string
  scopes?: string
}

/** What kind of authentication a failed request asks for. */
export interface AuthDetectionResult {
  requiresAuth: boolean
  authType?: 'oauth' | 'apikey' | 'unknown'
  oauth?: OAuthEndpoints
  message?: string
}

/** [beyond] Options of {@link discoverOAuthEndpoints}. */
export interface DiscoverOAuthEndpointsOptions {
  /** [fix] Aborts the discovery at once: the promise rejects with `signal.reason`. */
  signal?: AbortSignal
  /** [beyond] Deadline of each GET in milliseconds (default 10000); a probe that times out is a failed probe. */
  timeout?: number
}

/** True when the lower-cased message contains 401, 403, unauthorized, forbidden, authentication required or authentication failed. */
export declare function detectAuthError(error: Error): boolean

/** The OAuth endpoints an auth error's message names (a JSON body, `key="value"` challenge pairs, or `realm`/`token_url`), or null. */
export declare function extractOAuthEndpoints(error: Error): OAuthEndpoints | null

/** `{ requiresAuth: false }` unless `detectAuthError`; else the kind of authentication (oauth with its endpoints, apikey, unknown) and a message. */
export declare function analyzeAuthError(error: Error): AuthDetectionResult

/**
 * GETs (with `Accept: application/json`, one at a time) `/.well-known/oauth-authorization-server`,
 * `/.well-known/openid-configuration`, `/oauth/metadata`, `/.mcp/auth` and `/authorize` on the origin
 * of `serverUrl` until one names an authorization and a token endpoint; null when none does.
 */
export declare function discoverOAuthEndpoints(serverUrl: string, options?: DiscoverOAuthEndpointsOptions): Promise<OAuthEndpoints | null>
