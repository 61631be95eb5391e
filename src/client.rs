//! `NativeClient`: the napi face of [`mcp_native_core::client::Client`]. `client.js` wraps it in the public
//! `MCPClient` (promises, AbortSignal, callbacks, the connection object) and in a transport face
//! (`StdioTransport` / `HttpTransport` over this object), whose requests go straight to the
//! current connection's transport — one crossing per call, as on a bare transport.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use mcp_native_core::sync::{Locked, lock};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::client_options::{ConfigCallback, JsConfig, client_options, server_config};
use super::convert::{as_id, header_list, millis};
use super::errors::{descriptor_text, guard, notified, promise};
use super::hot::{bytes, hot_function, number, string, to_js};
use super::reply_outcome;
pub(super) use super::sink::TaggedSink;
use super::sink::{BatchSink, Delivery, EnvBound, batch_of};
use super::stdio::read_batch;
use mcp_native_core::client::{Client, ClientSink, ConnKind, Handler, ServerConfig};
use mcp_native_core::error::Error as McpError;
use mcp_native_core::transport::{Reply, RequestOptions, Transport, outcome_event_for};

/// One MCP client for JavaScript. Use `MCPClient` from the package root instead.
#[napi(custom_finalize)]
pub struct NativeClient {
    client: Client,
    /// Where this object's own events go (requests it could not read fail there).
    sink: Arc<dyn ClientSink>,
    /// The batch behind it, whose hold keeps the event loop up.
    batch: Arc<BatchSink>,
    /// Calls that JS may abandon (paging), by token.
    tasks: Arc<Mutex<HashMap<u32, tokio::task::AbortHandle>>>,
    /// stderr delivery, applied to every stdio connection.
    stderr: bool,
    /// Modern-era calls in flight, by request id (`cancel` stops them).
    calls: Arc<Mutex<HashMap<u64, tokio::task::AbortHandle>>>,
}

/// What the functions of `NativeClient.hot` (`sendRequests`, `feed`) work on.
struct Face {
    client: Client,
    sink: Arc<dyn ClientSink>,
    calls: Arc<Mutex<HashMap<u64, tokio::task::AbortHandle>>>,
}

impl Face {
    /// As `NativeStdio.sendRequests`, on the current connection. In the modern era each request
    /// is a call of the Rust client (its `_meta`, headers and `input_required` rounds), whose
    /// outcome comes back as the same event under the same id.
    fn send_requests(&self, batch: &str) -> bool {
        let (requests, failed) = read_batch(batch);
        self.sink.emit_all(failed);
        let Some(conn) = self.client.conn() else {
            return false;
        };
        if conn.modern_version().is_none() {
            return conn.transport().send(requests).is_ok();
        }
        for r in requests {
            let id = r.id;
            let method: String = serde_json::from_str(r.method_json).unwrap_or_default();
            let params = r.params.map(str::to_owned);
            let options = RequestOptions {
                id: Some(id),
                timeout_ms: Some(r.timeout_ms),
                progress: r.progress,
                ..RequestOptions::default()
            };
            let (client, sink, calls) =
                (self.client.clone(), self.sink.clone(), self.calls.clone());
            // Held while the task is registered: its own removal waits for that.
            let mut registry = lock(&self.calls);
            let task = mcp_native_core::runtime::handle().spawn(async move {
                let outcome = client
                    .request_raw(&method, params.as_deref(), options)
                    .await;
                lock(&calls).remove(&id);
                // A large result crosses unparsed, as the transports' do.
                sink.emit(outcome_event_for(&*sink, id, outcome));
            });
            registry.insert(id, task.abort_handle());
        }
        true
    }

    /// Stdio with a caller-read stdout: a chunk of connection `generation`'s stdout; its events.
    fn feed(&self, generation: f64, chunk: &[u8]) -> Delivery {
        batch_of(
            self.client
                .conn_of(as_id(generation))
                .map(|c| c.feed(chunk))
                .unwrap_or_default(),
        )
    }
}

impl NativeClient {
    /// A handle on a client someone else made (a manager's server): its events already go to
    /// `sink`, inside `batch`.
    pub(super) fn over(client: Client, sink: Arc<dyn ClientSink>, batch: Arc<BatchSink>) -> Self {
        NativeClient {
            client,
            sink,
            batch,
            tasks: Arc::default(),
            stderr: false,
            calls: Arc::default(),
        }
    }

    fn transport(&self) -> Option<Arc<dyn Transport>> {
        self.client.conn().map(|c| c.transport())
    }

    /// The connection of `generation`, current or being opened.
    fn conn_of(&self, generation: f64) -> Option<mcp_native_core::client::Conn> {
        self.client.conn_of(as_id(generation))
    }
}

#[napi]
impl NativeClient {
    /// `onEvents(batch)` gets the events of every connection and of the client, in order, as JSON
    /// text; `getConfig()` returns the config (JSON) a reconnect uses.
    #[napi(constructor)]
    pub fn new(
        env: Env,
        name: String,
        options_json: String,
        on_events: Function<'_, String, Unknown<'static>>,
        get_config: Function<'_, (), String>,
    ) -> Result<Self> {
        guard(&env, || {
            let options =
                client_options(&options_json).map_err(|e| Error::from_reason(e.to_string()))?;
            let sink = BatchSink::new(&env, on_events)?;
            let placeholder = ServerConfig::stdio("", &[]);
            let client = Client::new(
                name,
                placeholder,
                options,
                Some(sink.clone() as Arc<dyn ClientSink>),
            );
            let config_cb: ConfigCallback = EnvBound::new(
                &env,
                get_config
                    .build_threadsafe_function::<()>()
                    .callee_handled::<false>()
                    .weak::<true>()
                    .build()?,
            );
            client.set_config_source(Some(Arc::new(JsConfig(Arc::new(config_cb)))));
            Ok(NativeClient {
                client,
                sink: sink.clone(),
                batch: sink,
                tasks: Arc::default(),
                stderr: false,
                calls: Arc::default(),
            })
        })
    }

    /// Connects with `configJson` (see `core.js`): resolves with `{ generation, init }` (JSON
    /// text: the connection's generation and the `initialize` result), or rejects with the error. An invalid config rejects with
    /// `MCP_INVALID_CONFIG`.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn connect<'env>(&self, env: &'env Env, config_json: String) -> Result<Object<'env>> {
        guard(env, || {
            let client = self.client.clone();
            let config = server_config(&config_json);
            promise(env, async move {
                client.set_config(config?);
                client.connect().await?;
                let init = client
                    .server_raw()
                    .map_or_else(|| "null".into(), |r| r.get().to_owned());
                Ok(format!(
                    "{{\"generation\":{},\"init\":{init}}}",
                    client.generation()
                ))
            })
        })
    }

    /// Closes (no more reconnects); resolves once the connection is gone.
    #[napi(ts_return_type = "Promise<void>")]
    pub fn close<'env>(&self, env: &'env Env) -> Result<Object<'env>> {
        guard(env, || {
            let client = self.client.clone();
            promise(env, async move {
                client.close().await;
                Ok(())
            })
        })
    }

    /// Every item of paged list `method` (`tools/list` → `key` `tools`) as a JSON array text;
    /// `token` lets `cancelTask` stop it.
    #[napi(ts_return_type = "Promise<string>")]
    pub fn list_all<'env>(
        &self,
        env: &'env Env,
        method: String,
        key: String,
        token: u32,
    ) -> Result<Object<'env>> {
        guard(env, || {
            let client = self.client.clone();
            let tasks = self.tasks.clone();
            let (tx, rx) = tokio::sync::oneshot::channel();
            let task = mcp_native_core::runtime::runtime().spawn(async move {
                let _ = tx.send(client.list_all_raw(&method, &key).await);
            });
            tasks.locked().insert(token, task.abort_handle());
            promise(env, async move {
                let items = rx
                    .await
                    .unwrap_or_else(|_| Err(McpError::Internal("abandoned".into())));
                tasks.locked().remove(&token);
                let items = items?;
                let mut out = String::from("[");
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push(',');
                    }
                    out.push_str(item.get());
                }
                out.push(']');
                Ok(out)
            })
        })
    }

    /// Stops the work of `token` (its promise stays pending; the caller has settled it).
    #[napi]
    pub fn cancel_task(&self, env: Env, token: u32) -> Result<()> {
        guard(&env, || {
            if let Some(task) = self.tasks.locked().remove(&token) {
                task.abort();
            }
            Ok(())
        })
    }

    /// `idle`, `connecting`, `connected`, `reconnecting` or `closed`.
    #[napi(getter)]
    pub fn state(&self, env: Env) -> Result<String> {
        use mcp_native_core::client::Status as S;
        guard(&env, || {
            Ok(match self.client.status() {
                S::Idle => "idle",
                S::Connecting => "connecting",
                S::Connected => "connected",
                S::Reconnecting => "reconnecting",
                S::Closed => "closed",
            }
            .into())
        })
    }

    /// The server's `initialize` result (JSON text), once connected.
    #[napi(getter)]
    pub fn init_json(&self, env: Env) -> Result<Option<String>> {
        guard(&env, || {
            Ok(self.client.server_raw().map(|r| r.get().to_owned()))
        })
    }

    /// The current connection's generation (0 before the first).
    #[napi(getter)]
    pub fn generation(&self, env: Env) -> Result<u32> {
        guard(&env, || Ok(self.client.generation() as u32))
    }

    // --- the transport face (the current connection) ------------------------------------------

    /// `sendRequests` (as `NativeStdio.sendRequests`, on the current connection) and `feed` (a
    /// chunk of connection `generation`'s stdout, read by the caller; its events) as plain
    /// functions over this client (see `hot.rs`): without napi-rs's per-call work for a method.
    /// `core.js` makes a client's calls through them.
    #[napi(
        ts_return_type = "{ sendRequests(batch: string): boolean; feed(generation: number, chunk: Uint8Array): string | string[] }"
    )]
    pub fn hot(&self, env: Env) -> Result<Object<'_>> {
        guard(&env, || {
            let face = Arc::new(Face {
                client: self.client.clone(),
                sink: self.sink.clone(),
                calls: self.calls.clone(),
            });
            // SAFETY (both bodies): `args` are the values of the current call on `env`, and the
            // chunk is read within it, before any JS runs.
            let send = hot_function(&env, "sendRequests", face.clone(), |face, env, args| {
                let batch = unsafe { string(env, args[0])? };
                to_js(env, face.send_requests(&batch))
            })?;
            let feed = hot_function(&env, "feed", face, |face, env, args| {
                let generation = unsafe { number(env, args[0])? };
                let chunk = unsafe { bytes(env, args[1])? };
                to_js(env, face.feed(generation, chunk))
            })?;
            let mut hot = Object::new(&env)?;
            // SAFETY: both values were just made on this env.
            unsafe {
                hot.set_named_property(
                    "sendRequests",
                    Unknown::from_raw_unchecked(env.raw(), send),
                )?;
                hot.set_named_property("feed", Unknown::from_raw_unchecked(env.raw(), feed))?;
            }
            Ok(hot)
        })
    }

    /// Stdio: queues a notification; false when not connected.
    #[napi]
    pub fn notify(&self, env: Env, method: String, params: Option<String>) -> Result<bool> {
        guard(&env, || {
            match self.client.conn().map(|c| c.kind().clone()) {
                Some(ConnKind::Stdio(t)) => {
                    notified(&env, t.notify_now(&method, params.as_deref()))
                }
                _ => Ok(false),
            }
        })
    }

    /// HTTP: a notification as exchange `id` (as `NativeHttp.notify`).
    #[napi]
    pub fn notify_as(
        &self,
        env: Env,
        id: f64,
        method: String,
        params: Option<String>,
        timeout_ms: f64,
    ) -> Result<Option<String>> {
        guard(&env, || {
            Ok(match self.client.conn().map(|c| c.kind().clone()) {
                Some(ConnKind::Http(t)) => t
                    .notify_as(
                        as_id(id),
                        &method,
                        params.as_deref(),
                        millis(timeout_ms),
                        Reply::Event,
                    )
                    .err()
                    .map(|e| descriptor_text(&e)),
                _ => Some(descriptor_text(&McpError::NotConnected)),
            })
        })
    }

    /// HTTP: as `NativeHttp.setHeadersRefresher`, for this connection and every later one.
    #[napi]
    pub fn set_headers_refresher(
        &self,
        env: Env,
        host: Option<Function<'_, (String, String), Promise<String>>>,
    ) -> Result<()> {
        guard(&env, || {
            let refresher = match host {
                Some(host) => Some(super::host::headers_refresher(super::host::host_callback(
                    &env, host,
                )?)),
                None => None,
            };
            self.client.set_headers_refresher(refresher);
            Ok(())
        })
    }

    /// HTTP: replaces the current connection's configured headers (as `NativeHttp.setHeaders`).
    /// `null` too when there is no HTTP connection now (a reconnect takes the config's headers).
    #[napi]
    pub fn set_headers(&self, env: Env, headers_json: String) -> Result<Option<String>> {
        guard(&env, || {
            let headers = match header_list(&headers_json) {
                Ok(h) => h,
                Err(e) => return Ok(Some(descriptor_text(&e))),
            };
            Ok(match self.client.conn().map(|c| c.kind().clone()) {
                Some(ConnKind::Http(t)) => {
                    t.set_headers(&headers).err().map(|e| descriptor_text(&e))
                }
                _ => None,
            })
        })
    }

    /// Abandons request `id` and tells the server why.
    #[napi]
    pub fn cancel(&self, env: Env, id: f64, reason: String) -> Result<()> {
        guard(&env, || {
            // A modern-era call: stopping its task gives up its request in flight.
            if let Some(task) = lock(&self.calls).remove(&as_id(id)) {
                task.abort();
            }
            if let Some(t) = self.transport() {
                t.cancel(as_id(id), &reason);
            }
            Ok(())
        })
    }

    /// Answers a server→client request (as `NativeStdio.reply`).
    #[napi]
    pub fn reply(
        &self,
        env: Env,
        id: String,
        result: Option<String>,
        error: Option<String>,
    ) -> Result<bool> {
        guard(&env, || {
            let outcome = reply_outcome(&result, &error);
            // An input request of the modern era (its id is the client's own), else the server's.
            if self.client.answer_input(&id, outcome) {
                return Ok(true);
            }
            Ok(self
                .transport()
                .is_some_and(|t| t.respond(&id, outcome).is_ok()))
        })
    }

    /// Keeps the event loop alive (`true`) while something waits for this client.
    #[napi]
    pub fn hold(&self, env: Env, on: bool) -> Result<()> {
        guard(&env, || self.batch.hold(&env, on))
    }

    /// stderr delivery (stdio), and whether server requests go to JS (`onRequest`).
    #[napi]
    pub fn set_listeners(&mut self, env: Env, stderr: bool, requests: bool) -> Result<()> {
        guard(&env, || {
            self.stderr = stderr;
            self.client.set_stderr(stderr);
            self.client.set_handler(if requests {
                Handler::Forward
            } else {
                Handler::Default
            });
            Ok(())
        })
    }

    /// Stdio with a caller-read stdout: connection `generation`'s pipe, once.
    #[napi]
    /// Windows: always `null` (the transport reads stdout itself there).
    pub fn take_stdout_fd(&self, env: Env, generation: f64) -> Result<Option<i32>> {
        guard(&env, || {
            #[cfg(unix)]
            {
                use std::os::fd::IntoRawFd;
                Ok(match self.conn_of(generation).map(|c| c.kind().clone()) {
                    Some(ConnKind::Stdio(t)) => t.take_stdout_fd().map(IntoRawFd::into_raw_fd),
                    _ => None,
                })
            }
            #[cfg(not(unix))]
            {
                let _ = generation;
                Ok(None)
            }
        })
    }

    /// Stdio with a caller-read stdout: connection `generation`'s stdout ended; its last events.
    #[napi(ts_return_type = "string | string[]")]
    pub fn feed_end(&self, env: Env, generation: f64) -> Result<Delivery> {
        guard(&env, || {
            Ok(batch_of(
                self.conn_of(generation)
                    .map(|c| c.feed_end())
                    .unwrap_or_default(),
            ))
        })
    }

    /// Stdio with a caller-read stdout: connection `generation`'s reader has stopped after event
    /// 15 and fed what its runtime still delivered; its events (see `NativeStdio.handOver`).
    #[napi(ts_return_type = "string | string[]")]
    pub fn hand_over(&self, env: Env, generation: f64) -> Result<Delivery> {
        guard(&env, || {
            Ok(batch_of(
                self.conn_of(generation)
                    .map(|c| c.hand_over())
                    .unwrap_or_default(),
            ))
        })
    }

    /// The server's process id (stdio, while connected).
    #[napi(getter)]
    pub fn pid(&self, env: Env) -> Result<Option<u32>> {
        guard(&env, || {
            Ok(match self.client.conn().map(|c| c.kind().clone()) {
                Some(ConnKind::Stdio(t)) => t.pid(),
                _ => None,
            })
        })
    }

    /// The session id (HTTP).
    #[napi(getter)]
    pub fn session_id(&self, env: Env) -> Result<Option<String>> {
        guard(&env, || {
            Ok(match self.client.conn().map(|c| c.kind().clone()) {
                Some(ConnKind::Http(t)) => t.session_id(),
                _ => None,
            })
        })
    }

    /// The negotiated protocol version (HTTP: as sent in `MCP-Protocol-Version`).
    #[napi(getter)]
    pub fn protocol_version(&self, env: Env) -> Result<Option<String>> {
        guard(&env, || {
            Ok(match self.client.conn().map(|c| c.kind().clone()) {
                Some(ConnKind::Http(t)) => t.protocol_version(),
                _ => None,
            })
        })
    }

    /// HTTP: the GET stream (as `NativeHttp.startListener`).
    #[napi]
    pub fn start_listener(&self, env: Env, id: f64) -> Result<bool> {
        guard(&env, || {
            Ok(self
                .transport()
                .is_some_and(|t| t.start_listener(as_id(id))))
        })
    }

    /// HTTP: `{ inflight, deadlines, waiters }` as JSON.
    #[napi]
    pub fn stats(&self, env: Env) -> Result<String> {
        guard(&env, || {
            let stats = match self.client.conn().map(|c| c.kind().clone()) {
                Some(ConnKind::Http(t)) => t.stats(),
                _ => Default::default(),
            };
            Ok(serde_json::to_string(&stats).unwrap_or_default())
        })
    }
}

super::errors::guarded_finalize!(NativeClient);
