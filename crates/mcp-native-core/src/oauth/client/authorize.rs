//! The authorization request and the validation of its response (SPEC 10.1 steps 5 and 6).
//!
//! Scopes: the challenge's, else every PRM `scopes_supported`, else none; `offline_access` is
//! added only when refresh tokens are wanted and the authorization server lists it (and there
//! is a scope to add it to). A step-up asks for the union of what was requested and what was
//! challenged. The request carries a fresh `state`, an `S256` challenge and the PRM `resource`
//! verbatim (omitted only in legacy mode). The response is judged in this order: `state`, then
//! `iss` (simple string comparison, no normalization of any kind), then `error`, then `code` —
//! so a response with a wrong `iss` is never read further, and nothing reaches the token
//! endpoint unless every check passed.

use super::AuthError;
use super::error::error_code;
use crate::oauth::pkce::{Pkce, random_state};

/// The scope that asks for a refresh token (OpenID Connect; SEP-2207).
pub const OFFLINE_ACCESS: &str = "offline_access";

/// The scopes of a first authorization (SPEC 10.1 step 5).
pub fn select_scopes(
    challenged: Option<&[String]>,
    prm_supported: Option<&[String]>,
    as_supported: Option<&[String]>,
    want_refresh_tokens: bool,
) -> Vec<String> {
    let base = challenged
        .filter(|s| !s.is_empty())
        .or(prm_supported)
        .unwrap_or_default();
    let mut scopes = Vec::new();
    for s in base {
        push_unique(&mut scopes, s);
    }
    if want_refresh_tokens
        && !scopes.is_empty()
        && as_supported.is_some_and(|list| list.iter().any(|s| s == OFFLINE_ACCESS))
    {
        push_unique(&mut scopes, OFFLINE_ACCESS);
    }
    scopes
}

/// The scopes of a step-up: those requested for the current token, then the challenged ones
/// not among them (SPEC 10.1 step 9).
pub fn union_scopes(requested: &[String], challenged: &[String]) -> Vec<String> {
    let mut scopes = Vec::new();
    for s in requested.iter().chain(challenged) {
        push_unique(&mut scopes, s);
    }
    scopes
}

/// Whether every challenged scope was already requested (then a step-up cannot help).
pub fn already_requested(requested: &[String], challenged: &[String]) -> bool {
    challenged.iter().all(|c| requested.contains(c))
}

fn push_unique(scopes: &mut Vec<String>, s: &str) {
    if !scopes.iter().any(|x| x == s) {
        scopes.push(s.to_string());
    }
}

/// One authorization in flight: what its response is checked against and what its token
/// request needs. Lives in memory for one flow only; `Debug` hides the verifier and `state`.
pub(crate) struct InFlight {
    pub(crate) pkce: Pkce,
    pub(crate) state: String,
    /// The validated issuer an `iss` must equal.
    pub(crate) issuer: String,
    /// The authorization server advertises `iss` (then it must be present).
    pub(crate) iss_supported: bool,
    /// The PRM `resource`, verbatim; `None` in legacy mode.
    pub(crate) resource: Option<String>,
    pub(crate) redirect_uri: String,
    pub(crate) client_id: String,
    pub(crate) scopes: Vec<String>,
}

impl std::fmt::Debug for InFlight {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InFlight")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("client_id", &self.client_id)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

impl InFlight {
    /// A fresh record: new PKCE pair and `state`.
    pub(crate) fn new(
        issuer: &str,
        iss_supported: bool,
        resource: Option<&str>,
        redirect_uri: &str,
        client_id: &str,
        scopes: Vec<String>,
    ) -> Self {
        InFlight {
            pkce: Pkce::generate(),
            state: random_state(),
            issuer: issuer.to_string(),
            iss_supported,
            resource: resource.map(str::to_owned),
            redirect_uri: redirect_uri.to_string(),
            client_id: client_id.to_string(),
            scopes,
        }
    }

    /// The authorization URL: `endpoint` (its own query kept) plus the request's parameters.
    pub(crate) fn url(&self, endpoint: &str) -> Result<String, AuthError> {
        let mut url = url::Url::parse(endpoint).map_err(|e| {
            AuthError::Discovery(format!("the authorization endpoint is not a URL: {e}"))
        })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code")
                .append_pair("client_id", &self.client_id)
                .append_pair("redirect_uri", &self.redirect_uri)
                .append_pair("state", &self.state)
                .append_pair("code_challenge", &self.pkce.challenge)
                .append_pair("code_challenge_method", Pkce::METHOD);
            if let Some(resource) = &self.resource {
                q.append_pair("resource", resource);
            }
            if !self.scopes.is_empty() {
                q.append_pair("scope", &self.scopes.join(" "));
            }
        }
        Ok(url.into())
    }

    /// Judges the callback URL the authorizer returned; `Ok` is the authorization code.
    pub(crate) fn code_from(&self, callback: &str) -> Result<String, AuthError> {
        let url = url::Url::parse(callback.trim()).map_err(|_| {
            AuthError::Callback("it is not a URL (a bare code is not accepted)".into())
        })?;
        let param = |name: &str| {
            url.query_pairs()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.into_owned())
        };
        if param("state").as_deref() != Some(self.state.as_str()) {
            return Err(AuthError::StateMismatch);
        }
        match param("iss") {
            Some(iss) if iss != self.issuer => {
                return Err(AuthError::IssMismatch {
                    issuer: self.issuer.clone(),
                });
            }
            None if self.iss_supported => {
                return Err(AuthError::IssMissing {
                    issuer: self.issuer.clone(),
                });
            }
            _ => {}
        }
        if let Some(error) = param("error") {
            return Err(AuthError::AuthorizationDenied {
                error: error_code(&error),
            });
        }
        param("code")
            .filter(|c| !c.is_empty())
            .ok_or_else(|| AuthError::Callback("it carries no authorization code".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn scope_selection() {
        let challenge = list(&["mcp:basic"]);
        let prm = list(&["mcp:profile", "mcp:read"]);
        let with_offline = list(&["mcp:basic", "offline_access"]);
        let without = list(&["mcp:basic", "mcp:read"]);
        // The challenge wins, and is authoritative whatever scopes_supported says.
        assert_eq!(
            select_scopes(Some(&challenge), Some(&prm), Some(&without), true),
            ["mcp:basic"]
        );
        // Else every PRM scope; else none.
        assert_eq!(
            select_scopes(None, Some(&prm), None, true),
            ["mcp:profile", "mcp:read"]
        );
        assert_eq!(
            select_scopes(Some(&[]), Some(&prm), None, true),
            ["mcp:profile", "mcp:read"]
        );
        assert!(select_scopes(None, None, Some(&with_offline), true).is_empty());
        // offline_access only when wanted and listed by the authorization server.
        assert_eq!(
            select_scopes(None, Some(&challenge), Some(&with_offline), true),
            ["mcp:basic", "offline_access"]
        );
        assert_eq!(
            select_scopes(None, Some(&challenge), Some(&with_offline), false),
            ["mcp:basic"]
        );
        assert_eq!(
            select_scopes(None, Some(&challenge), Some(&without), true),
            ["mcp:basic"]
        );
        assert_eq!(
            select_scopes(Some(&with_offline), None, Some(&with_offline), true),
            ["mcp:basic", "offline_access"]
        );
    }

    #[test]
    fn step_up_union_and_progress() {
        let requested = list(&["mcp:basic", "offline_access"]);
        assert_eq!(
            union_scopes(&requested, &list(&["mcp:write", "mcp:basic"])),
            ["mcp:basic", "offline_access", "mcp:write"]
        );
        assert!(already_requested(&requested, &list(&["mcp:basic"])));
        assert!(!already_requested(&requested, &list(&["mcp:admin"])));
        assert!(already_requested(&requested, &[]));
    }

    fn flight(iss_supported: bool) -> InFlight {
        InFlight::new(
            "http://127.0.0.1:5/tenant",
            iss_supported,
            Some("http://127.0.0.1:5"),
            "http://localhost:3000/callback",
            "client",
            list(&["a", "b"]),
        )
    }

    fn callback(f: &InFlight, extra: &str) -> String {
        format!(
            "http://localhost:3000/callback?code=SENTINEL-CODE&state={}{extra}",
            f.state
        )
    }

    #[test]
    fn the_request_url_keeps_resource_verbatim() {
        let f = flight(true);
        let url = url::Url::parse(&f.url("http://as/authorize?tenant=x").unwrap()).unwrap();
        let q: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        let get = |k: &str| q.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("tenant"), Some("x"));
        assert_eq!(get("response_type"), Some("code"));
        assert_eq!(get("resource"), Some("http://127.0.0.1:5"));
        assert_eq!(get("scope"), Some("a b"));
        assert_eq!(get("code_challenge_method"), Some("S256"));
        assert_eq!(get("code_challenge"), Some(f.pkce.challenge.as_str()));
        assert_eq!(get("state"), Some(f.state.as_str()));
        let mut legacy = flight(false);
        legacy.resource = None;
        legacy.scopes.clear();
        let u = legacy.url("http://as/authorize").unwrap();
        assert!(!u.contains("resource=") && !u.contains("scope="));
    }

    #[test]
    fn iss_rules() {
        let supported = flight(true);
        let issuer = "http%3A%2F%2F127.0.0.1%3A5%2Ftenant";
        assert_eq!(
            supported
                .code_from(&callback(&supported, &format!("&iss={issuer}")))
                .unwrap(),
            "SENTINEL-CODE"
        );
        assert!(matches!(
            supported.code_from(&callback(&supported, "")),
            Err(AuthError::IssMissing { .. })
        ));
        // No normalization: trailing slash, case, default port, percent-encoding all differ.
        for wrong in [
            "http%3A%2F%2F127.0.0.1%3A5%2Ftenant%2F",
            "HTTP%3A%2F%2F127.0.0.1%3A5%2Ftenant",
            "https%3A%2F%2Fevil.example.com",
            "http%3A%2F%2F127.0.0.1%3A5%2F%2574enant",
        ] {
            assert!(
                matches!(
                    supported.code_from(&callback(&supported, &format!("&iss={wrong}"))),
                    Err(AuthError::IssMismatch { .. })
                ),
                "{wrong}"
            );
        }
        let unadvertised = flight(false);
        assert!(unadvertised.code_from(&callback(&unadvertised, "")).is_ok());
        assert!(matches!(
            unadvertised.code_from(&callback(&unadvertised, "&iss=https%3A%2F%2Fevil")),
            Err(AuthError::IssMismatch { .. })
        ));
    }

    #[test]
    fn state_error_and_code() {
        let f = flight(false);
        assert_eq!(
            f.code_from("http://localhost:3000/callback?code=c&state=other"),
            Err(AuthError::StateMismatch)
        );
        assert!(matches!(
            f.code_from("SENTINEL-CODE"),
            Err(AuthError::Callback(_))
        ));
        // With a wrong iss, the error is not even read.
        let with_error = format!(
            "http://localhost:3000/callback?error=access_denied&state={}",
            f.state
        );
        assert_eq!(
            f.code_from(&with_error),
            Err(AuthError::AuthorizationDenied {
                error: "access_denied".into()
            })
        );
        assert!(matches!(
            f.code_from(&format!("{with_error}&iss=x")),
            Err(AuthError::IssMismatch { .. })
        ));
        let no_code = format!("http://localhost:3000/callback?state={}", f.state);
        assert!(matches!(f.code_from(&no_code), Err(AuthError::Callback(_))));
        // Messages never repeat the code or the callback.
        let e = f
            .code_from("http://localhost:3000/callback?code=SENTINEL-CODE&state=x")
            .unwrap_err();
        assert!(!e.to_string().contains("SENTINEL"));
        assert!(!format!("{f:?}").contains(&f.state));
    }
}
