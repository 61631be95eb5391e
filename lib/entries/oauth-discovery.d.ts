// mcp-native/oauth-discovery: OAuth discovery as the agent ships it today (18.3.4
// `oauth-discovery.ts`, SPEC 11.3), and the package's `detectAuthError`. 12.7's forms:
// mcp-native/compat-12.7/oauth-discovery.
import type { MCPFetchImpl } from '../../index'
import type { DiscoverOAuthEndpointsOptions as DiscoverOAuthEndpointsOptions127 } from './compat-12.7/oauth-discovery'

/** OAuth endpoints named by an error or published by the server's metadata. */
export interface OAuthEndpoints {
  authorizationUrl: string
  tokenUrl: string
  /** The authorization server's issuer, as its metadata or the challenge names it. */
  issuerUrl?: string
  clientId?: string
  /** The dynamic client registration endpoint, when advertised. */
  registrationUrl?: string
  /** Space-separated. */
  scopes?: string
  /** The protected resource (RFC 8707) the token is for. */
  resource?: string
}

/** What kind of authentication a failed request asks for, and the hints its challenge gave. */
export interface AuthDetectionResult {
  requiresAuth: boolean
  authType?: 'oauth' | 'apikey' | 'unknown'
  oauth?: OAuthEndpoints
  /** The `Mcp-Auth-Server` the error named, resolved against the server URL. */
  authServerUrl?: string
  /** The challenge's `resource_metadata`, else RFC 9728's URL for the server URL. */
  resourceMetadataUrl?: string
  /** The challenged scopes (`scope="…"`), or the error body's; space-separated. */
  scopes?: string
  message?: string
}

/** Options of {@link discoverOAuthEndpoints}. */
export interface DiscoverOAuthEndpointsOptions {
  /** The `fetch` to use; the global one by default. */
  fetch?: MCPFetchImpl
  /** The protected resource, when known; a resource's metadata found on the way replaces it. */
  protectedResource?: string
  /** Scopes to return with the endpoints in place of the authorization server's; the resource metadata's replace them. */
  protectedScopes?: string
  /** Aborts the requests: each probe then fails, and the discovery resolves with null. */
  signal?: AbortSignal
  /** [beyond] Deadline of each GET in milliseconds (default 10000); a probe that times out is a failed probe. */
  timeout?: number
}

/** Options of {@link fetchResourceMetadataScopes}. */
export interface FetchResourceMetadataScopesOptions {
  /** The `fetch` to use; the global one by default. */
  fetch?: MCPFetchImpl
  signal?: AbortSignal
  /** [beyond] Deadline of the GET in milliseconds (default 10000). */
  timeout?: number
}

/** The `Mcp-Auth-Server: <url>` the error's message names, resolved against `serverUrl`; undefined if none or it does not resolve. */
export declare function extractMcpAuthServerUrl(error: Error, serverUrl?: string): string | undefined

/** The first non-blank `scope="…"` or `scopes="…"` of a challenge in the error's message, as written. */
export declare function extractOAuthChallengeScopes(error: Error): string | undefined

/**
 * The OAuth endpoints an auth error's message names: a JSON body (the nested `oauth`/`authorization`/
 * `auth` object first), `key="value"` challenge pairs, or `realm`/`token_url`; with the issuer,
 * registration endpoint and resource where given. Null when none names both URLs.
 */
export declare function extractOAuthEndpoints(error: Error): OAuthEndpoints | null

/**
 * `{ requiresAuth: false }` unless the error (or a cause) is an HTTP 401/403 or reads as an
 * authentication failure; else the kind of authentication (oauth, apikey, unknown), the endpoints
 * the error names, its `Mcp-Auth-Server`, its `resource_metadata` (else RFC 9728's URL for
 * `serverUrl`), the challenged scopes and a message.
 */
export declare function analyzeAuthError(error: Error, serverUrl?: string): AuthDetectionResult

/** `<origin>/.well-known/oauth-protected-resource<path>` for `serverUrl` (RFC 9728); undefined without a URL that parses. */
export declare function rfc9728ProtectedResourceMetadataUrl(serverUrl: string | undefined): string | undefined

/** The scopes the protected-resource metadata at the URL advertises; undefined on any failure or when none. */
export declare function fetchResourceMetadataScopes(
  resourceMetadataUrl: string,
  options?: FetchResourceMetadataScopesOptions,
): Promise<string | undefined>

/**
 * Finds the server's OAuth endpoints: the protected-resource metadata at `resourceMetadataUrl`
 * (RFC 9728) and the authorization servers it names, then `authServerUrl`, then the server's own
 * URL, at the well-known URLs of {@link buildWellKnownUrls}; an authorization server's RFC 8414 or
 * OpenID document must name it as `issuer`. Null when none gives endpoints.
 */
export declare function discoverOAuthEndpoints(
  serverUrl: string,
  authServerUrl?: string,
  resourceMetadataUrl?: string,
  options?: DiscoverOAuthEndpointsOptions,
): Promise<OAuthEndpoints | null>
/**
 * [beyond] The package's form before 18.3.4 (SPEC 8.6): an options object in second place probes
 * the five paths of 12.7 on the server's origin, and an abort rejects with `signal.reason`.
 */
export declare function discoverOAuthEndpoints(serverUrl: string, options: DiscoverOAuthEndpointsOptions127): Promise<OAuthEndpoints | null>

/** The URLs, most specific first, at which a metadata document for `baseUrl` may be; [] when it does not parse. */
export declare function buildWellKnownUrls(wellKnownPath: string, baseUrl: string, issuerCandidate: boolean): URL[]

/** True when the lower-cased message contains 401, 403, unauthorized, forbidden, authentication required or authentication failed. */
export declare function detectAuthError(error: Error): boolean
