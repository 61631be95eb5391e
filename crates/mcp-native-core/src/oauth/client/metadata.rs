//! Authorization-server metadata discovery and validation (SPEC 10.1 step 3; RFC 8414 §3.1,
//! §3.3; OpenID Connect Discovery).
//!
//! Candidates for an identifier with path `P` (trailing `/` removed): RFC 8414 with the path
//! inserted, OIDC with the path inserted, OIDC with the path appended — never the root RFC 8414
//! URL. Without a path: the RFC 8414 and OIDC root URLs. A 4xx moves to the next candidate, a
//! 5xx is an error. The document's `issuer` must be byte-identical to the identifier, and it
//! must list `S256` in `code_challenge_methods_supported`. With no document anywhere and no PRM
//! (legacy mode), the 2025-03-26 default endpoints on the origin are used.

use serde::{Deserialize, Serialize};

use super::AuthError;
use super::http::{OAuthHttp, string, string_list};
use crate::oauth::pkce::Pkce;

/// What the client uses of an authorization server's metadata. Strings are kept as received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AsMetadata {
    /// `issuer`, identical to the identifier the metadata URL was built from (in the legacy
    /// fallback: the server's origin).
    pub issuer: String,
    /// `authorization_endpoint`.
    pub authorization_endpoint: String,
    /// `token_endpoint`.
    pub token_endpoint: String,
    /// `registration_endpoint` (RFC 7591), when offered.
    pub registration_endpoint: Option<String>,
    /// `scopes_supported`.
    pub scopes_supported: Option<Vec<String>>,
    /// `token_endpoint_auth_methods_supported`.
    pub token_endpoint_auth_methods_supported: Option<Vec<String>>,
    /// `authorization_response_iss_parameter_supported` (RFC 9207); absent is false.
    pub iss_parameter_supported: bool,
    /// `client_id_metadata_document_supported`; absent is false.
    pub client_id_metadata_document_supported: bool,
    /// No document was found: these are the 2025-03-26 default endpoints.
    pub fallback: bool,
}

/// The metadata URLs to try for `identifier`, in order.
pub fn candidates(identifier: &str) -> Result<Vec<String>, AuthError> {
    let url = url::Url::parse(identifier).map_err(|e| {
        AuthError::Discovery(format!(
            "the authorization server \"{identifier}\" is not a URL: {e}"
        ))
    })?;
    if !matches!(url.scheme(), "http" | "https") {
        return Err(AuthError::Discovery(format!(
            "the authorization server \"{identifier}\" is not an http(s) URL"
        )));
    }
    let origin = url.origin().ascii_serialization();
    let path = url.path().trim_end_matches('/');
    Ok(if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    })
}

/// Fetches and validates the metadata of `identifier`; `Ok(None)` when every candidate answered
/// 4xx.
pub(crate) async fn discover(
    http: &OAuthHttp,
    identifier: &str,
    protocol_version: Option<&str>,
) -> Result<Option<AsMetadata>, AuthError> {
    for url in candidates(identifier)? {
        if let Some(map) = http.get_document(&url, protocol_version).await? {
            return validate(&map, identifier, &url).map(Some);
        }
    }
    Ok(None)
}

/// Checks a document fetched for `identifier`: the issuer first (a mismatched document is used
/// for nothing), then PKCE, then the endpoints.
pub fn validate(
    map: &serde_json::Map<String, serde_json::Value>,
    identifier: &str,
    url: &str,
) -> Result<AsMetadata, AuthError> {
    let issuer = string(map, "issuer").unwrap_or_default();
    if issuer != identifier {
        return Err(AuthError::IssuerMismatch {
            expected: identifier.to_string(),
            found: issuer,
        });
    }
    let pkce = string_list(map, "code_challenge_methods_supported");
    if !pkce.is_some_and(|methods| methods.iter().any(|m| m == Pkce::METHOD)) {
        return Err(AuthError::PkceUnsupported { issuer });
    }
    let endpoint = |key: &str| -> Result<String, AuthError> {
        let value = string(map, key)
            .ok_or_else(|| AuthError::Discovery(format!("{url}: the metadata has no {key}")))?;
        check_endpoint(&value, key)?;
        Ok(value)
    };
    let registration_endpoint = match string(map, "registration_endpoint") {
        Some(value) => {
            check_endpoint(&value, "registration_endpoint")?;
            Some(value)
        }
        None => None,
    };
    Ok(AsMetadata {
        authorization_endpoint: endpoint("authorization_endpoint")?,
        token_endpoint: endpoint("token_endpoint")?,
        registration_endpoint,
        scopes_supported: string_list(map, "scopes_supported"),
        token_endpoint_auth_methods_supported: string_list(
            map,
            "token_endpoint_auth_methods_supported",
        ),
        iss_parameter_supported: map
            .get("authorization_response_iss_parameter_supported")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        client_id_metadata_document_supported: map
            .get("client_id_metadata_document_supported")
            .and_then(|v| v.as_bool())
            .unwrap_or(false),
        issuer,
        fallback: false,
    })
}

/// The 2025-03-26 defaults for a server without PRM or metadata: `<origin>/authorize`,
/// `/token`, `/register`, with the origin as the issuer an `iss` is compared with.
pub fn legacy_fallback(origin: &str) -> AsMetadata {
    AsMetadata {
        issuer: origin.to_string(),
        authorization_endpoint: format!("{origin}/authorize"),
        token_endpoint: format!("{origin}/token"),
        registration_endpoint: Some(format!("{origin}/register")),
        scopes_supported: None,
        token_endpoint_auth_methods_supported: None,
        iss_parameter_supported: false,
        client_id_metadata_document_supported: false,
        fallback: true,
    }
}

/// An endpoint must be an absolute http(s) URL.
fn check_endpoint(value: &str, key: &str) -> Result<(), AuthError> {
    match url::Url::parse(value) {
        Ok(u) if matches!(u.scheme(), "http" | "https") => Ok(()),
        _ => Err(AuthError::Discovery(format!(
            "the metadata's {key} is not an http(s) URL"
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn candidate_order() {
        assert_eq!(
            candidates("http://localhost:9/tenant1/").unwrap(),
            [
                "http://localhost:9/.well-known/oauth-authorization-server/tenant1",
                "http://localhost:9/.well-known/openid-configuration/tenant1",
                "http://localhost:9/tenant1/.well-known/openid-configuration",
            ]
        );
        assert_eq!(
            candidates("http://localhost:9").unwrap(),
            [
                "http://localhost:9/.well-known/oauth-authorization-server",
                "http://localhost:9/.well-known/openid-configuration",
            ]
        );
        assert_eq!(candidates("https://h/").unwrap().len(), 2);
        assert!(candidates("urn:x").is_err());
    }

    fn doc(issuer: &str) -> serde_json::Map<String, serde_json::Value> {
        json!({
            "issuer": issuer,
            "authorization_endpoint": "http://h/authorize",
            "token_endpoint": "http://h/token",
            "code_challenge_methods_supported": ["S256"],
            "authorization_response_iss_parameter_supported": true,
        })
        .as_object()
        .unwrap()
        .clone()
    }

    #[test]
    fn the_issuer_must_be_byte_identical() {
        assert!(validate(&doc("http://h"), "http://h", "u").is_ok());
        for other in [
            "http://h/",
            "HTTP://h",
            "http://h:80",
            "https://attacker.example.com",
        ] {
            assert_eq!(
                validate(&doc(other), "http://h", "u"),
                Err(AuthError::IssuerMismatch {
                    expected: "http://h".into(),
                    found: other.into()
                })
            );
        }
    }

    #[test]
    fn pkce_s256_is_required() {
        let mut d = doc("http://h");
        d.remove("code_challenge_methods_supported");
        assert!(matches!(
            validate(&d, "http://h", "u"),
            Err(AuthError::PkceUnsupported { .. })
        ));
        d.insert("code_challenge_methods_supported".into(), json!(["plain"]));
        assert!(matches!(
            validate(&d, "http://h", "u"),
            Err(AuthError::PkceUnsupported { .. })
        ));
    }

    #[test]
    fn endpoints_are_required_and_flags_read() {
        let m = validate(&doc("http://h"), "http://h", "u").unwrap();
        assert!(m.iss_parameter_supported);
        assert!(!m.client_id_metadata_document_supported);
        assert_eq!(m.registration_endpoint, None);
        let mut d = doc("http://h");
        d.insert("token_endpoint".into(), json!("javascript:x"));
        assert!(matches!(
            validate(&d, "http://h", "u"),
            Err(AuthError::Discovery(_))
        ));
        let f = legacy_fallback("http://h:1");
        assert_eq!(f.token_endpoint, "http://h:1/token");
        assert!(f.fallback);
    }
}
