//! A request from its POST to its answer, within one deadline: a JSON or SSE reply, the legacy
//! fallback of a refused session-opening request on a `type: "sse"` server, and — when the
//! session expired and a [`SessionHook`](crate::transport::SessionHook) is set — a new session
//! and one more try.

use std::future::Future;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use serde::Deserialize;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{Answer, Inner, Reading, lock};
use crate::error::Error;
use crate::jsonrpc;
use crate::transport::{Deadline, ProgressReset};

/// How a request is to be exchanged (its options, see
/// [`OutgoingRequest`](crate::transport::OutgoingRequest)).
pub(super) struct Plan {
    pub(super) id: u64,
    pub(super) cancellable: bool,
    pub(super) opens_session: bool,
    pub(super) headers: Vec<(String, String)>,
    /// An answer of this size or more (a JSON body, an SSE event's data) is kept whole
    /// ([`Answer::Message`]).
    pub(super) whole_from: Option<usize>,
}

/// An exchange's [`Deadline`], which progress notifications may move while the exchange waits.
pub(crate) struct ExchangeDeadline {
    deadline: Mutex<Deadline>,
    moved: Notify,
    /// Pauses in effect (their count) and since when: an authorization step does not count
    /// against the request's deadline; it has its own bounds (SPEC 10.3).
    paused: Mutex<(u32, Instant)>,
}

/// A pause of an [`ExchangeDeadline`]; when the last one ends, the deadline moves by the time
/// paused.
pub(crate) struct Paused<'a>(&'a ExchangeDeadline);

impl Drop for Paused<'_> {
    fn drop(&mut self) {
        let mut paused = lock(&self.0.paused);
        paused.0 = paused.0.saturating_sub(1);
        if paused.0 == 0 {
            let by = paused.1.elapsed();
            drop(paused);
            lock(&self.0.deadline).postpone(by);
            self.0.moved.notify_waiters();
        }
    }
}

impl ExchangeDeadline {
    pub(super) fn new(timeout_ms: u64, progress: Option<ProgressReset>) -> Arc<Self> {
        Arc::new(ExchangeDeadline {
            deadline: Mutex::new(Deadline::new(Instant::now(), timeout_ms, progress)),
            moved: Notify::new(),
            paused: Mutex::new((0, Instant::now())),
        })
    }

    /// Stops the clock until the returned guard is dropped.
    pub(super) fn pause(&self) -> Paused<'_> {
        let mut paused = lock(&self.paused);
        if paused.0 == 0 {
            paused.1 = Instant::now();
        }
        paused.0 += 1;
        drop(paused);
        self.moved.notify_waiters();
        Paused(self)
    }

    fn is_paused(&self) -> bool {
        lock(&self.paused).0 > 0
    }

    /// A progress notification arrived: restart the deadline, when the request asked for it.
    pub(super) fn on_progress(&self) {
        if lock(&self.deadline).on_progress(Instant::now()) {
            self.moved.notify_waiters();
        }
    }

    /// The deadline that passed, for the message.
    pub(super) fn reported_ms(&self) -> u64 {
        lock(&self.deadline).reported_ms()
    }

    /// Runs `fut` until it completes (`Some`) or the deadline passes (`None`, `fut` dropped).
    pub(super) async fn run<F: Future>(&self, fut: F) -> Option<F::Output> {
        tokio::pin!(fut);
        loop {
            // Paused: only a wake-up (the pause's end) can end the wait.
            let at = if self.is_paused() {
                Instant::now() + std::time::Duration::from_secs(86_400)
            } else {
                lock(&self.deadline).at()
            };
            tokio::select! {
                biased;
                // Cancel-safe: the future is pinned across iterations and polled to the end.
                out = &mut fut => return Some(out),
                // Cancel-safe: a progress notification may have moved the deadline; check again.
                () = tokio::time::sleep_until(at) => {
                    if !self.is_paused() && lock(&self.deadline).at() <= Instant::now() {
                        return None;
                    }
                }
                // Cancel-safe: waking only re-reads the deadline.
                () = self.moved.notified() => {}
            }
        }
    }
}

impl Inner {
    /// Exchanges one request; on an expired session, with a session hook, opens a new session
    /// and tries once more (within the same deadline).
    pub(super) async fn request(
        self: Arc<Self>,
        plan: Plan,
        frame: Vec<u8>,
        deadline: Arc<ExchangeDeadline>,
    ) -> Reading {
        let frame = Bytes::from(frame);
        let outcome = self.clone().exchange(&plan, frame.clone(), &deadline).await;
        if plan.opens_session {
            self.note_protocol_version(&outcome);
        }
        let hook = lock(&self.session_hook).clone();
        match (outcome, hook) {
            (
                Err(Error::Http {
                    session_expired: true,
                    ..
                }),
                Some(hook),
            ) if !plan.opens_session => match deadline.run(hook.reinitialize()).await {
                Some(Ok(())) => self.exchange(&plan, frame, &deadline).await,
                Some(Err(e)) => Err(e),
                None => Err(self.request_timed_out(&plan, &deadline)),
            },
            (outcome, _) => outcome,
        }
    }

    /// Opens the legacy HTTP+SSE stream and sends this first request on it, within the deadline.
    async fn exchange_opening_legacy(
        self: Arc<Self>,
        plan: &Plan,
        frame: Bytes,
        deadline: &ExchangeDeadline,
    ) -> Reading {
        let legacy = match deadline.run(self.clone().start_legacy()).await {
            Some(r) => r?,
            None => {
                return Err(Error::Timeout {
                    ms: deadline.reported_ms(),
                });
            }
        };
        self.exchange_legacy(&legacy, plan, frame, deadline)
            .await
            .map(Answer::Result)
    }

    /// One request: POST, then read the JSON or SSE reply, all within the deadline.
    async fn exchange(
        self: Arc<Self>,
        plan: &Plan,
        frame: Bytes,
        deadline: &ExchangeDeadline,
    ) -> Reading {
        let legacy = lock(&self.legacy).clone();
        if let Some(legacy) = legacy {
            return self
                .exchange_legacy(&legacy, plan, frame, deadline)
                .await
                .map(Answer::Result);
        }
        // A legacy-only transport opens the stream for its first (session-opening) request.
        if self.config.legacy_only && plan.opens_session {
            return self.exchange_opening_legacy(plan, frame, deadline).await;
        }
        // Only the very first POST, a session-opening one, may turn out to need the legacy
        // protocol.
        let may_fall_back = plan.opens_session
            && self.config.legacy_fallback
            && !self.posted.load(Ordering::Acquire);
        let resp = match deadline
            .run(self.post(frame.clone(), &plan.headers, Some(deadline)))
            .await
        {
            Some(Err(Error::Http {
                status: 400 | 404 | 405,
                ..
            })) if may_fall_back => {
                return self.exchange_opening_legacy(plan, frame, deadline).await;
            }
            Some(r) => r?,
            None => return Err(self.request_timed_out(plan, deadline)),
        };
        let sse = resp
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|v| v.contains("text/event-stream"));
        if sse {
            match deadline
                .run(self.clone().read_sse(plan.id, plan.whole_from, resp))
                .await
            {
                Some(r) => r,
                None => {
                    let ms = deadline.reported_ms();
                    Err(self.timed_out(plan, Error::SseTimeout { ms }))
                }
            }
        } else {
            match deadline.run(self.read_json(resp, plan.whole_from)).await {
                Some(r) => r,
                None => Err(self.request_timed_out(plan, deadline)),
            }
        }
    }

    /// After a session-opening request succeeded: remembers the negotiated version for later
    /// headers.
    pub(super) fn note_protocol_version(&self, reading: &Reading) {
        #[derive(Deserialize)]
        struct Init {
            #[serde(rename = "protocolVersion")]
            protocol_version: Option<String>,
        }
        if let Ok(Answer::Result(Some(result))) = reading
            && let Ok(Init {
                protocol_version: Some(v),
            }) = serde_json::from_str::<Init>(result.get())
        {
            *lock(&self.protocol_version) = Some(v);
        }
    }

    /// After the deadline passed: `Request timeout after <t>ms`, and the server is told.
    pub(super) fn request_timed_out(
        self: &Arc<Self>,
        plan: &Plan,
        deadline: &ExchangeDeadline,
    ) -> Error {
        let ms = deadline.reported_ms();
        self.timed_out(plan, Error::Timeout { ms })
    }

    /// Tells the server (best effort) that a cancellable request was given up.
    pub(super) fn timed_out(self: &Arc<Self>, plan: &Plan, error: Error) -> Error {
        if plan.cancellable {
            self.clone().post_in_background(jsonrpc::cancelled_frame(
                plan.id,
                self.config.request_id_format,
                &error.to_string(),
            ));
        }
        error
    }
}
