//! One connection of a client: its transport, what it is ([`ConnKind`]), its modern session
//! once negotiated, and the end of it as its sink saw it.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::Notify;

use super::sink::ConnSink;
use crate::transport::Transport;
use crate::transport::http::HttpTransport;
use crate::transport::stdio::StdioTransport;

/// The end of one connection, as its sink saw it.
#[derive(Default)]
pub(crate) struct Life {
    closed: AtomicBool,
    notify: Notify,
}

impl Life {
    pub(crate) fn mark_closed(&self) {
        self.closed.store(true, Ordering::Release);
        self.notify.notify_waiters();
    }

    /// Waits until the connection reported its end, at most `limit`.
    pub(crate) async fn wait_closed(&self, limit: Duration) {
        let _ = tokio::time::timeout(limit, async {
            loop {
                let notified = self.notify.notified();
                if self.closed.load(Ordering::Acquire) {
                    return;
                }
                notified.await;
            }
        })
        .await;
    }
}

/// One connection of a client: its transport (typed, for what only one kind has: a process id,
/// a session id, a caller-read stdout) and the news of its end.
#[derive(Clone)]
pub struct Conn {
    pub(super) kind: ConnKind,
    pub(crate) life: Arc<Life>,
    /// Set when the connection speaks the modern revision (SPEC 9).
    pub(crate) modern: super::modern::SessionCell,
    pub(super) sink: Arc<ConnSink>,
    /// Counts the client's connections from 1.
    pub generation: u64,
}

/// The transport of a [`Conn`].
#[derive(Clone)]
pub enum ConnKind {
    /// A child process.
    Stdio(Arc<StdioTransport>),
    /// Streamable HTTP (or legacy HTTP+SSE).
    Http(Arc<HttpTransport>),
    /// A transport of the caller's making ([`ServerConfig::Custom`](super::ServerConfig::Custom)).
    Other(Arc<dyn Transport>),
}

impl Conn {
    /// The transport.
    pub fn transport(&self) -> Arc<dyn Transport> {
        match &self.kind {
            ConnKind::Stdio(t) => t.clone(),
            ConnKind::Http(t) => t.clone(),
            ConnKind::Other(t) => t.clone(),
        }
    }

    /// The transport, typed.
    pub fn kind(&self) -> &ConnKind {
        &self.kind
    }

    /// The revision this connection speaks, when it is the modern one (2026-07-28).
    pub fn modern_version(&self) -> Option<String> {
        self.modern.get().map(|s| s.version.clone())
    }

    pub(crate) fn modern(&self) -> Option<Arc<super::modern::ModernSession>> {
        self.modern.get().cloned()
    }

    /// Stdio with a caller-read stdout: decodes a chunk the caller read; returns the events that
    /// go on (the client has acted on the rest).
    pub fn feed(&self, chunk: &[u8]) -> Vec<crate::transport::Event> {
        match &self.kind {
            ConnKind::Stdio(t) => self.observed(self.sink.filter(t.feed(chunk))),
            ConnKind::Http(_) | ConnKind::Other(_) => Vec::new(),
        }
    }

    /// Stdio with a caller-read stdout: stdout ended; the last events.
    pub fn feed_end(&self) -> Vec<crate::transport::Event> {
        match &self.kind {
            ConnKind::Stdio(t) => self.observed(self.sink.filter(t.feed_end())),
            ConnKind::Http(_) | ConnKind::Other(_) => Vec::new(),
        }
    }

    /// Stdio with a caller-read stdout: the caller stopped reading as asked; see
    /// [`StdioTransport::hand_over`](crate::transport::stdio::StdioTransport::hand_over).
    pub fn hand_over(&self) -> Vec<crate::transport::Event> {
        match &self.kind {
            ConnKind::Stdio(t) => self.observed(self.sink.filter(t.hand_over())),
            ConnKind::Http(_) | ConnKind::Other(_) => Vec::new(),
        }
    }

    fn observed(&self, events: Vec<crate::transport::Event>) -> Vec<crate::transport::Event> {
        self.sink.downstream.observe(&events);
        events
    }

    /// Closes it and waits (at most `limit`) until it reported its end.
    pub(crate) async fn close_and_wait(&self, limit: Duration) {
        if self.transport().close() {
            self.life.wait_closed(limit).await;
        }
    }
}
