//! Token requests (SPEC 10.1 steps 7 and 8): the authorization-code grant and the refresh
//! grant, with exactly one client authentication method each, and the reading of the answer.
//! Nothing here repeats a token, secret, code or response body in an error: a refusal is
//! reported by its OAuth `error` code or its HTTP status.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use reqwest::header::{ACCEPT, AUTHORIZATION, CONTENT_TYPE};

use super::AuthError;
use super::error::error_code;
use super::http::{OAuthHttp, describe};
use super::state::ClientRecord;
use crate::oauth::request::{self, Reply, form_body};

/// How a client authenticates at the token endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMethod {
    /// `client_secret_basic`: HTTP Basic with the form-encoded id and secret.
    Basic,
    /// `client_secret_post`: `client_id` and `client_secret` in the body.
    Post,
    /// `none`: `client_id` in the body only.
    None,
}

impl AuthMethod {
    /// The RFC 8414 name.
    pub fn as_str(self) -> &'static str {
        match self {
            AuthMethod::Basic => "client_secret_basic",
            AuthMethod::Post => "client_secret_post",
            AuthMethod::None => "none",
        }
    }

    fn parse(name: &str) -> Option<Self> {
        match name {
            "client_secret_basic" => Some(AuthMethod::Basic),
            "client_secret_post" => Some(AuthMethod::Post),
            "none" => Some(AuthMethod::None),
            _ => None,
        }
    }
}

/// The method for a client (SPEC 10.1 step 7, the SDK's `selectClientAuthMethod`): the
/// registered one when the metadata lists it or lists nothing; else, with no list, Basic when
/// there is a secret; else by the list: Basic, Post (with a secret), `none`; else Post with a
/// secret, `none` without. A registered method this client cannot perform counts as none.
pub fn select_auth_method(
    registered: Option<&str>,
    supported: Option<&[String]>,
    has_secret: bool,
) -> AuthMethod {
    let listed = |m: AuthMethod| supported.is_some_and(|l| l.iter().any(|s| s == m.as_str()));
    if let Some(method) = registered.and_then(AuthMethod::parse)
        && (supported.is_none() || listed(method))
        && (method == AuthMethod::None || has_secret)
    {
        return method;
    }
    if supported.is_none() {
        return if has_secret {
            AuthMethod::Basic
        } else {
            AuthMethod::None
        };
    }
    if has_secret && listed(AuthMethod::Basic) {
        AuthMethod::Basic
    } else if has_secret && listed(AuthMethod::Post) {
        AuthMethod::Post
    } else if listed(AuthMethod::None) {
        AuthMethod::None
    } else if has_secret {
        AuthMethod::Post
    } else {
        AuthMethod::None
    }
}

/// A token endpoint's 2xx answer. `Debug` hides the tokens.
#[derive(Clone, PartialEq, Eq)]
pub struct TokenResponse {
    /// `access_token`.
    pub access_token: String,
    /// `expires_in` (seconds), when given.
    pub expires_in: Option<u64>,
    /// `refresh_token`, when issued.
    pub refresh_token: Option<String>,
    /// `scope`, split, when given.
    pub scope: Option<Vec<String>>,
}

impl std::fmt::Debug for TokenResponse {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenResponse")
            .field("expires_in", &self.expires_in)
            .field("refresh_token", &self.refresh_token.is_some())
            .field("scope", &self.scope)
            .finish_non_exhaustive()
    }
}

/// Why a token request gave no tokens: the endpoint refused (an OAuth error or a bad answer;
/// the grant is not worth retrying), or it could not be reached or failed itself (a 5xx: worth
/// keeping what is held).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum TokenError {
    /// The endpoint answered, without usable tokens.
    Refused(AuthError),
    /// No answer (connection, timeout, oversized body).
    Unreachable(AuthError),
}

impl From<TokenError> for AuthError {
    fn from(e: TokenError) -> Self {
        match e {
            TokenError::Refused(e) | TokenError::Unreachable(e) => e,
        }
    }
}

/// A token request for one client at one endpoint.
pub(crate) struct TokenRequest<'a> {
    pub(crate) http: &'a OAuthHttp,
    pub(crate) endpoint: &'a str,
    pub(crate) client: &'a ClientRecord,
    pub(crate) supported: Option<&'a [String]>,
    /// The PRM `resource`, verbatim; `None` in legacy mode.
    pub(crate) resource: Option<&'a str>,
}

impl TokenRequest<'_> {
    /// `grant_type=authorization_code`.
    pub(crate) async fn exchange_code(
        &self,
        code: &str,
        verifier: &str,
        redirect_uri: &str,
    ) -> Result<TokenResponse, TokenError> {
        let mut fields = vec![
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", redirect_uri),
            ("code_verifier", verifier),
        ];
        if let Some(resource) = self.resource {
            fields.push(("resource", resource));
        }
        self.send(fields).await
    }

    /// `grant_type=refresh_token`, with the same `resource` and client authentication.
    pub(crate) async fn refresh(&self, refresh_token: &str) -> Result<TokenResponse, TokenError> {
        let mut fields = vec![
            ("grant_type", "refresh_token"),
            ("refresh_token", refresh_token),
        ];
        if let Some(resource) = self.resource {
            fields.push(("resource", resource));
        }
        self.send(fields).await
    }

    async fn send(&self, mut fields: Vec<(&str, &str)>) -> Result<TokenResponse, TokenError> {
        let client = self.client;
        let secret = client.client_secret.as_deref();
        let method = select_auth_method(
            client.token_endpoint_auth_method.as_deref(),
            self.supported,
            secret.is_some(),
        );
        let unreachable = |e: &request::RequestError| {
            TokenError::Unreachable(AuthError::TokenEndpoint {
                error: format!("POST {}: {}", self.endpoint, describe(e)),
            })
        };
        let mut req = request::request(reqwest::Method::POST, self.endpoint)
            .map_err(|e| unreachable(&e))?
            .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
            .header(ACCEPT, "application/json");
        match (method, secret) {
            (AuthMethod::Basic, Some(secret)) => {
                req = req.header(AUTHORIZATION, basic(&client.client_id, secret));
            }
            (AuthMethod::Post, Some(secret)) => {
                fields.push(("client_id", &client.client_id));
                fields.push(("client_secret", secret));
            }
            _ => fields.push(("client_id", &client.client_id)),
        }
        let body = req.body(form_body(&fields));
        let reply = request::send(body, request::Redirects::Never, self.http.timeout)
            .await
            .map_err(|e| unreachable(&e))?;
        // A server error says nothing about the grant: what is held is kept (a refresh token
        // is not dropped for a 503).
        if reply.status >= 500 {
            return Err(TokenError::Unreachable(AuthError::TokenEndpoint {
                error: format!("HTTP {}", reply.status),
            }));
        }
        parse_response(&reply).map_err(TokenError::Refused)
    }
}

/// `Basic base64(urlencode(id) ":" urlencode(secret))` (RFC 6749 §2.3.1).
pub fn basic(client_id: &str, secret: &str) -> String {
    let enc = |s: &str| url::form_urlencoded::byte_serialize(s.as_bytes()).collect::<String>();
    format!(
        "Basic {}",
        STANDARD.encode(format!("{}:{}", enc(client_id), enc(secret)))
    )
}

/// Reads a token endpoint's answer: a non-2xx is its `error` code (or its status); a 2xx needs
/// an `access_token` and a Bearer `token_type` (absent is taken as Bearer).
pub fn parse_response(reply: &Reply) -> Result<TokenResponse, AuthError> {
    let json = reply.json();
    if !reply.ok() {
        let code = json
            .as_ref()
            .and_then(|v| v.get("error")?.as_str().map(error_code));
        return Err(AuthError::TokenEndpoint {
            error: code.unwrap_or_else(|| format!("HTTP {}", reply.status)),
        });
    }
    let invalid = |what: &str| AuthError::TokenEndpoint {
        error: format!("invalid response: {what}"),
    };
    let Some(serde_json::Value::Object(map)) = json else {
        return Err(invalid("not a JSON object"));
    };
    let access_token = map
        .get("access_token")
        .and_then(|v| v.as_str())
        .filter(|t| !t.is_empty())
        .ok_or_else(|| invalid("no access_token"))?
        .to_string();
    if let Some(kind) = map.get("token_type")
        && !kind
            .as_str()
            .is_some_and(|k| k.eq_ignore_ascii_case("bearer"))
    {
        return Err(invalid("token_type is not Bearer"));
    }
    let expires_in = map.get("expires_in").and_then(|v| match v {
        serde_json::Value::Number(n) => n.as_u64().or_else(|| n.as_f64().map(|f| f as u64)),
        serde_json::Value::String(s) => s.trim().parse().ok(),
        _ => None,
    });
    Ok(TokenResponse {
        access_token,
        expires_in,
        refresh_token: map
            .get("refresh_token")
            .and_then(|v| v.as_str())
            .filter(|t| !t.is_empty())
            .map(str::to_owned),
        scope: map
            .get("scope")
            .and_then(|v| v.as_str())
            .map(|s| s.split_ascii_whitespace().map(str::to_owned).collect()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn auth_method_selection() {
        use AuthMethod::{Basic, Post};
        const NONE: AuthMethod = AuthMethod::None;
        let basic_only = list(&["client_secret_basic"]);
        let post_only = list(&["client_secret_post"]);
        let none_only = list(&["none"]);
        let all = list(&["none", "client_secret_post", "client_secret_basic"]);
        // 1. The registered method when listed or nothing is listed.
        assert_eq!(
            select_auth_method(Some("client_secret_post"), None, true),
            Post
        );
        assert_eq!(
            select_auth_method(Some("client_secret_post"), Some(&all), true),
            Post
        );
        assert_eq!(select_auth_method(Some("none"), Some(&all), true), NONE);
        // 2. No list: Basic with a secret, else none.
        assert_eq!(select_auth_method(Option::None, Option::None, true), Basic);
        assert_eq!(select_auth_method(Option::None, Option::None, false), NONE);
        assert_eq!(
            select_auth_method(Some("private_key_jwt"), Option::None, true),
            Basic
        );
        // 3. By the list.
        assert_eq!(
            select_auth_method(Some("client_secret_post"), Some(&basic_only), true),
            Basic
        );
        assert_eq!(
            select_auth_method(Option::None, Some(&post_only), true),
            Post
        );
        assert_eq!(
            select_auth_method(Option::None, Some(&none_only), true),
            NONE
        );
        assert_eq!(
            select_auth_method(Option::None, Some(&basic_only), false),
            NONE
        );
        assert_eq!(
            select_auth_method(Option::None, Some(&list(&["private_key_jwt"])), true),
            Post
        );
        // A secret-based method without a secret is not usable.
        assert_eq!(
            select_auth_method(Some("client_secret_basic"), Option::None, false),
            NONE
        );
    }

    #[test]
    fn basic_credentials_are_form_encoded() {
        // base64("a%3Ab:s+p%26") — RFC 6749 §2.3.1 encodes before joining.
        assert_eq!(
            basic("a:b", "s p&"),
            format!("Basic {}", STANDARD.encode("a%3Ab:s+p%26"))
        );
    }

    fn reply(status: u16, body: &str) -> Reply {
        Reply {
            status,
            body: body.into(),
        }
    }

    #[test]
    fn responses() {
        let ok = parse_response(&reply(
            200,
            r#"{"access_token":"SENTINEL","token_type":"bearer","expires_in":"60","scope":"a b","refresh_token":"R"}"#,
        ))
        .unwrap();
        assert_eq!(ok.expires_in, Some(60));
        assert_eq!(ok.scope, Some(list(&["a", "b"])));
        assert!(!format!("{ok:?}").contains("SENTINEL"));
        let plain = parse_response(&reply(200, r#"{"access_token":"t"}"#)).unwrap();
        assert_eq!(
            (plain.expires_in, plain.refresh_token),
            (Option::None, Option::None)
        );
        for (status, body, error) in [
            (
                400,
                r#"{"error":"invalid_grant","error_description":"SENTINEL"}"#,
                "invalid_grant",
            ),
            (500, "SENTINEL", "HTTP 500"),
            (
                200,
                r#"{"access_token":""}"#,
                "invalid response: no access_token",
            ),
            (
                200,
                r#"{"access_token":"SENTINEL","token_type":"DPoP"}"#,
                "invalid response: token_type is not Bearer",
            ),
            (200, "[]", "invalid response: not a JSON object"),
        ] {
            let e = parse_response(&reply(status, body)).unwrap_err();
            assert_eq!(
                e,
                AuthError::TokenEndpoint {
                    error: error.into()
                }
            );
            assert!(!e.to_string().contains("SENTINEL"));
        }
    }
}
