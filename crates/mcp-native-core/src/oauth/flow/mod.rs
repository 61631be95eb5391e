//! SPEC 8.7: the reference's simple authorization-code flow behind `MCPOAuthFlow`, request for
//! request: the callback listener on `localhost:3000` (else a free port), dynamic client
//! registration at the authorization URL's origin, the authorization URL with PKCE and `state`,
//! the callback's verdict, and the token exchange.
//!
//! A [`Flow`] holds the secrets of one login (the PKCE verifier, `state`, the code, a registered
//! secret) and never shows them: the JS side gets the authorization URL, whether a code arrived,
//! and the token endpoint's 2xx body. The caller (the binding) sequences the steps, adds the
//! cancellation of the JS `AbortSignal`, and calls [`Flow::stop`] at the end in every case.

use std::sync::Mutex;
use std::time::Duration;

use serde::{Deserialize, Serialize};

use super::callback::{CallbackRequest, CallbackServer};
use super::pkce::{Pkce, random_state};
use super::request::{Redirects, RequestError, get_json, post_form, post_json};

/// The redirects the flow's requests follow: any, at most 10 (what `fetch` follows; the 12.7
/// flow made its requests with `fetch`).
const FOLLOW: Redirects = Redirects::Any(10);
use crate::error::{Error, TokenExchangeFailure};
use crate::sync::lock;

/// The port the reference's flow listens on first.
pub const PREFERRED_PORT: u16 = 3000;
/// The callback path.
pub const CALLBACK_PATH: &str = "/callback";
/// How long the flow waits for the browser by default: 120 s.
pub const CALLBACK_TIMEOUT: Duration = Duration::from_secs(120);
/// `client_name` of a dynamic registration.
pub const CLIENT_NAME: &str = "oh-my-pi MCP";

/// `MCPOAuthConfig` as the JS side hands it over (strings only; absent is `None`). `Debug`
/// never prints the client secret.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FlowConfig {
    /// Where the browser is sent.
    pub authorization_url: String,
    /// Where the code is exchanged.
    pub token_url: String,
    /// A pre-registered client id (trimmed before use; blank is none).
    #[serde(default)]
    pub client_id: Option<String>,
    /// A client secret; it wins over a registered one, even when empty (`??`).
    #[serde(default)]
    pub client_secret: Option<String>,
    /// Space-separated scopes for the authorization URL.
    #[serde(default)]
    pub scopes: Option<String>,
}

impl std::fmt::Debug for FlowConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FlowConfig")
            .field("authorization_url", &self.authorization_url)
            .field("token_url", &self.token_url)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// The RFC 7591 request body, fields in the reference's order.
#[derive(Serialize)]
struct RegistrationRequest<'a> {
    client_name: &'a str,
    redirect_uris: [&'a str; 1],
    grant_types: [&'a str; 2],
    response_types: [&'a str; 1],
    token_endpoint_auth_method: &'a str,
    application_type: &'a str,
}

/// What dynamic registration gave.
#[derive(Default)]
struct Registered {
    client_id: Option<String>,
    client_secret: Option<String>,
}

/// One login in progress. See the module doc.
pub struct Flow {
    config: FlowConfig,
    state: String,
    pkce: Pkce,
    redirect_uri: String,
    fell_back: bool,
    server: CallbackServer<String, Error>,
    registered: Mutex<Registered>,
    /// The code of the callback, once [`Flow::wait_for_code`] saw it.
    code: Mutex<Option<String>>,
}

impl Flow {
    /// Starts a login: fresh `state` and PKCE pair, the listener on `preferred_port` or, if that
    /// cannot be bound, on a free port ([`Flow::fell_back`]).
    pub async fn start(config: FlowConfig, preferred_port: u16) -> Result<Flow, Error> {
        crate::net::client().map_err(Error::Io)?;
        let state = random_state();
        let (server, fell_back) =
            match CallbackServer::bind(preferred_port, CALLBACK_PATH, judge(state.clone())).await {
                Ok(server) => (server, false),
                Err(_) => {
                    let server = CallbackServer::bind(0, CALLBACK_PATH, judge(state.clone()))
                        .await
                        .map_err(|e| {
                            Error::Io(format!("OAuth callback server could not listen: {e}"))
                        })?;
                    (server, true)
                }
            };
        let redirect_uri = format!("http://localhost:{}{CALLBACK_PATH}", server.port());
        Ok(Flow {
            config,
            state,
            pkce: Pkce::generate(),
            redirect_uri,
            fell_back,
            server,
            registered: Mutex::default(),
            code: Mutex::default(),
        })
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.server.port()
    }

    /// True when the preferred port was unavailable.
    pub fn fell_back(&self) -> bool {
        self.fell_back
    }

    /// `http://localhost:<port>/callback`.
    pub fn redirect_uri(&self) -> &str {
        &self.redirect_uri
    }

    /// The client id: `clientId` trimmed, else the `client_id` query parameter of the
    /// authorization URL, else a registered one.
    pub fn client_id(&self) -> Option<String> {
        let configured = self
            .config
            .client_id
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned);
        configured
            .or_else(|| {
                let url = url::Url::parse(&self.config.authorization_url).ok()?;
                query_value(&url, "client_id").filter(|s| !s.is_empty())
            })
            .or_else(|| lock(&self.registered).client_id.clone())
    }

    /// Dynamic client registration, only without a client id: GET the authorization URL
    /// origin's `/.well-known/oauth-authorization-server`; POST to a non-blank
    /// `registration_endpoint`; adopt a non-blank `client_id`/`client_secret` of a 2xx reply.
    /// Each request is bounded by `deadline`; every failure is ignored.
    pub async fn register(&self, deadline: Duration) {
        if self.client_id().is_some() {
            return;
        }
        let Some(metadata_url) = url::Url::parse(&self.config.authorization_url)
            .ok()
            .map(|u| u.origin())
            .filter(url::Origin::is_tuple)
            .map(|o| {
                format!(
                    "{}/.well-known/oauth-authorization-server",
                    o.ascii_serialization()
                )
            })
        else {
            return;
        };
        let Some(endpoint) = ok_json(get_json(&metadata_url, FOLLOW, deadline).await)
            .and_then(|doc| non_blank(&doc, "registration_endpoint"))
        else {
            return;
        };
        let body = serde_json::to_string(&RegistrationRequest {
            client_name: CLIENT_NAME,
            redirect_uris: [self.redirect_uri.as_str()],
            grant_types: ["authorization_code", "refresh_token"],
            response_types: ["code"],
            token_endpoint_auth_method: "none",
            application_type: "native",
        })
        .unwrap_or_default();
        let Some(reply) = ok_json(post_json(&endpoint, body, FOLLOW, deadline).await) else {
            return;
        };
        let mut registered = lock(&self.registered);
        if let Some(id) = non_blank(&reply, "client_id") {
            registered.client_id = Some(id);
        }
        if let Some(secret) = non_blank(&reply, "client_secret") {
            registered.client_secret = Some(secret);
        }
    }

    /// The URL for the browser: the authorization URL with `response_type=code`, `client_id`
    /// and `scope` added when absent, and `redirect_uri`, `state`, `code_challenge`,
    /// `code_challenge_method=S256` always set (as `URLSearchParams.set` does).
    pub fn authorization_url(&self) -> Result<String, Error> {
        let mut url = url::Url::parse(&self.config.authorization_url)
            .map_err(|_| Error::InvalidConfig("\"authorizationUrl\" must be a valid URL".into()))?;
        let mut params: Vec<(String, String)> = url.query_pairs().into_owned().collect();
        set_if_absent(&mut params, "response_type", "code");
        if let Some(id) = self.client_id() {
            set_if_absent(&mut params, "client_id", &id);
        }
        if let Some(scopes) = self.config.scopes.as_deref().filter(|s| !s.is_empty()) {
            set_if_absent(&mut params, "scope", scopes);
        }
        set(&mut params, "redirect_uri", &self.redirect_uri);
        set(&mut params, "state", &self.state);
        set(&mut params, "code_challenge", &self.pkce.challenge);
        set(&mut params, "code_challenge_method", Pkce::METHOD);
        url.query_pairs_mut().clear().extend_pairs(&params);
        Ok(url.into())
    }

    /// Waits up to `deadline` for the first callback: `Ok(true)` once it brought a code (kept
    /// for [`Flow::exchange`]), `Ok(false)` when the deadline passed, or its refusal
    /// (`Authorization failed: …`, `Missing authorization code`, `State mismatch …`).
    /// Cancel-safe.
    pub async fn wait_for_code(&self, deadline: Duration) -> Result<bool, Error> {
        match tokio::time::timeout(deadline, self.server.next()).await {
            Err(_) => Ok(false),
            Ok(Some(Ok(code))) => {
                *lock(&self.code) = Some(code);
                Ok(true)
            }
            Ok(Some(Err(refused))) => Err(refused),
            Ok(None) => Err(Error::Aborted),
        }
    }

    /// Takes a code the user pasted instead of the browser's redirect, with the `state` that
    /// came with it, if any: a `state` that is not this flow's is refused like the callback's.
    pub fn supply_code(&self, code: String, state: Option<String>) -> Result<(), Error> {
        if state.is_some_and(|s| !s.is_empty() && s != self.state) {
            return Err(Error::StateMismatch);
        }
        if code.is_empty() {
            return Err(Error::MissingAuthorizationCode);
        }
        *lock(&self.code) = Some(code);
        Ok(())
    }

    /// Exchanges the code (the callback's or a supplied one) for tokens: POST to the token
    /// URL, form fields `grant_type`, `code`, `redirect_uri`, `client_id` (if known),
    /// `code_verifier`, `client_secret` (the configured one, else a registered one; if
    /// non-empty). Resolves with the 2xx body; bounded by `deadline`.
    pub async fn exchange(&self, deadline: Duration) -> Result<String, Error> {
        let code = lock(&self.code)
            .take()
            .ok_or(Error::MissingAuthorizationCode)?;
        let client_id = self.client_id();
        let secret = match &self.config.client_secret {
            Some(configured) => Some(configured.clone()),
            None => lock(&self.registered).client_secret.clone(),
        }
        .filter(|s| !s.is_empty());
        let mut fields = vec![
            ("grant_type", "authorization_code"),
            ("code", code.as_str()),
            ("redirect_uri", self.redirect_uri.as_str()),
        ];
        if let Some(id) = &client_id {
            fields.push(("client_id", id));
        }
        fields.push(("code_verifier", &self.pkce.verifier));
        if let Some(secret) = &secret {
            fields.push(("client_secret", secret));
        }
        let failure = match post_form(&self.config.token_url, &fields, FOLLOW, deadline).await {
            Ok(reply) if reply.ok() => return Ok(reply.body),
            Ok(reply) => TokenExchangeFailure::Status {
                status: reply.status,
                body: reply.body,
            },
            Err(RequestError::Timeout) => TokenExchangeFailure::Timeout {
                ms: deadline.as_millis() as u64,
            },
            Err(other) => TokenExchangeFailure::Failed(other.to_string()),
        };
        Err(Error::TokenExchange(failure))
    }

    /// Stops the listener (every open connection closed) and returns once the port is free.
    pub async fn stop(&self) {
        self.server.stop().await;
    }
}

/// The verdict on a callback request (SPEC 8.7 step 5, in the reference's order).
fn judge(expected_state: String) -> super::callback::Judge<String, Error> {
    Box::new(move |request: &CallbackRequest| {
        let code = request.param("code").unwrap_or_default();
        let state = request.param("state").unwrap_or_default();
        let error = request.param("error").unwrap_or_default();
        let description = request
            .param("error_description")
            .filter(|d| !d.is_empty())
            .unwrap_or_else(|| error.clone());
        if !error.is_empty() {
            Err(Error::AuthorizationFailed(description))
        } else if code.is_empty() {
            Err(Error::MissingAuthorizationCode)
        } else if !expected_state.is_empty() && state != expected_state {
            Err(Error::StateMismatch)
        } else {
            Ok(code)
        }
    })
}

/// `URLSearchParams.has(name) || URLSearchParams.append(name, value)`.
fn set_if_absent(params: &mut Vec<(String, String)>, name: &str, value: &str) {
    if !params.iter().any(|(k, _)| k == name) {
        params.push((name.into(), value.into()));
    }
}

/// `URLSearchParams.set`: replace the first pair named `name` and drop the others, or append.
fn set(params: &mut Vec<(String, String)>, name: &str, value: &str) {
    match params.iter().position(|(k, _)| k == name) {
        Some(first) => {
            params[first].1 = value.into();
            let mut index = 0;
            params.retain(|(k, _)| {
                index += 1;
                index - 1 == first || k != name
            });
        }
        None => params.push((name.into(), value.into())),
    }
}

fn query_value(url: &url::Url, name: &str) -> Option<String> {
    url.query_pairs()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.into_owned())
}

/// The JSON body of a 2xx reply.
fn ok_json(reply: Result<super::request::Reply, RequestError>) -> Option<serde_json::Value> {
    reply.ok().filter(|r| r.ok()).and_then(|r| r.json())
}

/// A string member that is not blank.
fn non_blank(doc: &serde_json::Value, key: &str) -> Option<String> {
    doc.get(key)?
        .as_str()
        .filter(|s| !s.trim().is_empty())
        .map(str::to_owned)
}

#[cfg(test)]
mod tests;
