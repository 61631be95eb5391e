//! Protected-resource metadata (PRM) discovery and validation (SPEC 10.1 step 2; RFC 9728).
//!
//! Where: the challenge's `resource_metadata` URL alone when given (the well-known paths are
//! then never probed; a failed fetch means "no PRM", as the SDK does); otherwise the path-based
//! well-known URL (`/.well-known/oauth-protected-resource<path>`), then on a 4xx the root one.
//! A 5xx is an error. What: `resource` must be the URL the document describes — compared as the
//! received string — or, as the SDK allows, same scheme/host/port with a path that is a
//! segment prefix of the server's. A mismatch aborts before any authorization server is
//! contacted.

use serde::{Deserialize, Serialize};

use super::AuthError;
use super::http::{OAuthHttp, json_object, string, string_list};

/// The well-known path prefix of RFC 9728.
pub const WELL_KNOWN_PRM: &str = "/.well-known/oauth-protected-resource";

/// A validated PRM document; every string is kept as received.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ProtectedResource {
    /// `resource`, verbatim: sent as the `resource` parameter and compared as is.
    pub resource: String,
    /// `authorization_servers`, verbatim, non-empty.
    pub authorization_servers: Vec<String>,
    /// `scopes_supported`, when present.
    pub scopes_supported: Option<Vec<String>>,
    /// Where the document was fetched.
    pub metadata_url: String,
}

/// Finds and validates the PRM of `server_url`; `Ok(None)` when there is none (legacy mode).
pub(crate) async fn discover(
    http: &OAuthHttp,
    server_url: &str,
    metadata_url: Option<&str>,
    protocol_version: Option<&str>,
) -> Result<Option<ProtectedResource>, AuthError> {
    let server = url::Url::parse(server_url)
        .map_err(|e| AuthError::Discovery(format!("the server URL is invalid: {e}")))?;
    let origin = server.origin().ascii_serialization();
    if let Some(url) = metadata_url {
        // Only this URL; any failure to fetch it means no PRM (SDK behaviour).
        let Ok(reply) = http.get_metadata(url, protocol_version).await else {
            return Ok(None);
        };
        if !reply.ok() {
            return Ok(None);
        }
        let Ok(map) = json_object(&reply) else {
            return Ok(None);
        };
        return validate(map, url, server_url, server_url).map(Some);
    }
    let path = server.path().trim_end_matches('/');
    let mut candidates = Vec::new();
    if !path.is_empty() {
        candidates.push((format!("{origin}{WELL_KNOWN_PRM}{path}"), server_url));
    }
    candidates.push((format!("{origin}{WELL_KNOWN_PRM}"), origin.as_str()));
    for (url, described) in &candidates {
        if let Some(map) = http.get_document(url, protocol_version).await? {
            return validate(map, url, described, server_url).map(Some);
        }
    }
    Ok(None)
}

/// Checks a fetched document: `resource` (see [`resource_matches`]) and a non-empty
/// `authorization_servers`.
fn validate(
    map: serde_json::Map<String, serde_json::Value>,
    metadata_url: &str,
    described: &str,
    server_url: &str,
) -> Result<ProtectedResource, AuthError> {
    let resource = string(&map, "resource").ok_or_else(|| {
        AuthError::Discovery(format!("{metadata_url}: the metadata has no resource"))
    })?;
    if !resource_matches(&resource, described, server_url) {
        return Err(AuthError::ResourceMismatch {
            resource,
            // Without its query: a server URL may carry a key there (`?apiKey=…`).
            expected: described
                .split(['?', '#'])
                .next()
                .unwrap_or_default()
                .to_string(),
        });
    }
    let authorization_servers = string_list(&map, "authorization_servers")
        .filter(|list| !list.is_empty())
        .ok_or_else(|| {
            AuthError::Discovery(format!(
                "{metadata_url}: the metadata names no authorization server"
            ))
        })?;
    Ok(ProtectedResource {
        resource,
        authorization_servers,
        scopes_supported: string_list(&map, "scopes_supported"),
        metadata_url: metadata_url.to_string(),
    })
}

/// Whether a PRM `resource` fits: byte-identical to `described` (the server URL, or its origin
/// for the root well-known document), or — the SDK rule — same scheme, host and port as
/// `server_url` with a path that is a whole-segment prefix of the server's path (and no query
/// or fragment).
pub fn resource_matches(resource: &str, described: &str, server_url: &str) -> bool {
    if resource == described {
        return true;
    }
    let (Ok(r), Ok(s)) = (url::Url::parse(resource), url::Url::parse(server_url)) else {
        return false;
    };
    if r.query().is_some() || r.fragment().is_some() || r.origin() != s.origin() {
        return false;
    }
    // `Url::origin` of a non-special scheme is opaque and never equal, so this is http(s).
    let prefix = r.path().trim_end_matches('/');
    let path = s.path();
    prefix.is_empty()
        || path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn verbatim_resources_match() {
        let s = "http://localhost:3000/mcp";
        assert!(resource_matches(s, s, s));
        // The root document describes the origin, which has no trailing slash.
        assert!(resource_matches(
            "http://localhost:3000",
            "http://localhost:3000",
            s
        ));
    }

    #[test]
    fn a_mismatch_names_the_server_without_its_query() {
        let server = "https://h/mcp?apiKey=SENTINEL";
        let doc = serde_json::json!({
            "resource": "https://evil.example.com/mcp",
            "authorization_servers": ["https://as"],
        });
        let map = doc.as_object().unwrap().clone();
        let e = validate(map, "https://h/prm", server, server).unwrap_err();
        assert!(matches!(e, AuthError::ResourceMismatch { .. }));
        assert!(e.to_string().contains("\"https://h/mcp\""), "{e}");
        assert!(!e.to_string().contains("SENTINEL"), "{e}");
    }

    #[test]
    fn the_sdk_prefix_rule() {
        let s = "http://localhost:3000/api/mcp";
        assert!(resource_matches("http://localhost:3000/", s, s));
        assert!(resource_matches("http://localhost:3000/api", s, s));
        assert!(resource_matches("http://localhost:3000/api/", s, s));
        assert!(resource_matches("HTTP://LOCALHOST:3000/api/mcp", s, s));
        // Default ports are the same port.
        assert!(resource_matches(
            "https://h:443/a",
            "https://h/a/b",
            "https://h/a/b"
        ));
        // Not a whole segment, another path, another origin, query or fragment.
        assert!(!resource_matches("http://localhost:3000/ap", s, s));
        assert!(!resource_matches("http://localhost:3000/other", s, s));
        assert!(!resource_matches("http://localhost:3001/api/mcp", s, s));
        assert!(!resource_matches("https://localhost:3000/api/mcp", s, s));
        assert!(!resource_matches("https://evil.example.com/mcp", s, s));
        assert!(!resource_matches("http://localhost:3000/api?x=1", s, s));
        assert!(!resource_matches("http://localhost:3000/api#f", s, s));
        assert!(!resource_matches("not a url", s, s));
        // A longer path than the server's is not a prefix.
        assert!(!resource_matches("http://localhost:3000/api/mcp/x", s, s));
    }
}
