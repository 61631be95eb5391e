//! The OAuth client's work for one server URL (SPEC 10.1): load what the store holds, discover
//! (PRM, then the authorization server's metadata — or legacy mode), handle an authorization
//! server migration, refresh, authorize (identity, authorization request, response checks,
//! token request) and step up. Callers hold the one-at-a-time lock ([`Shared::op`]) around
//! each of these.

use std::sync::{Arc, Mutex, MutexGuard};

pub(crate) use crate::sync::lock;

use super::authorize::{InFlight, select_scopes};
use super::challenge::BearerChallenge;
use super::http::OAuthHttp;
use super::metadata::{self, AsMetadata};
use super::prm::{self, ProtectedResource};
use super::state::{self, ServerBinding, TokenRecord, server_key};
use super::token::{TokenError, TokenRequest, TokenResponse};
use super::{AuthError, AuthorizationPrompt, OAuthConfig, registration};

/// What one server's OAuth state shares between the handle and its tasks.
pub(crate) struct Shared {
    pub(crate) config: Arc<OAuthConfig>,
    pub(crate) server_url: String,
    pub(crate) server_name: Mutex<Option<String>>,
    /// Sent on discovery requests while the transport has negotiated no version.
    pub(crate) protocol_version: Mutex<Option<String>>,
    http: OAuthHttp,
    memory: Mutex<Memory>,
    /// One piece of work (load, refresh, discovery, authorization) at a time.
    pub(crate) op: tokio::sync::Mutex<()>,
    /// True while the authorizer runs (the user's time): deadlines do not count it.
    pub(crate) waiting_for_user: tokio::sync::watch::Sender<bool>,
}

/// Sets [`Shared::waiting_for_user`] while it lives (also when the work is dropped).
struct UserWait<'a>(&'a tokio::sync::watch::Sender<bool>);

impl<'a> UserWait<'a> {
    fn new(flag: &'a tokio::sync::watch::Sender<bool>) -> Self {
        flag.send_replace(true);
        UserWait(flag)
    }
}

impl Drop for UserWait<'_> {
    fn drop(&mut self) {
        self.0.send_replace(false);
    }
}

/// What is known in memory; the store has the last word across processes.
#[derive(Default)]
pub(crate) struct Memory {
    loaded: bool,
    pub(crate) binding: Option<ServerBinding>,
    pub(crate) tokens: Option<TokenRecord>,
}

impl Shared {
    pub(crate) fn new(config: Arc<OAuthConfig>, server_url: String, http: OAuthHttp) -> Self {
        Shared {
            config,
            server_url,
            server_name: Mutex::new(None),
            protocol_version: Mutex::new(None),
            http,
            memory: Mutex::new(Memory::default()),
            op: tokio::sync::Mutex::new(()),
            waiting_for_user: tokio::sync::watch::Sender::new(false),
        }
    }

    pub(crate) fn memory(&self) -> MutexGuard<'_, Memory> {
        lock(&self.memory)
    }

    fn store(&self) -> &dyn super::AuthStore {
        self.config.store.as_ref()
    }

    /// The `Authorization` value when it needs no await: loaded, and not due for refresh.
    pub(crate) fn ready_header(&self, now: u64) -> Option<Option<String>> {
        let memory = self.memory();
        if !memory.loaded {
            return None;
        }
        match &memory.tokens {
            None => Some(None),
            Some(t) if !t.refresh_due(now) => Some(Some(t.header())),
            Some(_) => None,
        }
    }

    /// Loads the server's binding and its tokens from the store, once.
    pub(crate) async fn ensure_loaded(&self) -> Result<(), AuthError> {
        if self.memory().loaded {
            return Ok(());
        }
        let binding: Option<ServerBinding> =
            state::load(self.store(), &server_key(&self.server_url)).await?;
        let tokens = match &binding {
            Some(b) => state::load(self.store(), &b.tokens_key()).await?,
            None => None,
        };
        let mut memory = self.memory();
        memory.loaded = true;
        memory.binding = binding;
        memory.tokens = tokens;
        Ok(())
    }

    /// The `Authorization` value to send, refreshing first when due (SPEC 10.1 step 8). A
    /// refused refresh drops the tokens (the request goes without; its 401 starts a fresh
    /// authorization); an unreachable token endpoint keeps a token that has not expired yet.
    pub(crate) async fn header(self: Arc<Self>) -> Result<Option<String>, AuthError> {
        let _turn = self.op.lock().await;
        self.ensure_loaded().await?;
        let now = state::now();
        let (binding, held) = {
            let memory = self.memory();
            (memory.binding.clone(), memory.tokens.clone())
        };
        let (Some(binding), Some(held)) = (binding, held) else {
            return Ok(None);
        };
        if !held.refresh_due(now) {
            return Ok(Some(held.header()));
        }
        // Another process may have refreshed already (and rotated the refresh token).
        if let Some(stored) =
            state::load::<TokenRecord>(self.store(), &binding.tokens_key()).await?
            && stored.access_token != held.access_token
            && !stored.refresh_due(now)
        {
            let header = stored.header();
            self.memory().tokens = Some(stored);
            return Ok(Some(header));
        }
        match self.refresh(&binding, &held).await {
            Ok(fresh) => Ok(Some(fresh.header())),
            Err(TokenError::Refused(_)) => {
                self.forget_tokens().await?;
                Ok(None)
            }
            Err(TokenError::Unreachable(_)) if held.expires_at.is_some_and(|at| at > now) => {
                Ok(Some(held.header()))
            }
            Err(TokenError::Unreachable(e)) => Err(e),
        }
    }

    /// After a 401 (SPEC 10.1 steps 8 and 10): a newer token in the store is adopted; else PRM
    /// is fetched again and the authorization server re-validated (a change is a migration);
    /// then the held token is refreshed if possible, else a full authorization runs.
    pub(crate) async fn reauthorize(
        &self,
        challenge: &BearerChallenge,
        sent: Option<&str>,
        protocol_version: Option<&str>,
    ) -> Result<(), AuthError> {
        let old = self.memory().binding.clone();
        if let Some(old) = &old
            && self.adopt_stored(old, sent).await?
        {
            return Ok(());
        }
        let binding = self
            .discover(challenge.resource_metadata.as_deref(), protocol_version)
            .await?;
        self.bind(old.as_ref(), &binding).await?;
        if self.adopt_stored(&binding, sent).await? {
            return Ok(());
        }
        let held = self.memory().tokens.clone();
        if let Some(held) = held.filter(|t| t.refresh_token.is_some()) {
            match self.refresh(&binding, &held).await {
                Ok(_) => return Ok(()),
                Err(TokenError::Refused(_)) => self.forget_tokens().await?,
                Err(TokenError::Unreachable(e)) => return Err(e),
            }
        }
        let scopes = select_scopes(
            challenge.scope.as_deref(),
            binding.scopes_supported.as_deref(),
            binding.metadata.scopes_supported.as_deref(),
            self.config.want_refresh_tokens,
        );
        self.authorize(&binding, scopes).await
    }

    /// After a 403 `insufficient_scope` (SPEC 10.1 step 9): the same registration and metadata,
    /// a new authorization for `scopes`.
    pub(crate) async fn step_up(
        &self,
        scopes: Vec<String>,
        protocol_version: Option<&str>,
    ) -> Result<(), AuthError> {
        let known = self.memory().binding.clone();
        let binding = match known {
            Some(b) => b,
            None => {
                let b = self.discover(None, protocol_version).await?;
                self.bind(None, &b).await?;
                b
            }
        };
        self.authorize(&binding, scopes).await
    }

    /// [`OAuthClient::login`](super::OAuthClient::login).
    pub(crate) async fn login(&self) -> Result<(), AuthError> {
        let _turn = self.op.lock().await;
        self.ensure_loaded().await?;
        let old = self.memory().binding.clone();
        let protocol_version = lock(&self.protocol_version).clone();
        let binding = self.discover(None, protocol_version.as_deref()).await?;
        self.bind(old.as_ref(), &binding).await?;
        let scopes = select_scopes(
            None,
            binding.scopes_supported.as_deref(),
            binding.metadata.scopes_supported.as_deref(),
            self.config.want_refresh_tokens,
        );
        self.authorize(&binding, scopes).await
    }

    /// Drops the tokens held, here and in the store.
    pub(crate) async fn forget_tokens(&self) -> Result<(), AuthError> {
        let binding = {
            let mut memory = self.memory();
            memory.tokens = None;
            memory.binding.clone()
        };
        match binding {
            Some(b) => self.store().delete(&b.tokens_key()).await,
            None => Ok(()),
        }
    }

    /// Adopts the stored tokens of `binding` when they are not the ones refused.
    async fn adopt_stored(
        &self,
        binding: &ServerBinding,
        sent: Option<&str>,
    ) -> Result<bool, AuthError> {
        let stored: Option<TokenRecord> = state::load(self.store(), &binding.tokens_key()).await?;
        match stored {
            Some(t) if sent != Some(t.header().as_str()) => {
                self.memory().tokens = Some(t);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    /// Discovery from scratch: PRM (never from a cache), the authorization server, its metadata.
    async fn discover(
        &self,
        metadata_url: Option<&str>,
        protocol_version: Option<&str>,
    ) -> Result<ServerBinding, AuthError> {
        let found =
            prm::discover(&self.http, &self.server_url, metadata_url, protocol_version).await?;
        match found {
            Some(prm) => {
                let issuer = self.choose_issuer(&prm);
                let metadata = metadata::discover(&self.http, &issuer, protocol_version)
                    .await?
                    .ok_or_else(|| {
                        AuthError::Discovery(format!(
                            "no metadata found for the authorization server \"{issuer}\""
                        ))
                    })?;
                Ok(ServerBinding {
                    resource_key: prm.resource.clone(),
                    resource: Some(prm.resource),
                    authorization_servers: prm.authorization_servers,
                    scopes_supported: prm.scopes_supported,
                    metadata,
                })
            }
            None => {
                // Legacy mode (2025-03-26): the origin is the authorization server.
                let origin = url::Url::parse(&self.server_url)
                    .map_err(|e| AuthError::Discovery(e.to_string()))?
                    .origin()
                    .ascii_serialization();
                let metadata: AsMetadata =
                    metadata::discover(&self.http, &origin, protocol_version)
                        .await?
                        .unwrap_or_else(|| metadata::legacy_fallback(&origin));
                Ok(ServerBinding {
                    resource: None,
                    authorization_servers: Vec::new(),
                    scopes_supported: None,
                    metadata,
                    resource_key: self.server_url.clone(),
                })
            }
        }
    }

    /// The first authorization server, unless pre-registered credentials name another listed.
    fn choose_issuer(&self, prm: &ProtectedResource) -> String {
        prm.authorization_servers
            .iter()
            .find(|s| {
                self.config
                    .pre_registered
                    .iter()
                    .any(|p| p.issuer.as_deref() == Some(s.as_str()))
            })
            .unwrap_or(&prm.authorization_servers[0])
            .clone()
    }

    /// Makes `binding` current. Moving to another authorization server discards the tokens the
    /// old one issued for this server (SPEC 10.1 step 10); its registration is never offered to
    /// the new one (registrations are keyed by issuer).
    async fn bind(
        &self,
        old: Option<&ServerBinding>,
        binding: &ServerBinding,
    ) -> Result<(), AuthError> {
        if let Some(old) = old
            && old.tokens_key() != binding.tokens_key()
        {
            if old.issuer() != binding.issuer() {
                self.store().delete(&old.tokens_key()).await?;
            }
            self.memory().tokens = None;
        }
        state::save(self.store(), &server_key(&self.server_url), binding).await?;
        self.memory().binding = Some(binding.clone());
        Ok(())
    }

    /// One authorization (SPEC 10.1 steps 4–7): identity, authorization request through the
    /// authorizer, response checks, token request; the tokens are stored.
    async fn authorize(
        &self,
        binding: &ServerBinding,
        scopes: Vec<String>,
    ) -> Result<(), AuthError> {
        let config = &self.config;
        let meta = &binding.metadata;
        let client = registration::resolve(config, &self.http, meta).await?;
        let flight = InFlight::new(
            &meta.issuer,
            meta.iss_parameter_supported,
            binding.resource.as_deref(),
            &config.redirect_uri,
            &client.client_id,
            scopes,
        );
        let prompt = AuthorizationPrompt {
            url: flight.url(&meta.authorization_endpoint)?,
            redirect_uri: config.redirect_uri.clone(),
            server_name: lock(&self.server_name).clone(),
            server_url: self.server_url.clone(),
            scopes: flight.scopes.clone(),
        };
        let limit = config.authorize_timeout;
        // A person's time, queued behind the config's other authorizations: outside the
        // deadlines (SPEC 10.3), bounded by `limit` once it is this one's turn.
        let interactive = config.authorizer.interactive();
        let waiting = interactive.then(|| UserWait::new(&self.waiting_for_user));
        let turn = match interactive {
            true => Some(config.turn.lock().await),
            false => None,
        };
        let callback = tokio::time::timeout(limit, config.authorizer.authorize(prompt))
            .await
            .map_err(|_| {
                AuthError::Authorizer(format!("no authorization within {}ms", limit.as_millis()))
            });
        drop((turn, waiting));
        let callback = callback??;
        let code = flight.code_from(&callback)?;
        drop(callback);
        let response = self
            .token_request(binding, &client)
            .exchange_code(&code, &flight.pkce.verifier, &flight.redirect_uri)
            .await
            .map_err(AuthError::from)?;
        drop(code);
        let record = tokens_from(response, None, binding, &client.client_id, flight.scopes);
        self.keep(binding, record).await
    }

    /// A refresh with the client the tokens were issued to; the refresh token is replaced when
    /// a new one comes. Without that client (its registration is gone) it counts as refused.
    async fn refresh(
        &self,
        binding: &ServerBinding,
        held: &TokenRecord,
    ) -> Result<TokenRecord, TokenError> {
        let Some(refresh_token) = &held.refresh_token else {
            return Err(TokenError::Refused(AuthError::TokenEndpoint {
                error: "no refresh token".into(),
            }));
        };
        let client = registration::find(&self.config, binding.issuer(), &held.client_id)
            .await
            .map_err(TokenError::Unreachable)?
            .ok_or_else(|| {
                TokenError::Refused(AuthError::TokenEndpoint {
                    error: "the client the tokens were issued to is gone".into(),
                })
            })?;
        let response = self
            .token_request(binding, &client)
            .refresh(refresh_token)
            .await?;
        let record = tokens_from(
            response,
            Some(held),
            binding,
            &client.client_id,
            held.requested_scopes.clone(),
        );
        self.keep(binding, record.clone())
            .await
            .map_err(TokenError::Unreachable)?;
        Ok(record)
    }

    fn token_request<'a>(
        &'a self,
        binding: &'a ServerBinding,
        client: &'a state::ClientRecord,
    ) -> TokenRequest<'a> {
        TokenRequest {
            http: &self.http,
            endpoint: &binding.metadata.token_endpoint,
            client,
            supported: binding
                .metadata
                .token_endpoint_auth_methods_supported
                .as_deref(),
            resource: binding.resource.as_deref(),
        }
    }

    async fn keep(&self, binding: &ServerBinding, record: TokenRecord) -> Result<(), AuthError> {
        state::save(self.store(), &binding.tokens_key(), &record).await?;
        self.memory().tokens = Some(record);
        Ok(())
    }
}

/// The record of a token response: `expires_at = now + expires_in`; granted scopes are the
/// response's, else (RFC 6749 §5.1) those requested — for a refresh, those granted before; a
/// refresh without a new refresh token keeps the old one.
fn tokens_from(
    response: TokenResponse,
    previous: Option<&TokenRecord>,
    binding: &ServerBinding,
    client_id: &str,
    requested: Vec<String>,
) -> TokenRecord {
    let granted = response.scope.unwrap_or_else(|| match previous {
        Some(p) => p.granted_scopes.clone(),
        None => requested.clone(),
    });
    TokenRecord {
        access_token: response.access_token,
        expires_at: response.expires_in.map(|s| state::now().saturating_add(s)),
        refresh_token: response
            .refresh_token
            .or_else(|| previous.and_then(|p| p.refresh_token.clone())),
        granted_scopes: granted,
        requested_scopes: requested,
        issuer: binding.issuer().to_string(),
        resource: binding.resource.clone(),
        client_id: client_id.to_string(),
    }
}
