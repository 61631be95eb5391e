//! What the caller's thread and the owner task share: the request table, the writer, the
//! stdout decoder, and the switches the caller flips.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde_json::value::RawValue;
use tokio::sync::Notify;

use super::writer::Writer;
use crate::error::Error;
use crate::framing::jsonl::{Frame, LineDecoder};
use crate::jsonrpc::{self, Incoming};
use crate::transport::{Event, EventSink, Pending, progress_target};

/// What the caller switches on and off at any time.
#[derive(Debug, Default)]
pub(super) struct Flags {
    /// Deliver [`Event::Stderr`].
    pub(super) stderr: AtomicBool,
    /// Deliver server→client requests as [`Event::Request`] instead of answering `-32601`.
    pub(super) requests: AtomicBool,
}

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum State {
    Open,
    /// `close()` was called: run the close sequence and report [`Event::Closed`]`(None)`.
    Closing,
    /// The handle was dropped: run the close sequence silently.
    Dropped,
    /// The owner is finishing or finished; no more requests.
    Ended,
}

/// Requests and lifecycle, shared by the caller's thread and the owner (behind [`Shared::table`]).
pub(super) struct Table {
    pub(super) state: State,
    pub(super) pending: Pending,
    /// The deadline the owner's timer is set to; a request with an earlier one wakes the owner.
    pub(super) armed: Option<Instant>,
}

/// One connection's shared parts. Two locks, never held together: the table (short: map and
/// deadline updates) and the writer (held across a non-blocking `writev`), so that parsing
/// answers and writing requests on two threads do not wait for each other.
pub(super) struct Shared {
    pub(super) table: Mutex<Table>,
    pub(super) out: Mutex<Writer>,
    /// Frames are waiting in the writer's outbox (read by the owner without the lock).
    pub(super) backlog: AtomicBool,
    /// Stdin broke ([`Writer::broken`] is set): the owner ends the connection.
    pub(super) broken: AtomicBool,
    /// Wakes the owner: new backlog, an earlier deadline, close, end of a caller-read stdout.
    pub(super) wake: Notify,
    pub(super) sink: Arc<dyn EventSink>,
    /// The stdout line decoder (used by whoever reads stdout; never contended in practice).
    pub(super) reader: Mutex<LineDecoder>,
    /// Set when a caller-read stdout reached its end.
    pub(super) stdout_eof: AtomicBool,
    pub(super) flags: Arc<Flags>,
    pub(super) max_message_bytes: usize,
}

impl Shared {
    pub(super) fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(super) fn out(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the writer, keeps [`Shared::backlog`] true to it, and wakes the owner when
    /// `f` says a backlog started.
    pub(super) fn write_with(&self, f: impl FnOnce(&mut Writer) -> bool) {
        let mut out = self.out();
        let started = f(&mut out);
        self.backlog
            .store(!out.outbox.is_empty(), Ordering::Release);
        let broken = out.broken.is_some();
        drop(out);
        if broken {
            self.broken.store(true, Ordering::Release);
        }
        if started || broken {
            self.wake.notify_one();
        }
    }

    pub(super) fn send(&self, id: Option<u64>, frame: Vec<u8>) {
        self.write_with(|w| w.send(id, frame));
    }

    pub(super) fn forget(&self, id: u64, reason: &str, tell: bool) {
        self.write_with(|w| w.forget(id, reason, tell));
    }

    /// Handles the frames of one read: parses them without a lock, then settles their requests
    /// under one short lock and sends replies; returns their events, in order.
    pub(super) fn handle(&self, frames: impl Iterator<Item = Frame>) -> Vec<Event> {
        let mut events = Vec::new();
        let mut replies = Vec::new();
        for frame in frames {
            match frame {
                Frame::Line(line) => self.on_message(&line, &mut events, &mut replies),
                Frame::Oversized { prefix } => {
                    if let Some(id) = jsonrpc::sniff_id(&prefix) {
                        let limit = self.max_message_bytes;
                        events.push(Event::Failed {
                            id,
                            error: Error::MessageTooLarge { limit },
                        });
                    }
                }
            }
        }
        if events.is_empty() && replies.is_empty() {
            return events;
        }
        let mut table = self.table();
        // Answers to unknown (or already settled) requests are dropped here; progress moves the
        // deadline of a request that asked for it.
        let now = Instant::now();
        events.retain(|e| match e {
            Event::Response { id, .. } | Event::Failed { id, .. } => {
                table.pending.settle(*id).is_some()
            }
            Event::Notification { method, params } => {
                if let Some(id) = progress_target(method, params.as_deref()) {
                    table.pending.progress(id, now);
                }
                true
            }
            _ => true,
        });
        drop(table);
        for frame in replies {
            self.send(None, frame);
        }
        events
    }

    /// Decodes a chunk of caller-read stdout; returns the events it completes.
    pub(super) fn feed(&self, data: &[u8]) -> Vec<Event> {
        let frames: Vec<Frame> = {
            let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            reader.extend(data);
            std::iter::from_fn(|| reader.next_frame()).collect()
        };
        self.handle(frames.into_iter())
    }

    /// The end of a caller-read stdout: the last line, if unterminated; tells the owner.
    pub(super) fn feed_end(&self) -> Vec<Event> {
        let last = self
            .reader
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .finish();
        let events = self.handle(last.into_iter());
        self.stdout_eof.store(true, Ordering::Release);
        self.wake.notify_one();
        events
    }

    pub(super) fn on_message(
        &self,
        line: &[u8],
        events: &mut Vec<Event>,
        replies: &mut Vec<Vec<u8>>,
    ) {
        match jsonrpc::classify(line) {
            Incoming::Response { id, outcome } => {
                let Some(id) = jsonrpc::our_id(id) else {
                    return;
                };
                events.push(match outcome {
                    Ok(result) => Event::Response {
                        id,
                        result: result.map(RawValue::to_owned),
                    },
                    Err(error) => Event::Failed {
                        id,
                        error: Error::rpc(error),
                    },
                });
            }
            Incoming::Notification { method, params } => events.push(Event::Notification {
                method,
                params: params.map(RawValue::to_owned),
            }),
            Incoming::Request { id, method, params } => {
                if method == "ping" {
                    replies.push(jsonrpc::reply_frame(id.get(), Ok("{}")));
                } else if self.flags.requests.load(Ordering::Relaxed) {
                    events.push(Event::Request {
                        id: id.to_owned(),
                        method,
                        params: params.map(RawValue::to_owned),
                    });
                } else {
                    replies.push(jsonrpc::reply_frame(
                        id.get(),
                        Err(jsonrpc::METHOD_NOT_FOUND),
                    ));
                }
            }
            Incoming::Ignored | Incoming::Malformed => {}
        }
    }
}
