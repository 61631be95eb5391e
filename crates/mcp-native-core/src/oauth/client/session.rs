//! [`OAuthClient`]: the OAuth state of one server URL and the transport's [`AuthHook`].
//!
//! Every request asks it for the `Authorization` value: from memory when the tokens are loaded
//! and not due for refresh (no await), else after loading them from the store or refreshing
//! them. Every refusal is decided by [`machine::decide`](super::machine) and acted on: retry,
//! rediscover and refresh or authorize, step up, report or fail.
//!
//! Work that talks to the network (loading from the store, refreshing, discovery, the whole
//! authorization) runs as a task of the crate's runtime, one at a time per server (an async
//! lock), and is awaited by the request that asked for it. A request that gives up (its
//! deadline) does not cancel that work: a user who is still in the browser can finish, and the
//! tokens are there for the next attempt. Dropping the `OAuthClient` aborts what is still
//! running. The wait for the lock is bounded by what holds it: every HTTP request by
//! [`OAuthConfig::request_timeout`], the authorizer by [`OAuthConfig::authorize_timeout`].

use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use tokio::task::AbortHandle;

use super::flow::{Shared, lock};
use super::http::OAuthHttp;
use super::machine::{self, Decision};
use super::state;
use super::{AuthError, OAuthConfig};
use crate::error::Error;
use crate::sync::Locked;
use crate::transport::{AuthHook, AuthRefusal};

/// The OAuth client of one MCP server URL (SPEC 10): install it on the server's HTTP transport
/// with [`Transport::set_auth_hook`](crate::transport::Transport::set_auth_hook) (the Rust
/// [`Client`](crate::client::Client) does so when
/// [`ClientOptions::oauth`](crate::client::ClientOptions::oauth) is set).
pub struct OAuthClient {
    shared: Arc<Shared>,
    tasks: Mutex<Vec<AbortHandle>>,
}

impl std::fmt::Debug for OAuthClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthClient")
            .field("server_url", &self.shared.server_url)
            .finish_non_exhaustive()
    }
}

impl OAuthClient {
    /// The OAuth client for the server at `server_url` (an http(s) URL, kept as given: it keys
    /// the stored binding and is what a PRM `resource` is compared with).
    pub fn new(config: Arc<OAuthConfig>, server_url: impl Into<String>) -> Result<Self, AuthError> {
        config.validate()?;
        let server_url = server_url.into();
        match url::Url::parse(&server_url) {
            Ok(u) if matches!(u.scheme(), "http" | "https") => {}
            _ => {
                return Err(AuthError::Config(format!(
                    "the server URL \"{server_url}\" is not an http(s) URL"
                )));
            }
        }
        let http = OAuthHttp::new(config.request_timeout)?;
        Ok(OAuthClient {
            shared: Arc::new(Shared::new(config, server_url, http)),
            tasks: Mutex::new(Vec::new()),
        })
    }

    /// Names the server in [`AuthorizationPrompt`](super::AuthorizationPrompt)s.
    pub fn with_server_name(self, name: impl Into<String>) -> Self {
        *lock(&self.shared.server_name) = Some(name.into());
        self
    }

    /// The `MCP-Protocol-Version` discovery requests send while the transport has negotiated
    /// none (the version the client offers).
    pub fn with_protocol_version(self, version: impl Into<String>) -> Self {
        *lock(&self.shared.protocol_version) = Some(version.into());
        self
    }

    /// Whether the authorizer is running now (the user's time in the browser), as a watch:
    /// the client's connect deadline and the manager's startup gate do not wait for the user
    /// (SPEC 10.3).
    pub fn waiting_for_user(&self) -> tokio::sync::watch::Receiver<bool> {
        self.shared.waiting_for_user.subscribe()
    }

    /// The server URL.
    pub fn server_url(&self) -> &str {
        &self.shared.server_url
    }

    /// The configuration.
    pub fn config(&self) -> &Arc<OAuthConfig> {
        &self.shared.config
    }

    /// Authorizes now, without waiting for a 401: discovery (PRM at the well-known locations),
    /// registration, the authorizer, the token request. Tokens held are replaced.
    pub async fn login(&self) -> Result<(), AuthError> {
        self.run(|s| Box::pin(async move { s.login().await })).await
    }

    /// Forgets the tokens of this server (in memory and in the store); registrations stay.
    pub async fn logout(&self) -> Result<(), AuthError> {
        self.run(|s| {
            Box::pin(async move {
                let _turn = s.op.lock().await;
                s.ensure_loaded().await?;
                s.forget_tokens().await
            })
        })
        .await
    }

    /// Whether tokens are held (after loading them from the store).
    pub async fn has_tokens(&self) -> Result<bool, AuthError> {
        self.run(|s| {
            Box::pin(async move {
                let _turn = s.op.lock().await;
                s.ensure_loaded().await?;
                Ok(s.memory().tokens.is_some())
            })
        })
        .await
    }

    /// Runs `work` as a task of the crate's runtime that outlives a caller who gives up, but not
    /// this client.
    fn run<T: Send + 'static>(
        &self,
        work: impl FnOnce(Arc<Shared>) -> BoxFuture<'static, Result<T, AuthError>>,
    ) -> BoxFuture<'static, Result<T, AuthError>> {
        let task = crate::runtime::handle().spawn(work(self.shared.clone()));
        {
            let mut tasks = lock(&self.tasks);
            tasks.retain(|t| !t.is_finished());
            tasks.push(task.abort_handle());
        }
        Box::pin(async move {
            task.await.unwrap_or_else(|_| {
                Err(AuthError::Authorizer(
                    "the OAuth client was closed".to_string(),
                ))
            })
        })
    }
}

impl Drop for OAuthClient {
    fn drop(&mut self) {
        for task in self.tasks.locked_mut().drain(..) {
            task.abort();
        }
    }
}

impl AuthHook for OAuthClient {
    fn authorization(&self) -> BoxFuture<'static, Result<Option<String>, Error>> {
        if let Some(ready) = self.shared.ready_header(state::now()) {
            return Box::pin(async move { Ok(ready) });
        }
        let work = self.run(|s| Box::pin(async move { s.header().await }));
        Box::pin(async move { work.await.map_err(Error::from) })
    }

    fn challenge(&self, refusal: AuthRefusal) -> BoxFuture<'static, Result<bool, Error>> {
        let work = self.run(|s| Box::pin(async move { s.on_refusal(refusal).await }));
        Box::pin(async move { work.await.map_err(Error::from) })
    }
}

impl Shared {
    /// Acts on a refusal (one at a time per server).
    async fn on_refusal(self: Arc<Self>, refusal: AuthRefusal) -> Result<bool, AuthError> {
        let _turn = self.op.lock().await;
        self.ensure_loaded().await?;
        let held = self.memory().tokens.clone();
        let protocol_version = refusal
            .protocol_version
            .clone()
            .or_else(|| lock(&self.protocol_version).clone());
        match machine::decide(&refusal, held.as_ref(), self.config.max_step_ups) {
            Decision::Retry => Ok(true),
            Decision::Report => Ok(false),
            Decision::Fail(AuthError::TokenRejected) => {
                // Useless now: the next request starts a fresh authorization instead of
                // repeating this one.
                self.forget_tokens().await?;
                Err(AuthError::TokenRejected)
            }
            Decision::Fail(e) => Err(e),
            Decision::Reauthorize(challenge) => {
                self.reauthorize(
                    &challenge,
                    refusal.sent_authorization.as_deref(),
                    protocol_version.as_deref(),
                )
                .await?;
                Ok(true)
            }
            Decision::StepUp(scopes) => {
                self.step_up(scopes, protocol_version.as_deref()).await?;
                Ok(true)
            }
        }
    }
}
