//! [`OAuthConfig`]: how the OAuth client identifies itself, where it keeps its state and who
//! takes the user through the authorization (SPEC 10.3). One config may serve many servers
//! (one [`OAuthClient`](super::OAuthClient) each).

use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;

use super::{AuthError, AuthStore, Authorizer, MemoryStore};

/// How long an authorizer may take (the user's time in the browser): 5 minutes (SPEC 10.3).
pub const DEFAULT_AUTHORIZE_TIMEOUT: Duration = Duration::from_secs(300);
/// Step-ups after `403 insufficient_scope` per original request: 2, so at most 3 authorization
/// requests in all (SPEC 10.1 step 9).
pub const DEFAULT_MAX_STEP_UPS: u8 = 2;
/// The deadline of each OAuth HTTP request (metadata, registration, token): 10 s.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = crate::oauth::request::DEFAULT_REQUEST_TIMEOUT;

/// RFC 7591 `application_type`: `native` for a loopback redirect URI, `web` for a remote one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ApplicationType {
    /// A native app (loopback redirect).
    #[default]
    Native,
    /// A web app (remote redirect).
    Web,
}

impl ApplicationType {
    /// The wire value.
    pub fn as_str(self) -> &'static str {
        match self {
            ApplicationType::Native => "native",
            ApplicationType::Web => "web",
        }
    }

    /// `Native` for a loopback (`localhost`, `127.0.0.1`, `[::1]`) redirect URI, else `Web`.
    pub fn for_redirect(redirect_uri: &str) -> Self {
        if is_loopback(redirect_uri) {
            ApplicationType::Native
        } else {
            ApplicationType::Web
        }
    }
}

/// Client credentials registered with an authorization server beforehand. `Debug` never prints
/// the secret.
#[derive(Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PreRegistered {
    /// The issuer they belong to; `None`: bound to the first issuer they are used with (the
    /// binding is kept in the store).
    #[serde(default)]
    pub issuer: Option<String>,
    /// The client id.
    pub client_id: String,
    /// The client secret, for a confidential client.
    #[serde(default)]
    pub client_secret: Option<String>,
    /// The token-endpoint auth method registered (`client_secret_basic`, `client_secret_post`,
    /// `none`); `None` lets the metadata decide (SPEC 10.1 step 7).
    #[serde(default)]
    pub token_endpoint_auth_method: Option<String>,
}

impl std::fmt::Debug for PreRegistered {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PreRegistered")
            .field("issuer", &self.issuer)
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .finish()
    }
}

/// The OAuth client's configuration (SPEC 10.3). Build it with [`OAuthConfig::new`] (or
/// [`OAuthConfig::from_json`]) and adjust the public fields.
#[derive(Clone)]
pub struct OAuthConfig {
    /// `client_name` of a registration.
    pub client_name: String,
    /// The redirect URI (a loopback `http` URI for the loopback authorizer).
    pub redirect_uri: String,
    /// `application_type` of a registration (default: from the redirect URI).
    pub application_type: ApplicationType,
    /// A client ID metadata document URL (https, with a path), used as `client_id` where the
    /// authorization server supports it.
    pub client_metadata_url: Option<String>,
    /// Pre-registered credentials, tried first.
    pub pre_registered: Vec<PreRegistered>,
    /// Ask for refresh tokens: `refresh_token` in `grant_types`, `offline_access` where the
    /// authorization server lists it (default true).
    pub want_refresh_tokens: bool,
    /// Step-ups per original request (default [`DEFAULT_MAX_STEP_UPS`]). The transport allows
    /// at most [`MAX_AUTH_RETRIES`](crate::transport::MAX_AUTH_RETRIES) retries in all.
    pub max_step_ups: u8,
    /// The bound of one authorizer call (default [`DEFAULT_AUTHORIZE_TIMEOUT`]).
    pub authorize_timeout: Duration,
    /// The bound of each OAuth HTTP request (default [`DEFAULT_REQUEST_TIMEOUT`]).
    pub request_timeout: Duration,
    /// Where tokens, registrations and server bindings are kept (default: a [`MemoryStore`]).
    pub store: Arc<dyn AuthStore>,
    /// Who takes the user through authorization.
    pub authorizer: Arc<dyn Authorizer>,
    /// Interactive authorizations of this config (and its clones: one manager's servers) take
    /// turns; each gets its [`authorize_timeout`](Self::authorize_timeout) once its turn comes.
    pub(crate) turn: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for OAuthConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthConfig")
            .field("client_name", &self.client_name)
            .field("redirect_uri", &self.redirect_uri)
            .field("application_type", &self.application_type)
            .field("client_metadata_url", &self.client_metadata_url)
            .field("pre_registered", &self.pre_registered)
            .field("want_refresh_tokens", &self.want_refresh_tokens)
            .field("max_step_ups", &self.max_step_ups)
            .field("authorize_timeout", &self.authorize_timeout)
            .finish_non_exhaustive()
    }
}

/// The JSON form of the plain fields ([`OAuthConfig::from_json`]), camelCase as in JS.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
struct Settings {
    client_name: String,
    redirect_uri: String,
    #[serde(default)]
    application_type: Option<ApplicationType>,
    #[serde(default)]
    client_metadata_url: Option<String>,
    #[serde(default)]
    pre_registered: Vec<PreRegistered>,
    #[serde(default)]
    want_refresh_tokens: Option<bool>,
    #[serde(default)]
    max_step_ups: Option<u8>,
    #[serde(default)]
    authorize_timeout_ms: Option<u64>,
    #[serde(default)]
    request_timeout_ms: Option<u64>,
}

impl OAuthConfig {
    /// A config with every default: the application type from the redirect URI, no CIMD, no
    /// pre-registration, refresh tokens wanted, 2 step-ups, 5 minutes per authorization, a
    /// [`MemoryStore`].
    pub fn new(
        client_name: impl Into<String>,
        redirect_uri: impl Into<String>,
        authorizer: Arc<dyn Authorizer>,
    ) -> Self {
        let redirect_uri = redirect_uri.into();
        OAuthConfig {
            client_name: client_name.into(),
            application_type: ApplicationType::for_redirect(&redirect_uri),
            redirect_uri,
            client_metadata_url: None,
            pre_registered: Vec::new(),
            want_refresh_tokens: true,
            max_step_ups: DEFAULT_MAX_STEP_UPS,
            authorize_timeout: DEFAULT_AUTHORIZE_TIMEOUT,
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
            store: Arc::new(MemoryStore::default()),
            authorizer,
            turn: Arc::new(tokio::sync::Mutex::new(())),
        }
    }

    /// A config from JSON (`{ clientName, redirectUri, applicationType?, clientMetadataUrl?,
    /// preRegistered?: [{ issuer?, clientId, clientSecret?, tokenEndpointAuthMethod? }],
    /// wantRefreshTokens?, maxStepUps?, authorizeTimeoutMs?, requestTimeoutMs? }`) plus the two
    /// objects JSON cannot carry; `store` `None` is a [`MemoryStore`]. Validated.
    pub fn from_json(
        json: &str,
        store: Option<Arc<dyn AuthStore>>,
        authorizer: Arc<dyn Authorizer>,
    ) -> Result<Self, AuthError> {
        let s: Settings =
            serde_json::from_str(json).map_err(|e| AuthError::Config(e.to_string()))?;
        let mut config = OAuthConfig::new(s.client_name, s.redirect_uri, authorizer);
        if let Some(t) = s.application_type {
            config.application_type = t;
        }
        config.client_metadata_url = s.client_metadata_url;
        config.pre_registered = s.pre_registered;
        config.want_refresh_tokens = s.want_refresh_tokens.unwrap_or(true);
        config.max_step_ups = s.max_step_ups.unwrap_or(DEFAULT_MAX_STEP_UPS);
        if let Some(ms) = s.authorize_timeout_ms {
            config.authorize_timeout = Duration::from_millis(ms);
        }
        if let Some(ms) = s.request_timeout_ms {
            config.request_timeout = Duration::from_millis(ms);
        }
        if let Some(store) = store {
            config.store = store;
        }
        config.validate()?;
        Ok(config)
    }

    /// Checks the values: a non-empty client name; an absolute http(s) redirect URI without a
    /// fragment; a CIMD URL that is https with a path; client ids that are not empty.
    pub fn validate(&self) -> Result<(), AuthError> {
        if self.client_name.trim().is_empty() {
            return Err(AuthError::Config("clientName is empty".into()));
        }
        match url::Url::parse(&self.redirect_uri) {
            Ok(u) if matches!(u.scheme(), "http" | "https") && u.fragment().is_none() => {}
            _ => {
                return Err(AuthError::Config(
                    "redirectUri must be an absolute http(s) URL without a fragment".into(),
                ));
            }
        }
        if let Some(cimd) = &self.client_metadata_url {
            match url::Url::parse(cimd) {
                Ok(u) if u.scheme() == "https" && u.path() != "/" && !u.path().is_empty() => {}
                _ => {
                    return Err(AuthError::Config(
                        "clientMetadataUrl must be an https URL with a path".into(),
                    ));
                }
            }
        }
        if self.pre_registered.iter().any(|p| p.client_id.is_empty()) {
            return Err(AuthError::Config(
                "a preRegistered entry has an empty clientId".into(),
            ));
        }
        Ok(())
    }
}

/// Whether `uri` is an http(s) URL on a loopback host.
pub(crate) fn is_loopback(uri: &str) -> bool {
    url::Url::parse(uri).is_ok_and(|u| match u.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::oauth::client::HeadlessAuthorizer;

    fn headless() -> Arc<dyn Authorizer> {
        Arc::new(HeadlessAuthorizer::new().unwrap())
    }

    #[test]
    fn json_and_defaults() {
        let c = OAuthConfig::from_json(
            r#"{"clientName":"app","redirectUri":"http://127.0.0.1:3000/callback",
                "preRegistered":[{"clientId":"id","clientSecret":"SENTINEL-SECRET"}]}"#,
            None,
            headless(),
        )
        .unwrap();
        assert_eq!(c.application_type, ApplicationType::Native);
        assert!(c.want_refresh_tokens);
        assert_eq!(c.max_step_ups, 2);
        assert_eq!(c.authorize_timeout, DEFAULT_AUTHORIZE_TIMEOUT);
        assert!(!format!("{c:?}").contains("SENTINEL-SECRET"));
        let web = OAuthConfig::new("app", "https://app.example.com/cb", headless());
        assert_eq!(web.application_type, ApplicationType::Web);
    }

    #[test]
    fn bad_values_are_refused() {
        for json in [
            r#"{"clientName":"","redirectUri":"http://localhost/cb"}"#,
            r#"{"clientName":"a","redirectUri":"/cb"}"#,
            r#"{"clientName":"a","redirectUri":"http://localhost/cb","clientMetadataUrl":"http://x/c.json"}"#,
            r#"{"clientName":"a","redirectUri":"http://localhost/cb","clientMetadataUrl":"https://x"}"#,
            r#"{"clientName":"a","redirectUri":"http://localhost/cb","preRegistered":[{"clientId":""}]}"#,
            r#"{"clientName":"a","redirectUri":"http://localhost/cb","unknown":1}"#,
        ] {
            let e = OAuthConfig::from_json(json, None, headless()).unwrap_err();
            assert_eq!(e.code(), "MCP_INVALID_CONFIG", "{json}");
        }
    }

    #[test]
    fn loopback_hosts() {
        assert!(is_loopback("http://localhost:1/cb"));
        assert!(is_loopback("http://127.0.0.1:1/cb"));
        assert!(is_loopback("http://[::1]:1/cb"));
        assert!(!is_loopback("http://example.com/cb"));
        assert!(!is_loopback("nonsense"));
    }
}
