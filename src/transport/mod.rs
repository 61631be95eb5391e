//! I/O and lifecycle. This module holds what every transport shares: the events a transport
//! reports to its user ([`Event`], delivered in order through an [`EventSink`]) and the
//! pending-request table with its per-request deadlines ([`Pending`]).

pub mod stdio;

use std::collections::HashMap;
use std::task::{Context, Poll};
use std::time::Duration;

use serde_json::value::RawValue;
use tokio_util::time::{DelayQueue, delay_queue};

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

/// Where a transport delivers its events. Called from runtime threads; must not block.
pub trait EventSink: Send + Sync + 'static {
    /// Delivers one event. Events of one transport are emitted in order.
    fn emit(&self, event: Event);
}

/// One pending request.
#[derive(Debug)]
pub struct Entry {
    timer: Option<delay_queue::Key>,
    timeout_ms: u64,
    /// True once the frame was handed to the writer (so the server may have seen it).
    pub written: bool,
}

/// The pending-request table of one connection, owned by its I/O task. Each settlement removes
/// the entry and its timer together, exactly once.
#[derive(Debug, Default)]
pub struct Pending {
    entries: HashMap<u64, Entry>,
    timers: DelayQueue<u64>,
}

impl Pending {
    /// Registers request `id` with its deadline.
    pub fn insert(&mut self, id: u64, timeout_ms: u64) {
        let timeout_ms = timeout_ms.min(MAX_TIMEOUT_MS);
        let timer = self.timers.insert(id, Duration::from_millis(timeout_ms));
        self.entries.insert(
            id,
            Entry {
                timer: Some(timer),
                timeout_ms,
                written: false,
            },
        );
    }

    /// Whether `id` is still pending.
    pub fn contains(&self, id: u64) -> bool {
        self.entries.contains_key(&id)
    }

    /// Marks `id` as handed to the writer.
    pub fn mark_written(&mut self, id: u64) {
        if let Some(e) = self.entries.get_mut(&id) {
            e.written = true;
        }
    }

    /// Removes `id` and its timer; `None` if it was not pending (already settled).
    pub fn settle(&mut self, id: u64) -> Option<Entry> {
        let mut entry = self.entries.remove(&id)?;
        if let Some(key) = entry.timer.take() {
            self.timers.remove(&key);
        }
        Some(entry)
    }

    /// Number of pending requests.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// True when nothing is pending.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The next request whose deadline passed, removed, with its timeout in milliseconds.
    /// Cancel-safe: it holds no state between polls.
    pub fn poll_expired(&mut self, cx: &mut Context<'_>) -> Poll<(u64, Entry)> {
        loop {
            match self.timers.poll_expired(cx) {
                Poll::Ready(Some(expired)) => {
                    let id = expired.into_inner();
                    if let Some(mut entry) = self.entries.remove(&id) {
                        entry.timer = None;
                        return Poll::Ready((id, entry));
                    }
                }
                // An empty queue answers `Ready(None)`; it has registered no waker then, but any
                // insert happens on this same task before the next poll.
                Poll::Ready(None) | Poll::Pending => return Poll::Pending,
            }
        }
    }

    /// Removes every entry (the transport closed); returns their ids.
    pub fn drain(&mut self) -> Vec<u64> {
        self.timers.clear();
        self.entries.drain().map(|(id, _)| id).collect()
    }
}

impl Entry {
    /// The request's deadline in milliseconds.
    pub fn timeout_ms(&self) -> u64 {
        self.timeout_ms
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn deadlines_fire_once_and_settled_requests_never_fire() {
        let mut p = Pending::default();
        p.insert(1, 50);
        p.insert(2, 100);
        p.insert(3, 10);
        assert!(p.settle(3).is_some());
        assert!(p.settle(3).is_none());
        let (id, e) = std::future::poll_fn(|cx| p.poll_expired(cx)).await;
        assert_eq!((id, e.timeout_ms()), (1, 50));
        assert!(p.settle(1).is_none());
        let (id, _) = std::future::poll_fn(|cx| p.poll_expired(cx)).await;
        assert_eq!(id, 2);
        assert!(p.is_empty());
    }
}
