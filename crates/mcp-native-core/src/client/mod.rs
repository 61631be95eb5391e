//! The MCP client (SPEC 5): one server, one [`Client`]. It owns the protocol state of its
//! connection — the handshake and version negotiation, the server's answer, the connection
//! status, session re-initialization after expiry, reconnect with capped backoff, the answers to
//! the server's requests (`ping` by the transport; `roots/list`, `-32601` or the request handler
//! here), the GET stream after a Streamable HTTP handshake — and offers typed calls (paging
//! included) and raw ones.
//!
//! The client sits between its transport and its own sink (given to [`Client::new`], or a
//! `ChannelSink` whose stream [`Client::events`] returns): each
//! transport event passes through the client (`sink.rs`), which acts on what concerns it and
//! passes the rest on — so the JavaScript binding keeps one crossing per call: its requests go
//! to the current transport directly and their outcomes come back as events, in batches.
//!
//! Files: `mod.rs` the handle and its calls; `options.rs` configs and options; `model.rs` typed
//! messages; `session.rs` opening a connection and the handshake; `sink.rs` what the client does
//! with transport events; `reconnect.rs` the reconnect loop and session re-initialization.

mod conn;
pub mod headers;
pub mod json_config;
pub mod model;
pub mod modern;
mod options;
mod reconnect;
mod session;
mod sink;

use std::sync::{Arc, Mutex};

pub(crate) use crate::sync::lock;

use serde_json::Value;
use serde_json::value::RawValue;
use tokio::sync::watch;

pub use conn::{Conn, ConnKind};
pub use options::{
    ClientOptions, DEFAULT_PROTOCOL_VERSION, DEFAULT_TIMEOUT_MS, Handler, HandlerError, MAX_PAGES,
    ReconnectPolicy, RequestHandler, SUPPORTED_PROTOCOL_VERSIONS, ServerConfig, TransportFactory,
};

use crate::error::Error;
use crate::transport::{
    ChannelSink, EventSink, EventStream, Outcome, RequestOptions, TransportExt,
};
use model::{CallToolResult, InitializeResult, Prompt, Resource, Tool};

/// Where a client is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// Not connected yet.
    Idle,
    /// The first connect is under way.
    Connecting,
    /// Connected.
    Connected,
    /// The connection dropped; reconnect attempts are under way.
    Reconnecting,
    /// Closed for good (`close()`, a drop without reconnect, reconnect gave up, a failed connect).
    Closed,
}

impl Status {
    /// The status as SPEC 5.2's `onStatus` names it.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Connecting | Status::Reconnecting => "connecting",
            Status::Connected => "connected",
            Status::Idle | Status::Closed => "disconnected",
        }
    }
}

/// What the client tells its sink's owner beyond the transport's events.
#[derive(Debug, Clone)]
pub enum ClientEvent {
    /// The status changed (with the error that caused it, when one did).
    Status(Status, Option<Error>),
    /// A reconnect attempt failed (another follows, or the client closes).
    AttemptFailed(Error),
    /// Connection `generation` was opened (before its handshake): a caller that reads stdout
    /// itself takes the pipe now ([`Conn::kind`]).
    Opened {
        /// Counts connections of this client from 1.
        generation: u64,
    },
    /// A (re)connection is up — or its session was re-opened (same generation): its generation
    /// (each connection has its own) and the server's answer to `initialize`, raw.
    Connected {
        /// Counts connections of this client from 1.
        generation: u64,
        /// The `initialize` result.
        init: Box<RawValue>,
    },
    /// Something the client's owner should log (a tool left out of `tools/list` for an invalid
    /// `x-mcp-header`, SPEC 9.1).
    Warning(String),
}

/// The state of a client, behind one short lock (never held across an `.await`).
pub(crate) struct State {
    pub(crate) status: Status,
    /// The current connection.
    pub(crate) conn: Option<Conn>,
    pub(crate) generation: u64,
    pub(crate) init: Option<(InitializeResult, Box<RawValue>)>,
    /// Bumped by `close()`: work of an older epoch stands down.
    pub(crate) epoch: u64,
    /// The task of a reconnect in progress.
    pub(crate) reconnecting: Option<tokio::task::AbortHandle>,
    /// A connection being opened (connect or reconnect), until it is adopted or given up.
    pub(crate) attempt: Option<Conn>,
    /// Why the client closed, for those who waited for it.
    pub(crate) last_error: Option<Error>,
}

/// Where a reconnect reads the server config (the JavaScript binding: the config object, which
/// its owner may have changed since the first connect).
pub trait ConfigSource: Send + Sync + 'static {
    /// The config to connect with now; `None` keeps the last one.
    fn current(&self) -> futures::future::BoxFuture<'static, Option<ServerConfig>>;
}

impl Inner {
    /// The config the next connection uses.
    pub(crate) fn config(&self) -> ServerConfig {
        lock(&self.config).clone()
    }
}

/// Where a client's events go: a transport's [`EventSink`], plus what the client itself reports
/// ([`ClientEvent`]; ignored by default).
pub trait ClientSink: EventSink {
    /// A status change, a new connection, a failed reconnect attempt.
    fn client_event(&self, _event: ClientEvent) {}

    /// Events a caller-read stdout produced ([`Conn::feed`]): they go back to the caller, not
    /// through [`EventSink::emit_all`], but an owner in between may want to see them.
    fn observe(&self, _events: &[crate::transport::Event]) {}
}

impl ClientSink for ChannelSink {}

pub(crate) struct Inner {
    pub(crate) name: String,
    /// Read at each (re)connect; refreshed from the config source before each reconnect.
    pub(crate) config: Mutex<ServerConfig>,
    pub(crate) config_source: Mutex<Option<Arc<dyn ConfigSource>>>,
    pub(crate) options: ClientOptions,
    pub(crate) state: Mutex<State>,
    /// Where events go once the client has seen them.
    pub(crate) sink: Arc<dyn ClientSink>,
    /// The stream of `sink` when the client made it (pure-Rust use).
    pub(crate) events: Mutex<Option<EventStream>>,
    /// Told every status change (waiters for a reconnect).
    pub(crate) status_tx: watch::Sender<Status>,
    pub(crate) handler: Mutex<Handler>,
    /// Deliver the server's stderr as events (stdio).
    pub(crate) stderr: std::sync::atomic::AtomicBool,
    /// The owner's refresher of configured headers (HTTP; see [`Client::set_headers_refresher`]).
    pub(crate) headers_refresher: Mutex<Option<crate::transport::http::HeadersRefresher>>,
    /// The session re-initialization in progress, shared by concurrent callers.
    pub(crate) reinit: reconnect::SharedReinit,
    /// Held while a server process is being started off the runtime thread: a deadline or
    /// `close()` waits for it, so that the process it starts is closed before they return.
    pub(crate) starting: Arc<tokio::sync::Mutex<()>>,
    /// Input requests of the modern era waiting for JavaScript's answer.
    pub(crate) inputs: modern::Inputs,
    /// The OAuth client (SPEC 10) of the HTTP server, made at the first connection that needs
    /// it and kept across reconnects (its tokens stay in memory); keyed by the server URL.
    pub(crate) oauth: Mutex<Option<Arc<crate::oauth::client::OAuthClient>>>,
}

/// One server, one client. Cheap to clone; all clones are the same client.
#[derive(Clone)]
pub struct Client {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("name", &self.inner.name)
            .field("status", &self.status())
            .finish()
    }
}

impl Client {
    /// A client for server `name`; events go to `sink` when given, else to a stream that
    /// [`Client::events`] hands out. Nothing happens until [`Client::connect`].
    pub fn new(
        name: impl Into<String>,
        config: ServerConfig,
        options: ClientOptions,
        sink: Option<Arc<dyn ClientSink>>,
    ) -> Self {
        let (sink, events) = match sink {
            Some(s) => (s, None),
            None => {
                let (s, stream) = ChannelSink::new();
                (s as Arc<dyn ClientSink>, Some(stream))
            }
        };
        let handler = options.handler.clone();
        Client {
            inner: Arc::new(Inner {
                name: name.into(),
                config: Mutex::new(config),
                config_source: Mutex::new(None),
                options,
                state: Mutex::new(State {
                    status: Status::Idle,
                    conn: None,
                    generation: 0,
                    init: None,
                    epoch: 0,
                    reconnecting: None,
                    attempt: None,
                    last_error: None,
                }),
                sink,
                events: Mutex::new(events),
                status_tx: watch::channel(Status::Idle).0,
                handler: Mutex::new(handler),
                stderr: std::sync::atomic::AtomicBool::new(false),
                headers_refresher: Mutex::new(None),
                reinit: Default::default(),
                starting: Default::default(),
                inputs: Default::default(),
                oauth: Mutex::new(None),
            }),
        }
    }

    /// [`Client::new`] and [`Client::connect`].
    pub async fn connect_to(
        name: impl Into<String>,
        config: ServerConfig,
        options: ClientOptions,
    ) -> Result<Self, Error> {
        let client = Client::new(name, config, options, None);
        client.connect().await?;
        Ok(client)
    }

    /// Connects: starts the transport, runs the handshake (version negotiation included) and, on
    /// Streamable HTTP, opens the GET stream — all within `config.timeout`
    /// (`Connection to MCP server "<name>" timed out after <t>ms`). On any failure the
    /// connection is closed before this returns. Connected already: returns at once.
    pub async fn connect(&self) -> Result<InitializeResult, Error> {
        session::connect(&self.inner).await
    }

    /// The events this client passes on (notifications, server requests when forwarded, stderr,
    /// errors, the ends of connections), once, when the client made its own sink.
    pub fn events(&self) -> Option<EventStream> {
        lock(&self.inner.events).take()
    }

    /// Whether this client's OAuth authorizer is waiting for its user now (SPEC 10.3): the
    /// connect deadline does not count that time, and the manager's startup gate does not wait
    /// for it. `None` without OAuth (or before the first connection).
    pub fn waiting_for_user(&self) -> Option<tokio::sync::watch::Receiver<bool>> {
        lock(&self.inner.oauth)
            .as_ref()
            .map(|o| o.waiting_for_user())
    }

    /// The server's name as configured.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Where the client is in its life.
    pub fn status(&self) -> Status {
        lock(&self.inner.state).status
    }

    /// The server's answer to `initialize`, once connected.
    pub fn server(&self) -> Option<InitializeResult> {
        lock(&self.inner.state)
            .init
            .as_ref()
            .map(|(i, _)| i.clone())
    }

    /// The raw answer to `initialize`, once connected.
    pub fn server_raw(&self) -> Option<Box<RawValue>> {
        lock(&self.inner.state)
            .init
            .as_ref()
            .map(|(_, r)| r.clone())
    }

    /// The current connection, while connected.
    pub fn conn(&self) -> Option<Conn> {
        let state = lock(&self.inner.state);
        state
            .conn
            .clone()
            .filter(|_| state.status == Status::Connected)
    }

    /// The connection of `generation`: the current one, or one being opened.
    pub fn conn_of(&self, generation: u64) -> Option<Conn> {
        let st = lock(&self.inner.state);
        st.conn
            .iter()
            .chain(st.attempt.iter())
            .find(|c| c.generation == generation)
            .cloned()
    }

    /// Delivers the server's stderr as [`Event::Stderr`](crate::transport::Event::Stderr) (stdio).
    pub fn set_stderr(&self, on: bool) {
        self.inner
            .stderr
            .store(on, std::sync::atomic::Ordering::Relaxed);
        let st = lock(&self.inner.state);
        for conn in st.conn.iter().chain(st.attempt.iter()) {
            if let ConnKind::Stdio(t) = conn.kind() {
                t.set_listeners(on, true);
            }
        }
    }

    /// Sets (or clears) the owner's refresher of configured headers (the agent's `onAuthError`)
    /// on the HTTP connection now and on every later one: see
    /// [`HttpTransport::set_headers_refresher`](crate::transport::http::HttpTransport::set_headers_refresher).
    pub fn set_headers_refresher(
        &self,
        refresher: Option<crate::transport::http::HeadersRefresher>,
    ) {
        *lock(&self.inner.headers_refresher) = refresher.clone();
        let st = lock(&self.inner.state);
        for conn in st.conn.iter().chain(st.attempt.iter()) {
            if let ConnKind::Http(t) = conn.kind() {
                t.set_headers_refresher(refresher.clone());
            }
        }
    }

    /// The connection's generation (1 for the first connection, then one more per reconnect).
    pub fn generation(&self) -> u64 {
        lock(&self.inner.state).generation
    }

    /// Where reconnects read the config from.
    pub fn set_config_source(&self, source: Option<Arc<dyn ConfigSource>>) {
        *lock(&self.inner.config_source) = source;
    }

    /// Replaces the config (the next connect uses it).
    pub fn set_config(&self, config: ServerConfig) {
        *lock(&self.inner.config) = config;
    }

    /// Who answers the server's requests from now on.
    pub fn set_handler(&self, handler: Handler) {
        *lock(&self.inner.handler) = handler;
    }

    /// Closes the connection and stops any reconnect; the status becomes `Closed`. Resolves once
    /// the connection is gone (stdio: the process reaped).
    pub async fn close(&self) {
        session::close(&self.inner).await;
    }

    /// Waits until the client is connected: at once when it is, through a reconnect in progress
    /// (bounded by `timeout_ms`), or fails (`Transport not connected` when there is nothing to
    /// wait for, `Request timeout after <t>ms`, or the error that closed it).
    pub async fn connected(&self, timeout_ms: u64) -> Result<Conn, Error> {
        reconnect::when_connected(&self.inner, timeout_ms).await
    }

    /// A request with raw JSON params (`None` sends `{}`) on the current connection, waiting out
    /// a reconnect; the raw result. A session that expired is re-opened and the request sent once
    /// more (by the transport, through the client's session hook).
    pub async fn request_raw(
        &self,
        method: &str,
        params: Option<&str>,
        options: RequestOptions,
    ) -> Outcome {
        let timeout = options
            .timeout_ms
            .unwrap_or_else(|| self.inner.config().timeout_ms());
        let conn = self.connected(timeout).await?;
        match conn.modern() {
            Some(session) => {
                let call = modern::Call {
                    inner: &self.inner,
                    session: &session,
                    transport: conn.transport(),
                };
                call.run(method, params, options).await
            }
            None => conn.transport().request(method, params, options).await,
        }
    }

    /// Answers an input request of the modern era that was forwarded to the sink's owner
    /// ([`Handler::Forward`]); false when `id` (raw JSON) is not one of those.
    pub fn answer_input(&self, id: &str, outcome: Result<&str, &str>) -> bool {
        modern::answer_input(&self.inner, id, outcome)
    }

    /// The revision of the current connection when it is the modern one.
    pub fn modern_version(&self) -> Option<String> {
        self.conn().and_then(|c| c.modern_version())
    }

    /// [`Client::request_raw`] with JSON params and a deserialized result.
    pub async fn request<T: serde::de::DeserializeOwned>(
        &self,
        method: &str,
        params: &Value,
    ) -> Result<T, Error> {
        let params = serde_json::to_string(params).map_err(|e| Error::Internal(e.to_string()))?;
        let raw = self
            .request_raw(method, Some(&params), RequestOptions::default())
            .await?;
        let text = raw.as_deref().map_or("null", RawValue::get);
        serde_json::from_str(text)
            .map_err(|e| Error::Parse(format!("Invalid {method} result: {e}")))
    }

    /// Sends a notification on the current connection.
    pub async fn notify(&self, method: &str, params: Option<&str>) -> Result<(), Error> {
        let conn = self.connected(self.inner.config().timeout_ms()).await?;
        conn.transport().notify(method, params).await
    }

    /// `ping`.
    pub async fn ping(&self) -> Result<(), Error> {
        self.request_raw("ping", None, RequestOptions::default())
            .await
            .map(|_| ())
    }

    /// Every item of a paged list method (`tools/list` → `tools`, …): `{}` first, then
    /// `{ cursor }` while `nextCursor` is truthy, at most [`MAX_PAGES`] pages; the items raw.
    pub async fn list_all_raw(&self, method: &str, key: &str) -> Result<Vec<Box<RawValue>>, Error> {
        #[derive(serde::Deserialize)]
        struct Page {
            #[serde(rename = "nextCursor")]
            next_cursor: Option<Value>,
        }
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        // Modern HTTP: tools with an invalid `x-mcp-header` are left out, with a warning.
        let admit = (method == "tools/list")
            .then(|| self.conn().and_then(|c| c.modern()))
            .flatten();
        for page in 0..MAX_PAGES {
            let params = match &cursor {
                Some(c) => serde_json::json!({ "cursor": c }).to_string(),
                None => "{}".into(),
            };
            let raw = self
                .request_raw(method, Some(&params), RequestOptions::default())
                .await?;
            let Some(raw) = raw else { break };
            let page_no = page;
            let page: serde_json::Map<String, Value> =
                serde_json::from_str(raw.get()).unwrap_or_default();
            if let Some(Value::Array(list)) = page.get(key) {
                let got: Vec<Box<RawValue>> = list
                    .iter()
                    .filter_map(|item| serde_json::value::to_raw_value(item).ok())
                    .collect();
                match &admit {
                    Some(session) => {
                        let warn = |message: String| {
                            self.inner.sink.client_event(ClientEvent::Warning(message));
                        };
                        items.extend(session.admit_tools(got, page_no == 0, &warn));
                    }
                    None => items.extend(got),
                }
            }
            let next: Option<Page> = serde_json::from_str(raw.get()).ok();
            cursor = match next.and_then(|p| p.next_cursor) {
                Some(Value::String(s)) if !s.is_empty() => Some(s),
                _ => None,
            };
            if cursor.is_none() {
                break;
            }
        }
        Ok(items)
    }

    /// Every tool of the server (paged); `[]` without a request when it declares no `tools`.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, Error> {
        if !self.server().is_some_and(|s| s.supports("tools")) {
            return Ok(Vec::new());
        }
        parse_items(self.list_all_raw("tools/list", "tools").await?)
    }

    /// `tools/call`; a tool's own failure is `is_error`, not an `Err`.
    pub async fn call_tool(&self, name: &str, arguments: Value) -> Result<CallToolResult, Error> {
        self.request(
            "tools/call",
            &serde_json::json!({ "name": name, "arguments": arguments }),
        )
        .await
    }

    /// Every resource (paged).
    pub async fn list_resources(&self) -> Result<Vec<Resource>, Error> {
        parse_items(self.list_all_raw("resources/list", "resources").await?)
    }

    /// `resources/read`, raw.
    pub async fn read_resource(&self, uri: &str) -> Result<Value, Error> {
        self.request("resources/read", &serde_json::json!({ "uri": uri }))
            .await
    }

    /// Every prompt (paged).
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, Error> {
        parse_items(self.list_all_raw("prompts/list", "prompts").await?)
    }

    /// `prompts/get`, raw.
    pub async fn get_prompt(&self, name: &str, arguments: Option<Value>) -> Result<Value, Error> {
        let params = match arguments {
            Some(args) => serde_json::json!({ "name": name, "arguments": args }),
            None => serde_json::json!({ "name": name }),
        };
        self.request("prompts/get", &params).await
    }
}

fn parse_items<T: serde::de::DeserializeOwned>(items: Vec<Box<RawValue>>) -> Result<Vec<T>, Error> {
    items
        .iter()
        .map(|raw| {
            serde_json::from_str(raw.get())
                .map_err(|e| Error::Parse(format!("Invalid list item: {e}")))
        })
        .collect()
}
