//! The stdio transport (SPEC 3.2): a child process speaking newline-delimited JSON.
//!
//! [`StdioTransport`] is the caller's handle; each `connect` spawns the child and one owner task
//! ([`Owner`]) that reads stdout, fires deadlines, waits for stdin to drain and runs shutdown. A
//! second task drains stderr, keeping its tail.
//!
//! The pending table ([`Table`]) and the outgoing queue ([`Writer`]) are shared by the caller's
//! thread and the owner, each behind its own short mutex. This is deliberate (measured, see `bench/`): with a
//! command channel every request woke the owner thread, and on a two-core machine that cost more
//! than the whole plain-Node client. Now a request is registered and written to stdin directly on
//! the caller's thread with one non-blocking `write`; the owner is woken only when stdin is full
//! (backpressure: the frame waits in the queue, its deadline running) or when the new deadline is
//! earlier than the one its timer is set to. Nothing blocks the caller: the lock is only held for
//! table updates and non-blocking writes.
//!
//! Shutdown is a fixed sequence: close stdin → SIGTERM to the process group → up to
//! `kill_grace_ms` → SIGKILL → reap.

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::path::PathBuf;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::unix::AsyncFd;
use tokio::io::{AsyncReadExt, Interest};
use tokio::process::{Child, ChildStderr};
use tokio::sync::Notify;

use super::{Event, EventSink, Pending};
use crate::error::{Error, ExitInfo};
use crate::framing::jsonl::{Frame, LineDecoder};
use crate::jsonrpc::{self, Incoming};
use crate::runtime;

/// Default `maxMessageBytes`: 128 MiB. A longer line is discarded (and the request it answers, if
/// its id can be read, fails with `Message exceeds maxMessageBytes`).
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 128 * 1024 * 1024;
/// Default `killGraceMs`: how long `close()` waits after SIGTERM before SIGKILL.
pub const DEFAULT_KILL_GRACE_MS: u64 = 2000;
/// How much of the server's stderr is kept for error reports.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// After the child exits on its own, how long to keep reading stdout/stderr for what it wrote last
/// (a grandchild may hold the pipes open forever).
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(100);

/// How to start the server. Built by the binding from the JS config.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StdioConfig {
    /// The program; found on `PATH` (of `env`, when it sets one), never run through a shell.
    pub command: String,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// The child's whole environment; `None` inherits this process's.
    #[serde(default)]
    pub env: Option<Vec<(String, String)>>,
    /// Working directory; `None` is the project directory (see [`project_dir`]).
    #[serde(default)]
    pub cwd: Option<String>,
    /// See [`DEFAULT_MAX_MESSAGE_BYTES`].
    #[serde(default = "default_max")]
    pub max_message_bytes: usize,
    /// See [`DEFAULT_KILL_GRACE_MS`].
    #[serde(default = "default_grace")]
    pub kill_grace_ms: u64,
    /// The caller reads stdout itself: it takes the descriptor with
    /// [`StdioTransport::take_stdout_fd`] and hands every chunk to [`StdioTransport::feed`] and
    /// the end of stream to [`StdioTransport::feed_end`]. The binding does this on Node, whose
    /// event loop then wakes once per answer instead of twice (I/O thread, then JS thread).
    #[serde(default)]
    pub caller_reads_stdout: bool,
}

fn default_max() -> usize {
    DEFAULT_MAX_MESSAGE_BYTES
}
fn default_grace() -> u64 {
    DEFAULT_KILL_GRACE_MS
}

impl StdioConfig {
    /// A config for `command args…` with every default.
    pub fn new(command: impl Into<String>, args: &[&str]) -> Self {
        StdioConfig {
            command: command.into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            env: None,
            cwd: None,
            max_message_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            kill_grace_ms: DEFAULT_KILL_GRACE_MS,
            caller_reads_stdout: false,
        }
    }
}

/// `$PWD` when it names the same directory as the process's working directory, else the latter
/// (keeps the user's symlinked path, as a shell would show it).
pub fn project_dir() -> Option<PathBuf> {
    let cwd = std::env::current_dir().ok()?;
    if let Some(pwd) = std::env::var_os("PWD").map(PathBuf::from)
        && let (Ok(a), Ok(b)) = (pwd.canonicalize(), cwd.canonicalize())
        && a == b
    {
        return Some(pwd);
    }
    Some(cwd)
}

/// What the caller switches on and off at any time.
#[derive(Debug, Default)]
struct Flags {
    /// Deliver [`Event::Stderr`].
    stderr: AtomicBool,
    /// Deliver server→client requests as [`Event::Request`] instead of answering `-32601`.
    requests: AtomicBool,
}

/// Where a connection is in its life.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Open,
    /// `close()` was called: run the close sequence and report [`Event::Closed`]`(None)`.
    Closing,
    /// The handle was dropped: run the close sequence silently.
    Dropped,
    /// The owner is finishing or finished; no more requests.
    Ended,
}

/// One request of [`StdioTransport::send_requests`].
#[derive(Debug, Clone, Copy)]
pub struct OutgoingRequest<'a> {
    /// Its id, unique for the transport's lifetime.
    pub id: u64,
    /// The method as JSON string text, quotes included.
    pub method_json: &'a str,
    /// The params as JSON text; `None` sends `{}`.
    pub params: Option<&'a str>,
    /// Its deadline in milliseconds; 0 fails at once without sending.
    pub timeout_ms: u64,
}

struct Outgoing {
    /// The request this frame carries, so that an unsent frame can be dropped on cancel.
    id: Option<u64>,
    frame: Vec<u8>,
}

/// Requests and lifecycle, shared by the caller's thread and the owner (behind [`Shared::table`]).
struct Table {
    state: State,
    pending: Pending,
    /// The deadline the owner's timer is set to; a request with an earlier one wakes the owner.
    armed: Option<Instant>,
}

/// The outgoing side (behind [`Shared::out`]): frames in order, written without blocking by
/// whichever thread has them, the rest waiting for stdin to drain.
struct Writer {
    /// Frames waiting for stdin to become writable, in order.
    outbox: VecDeque<Outgoing>,
    /// Bytes of the front frame already written.
    front_written: usize,
    /// The raw stdin descriptor while it is open. The owner closes it only after clearing this
    /// under the lock, so no write can reach a reused descriptor.
    stdin: Option<RawFd>,
}

impl Writer {
    /// Queues `frame` and writes what stdin takes right now. Returns true when bytes are left
    /// waiting where nothing was waiting before (the owner must then watch stdin).
    fn send(&mut self, id: Option<u64>, frame: Vec<u8>) -> bool {
        self.send_all(std::iter::once((id, frame)))
    }

    /// [`Writer::send`] for several frames, written together.
    fn send_all(&mut self, frames: impl Iterator<Item = (Option<u64>, Vec<u8>)>) -> bool {
        if self.stdin.is_none() {
            return false; // stdin is gone: the frames cannot be delivered; deadlines still run
        }
        let was_idle = self.outbox.is_empty();
        self.outbox
            .extend(frames.map(|(id, frame)| Outgoing { id, frame }));
        if was_idle {
            self.flush();
        }
        was_idle && !self.outbox.is_empty()
    }

    /// Writes queued frames until stdin would block. Never blocks.
    fn flush(&mut self) {
        let Some(fd) = self.stdin else { return };
        const MAX_IOV: usize = 64;
        while !self.outbox.is_empty() {
            let mut iov: Vec<libc::iovec> = Vec::with_capacity(self.outbox.len().min(MAX_IOV));
            for (i, out) in self.outbox.iter().take(MAX_IOV).enumerate() {
                let skip = if i == 0 { self.front_written } else { 0 };
                let rest = &out.frame[skip..];
                iov.push(libc::iovec {
                    iov_base: rest.as_ptr() as *mut libc::c_void,
                    iov_len: rest.len(),
                });
            }
            // SAFETY: every iovec points into a frame owned by `self.outbox`, which is neither
            // moved nor dropped during the call; `fd` is open (see `Writer::stdin`).
            let n = unsafe { libc::writev(fd, iov.as_ptr(), iov.len() as libc::c_int) };
            if n < 0 {
                let err = std::io::Error::last_os_error();
                match err.kind() {
                    std::io::ErrorKind::Interrupted => continue,
                    std::io::ErrorKind::WouldBlock => return,
                    // The server closed its stdin: nothing more can be delivered.
                    _ => {
                        self.close();
                        return;
                    }
                }
            }
            self.consume(n as usize);
        }
    }

    /// Pops the frames that `n` written bytes completed.
    fn consume(&mut self, mut n: usize) {
        while n > 0 {
            let Some(front) = self.outbox.front() else {
                break;
            };
            let left = front.frame.len() - self.front_written;
            if n >= left {
                n -= left;
                self.front_written = 0;
                self.outbox.pop_front();
            } else {
                self.front_written += n;
                n = 0;
            }
        }
    }

    /// After request `id` settled without an answer: drop its frame if no byte of it was written,
    /// otherwise tell the server. Returns what [`Writer::send`] returns.
    fn forget(&mut self, id: u64, reason: &str) -> bool {
        match self.outbox.iter().position(|o| o.id == Some(id)) {
            Some(pos) if pos > 0 || self.front_written == 0 => {
                self.outbox.remove(pos);
                false
            }
            _ => self.send(None, jsonrpc::cancelled_frame(id, reason)),
        }
    }

    /// Stops all writing (stdin closed or broken).
    fn close(&mut self) {
        self.stdin = None;
        self.outbox.clear();
        self.front_written = 0;
    }
}

/// One connection's shared parts. Two locks, never held together: the table (short: map and
/// deadline updates) and the writer (held across a non-blocking `writev`), so that parsing
/// answers and writing requests on two threads do not wait for each other.
struct Shared {
    table: Mutex<Table>,
    out: Mutex<Writer>,
    /// Frames are waiting in the writer's outbox (read by the owner without the lock).
    backlog: AtomicBool,
    /// Wakes the owner: new backlog, an earlier deadline, close, end of a caller-read stdout.
    wake: Notify,
    sink: Arc<dyn EventSink>,
    /// The stdout line decoder (used by whoever reads stdout; never contended in practice).
    reader: Mutex<LineDecoder>,
    /// Set when a caller-read stdout reached its end.
    stdout_eof: AtomicBool,
    flags: Arc<Flags>,
    max_message_bytes: usize,
}

impl Shared {
    fn table(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn out(&self) -> std::sync::MutexGuard<'_, Writer> {
        self.out.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Runs `f` on the writer, keeps [`Shared::backlog`] true to it, and wakes the owner when
    /// `f` says a backlog started.
    fn write_with(&self, f: impl FnOnce(&mut Writer) -> bool) {
        let mut out = self.out();
        let started = f(&mut out);
        self.backlog
            .store(!out.outbox.is_empty(), Ordering::Release);
        drop(out);
        if started {
            self.wake.notify_one();
        }
    }

    fn send(&self, id: Option<u64>, frame: Vec<u8>) {
        self.write_with(|w| w.send(id, frame));
    }

    fn forget(&self, id: u64, reason: &str) {
        self.write_with(|w| w.forget(id, reason));
    }

    /// Handles the frames of one read: parses them without a lock, then settles their requests
    /// under one short lock and sends replies; returns their events, in order.
    fn handle(&self, frames: impl Iterator<Item = Frame>) -> Vec<Event> {
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
        // Answers to unknown (or already settled) requests are dropped here.
        events.retain(|e| match e {
            Event::Response { id, .. } | Event::Failed { id, .. } => {
                table.pending.settle(*id).is_some()
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
    fn feed(&self, data: &[u8]) -> Vec<Event> {
        let frames: Vec<Frame> = {
            let mut reader = self.reader.lock().unwrap_or_else(|e| e.into_inner());
            reader.extend(data);
            std::iter::from_fn(|| reader.next_frame()).collect()
        };
        self.handle(frames.into_iter())
    }

    /// The end of a caller-read stdout: the last line, if unterminated; tells the owner.
    fn feed_end(&self) -> Vec<Event> {
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

    fn on_message(&self, line: &[u8], events: &mut Vec<Event>, replies: &mut Vec<Vec<u8>>) {
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

struct Connection {
    shared: Arc<Shared>,
    pid: u32,
    /// With [`StdioConfig::caller_reads_stdout`], until the caller takes it.
    stdout: Option<OwnedFd>,
}

/// The caller's handle on a stdio server. Request ids are unique for the handle's lifetime,
/// across reconnects. Dropping the handle makes the owner task run the close sequence by itself,
/// so nothing blocks and no process is left behind.
pub struct StdioTransport {
    config: StdioConfig,
    next_id: AtomicU64,
    flags: Arc<Flags>,
    conn: Option<Connection>,
}

impl StdioTransport {
    /// A transport that has not spawned anything yet.
    pub fn new(config: StdioConfig) -> Self {
        StdioTransport {
            config,
            next_id: AtomicU64::new(1),
            flags: Arc::default(),
            conn: None,
        }
    }

    /// The configuration.
    pub fn config(&self) -> &StdioConfig {
        &self.config
    }

    /// Replaces the configuration used by the next `connect`.
    pub fn set_config(&mut self, config: StdioConfig) {
        self.config = config;
    }

    fn open_conn(&self) -> Option<&Connection> {
        self.conn
            .as_ref()
            .filter(|c| c.shared.table().state == State::Open)
    }

    /// The server's process id while the connection is open.
    pub fn pid(&self) -> Option<u32> {
        self.open_conn().map(|c| c.pid)
    }

    /// Whether a connection is open (it stops being open when it ends or `close` is called).
    pub fn is_open(&self) -> bool {
        self.open_conn().is_some()
    }

    /// Switches delivery of [`Event::Stderr`] and of server→client requests.
    pub fn set_listeners(&self, stderr: bool, requests: bool) {
        self.flags.stderr.store(stderr, Ordering::Relaxed);
        self.flags.requests.store(requests, Ordering::Relaxed);
    }

    /// Spawns the server and starts its I/O task; events go to `sink`. Returns as soon as the
    /// process exists. A previous connection is dropped (and so cleaned up) first.
    pub fn connect(&mut self, sink: Arc<dyn EventSink>) -> Result<(), Error> {
        self.drop_conn();
        let rt = runtime::runtime();
        let _enter = rt.enter();
        let mut child = spawn(&self.config)?;
        let pid = child.id().unwrap_or(0);
        let pgid = pid as i32;
        let registry_key = runtime::register_group(pgid);
        let (stdin, stdout, stderr) =
            match (child.stdin.take(), child.stdout.take(), child.stderr.take()) {
                (Some(i), Some(o), Some(e)) => (i, o, e),
                _ => unreachable!("all three pipes were requested"),
            };
        let external = self.config.caller_reads_stdout;
        let pipes = (|| {
            let stdin = async_fd(stdin.into_owned_fd()?, Interest::WRITABLE)?;
            let stdout = stdout.into_owned_fd()?;
            // A caller-read stdout is not watched here at all: no wake-up of this thread per answer.
            let (mine, theirs) = if external {
                (None, Some(stdout))
            } else {
                (Some(async_fd(stdout, Interest::READABLE)?), None)
            };
            Ok::<_, std::io::Error>((stdin, mine, theirs))
        })();
        let (stdin, stdout, stdout_for_caller) = match pipes {
            Ok(pipes) => pipes,
            Err(e) => {
                runtime::signal_group(pgid, libc::SIGKILL);
                runtime::unregister_group(registry_key);
                return Err(Error::Io(format!("pipe setup failed: {e}")));
            }
        };
        let shared = Arc::new(Shared {
            table: Mutex::new(Table {
                state: State::Open,
                pending: Pending::default(),
                armed: None,
            }),
            out: Mutex::new(Writer {
                outbox: VecDeque::new(),
                front_written: 0,
                stdin: Some(stdin.as_raw_fd()),
            }),
            backlog: AtomicBool::new(false),
            wake: Notify::new(),
            sink: sink.clone(),
            reader: Mutex::new(LineDecoder::new(self.config.max_message_bytes)),
            stdout_eof: AtomicBool::new(false),
            flags: self.flags.clone(),
            max_message_bytes: self.config.max_message_bytes,
        });
        let tail = Arc::new(Mutex::new(Tail::default()));
        let stderr_task = rt.spawn(drain_stderr(stderr, tail.clone(), self.flags.clone(), sink));
        let owner = Owner {
            child,
            pgid,
            registry_key,
            stdin: Some(stdin),
            stdout,
            kill_grace: Duration::from_millis(self.config.kill_grace_ms),
            shared: shared.clone(),
            tail,
            stderr_task: Some(stderr_task),
        };
        rt.spawn(owner.run());
        self.conn = Some(Connection {
            shared,
            pid,
            stdout: stdout_for_caller,
        });
        Ok(())
    }

    /// With [`StdioConfig::caller_reads_stdout`]: the stdout pipe, once, for the caller to read.
    pub fn take_stdout_fd(&mut self) -> Option<OwnedFd> {
        self.conn.as_mut().and_then(|c| c.stdout.take())
    }

    /// With [`StdioConfig::caller_reads_stdout`]: decodes a chunk the caller read from stdout and
    /// returns the events it completes (in order; they are not sent to the sink).
    pub fn feed(&self, data: &[u8]) -> Vec<Event> {
        self.conn
            .as_ref()
            .map(|c| c.shared.feed(data))
            .unwrap_or_default()
    }

    /// With [`StdioConfig::caller_reads_stdout`]: stdout ended (or failed) for the caller.
    pub fn feed_end(&self) -> Vec<Event> {
        self.conn
            .as_ref()
            .map(|c| c.shared.feed_end())
            .unwrap_or_default()
    }

    /// The shared parts of the open connection.
    fn open_shared(&self) -> Result<&Arc<Shared>, Error> {
        let conn = self.conn.as_ref().ok_or(Error::NotConnected)?;
        if conn.shared.table().state != State::Open {
            return Err(Error::closed());
        }
        Ok(&conn.shared)
    }

    /// Allocates a request id (unique for the handle's lifetime, across reconnects).
    pub fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    /// Sends request `method` with `params` (JSON text, `None` → `{}`); returns its id. The
    /// outcome arrives as [`Event::Response`] or [`Event::Failed`] for that id, or with
    /// [`Event::Closed`]. A `timeout_ms` of 0 fails at once without sending.
    pub fn request(
        &self,
        method: &str,
        params: Option<&str>,
        timeout_ms: u64,
    ) -> Result<u64, Error> {
        let id = self.next_id();
        let method_json = serde_json::to_string(method).expect("string serialization");
        self.send_requests(&[OutgoingRequest {
            id,
            method_json: &method_json,
            params,
            timeout_ms,
        }])?;
        Ok(id)
    }

    /// Sends several requests at once (ids from [`Self::next_id`] or the caller's own unique
    /// ones): one lock of the table, one `writev`. Outcomes arrive as for [`Self::request`].
    pub fn send_requests(&self, requests: &[OutgoingRequest<'_>]) -> Result<(), Error> {
        let conn = self.conn.as_ref().ok_or(Error::NotConnected)?;
        let shared = &conn.shared;
        let mut table = shared.table();
        if table.state != State::Open {
            return Err(Error::closed());
        }
        let now = Instant::now();
        let mut earlier = false;
        let mut frames = Vec::with_capacity(requests.len());
        let mut immediate = Vec::new();
        for r in requests {
            if r.timeout_ms == 0 {
                let error = Error::Timeout { ms: 0 };
                immediate.push(Event::Failed { id: r.id, error });
                continue;
            }
            // Registered before it is written, so that the answer always finds it.
            let deadline = table.pending.insert(r.id, r.timeout_ms, now);
            earlier |= table.armed.is_none_or(|armed| deadline < armed);
            frames.push((
                r.id,
                jsonrpc::request_frame_json(r.id, r.method_json, r.params),
            ));
        }
        drop(table);
        if earlier {
            shared.wake.notify_one();
        }
        shared.write_with(|w| w.send_all(frames.into_iter().map(|(id, f)| (Some(id), f))));
        shared.sink.emit_all(immediate);
        Ok(())
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Option<&str>) -> Result<(), Error> {
        self.open_shared()?
            .send(None, jsonrpc::notification_frame(method, params));
        Ok(())
    }

    /// Answers a server→client request (`id` is the raw JSON id); `outcome` is the raw `result`
    /// or the raw `error` object.
    pub fn reply(&self, id: &str, outcome: Result<&str, &str>) -> Result<(), Error> {
        self.open_shared()?
            .send(None, jsonrpc::reply_frame(id, outcome));
        Ok(())
    }

    /// Gives up on request `id` (caller abort): it is dropped from the queue if unsent, otherwise
    /// the server gets `notifications/cancelled` with `reason`. No event follows for it.
    pub fn cancel(&self, id: u64, reason: &str) {
        if let Ok(shared) = self.open_shared()
            && shared.table().pending.settle(id).is_some()
        {
            shared.forget(id, reason);
        }
    }

    /// Starts the close sequence. Returns false when there was no open connection; otherwise
    /// [`Event::Closed`] follows once the process is gone.
    pub fn close(&mut self) -> bool {
        self.end_conn(State::Closing)
    }

    fn end_conn(&self, how: State) -> bool {
        let Some(conn) = self.conn.as_ref() else {
            return false;
        };
        let mut table = conn.shared.table();
        if table.state != State::Open {
            return false;
        }
        table.state = how;
        drop(table);
        conn.shared.wake.notify_one();
        true
    }

    fn drop_conn(&mut self) {
        self.end_conn(State::Dropped);
        self.conn = None;
    }
}

impl Drop for StdioTransport {
    fn drop(&mut self) {
        self.drop_conn();
    }
}

/// A pipe end taken out of tokio's process types, made non-blocking and watched for `interest`,
/// so that it can be read and written with plain system calls (see the module docs).
fn async_fd(fd: OwnedFd, interest: Interest) -> std::io::Result<AsyncFd<OwnedFd>> {
    // SAFETY: fcntl on a descriptor we own; no memory is passed.
    unsafe {
        let flags = libc::fcntl(fd.as_raw_fd(), libc::F_GETFL);
        if flags < 0 || libc::fcntl(fd.as_raw_fd(), libc::F_SETFL, flags | libc::O_NONBLOCK) < 0 {
            return Err(std::io::Error::last_os_error());
        }
    }
    // SAFETY: `fd` is an OwnedFd, open and moved into the AsyncFd, which owns it until dropped;
    // OwnedFd::as_raw_fd always returns that same descriptor.
    unsafe { AsyncFd::register_with_interest(fd, interest) }.map_err(|e| e.into_parts().1)
}

fn spawn(config: &StdioConfig) -> Result<Child, Error> {
    let mut cmd = tokio::process::Command::new(&config.command);
    cmd.args(&config.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .kill_on_drop(false);
    if let Some(env) = &config.env {
        cmd.env_clear();
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
    }
    match &config.cwd {
        Some(dir) => {
            cmd.current_dir(dir);
        }
        None => {
            if let Some(dir) = project_dir() {
                cmd.current_dir(dir);
            }
        }
    }
    #[cfg(target_os = "linux")]
    {
        // SAFETY: runs in the forked child before exec, where only async-signal-safe calls are
        // allowed; prctl(2) and getppid(2) are. PR_SET_PDEATHSIG makes the kernel SIGTERM the
        // server when the thread that spawned it dies (the host process crashed or was killed
        // without running its exit hooks). If the parent died before prctl took effect, getppid
        // no longer returns it, and the child exits at once instead of becoming an orphan.
        let parent = std::process::id() as libc::pid_t;
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(
                    libc::PR_SET_PDEATHSIG,
                    libc::SIGTERM as libc::c_ulong,
                    0,
                    0,
                    0,
                ) != 0
                {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    libc::_exit(1);
                }
                Ok(())
            });
        }
    }
    cmd.spawn().map_err(|e| Error::spawn(&config.command, &e))
}

/// The last [`STDERR_TAIL_BYTES`] of stderr.
#[derive(Default)]
struct Tail(VecDeque<u8>);

impl Tail {
    fn push(&mut self, data: &[u8]) {
        let data = &data[data.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (self.0.len() + data.len()).saturating_sub(STDERR_TAIL_BYTES);
        self.0.drain(..overflow);
        self.0.extend(data);
    }

    fn text(&self) -> String {
        let (a, b) = self.0.as_slices();
        let mut bytes = Vec::with_capacity(self.0.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

async fn drain_stderr(
    mut stderr: ChildStderr,
    tail: Arc<Mutex<Tail>>,
    flags: Arc<Flags>,
    sink: Arc<dyn EventSink>,
) {
    let mut buf = vec![0u8; 64 * 1024];
    let mut carry: Vec<u8> = Vec::new();
    loop {
        let n = match stderr.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        tail.lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(&buf[..n]);
        if flags.stderr.load(Ordering::Relaxed) {
            carry.extend_from_slice(&buf[..n]);
            let text = take_utf8(&mut carry);
            if !text.is_empty() {
                sink.emit(Event::Stderr(text));
            }
        } else {
            carry.clear();
        }
    }
    if !carry.is_empty() && flags.stderr.load(Ordering::Relaxed) {
        sink.emit(Event::Stderr(String::from_utf8_lossy(&carry).into_owned()));
    }
}

/// Takes the longest prefix of `bytes` that does not end inside a UTF-8 sequence, as text.
fn take_utf8(bytes: &mut Vec<u8>) -> String {
    let keep = match std::str::from_utf8(bytes) {
        Ok(_) => 0,
        Err(e) if e.error_len().is_none() => bytes.len() - e.valid_up_to(),
        Err(_) => 0,
    };
    let rest = bytes.split_off(bytes.len() - keep);
    let text = String::from_utf8_lossy(bytes).into_owned();
    *bytes = rest;
    text
}

/// How the read loop ended.
enum Ending {
    /// `close()` was called.
    Requested,
    /// The handle was dropped: close without reporting.
    Dropped,
    /// The process exited, or stdout ended or failed.
    OnItsOwn { exit: Option<ExitStatus> },
}

/// What one read of stdout gave.
enum Read {
    /// Complete frames (possibly none).
    Frames(Vec<Frame>),
    /// End of stream, with the final unterminated line if any.
    End(Option<Frame>),
}

/// Reads what stdout has and decodes it; never completes when the caller reads stdout itself.
///
/// Paced by the consumer when `pace` is set: once stdout is readable, if events read earlier are
/// still waiting to be taken (`EventSink::backlog`), it waits until they are before reading, so
/// that what arrives meanwhile is read, parsed and delivered in one go. A consumer that keeps up
/// never waits here, and no extra wake-up happens. Cancel-safe: bytes leave the pipe only in the
/// final synchronous read.
async fn read_paced(
    stdout: &Option<AsyncFd<OwnedFd>>,
    shared: &Shared,
    pace: bool,
) -> std::io::Result<Read> {
    let Some(stdout) = stdout else {
        return std::future::pending().await;
    };
    loop {
        let mut guard = stdout.readable().await?;
        while let Some(taken) = shared.sink.backlog().filter(|_| pace) {
            taken.notified().await;
        }
        let result = guard.try_io(|fd| {
            let mut reader = shared.reader.lock().unwrap_or_else(|e| e.into_inner());
            let buf = reader.read_buf();
            let spare = buf.spare_capacity_mut();
            // SAFETY: reads at most `spare.len()` bytes into the buffer's spare capacity, which
            // is valid for writes; `fd` is the open stdout pipe owned by the AsyncFd.
            let n = unsafe { libc::read(fd.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if n == 0 {
                return Ok(Read::End(reader.finish()));
            }
            // SAFETY: the kernel initialised exactly `n` bytes of the spare capacity.
            unsafe { buf.set_len(buf.len() + n as usize) };
            Ok(Read::Frames(
                std::iter::from_fn(|| reader.next_frame()).collect(),
            ))
        });
        match result {
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(done) => return done,
            Err(_would_block) => continue,
        }
    }
}

/// Waits until stdin can take more bytes, or never when there is nothing to wait for.
async fn writable(stdin: &Option<AsyncFd<OwnedFd>>, wanted: bool) -> std::io::Result<()> {
    match stdin {
        Some(fd) if wanted => {
            let mut guard = fd.writable().await?;
            // The caller flushes under the lock; the next wait polls the descriptor afresh.
            guard.clear_ready();
            Ok(())
        }
        _ => std::future::pending().await,
    }
}

/// The task that reads a connection's stdout, fires its deadlines, waits out stdin backpressure
/// and runs its shutdown.
struct Owner {
    child: Child,
    pgid: i32,
    registry_key: u64,
    stdin: Option<AsyncFd<OwnedFd>>,
    /// `None` when the caller reads stdout.
    stdout: Option<AsyncFd<OwnedFd>>,
    kill_grace: Duration,
    shared: Arc<Shared>,
    tail: Arc<Mutex<Tail>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
}

impl Owner {
    async fn run(mut self) {
        match self.serve().await {
            Ending::Requested => {
                self.shutdown().await;
                self.shared.sink.emit(Event::Closed(None));
            }
            Ending::Dropped => self.shutdown().await,
            Ending::OnItsOwn { exit } => self.ended_on_its_own(exit).await,
        }
        runtime::unregister_group(self.registry_key);
    }

    /// Reads, writes and fires deadlines until close, drop, exit or end of stdout.
    async fn serve(&mut self) -> Ending {
        let far = tokio::time::Instant::now() + Duration::from_secs(86400 * 365);
        let timer = tokio::time::sleep_until(far);
        tokio::pin!(timer);
        let mut timer_at: Option<Instant> = None;
        loop {
            let deadline = {
                let mut table = self.shared.table();
                match table.state {
                    State::Open => {}
                    State::Closing => return Ending::Requested,
                    State::Dropped => return Ending::Dropped,
                    State::Ended => unreachable!("only the owner ends a connection"),
                }
                // The timer only ever moves earlier here; a deadline whose request settled stays
                // armed (stale) until it fires. So the steady stream of new requests, whose
                // deadlines are later, never has to wake this task.
                table.armed = match (table.armed, table.pending.next_deadline()) {
                    (Some(armed), Some(next)) => Some(armed.min(next)),
                    (armed, next) => armed.or(next),
                };
                table.armed
            };
            if self.stdout.is_none() && self.shared.stdout_eof.load(Ordering::Acquire) {
                return self.ended(None); // the caller reached the end of stdout
            }
            let backlog = self.shared.backlog.load(Ordering::Acquire);
            if deadline != timer_at {
                timer_at = deadline;
                timer
                    .as_mut()
                    .reset(deadline.map_or(far, tokio::time::Instant::from_std));
            }
            tokio::select! {
                biased;
                // Cancel-safe: bytes are only taken from the pipe in the last, synchronous step.
                read = read_paced(&self.stdout, &self.shared, true) => match read {
                    Ok(Read::Frames(frames)) => self.on_frames(frames.into_iter()),
                    Ok(Read::End(last)) => {
                        self.on_frames(last.into_iter());
                        return self.ended(None);
                    }
                    Err(e) => {
                        self.shared.sink.emit(Event::Error(Error::Io(format!("stdout read failed: {e}"))));
                        return self.ended(None);
                    }
                },
                // Cancel-safe: waiting for writability holds no data.
                ready = writable(&self.stdin, backlog) => {
                    self.shared.write_with(|w| {
                        match ready {
                            Ok(()) => w.flush(),
                            Err(_) => w.close(),
                        }
                        false
                    });
                },
                // Cancel-safe: a notification that arrives while not waiting is kept as a permit.
                () = self.shared.wake.notified() => {},
                // Cancel-safe: the timer is kept across iterations.
                () = &mut timer, if deadline.is_some() => self.expire(),
                // Cancel-safe: Child::wait only records the status once the process is reaped.
                status = self.child.wait() => return self.ended(status.ok()),
            }
        }
    }

    /// Marks the connection ended (no more requests) and says how.
    fn ended(&self, exit: Option<ExitStatus>) -> Ending {
        let mut table = self.shared.table();
        match table.state {
            State::Closing => Ending::Requested,
            State::Dropped => Ending::Dropped,
            _ => {
                table.state = State::Ended;
                Ending::OnItsOwn { exit }
            }
        }
    }

    fn expire(&mut self) {
        let expired = {
            let mut table = self.shared.table();
            table.armed = None; // fired: the loop re-arms at the next real deadline
            table.pending.expire(Instant::now())
        };
        let mut events = Vec::with_capacity(expired.len());
        for (id, entry) in expired {
            let error = Error::Timeout {
                ms: entry.timeout_ms(),
            };
            self.shared.forget(id, &error.to_string());
            events.push(Event::Failed { id, error });
        }
        self.shared.sink.emit_all(events);
    }

    /// Handles the frames of one read and delivers their events as one batch.
    fn on_frames(&self, frames: impl Iterator<Item = Frame>) {
        let events = self.shared.handle(frames);
        self.shared.sink.emit_all(events);
    }

    /// The process exited or its stdout ended: collect what it said last, report, clean up.
    async fn ended_on_its_own(&mut self, exit: Option<ExitStatus>) {
        let deadline = tokio::time::Instant::now() + DRAIN_AFTER_EXIT;
        // Whatever the server wrote before exiting is still in the pipe: read it first (or,
        // when the caller reads stdout, wait for the caller to reach its end).
        if exit.is_some() {
            if self.stdout.is_some() {
                loop {
                    let read = tokio::time::timeout_at(
                        deadline,
                        read_paced(&self.stdout, &self.shared, false),
                    );
                    match read.await {
                        Ok(Ok(Read::Frames(frames))) => self.on_frames(frames.into_iter()),
                        Ok(Ok(Read::End(last))) => {
                            self.on_frames(last.into_iter());
                            break;
                        }
                        _ => break,
                    }
                }
            } else {
                while !self.shared.stdout_eof.load(Ordering::Acquire)
                    && tokio::time::timeout_at(deadline, self.shared.wake.notified())
                        .await
                        .is_ok()
                {}
            }
        }
        // Stdout ended but the process may live on: give it a moment to exit by itself.
        let exit = match exit {
            Some(status) => Some(status),
            None => match tokio::time::timeout_at(deadline, self.child.wait()).await {
                Ok(Ok(status)) => Some(status),
                _ => None,
            },
        };
        if let Some(task) = self.stderr_task.take() {
            let _ = tokio::time::timeout_at(deadline + DRAIN_AFTER_EXIT, task).await;
        }
        let stderr = self.tail.lock().unwrap_or_else(|e| e.into_inner()).text();
        let info = exit.map(exit_info);
        let abnormal = info.as_ref().is_none_or(|i| i.code != Some(0));
        let error = Error::Closed {
            exit: info,
            stderr: Some(stderr),
        };
        self.shared.table().pending.clear();
        if abnormal {
            self.shared.sink.emit(Event::Error(error.clone()));
        }
        self.shared.sink.emit(Event::Closed(Some(error)));
        // Then make sure nothing of the server is left: the process if stdout ended first, and
        // any grandchildren in its group.
        self.shutdown().await;
    }

    /// stdin closed → SIGTERM to the group → grace → SIGKILL → reaped.
    async fn shutdown(&mut self) {
        {
            let mut table = self.shared.table();
            if matches!(table.state, State::Open) {
                table.state = State::Ended;
            }
            table.pending.clear();
        }
        self.shared.out().close();
        self.stdin = None; // closes the descriptor, now that no writer can reach it
        runtime::signal_group(self.pgid, libc::SIGTERM);
        let deadline = Instant::now() + self.kill_grace;
        let reaped = tokio::time::timeout(self.kill_grace, self.child.wait())
            .await
            .is_ok();
        // The server is gone; give the rest of its group what is left of the grace period.
        while reaped && Instant::now() < deadline && runtime::group_alive(self.pgid) {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if runtime::group_alive(self.pgid) || !reaped {
            runtime::signal_group(self.pgid, libc::SIGKILL);
        }
        if !reaped {
            let _ = self.child.wait().await;
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}

fn exit_info(status: ExitStatus) -> ExitInfo {
    use std::os::unix::process::ExitStatusExt;
    ExitInfo {
        code: status.code(),
        signal: status.signal().map(signal_name),
    }
}

/// The conventional name of a signal number (`SIGKILL`), as Node reports it.
pub fn signal_name(sig: i32) -> String {
    let name = match sig {
        libc::SIGHUP => "SIGHUP",
        libc::SIGINT => "SIGINT",
        libc::SIGQUIT => "SIGQUIT",
        libc::SIGILL => "SIGILL",
        libc::SIGTRAP => "SIGTRAP",
        libc::SIGABRT => "SIGABRT",
        libc::SIGBUS => "SIGBUS",
        libc::SIGFPE => "SIGFPE",
        libc::SIGKILL => "SIGKILL",
        libc::SIGUSR1 => "SIGUSR1",
        libc::SIGSEGV => "SIGSEGV",
        libc::SIGUSR2 => "SIGUSR2",
        libc::SIGPIPE => "SIGPIPE",
        libc::SIGALRM => "SIGALRM",
        libc::SIGTERM => "SIGTERM",
        other => return format!("SIG{other}"),
    };
    name.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tail_keeps_the_last_bytes() {
        let mut t = Tail::default();
        t.push(&vec![b'a'; STDERR_TAIL_BYTES]);
        t.push(b"xyz");
        let text = t.text();
        assert_eq!(text.len(), STDERR_TAIL_BYTES);
        assert!(text.ends_with("axyz"));
        t.push(&vec![b'b'; STDERR_TAIL_BYTES * 2]);
        assert_eq!(t.text(), "b".repeat(STDERR_TAIL_BYTES));
    }

    #[test]
    fn utf8_split_across_chunks() {
        let mut carry = b"caf\xc3".to_vec();
        assert_eq!(take_utf8(&mut carry), "caf");
        carry.push(0xa9);
        assert_eq!(take_utf8(&mut carry), "é");
        assert!(carry.is_empty());
    }
}
