//! `NativeManager`: the napi face of [`mcp_native_core::manager::Manager`]. `manager.js` wraps it in the
//! public `MCPManager`; the manager's lifecycle calls into the agent's injected functions
//! (config resolution, the tool cache, the tool factory, the logger) go through one JS callback,
//! `host(kind, payload)`, and its events through one batch (`[Server,tag,event]` for a server's
//! own events, `[Manager,…]` for the manager's: [`EventKind`]).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Value, json};

use super::client::{NativeClient, TaggedSink};
use super::convert::millis;
use super::errors::{descriptor_text, guard, promise};
use super::host::HostCallback;
use super::sink::{BatchSink, Delivery, EventKind};
use mcp_native_core::client::{Client, ClientSink};
use mcp_native_core::error::Error as McpError;
use mcp_native_core::manager::{
    ConnectionEvent, LogLevel, Manager, ManagerEvent, ManagerHost, ManagerOptions,
    ReconnectSchedule,
};
use mcp_native_core::sync::Locked;

/// The manager's host in JavaScript: one callback for the calls that answer, the batch for the
/// rest.
struct JsHost {
    call: Arc<HostCallback>,
    batch: Arc<BatchSink>,
    /// The tag of each server's latest start.
    tags: Mutex<HashMap<String, u32>>,
    next_tag: std::sync::atomic::AtomicU32,
}

impl JsHost {
    fn ask(
        &self,
        kind: &'static str,
        payload: Value,
    ) -> BoxFuture<'static, std::result::Result<String, McpError>> {
        let ask = super::host::ask(&self.call, kind, &payload);
        Box::pin(async move { ask.await.map_err(McpError::Io) })
    }

    fn push(&self, event: Value) {
        self.batch.push_event(&event.to_string());
    }
}

impl ManagerHost for JsHost {
    fn prepare(
        &self,
        name: &str,
        _config: Value,
    ) -> BoxFuture<'static, std::result::Result<Value, McpError>> {
        let ask = self.ask("prepare", json!({ "name": name }));
        Box::pin(async move {
            let text = ask.await?;
            serde_json::from_str(&text)
                .map_err(|_| McpError::InvalidConfig("the config must be an object".into()))
        })
    }

    fn cache_get(&self, name: &str, _config: &Value) -> BoxFuture<'static, Option<Vec<Value>>> {
        let ask = self.ask("cacheGet", json!({ "name": name }));
        Box::pin(async move {
            ask.await
                .ok()
                .and_then(|text| serde_json::from_str(&text).ok())
        })
    }

    fn cache_set(&self, name: &str, _config: &Value, tools: &[Value]) {
        self.push(json!([EventKind::Manager.n(), "cacheSet", name, tools]));
    }

    fn tools(
        &self,
        name: &str,
        client: &Client,
        tools: &[Value],
    ) -> BoxFuture<'static, std::result::Result<(), McpError>> {
        let ask = self.ask(
            "tools",
            json!({ "name": name, "generation": client.generation(), "tools": tools }),
        );
        Box::pin(async move { ask.await.map(|_| ()) })
    }

    fn stand_in(
        &self,
        name: &str,
        tools: Vec<Value>,
    ) -> BoxFuture<'static, std::result::Result<(), McpError>> {
        let ask = self.ask("defer", json!({ "name": name, "tools": tools }));
        Box::pin(async move { ask.await.map(|_| ()) })
    }

    fn log(&self, level: LogLevel, message: &str, details: Value) {
        let level = match level {
            LogLevel::Error => "error",
            LogLevel::Warn => "warn",
            LogLevel::Debug => "debug",
        };
        self.push(json!([
            EventKind::Manager.n(),
            "log",
            level,
            message,
            details
        ]));
    }

    fn event(&self, event: ManagerEvent) {
        match event {
            ManagerEvent::Starting { server, .. } => {
                let tag = self.tags.locked().get(&server).copied().unwrap_or(0);
                self.push(json!([EventKind::Manager.n(), "starting", server, tag]));
            }
            ManagerEvent::Status {
                server,
                status,
                error,
            } => {
                let error: Value = error.map_or(Value::Null, |e| {
                    serde_json::from_str(&descriptor_text(&e)).unwrap_or(Value::Null)
                });
                self.push(json!([
                    EventKind::Manager.n(),
                    "status",
                    server,
                    status.as_str(),
                    error
                ]));
            }
            ManagerEvent::Removed { server } => {
                self.push(json!([EventKind::Manager.n(), "removed", server]))
            }
            // The 18.3.4 status events (`startup-events.ts`), for the root face; the 12.7 face
            // reports its own `onServerStatus` and ignores them.
            ManagerEvent::Connection { event, call } => {
                let kind = EventKind::Manager.n();
                self.push(match event {
                    ConnectionEvent::Connecting { servers } => {
                        json!([kind, "connection", call, "connecting", servers])
                    }
                    ConnectionEvent::Reconnecting { server } => {
                        json!([kind, "connection", call, "reconnecting", server])
                    }
                    ConnectionEvent::Connected { server } => {
                        json!([kind, "connection", call, "connected", server])
                    }
                    ConnectionEvent::Failed { server, error } => {
                        json!([kind, "connection", call, "failed", server, error])
                    }
                });
            }
        }
    }

    fn client_sink(&self, name: &str) -> Option<Arc<dyn ClientSink>> {
        let tag = self
            .next_tag
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed)
            + 1;
        self.tags.locked().insert(name.to_owned(), tag);
        Some(Arc::new(TaggedSink {
            tag,
            batch: self.batch.clone(),
        }))
    }
}

/// Many servers for JavaScript. Use `MCPManager` from the package root instead.
#[napi(custom_finalize)]
pub struct NativeManager {
    manager: Manager,
    host: Arc<JsHost>,
}

#[napi]
impl NativeManager {
    /// `optionsJson`: the client options of every server (as `NativeClient`'s); `onEvents(batch)`
    /// gets every event; `host(kind, payload)` answers the manager's lifecycle calls.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        options_json: String,
        on_events: Function<'_, String, Unknown<'static>>,
        host: Function<'_, (String, String), Promise<String>>,
    ) -> Result<Self> {
        guard(&env, || {
            let client = super::client_options::client_options(&options_json)
                .map_err(|e| Error::from_reason(e.to_string()))?;
            let batch = BatchSink::new(&env, on_events)?;
            let call = super::host::host_callback(&env, host)?;
            let host = Arc::new(JsHost {
                call,
                batch,
                tags: Mutex::default(),
                next_tag: Default::default(),
            });
            let options = manager_options(&options_json, client);
            Ok(NativeManager {
                manager: Manager::new(options, host.clone()),
                host,
            })
        })
    }

    /// Starts the servers of `configsJson` (`[[name, config, problems?], …]`, in order): `{
    /// started, connected, errors: [[name, message], …] }` as JSON. `problems`: what the agent's
    /// injected `validateServerConfig` found in that config (non-empty: refused with its words).
    #[napi]
    pub fn start(&self, env: Env, configs_json: String) -> Result<String> {
        guard(&env, || {
            let entries: Vec<Vec<Value>> = serde_json::from_str(&configs_json).unwrap_or_default();
            let mut configs = Vec::with_capacity(entries.len());
            let mut found: HashMap<String, Vec<String>> = HashMap::new();
            for entry in entries {
                let mut parts = entry.into_iter();
                let (Some(Value::String(name)), Some(config)) = (parts.next(), parts.next()) else {
                    continue;
                };
                if let Some(Value::Array(problems)) = parts.next() {
                    let problems: Vec<String> = problems
                        .into_iter()
                        .map(|p| match p {
                            Value::String(s) => s,
                            other => other.to_string(),
                        })
                        .collect();
                    found.insert(name.clone(), problems);
                }
                configs.push((name, config));
            }
            let r = self
                .manager
                .start_with(configs, |name, _| found.remove(name).unwrap_or_default());
            Ok(json!({
                "started": r.started,
                "connected": r.connected,
                "errors": r.errors,
                "call": r.call,
            })
            .to_string())
        })
    }

    /// The startup gate for `startedJson` (names): `{ connected, deferred, pending, errors }`
    /// as JSON. `windowMs`: this call's window (absent: the manager's; `0`: wait for every
    /// server, as 18.3.4's `startupTimeoutMs: 0`).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn gate<'env>(
        &self,
        env: &'env Env,
        started_json: String,
        window_ms: Option<f64>,
    ) -> Result<Object<'env>> {
        guard(env, || {
            let manager = self.manager.clone();
            let started: Vec<String> = serde_json::from_str(&started_json).unwrap_or_default();
            promise(env, async move {
                let r = match window_ms {
                    None => manager.gate(&started).await,
                    Some(ms) if ms > 0.0 => {
                        let window = duration(ms);
                        manager.gate_within(&started, Some(window)).await
                    }
                    Some(_) => manager.gate_within(&started, None).await,
                };
                Ok(json!({
                    "connected": r.connected,
                    "deferred": r.deferred,
                    "pending": r.pending,
                    "errors": r.errors.iter().map(|(n, e)| (n, e.to_string())).collect::<Vec<_>>(),
                })
                .to_string())
            })
        })
    }

    /// Connects server `name` again under the 18.3.4 reconnect policy (`manual`: the breaker's
    /// window starts over): whether it is connected after.
    #[napi(ts_return_type = "Promise<boolean>")]
    pub fn reconnect<'env>(
        &self,
        env: &'env Env,
        name: String,
        manual: bool,
    ) -> Result<Object<'env>> {
        guard(env, || {
            // Begun here, not when the runtime first polls: `getConnectionStatus` right after
            // `reconnectServer` reads `connecting` (18.3.4 marks the server at once).
            let outcome = self.manager.begin_reconnect(&name, manual);
            promise(env, async move { Ok(outcome.await.is_some()) })
        })
    }

    /// 18.3.4 `waitForStartup`: `{ connected, pending, failed: [[name, error], …] }` as JSON once
    /// nothing starts or reconnects, or after `timeoutMs` (absent or `0`: no deadline).
    #[napi(ts_return_type = "Promise<string>")]
    pub fn wait_for_startup<'env>(
        &self,
        env: &'env Env,
        timeout_ms: Option<f64>,
    ) -> Result<Object<'env>> {
        guard(env, || {
            let manager = self.manager.clone();
            let timeout = timeout_ms.filter(|ms| *ms > 0.0).map(duration);
            promise(env, async move {
                let s = manager.wait_for_startup(timeout).await;
                Ok(
                    json!({ "connected": s.connected, "pending": s.pending, "failed": s.failed })
                        .to_string(),
                )
            })
        })
    }

    /// 18.3.4 `waitForPendingConnections`: resolves once nothing starts or reconnects.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn wait_for_pending<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        guard(env, || {
            let manager = self.manager.clone();
            promise(env, async move {
                manager.wait_for_pending().await;
                Ok(())
            })
        })
    }

    /// A failure of the startup that is no server's (the config loader's): it counts for
    /// `waitForStartup` and is reported.
    #[napi]
    pub fn startup_failed(&self, env: Env, name: String, error: String) -> Result<()> {
        guard(&env, || {
            self.manager.startup_failed(&name, &error);
            Ok(())
        })
    }

    /// `connecting`, `connected` or `disconnected`.
    #[napi]
    pub fn status(&self, env: Env, name: String) -> Result<String> {
        guard(&env, || Ok(self.manager.status(&name).as_str().into()))
    }

    /// Connected servers, in start order.
    #[napi]
    pub fn connected_servers(&self, env: Env) -> Result<Vec<String>> {
        guard(&env, || Ok(self.manager.connected_servers()))
    }

    /// Servers starting now, in start order.
    #[napi]
    pub fn pending_servers(&self, env: Env) -> Result<Vec<String>> {
        guard(&env, || Ok(self.manager.pending_servers()))
    }

    /// A handle on server `name`'s client (while the manager holds it), for its transport face.
    #[napi]
    pub fn client(&self, env: Env, name: String, tag: u32) -> Result<Option<NativeClient>> {
        guard(&env, || {
            Ok(self.manager.any_client(&name).map(|client| {
                let sink: Arc<dyn ClientSink> = Arc::new(TaggedSink {
                    tag,
                    batch: self.host.batch.clone(),
                });
                NativeClient::over(client, sink, self.host.batch.clone())
            }))
        })
    }

    /// Resolves once server `name` is connected; rejects with its failure, or
    /// `MCP server not connected: <name>`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn wait<'env>(&self, env: &'env Env, name: String) -> Result<Object<'env>> {
        guard(env, || {
            let manager = self.manager.clone();
            promise(
                env,
                async move { manager.wait_for(&name).await.map(|_| ()) },
            )
        })
    }

    /// Closes and forgets server `name`.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn disconnect<'env>(&self, env: &'env Env, name: String) -> Result<Object<'env>> {
        guard(env, || {
            let manager = self.manager.clone();
            promise(env, async move {
                manager.disconnect(&name).await;
                Ok(())
            })
        })
    }

    /// Lists server `name`'s tools again (the error propagates).
    #[napi(ts_return_type = "Promise<void>")]
    pub fn refresh<'env>(&self, env: &'env Env, name: String) -> Result<Object<'env>> {
        guard(env, || {
            let manager = self.manager.clone();
            promise(env, async move { manager.refresh(&name).await })
        })
    }

    /// The events queued and not yet delivered, as one batch (`null` when none): taken on the
    /// JS thread right after a call settles, so its events are seen before its caller goes on.
    #[napi(ts_return_type = "string | string[] | null")]
    pub fn drain(&self, env: Env) -> Result<Option<Delivery>> {
        guard(&env, || Ok(self.host.batch.take()))
    }

    /// Keeps the event loop alive (`true`) while something waits for this manager.
    #[napi]
    pub fn hold(&self, env: Env, on: bool) -> Result<()> {
        guard(&env, || self.host.batch.hold(&env, on))
    }
}

super::errors::guarded_finalize!(NativeManager);

/// Milliseconds from JavaScript as a duration (see [`millis`]).
fn duration(ms: f64) -> std::time::Duration {
    std::time::Duration::from_millis(millis(ms))
}

/// The manager's options from `manager.js`: the client options, and under `manager` the profile
/// — `{ profile: "current", reconnect: { ladderMs, retryBaseMs, retryMaxMs } | false }` for the
/// agent as it ships today (SPEC 11), anything else (or nothing) for 12.7's.
fn manager_options(json: &str, client: mcp_native_core::client::ClientOptions) -> ManagerOptions {
    let v: Value = serde_json::from_str(json).unwrap_or(Value::Null);
    let m = &v["manager"];
    let mut options = if m["profile"] == "current" {
        ManagerOptions::default()
    } else {
        ManagerOptions::compat_12_7()
    };
    options.client = client;
    if m["profile"] == "current" {
        match &m["reconnect"] {
            Value::Bool(false) => options.reconnect = None,
            Value::Object(p) => {
                let mut schedule = ReconnectSchedule::default();
                if let Some(ladder) = p.get("ladderMs").and_then(Value::as_array) {
                    schedule.ladder = ladder
                        .iter()
                        .filter_map(Value::as_f64)
                        .map(duration)
                        .collect();
                }
                if let Some(ms) = p.get("retryBaseMs").and_then(Value::as_f64) {
                    schedule.retry_base = duration(ms);
                }
                if let Some(ms) = p.get("retryMaxMs").and_then(Value::as_f64) {
                    schedule.retry_max = duration(ms);
                }
                options.reconnect = Some(schedule);
            }
            _ => {}
        }
    }
    options
}
