//! I/O and lifecycle. This module holds what every transport shares: the events a transport
//! reports to its user ([`Event`], delivered in order through an [`EventSink`]) and the
//! pending-request table with its per-request deadlines ([`Pending`]).

pub mod http;
pub mod stdio;

use std::collections::{BTreeSet, HashMap};
use std::time::{Duration, Instant};

use serde_json::value::RawValue;

use crate::error::Error;

/// Longest per-request deadline honoured (about 24.8 days, like JavaScript timers); longer ones
/// are clamped to it.
pub const MAX_TIMEOUT_MS: u64 = i32::MAX as u64;

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
    /// A server notification.
    Notification {
        /// Its method.
        method: String,
        /// Its raw params, when present.
        params: Option<Box<RawValue>>,
    },
    /// A server→client request for the user's request handler; answer it with the transport's
    /// `reply`.
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
}

/// One outgoing request, as the binding hands it over (see `stdio::StdioTransport::send_requests`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OutgoingRequest<'a> {
    /// Its id, unique for the transport's lifetime.
    pub id: u64,
    /// The method as JSON string text, quotes included.
    pub method_json: &'a str,
    /// The params as JSON text; `None` sends `{}`.
    pub params: Option<&'a str>,
    /// Its deadline in milliseconds; 0 fails at once without sending.
    pub timeout_ms: u64,
    /// Progress resets the deadline (SPEC 3.4 `resetTimeoutOnProgress`), never beyond
    /// `max_total_ms` from the start when that is set.
    pub progress: Option<ProgressReset>,
}

impl OutgoingRequest<'_> {
    /// Whether giving up on it sends `notifications/cancelled` (SPEC 3.1: not for `initialize`).
    pub fn cancellable(&self) -> bool {
        self.method_json != "\"initialize\""
    }
}

/// How progress notifications move a request's deadline (SPEC 3.4).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProgressReset {
    /// `maxTotalTimeout`: the deadline never passes start + this.
    pub max_total_ms: Option<u64>,
}

/// The request id a `notifications/progress` refers to, when its token is one of our ids (the
/// JS layer uses the request id as progress token).
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
    crate::jsonrpc::our_id(p.token?)
}

/// Where a transport delivers its events. Called from runtime threads; must not block.
pub trait EventSink: Send + Sync + 'static {
    /// Delivers one event. Events of one transport are emitted in order.
    fn emit(&self, event: Event);

    /// Delivers events that arrived together (one read), in order, as one unit where the sink
    /// can: a batching sink then wakes its consumer once instead of once per event.
    fn emit_all(&self, events: Vec<Event>) {
        for event in events {
            self.emit(event);
        }
    }

    /// The consumer's pacing, if it has one: `Some(signal)` while events emitted earlier still
    /// wait to be taken; `signal` is notified when they are. A transport then reads no more input
    /// until that happens, so that answers arriving meanwhile are read and delivered together
    /// (one wake-up of the consumer for many answers, and larger reads for the server too).
    fn backlog(&self) -> Option<&tokio::sync::Notify> {
        None
    }
}

/// One pending request.
#[derive(Debug, Clone, Copy)]
pub struct Entry {
    deadline: Instant,
    timeout_ms: u64,
    started: Instant,
    progress: Option<ProgressReset>,
    /// Whether giving up on it tells the server (see [`OutgoingRequest::cancellable`]).
    pub cancellable: bool,
}

impl Entry {
    /// The deadline that passed, in milliseconds, for the error message: `maxTotalTimeout` when
    /// progress had pushed the deadline up to that cap, else the request timeout.
    pub fn timeout_ms(&self) -> u64 {
        match self.progress.and_then(|p| p.max_total_ms) {
            Some(max) if self.deadline >= self.started + Duration::from_millis(max) => max,
            _ => self.timeout_ms,
        }
    }
}

/// `deadline`, no later than the entry's `maxTotalTimeout` allows.
fn capped(entry: &Entry, deadline: Instant) -> Instant {
    match entry.progress.and_then(|p| p.max_total_ms) {
        Some(max) => deadline.min(entry.started + Duration::from_millis(max.min(MAX_TIMEOUT_MS))),
        None => deadline,
    }
}

/// The pending-request table of one connection: entries by id plus their deadlines in order, so
/// that the earliest deadline is known without a scan. Each settlement removes the entry and its
/// deadline together, exactly once. Pure data: the transport decides when to look at the clock.
#[derive(Debug, Default)]
pub struct Pending {
    entries: HashMap<u64, Entry>,
    deadlines: BTreeSet<(Instant, u64)>,
}

impl Pending {
    /// Registers request `id`; returns its deadline.
    pub fn insert(&mut self, id: u64, timeout_ms: u64, now: Instant) -> Instant {
        self.insert_with(id, timeout_ms, now, None, true)
    }

    /// [`Pending::insert`] with a progress rule.
    pub fn insert_with(
        &mut self,
        id: u64,
        timeout_ms: u64,
        now: Instant,
        progress: Option<ProgressReset>,
        cancellable: bool,
    ) -> Instant {
        let timeout_ms = timeout_ms.min(MAX_TIMEOUT_MS);
        let entry = Entry {
            deadline: now + Duration::from_millis(timeout_ms),
            timeout_ms,
            started: now,
            progress,
            cancellable,
        };
        let deadline = capped(&entry, entry.deadline);
        self.deadlines.insert((deadline, id));
        self.entries.insert(id, Entry { deadline, ..entry });
        deadline
    }

    /// A progress notification for `id`: with a reset rule, its deadline restarts from `now`
    /// (capped by `maxTotalTimeout`). Returns whether it moved.
    pub fn progress(&mut self, id: u64, now: Instant) -> bool {
        let Some(entry) = self.entries.get_mut(&id) else {
            return false;
        };
        if entry.progress.is_none() {
            return false;
        }
        let next = capped(entry, now + Duration::from_millis(entry.timeout_ms));
        if next <= entry.deadline {
            return false;
        }
        self.deadlines.remove(&(entry.deadline, id));
        entry.deadline = next;
        self.deadlines.insert((next, id));
        true
    }

    /// Whether `id` is still pending.
    pub fn contains(&self, id: u64) -> bool {
        self.entries.contains_key(&id)
    }

    /// Removes `id` and its deadline; `None` if it was not pending (already settled).
    pub fn settle(&mut self, id: u64) -> Option<Entry> {
        let entry = self.entries.remove(&id)?;
        self.deadlines.remove(&(entry.deadline, id));
        Some(entry)
    }

    /// The earliest deadline of all pending requests.
    pub fn next_deadline(&self) -> Option<Instant> {
        self.deadlines.first().map(|(d, _)| *d)
    }

    /// Removes and returns every request whose deadline is at or before `now`, earliest first.
    pub fn expire(&mut self, now: Instant) -> Vec<(u64, Entry)> {
        let mut out = Vec::new();
        while let Some(&(deadline, id)) = self.deadlines.first() {
            if deadline > now {
                break;
            }
            self.deadlines.pop_first();
            if let Some(entry) = self.entries.remove(&id) {
                out.push((id, entry));
            }
        }
        out
    }

    /// Number of pending requests.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// Removes every entry (the transport closed).
    pub fn clear(&mut self) {
        self.entries.clear();
        self.deadlines.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn deadlines_expire_once_in_order_and_settled_requests_never_expire() {
        let mut p = Pending::default();
        let t0 = Instant::now();
        p.insert(1, 50, t0);
        p.insert(2, 100, t0);
        p.insert(3, 10, t0);
        assert_eq!(p.next_deadline(), Some(t0 + Duration::from_millis(10)));
        assert!(p.settle(3).is_some());
        assert!(p.settle(3).is_none());
        assert_eq!(p.next_deadline(), Some(t0 + Duration::from_millis(50)));
        assert!(p.expire(t0 + Duration::from_millis(49)).is_empty());
        let gone: Vec<u64> = p
            .expire(t0 + Duration::from_millis(100))
            .into_iter()
            .map(|(id, _)| id)
            .collect();
        assert_eq!(gone, vec![1, 2]);
        assert!(p.is_empty() && p.next_deadline().is_none());
        p.insert(4, 0, t0);
        assert_eq!(p.expire(t0).len(), 1);
    }

    #[test]
    fn progress_restarts_the_deadline_up_to_max_total() {
        let ms = Duration::from_millis;
        let mut p = Pending::default();
        let t0 = Instant::now();
        p.insert_with(
            1,
            100,
            t0,
            Some(ProgressReset {
                max_total_ms: Some(250),
            }),
            true,
        );
        p.insert(2, 100, t0);
        assert!(p.progress(1, t0 + ms(80)));
        assert!(!p.progress(2, t0 + ms(80)), "no reset rule: no change");
        assert_eq!(p.next_deadline(), Some(t0 + ms(100)));
        assert!(p.expire(t0 + ms(179)).iter().all(|(id, _)| *id == 2));
        assert!(p.progress(1, t0 + ms(170)));
        let (id, e) = p.expire(t0 + ms(250)).pop().unwrap();
        assert_eq!(
            (id, e.timeout_ms()),
            (1, 250),
            "capped by maxTotalTimeout, reported as it"
        );
        p.insert_with(3, 100, t0, Some(ProgressReset { max_total_ms: None }), true);
        assert!(p.progress(3, t0 + ms(50)));
        assert_eq!(p.expire(t0 + ms(150)).pop().unwrap().1.timeout_ms(), 100);
    }
}
