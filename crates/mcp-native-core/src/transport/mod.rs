//! I/O and lifecycle behind one [`Transport`] trait, implemented by the stdio transport and the
//! Streamable HTTP transport (which also speaks the legacy HTTP+SSE protocol).
//!
//! A transport knows I/O, not MCP methods: each request carries its options ([`OutgoingRequest`]:
//! deadline, progress rule, whether giving up tells the server, extra HTTP headers, whether it
//! opens a session) and says where its outcome goes ([`Reply`]): to a channel a Rust caller
//! awaits ([`TransportExt::request`]), or as an [`Event`] to the transport's [`EventSink`] — the
//! JavaScript binding's path, one batch and one wake-up for many answers. Everything else a
//! server sends (notifications, server→client requests, stderr, errors, the end) is an [`Event`]
//! for the sink; [`ChannelSink`] turns those into a `futures` `Stream` for Rust callers.

pub mod deadline;
pub(crate) mod dispatch;
pub mod http;
pub mod pending;
pub mod stdio;

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use serde_json::value::RawValue;
use tokio::sync::{mpsc, oneshot};

pub use deadline::{Deadline, MAX_TIMEOUT_MS, ProgressReset};
pub use pending::{Entry, Pending, Reply, outcome_event, outcome_event_for};

use crate::error::Error;

/// The outcome of a request: the raw `result` (missing → `None`), or why it failed.
pub type Outcome = Result<Option<Box<RawValue>>, Error>;

/// What a transport reports, in the order it happened.
#[derive(Debug)]
pub enum Event {
    /// Request `id` succeeded; `result` is the raw `result` member (missing → `None`).
    Response {
        /// Our request id.
        id: u64,
        /// The raw result.
        result: Option<Box<RawValue>>,
    },
    /// Request `id` failed (JSON-RPC error, timeout, oversized answer).
    Failed {
        /// Our request id.
        id: u64,
        /// Why.
        error: Error,
    },
    /// The answer to request `id` (not an error), for the consumer to parse once: over stdio a
    /// whole line as the server wrote it, over Streamable HTTP a whole JSON body or SSE event's
    /// data (decoded as UTF-8, its `data:` lines joined), unparsed: checked only by
    /// [`crate::jsonrpc::skim_answer`], or — over HTTP, when the skim cannot tell (an `error`
    /// member, an escaped key) — checked as JSON. An SSE event holding several JSON values, the
    /// legacy HTTP+SSE transport and calls the Rust client made ([`outcome_event_for`]) give
    /// `{"result":<result>}` instead. Either way the consumer takes the message's `result`. Only a
    /// sink that asks for them ([`EventSink::raw_answers_from`]) gets these; if the message then
    /// does not parse, the request fails.
    RawAnswer {
        /// Our request id.
        id: u64,
        /// The message (one JSON object). Whether it is ASCII is left to the consumer, which
        /// may not need to know (the binding asks only of a message that crosses in one piece).
        message: bytes::Bytes,
    },
    /// A server notification.
    Notification {
        /// Its method.
        method: String,
        /// Its raw params, when present.
        params: Option<Box<RawValue>>,
    },
    /// A server→client request for the user's request handler; answer it with
    /// [`Transport::respond`].
    Request {
        /// The raw id to echo.
        id: Box<RawValue>,
        /// Its method.
        method: String,
        /// Its raw params, when present.
        params: Option<Box<RawValue>>,
    },
    /// Text the server wrote to stderr (only while a stderr listener is set).
    Stderr(String),
    /// A transport error while connected (`onError`).
    Error(Error),
    /// The connection ended; always the last event of a connection. `None` after `close()`,
    /// otherwise the reason every pending request fails with.
    Closed(Option<Error>),
    /// Who reads a caller-read stdout now (stdio with `hand_over_long_lines`): `false` — stop
    /// reading, the transport reads until the long line on its way is complete (returned by
    /// `feed`); `true` — read again (through the sink, after the events of what it read).
    CallerReads(bool),
}

/// One outgoing request and its options. The method and params are JSON text, borrowed from the
/// caller (the binding's per-tick batch), so that sending copies them once, into the frame.
#[derive(Debug)]
pub struct OutgoingRequest<'a> {
    /// Its id, unique for the transport's lifetime ([`Transport::next_id`] or the caller's own).
    pub id: u64,
    /// The method as JSON string text, quotes included.
    pub method_json: &'a str,
    /// The params as JSON text (an object or array); `None` sends `{}`.
    pub params: Option<&'a str>,
    /// Its deadline in milliseconds; 0 fails at once without sending.
    pub timeout_ms: u64,
    /// Progress restarts the deadline (SPEC 3.4), up to its cap.
    pub progress: Option<ProgressReset>,
    /// Giving up on it (timeout, cancel) sends `notifications/cancelled` (SPEC 3.1: not for a
    /// handshake request).
    pub cancellable: bool,
    /// It opens a session (the legacy era's `initialize`): on success the HTTP transport
    /// remembers the negotiated `protocolVersion`; refused with 400/404/405 on a `type: "sse"`
    /// server, it moves the transport to the legacy HTTP+SSE protocol (SPEC 3.3).
    pub opens_session: bool,
    /// Extra HTTP headers for this request only (the modern era's `Mcp-Method`, `Mcp-Name`,
    /// `Mcp-Param-*`); ignored by stdio.
    pub headers: Vec<(String, String)>,
    /// Where its outcome goes.
    pub reply: Reply,
}

impl<'a> OutgoingRequest<'a> {
    /// A request with the defaults of SPEC 3.1: cancellable, outcome as an event.
    pub fn new(id: u64, method_json: &'a str, params: Option<&'a str>, timeout_ms: u64) -> Self {
        OutgoingRequest {
            id,
            method_json,
            params,
            timeout_ms,
            progress: None,
            cancellable: true,
            opens_session: false,
            headers: Vec::new(),
            reply: Reply::Event,
        }
    }
}

/// The options of a request a Rust caller awaits ([`TransportExt::request`]).
#[derive(Debug, Clone, Default)]
pub struct RequestOptions {
    /// The request's number (default: [`Transport::next_id`]); the JavaScript binding passes
    /// its own, which is also the request's progress token. Its id on the wire is offset
    /// ([`crate::jsonrpc::WIRE_ID_BASE`]); above [`crate::jsonrpc::MAX_REQUEST_NUMBER`] the request
    /// fails at once.
    pub id: Option<u64>,
    /// Deadline in milliseconds (default: the transport's own, see [`Transport::default_timeout_ms`]).
    pub timeout_ms: Option<u64>,
    /// Progress restarts the deadline (SPEC 3.4).
    pub progress: Option<ProgressReset>,
    /// Opens a session (see [`OutgoingRequest::opens_session`]); also never cancelled.
    pub opens_session: bool,
    /// Extra HTTP headers.
    pub headers: Vec<(String, String)>,
}

/// What a session-keeping transport asks of its client when the server says the session is gone
/// (HTTP 404, or 400 naming the session): open a new one (re-run the handshake), after which the
/// failed request is sent once more. One re-initialization is shared by concurrent callers.
pub trait SessionHook: Send + Sync + 'static {
    /// Opens a new session on the same transport.
    fn reinitialize(&self) -> BoxFuture<'static, Result<(), Error>>;
}

/// Waits while events emitted to `sink` earlier wait to be taken ([`EventSink::backlog`]). A
/// source that calls this before each read delivers at most one read's worth of events ahead of
/// its consumer; the rest waits where it is (the server's pipe or socket: the server then waits
/// too, as it would for a busy Node host). No lost wake-up: the waiter registers before it looks
/// again.
pub async fn paced(sink: &dyn EventSink) {
    while let Some(taken) = sink.backlog() {
        let notified = taken.notified();
        let mut notified = std::pin::pin!(notified);
        notified.as_mut().enable();
        if sink.backlog().is_none() {
            return;
        }
        notified.await;
    }
}

/// Retries after refusals one HTTP request may get through its [`AuthHook`] (401 → authorize,
/// then up to two `403 insufficient_scope` step-ups, with room for a retry after another
/// request authorized meanwhile): 4. The hook applies the real limits (SPEC 10.1 steps 8–9);
/// this one only guarantees that no hook can make a request loop.
pub const MAX_AUTH_RETRIES: u32 = 4;

/// Default `maxMessageBytes` of both transports: 128 MiB. A longer stdio line, SSE event or JSON
/// body is refused (and the request it answers, when known, fails with `Message exceeds
/// maxMessageBytes`).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;

/// The default timeout of requests, of a client's whole connect and of the closing DELETE
/// (SPEC 3.1, 5.1).
pub const DEFAULT_TIMEOUT_MS: u64 = 30_000;

/// What the HTTP transport asks of an authorization provider (SPEC 10): the `Authorization`
/// value of each request (refreshed when near expiry), and what to do when an answer is 401 (or
/// 403 `insufficient_scope`): authorize, after which the request is sent again. Implemented by
/// the OAuth client ([`crate::oauth::client::OAuthClient`]).
pub trait AuthHook: Send + Sync + 'static {
    /// The `Authorization` header value to send now, if any. May refresh a token first; an
    /// error fails the request.
    fn authorization(&self) -> BoxFuture<'static, Result<Option<String>, Error>>;
    /// The server refused a request: authorize (or refresh). `Ok(true)` sends the request again
    /// (with a fresh [`AuthHook::authorization`]); `Ok(false)` reports the refusal as it is.
    fn challenge(&self, refusal: AuthRefusal) -> BoxFuture<'static, Result<bool, Error>>;
}

/// A refusal the HTTP transport reports to its [`AuthHook`]. `Debug` hides the authorization
/// that was sent.
#[derive(Clone, PartialEq, Eq)]
pub struct AuthRefusal {
    /// 401, or 403.
    pub status: u16,
    /// The `WWW-Authenticate` values, joined with `, ` when there were several.
    pub www_authenticate: Option<String>,
    /// The negotiated `MCP-Protocol-Version`, if any (discovery requests send it).
    pub protocol_version: Option<String>,
    /// The `Authorization` value the refused request carried.
    pub sent_authorization: Option<String>,
    /// Earlier refusals of the same request that were retried (0 for the first).
    pub retries: u32,
    /// How many of those were 403s (step-ups).
    pub step_ups: u32,
}

impl std::fmt::Debug for AuthRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AuthRefusal")
            .field("status", &self.status)
            .field("www_authenticate", &self.www_authenticate)
            .field("protocol_version", &self.protocol_version)
            .field(
                "sent_authorization",
                &self.sent_authorization.as_ref().map(|_| "<redacted>"),
            )
            .field("retries", &self.retries)
            .field("step_ups", &self.step_ups)
            .finish()
    }
}

/// Which protocol era an HTTP exchange follows (SPEC 9): the legacy era keeps a session, resumes
/// broken SSE replies and opens the GET stream; the modern era (2026-07-28) does none of that and
/// sends `MCP-Protocol-Version` on every POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Era {
    /// 2024-11-05 … 2025-11-25: `initialize` handshake, sessions.
    #[default]
    Legacy,
    /// 2026-07-28: per-request metadata, no sessions.
    Modern,
}

/// One connection to one server: what every transport does. Outcomes of requests go where their
/// [`Reply`] says; everything else goes to the [`EventSink`] the transport was made with.
pub trait Transport: Send + Sync + 'static {
    /// A request id, unique for the transport's lifetime.
    fn next_id(&self) -> u64;
    /// The deadline of a request that names none (`config.timeout`, default 30 s).
    fn default_timeout_ms(&self) -> u64;
    /// Whether the connection is open.
    fn is_open(&self) -> bool;
    /// Sends requests (together where the transport can: one `writev` on stdio).
    fn send(&self, requests: Vec<OutgoingRequest<'_>>) -> Result<(), Error>;
    /// Sends a notification; resolves once it is handed over (stdio: queued; HTTP: the POST's
    /// outcome).
    fn notify(&self, method: &str, params: Option<&str>) -> BoxFuture<'static, Result<(), Error>>;
    /// Answers a server→client request (`id` is its raw JSON id; `outcome` the raw `result` or
    /// the raw `error` object).
    fn respond(&self, id: &str, outcome: Result<&str, &str>) -> Result<(), Error>;
    /// Gives up on request `id`: no outcome follows; the server is told when the request was
    /// cancellable and already on its way.
    fn cancel(&self, id: u64, reason: &str);
    /// Starts closing; [`Event::Closed`]`(None)` follows. False when not open.
    fn close(&self) -> bool;
    /// Delivers server→client requests other than `ping` as [`Event::Request`] (else they are
    /// answered `-32601`).
    fn set_request_listener(&self, on: bool);
    /// HTTP: the server-initiated message stream (GET) after a legacy handshake; its end is
    /// reported as [`Event::Response`] for `id`. False when not applicable.
    fn start_listener(&self, _id: u64) -> bool {
        false
    }
    /// HTTP: the negotiated protocol version to send in `MCP-Protocol-Version`.
    fn set_protocol_version(&self, _version: Option<&str>) {}
    /// HTTP: the protocol era of later exchanges.
    fn set_era(&self, _era: Era) {}
    /// HTTP: who re-opens an expired session.
    fn set_session_hook(&self, _hook: Option<Arc<dyn SessionHook>>) {}
    /// HTTP: who authorizes on 401/403.
    fn set_auth_hook(&self, _hook: Option<Arc<dyn AuthHook>>) {}
}

/// Awaitable requests on any [`Transport`].
pub trait TransportExt {
    /// Sends `method` with `params` (JSON text; `None` sends `{}`) and awaits its outcome. Dropping
    /// the future gives the request up (the server is told, as on a caller's abort).
    fn request(
        &self,
        method: &str,
        params: Option<&str>,
        options: RequestOptions,
    ) -> BoxFuture<'static, Outcome>;
}

impl TransportExt for Arc<dyn Transport> {
    fn request(
        &self,
        method: &str,
        params: Option<&str>,
        options: RequestOptions,
    ) -> BoxFuture<'static, Outcome> {
        request_on(self.clone(), method, params, options)
    }
}

impl<T: Transport> TransportExt for Arc<T> {
    fn request(
        &self,
        method: &str,
        params: Option<&str>,
        options: RequestOptions,
    ) -> BoxFuture<'static, Outcome> {
        request_on(self.clone(), method, params, options)
    }
}

fn request_on(
    transport: Arc<dyn Transport>,
    method: &str,
    params: Option<&str>,
    options: RequestOptions,
) -> BoxFuture<'static, Outcome> {
    let (tx, rx) = oneshot::channel();
    let id = options.id.unwrap_or_else(|| transport.next_id());
    if id > crate::jsonrpc::MAX_REQUEST_NUMBER {
        let max = crate::jsonrpc::MAX_REQUEST_NUMBER;
        return Box::pin(async move {
            Err(Error::Internal(format!(
                "request number {id} is out of range (at most {max})"
            )))
        });
    }
    let method_json = serde_json::to_string(method).unwrap_or_else(|_| "\"\"".into());
    let request = OutgoingRequest {
        id,
        method_json: &method_json,
        params,
        timeout_ms: options
            .timeout_ms
            .unwrap_or_else(|| transport.default_timeout_ms()),
        progress: options.progress,
        cancellable: !options.opens_session,
        opens_session: options.opens_session,
        headers: options.headers,
        reply: Reply::Channel(tx),
    };
    let sent = transport.send(vec![request]);
    Box::pin(async move {
        sent?;
        let mut guard = GiveUp {
            transport,
            id,
            done: false,
        };
        let outcome = rx.await.unwrap_or_else(|_| Err(Error::closed()));
        guard.done = true;
        outcome
    })
}

/// Gives a request up when the future awaiting it is dropped before its outcome.
struct GiveUp {
    transport: Arc<dyn Transport>,
    id: u64,
    done: bool,
}

impl Drop for GiveUp {
    fn drop(&mut self) {
        if !self.done {
            self.transport.cancel(self.id, "The request was abandoned");
        }
    }
}

/// Where a transport delivers its events. Called from runtime threads, and from the caller's
/// thread (an HTTP request that fails as it starts there, see `HttpTransport`); must not block.
pub trait EventSink: Send + Sync + 'static {
    /// Delivers one event. Events of one transport are emitted in order.
    fn emit(&self, event: Event) {
        self.emit_all(vec![event]);
    }

    /// Delivers events that arrived together (one read), in order, as one unit where the sink
    /// can: a batching sink then wakes its consumer once instead of once per event.
    fn emit_all(&self, events: Vec<Event>);

    /// The consumer's pacing, if it has one: `Some(signal)` while events emitted earlier still
    /// wait to be taken; `signal` is notified with `notify_waiters` when they are (several
    /// sources may wait on one sink: a manager's servers, HTTP replies in flight). A transport
    /// then reads no more input until that happens ([`paced`]), so that answers arriving
    /// meanwhile are read and delivered together (one wake-up of the consumer for many answers,
    /// and larger reads for the server too), and what waits for the consumer stays bounded by
    /// one read per source.
    fn backlog(&self) -> Option<&tokio::sync::Notify> {
        None
    }

    /// `Some(n)`: answers of `n` bytes or more (the message; where it comes as
    /// `{"result":<result>}`, see [`Event::RawAnswer`], the result) come as
    /// [`Event::RawAnswer`], for the consumer to parse; `None` (the default): every answer comes
    /// parsed.
    fn raw_answers_from(&self) -> Option<usize> {
        None
    }
}

/// An [`EventSink`] for Rust callers: every event goes to an unbounded channel, read as a
/// `futures` [`Stream`](futures::Stream) ([`EventStream`]).
#[derive(Debug)]
pub struct ChannelSink {
    tx: mpsc::UnboundedSender<Event>,
}

impl ChannelSink {
    /// The sink and the stream of what it receives.
    pub fn new() -> (Arc<Self>, EventStream) {
        let (tx, rx) = mpsc::unbounded_channel();
        (Arc::new(ChannelSink { tx }), EventStream { rx })
    }
}

impl EventSink for ChannelSink {
    fn emit_all(&self, events: Vec<Event>) {
        for event in events {
            let _ = self.tx.send(event);
        }
    }
}

/// The events of a [`ChannelSink`], in order; ends when the sink is dropped.
#[derive(Debug)]
pub struct EventStream {
    rx: mpsc::UnboundedReceiver<Event>,
}

impl futures::Stream for EventStream {
    type Item = Event;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Event>> {
        self.rx.poll_recv(cx)
    }
}

/// The request a `notifications/progress` refers to: its token is the request's number as it is
/// (`core.js` sets it; not the id on the wire, see [`crate::jsonrpc::WIRE_ID_BASE`]).
pub fn progress_target(method: &str, params: Option<&RawValue>) -> Option<u64> {
    if method != "notifications/progress" {
        return None;
    }
    #[derive(serde::Deserialize)]
    struct Progress<'a> {
        #[serde(borrow, rename = "progressToken")]
        token: Option<&'a RawValue>,
    }
    let p: Progress<'_> = serde_json::from_str(params?.get()).ok()?;
    crate::jsonrpc::id_number(p.token?.get())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, Ordering};

    /// A consumer whose deliveries are held until the test takes them.
    struct Held {
        held: AtomicBool,
        taken: tokio::sync::Notify,
    }

    impl EventSink for Held {
        fn emit_all(&self, _events: Vec<Event>) {}

        fn backlog(&self) -> Option<&tokio::sync::Notify> {
            self.held.load(Ordering::SeqCst).then_some(&self.taken)
        }
    }

    /// Several sources share one sink (a manager's servers, HTTP replies in flight): when the
    /// consumer takes its delivery, every one of them goes on. (A wake-up of one waiter left
    /// the others waiting for a delivery that might never come.)
    #[tokio::test]
    async fn every_source_waiting_on_one_sink_goes_on_when_its_events_are_taken() {
        let sink = Arc::new(Held {
            held: AtomicBool::new(true),
            taken: tokio::sync::Notify::new(),
        });
        let waiting: Vec<_> = (0..3)
            .map(|_| {
                let sink = sink.clone();
                tokio::spawn(async move { paced(&*sink).await })
            })
            .collect();
        // On this current-thread runtime, one yield runs each task to its wait.
        tokio::task::yield_now().await;
        assert!(waiting.iter().all(|t| !t.is_finished()), "all wait");
        sink.held.store(false, Ordering::SeqCst);
        sink.taken.notify_waiters();
        for t in waiting {
            tokio::time::timeout(std::time::Duration::from_secs(5), t)
                .await
                .expect("every source went on")
                .unwrap();
        }
        // Nothing held: no wait at all.
        paced(&*sink).await;
    }
}
