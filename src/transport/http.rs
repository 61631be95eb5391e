//! The Streamable HTTP transport (SPEC 3.3): POST per message with the exact header rules,
//! session capture, JSON and SSE replies (notifications and server→client requests on the way),
//! the whole-exchange deadline (moved by progress, SPEC 3.4), caller cancellation that drops the
//! stream at once, `notifications/cancelled`, session-expiry detection, SSE resume with
//! `GET` + `Last-Event-ID`, the GET listener, the legacy HTTP+SSE fallback of `type: "sse"`,
//! DELETE on close (and when the handle is dropped), pooled keep-alive connections.
//!
//! Every request runs as its own task on the crate's runtime and reports through the same
//! [`EventSink`] as the stdio transport; in-flight tasks are kept by id so that a cancel or a close
//! can abort them (which closes their HTTP stream). Whatever a task registers before an `.await`
//! (a movable deadline, a legacy waiter) is removed by a guard, so an aborted task leaves nothing.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::task::AbortHandle;

use super::{Event, EventSink, MAX_TIMEOUT_MS, ProgressReset, progress_target};
use crate::error::Error;
use crate::framing::sse::{SseDecoder, SseItem};
use crate::jsonrpc::{self, Incoming};
use crate::runtime;

/// Default `maxMessageBytes` for one SSE event (and one JSON body): 128 MiB.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;
/// How long `close()` gives the session DELETE at most, when the config has no timeout.
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;
/// How often a broken SSE reply is resumed with `GET` + `Last-Event-ID` before giving up.
pub const SSE_RESUME_ATTEMPTS: u32 = 3;
/// The wait before a resume when the server sent no `retry:`.
pub const SSE_RESUME_DEFAULT_RETRY_MS: u64 = 1000;
/// The GET listener gives up after this many consecutive failed or eventless streams.
pub const LISTENER_MAX_FAILURES: u32 = 5;
/// First reconnect delay of the GET listener (doubled per consecutive failure, with jitter).
pub const LISTENER_BASE_DELAY: Duration = Duration::from_millis(500);
/// Longest reconnect delay of the GET listener (a server's `retry:` is capped by it too).
pub const LISTENER_MAX_DELAY: Duration = Duration::from_secs(30);

/// How to reach the server. Built by the binding from the JS config.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpConfig {
    /// The MCP endpoint.
    pub url: String,
    /// Extra headers, in order; they override the defaults.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The transport timeout in milliseconds (per request, notify and the closing DELETE).
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    /// See [`DEFAULT_MAX_MESSAGE_BYTES`].
    #[serde(default = "default_max")]
    pub max_message_bytes: usize,
    /// `type: "sse"`: if the very first POST (`initialize`) answers 400, 404 or 405, fall back
    /// to the legacy HTTP+SSE protocol of revision 2024-11-05.
    #[serde(default)]
    pub legacy_fallback: bool,
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_MS
}
fn default_max() -> usize {
    DEFAULT_MAX_MESSAGE_BYTES
}

struct Inner {
    config: HttpConfig,
    client: reqwest::Client,
    /// Configured headers, validated once (CR/LF rejected before anything is sent).
    headers: Result<HeaderMap, Error>,
    session: Mutex<Option<String>>,
    protocol_version: Mutex<Option<String>>,
    inflight: Mutex<HashMap<u64, Inflight>>,
    /// Deadlines that progress notifications may move, by request id (SPEC 3.4).
    deadlines: Mutex<HashMap<u64, Arc<Deadline>>>,
    /// The GET listener's task and the exchange id its end is reported for.
    listener: Mutex<Option<(u64, AbortHandle)>>,
    open: AtomicBool,
    requests: AtomicBool,
    sink: Arc<dyn EventSink>,
    /// Some POST got a 2xx answer (after that, no legacy fallback).
    posted: AtomicBool,
    /// The legacy HTTP+SSE connection, once fallen back to it.
    legacy: Mutex<Option<Arc<Legacy>>>,
}

/// A running exchange: its task, and whether giving up on it tells the server.
struct Inflight {
    handle: AbortHandle,
    /// False for `initialize` (SPEC 3.1) and for notifications.
    cancellable: bool,
}

/// The legacy (2024-11-05) HTTP+SSE connection: messages are POSTed to `endpoint`; every answer
/// and notification comes on the GET stream, read by `reader`.
struct Legacy {
    endpoint: reqwest::Url,
    waiters: Mutex<HashMap<u64, tokio::sync::oneshot::Sender<Outcome>>>,
    reader: Mutex<Option<AbortHandle>>,
}

/// The caller's handle on a Streamable HTTP server.
pub struct HttpTransport {
    inner: Arc<Inner>,
    next_id: AtomicU64,
}

impl HttpTransport {
    /// A transport for `config`; events go to `sink`. No I/O until a message is sent.
    pub fn new(config: HttpConfig, sink: Arc<dyn EventSink>) -> Result<Self, Error> {
        let client = crate::net::client_builder()
            .pool_idle_timeout(Duration::from_secs(90))
            .build()
            .map_err(|e| Error::Io(format!("HTTP client setup failed: {e}")))?;
        let headers = header_map(&config.headers);
        Ok(HttpTransport {
            inner: Arc::new(Inner {
                config,
                client,
                headers,
                session: Mutex::new(None),
                protocol_version: Mutex::new(None),
                inflight: Mutex::new(HashMap::new()),
                listener: Mutex::new(None),
                deadlines: Mutex::new(HashMap::new()),
                open: AtomicBool::new(false),
                requests: AtomicBool::new(false),
                sink,
                posted: AtomicBool::new(false),
                legacy: Mutex::new(None),
            }),
            next_id: AtomicU64::new(1),
        })
    }

    /// Marks the transport connected (no I/O). A new connection starts without a session.
    pub fn connect(&self) {
        if !self.inner.open.swap(true, Ordering::AcqRel) {
            *lock(&self.inner.session) = None;
            *lock(&self.inner.protocol_version) = None;
            self.inner.posted.store(false, Ordering::Release);
            self.inner.stop_legacy();
        }
    }

    /// The session id the server gave, if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.inner.session).clone()
    }

    /// The negotiated protocol version (sent as `MCP-Protocol-Version` after `initialize`).
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.inner.protocol_version).clone()
    }

    /// Deliver server→client requests (other than `ping`) as [`Event::Request`].
    pub fn set_request_listener(&self, on: bool) {
        self.inner.requests.store(on, Ordering::Relaxed);
    }

    /// Allocates a request id.
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends request `id` (method as JSON string text); the outcome arrives as
    /// [`Event::Response`] / [`Event::Failed`] for `id`.
    pub fn request(
        &self,
        id: u64,
        method_json: &str,
        params: Option<&str>,
        timeout_ms: u64,
        progress: Option<ProgressReset>,
    ) -> Result<(), Error> {
        self.check_open()?;
        let inner = self.inner.clone();
        if timeout_ms == 0 {
            inner.sink.emit(Event::Failed {
                id,
                error: Error::Timeout { ms: 0 },
            });
            return Ok(());
        }
        let is_initialize = method_json == "\"initialize\"";
        let frame = jsonrpc::request_frame_json(id, method_json, params);
        let deadline = Deadline::new(timeout_ms, progress);
        // Removed when the exchange ends or its task is aborted (even before its first poll).
        let movable = progress.map(|_| {
            lock(&inner.deadlines).insert(id, deadline.clone());
            DeadlineEntry {
                inner: inner.clone(),
                id,
            }
        });
        self.spawn_tracked(id, !is_initialize, async move {
            let _movable = movable;
            let outcome = inner
                .clone()
                .exchange(id, frame, deadline, is_initialize)
                .await;
            if is_initialize {
                inner.note_protocol_version(&outcome);
            }
            inner.finish(id, outcome);
        });
        Ok(())
    }

    /// Sends a notification as exchange `id` (not a JSON-RPC id: the outcome of the POST is
    /// reported for it, `Response` with no result on any 2xx).
    pub fn notify(
        &self,
        id: u64,
        method: &str,
        params: Option<&str>,
        timeout_ms: u64,
    ) -> Result<(), Error> {
        self.check_open()?;
        let inner = self.inner.clone();
        let frame = jsonrpc::notification_frame(method, params);
        self.spawn_tracked(id, false, async move {
            let outcome = inner.clone().post_only(frame, timeout_ms).await;
            inner.finish(id, outcome.map(|()| None));
        });
        Ok(())
    }

    /// Answers a server→client request (`id` is raw JSON).
    pub fn reply(&self, id: &str, outcome: Result<&str, &str>) -> Result<(), Error> {
        self.check_open()?;
        self.inner
            .clone()
            .post_in_background(jsonrpc::reply_frame(id, outcome));
        Ok(())
    }

    /// Gives up on request `id`: its exchange is aborted (closing its stream) and the server is
    /// told with `notifications/cancelled`.
    pub fn cancel(&self, id: u64, reason: &str) {
        if let Some(task) = lock(&self.inner.inflight).remove(&id) {
            task.handle.abort();
            if task.cancellable {
                self.inner
                    .clone()
                    .post_in_background(jsonrpc::cancelled_frame(id, reason));
            }
        }
    }

    /// Starts the GET listener for server-initiated messages; its end (405 or other non-2xx,
    /// too many failed reconnects, close) is reported as [`Event::Response`] for `id`. Returns
    /// false (and reports nothing) when not connected or already listening.
    pub fn start_listener(&self, id: u64) -> bool {
        // On the legacy protocol the one GET stream already carries everything.
        if !self.inner.open.load(Ordering::Acquire) || lock(&self.inner.legacy).is_some() {
            return false;
        }
        let mut listener = lock(&self.inner.listener);
        if listener
            .as_ref()
            .is_some_and(|(_, task)| !task.is_finished())
        {
            return false;
        }
        let inner = self.inner.clone();
        let task = runtime::runtime().spawn(async move {
            inner.listen().await;
            if lock(&inner.listener).take().is_some() {
                inner.sink.emit(Event::Response { id, result: None });
            }
        });
        *listener = Some((id, task.abort_handle()));
        true
    }

    /// Closes: aborts every exchange, sends DELETE for the session (bounded by the timeout,
    /// outcome ignored), then reports [`Event::Closed`]`(None)`. False when not connected.
    pub fn close(&self) -> bool {
        self.inner.shut_down(true)
    }

    /// Counts of what the transport tracks (in-flight exchanges, movable deadlines, legacy
    /// waiters), for tests that check nothing is left behind.
    pub fn stats(&self) -> HttpStats {
        HttpStats {
            inflight: lock(&self.inner.inflight).len(),
            deadlines: lock(&self.inner.deadlines).len(),
            waiters: lock(&self.inner.legacy)
                .as_ref()
                .map_or(0, |l| lock(&l.waiters).len()),
        }
    }

    fn check_open(&self) -> Result<(), Error> {
        if self.inner.open.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(Error::NotConnected)
        }
    }

    fn spawn_tracked(
        &self,
        id: u64,
        cancellable: bool,
        fut: impl std::future::Future<Output = ()> + Send + 'static,
    ) {
        let mut inflight = lock(&self.inner.inflight);
        let task = runtime::runtime().spawn(fut);
        inflight.insert(
            id,
            Inflight {
                handle: task.abort_handle(),
                cancellable,
            },
        );
    }
}

/// See [`HttpTransport::stats`].
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct HttpStats {
    /// Exchanges (requests, notifications) still running.
    pub inflight: usize,
    /// Deadlines that progress may move, still registered.
    pub deadlines: usize,
    /// Legacy-protocol requests still waiting for their answer on the stream.
    pub waiters: usize,
}

impl Drop for HttpTransport {
    /// Dropped without `close()` (a host that forgot its client): the same guarantee as stdio —
    /// every task of this transport ends (exchanges, the GET listener, the legacy reader) and the
    /// session gets its best-effort DELETE. Nothing is reported: nobody is listening.
    fn drop(&mut self) {
        self.inner.shut_down(false);
    }
}

/// Removes a movable deadline from [`Inner::deadlines`] when its exchange ends or is aborted.
struct DeadlineEntry {
    inner: Arc<Inner>,
    id: u64,
}

impl Drop for DeadlineEntry {
    fn drop(&mut self) {
        lock(&self.inner.deadlines).remove(&self.id);
    }
}

/// Removes a legacy waiter when its request ends or is aborted.
struct WaiterEntry<'a> {
    legacy: &'a Legacy,
    id: u64,
}

impl Drop for WaiterEntry<'_> {
    fn drop(&mut self) {
        lock(&self.legacy.waiters).remove(&self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// The configured headers as a map; a value with CR or LF (or otherwise invalid) is an error.
fn header_map(headers: &[(String, String)]) -> Result<HeaderMap, Error> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if value.contains(['\r', '\n']) {
            return Err(Error::InvalidConfig(format!(
                "header \"{name}\" contains CR or LF"
            )));
        }
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::InvalidConfig(format!("invalid header name \"{name}\"")))?;
        let v = HeaderValue::from_str(value)
            .map_err(|_| Error::InvalidConfig(format!("invalid value for header \"{name}\"")))?;
        map.insert(n, v);
    }
    Ok(map)
}

/// `HTTP <status>: <body>` plus the auth hints of SPEC 3.3.
fn http_error(status: u16, body: &str, headers: &HeaderMap, session_expired: bool) -> Error {
    let mut hints = Vec::new();
    for name in ["WWW-Authenticate", "Mcp-Auth-Server"] {
        if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
            hints.push(format!("{name}: {v}"));
        }
    }
    let mut message = format!("HTTP {status}: {body}");
    if !hints.is_empty() {
        message.push_str(&format!(" [{}]", hints.join("; ")));
    }
    Error::Http {
        status,
        message,
        session_expired,
    }
}

#[derive(Deserialize)]
struct Reply<'a> {
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

type Outcome = Result<Option<Box<RawValue>>, Error>;

impl Inner {
    /// Ends the connection: stops the listener and the legacy reader, aborts every exchange,
    /// sends DELETE for the session (bounded by the timeout, outcome ignored), then, when
    /// `report`, emits [`Event::Closed`]`(None)`. False when not connected.
    fn shut_down(self: &Arc<Self>, report: bool) -> bool {
        if !self.open.swap(false, Ordering::AcqRel) {
            return false;
        }
        if let Some((_, task)) = lock(&self.listener).take() {
            task.abort();
        }
        self.stop_legacy();
        for (_, task) in lock(&self.inflight).drain() {
            task.handle.abort();
        }
        let session = lock(&self.session).take();
        if session.is_none() && !report {
            return true;
        }
        let inner = self.clone();
        runtime::runtime().spawn(async move {
            if let Some(session) = session {
                let mut headers = inner.headers.clone().unwrap_or_default();
                if let Ok(v) = HeaderValue::from_str(&session) {
                    headers.insert("mcp-session-id", v);
                }
                let req = inner
                    .client
                    .delete(&inner.config.url)
                    .headers(headers)
                    .send();
                let _ = tokio::time::timeout(
                    Duration::from_millis(inner.config.timeout_ms.min(MAX_TIMEOUT_MS)),
                    req,
                )
                .await;
            }
            if report {
                inner.sink.emit(Event::Closed(None));
            }
        });
        true
    }

    /// Reports the outcome of exchange `id` unless it was cancelled or closed meanwhile.
    fn finish(&self, id: u64, outcome: Outcome) {
        if lock(&self.inflight).remove(&id).is_none() {
            return;
        }
        self.sink.emit(match outcome {
            Ok(result) => Event::Response { id, result },
            Err(error) => Event::Failed { id, error },
        });
    }

    fn post_headers(&self) -> Result<HeaderMap, Error> {
        let mut headers = HeaderMap::new();
        headers.insert("content-type", HeaderValue::from_static("application/json"));
        headers.insert(
            "accept",
            HeaderValue::from_static("application/json, text/event-stream"),
        );
        for (name, value) in self.headers.as_ref().map_err(Clone::clone)? {
            headers.insert(name, value.clone());
        }
        if let Some(session) = lock(&self.session).as_deref()
            && let Ok(v) = HeaderValue::from_str(session)
        {
            headers.insert("mcp-session-id", v);
        }
        if let Some(version) = lock(&self.protocol_version).as_deref()
            && let Ok(v) = HeaderValue::from_str(version)
        {
            headers.insert("mcp-protocol-version", v);
        }
        Ok(headers)
    }

    /// Takes the session id from any response; only visible ASCII is accepted.
    fn capture_session(&self, headers: &HeaderMap) {
        if let Some(v) = headers.get("mcp-session-id")
            && !v.as_bytes().is_empty()
            && v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b))
            && let Ok(s) = v.to_str()
        {
            *lock(&self.session) = Some(s.to_string());
        }
    }

    /// POSTs `frame`; returns the response after the status checks (non-2xx → error).
    async fn post(&self, frame: Vec<u8>) -> Result<reqwest::Response, Error> {
        let headers = self.post_headers()?;
        let had_session = headers.contains_key("mcp-session-id");
        let url = match lock(&self.legacy).as_ref() {
            Some(legacy) => legacy.endpoint.clone(),
            None => reqwest::Url::parse(&self.config.url)
                .map_err(|e| Error::InvalidConfig(format!("url: {e}")))?,
        };
        let resp = self
            .client
            .post(url)
            .headers(headers)
            .body(frame)
            .send()
            .await
            .map_err(|e| Error::Io(format!("fetch failed: {}", error_chain(&e))))?;
        self.capture_session(resp.headers());
        let status = resp.status().as_u16();
        if resp.status().is_success() {
            self.posted.store(true, Ordering::Release);
            return Ok(resp);
        }
        let headers = resp.headers().clone();
        let body = resp.text().await.unwrap_or_default();
        let expired = had_session
            && (status == 404 || (status == 400 && body.to_ascii_lowercase().contains("session")));
        if expired {
            *lock(&self.session) = None;
        }
        Err(http_error(status, &body, &headers, expired))
    }

    /// A POST whose 2xx answer carries nothing we need (notifications, replies).
    async fn post_only(self: Arc<Self>, frame: Vec<u8>, timeout_ms: u64) -> Result<(), Error> {
        let ms = timeout_ms.min(MAX_TIMEOUT_MS);
        let exchange = async {
            let resp = self.post(frame).await?;
            let _ = resp.bytes().await;
            Ok(())
        };
        match tokio::time::timeout(Duration::from_millis(ms), exchange).await {
            Ok(r) => r,
            Err(_) => Err(Error::NotifyTimeout { ms }),
        }
    }

    fn post_in_background(self: Arc<Self>, frame: Vec<u8>) {
        let ms = self.config.timeout_ms;
        runtime::runtime().spawn(async move {
            let _ = self.post_only(frame, ms).await;
        });
    }

    /// The GET listener: reads server-initiated messages; reconnects with `Last-Event-ID` after a
    /// drop, honouring `retry:`, with capped exponential backoff and jitter; gives up after
    /// [`LISTENER_MAX_FAILURES`] consecutive failures (a stream that ends without any event
    /// counts as one, so a server that keeps closing cannot make it loop).
    async fn listen(self: &Arc<Self>) {
        let mut failures = 0u32;
        let mut last_id: Option<String> = None;
        let mut retry: Option<u64> = None;
        while self.open.load(Ordering::Acquire) {
            let Ok(headers) = self.get_headers(last_id.as_deref()) else {
                return;
            };
            let mut got_event = false;
            match self
                .client
                .get(&self.config.url)
                .headers(headers)
                .send()
                .await
            {
                Ok(resp) if !resp.status().is_success() => return, // 405 and friends: no listener
                Ok(mut resp) => {
                    let mut decoder = SseDecoder::new(self.config.max_message_bytes);
                    loop {
                        match resp.chunk().await {
                            Ok(Some(chunk)) => {
                                decoder.push(&chunk);
                                let mut events = Vec::new();
                                while let Some(item) = decoder.next_item() {
                                    if let SseItem::Event(e) = item {
                                        got_event = true;
                                        self.on_sse_data(0, e.data.as_bytes(), &mut events);
                                    }
                                }
                                self.sink.emit_all(events);
                                last_id = decoder.last_event_id().map(str::to_string).or(last_id);
                                retry = decoder.retry().or(retry);
                            }
                            Ok(None) => break,
                            Err(e) => {
                                if self.open.load(Ordering::Acquire) {
                                    self.sink.emit(Event::Error(Error::Io(format!(
                                        "SSE listener: {}",
                                        error_chain(&e)
                                    ))));
                                }
                                break;
                            }
                        }
                    }
                }
                Err(e) => {
                    if self.open.load(Ordering::Acquire) {
                        self.sink.emit(Event::Error(Error::Io(format!(
                            "SSE listener: {}",
                            error_chain(&e)
                        ))));
                    }
                }
            }
            failures = if got_event { 0 } else { failures + 1 };
            if failures >= LISTENER_MAX_FAILURES {
                return;
            }
            tokio::time::sleep(reconnect_delay(failures, retry)).await;
        }
    }

    /// One request: POST, then read the JSON or SSE reply, all within the deadline.
    async fn exchange(
        self: Arc<Self>,
        id: u64,
        frame: Vec<u8>,
        deadline: Arc<Deadline>,
        is_initialize: bool,
    ) -> Outcome {
        let legacy = lock(&self.legacy).clone();
        if let Some(legacy) = legacy {
            return self
                .exchange_legacy(&legacy, id, frame, &deadline, is_initialize)
                .await;
        }
        // Only the very first POST, an `initialize`, may turn out to need the legacy protocol.
        let fallback_frame =
            (is_initialize && self.config.legacy_fallback && !self.posted.load(Ordering::Acquire))
                .then(|| frame.clone());
        let resp = match deadline.run(self.post(frame)).await {
            Some(Err(Error::Http {
                status: 400 | 404 | 405,
                ..
            })) if let Some(frame) = fallback_frame => {
                let legacy = match deadline.run(self.clone().start_legacy()).await {
                    Some(r) => r?,
                    None => {
                        return Err(Error::Timeout {
                            ms: deadline.elapsed_ms(),
                        });
                    }
                };
                return self
                    .exchange_legacy(&legacy, id, frame, &deadline, is_initialize)
                    .await;
            }
            Some(r) => r?,
            None => {
                return Err(self.request_timed_out(id, is_initialize, &deadline));
            }
        };
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        if sse {
            match deadline.run(self.clone().read_sse(id, resp)).await {
                Some(r) => r,
                None => {
                    let ms = deadline.elapsed_ms();
                    Err(self.timed_out(id, is_initialize, Error::SseTimeout { ms }))
                }
            }
        } else {
            match deadline.run(self.read_json(resp)).await {
                Some(r) => r,
                None => Err(self.request_timed_out(id, is_initialize, &deadline)),
            }
        }
    }

    /// After a successful `initialize`: remembers the negotiated version for later headers.
    fn note_protocol_version(&self, outcome: &Outcome) {
        #[derive(Deserialize)]
        struct Init {
            #[serde(rename = "protocolVersion")]
            protocol_version: Option<String>,
        }
        if let Ok(Some(result)) = outcome
            && let Ok(Init {
                protocol_version: Some(v),
            }) = serde_json::from_str::<Init>(result.get())
        {
            *lock(&self.protocol_version) = Some(v);
        }
    }

    /// Falls back to the legacy HTTP+SSE protocol: GET the stream, wait for its `endpoint`
    /// event, accept it only on the same origin, and keep reading the stream in the background.
    async fn start_legacy(self: Arc<Self>) -> Result<Arc<Legacy>, Error> {
        let base = reqwest::Url::parse(&self.config.url)
            .map_err(|e| Error::InvalidConfig(format!("url: {e}")))?;
        let mut resp = self
            .client
            .get(base.clone())
            .headers(self.get_headers(None)?)
            .send()
            .await
            .map_err(|e| Error::Io(format!("fetch failed: {}", error_chain(&e))))?;
        if !resp.status().is_success() {
            let status = resp.status().as_u16();
            let headers = resp.headers().clone();
            let body = resp.text().await.unwrap_or_default();
            return Err(http_error(status, &body, &headers, false));
        }
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let endpoint = 'found: loop {
            let chunk = resp
                .chunk()
                .await
                .map_err(|e| Error::Io(format!("SSE stream failed: {}", error_chain(&e))))?;
            let Some(chunk) = chunk else {
                return Err(Error::Parse("SSE stream ended unexpectedly".into()));
            };
            decoder.push(&chunk);
            while let Some(item) = decoder.next_item() {
                if let SseItem::Event(e) = item
                    && e.event == "endpoint"
                {
                    break 'found e.data;
                }
            }
        };
        let endpoint = base
            .join(endpoint.trim())
            .map_err(|e| Error::Parse(format!("Invalid legacy SSE endpoint: {e}")))?;
        if endpoint.origin() != base.origin() {
            return Err(Error::Parse(format!(
                "Legacy SSE endpoint on another origin refused: {endpoint}"
            )));
        }
        let legacy = Arc::new(Legacy {
            endpoint,
            waiters: Mutex::new(HashMap::new()),
            reader: Mutex::new(None),
        });
        let inner = self.clone();
        let reading = legacy.clone();
        let task = runtime::runtime()
            .spawn(async move { inner.read_legacy(&reading, resp, decoder).await });
        *lock(&legacy.reader) = Some(task.abort_handle());
        *lock(&self.legacy) = Some(legacy.clone());
        Ok(legacy)
    }

    /// Reads the legacy GET stream: answers go to their waiters, the rest as on an SSE reply.
    async fn read_legacy(
        self: &Arc<Self>,
        legacy: &Legacy,
        mut resp: reqwest::Response,
        mut decoder: SseDecoder,
    ) {
        loop {
            let mut events = Vec::new();
            while let Some(item) = decoder.next_item() {
                let SseItem::Event(e) = item else { continue };
                let mut stream = serde_json::Deserializer::from_slice(e.data.as_bytes())
                    .into_iter::<&RawValue>();
                while let Some(Ok(value)) = stream.next() {
                    if let Incoming::Response { id, outcome } =
                        jsonrpc::classify(value.get().as_bytes())
                    {
                        let waiter =
                            jsonrpc::our_id(id).and_then(|id| lock(&legacy.waiters).remove(&id));
                        if let Some(waiter) = waiter {
                            let _ = waiter.send(match outcome {
                                Ok(result) => Ok(result.map(RawValue::to_owned)),
                                Err(err) => Err(Error::rpc(err)),
                            });
                        }
                    } else {
                        self.on_sse_data(0, value.get().as_bytes(), &mut events);
                    }
                }
            }
            self.sink.emit_all(events);
            match resp.chunk().await {
                Ok(Some(chunk)) => decoder.push(&chunk),
                _ => break,
            }
        }
        // The stream is gone: nothing can answer any more.
        for (_, waiter) in lock(&legacy.waiters).drain() {
            let _ = waiter.send(Err(Error::closed()));
        }
        if self.open.load(Ordering::Acquire) {
            self.sink
                .emit(Event::Error(Error::Io("Legacy SSE stream ended".into())));
        }
    }

    /// One request over the legacy protocol: POST to the endpoint, the answer from the stream.
    async fn exchange_legacy(
        self: &Arc<Self>,
        legacy: &Legacy,
        id: u64,
        frame: Vec<u8>,
        deadline: &Deadline,
        is_initialize: bool,
    ) -> Outcome {
        let (tx, rx) = tokio::sync::oneshot::channel();
        lock(&legacy.waiters).insert(id, tx);
        let _waiter = WaiterEntry { legacy, id };
        let outcome = deadline
            .run(async {
                let resp = self.post(frame).await?;
                let _ = resp.bytes().await;
                rx.await.unwrap_or_else(|_| Err(Error::closed()))
            })
            .await;
        outcome.unwrap_or_else(|| Err(self.request_timed_out(id, is_initialize, deadline)))
    }

    /// Ends the legacy connection, if any.
    fn stop_legacy(&self) {
        if let Some(legacy) = lock(&self.legacy).take()
            && let Some(task) = lock(&legacy.reader).take()
        {
            task.abort();
        }
    }

    /// After a deadline passed: tells the server (best effort) and returns the error.
    /// [`Inner::timed_out`] with the `Request timeout` of `deadline`.
    fn request_timed_out(
        self: &Arc<Self>,
        id: u64,
        is_initialize: bool,
        deadline: &Deadline,
    ) -> Error {
        let ms = deadline.elapsed_ms();
        self.timed_out(id, is_initialize, Error::Timeout { ms })
    }

    /// (SPEC 3.1: never for `initialize`.)
    fn timed_out(self: &Arc<Self>, id: u64, is_initialize: bool, error: Error) -> Error {
        if !is_initialize {
            self.clone()
                .post_in_background(jsonrpc::cancelled_frame(id, &error.to_string()));
        }
        error
    }

    async fn read_json(&self, mut resp: reqwest::Response) -> Outcome {
        // Read in chunks, so that a body over the limit is refused without being held whole.
        let limit = self.config.max_message_bytes;
        let mut body = Vec::new();
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| Error::Io(format!("reading the response failed: {}", error_chain(&e))))?
        {
            if body.len() + chunk.len() > limit {
                return Err(Error::MessageTooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        if let Err(e) = serde_json::from_slice::<serde::de::IgnoredAny>(&body) {
            return Err(Error::Parse(format!("Invalid JSON response: {e}")));
        }
        match serde_json::from_slice::<Reply<'_>>(&body) {
            Ok(Reply {
                error: Some(err), ..
            }) if jsonrpc::is_truthy(err) => Err(Error::rpc(err)),
            Ok(Reply { result, .. }) => Ok(result.map(RawValue::to_owned)),
            Err(_) => Ok(None), // valid JSON that is not an object: `result` is undefined
        }
    }

    /// Reads an SSE reply until the answer to `id`; notifications and server→client requests on
    /// the way are handled in order.
    async fn read_sse(self: Arc<Self>, id: u64, mut resp: reqwest::Response) -> Outcome {
        if resp.status().as_u16() == 204 {
            return Err(Error::Parse("No response body".into()));
        }
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut resumes = 0;
        loop {
            let broken = loop {
                let chunk = match resp.chunk().await {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => break None,
                    Err(e) => {
                        break Some(Error::Io(format!("SSE stream failed: {}", error_chain(&e))));
                    }
                };
                decoder.push(&chunk);
                while let Some(item) = decoder.next_item() {
                    // An event over the limit was discarded as it streamed in; in a reply stream
                    // it is taken to be the answer (whose id could not be read), as in stdio.
                    let SseItem::Event(event) = item else {
                        return Err(Error::MessageTooLarge {
                            limit: self.config.max_message_bytes,
                        });
                    };
                    if event.data.trim() == "[DONE]" {
                        return Err(Error::NoResponse { id });
                    }
                    let mut events = Vec::new();
                    let found = self.on_sse_data(id, event.data.as_bytes(), &mut events);
                    self.sink.emit_all(events);
                    if let Some(outcome) = found {
                        return outcome;
                    }
                }
            };
            let cut = decoder.finish().is_err();
            // Without event ids there is nothing to resume from.
            let Some(last_id) = decoder.last_event_id().map(str::to_string) else {
                return Err(match (broken, cut) {
                    (Some(e), _) => e,
                    (None, true) => Error::Parse("SSE stream ended unexpectedly".into()),
                    (None, false) => Error::NoResponse { id },
                });
            };
            // Resume: GET with Last-Event-ID after the server's retry (bounded attempts).
            loop {
                if resumes >= SSE_RESUME_ATTEMPTS {
                    return Err(Error::NoResponse { id });
                }
                resumes += 1;
                tokio::time::sleep(Duration::from_millis(
                    decoder.retry().unwrap_or(SSE_RESUME_DEFAULT_RETRY_MS),
                ))
                .await;
                let get = self
                    .client
                    .get(&self.config.url)
                    .headers(self.get_headers(Some(&last_id))?)
                    .send()
                    .await;
                if let Ok(r) = get
                    && r.status().is_success()
                {
                    resp = r;
                    break;
                }
            }
        }
    }

    /// Headers of a GET for an event stream: the configured ones, `Accept: text/event-stream`,
    /// the session, the protocol version and, when resuming, `Last-Event-ID`.
    fn get_headers(&self, last_event_id: Option<&str>) -> Result<HeaderMap, Error> {
        let mut headers = self.headers.clone()?;
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let session = lock(&self.session).clone();
        let version = lock(&self.protocol_version).clone();
        for (name, value) in [
            ("mcp-session-id", session.as_deref()),
            ("mcp-protocol-version", version.as_deref()),
            ("last-event-id", last_event_id),
        ] {
            if let Some(v) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
                headers.insert(name, v);
            }
        }
        Ok(headers)
    }

    /// Handles one SSE data payload (one or more JSON values); returns the answer to `id` if it
    /// is among them.
    fn on_sse_data(
        self: &Arc<Self>,
        id: u64,
        data: &[u8],
        events: &mut Vec<Event>,
    ) -> Option<Outcome> {
        let mut stream = serde_json::Deserializer::from_slice(data).into_iter::<&RawValue>();
        while let Some(Ok(value)) = stream.next() {
            match jsonrpc::classify(value.get().as_bytes()) {
                Incoming::Response { id: got, outcome } if jsonrpc::our_id(got) == Some(id) => {
                    return Some(match outcome {
                        Ok(result) => Ok(result.map(RawValue::to_owned)),
                        Err(err) => Err(Error::rpc(err)),
                    });
                }
                Incoming::Notification { method, params } => {
                    if let Some(target) = progress_target(&method, params)
                        && let Some(d) = lock(&self.deadlines).get(&target)
                    {
                        d.on_progress();
                    }
                    events.push(Event::Notification {
                        method,
                        params: params.map(RawValue::to_owned),
                    })
                }
                Incoming::Request {
                    id: rid,
                    method,
                    params,
                } => {
                    if method == "ping" {
                        self.clone()
                            .post_in_background(jsonrpc::reply_frame(rid.get(), Ok("{}")));
                    } else if self.requests.load(Ordering::Relaxed) {
                        events.push(Event::Request {
                            id: rid.to_owned(),
                            method,
                            params: params.map(RawValue::to_owned),
                        });
                    } else {
                        self.clone().post_in_background(jsonrpc::reply_frame(
                            rid.get(),
                            Err(jsonrpc::METHOD_NOT_FOUND),
                        ));
                    }
                }
                _ => {}
            }
        }
        None
    }
}

/// A request's deadline over its whole exchange, which progress notifications may move
/// (SPEC 3.4: `resetTimeoutOnProgress`, capped by `maxTotalTimeout`).
struct Deadline {
    at: Mutex<tokio::time::Instant>,
    timeout: Duration,
    started: tokio::time::Instant,
    progress: Option<ProgressReset>,
    moved: tokio::sync::Notify,
}

impl Deadline {
    fn new(timeout_ms: u64, progress: Option<ProgressReset>) -> Arc<Self> {
        let started = tokio::time::Instant::now();
        let timeout = Duration::from_millis(timeout_ms.min(MAX_TIMEOUT_MS));
        let d = Deadline {
            at: Mutex::new(started + timeout),
            timeout,
            started,
            progress,
            moved: tokio::sync::Notify::new(),
        };
        let at = d.capped(started + timeout);
        *lock(&d.at) = at;
        Arc::new(d)
    }

    fn cap(&self) -> Option<tokio::time::Instant> {
        let max = self.progress?.max_total_ms?;
        Some(self.started + Duration::from_millis(max.min(MAX_TIMEOUT_MS)))
    }

    fn capped(&self, at: tokio::time::Instant) -> tokio::time::Instant {
        self.cap().map_or(at, |cap| at.min(cap))
    }

    /// A progress notification arrived: restart the deadline, when the request asked for it.
    fn on_progress(&self) {
        if self.progress.is_none() {
            return;
        }
        let next = self.capped(tokio::time::Instant::now() + self.timeout);
        let mut at = lock(&self.at);
        if next > *at {
            *at = next;
            drop(at);
            self.moved.notify_waiters();
        }
    }

    /// The deadline that passed, for the message: `maxTotalTimeout` when it was the cap.
    fn elapsed_ms(&self) -> u64 {
        match (self.cap(), self.progress.and_then(|p| p.max_total_ms)) {
            (Some(cap), Some(max)) if *lock(&self.at) >= cap => max,
            _ => self.timeout.as_millis() as u64,
        }
    }

    /// Runs `fut` until it completes (`Some`) or the deadline passes (`None`, `fut` dropped).
    async fn run<F: std::future::Future>(&self, fut: F) -> Option<F::Output> {
        tokio::pin!(fut);
        loop {
            let at = *lock(&self.at);
            tokio::select! {
                biased;
                out = &mut fut => return Some(out),
                // A progress notification may have moved the deadline meanwhile: check again.
                () = tokio::time::sleep_until(at) => {
                    if *lock(&self.at) <= tokio::time::Instant::now() {
                        return None;
                    }
                }
                () = self.moved.notified() => {}
            }
        }
    }
}

/// The wait before reconnect number `failures` (0 after a stream that delivered events): the
/// server's `retry:` if given, else exponential from [`LISTENER_BASE_DELAY`]; capped at
/// [`LISTENER_MAX_DELAY`]; with ±25% jitter so that many clients do not reconnect in step.
fn reconnect_delay(failures: u32, retry_ms: Option<u64>) -> Duration {
    let base = match retry_ms {
        Some(ms) => Duration::from_millis(ms),
        None => LISTENER_BASE_DELAY.saturating_mul(1u32 << failures.min(16)),
    }
    .min(LISTENER_MAX_DELAY);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let jitter = 0.75 + (nanos % 1000) as f64 / 2000.0;
    base.mul_f64(jitter)
}

/// An error with its sources, for messages that say why (`connection refused`, ...).
fn error_chain(e: &dyn std::error::Error) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}
