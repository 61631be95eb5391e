//! [`AuthError`]: why the OAuth client (SPEC 10) could not authorize. Every message is safe to
//! show and to log: it may name URLs of metadata, issuers, resources and scopes, and OAuth error
//! codes, but never a token, a client secret, an authorization code, a PKCE verifier or the
//! callback URL (SPEC 10.2 "Never log"). Strings an authorization server chose (its `error`
//! codes) are cut down to the RFC 6749 character set before they are kept.

/// Longest OAuth `error` code kept from an authorization or token response.
pub const MAX_ERROR_CODE_CHARS: usize = 64;

/// Why an authorization step failed. Converted into [`crate::error::Error::OAuth`] at the
/// transport's edge, whose `code` is [`AuthError::code`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum AuthError {
    /// The protected-resource metadata names another resource than the server (SPEC 10.1 step
    /// 2.4); nothing was sent to any authorization server.
    #[error(
        "OAuth: the protected resource metadata is for \"{resource}\", not for \"{expected}\"; \
         no authorization server was contacted"
    )]
    ResourceMismatch {
        /// The `resource` the metadata names.
        resource: String,
        /// The URL it had to describe.
        expected: String,
    },
    /// The authorization-server metadata's `issuer` is not the identifier its URL was built from
    /// (SPEC 10.1 step 3); the document was not used.
    #[error(
        "OAuth: the authorization server metadata's issuer \"{found}\" is not \"{expected}\"; \
         the metadata was not used"
    )]
    IssuerMismatch {
        /// The identifier the metadata URL was built from.
        expected: String,
        /// The `issuer` the document holds.
        found: String,
    },
    /// The authorization response has no `iss` although the server advertises it (RFC 9207).
    #[error(
        "OAuth: the authorization response has no iss parameter, which the authorization server \
         \"{issuer}\" advertises"
    )]
    IssMissing {
        /// The recorded issuer.
        issuer: String,
    },
    /// The authorization response's `iss` is not the recorded issuer (simple string comparison).
    #[error(
        "OAuth: the authorization response's iss parameter does not match the issuer \"{issuer}\""
    )]
    IssMismatch {
        /// The recorded issuer.
        issuer: String,
    },
    /// The authorization response's `state` is not the one sent (possible CSRF).
    #[error("OAuth: the authorization response's state does not match the request")]
    StateMismatch,
    /// The authorization server does not list `S256` in `code_challenge_methods_supported`.
    #[error("OAuth: the authorization server \"{issuer}\" does not support PKCE with S256")]
    PkceUnsupported {
        /// The authorization server.
        issuer: String,
    },
    /// No client identity for this authorization server: no pre-registered credentials for it,
    /// no usable client ID metadata document, no registration endpoint (SPEC 10.1 step 4.4).
    #[error(
        "OAuth: no client credentials for the authorization server \"{issuer}\" (it offers \
         neither client ID metadata documents nor dynamic registration); configure \
         pre-registered credentials for it"
    )]
    NeedsClientCredentials {
        /// The authorization server.
        issuer: String,
    },
    /// The authorization server redirected back with an `error` (the user declined, ...).
    #[error("OAuth: authorization denied: {error}")]
    AuthorizationDenied {
        /// The OAuth `error` code.
        error: String,
    },
    /// The token endpoint refused (its OAuth `error` code, or `HTTP <status>`), or answered
    /// without a usable access token.
    #[error("OAuth: the token endpoint refused the request: {error}")]
    TokenEndpoint {
        /// The OAuth `error` code, `HTTP <status>`, or what was wrong with the answer.
        error: String,
    },
    /// The server still refuses with `insufficient_scope` and no further step-up can help: the
    /// challenged scopes were already requested, or the step-up limit is reached.
    #[error("OAuth: insufficient scope: the server requires \"{}\"", scopes.join(" "))]
    InsufficientScope {
        /// The scopes the server challenged with.
        scopes: Vec<String>,
    },
    /// The server refused an access token that was issued for this very request (a 401 right
    /// after authorizing or refreshing): no loop.
    #[error("OAuth: the server refused the newly issued access token (HTTP 401)")]
    TokenRejected,
    /// Metadata discovery failed (a request, a 5xx, a malformed document, a missing document).
    #[error("OAuth discovery failed: {0}")]
    Discovery(String),
    /// Dynamic client registration failed.
    #[error("OAuth client registration failed: {0}")]
    Registration(String),
    /// The callback the authorizer returned is unusable (not a URL, a bare code, no code).
    #[error("OAuth: invalid authorization callback: {0}")]
    Callback(String),
    /// The authorizer failed or took longer than its bound.
    #[error("OAuth authorization failed: {0}")]
    Authorizer(String),
    /// The [`AuthStore`](super::AuthStore) failed.
    #[error("OAuth store: {0}")]
    Store(String),
    /// The OAuth configuration is unusable.
    #[error("Invalid config: oauth: {0}")]
    Config(String),
}

impl AuthError {
    /// The stable `code` of the JS error: `MCP_STORE_ERROR` for the store, `MCP_INVALID_CONFIG`
    /// for the configuration, `MCP_OAUTH_ERROR` for everything else ([`AuthError::reason`] tells
    /// those apart).
    pub fn code(&self) -> &'static str {
        match self {
            AuthError::Store(_) => "MCP_STORE_ERROR",
            AuthError::Config(_) => "MCP_INVALID_CONFIG",
            _ => "MCP_OAUTH_ERROR",
        }
    }

    /// A stable snake_case name of the variant (`needs_client_credentials`, `iss_mismatch`, ...),
    /// for callers that act on the kind of failure (the binding exposes it as `error.reason`).
    pub fn reason(&self) -> &'static str {
        match self {
            AuthError::ResourceMismatch { .. } => "resource_mismatch",
            AuthError::IssuerMismatch { .. } => "issuer_mismatch",
            AuthError::IssMissing { .. } => "iss_missing",
            AuthError::IssMismatch { .. } => "iss_mismatch",
            AuthError::StateMismatch => "state_mismatch",
            AuthError::PkceUnsupported { .. } => "pkce_unsupported",
            AuthError::NeedsClientCredentials { .. } => "needs_client_credentials",
            AuthError::AuthorizationDenied { .. } => "authorization_denied",
            AuthError::TokenEndpoint { .. } => "token_endpoint",
            AuthError::InsufficientScope { .. } => "insufficient_scope",
            AuthError::TokenRejected => "token_rejected",
            AuthError::Discovery(_) => "discovery",
            AuthError::Registration(_) => "registration",
            AuthError::Callback(_) => "callback",
            AuthError::Authorizer(_) => "authorizer",
            AuthError::Store(_) => "store",
            AuthError::Config(_) => "config",
        }
    }
}

impl From<AuthError> for crate::error::Error {
    fn from(e: AuthError) -> Self {
        crate::error::Error::OAuth(e)
    }
}

/// An OAuth `error` code as received, kept only when it is what RFC 6749 allows (printable ASCII
/// without `"` and `\`), at most [`MAX_ERROR_CODE_CHARS`]; anything else becomes
/// `invalid error code`.
pub fn error_code(received: &str) -> String {
    let allowed = |c: char| matches!(c, '\x20'..='\x7e') && c != '"' && c != '\\';
    if !received.is_empty()
        && received.chars().count() <= MAX_ERROR_CODE_CHARS
        && received.chars().all(allowed)
    {
        received.to_string()
    } else {
        "invalid error code".to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_and_reasons() {
        assert_eq!(AuthError::StateMismatch.code(), "MCP_OAUTH_ERROR");
        assert_eq!(AuthError::Store("x".into()).code(), "MCP_STORE_ERROR");
        assert_eq!(AuthError::Config("x".into()).code(), "MCP_INVALID_CONFIG");
        assert_eq!(
            AuthError::NeedsClientCredentials { issuer: "i".into() }.reason(),
            "needs_client_credentials"
        );
        let e: crate::error::Error = AuthError::TokenRejected.into();
        assert_eq!(e.code(), "MCP_OAUTH_ERROR");
        assert_eq!(
            e.to_string(),
            "OAuth: the server refused the newly issued access token (HTTP 401)"
        );
    }

    #[test]
    fn error_codes_are_kept_only_when_plain() {
        assert_eq!(error_code("access_denied"), "access_denied");
        assert_eq!(error_code(""), "invalid error code");
        assert_eq!(error_code("a\"b"), "invalid error code");
        assert_eq!(error_code("line\nbreak"), "invalid error code");
        assert_eq!(error_code(&"x".repeat(65)), "invalid error code");
        assert_eq!(
            AuthError::InsufficientScope {
                scopes: vec!["a".into(), "b".into()]
            }
            .to_string(),
            "OAuth: insufficient scope: the server requires \"a b\""
        );
    }
}
