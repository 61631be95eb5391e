//! What the OAuth client persists (SPEC 10.2), as JSON through an [`AuthStore`]: tokens keyed
//! by (issuer, resource), client registrations keyed by (issuer, redirect URI), and the last
//! validated binding of a server URL (a cache: a 401 always re-fetches it). Never persisted:
//! the PKCE verifier, `state`, the code, the callback URL. `Debug` never prints a token or a
//! secret.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::metadata::AsMetadata;
use super::{AuthError, AuthStore};

/// Refresh this long before `expires_at` (SPEC 10.1 step 8): 60 s.
pub const REFRESH_MARGIN_SECS: u64 = 60;

/// The key of the tokens for `resource_key` (the PRM `resource`, or the server URL in legacy
/// mode) issued by `issuer`.
pub fn tokens_key(issuer: &str, resource_key: &str) -> String {
    format!("tokens|{issuer}|{resource_key}")
}

/// The key of the registration with `issuer` for `redirect_uri`.
pub fn client_key(issuer: &str, redirect_uri: &str) -> String {
    format!("client|{issuer}|{redirect_uri}")
}

/// The key of a server URL's binding.
pub fn server_key(server_url: &str) -> String {
    format!("server|{server_url}")
}

/// The key of the issuer a pre-registration without one was bound to.
pub fn prereg_key(client_id: &str) -> String {
    format!("prereg|{client_id}")
}

/// Tokens for one (issuer, resource).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenRecord {
    /// The access token.
    pub access_token: String,
    /// When it expires (Unix seconds); `None`: no expiry known, used until a 401.
    pub expires_at: Option<u64>,
    /// The refresh token, if one was issued.
    pub refresh_token: Option<String>,
    /// The scopes granted (the response's `scope`, else those requested).
    pub granted_scopes: Vec<String>,
    /// The scopes requested for it (the base of a step-up's union).
    pub requested_scopes: Vec<String>,
    /// The issuer.
    pub issuer: String,
    /// The PRM `resource` sent with it; `None` in legacy mode.
    pub resource: Option<String>,
    /// The client it was issued to (a refresh uses the same one).
    pub client_id: String,
}

impl TokenRecord {
    /// Whether it should be refreshed before use at `now` (Unix seconds): it expires within
    /// [`REFRESH_MARGIN_SECS`] and a refresh token exists.
    pub fn refresh_due(&self, now: u64) -> bool {
        self.refresh_token.is_some()
            && self
                .expires_at
                .is_some_and(|at| at <= now.saturating_add(REFRESH_MARGIN_SECS))
    }

    /// The `Authorization` header value.
    pub fn header(&self) -> String {
        format!("Bearer {}", self.access_token)
    }
}

impl std::fmt::Debug for TokenRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TokenRecord")
            .field("access_token", &"<redacted>")
            .field("expires_at", &self.expires_at)
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "<redacted>"),
            )
            .field("granted_scopes", &self.granted_scopes)
            .field("requested_scopes", &self.requested_scopes)
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("client_id", &self.client_id)
            .finish()
    }
}

/// Where a client identity came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ClientSource {
    /// Dynamic client registration (RFC 7591).
    Dcr,
    /// Configured beforehand.
    Preregistered,
    /// A client ID metadata document URL.
    Cimd,
}

/// A client identity with one authorization server (the RFC 7591 response values, or the
/// configured ones).
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRecord {
    /// `client_id`.
    pub client_id: String,
    /// `client_secret`, for a confidential client.
    pub client_secret: Option<String>,
    /// `client_secret_expires_at` (Unix seconds; 0 or absent: never).
    pub client_secret_expires_at: Option<u64>,
    /// `token_endpoint_auth_method` as registered.
    pub token_endpoint_auth_method: Option<String>,
    /// `registration_access_token` (RFC 7592), if returned.
    pub registration_access_token: Option<String>,
    /// `registration_client_uri` (RFC 7592), if returned.
    pub registration_client_uri: Option<String>,
    /// Where it came from.
    pub source: ClientSource,
}

impl ClientRecord {
    /// Whether its secret has expired at `now` (Unix seconds).
    pub fn secret_expired(&self, now: u64) -> bool {
        self.client_secret.is_some()
            && self
                .client_secret_expires_at
                .is_some_and(|at| at != 0 && at <= now)
    }
}

impl std::fmt::Debug for ClientRecord {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ClientRecord")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "<redacted>"),
            )
            .field("client_secret_expires_at", &self.client_secret_expires_at)
            .field(
                "token_endpoint_auth_method",
                &self.token_endpoint_auth_method,
            )
            .field(
                "registration_access_token",
                &self
                    .registration_access_token
                    .as_ref()
                    .map(|_| "<redacted>"),
            )
            .field("registration_client_uri", &self.registration_client_uri)
            .field("source", &self.source)
            .finish()
    }
}

/// A server URL's last validated discovery: its resource and authorization server.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ServerBinding {
    /// The PRM `resource`, verbatim; `None` in legacy mode (no PRM).
    pub resource: Option<String>,
    /// The PRM `authorization_servers` (empty in legacy mode).
    pub authorization_servers: Vec<String>,
    /// The PRM `scopes_supported`.
    pub scopes_supported: Option<Vec<String>>,
    /// The authorization server chosen, validated.
    pub metadata: AsMetadata,
    /// The key tokens are stored under with the issuer: `resource`, or the server URL.
    pub resource_key: String,
}

impl ServerBinding {
    /// The issuer.
    pub fn issuer(&self) -> &str {
        &self.metadata.issuer
    }

    /// The key of this binding's tokens.
    pub fn tokens_key(&self) -> String {
        tokens_key(self.issuer(), &self.resource_key)
    }
}

/// The value of `key`; a value that is not the expected JSON reads as absent (a later write
/// replaces it).
pub async fn load<T: DeserializeOwned>(
    store: &dyn AuthStore,
    key: &str,
) -> Result<Option<T>, AuthError> {
    Ok(store
        .get(key)
        .await?
        .and_then(|text| serde_json::from_str(&text).ok()))
}

/// Stores `value` under `key`.
pub async fn save<T: Serialize>(
    store: &dyn AuthStore,
    key: &str,
    value: &T,
) -> Result<(), AuthError> {
    let text = serde_json::to_string(value).map_err(|e| AuthError::Store(e.to_string()))?;
    store.set(key, text).await
}

/// Unix seconds now.
pub fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> TokenRecord {
        TokenRecord {
            access_token: "SENTINEL-ACCESS".into(),
            expires_at: Some(1000),
            refresh_token: Some("SENTINEL-REFRESH".into()),
            granted_scopes: vec![],
            requested_scopes: vec![],
            issuer: "i".into(),
            resource: None,
            client_id: "c".into(),
        }
    }

    #[test]
    fn refresh_is_due_within_the_margin_and_only_with_a_refresh_token() {
        let t = tokens();
        assert!(!t.refresh_due(900));
        assert!(t.refresh_due(940));
        assert!(t.refresh_due(2000));
        let mut no_refresh = t.clone();
        no_refresh.refresh_token = None;
        assert!(!no_refresh.refresh_due(2000));
        let mut no_expiry = t;
        no_expiry.expires_at = None;
        assert!(!no_expiry.refresh_due(u64::MAX));
    }

    #[test]
    fn debug_redacts() {
        let text = format!("{:?}", tokens());
        assert!(!text.contains("SENTINEL"));
        let c = ClientRecord {
            client_id: "id".into(),
            client_secret: Some("SENTINEL-SECRET".into()),
            client_secret_expires_at: Some(0),
            token_endpoint_auth_method: None,
            registration_access_token: Some("SENTINEL-RAT".into()),
            registration_client_uri: None,
            source: ClientSource::Dcr,
        };
        assert!(!format!("{c:?}").contains("SENTINEL"));
        assert!(!c.secret_expired(u64::MAX));
        let mut expiring = c;
        expiring.client_secret_expires_at = Some(5);
        assert!(expiring.secret_expired(5));
        assert!(!expiring.secret_expired(4));
    }
}
