//! The stdio transport (SPEC 3.2): a child process speaking newline-delimited JSON.
//!
//! [`StdioTransport`] is one connection: [`StdioTransport::spawn`] starts the child and one owner
//! task (`owner.rs`) that reads stdout, fires deadlines, waits for stdin to drain and runs
//! shutdown. A second task drains stderr, keeping its tail. A new connection is a new transport.
//!
//! The pending table and the outgoing queue (`shared.rs`, `writer.rs`) are shared by the caller's
//! thread and the owner, each behind its own short mutex. This is deliberate (measured, see
//! `bench/`): with a
//! command channel every request woke the owner thread, and on a two-core machine that cost more
//! than the whole plain-Node client. Now a request is registered and written to stdin directly on
//! the caller's thread with one non-blocking `write`; the owner is woken only when stdin is full
//! (backpressure: the frame waits in the queue, its deadline running) or when the new deadline is
//! earlier than the one its timer is set to. Nothing blocks the caller: the lock is only held for
//! table updates and non-blocking writes.
//!
//! Shutdown is a fixed sequence: close stdin → SIGTERM to the process group → up to
//! `kill_grace_ms` → SIGKILL → reap.
//!
//! Files: `mod.rs` the handle and its config; `shared.rs` what the caller's thread and the owner
//! share; `writer.rs` the non-blocking stdin writer; `owner.rs` the I/O task; `process.rs`
//! spawning and exit status; `stderr.rs` draining stderr.

mod owner;
#[cfg(unix)]
mod pipe;
#[cfg(unix)]
mod process;
#[cfg(windows)]
#[path = "process_windows.rs"]
mod process;
mod shared;
mod stderr;
pub mod win_command;
mod writer;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use serde::Deserialize;
use tokio::sync::Notify;
use tokio::time::Instant;

use super::{Event, EventSink, OutgoingRequest, Pending, Transport};
use crate::error::Error;
use crate::framing::jsonl::LineDecoder;
use crate::jsonrpc;
use crate::runtime;
#[cfg(unix)]
use crate::sync::Locked;
use owner::Owner;
pub use process::signal_name;
use shared::{Flags, Reader, Shared, State, Table};
use stderr::{Tail, drain_stderr};
pub use writer::MAX_STDIN_BACKLOG;
use writer::Writer;

pub use super::DEFAULT_MAX_MESSAGE_BYTES;
/// Default `killGraceMs`: how long `close()` waits after SIGTERM before SIGKILL.
pub const DEFAULT_KILL_GRACE_MS: u64 = 2000;
/// How much of the server's stderr is kept for error reports.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;
/// After the child exits on its own, how long to keep reading stdout/stderr for what it wrote last
/// (a grandchild may hold the pipes open forever).
pub const DRAIN_AFTER_EXIT: Duration = Duration::from_millis(100);
/// When the caller reads stdout and the server has exited, how long the transport waits on for
/// the caller to read what the server wrote last, as long as the socket still holds unread
/// bytes (the caller's thread is busy — a JS thread in a long task): its requests are settled
/// by those bytes rather than failed by the close. Past it, the close is reported.
pub const CALLER_CATCH_UP: Duration = Duration::from_secs(10);

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
    /// The caller reads stdout itself: it takes the descriptor (a Unix socket rather than a
    /// pipe, so that Bun can read it too) with [`StdioTransport::take_stdout_fd`] and hands every
    /// chunk to [`StdioTransport::feed`] and the end of stream to [`StdioTransport::feed_end`].
    /// The binding does this on Node and on Bun, whose event loop then wakes once per answer
    /// instead of twice (I/O thread, then JS thread).
    #[serde(default)]
    pub caller_reads_stdout: bool,
    /// With `caller_reads_stdout`: while a long line arrives (from [`HAND_OVER_AT`] bytes), the
    /// transport's I/O thread reads it instead of the caller, which [`Event::CallerReads`] tells
    /// to stop and to start again. A caller on a JS thread then spends on a large answer only
    /// the parse, not the reading, copying and checking of every chunk. The hand-over takes two
    /// steps, because a runtime may deliver chunks it read before it was told to stop (Bun
    /// 1.3.x delivers one more 512 KiB read in the same turn of its event loop after `pause()`;
    /// 1.4 does not): the caller stops reading, feeds what still arrives, and then calls
    /// [`StdioTransport::hand_over`] (the JS binding does so in the next turn, `setImmediate`).
    /// A chunk fed after that ends the connection with an error, never out of order.
    #[serde(default)]
    pub hand_over_long_lines: bool,
    /// How request ids are written (the agent's `requestIdFormat`): numbers by default.
    #[serde(default)]
    pub request_id_format: crate::jsonrpc::IdFormat,
    /// Windows: whether the host has a console the server can share (a server's window is
    /// hidden only when it has none), as the caller found it (the agent's injected
    /// `hostHasInheritableConsole`); `None`: asked of Windows at each start.
    #[serde(default)]
    pub host_has_console: Option<bool>,
}

/// See [`StdioConfig::hand_over_long_lines`]: the partial line at which the transport takes
/// over reading, and below which (after a read) it hands back. The size at which answers start
/// to cross unparsed (binding `RAW_ANSWER_BYTES`) and the pipe grows (`pipe.rs`).
pub const HAND_OVER_AT: usize = 64 * 1024;

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
            hand_over_long_lines: false,
            request_id_format: Default::default(),
            host_has_console: None,
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

/// The first request number [`Transport::next_id`] hands out. Callers that bring their own (the
/// JavaScript binding counts from 1) pass over the range from here to 2^31, so both can share one
/// transport; and the ids a server sees stay below 2^31, which a server that reads ids as 32-bit
/// integers takes too (number ids are the request numbers themselves, see
/// [`crate::jsonrpc::IdFormat`]).
pub const OWN_IDS_FROM: u64 = 1 << 30;

/// A started server and the pipes the transport drives (made by `process::start`).
pub(super) struct Started {
    child: tokio::process::Child,
    pid: u32,
    group: runtime::Group,
    registry_key: u64,
    stdin: process::StdinPipe,
    stdin_raw: process::StdinRaw,
    /// `None` when the caller reads stdout.
    stdout: Option<process::StdoutPipe>,
    stderr: tokio::process::ChildStderr,
    /// With `caller_reads_stdout`: the caller's end of the stdout socket.
    #[cfg(unix)]
    caller_end: Option<std::os::fd::OwnedFd>,
    /// With `caller_reads_stdout`: a copy of it for the owner.
    #[cfg(unix)]
    caller_copy: Option<std::os::fd::OwnedFd>,
}

/// One connection to a server process.
pub struct StdioTransport {
    shared: Arc<Shared>,
    pid: u32,
    /// With `caller_reads_stdout`, our end of the stdout socket until the caller takes it.
    #[cfg(unix)]
    stdout: Mutex<Option<std::os::fd::OwnedFd>>,
    next_id: AtomicU64,
    timeout_ms: u64,
}

impl StdioTransport {
    /// Spawns the server of `config` (SPEC 3.2); events go to `sink`. Fails with
    /// `spawn <command> <ERRNO>` when it cannot be started. `timeout_ms` is the deadline of
    /// requests that name none ([`Transport::default_timeout_ms`]).
    pub fn spawn(
        config: &StdioConfig,
        sink: Arc<dyn EventSink>,
        timeout_ms: u64,
    ) -> Result<Self, Error> {
        // The child, its owner and its stderr always live on the crate's runtime, whatever
        // runtime the caller has: on a caller's runtime that ends first (a short-lived runtime
        // of a Rust program, a test's), the owner would go with it, and with the owner whoever
        // reaps the child and shuts it down when the transport is dropped.
        let rt = runtime::runtime().clone();
        let _enter = rt.enter();
        let started = process::start(config, &rt)?;
        // Windows: the owner always reads (no socket a runtime could read; see `process_windows.rs`).
        let caller_reads = cfg!(unix) && config.caller_reads_stdout;
        let flags = Arc::new(Flags::default());
        let shared = Arc::new(Shared {
            table: Mutex::new(Table {
                state: State::Open,
                pending: Pending::default(),
                armed: None,
                ended_with: None,
            }),
            out: Mutex::new(Writer {
                outbox: VecDeque::new(),
                queued: 0,
                front_written: 0,
                stdin: Some(started.stdin_raw),
                broken: None,
                id_format: config.request_id_format,
            }),
            backlog: AtomicUsize::new(0),
            broken: AtomicBool::new(false),
            wake: Notify::new(),
            sink: sink.clone(),
            reader: Mutex::new(LineDecoder::new(config.max_message_bytes)),
            stdout_eof: AtomicBool::new(false),
            flags: flags.clone(),
            max_message_bytes: config.max_message_bytes,
            id_format: config.request_id_format,
            #[cfg(unix)]
            pipe: std::sync::OnceLock::new(),
            hand_over: caller_reads && config.hand_over_long_lines,
            reading: AtomicU8::new(Reader::Caller as u8),
            late: AtomicBool::new(false),
        });
        let tail = Arc::new(Mutex::new(Tail::default()));
        let stderr_task = rt.spawn(drain_stderr(started.stderr, tail.clone(), flags, sink));
        let owner = Owner {
            child: started.child,
            group: started.group,
            registry_key: started.registry_key,
            stdin: Some(started.stdin),
            stdout: started.stdout,
            caller_reads,
            #[cfg(unix)]
            caller_copy: started.caller_copy,
            handing: None,
            scratch: Default::default(),
            pump: Default::default(),
            kill_grace: Duration::from_millis(config.kill_grace_ms),
            shared: shared.clone(),
            tail,
            stderr_task: Some(stderr_task),
        };
        rt.spawn(owner.run());
        Ok(StdioTransport {
            shared,
            pid: started.pid,
            #[cfg(unix)]
            stdout: Mutex::new(started.caller_end),
            next_id: AtomicU64::new(OWN_IDS_FROM),
            timeout_ms,
        })
    }

    /// The server's process id while the connection is open.
    pub fn pid(&self) -> Option<u32> {
        self.is_open().then_some(self.pid)
    }

    /// Switches delivery of [`Event::Stderr`] and of server→client requests.
    pub fn set_listeners(&self, stderr: bool, requests: bool) {
        self.shared.flags.stderr.store(stderr, Ordering::Relaxed);
        self.shared
            .flags
            .requests
            .store(requests, Ordering::Relaxed);
    }

    /// With `caller_reads_stdout`: our end of the server's stdout (a Unix socket, see
    /// `process::spawn`), once. Unix only: on Windows the transport always reads stdout itself. The caller owns it from then on and
    /// hands what it reads to [`StdioTransport::feed`].
    #[cfg(unix)]
    pub fn take_stdout_fd(&self) -> Option<std::os::fd::OwnedFd> {
        self.stdout.locked().take()
    }

    /// With `caller_reads_stdout`: decodes a chunk read from stdout; returns the events it
    /// completes (which go to the caller, not to the sink).
    pub fn feed(&self, data: &[u8]) -> Vec<Event> {
        self.shared.feed(data)
    }

    /// With `caller_reads_stdout`: stdout ended; returns the last events.
    pub fn feed_end(&self) -> Vec<Event> {
        self.shared.feed_end()
    }

    /// With `hand_over_long_lines`: the caller has stopped reading after
    /// [`Event::CallerReads`]`(false)` and fed what its runtime delivered since; the transport
    /// reads the long line from here on. Returns the events for the caller (`CallerReads(true)`
    /// when there turned out to be nothing to hand over).
    pub fn hand_over(&self) -> Vec<Event> {
        self.shared.hand_over()
    }

    fn open_shared(&self) -> Result<&Arc<Shared>, Error> {
        let table = self.shared.table();
        if table.state != State::Open {
            return Err(table.refusal());
        }
        Ok(&self.shared)
    }

    /// Sends several requests at once: one lock of the table, one `writev`.
    pub fn send_requests(&self, requests: Vec<OutgoingRequest<'_>>) -> Result<(), Error> {
        let shared = &self.shared;
        let mut table = shared.table();
        // While the owner collects how the server ended, requests wait (unwritten) to fail with
        // that report.
        let ending = table.state == State::Ending;
        if table.state != State::Open && !ending {
            return Err(table.refusal());
        }
        let now = Instant::now();
        let mut earlier = false;
        let mut frames = Vec::with_capacity(requests.len());
        let mut immediate = Vec::new();
        let mut queued = shared.backlog.load(Ordering::Acquire);
        for r in requests {
            if r.timeout_ms == 0 {
                r.reply
                    .deliver(r.id, Err(Error::Timeout { ms: 0 }), &mut immediate);
                continue;
            }
            let frame =
                jsonrpc::request_frame_json(r.id, shared.id_format, r.method_json, r.params);
            if let Err(full) = Writer::admits(queued, frame.len()) {
                r.reply.deliver(r.id, Err(full), &mut immediate);
                continue;
            }
            queued += frame.len();
            // Registered before it is written, so that the answer always finds it.
            let deadline =
                table
                    .pending
                    .insert(r.id, r.timeout_ms, now, r.progress, r.cancellable, r.reply);
            earlier |= table.armed.is_none_or(|armed| deadline < armed);
            frames.push((r.id, frame));
        }
        drop(table);
        if ending {
            shared.sink.emit_all(immediate);
            return Ok(());
        }
        if earlier {
            shared.wake.notify_one();
        }
        shared.write_with(|w| w.send_all(frames.into_iter().map(|(id, f)| (Some(id), f))));
        shared.sink.emit_all(immediate);
        Ok(())
    }

    /// Queues a notification.
    pub fn notify_now(&self, method: &str, params: Option<&str>) -> Result<(), Error> {
        self.open_shared()?
            .send(None, jsonrpc::notification_frame(method, params))
    }

    fn end_conn(&self, how: State) -> bool {
        let mut table = self.shared.table();
        if table.state != State::Open {
            return false;
        }
        table.state = how;
        drop(table);
        self.shared.wake.notify_one();
        true
    }
}

impl Transport for StdioTransport {
    fn next_id(&self) -> u64 {
        self.next_id.fetch_add(1, Ordering::Relaxed)
    }

    fn default_timeout_ms(&self) -> u64 {
        self.timeout_ms
    }

    fn is_open(&self) -> bool {
        self.shared.table().state == State::Open
    }

    fn send(&self, requests: Vec<OutgoingRequest<'_>>) -> Result<(), Error> {
        self.send_requests(requests)
    }

    fn notify(&self, method: &str, params: Option<&str>) -> BoxFuture<'static, Result<(), Error>> {
        let sent = self.notify_now(method, params);
        Box::pin(async move { sent })
    }

    fn respond(&self, id: &str, outcome: Result<&str, &str>) -> Result<(), Error> {
        self.open_shared()?
            .send(None, jsonrpc::reply_frame(id, outcome))
    }

    /// Dropped from the queue if unsent, otherwise the server gets `notifications/cancelled`.
    fn cancel(&self, id: u64, reason: &str) {
        if let Ok(shared) = self.open_shared()
            && let Some(entry) = shared.table().pending.settle(id)
        {
            shared.forget(id, reason, entry.cancellable);
        }
    }

    fn close(&self) -> bool {
        self.end_conn(State::Closing)
    }

    fn set_request_listener(&self, on: bool) {
        self.shared.flags.requests.store(on, Ordering::Relaxed);
    }
}

impl Drop for StdioTransport {
    /// The last handle is gone: the server is shut down (without reporting).
    fn drop(&mut self) {
        self.end_conn(State::Dropped);
    }
}
