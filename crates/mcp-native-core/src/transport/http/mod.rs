//! The Streamable HTTP transport (SPEC 3.3): POST per message with the exact header rules,
//! session capture, JSON and SSE replies (notifications and server→client requests on the way),
//! the whole-exchange deadline (moved by progress, SPEC 3.4), caller cancellation that drops the
//! stream at once, `notifications/cancelled`, session expiry (reported, or repaired through the
//! client's [`SessionHook`]), SSE resume with `GET` + `Last-Event-ID`, the GET listener, the
//! legacy HTTP+SSE fallback of `type: "sse"`, DELETE on close (and when the handle is dropped),
//! pooled keep-alive connections (a plain `http:` server's on the transport's own hyper
//! connections, see `h1.rs`), an [`AuthHook`] for 401/403, and the modern era (SPEC 9:
//! sessionless, no GET stream, no resume).
//!
//! Every request runs as its own task on the crate's runtime; in-flight tasks are kept by id so
//! that a cancel or a close can abort them (which closes their HTTP stream). Whatever a task
//! registers before an `.await` (a movable deadline, a legacy waiter) is removed by a guard, so
//! an aborted task leaves nothing.
//!
//! Files: `mod.rs` the handle, its config and lifecycle; `post.rs` one POST and its headers;
//! `exchange.rs` a request from POST to answer, with its deadline; `sse.rs` an SSE reply;
//! `listener.rs` the GET stream; `legacy.rs` the 2024-11-05 HTTP+SSE protocol; `h1.rs` the
//! transport's own HTTP/1.1 connections (hyper).

mod exchange;
mod h1;
mod legacy;
pub(crate) mod listener;
mod post;
mod sse;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use futures::future::BoxFuture;
use reqwest::header::{HeaderMap, HeaderValue};
use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::task::AbortHandle;

use super::{AuthHook, Era, Event, EventSink, OutgoingRequest, Reply, SessionHook, Transport};
use crate::error::Error;
use crate::jsonrpc;
use crate::runtime;
use crate::sync::lock;
use exchange::ExchangeDeadline;
use legacy::Legacy;

pub use super::{DEFAULT_MAX_MESSAGE_BYTES, DEFAULT_TIMEOUT_MS};
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
/// How long an idle pooled connection is kept (the shared client's and the lean pools').
pub const POOL_IDLE: Duration = crate::net::POOL_IDLE;
/// The first id [`Transport::next_id`] hands out (see `stdio::OWN_IDS_FROM`).
pub const OWN_IDS_FROM: u64 = crate::transport::stdio::OWN_IDS_FROM;

/// What an exchange read: the result, or — when its reply goes to the sink and the message is of
/// the size the sink takes unparsed ([`super::EventSink::raw_answers_from`]) — the server's whole
/// message (a JSON body, an SSE event's data): it crosses as an [`Event::RawAnswer`], as stdio's
/// large answers do, without the result being copied out of it. Such a message was only skimmed
/// ([`jsonrpc::skim_answer`]: an answer, not an error, to one of our requests), or checked as JSON
/// when the skim could not tell; the consumer's parse checks it. It keeps the room its buffer
/// grew to (up to as much again, for SSE data and a body of unknown length or over 32 MiB) while
/// strings made from it live in JS: shrinking it first cost ~5 ms for an 8 MiB SSE answer on Bun
/// (the allocator's fresh pages; 850 → 2,200 page faults a call), measured.
pub(super) enum Answer {
    Result(Option<Box<RawValue>>),
    Message(Bytes),
}

/// An exchange's outcome ([`super::Outcome`] with the whole message as a possible answer).
pub(super) type Reading = Result<Answer, Error>;

impl Answer {
    /// The result, out of the whole message when that is what was kept.
    fn into_result(self) -> super::Outcome {
        match self {
            Answer::Result(result) => Ok(result),
            Answer::Message(message) => match jsonrpc::reply_members(&message) {
                Ok(Some((result, _))) => Ok(result.map(RawValue::to_owned)),
                Ok(None) => Ok(None),
                Err(e) => Err(invalid_json(e)),
            },
        }
    }
}

/// A reply body that is not JSON.
fn invalid_json(e: serde_json::Error) -> Error {
    Error::Parse(format!("Invalid JSON response: {e}"))
}

/// How to reach the server.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpConfig {
    /// The MCP endpoint.
    pub url: String,
    /// Extra headers, in order; they override the defaults.
    #[serde(default)]
    pub headers: Vec<(String, String)>,
    /// The transport timeout in milliseconds (requests that name none, notify, the closing
    /// DELETE).
    #[serde(default = "default_timeout")]
    pub timeout_ms: u64,
    /// See [`DEFAULT_MAX_MESSAGE_BYTES`].
    #[serde(default = "default_max")]
    pub max_message_bytes: usize,
    /// `type: "sse"`: if the very first POST (a session-opening request) answers 400, 404 or
    /// 405, fall back to the legacy HTTP+SSE protocol of revision 2024-11-05.
    #[serde(default)]
    pub legacy_fallback: bool,
    /// `type: "sse"` as the agent means it since 18.3.4: the legacy HTTP+SSE protocol from the
    /// start (the stream is opened first, no Streamable HTTP POST is tried).
    #[serde(default)]
    pub legacy_only: bool,
    /// The agent's header rules since 18.3.4: configured headers never replace the client's
    /// protocol headers (content type, `Accept`), a configured `MCP-Protocol-Version` is
    /// dropped, and the session's DELETE carries `Accept: */*` and the protocol version; an SSE
    /// resumption that is refused fails the request at once (after one
    /// [`HeadersRefresher`] call on 401/403). Without it (12.7, SPEC 3.3) configured headers
    /// override the content type and `Accept`, and a refused resumption is tried again.
    #[serde(default)]
    pub protocol_headers_win: bool,
    /// The agent's rule (18.3.4): the GET stream of server messages ending with nothing to
    /// resume from (or its resumption failing) closes the transport, so that its owner notices a
    /// server that went away while idle. Without it (12.7) the listener reconnects quietly.
    #[serde(default)]
    pub close_on_stream_loss: bool,
    /// How request ids are written (the agent's `requestIdFormat`): numbers by default.
    #[serde(default)]
    pub request_id_format: crate::jsonrpc::IdFormat,
    /// Which redirects the transport follows.
    #[serde(default)]
    pub redirects: RedirectRule,
}

/// Which redirects an HTTP transport follows.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum RedirectRule {
    /// Those within the server's origin, at most 10 (12.7's profile: a configured header never
    /// travels to another host because the server said so).
    #[default]
    SameOrigin,
    /// As `fetch` follows them (the agent since 18.3.4 without a header policy): any, at most
    /// 20; a 303, and a 301 or 302 of a POST, become a GET; credentials (`Authorization`,
    /// cookies) dropped off the origin, other configured headers kept.
    Follow,
    /// The agent's `headerPolicy: "origin-locked"`: see [`crate::net::Redirects::OriginLocked`]
    /// (at most 5 hops).
    OriginLocked,
}

impl RedirectRule {
    /// The policy of [`crate::net::send`].
    pub fn policy(self) -> crate::net::Redirects {
        match self {
            RedirectRule::SameOrigin => crate::net::Redirects::SameOrigin,
            RedirectRule::Follow => crate::net::Redirects::Any(20),
            RedirectRule::OriginLocked => crate::net::Redirects::OriginLocked(5),
        }
    }
}

impl HttpConfig {
    /// A config for `url` with every default.
    pub fn new(url: impl Into<String>) -> Self {
        HttpConfig {
            url: url.into(),
            headers: Vec::new(),
            timeout_ms: DEFAULT_TIMEOUT_MS,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            legacy_fallback: false,
            legacy_only: false,
            protocol_headers_win: false,
            close_on_stream_loss: false,
            request_id_format: Default::default(),
            redirects: RedirectRule::SameOrigin,
        }
    }
}

fn default_timeout() -> u64 {
    DEFAULT_TIMEOUT_MS
}
fn default_max() -> usize {
    DEFAULT_MAX_MESSAGE_BYTES
}

/// A running exchange: its task, whether giving up on it tells the server, and where its outcome
/// goes (taken when it finishes).
struct Inflight {
    /// `None` while its first poll runs on the caller's thread (see `spawn_tracked`).
    handle: Option<AbortHandle>,
    cancellable: bool,
    reply: Option<Reply>,
}

/// What the handle and every task of one transport share.
pub(crate) struct Inner {
    config: HttpConfig,
    /// The process's HTTP client ([`crate::net::client`]; a handle).
    client: reqwest::Client,
    /// `config.url`, parsed once (an invalid URL fails each request with the parse error).
    url: Result<url::Url, Error>,
    /// The lean client's connections, when it may serve this server (see [`h1`]); replaced at
    /// close, so that its keep-alive connections close with the transport.
    lean: Mutex<Option<Arc<h1::Pool>>>,
    /// Configured headers, validated when given (CR/LF rejected before anything is sent): by the
    /// config, or later by [`HttpTransport::set_headers`] (the JS face's `onAuthError`), which
    /// replaces them for every request from then on.
    headers: Mutex<Result<HeaderMap, Error>>,
    session: Mutex<Option<String>>,
    protocol_version: Mutex<Option<String>>,
    era: Mutex<Era>,
    inflight: Mutex<HashMap<u64, Inflight>>,
    /// Deadlines that progress notifications may move, by request id (SPEC 3.4).
    deadlines: Mutex<HashMap<u64, Arc<ExchangeDeadline>>>,
    /// The GET listener's task and the exchange id its end is reported for.
    listener: Mutex<Option<(u64, AbortHandle)>>,
    open: AtomicBool,
    requests: AtomicBool,
    sink: Arc<dyn EventSink>,
    /// Some POST got a 2xx answer (after that, no legacy fallback).
    posted: AtomicBool,
    /// The legacy HTTP+SSE connection, once fallen back to it.
    legacy: Mutex<Option<Arc<Legacy>>>,
    session_hook: Mutex<Option<Arc<dyn SessionHook>>>,
    auth_hook: Mutex<Option<Arc<dyn AuthHook>>>,
    /// The agent's `onAuthError` (see [`HeadersRefresher`]), for the work the transport does on
    /// its own: resuming an SSE answer.
    headers_refresher: Mutex<Option<HeadersRefresher>>,
}

/// Asks the owner for new configured headers after a 401/403 (the agent's `onAuthError`):
/// resolves to whether it applied some (with [`HttpTransport::set_headers`]) before resolving.
pub type HeadersRefresher = Arc<dyn Fn() -> BoxFuture<'static, bool> + Send + Sync>;

/// The caller's handle on a Streamable HTTP server.
pub struct HttpTransport {
    inner: Arc<Inner>,
    next_id: AtomicU64,
}

/// Requests up to this size may start on the caller's thread (see `spawn_tracked`): larger ones
/// are written by the I/O thread, which keeps the caller's thread free.
const STARTS_HERE_MAX_BODY: usize = 64 * 1024;

/// The lean client's pool for `url`'s origin, when it may serve it.
fn lean_pool(url: &str) -> Option<Arc<h1::Pool>> {
    h1::Target::from_env(url).map(|target| h1::Pool::new(target, POOL_IDLE))
}

impl HttpTransport {
    /// A transport for `config`; events go to `sink`. No I/O until a message is sent. Call
    /// [`HttpTransport::connect`] before sending.
    pub fn new(config: HttpConfig, sink: Arc<dyn EventSink>) -> Result<Self, Error> {
        let client = crate::net::client().map_err(Error::Io)?;
        let lean = Mutex::new(lean_pool(&config.url));
        let headers = post::header_map(&config.headers, config.protocol_headers_win);
        let url =
            url::Url::parse(&config.url).map_err(|e| Error::InvalidConfig(format!("url: {e}")));
        Ok(HttpTransport {
            inner: Arc::new(Inner {
                config,
                client,
                url,
                lean,
                headers: Mutex::new(headers),
                session: Mutex::new(None),
                protocol_version: Mutex::new(None),
                era: Mutex::new(Era::Legacy),
                inflight: Mutex::new(HashMap::new()),
                listener: Mutex::new(None),
                deadlines: Mutex::new(HashMap::new()),
                open: AtomicBool::new(false),
                requests: AtomicBool::new(false),
                sink,
                posted: AtomicBool::new(false),
                legacy: Mutex::new(None),
                session_hook: Mutex::new(None),
                auth_hook: Mutex::new(None),
                headers_refresher: Mutex::new(None),
            }),
            next_id: AtomicU64::new(OWN_IDS_FROM),
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

    /// Sets (or clears) the owner's [`HeadersRefresher`]: with the agent's HTTP rules
    /// ([`HttpConfig::protocol_headers_win`]) an SSE resumption refused with 401/403 asks it
    /// once, then resumes with the new headers.
    pub fn set_headers_refresher(&self, refresher: Option<HeadersRefresher>) {
        *lock(&self.inner.headers_refresher) = refresher;
    }

    /// The session id the server gave, if any.
    pub fn session_id(&self) -> Option<String> {
        lock(&self.inner.session).clone()
    }

    /// The negotiated protocol version (sent as `MCP-Protocol-Version`).
    pub fn protocol_version(&self) -> Option<String> {
        lock(&self.inner.protocol_version).clone()
    }

    /// Replaces the configured headers for every request sent from now on (exchanges already
    /// sending keep the ones they were sent with), with the config's checks: a value with CR or
    /// LF (or an invalid name or value) is refused, naming the header, never its value, and the
    /// headers in use stay. With `protocol_headers_win`, `MCP-Protocol-Version` is left out, as
    /// from the config. What the JS face's `onAuthError` (the agent's 18.3.4 hook) returns goes
    /// here before its one retry.
    pub fn set_headers(&self, headers: &[(String, String)]) -> Result<(), Error> {
        let map = post::header_map(headers, self.inner.config.protocol_headers_win)?;
        *lock(&self.inner.headers) = Ok(map);
        Ok(())
    }

    /// Sends a notification as exchange `id`: its POST's outcome goes where `reply` says
    /// (`Response` with no result on any 2xx).
    pub fn notify_as(
        &self,
        id: u64,
        method: &str,
        params: Option<&str>,
        timeout_ms: u64,
        reply: Reply,
    ) -> Result<(), Error> {
        self.check_open()?;
        let inner = self.inner.clone();
        let frame = jsonrpc::notification_frame(method, params);
        self.spawn_tracked(
            id,
            false,
            reply,
            async move {
                let outcome = inner.clone().post_only(frame, timeout_ms).await;
                inner.finish(id, outcome.map(|()| Answer::Result(None)));
            },
            false,
        );
        Ok(())
    }

    /// Counts of what the transport tracks (in-flight exchanges, movable deadlines, legacy
    /// waiters), for tests that check nothing is left behind.
    pub fn stats(&self) -> HttpStats {
        HttpStats {
            inflight: lock(&self.inner.inflight).len(),
            deadlines: lock(&self.inner.deadlines).len(),
            waiters: lock(&self.inner.legacy).as_ref().map_or(0, |l| l.waiting()),
        }
    }

    fn check_open(&self) -> Result<(), Error> {
        if self.inner.open.load(Ordering::Acquire) {
            Ok(())
        } else {
            Err(Error::NotConnected)
        }
    }

    /// Runs `fut` as exchange `id`'s task.
    ///
    /// With `here` (given by [`HttpTransport::starts_here`], only outside any tokio runtime:
    /// JavaScript's thread), the task's first poll runs on the caller's thread: the request is
    /// written at once, and the I/O thread's wake-up to take over the reading overlaps the
    /// server's work instead of coming before it: one wake-up fewer on the way of a sequential
    /// call. Measured, sequential echo calls over HTTP against the fixture, the package ÷ the
    /// floor in one process (medians of 10 alternating rounds, median of the runs): Bun ÷
    /// `fetch` 0.96 → 1.07 (6 runs), Node ÷ `node:http` 1.14 → 1.24 (3 runs). The first poll
    /// gets a no-op waker; the task then polls the future again at its start, so no readiness
    /// the first poll waited for is lost (a future's wake-ups go to the waker of its latest
    /// poll).
    fn spawn_tracked(
        &self,
        id: u64,
        cancellable: bool,
        reply: Reply,
        fut: impl std::future::Future<Output = ()> + Send + 'static,
        here: bool,
    ) {
        if !here {
            let mut inflight = lock(&self.inner.inflight);
            let task = runtime::handle().spawn(fut);
            inflight.insert(
                id,
                Inflight {
                    handle: Some(task.abort_handle()),
                    cancellable,
                    reply: Some(reply),
                },
            );
            return;
        }
        let rt = runtime::runtime();
        lock(&self.inner.inflight).insert(
            id,
            Inflight {
                handle: None,
                cancellable,
                reply: Some(reply),
            },
        );
        let mut fut = Box::pin(fut);
        // A panic stays here (as a task's would stay in its task), reported as the request's
        // failure: it must not unwind into the caller (JavaScript's microtask).
        let first = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _entered = rt.enter();
            fut.as_mut()
                .poll(&mut std::task::Context::from_waker(std::task::Waker::noop()))
        }));
        match first {
            Ok(std::task::Poll::Pending) => {}
            Ok(std::task::Poll::Ready(())) => return, // it finished (and reported) here
            Err(_) => {
                let message = "the request failed on the caller's thread (a panic)";
                self.inner.finish(id, Err(Error::Internal(message.into())));
                return;
            }
        }
        let task = rt.spawn(fut);
        match lock(&self.inner.inflight).get_mut(&id) {
            Some(entry) => entry.handle = Some(task.abort_handle()),
            // Finished already, or the transport closed meanwhile (its entries were drained).
            None => task.abort(),
        }
    }

    /// Whether a request of `len` bytes starts on the caller's thread (see `spawn_tracked`):
    /// when nothing else is in flight (a burst of requests is written by the I/O thread, which
    /// keeps the caller's thread free), it goes through the lean client, and no auth hook is
    /// set (whose steps may call back into the caller).
    fn starts_here(&self, len: usize) -> bool {
        if len > STARTS_HERE_MAX_BODY || tokio::runtime::Handle::try_current().is_ok() {
            return false;
        }
        // One lock at a time.
        let inner = &self.inner;
        let idle = lock(&inner.inflight).is_empty();
        let no_hook = lock(&inner.auth_hook).is_none();
        let not_legacy = lock(&inner.legacy).is_none();
        idle && no_hook && not_legacy && inner.lean().is_some()
    }

    /// Sends one request; its outcome goes where its reply says.
    fn send_one(&self, r: OutgoingRequest<'_>) {
        let inner = self.inner.clone();
        if r.timeout_ms == 0 {
            let mut events = Vec::new();
            r.reply
                .deliver(r.id, Err(Error::Timeout { ms: 0 }), &mut events);
            inner.sink.emit_all(events);
            return;
        }
        let id = r.id;
        let frame = jsonrpc::request_frame_json(
            id,
            inner.config.request_id_format,
            r.method_json,
            r.params,
        );
        let deadline = ExchangeDeadline::new(r.timeout_ms, r.progress);
        // Removed when the exchange ends or its task is aborted (even before its first poll).
        let movable = r.progress.map(|_| {
            lock(&inner.deadlines).insert(id, deadline.clone());
            DeadlineEntry {
                inner: inner.clone(),
                id,
            }
        });
        // A session-opening answer is read for its protocol version: never kept whole.
        let whole_from = if r.reply.is_event() && !r.opens_session {
            inner.sink.raw_answers_from()
        } else {
            None
        };
        let plan = exchange::Plan {
            id,
            cancellable: r.cancellable,
            opens_session: r.opens_session,
            headers: r.headers,
            whole_from,
        };
        let here = self.starts_here(frame.len());
        self.spawn_tracked(
            id,
            r.cancellable,
            r.reply,
            async move {
                let _movable = movable;
                let outcome = inner.clone().request(plan, frame, deadline).await;
                inner.finish(id, outcome);
            },
            here,
        );
    }
}

impl Transport for HttpTransport {
    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn default_timeout_ms(&self) -> u64 {
        self.inner.config.timeout_ms
    }

    fn is_open(&self) -> bool {
        self.inner.open.load(Ordering::Acquire)
    }

    fn send(&self, requests: Vec<OutgoingRequest<'_>>) -> Result<(), Error> {
        self.check_open()?;
        for r in requests {
            self.send_one(r);
        }
        Ok(())
    }

    fn notify(&self, method: &str, params: Option<&str>) -> BoxFuture<'static, Result<(), Error>> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let id = self.next_id();
        let sent = self.notify_as(
            id,
            method,
            params,
            self.inner.config.timeout_ms,
            Reply::Channel(tx),
        );
        Box::pin(async move {
            sent?;
            rx.await
                .unwrap_or_else(|_| Err(Error::closed()))
                .map(|_| ())
        })
    }

    fn respond(&self, id: &str, outcome: Result<&str, &str>) -> Result<(), Error> {
        self.check_open()?;
        self.inner
            .clone()
            .post_in_background(jsonrpc::reply_frame(id, outcome));
        Ok(())
    }

    /// Its exchange is aborted (closing its stream) and the server is told with
    /// `notifications/cancelled`.
    fn cancel(&self, id: u64, reason: &str) {
        if let Some(task) = lock(&self.inner.inflight).remove(&id) {
            if let Some(handle) = task.handle {
                handle.abort();
            }
            if task.cancellable {
                self.inner
                    .clone()
                    .post_in_background(jsonrpc::cancelled_frame(
                        id,
                        self.inner.config.request_id_format,
                        reason,
                    ));
            }
        }
    }

    /// Aborts every exchange, sends DELETE for the session (bounded by the timeout, outcome
    /// ignored), then reports [`Event::Closed`]`(None)`.
    fn close(&self) -> bool {
        self.inner.shut_down(true)
    }

    fn set_request_listener(&self, on: bool) {
        self.inner.requests.store(on, Ordering::Relaxed);
    }

    /// The GET stream for server-initiated messages; its end (405 or other non-2xx, too many
    /// failed reconnects, close) is reported as [`Event::Response`] for `id`. False (and nothing
    /// reported) when not connected, already listening, on the legacy protocol (whose one stream
    /// carries everything) or in the modern era (which has no GET stream).
    fn start_listener(&self, id: u64) -> bool {
        if !self.inner.open.load(Ordering::Acquire)
            || lock(&self.inner.legacy).is_some()
            || *lock(&self.inner.era) == Era::Modern
        {
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
        let task = runtime::handle().spawn(async move {
            inner.listen().await;
            if lock(&inner.listener).take().is_some() {
                inner.sink.emit(Event::Response { id, result: None });
            }
        });
        *listener = Some((id, task.abort_handle()));
        true
    }

    fn set_protocol_version(&self, version: Option<&str>) {
        *lock(&self.inner.protocol_version) = version.map(str::to_owned);
    }

    fn set_era(&self, era: Era) {
        *lock(&self.inner.era) = era;
    }

    fn set_session_hook(&self, hook: Option<Arc<dyn SessionHook>>) {
        *lock(&self.inner.session_hook) = hook;
    }

    fn set_auth_hook(&self, hook: Option<Arc<dyn AuthHook>>) {
        *lock(&self.inner.auth_hook) = hook;
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

impl Inner {
    /// Ends the connection: stops the listener and the legacy reader, aborts every exchange
    /// (their awaiting callers hear `Transport closed`), sends DELETE for the session (bounded by
    /// the timeout, outcome ignored), then, when `report`, emits [`Event::Closed`]`(None)`.
    /// False when not connected.
    pub(super) fn shut_down(self: &Arc<Self>, report: bool) -> bool {
        if !self.open.swap(false, Ordering::AcqRel) {
            return false;
        }
        if let Some((_, task)) = lock(&self.listener).take() {
            task.abort();
        }
        self.stop_legacy();
        for (_, task) in lock(&self.inflight).drain() {
            if let Some(handle) = task.handle {
                handle.abort();
            }
            if let Some(Reply::Channel(tx)) = task.reply {
                let _ = tx.send(Err(Error::closed()));
            }
        }
        let session = lock(&self.session).take();
        if session.is_none() && !report {
            return true;
        }
        // Read now: a connect that follows at once starts without a version.
        let version = lock(&self.protocol_version).clone();
        let inner = self.clone();
        runtime::handle().spawn(async move {
            if let Some(session) = session {
                let mut headers = lock(&inner.headers).clone().unwrap_or_default();
                if let Ok(v) = HeaderValue::from_str(&session) {
                    headers.insert("mcp-session-id", v);
                }
                // The agent's DELETE (18.3.4): a fetch's default `Accept` and the negotiated
                // protocol version, as on every request after initialize.
                if inner.config.protocol_headers_win {
                    headers.insert("accept", HeaderValue::from_static("*/*"));
                    if let Some(v) = version.and_then(|v| HeaderValue::from_str(&v).ok()) {
                        headers.insert("mcp-protocol-version", v);
                    }
                }
                // The bearer token too (SPEC 10.1: every request to the endpoint carries it).
                // On this transport's own connections when the lean client serves it (they
                // close below, with the pool), else on the process's client.
                let req = async {
                    let _ = inner.add_authorization(&mut headers).await;
                    let Ok(url) = inner.url.clone() else { return };
                    let _ = inner
                        .fetch(reqwest::Method::DELETE, url, headers, Bytes::new())
                        .await;
                };
                let _ = tokio::time::timeout(
                    Duration::from_millis(inner.config.timeout_ms.min(super::MAX_TIMEOUT_MS)),
                    req,
                )
                .await;
            }
            *lock(&inner.lean) = lean_pool(&inner.config.url);
            if report {
                inner.sink.emit(Event::Closed(None));
            }
        });
        true
    }

    /// Sends `request` (made with `self.client`) through the shared client, following
    /// redirects as the config's [`RedirectRule`] says.
    pub(super) async fn send(
        &self,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, String> {
        crate::net::send(request, self.config.redirects.policy()).await
    }

    /// Reports the outcome of exchange `id` unless it was cancelled or closed meanwhile.
    fn finish(&self, id: u64, reading: Reading) {
        let Some(task) = lock(&self.inflight).remove(&id) else {
            return;
        };
        let mut events = Vec::new();
        match (task.reply.unwrap_or_default(), reading) {
            // A large result crosses as stdio's large answers do (unparsed, its long strings cut
            // out on this thread), so that the consumer's JS thread parses only the rest.
            (Reply::Event, Ok(Answer::Message(message))) => {
                events.push(Event::RawAnswer { id, message });
            }
            (Reply::Event, reading) => events.push(super::outcome_event_for(
                &*self.sink,
                id,
                reading.and_then(Answer::into_result),
            )),
            (reply, reading) => {
                reply.deliver(id, reading.and_then(Answer::into_result), &mut events)
            }
        }
        self.sink.emit_all(events);
    }

    fn era(&self) -> Era {
        *lock(&self.era)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::transport::ChannelSink;

    fn transport() -> (HttpTransport, crate::transport::EventStream) {
        let (sink, events) = ChannelSink::new();
        let config = HttpConfig::new("http://127.0.0.1:9/mcp");
        (HttpTransport::new(config, sink).unwrap(), events)
    }

    /// A panic in an exchange's first poll, run on the caller's thread (JavaScript's, outside any
    /// runtime), stays there: the request fails with an internal error, nothing is left in
    /// flight, and no task is spawned for it.
    #[test]
    fn a_panic_in_the_first_poll_fails_the_request_instead_of_unwinding() {
        let (t, _events) = transport();
        let (tx, mut rx) = tokio::sync::oneshot::channel();
        t.spawn_tracked(7, false, Reply::Channel(tx), async { panic!("boom") }, true);
        match rx.try_recv() {
            Ok(Err(Error::Internal(message))) => assert!(message.contains("panic"), "{message}"),
            other => panic!("expected an internal error, got {other:?}"),
        }
        assert!(lock(&t.inner.inflight).is_empty());
    }

    /// A sink that holds each delivery of notifications until the test takes it, and counts
    /// the ones made while one was still held (a source that did not wait for its consumer).
    struct Held {
        held: std::sync::atomic::AtomicBool,
        taken: tokio::sync::Notify,
        unpaced: std::sync::atomic::AtomicUsize,
        tx: tokio::sync::mpsc::UnboundedSender<Event>,
    }

    impl EventSink for Held {
        fn emit_all(&self, events: Vec<Event>) {
            // The stream's events are paced; the request's own outcome is delivered at once
            // (it may follow the last notifications without waiting).
            let stream = events
                .iter()
                .any(|e| matches!(e, Event::Notification { .. }));
            if stream && self.held.swap(true, Ordering::SeqCst) {
                self.unpaced.fetch_add(1, Ordering::SeqCst);
            }
            for e in events {
                let _ = self.tx.send(e);
            }
        }

        fn backlog(&self) -> Option<&tokio::sync::Notify> {
            self.held.load(Ordering::SeqCst).then_some(&self.taken)
        }
    }

    /// An SSE reply of many events, each written on its own: the transport reads no further
    /// than one read ahead of its consumer (before: every event was delivered as it came, so a
    /// busy consumer's queue grew without bound).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn an_sse_reply_is_read_no_faster_than_its_events_are_taken() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        tokio::time::timeout(Duration::from_secs(20), async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let url = format!("http://{}/mcp", listener.local_addr().unwrap());
            const EVENTS: usize = 300;
            tokio::spawn(async move {
                let (mut conn, _) = listener.accept().await.unwrap();
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let (head_end, length) = loop {
                    let n = conn.read(&mut chunk).await.unwrap();
                    buf.extend_from_slice(&chunk[..n]);
                    if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                        let length: usize = head
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length: "))
                            .unwrap()
                            .trim()
                            .parse()
                            .unwrap();
                        break (end + 4, length);
                    }
                };
                while buf.len() < head_end + length {
                    let n = conn.read(&mut chunk).await.unwrap();
                    buf.extend_from_slice(&chunk[..n]);
                }
                let request: serde_json::Value =
                    serde_json::from_slice(&buf[head_end..head_end + length]).unwrap();
                let head = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                            connection: close\r\n\r\n";
                conn.write_all(head.as_bytes()).await.unwrap();
                for i in 0..EVENTS {
                    let note = format!(
                        "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\
                         \"params\":{{\"i\":{i}}}}}\n\n"
                    );
                    conn.write_all(note.as_bytes()).await.unwrap();
                    conn.flush().await.unwrap();
                }
                let answer = format!(
                    "data: {{\"jsonrpc\":\"2.0\",\"id\":{},\"result\":{{}}}}\n\n",
                    request["id"]
                );
                conn.write_all(answer.as_bytes()).await.unwrap();
            });
            let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
            let sink = Arc::new(Held {
                held: Default::default(),
                taken: Default::default(),
                unpaced: Default::default(),
                tx,
            });
            let t = HttpTransport::new(HttpConfig::new(&url), sink.clone()).unwrap();
            t.connect();
            t.send(vec![OutgoingRequest::new(
                1,
                "\"tools/call\"",
                Some("{}"),
                15_000,
            )])
            .unwrap();
            let (mut notes, mut answered) = (0, false);
            while !answered {
                // A delivery: what is there now (at least one event), then take it.
                let mut delivery = vec![rx.recv().await.unwrap()];
                while let Ok(e) = rx.try_recv() {
                    delivery.push(e);
                }
                for e in delivery {
                    match e {
                        Event::Notification { .. } => notes += 1,
                        Event::Response { id: 1, .. } => answered = true,
                        other => panic!("unexpected {other:?}"),
                    }
                }
                sink.held.store(false, Ordering::SeqCst);
                sink.taken.notify_waiters();
            }
            assert_eq!(notes, EVENTS);
            assert_eq!(
                sink.unpaced.load(Ordering::SeqCst),
                0,
                "delivered while held"
            );
        })
        .await
        .unwrap();
    }

    /// The same through the sink: the failure is reported as the request's event.
    #[test]
    fn a_panic_in_the_first_poll_is_reported_to_the_sink() {
        use futures::{FutureExt, StreamExt};
        let (t, mut events) = transport();
        t.spawn_tracked(8, false, Reply::Event, async { panic!("boom") }, true);
        // Emitted before spawn_tracked returned: the event is already in the stream.
        match events.next().now_or_never() {
            Some(Some(Event::Failed {
                id: 8,
                error: Error::Internal(_),
            })) => {}
            other => panic!("expected the request's failure, got {other:?}"),
        }
        assert!(lock(&t.inner.inflight).is_empty());
    }

    /// What a test server makes of one request: its method, its head (lowercased) and its body.
    type Answering = Arc<dyn Fn(&str, &str, &[u8]) -> String + Send + Sync>;

    /// A loopback server that answers each connection's one request with what `answer` returns
    /// (a whole HTTP response, which should say `connection: close`); its endpoint's URL.
    async fn serve(answer: Answering) -> String {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let answer = answer.clone();
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    let mut chunk = [0u8; 4096];
                    let end = loop {
                        let Ok(n) = conn.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                            break end;
                        }
                    };
                    let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| l.strip_prefix("content-length: "))
                        .map_or(0, |n| n.trim().parse().unwrap());
                    while buf.len() < end + 4 + length {
                        let Ok(n) = conn.read(&mut chunk).await else {
                            return;
                        };
                        if n == 0 {
                            return;
                        }
                        buf.extend_from_slice(&chunk[..n]);
                    }
                    let method = head.split(' ').next().unwrap_or_default().to_string();
                    let response = answer(&method, &head, &buf[end + 4..end + 4 + length]);
                    let _ = conn.write_all(response.as_bytes()).await;
                    let _ = conn.shutdown().await;
                });
            }
        });
        url
    }

    /// The value of header `name` (lowercase) in a lowercased head.
    fn header_in<'a>(head: &'a str, name: &str) -> Option<&'a str> {
        head.lines()
            .find_map(|l| l.strip_prefix(name)?.strip_prefix(':'))
            .map(str::trim)
    }

    /// Sends `method` as request `id` and waits for its outcome (notifications on the way skipped).
    async fn outcome(
        t: &HttpTransport,
        events: &mut crate::transport::EventStream,
        id: u64,
    ) -> Result<String, Error> {
        use futures::StreamExt;
        t.send(vec![OutgoingRequest::new(id, "\"m\"", Some("{}"), 10_000)])
            .unwrap();
        loop {
            match events.next().await.unwrap() {
                Event::Response { id: got, result } if got == id => {
                    return Ok(result.map(|r| r.get().to_string()).unwrap_or_default());
                }
                Event::Failed { id: got, error } if got == id => return Err(error),
                _ => {}
            }
        }
    }

    /// `set_headers` (the JS face's `onAuthError`) replaces the configured headers for the
    /// requests that follow, with the config's checks: a value with CR or LF is refused naming
    /// the header only, and the headers in use stay.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn set_headers_replaces_the_configured_ones_for_later_requests() {
        tokio::time::timeout(Duration::from_secs(20), async {
            let url = serve(Arc::new(|_, head, body| {
                let request: serde_json::Value = serde_json::from_slice(body).unwrap();
                let seen = serde_json::json!({
                    "jsonrpc": "2.0",
                    "id": request["id"],
                    "result": {
                        "authorization": header_in(head, "authorization"),
                        "keep": header_in(head, "x-keep"),
                    },
                })
                .to_string();
                format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n\
                     content-length: {}\r\nconnection: close\r\n\r\n{seen}",
                    seen.len()
                )
            }))
            .await;
            let (sink, mut events) = crate::transport::ChannelSink::new();
            let mut config = HttpConfig::new(url);
            config.headers = vec![
                ("Authorization".into(), "Bearer old".into()),
                ("X-Keep".into(), "1".into()),
            ];
            let t = HttpTransport::new(config, sink).unwrap();
            t.connect();
            let old = r#"{"authorization":"bearer old","keep":"1"}"#;
            assert_eq!(outcome(&t, &mut events, 1).await.unwrap(), old);
            let refused = t
                .set_headers(&[("Authorization".into(), "Bearer new\r\nX-Evil: 1".into())])
                .unwrap_err();
            assert_eq!(
                refused.to_string(),
                "Invalid config: header \"Authorization\" contains CR or LF"
            );
            assert_eq!(outcome(&t, &mut events, 2).await.unwrap(), old);
            t.set_headers(&[("authorization".into(), "Bearer new".into())])
                .unwrap();
            let new = r#"{"authorization":"bearer new","keep":null}"#;
            assert_eq!(outcome(&t, &mut events, 3).await.unwrap(), new);
        })
        .await
        .unwrap();
    }

    /// A request whose POST was accepted with an SSE reply never fails with an HTTP status, even
    /// when its resumption is refused with 401: what reaches the caller is the lost answer, so
    /// that the JS face's `onAuthError` (which retries only an HTTP 401/403) never sends again
    /// a request the server accepted (18.3.4: no retry after an accepted SSE stream).
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_sse_resumption_is_not_an_http_refusal() {
        tokio::time::timeout(Duration::from_secs(20), async {
            let gets = Arc::new(std::sync::atomic::AtomicUsize::new(0));
            let counted = gets.clone();
            let url = serve(Arc::new(move |method, _, _| {
                if method == "get" {
                    counted.fetch_add(1, Ordering::SeqCst);
                    return "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\n\
                            content-length: 0\r\nconnection: close\r\n\r\n"
                        .into();
                }
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
                 id: e1\nretry: 5\n\
                 data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
                    .into()
            }))
            .await;
            let (sink, mut events) = crate::transport::ChannelSink::new();
            let t = HttpTransport::new(HttpConfig::new(url), sink).unwrap();
            t.connect();
            let error = outcome(&t, &mut events, 1).await.unwrap_err();
            assert!(
                matches!(error, Error::NoResponse { .. }),
                "expected the lost answer, got {error:?}"
            );
            assert_eq!(
                gets.load(Ordering::SeqCst),
                SSE_RESUME_ATTEMPTS as usize,
                "each resumption was tried"
            );
        })
        .await
        .unwrap();
    }

    /// The agent's rule (`protocol_headers_win`, 18.3.4): a resumption refused with 401 asks the
    /// headers refresher once and is made again with its headers; refused again, the request
    /// fails at once with the status and the body, not as an HTTP status (nothing sends it again);
    /// a refresher that applies none: `auth refresh failed` after one resumption.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_refused_sse_resumption_asks_the_refresher_once_under_the_agents_rule() {
        tokio::time::timeout(Duration::from_secs(20), async {
            let resumes = Arc::new(Mutex::new(Vec::<Option<String>>::new()));
            let seen = resumes.clone();
            let url = serve(Arc::new(move |method, head, _| {
                if method == "get" {
                    let auth = header_in(head, "authorization").map(str::to_owned);
                    let accepted = auth.as_deref() == Some("bearer new");
                    lock(&seen).push(auth);
                    if accepted {
                        let answer = "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"resumed\":true}}";
                        return format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
                             connection: close\r\n\r\nid: e2\ndata: {answer}\n\n"
                        );
                    }
                    return "HTTP/1.1 401 Unauthorized\r\nwww-authenticate: Bearer\r\n\
                            content-length: 7\r\nconnection: close\r\n\r\nrefused"
                        .into();
                }
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n\
                 id: e1\nretry: 5\n\
                 data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{}}\n\n"
                    .into()
            }))
            .await;
            let transport = |refresh_to: Option<&'static str>| {
                let (sink, events) = crate::transport::ChannelSink::new();
                let mut config = HttpConfig::new(url.clone());
                config.protocol_headers_win = true;
                config.headers = vec![("Authorization".into(), "Bearer old".into())];
                let t = Arc::new(HttpTransport::new(config, sink).unwrap());
                t.connect();
                let asked = Arc::new(std::sync::atomic::AtomicUsize::new(0));
                let (counter, weak) = (asked.clone(), Arc::downgrade(&t));
                t.set_headers_refresher(Some(Arc::new(move || {
                    counter.fetch_add(1, Ordering::SeqCst);
                    let t = weak.upgrade();
                    Box::pin(async move {
                        match (refresh_to, t) {
                            (Some(to), Some(t)) => t
                                .set_headers(&[("Authorization".into(), to.into())])
                                .is_ok(),
                            _ => false,
                        }
                    })
                })));
                (t, events, asked)
            };
            // Refreshed to a token the server takes: resumed, the answer arrives.
            let (t, mut events, asked) = transport(Some("Bearer new"));
            assert_eq!(
                outcome(&t, &mut events, 1).await.unwrap(),
                r#"{"resumed":true}"#
            );
            assert_eq!(asked.load(Ordering::SeqCst), 1);
            assert_eq!(
                std::mem::take(&mut *lock(&resumes)),
                vec![Some("bearer old".to_owned()), Some("bearer new".to_owned())]
            );
            // Refreshed to one it refuses: fails with the status and body, asked once.
            let (t, mut events, asked) = transport(Some("Bearer other"));
            let error = outcome(&t, &mut events, 1).await.unwrap_err();
            assert_eq!(
                error.to_string(),
                "HTTP 401 resuming MCP SSE stream: refused"
            );
            assert!(
                matches!(error, Error::Io(_)),
                "not an HTTP status: {error:?}"
            );
            assert_eq!(asked.load(Ordering::SeqCst), 1);
            assert_eq!(std::mem::take(&mut *lock(&resumes)).len(), 2);
            // No headers from the refresher: one resumption.
            let (t, mut events, asked) = transport(None);
            let error = outcome(&t, &mut events, 1).await.unwrap_err();
            assert_eq!(
                error.to_string(),
                "HTTP 401 resuming MCP SSE stream: auth refresh failed"
            );
            assert_eq!(asked.load(Ordering::SeqCst), 1);
            assert_eq!(std::mem::take(&mut *lock(&resumes)).len(), 1);
        })
        .await
        .unwrap();
    }
}
