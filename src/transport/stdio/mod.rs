//! The stdio transport (SPEC 3.2): a child process speaking newline-delimited JSON.
//!
//! [`StdioTransport`] is the caller's handle; each `connect` spawns the child and one owner task
//! (`owner.rs`) that reads stdout, fires deadlines, waits for stdin to drain and runs shutdown. A
//! second task drains stderr, keeping its tail.
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
mod process;
mod shared;
mod stderr;
mod writer;

use std::collections::VecDeque;
use std::os::fd::{AsRawFd, OwnedFd};
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use tokio::io::Interest;
use tokio::sync::Notify;

use super::{Event, EventSink, OutgoingRequest, Pending};
use crate::error::Error;
use crate::framing::jsonl::LineDecoder;
use crate::jsonrpc;
use crate::runtime;
use owner::Owner;
pub use process::signal_name;
use process::{async_fd, spawn};
use shared::{Flags, Shared, State, Table};
use stderr::{Tail, drain_stderr};
use writer::Writer;

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
        // A child whose id cannot be read has already been reaped; never go on with group 0
        // (that would be the host's own group).
        let Some(pid) = child.id().filter(|&p| runtime::is_server_group(p as i32)) else {
            let _ = child.start_kill();
            return Err(Error::Io(
                "spawn: the server process ended before its id could be read".into(),
            ));
        };
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
                broken: None,
            }),
            backlog: AtomicBool::new(false),
            broken: AtomicBool::new(false),
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
            progress: None,
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
            let deadline =
                table
                    .pending
                    .insert_with(r.id, r.timeout_ms, now, r.progress, r.cancellable());
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
            && let Some(entry) = shared.table().pending.settle(id)
        {
            shared.forget(id, reason, entry.cancellable);
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
