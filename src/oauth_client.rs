//! `NativeOAuth`: the `oauth` option of `MCPClient`, `connectToServer` and `MCPManager` (SPEC
//! 10.3) as an [`OAuthConfig`] of the Rust OAuth client. `lib/oauth-client.js` makes one from the
//! option: the settings as JSON, plus one JS callback, `host(kind, payloadJson) → Promise<string>`,
//! for what only JavaScript can do — `authorize` (the user's `onAuthorize`), `openUrl` (the
//! loopback authorizer's URL), and `get`/`set`/`delete` of a JS store. The JS side bounds every
//! user call (a timeout, a throw or garbage become a rejection); this side bounds it again.
//!
//! A client takes the config through its options JSON (`oauthId`): each `NativeOAuth` registers
//! its config under an id while it lives; a client that got it keeps its own reference.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Value, json};

use super::errors::guard;
use super::host::HostCallback;
use mcp_native_core::oauth::client::{
    AuthError, AuthStore, AuthorizationPrompt, Authorizer, FileStore, HeadlessAuthorizer,
    LoopbackAuthorizer, ManualAuthorizer, OAuthConfig,
};
use mcp_native_core::sync::Locked;

/// How long a store call may take before it counts as failed.
const STORE_TIMEOUT: Duration = Duration::from_secs(10);

/// The configs of the live `NativeOAuth` objects, by id.
static CONFIGS: Mutex<Option<HashMap<u32, Arc<OAuthConfig>>>> = Mutex::new(None);
static NEXT_ID: AtomicU32 = AtomicU32::new(1);

fn configs() -> std::sync::MutexGuard<'static, Option<HashMap<u32, Arc<OAuthConfig>>>> {
    CONFIGS.locked()
}

/// The config a live `NativeOAuth` registered under `id`.
pub(super) fn config_of(id: u32) -> Option<Arc<OAuthConfig>> {
    configs().as_ref().and_then(|m| m.get(&id).cloned())
}

fn prompt_json(prompt: &AuthorizationPrompt) -> Value {
    json!({
        "url": prompt.url,
        "redirectUri": prompt.redirect_uri,
        "serverName": prompt.server_name,
        "serverUrl": prompt.server_url,
        "scopes": prompt.scopes,
    })
}

/// A store in JavaScript (`{ get, set, delete }`); values are JSON text. A rejection's reason is
/// worded by the JS side (never the user's message, which might hold a secret).
struct JsStore(Arc<HostCallback>);

impl JsStore {
    fn bounded(
        &self,
        kind: &'static str,
        payload: Value,
    ) -> BoxFuture<'static, std::result::Result<String, AuthError>> {
        let ask = super::host::ask(&self.0, kind, &payload);
        Box::pin(async move {
            match tokio::time::timeout(STORE_TIMEOUT, ask).await {
                Ok(Ok(text)) => Ok(text),
                Ok(Err(reason)) => Err(AuthError::Store(format!(
                    "the store's {kind} failed: {reason}"
                ))),
                Err(_) => Err(AuthError::Store(format!(
                    "the store's {kind} did not answer within {}ms",
                    STORE_TIMEOUT.as_millis()
                ))),
            }
        })
    }
}

impl AuthStore for JsStore {
    fn get<'a>(
        &'a self,
        key: &'a str,
    ) -> BoxFuture<'a, std::result::Result<Option<String>, AuthError>> {
        let ask = self.bounded("get", json!({ "key": key }));
        Box::pin(async move {
            // `{"value": string | null}`: the JS side wraps what the store returned.
            let text = ask.await?;
            let v: Value = serde_json::from_str(&text)
                .map_err(|_| AuthError::Store("the store's get answered garbage".into()))?;
            Ok(v.get("value").and_then(Value::as_str).map(str::to_owned))
        })
    }

    fn set<'a>(
        &'a self,
        key: &'a str,
        value: String,
    ) -> BoxFuture<'a, std::result::Result<(), AuthError>> {
        let ask = self.bounded("set", json!({ "key": key, "value": value }));
        Box::pin(async move { ask.await.map(|_| ()) })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, std::result::Result<(), AuthError>> {
        let ask = self.bounded("delete", json!({ "key": key }));
        Box::pin(async move { ask.await.map(|_| ()) })
    }
}

/// The OAuth settings of an `oauth` option (see `lib/oauth-client.js`), registered for clients.
#[napi]
pub struct NativeOAuth {
    id: u32,
}

#[napi]
impl NativeOAuth {
    /// `configJson`: the settings `OAuthConfig::from_json` reads, plus `authorizer`
    /// (`"function"` | `"loopback"` | `"headless"`) and `store` (`"js"` | `"memory"` |
    /// `{ "file": path }`); `host(kind, payloadJson)` answers `authorize`, `openUrl`, `get`,
    /// `set` and `delete`. An invalid config throws with code `MCP_OAUTH_ERROR`.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        config_json: String,
        host: Function<'_, (String, String), Promise<String>>,
    ) -> Result<Self> {
        guard(&env, || {
            let host = super::host::host_callback(&env, host)?;
            let mut v: Value = serde_json::from_str(&config_json)
                .map_err(|_| Error::from_reason("the oauth option must be an object"))?;
            let (authorizer_kind, store_kind) = match v.as_object_mut() {
                Some(o) => (o.remove("authorizer"), o.remove("store")),
                None => return Err(Error::from_reason("the oauth option must be an object")),
            };
            let authorizer: Arc<dyn Authorizer> = match authorizer_kind
                .as_ref()
                .and_then(Value::as_str)
            {
                Some("headless") => Arc::new(
                    HeadlessAuthorizer::new().map_err(|e| Error::from_reason(e.to_string()))?,
                ),
                Some("loopback") => {
                    let open = host.clone();
                    Arc::new(LoopbackAuthorizer::new(Arc::new(move |url: &str| {
                        let ask = super::host::ask(&open, "openUrl", &json!({ "url": url }));
                        mcp_native_core::runtime::handle().spawn(async move {
                            let _ = ask.await;
                        });
                        Ok(())
                    })))
                }
                _ => {
                    let ask = host.clone();
                    Arc::new(ManualAuthorizer::new(Arc::new(
                        move |prompt: AuthorizationPrompt| {
                            let call = super::host::ask(&ask, "authorize", &prompt_json(&prompt));
                            Box::pin(async move {
                                call.await.map_err(|reason| {
                                    AuthError::Authorizer(format!("onAuthorize failed: {reason}"))
                                })
                            })
                                as BoxFuture<'static, std::result::Result<String, AuthError>>
                        },
                    )))
                }
            };
            let store: Option<Arc<dyn AuthStore>> = match store_kind.as_ref() {
                Some(Value::String(s)) if s == "js" => Some(Arc::new(JsStore(host.clone()))),
                Some(Value::Object(o)) => o
                    .get("file")
                    .and_then(Value::as_str)
                    .map(|path| Arc::new(FileStore::new(path)) as Arc<dyn AuthStore>),
                _ => None,
            };
            let config =
                OAuthConfig::from_json(&v.to_string(), store, authorizer).map_err(|e| {
                    let mut err = Error::from_reason(e.to_string());
                    err.status = Status::InvalidArg;
                    err
                })?;
            let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
            configs()
                .get_or_insert_with(HashMap::new)
                .insert(id, Arc::new(config));
            Ok(NativeOAuth { id })
        })
    }

    /// The id clients name in their options (`oauthId`).
    #[napi(getter)]
    pub fn id(&self) -> u32 {
        self.id
    }
}

impl Drop for NativeOAuth {
    /// Runs in napi-rs's finalizer, called from C: guarded (see `errors::no_unwind`).
    fn drop(&mut self) {
        let id = self.id;
        super::errors::no_unwind("NativeOAuth's finalizer", || {
            if let Some(m) = configs().as_mut() {
                m.remove(&id);
            }
        });
    }
}
