//! What the caller's thread and the owner task share: the request table, the writer, the
//! stdout decoder, and the switches the caller flips.

use std::sync::atomic::{AtomicBool, AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use tokio::sync::Notify;
use tokio::time::Instant;

use super::writer::Writer;
use crate::error::Error;
use crate::framing::jsonl::{Frame, LineDecoder};
use crate::jsonrpc;
use crate::sync::Locked;
use crate::transport::dispatch::dispatch;
use crate::transport::{Event, EventSink, Outcome, Pending, progress_target};

/// What one incoming message settles: a parsed outcome, or an answer the sink parses itself.
enum Answer {
    Parsed(Outcome),
    /// An [`Event::RawAnswer`].
    Raw(Event),
}

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
    /// The server ended on its own and the owner is collecting how (exit status, stderr):
    /// requests made now are kept, unwritten, and fail with that report.
    Ending,
    /// The owner is finishing or finished; no more requests.
    Ended,
}

/// Requests and lifecycle, shared by the caller's thread and the owner (behind [`Shared::table`]).
pub(super) struct Table {
    pub(super) state: State,
    pub(super) pending: Pending,
    /// The deadline the owner's timer is set to; a request with an earlier one wakes the owner.
    pub(super) armed: Option<Instant>,
    /// Why the connection ended, once it ended on its own: what later requests fail with.
    pub(super) ended_with: Option<Error>,
}

impl Table {
    /// What a request made now fails with, when it cannot be made.
    pub(super) fn refusal(&self) -> Error {
        self.ended_with.clone().unwrap_or_else(Error::closed)
    }
}

/// One connection's shared parts. Two locks, never held together: the table (short: map and
/// deadline updates) and the writer (held across a non-blocking `writev`), so that parsing
/// answers and writing requests on two threads do not wait for each other.
pub(super) struct Shared {
    pub(super) table: Mutex<Table>,
    pub(super) out: Mutex<Writer>,
    /// Bytes waiting in the writer's outbox ([`Writer::queued`], read without the lock: by the
    /// owner, and by senders checking the bound).
    pub(super) backlog: AtomicUsize,
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
    /// How request ids are written ([`StdioConfig::request_id_format`](super::StdioConfig)).
    pub(super) id_format: crate::jsonrpc::IdFormat,
    /// Set once the stdout pipe was offered to grow (see [`super::pipe`]): the grant, if it grew.
    #[cfg(unix)]
    pub(super) pipe: std::sync::OnceLock<Option<super::pipe::Grant>>,
    /// The caller's stdout is handed over while long lines arrive
    /// ([`super::StdioConfig::hand_over_long_lines`]).
    pub(super) hand_over: bool,
    /// Who reads the caller's stdout now: a [`Reader`] as its `u8`.
    pub(super) reading: AtomicU8,
    /// A chunk was fed while the owner read stdout ([`Shared::feed`]): the stream can no longer
    /// be put back in order, so the owner ends the connection with [`LATE_CHUNK`].
    pub(super) late: AtomicBool,
}

/// Who reads a caller-read stdout, in the order of a hand-over (see [`Shared::feed`]): the
/// caller; the caller, asked to stop ([`Event::CallerReads`]`(false)` sent, no second ask
/// meanwhile); the owner, until it hands back.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub(super) enum Reader {
    Caller = 0,
    Asked = 1,
    Owner = 2,
}

/// What `onError` says when the caller fed stdout after handing it over: the runtime kept
/// reading a socket it was told to stop reading. The chunk is dropped and the connection closed,
/// never decoded out of order.
pub(super) const LATE_CHUNK: &str = "stdout: a chunk was read after the stdout reader was handed over \
     (the runtime went on reading a paused socket); the connection is closed rather than its \
     messages corrupted";

impl Shared {
    pub(super) fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.locked()
    }

    pub(super) fn out(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.out.locked()
    }

    /// Runs `f` on the writer, keeps [`Shared::backlog`] true to it, and wakes the owner when
    /// `f` says a backlog started.
    pub(super) fn write_with(&self, f: impl FnOnce(&mut Writer) -> bool) {
        let mut out = self.out();
        let started = f(&mut out);
        self.backlog.store(out.queued, Ordering::Release);
        let broken = out.broken.is_some();
        drop(out);
        if broken {
            self.broken.store(true, Ordering::Release);
        }
        if started || broken {
            self.wake.notify_one();
        }
    }

    /// A large message is arriving on stdout (`fd`): grows the pipe, once per connection.
    #[cfg(unix)]
    pub(super) fn grow_pipe(&self, fd: std::os::fd::RawFd) {
        self.pipe.get_or_init(|| super::pipe::grow(fd));
    }

    /// Queues a frame that answers nothing (a notification, a reply): refused at the bound
    /// ([`Writer::admits`]).
    pub(super) fn send(&self, id: Option<u64>, frame: Vec<u8>) -> Result<(), Error> {
        Writer::admits(self.backlog.load(Ordering::Acquire), frame.len())?;
        self.write_with(|w| w.send(id, frame));
        // Stdin broke (now, or before): the frame cannot reach the server, and its sender hears
        // so (the agent's 15.8.1: an EPIPE between `initialize` and `notifications/initialized`
        // fails the connect, instead of a connection that is already dead).
        if self.broken.load(Ordering::Acquire) {
            let out = self.out();
            return Err(Error::Io(match &out.broken {
                Some(e) => format!("write {}", crate::error::errno_name(e)),
                None => "write failed".into(),
            }));
        }
        Ok(())
    }

    pub(super) fn forget(&self, id: u64, reason: &str, tell: bool) {
        self.write_with(|w| w.forget(id, reason, tell));
    }

    /// Handles the frames of one read: parses them without a lock, then settles their requests
    /// under one short lock (each outcome where its request's reply goes), moves deadlines on
    /// progress and sends replies; returns the events for the sink, in order.
    pub(super) fn handle(&self, frames: impl Iterator<Item = Frame>) -> Vec<Event> {
        let mut events = Vec::new();
        let mut replies = Vec::new();
        // Answers stay in line with the events around them: `None` marks an event's slot.
        let mut answers: Vec<Option<(u64, Answer)>> = Vec::new();
        let wanted = self.flags.requests.load(Ordering::Relaxed);
        for frame in frames {
            match frame {
                Frame::Line(line) => {
                    if let Some(raw) = self.raw_answer(&line) {
                        answers.push(Some(raw));
                        continue;
                    }
                    let before = events.len();
                    if let Some((id, outcome)) = dispatch(&line, wanted, &mut replies, &mut events)
                    {
                        answers.push(Some((id, Answer::Parsed(outcome))));
                    }
                    answers.extend((before..events.len()).map(|_| None));
                }
                Frame::Oversized { prefix } => {
                    if let Some(id) = jsonrpc::sniff_id(&prefix) {
                        let limit = self.max_message_bytes;
                        let outcome = Err(Error::MessageTooLarge { limit });
                        answers.push(Some((id, Answer::Parsed(outcome))));
                    }
                }
            }
        }
        if answers.is_empty() && replies.is_empty() {
            return events;
        }
        let mut out = Vec::with_capacity(answers.len());
        let mut events = events.into_iter();
        let mut table = self.table();
        // Answers to unknown (or already settled) requests are dropped here; progress moves the
        // deadline of a request that asked for it.
        let now = Instant::now();
        for slot in answers {
            match slot {
                Some((id, answer)) => {
                    if let Some(entry) = table.pending.settle(id) {
                        match answer {
                            Answer::Parsed(outcome) => entry.reply.deliver(id, outcome, &mut out),
                            Answer::Raw(event) => out.push(event),
                        }
                    }
                }
                None => {
                    let Some(event) = events.next() else { continue };
                    if let Event::Notification { method, params } = &event
                        && let Some(id) = progress_target(method, params.as_deref())
                    {
                        table.pending.progress(id, now);
                    }
                    out.push(event);
                }
            }
        }
        drop(table);
        // Our own replies (ping, unknown method): past the backlog bound one is dropped; the
        // server is not reading its stdin and would not read it.
        for frame in replies {
            let _ = self.send(None, frame);
        }
        out
    }

    /// A line the sink takes unparsed ([`Event::RawAnswer`]): large enough, an answer with a
    /// result to a request whose outcome goes to the sink. The skim is the one pass over it here,
    /// on the reading thread.
    fn raw_answer(&self, line: &bytes::Bytes) -> Option<(u64, Answer)> {
        if line.len() < self.sink.raw_answers_from()? {
            return None;
        }
        let id = jsonrpc::skim_answer(line)?;
        if !self.table().pending.goes_to_sink(id) {
            return None;
        }
        let message = line.clone();
        Some((id, Answer::Raw(Event::RawAnswer { id, message })))
    }

    /// Decodes a chunk of caller-read stdout; returns the events it completes. With hand-over,
    /// when a long line is left incomplete, the last event asks the caller to stop reading
    /// ([`Event::CallerReads`]`(false)`); the caller stops, feeds what its runtime still
    /// delivers, and then calls [`Shared::hand_over`]. A chunk fed after that is refused: the
    /// connection ends with [`LATE_CHUNK`] (see [`Shared::late`]).
    pub(super) fn feed(&self, data: &[u8]) -> Vec<Event> {
        if self.reader_is(Reader::Owner) {
            self.late.store(true, Ordering::Release);
            self.wake.notify_one();
            return Vec::new();
        }
        let (frames, long): (Vec<Frame>, bool) = {
            let mut reader = self.reader.locked();
            reader.extend(data);
            let frames = std::iter::from_fn(|| reader.next_frame()).collect();
            (frames, reader.partial_len() >= super::HAND_OVER_AT)
        };
        let mut events = self.handle(frames.into_iter());
        if long && self.hand_over && self.swap_reader(Reader::Caller, Reader::Asked) {
            events.push(Event::CallerReads(false));
        }
        events
    }

    /// The caller has stopped reading, as [`Shared::feed`] asked, and fed everything its runtime
    /// delivered since: the owner reads from here on, until the long line is in. If what was fed
    /// meanwhile completed the line (or stdout ended), there is nothing to hand over: the caller
    /// is told to read again instead. Without a pending ask, nothing happens.
    pub(super) fn hand_over(&self) -> Vec<Event> {
        if !self.reader_is(Reader::Asked) {
            return Vec::new();
        }
        let long = self.reader.locked().partial_len() >= super::HAND_OVER_AT;
        if !long || self.stdout_eof.load(Ordering::Acquire) {
            self.set_reader(Reader::Caller);
            return vec![Event::CallerReads(true)];
        }
        self.set_reader(Reader::Owner);
        self.wake.notify_one();
        Vec::new()
    }

    pub(super) fn reader_is(&self, who: Reader) -> bool {
        self.reading.load(Ordering::Acquire) == who as u8
    }

    pub(super) fn set_reader(&self, who: Reader) {
        self.reading.store(who as u8, Ordering::Release);
    }

    /// Moves from `from` to `to`; false when the reader was not `from`.
    fn swap_reader(&self, from: Reader, to: Reader) -> bool {
        self.reading
            .compare_exchange(from as u8, to as u8, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// The end of a caller-read stdout: the last line, if unterminated; tells the owner.
    pub(super) fn feed_end(&self) -> Vec<Event> {
        let last = self.reader.locked().finish();
        let events = self.handle(last.into_iter());
        self.stdout_eof.store(true, Ordering::Release);
        self.wake.notify_one();
        events
    }
}
