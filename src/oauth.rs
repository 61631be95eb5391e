//! OAuth (SPEC 8.6, 8.7) for `lib/oauth-discovery.js` and `lib/oauth-flow.js`: endpoint
//! discovery, and the steps of one login as the methods of `NativeOAuthFlow` (the JS side
//! sequences them and calls the user's callbacks in between). Every promise but `stop` can be
//! cut short by the `OAuthCancel` it was given — the JS side fires it from its `AbortSignal` —
//! which stops the Rust work at once (its request dropped) and rejects with code `MCP_ABORTED`;
//! by then the JS side has already rejected with its own error.

use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use tokio::sync::watch;

use super::convert::millis;
use super::errors::{guard, js_error, promise};
use mcp_native_core::error::Error as McpError;
use mcp_native_core::oauth::discovery::discover;
use mcp_native_core::oauth::flow::{Flow, FlowConfig};

/// A cancel switch for OAuth work, fired once from JS (by an `AbortSignal`'s abort event).
#[napi(custom_finalize)]
pub struct OAuthCancel {
    tx: watch::Sender<bool>,
}

#[napi]
impl OAuthCancel {
    /// A switch that has not fired.
    #[napi(constructor)]
    pub fn new(env: Env) -> Result<Self> {
        guard(&env, || {
            Ok(OAuthCancel {
                tx: watch::Sender::new(false),
            })
        })
    }

    /// Stops every piece of work this switch was given (now and later).
    #[napi]
    pub fn cancel(&self, env: Env) -> Result<()> {
        guard(&env, || {
            self.tx.send_replace(true);
            Ok(())
        })
    }
}

/// Runs `work` unless `cancel` fires first (then `work` is dropped: `Error::Aborted`). A switch
/// that JS dropped without firing never fires.
async fn unless_cancelled<T>(
    mut cancel: watch::Receiver<bool>,
    work: impl Future<Output = std::result::Result<T, McpError>>,
) -> std::result::Result<T, McpError> {
    let fired = async move {
        if cancel.wait_for(|fired| *fired).await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    tokio::select! {
        // Dropping `work` is what cancelling means here; `fired` holds no data.
        outcome = work => outcome,
        () = fired => Err(McpError::Aborted),
    }
}

fn duration(ms: f64) -> Duration {
    Duration::from_millis(millis(ms))
}

/// SPEC 8.6 `discoverOAuthEndpoints`: the endpoints as JSON text (`authorizationUrl`,
/// `tokenUrl`, and `clientId`/`scopes` when found, with the values as the document held them),
/// or null. Each probe is bounded by `probeTimeoutMs`.
#[napi(ts_return_type = "Promise<string | null>")]
pub fn oauth_discover<'env>(
    env: &'env Env,
    server_url: String,
    probe_timeout_ms: f64,
    cancel: &OAuthCancel,
) -> Result<Object<'env>> {
    guard(env, || {
        let fired = cancel.tx.subscribe();
        let probe_timeout = duration(probe_timeout_ms);
        promise(env, async move {
            unless_cancelled(fired, async move {
                let found = discover(&server_url, probe_timeout).await;
                Ok(found.map(|f| serde_json::to_string(&f).unwrap_or_default()))
            })
            .await
        })
    })
}

/// SPEC 8.7: starts a login — fresh `state` and PKCE pair, the callback listener on
/// `preferredPort` or else a free port. `configJson`: `{ authorizationUrl, tokenUrl, clientId?,
/// clientSecret?, scopes? }` (strings).
#[napi(ts_return_type = "Promise<NativeOAuthFlow>")]
pub fn oauth_flow_start<'env>(
    env: &'env Env,
    config_json: String,
    preferred_port: u32,
    cancel: &OAuthCancel,
) -> Result<Object<'env>> {
    guard(env, || {
        let fired = cancel.tx.subscribe();
        let config = serde_json::from_str::<FlowConfig>(&config_json)
            .map_err(|_| McpError::InvalidConfig("the OAuth config needs string URLs".into()));
        let port = u16::try_from(preferred_port).unwrap_or(0);
        promise(env, async move {
            let config = config?;
            let flow = unless_cancelled(fired.clone(), Flow::start(config, port)).await?;
            Ok(NativeOAuthFlow {
                flow: Arc::new(flow),
                fired,
            })
        })
    })
}

/// One login in progress (from `oauthFlowStart`). It holds the secrets; JS sees the
/// authorization URL, whether a code arrived, and the token endpoint's 2xx body.
#[napi(custom_finalize)]
pub struct NativeOAuthFlow {
    flow: Arc<Flow>,
    fired: watch::Receiver<bool>,
}

#[napi]
impl NativeOAuthFlow {
    /// The port the callback listener is on.
    #[napi(getter)]
    pub fn port(&self, env: Env) -> Result<u32> {
        guard(&env, || Ok(u32::from(self.flow.port())))
    }

    /// True when the preferred port was unavailable.
    #[napi(getter)]
    pub fn fell_back(&self, env: Env) -> Result<bool> {
        guard(&env, || Ok(self.flow.fell_back()))
    }

    /// Dynamic client registration when no client id is known (failures ignored), each request
    /// bounded by `timeoutMs`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn register<'env>(&self, env: &'env Env, timeout_ms: f64) -> Result<Object<'env>> {
        guard(env, || {
            let (flow, fired) = (self.flow.clone(), self.fired.clone());
            let deadline = duration(timeout_ms);
            promise(env, async move {
                unless_cancelled(fired, async move {
                    flow.register(deadline).await;
                    Ok(())
                })
                .await
            })
        })
    }

    /// The URL for the browser (throws `Invalid config: …` for an unparsable authorizationUrl).
    #[napi]
    pub fn authorization_url(&self, env: Env) -> Result<String> {
        guard(&env, || {
            self.flow
                .authorization_url()
                .map_err(|e| js_error(&env, &e))
        })
    }

    /// Waits up to `timeoutMs` for the callback: true once it brought a code, false at the
    /// deadline; rejects with its refusal (`Authorization failed: …`, `Missing authorization
    /// code`, `State mismatch - possible CSRF attack`).
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn wait_for_code<'env>(&self, env: &'env Env, timeout_ms: f64) -> Result<Object<'env>> {
        guard(env, || {
            let (flow, fired) = (self.flow.clone(), self.fired.clone());
            let deadline = duration(timeout_ms);
            promise(env, async move {
                unless_cancelled(fired, async move { flow.wait_for_code(deadline).await }).await
            })
        })
    }

    /// Takes a pasted code (and the `state` pasted with it): throws `State mismatch - possible
    /// CSRF attack` for a foreign state, `Missing authorization code` for an empty code.
    #[napi]
    pub fn supply_code(&self, env: Env, code: String, state: Option<String>) -> Result<()> {
        guard(&env, || {
            self.flow
                .supply_code(code, state)
                .map_err(|e| js_error(&env, &e))
        })
    }

    /// Exchanges the code for tokens within `timeoutMs`: the token endpoint's 2xx body, or
    /// `Token exchange failed: …`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn exchange<'env>(&self, env: &'env Env, timeout_ms: f64) -> Result<Object<'env>> {
        guard(env, || {
            let (flow, fired) = (self.flow.clone(), self.fired.clone());
            let deadline = duration(timeout_ms);
            promise(env, async move {
                unless_cancelled(fired, async move { flow.exchange(deadline).await }).await
            })
        })
    }

    /// Stops the callback listener; resolves once its port is free. Never cancelled.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn stop<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        guard(env, || {
            let flow = self.flow.clone();
            promise(env, async move {
                flow.stop().await;
                Ok(())
            })
        })
    }
}

super::errors::guarded_finalize!(OAuthCancel);

super::errors::guarded_finalize!(NativeOAuthFlow);
