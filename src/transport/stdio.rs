//! The stdio transport (SPEC 3.2): a child process speaking newline-delimited JSON.
//!
//! [`StdioTransport`] is the caller's handle; each `connect` spawns the child and one owner task
//! ([`Owner`]) that alone holds the pipes, the pending-request table and the outgoing queue.
//! Callers talk to it through an unbounded command channel (every command is small, and a request
//! whose frame waits in the queue keeps its deadline running), so the handle's methods never block.
//! A second task drains stderr, keeping its tail. Shutdown is a fixed sequence: close stdin →
//! SIGTERM to the process group → up to `kill_grace_ms` → SIGKILL → reap.

use std::collections::VecDeque;
use std::future::Future;
use std::path::PathBuf;
use std::pin::Pin;
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::process::{Child, ChildStderr, ChildStdin, ChildStdout};
use tokio::sync::mpsc;

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
/// Frames queued together are written with one `write` up to this many bytes.
pub const WRITE_BATCH_BYTES: usize = 1024 * 1024;

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

enum Command {
    Request {
        id: u64,
        frame: Vec<u8>,
        timeout_ms: u64,
    },
    Send(Vec<u8>),
    Cancel {
        id: u64,
        reason: String,
    },
    Close,
}

struct Connection {
    tx: mpsc::UnboundedSender<Command>,
    pid: u32,
}

/// The caller's handle on a stdio server. Request ids are unique for the handle's lifetime,
/// across reconnects. Dropping the handle closes the command channel; the owner task then runs
/// the close sequence by itself, so nothing blocks and no process is left behind.
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

    /// The server's process id while a connection exists.
    pub fn pid(&self) -> Option<u32> {
        self.conn
            .as_ref()
            .filter(|c| !c.tx.is_closed())
            .map(|c| c.pid)
    }

    /// Whether a connection's I/O task is running (it ends after the last [`Event::Closed`]).
    pub fn is_running(&self) -> bool {
        self.conn.as_ref().is_some_and(|c| !c.tx.is_closed())
    }

    /// Switches delivery of [`Event::Stderr`] and of server→client requests.
    pub fn set_listeners(&self, stderr: bool, requests: bool) {
        self.flags.stderr.store(stderr, Ordering::Relaxed);
        self.flags.requests.store(requests, Ordering::Relaxed);
    }

    /// Spawns the server and starts its I/O task; events go to `sink`. Resolves as soon as the
    /// process exists. A previous connection must have ended (see [`Self::is_running`]).
    pub fn connect(&mut self, sink: Arc<dyn EventSink>) -> Result<(), Error> {
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
        let (tx, rx) = mpsc::unbounded_channel();
        let tail = Arc::new(Mutex::new(Tail::default()));
        let stderr_task = rt.spawn(drain_stderr(
            stderr,
            tail.clone(),
            self.flags.clone(),
            sink.clone(),
        ));
        let owner = Owner {
            child,
            pgid,
            registry_key,
            stdin: Some(stdin),
            stdout,
            writing: None,
            outbox: VecDeque::new(),
            pending: Pending::default(),
            decoder: LineDecoder::new(self.config.max_message_bytes),
            max_message_bytes: self.config.max_message_bytes,
            kill_grace: Duration::from_millis(self.config.kill_grace_ms),
            flags: self.flags.clone(),
            sink,
            tail,
            stderr_task: Some(stderr_task),
            rx,
        };
        rt.spawn(owner.run());
        self.conn = Some(Connection { tx, pid });
        Ok(())
    }

    fn send(&self, cmd: Command) -> Result<(), Error> {
        let conn = self.conn.as_ref().ok_or(Error::NotConnected)?;
        conn.tx.send(cmd).map_err(|_| Error::closed())
    }

    /// Queues request `method` with `params` (JSON text, `None` → `{}`); returns its id. The
    /// outcome arrives as [`Event::Response`] or [`Event::Failed`] for that id, or with
    /// [`Event::Closed`]. A `timeout_ms` of 0 fails at once without sending.
    pub fn request(
        &self,
        method: &str,
        params: Option<&str>,
        timeout_ms: u64,
    ) -> Result<u64, Error> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let frame = jsonrpc::request_frame(id, method, params);
        self.send(Command::Request {
            id,
            frame,
            timeout_ms,
        })?;
        Ok(id)
    }

    /// Queues a notification.
    pub fn notify(&self, method: &str, params: Option<&str>) -> Result<(), Error> {
        self.send(Command::Send(jsonrpc::notification_frame(method, params)))
    }

    /// Answers a server→client request (`id` is the raw JSON id); `outcome` is the raw `result`
    /// or the raw `error` object.
    pub fn reply(&self, id: &str, outcome: Result<&str, &str>) -> Result<(), Error> {
        self.send(Command::Send(jsonrpc::reply_frame(id, outcome)))
    }

    /// Gives up on request `id` (caller abort): it is dropped from the queue if unsent, otherwise
    /// the server gets `notifications/cancelled` with `reason`. No event follows for it.
    pub fn cancel(&self, id: u64, reason: &str) {
        let _ = self.send(Command::Cancel {
            id,
            reason: reason.to_string(),
        });
    }

    /// Starts the close sequence. Returns false when there was no running connection; otherwise
    /// [`Event::Closed`] follows once the process is gone.
    pub fn close(&mut self) -> bool {
        match self.conn.as_ref() {
            Some(conn) => conn.tx.send(Command::Close).is_ok(),
            None => false,
        }
    }
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

type WriteFuture = Pin<Box<dyn Future<Output = (ChildStdin, std::io::Result<()>)> + Send>>;

struct Outgoing {
    /// The request this frame carries, so that an unsent frame can be dropped on cancel.
    id: Option<u64>,
    frame: Vec<u8>,
}

/// Awaits the in-progress write, or never when there is none.
async fn in_progress(writing: &mut Option<WriteFuture>) -> (ChildStdin, std::io::Result<()>) {
    match writing {
        Some(fut) => fut.await,
        None => std::future::pending().await,
    }
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

/// The one task that owns a connection's pipes and pending requests.
struct Owner {
    child: Child,
    pgid: i32,
    registry_key: u64,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    writing: Option<WriteFuture>,
    outbox: VecDeque<Outgoing>,
    pending: Pending,
    decoder: LineDecoder,
    max_message_bytes: usize,
    kill_grace: Duration,
    flags: Arc<Flags>,
    sink: Arc<dyn EventSink>,
    tail: Arc<Mutex<Tail>>,
    stderr_task: Option<tokio::task::JoinHandle<()>>,
    rx: mpsc::UnboundedReceiver<Command>,
}

impl Owner {
    async fn run(mut self) {
        let ending = self.serve().await;
        match ending {
            Ending::Requested => {
                self.pending.drain();
                self.shutdown().await;
                self.sink.emit(Event::Closed(None));
            }
            Ending::Dropped => {
                self.pending.drain();
                self.shutdown().await;
            }
            Ending::OnItsOwn { exit } => self.ended_on_its_own(exit).await,
        }
        runtime::unregister_group(self.registry_key);
    }

    /// The read/write loop, until close, drop, exit or end of stdout.
    async fn serve(&mut self) -> Ending {
        loop {
            self.start_write();
            tokio::select! {
                biased;
                // Cancel-safe: read_buf only returns after bytes are in the decoder's buffer.
                read = self.stdout.read_buf(self.decoder.read_buf()) => match read {
                    Ok(0) => {
                        if let Some(frame) = self.decoder.finish() {
                            self.on_frame(frame);
                        }
                        return Ending::OnItsOwn { exit: None };
                    }
                    Ok(_) => {
                        while let Some(frame) = self.decoder.next_frame() {
                            self.on_frame(frame);
                        }
                    }
                    Err(e) => {
                        self.sink.emit(Event::Error(Error::Io(format!("stdout read failed: {e}"))));
                        return Ending::OnItsOwn { exit: None };
                    }
                },
                // Cancel-safe: the write future lives in `self.writing` across iterations.
                (stdin, result) = in_progress(&mut self.writing) => {
                    self.writing = None;
                    match result {
                        Ok(()) => self.stdin = Some(stdin),
                        // The server closed its stdin: later frames cannot be delivered; their
                        // requests time out or fail when the process ends.
                        Err(_) => self.outbox.clear(),
                    }
                },
                // Cancel-safe: mpsc::Receiver::recv.
                cmd = self.rx.recv() => match cmd {
                    Some(Command::Close) => return Ending::Requested,
                    None => return Ending::Dropped,
                    Some(cmd) => self.on_command(cmd),
                },
                // Cancel-safe: poll_expired keeps no state between polls.
                (id, entry) = std::future::poll_fn(|cx| self.pending.poll_expired(cx)) => {
                    let error = Error::Timeout { ms: entry.timeout_ms() };
                    self.forget(id, entry.written, &error.to_string());
                    self.sink.emit(Event::Failed { id, error });
                },
                // Cancel-safe: Child::wait only records the status once the process is reaped.
                status = self.child.wait() => {
                    return Ending::OnItsOwn { exit: status.ok() };
                },
            }
        }
    }

    fn on_command(&mut self, cmd: Command) {
        match cmd {
            Command::Request {
                id,
                frame,
                timeout_ms,
            } => {
                if timeout_ms == 0 {
                    self.sink.emit(Event::Failed {
                        id,
                        error: Error::Timeout { ms: 0 },
                    });
                    return;
                }
                self.pending.insert(id, timeout_ms);
                self.outbox.push_back(Outgoing {
                    id: Some(id),
                    frame,
                });
            }
            Command::Send(frame) => self.outbox.push_back(Outgoing { id: None, frame }),
            Command::Cancel { id, reason } => {
                if let Some(entry) = self.pending.settle(id) {
                    self.forget(id, entry.written, &reason);
                }
            }
            Command::Close => unreachable!("handled by serve"),
        }
    }

    /// After a request settled without an answer: drop its unsent frame, or tell the server.
    fn forget(&mut self, id: u64, written: bool, reason: &str) {
        if written {
            self.outbox.push_back(Outgoing {
                id: None,
                frame: jsonrpc::cancelled_frame(id, reason),
            });
        } else {
            self.outbox.retain(|o| o.id != Some(id));
        }
    }

    /// Starts writing the queued frames (several at once, up to [`WRITE_BATCH_BYTES`]) when stdin
    /// is idle. Stdin's own backpressure paces the writes.
    fn start_write(&mut self) {
        if self.writing.is_some() || self.outbox.is_empty() {
            return;
        }
        let Some(mut stdin) = self.stdin.take() else {
            return;
        };
        let mut batch = Vec::new();
        while let Some(next) = self.outbox.front() {
            if !batch.is_empty() && batch.len() + next.frame.len() > WRITE_BATCH_BYTES {
                break;
            }
            let out = self.outbox.pop_front().expect("front exists");
            if let Some(id) = out.id {
                self.pending.mark_written(id);
            }
            if batch.is_empty() {
                batch = out.frame;
            } else {
                batch.extend_from_slice(&out.frame);
            }
        }
        self.writing = Some(Box::pin(async move {
            let result = stdin.write_all(&batch).await;
            (stdin, result)
        }));
    }

    fn on_frame(&mut self, frame: Frame) {
        match frame {
            Frame::Line(line) => self.on_message(&line),
            Frame::Oversized { prefix } => {
                if let Some(id) = jsonrpc::sniff_id(&prefix)
                    && self.pending.settle(id).is_some()
                {
                    let error = Error::MessageTooLarge {
                        limit: self.max_message_bytes,
                    };
                    self.sink.emit(Event::Failed { id, error });
                }
            }
        }
    }

    fn on_message(&mut self, line: &[u8]) {
        match jsonrpc::classify(line) {
            Incoming::Response { id, outcome } => {
                let Some(id) = jsonrpc::our_id(id) else {
                    return;
                };
                if self.pending.settle(id).is_none() {
                    return; // unknown or late: dropped
                }
                self.sink.emit(match outcome {
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
            Incoming::Notification { method, params } => self.sink.emit(Event::Notification {
                method,
                params: params.map(RawValue::to_owned),
            }),
            Incoming::Request { id, method, params } => {
                if method == "ping" {
                    self.outbox.push_back(Outgoing {
                        id: None,
                        frame: jsonrpc::reply_frame(id.get(), Ok("{}")),
                    });
                } else if self.flags.requests.load(Ordering::Relaxed) {
                    self.sink.emit(Event::Request {
                        id: id.to_owned(),
                        method,
                        params: params.map(RawValue::to_owned),
                    });
                } else {
                    self.outbox.push_back(Outgoing {
                        id: None,
                        frame: jsonrpc::reply_frame(id.get(), Err(jsonrpc::METHOD_NOT_FOUND)),
                    });
                }
            }
            Incoming::Ignored | Incoming::Malformed => {}
        }
    }

    /// The process exited or its stdout ended: collect what it said last, report, clean up.
    async fn ended_on_its_own(&mut self, exit: Option<ExitStatus>) {
        let deadline = tokio::time::Instant::now() + DRAIN_AFTER_EXIT;
        // Whatever the server wrote before exiting is still in the pipe: read it first.
        if exit.is_some() {
            loop {
                let read = tokio::time::timeout_at(
                    deadline,
                    self.stdout.read_buf(self.decoder.read_buf()),
                )
                .await;
                match read {
                    Ok(Ok(n)) if n > 0 => {
                        while let Some(frame) = self.decoder.next_frame() {
                            self.on_frame(frame);
                        }
                    }
                    Ok(_) => {
                        if let Some(frame) = self.decoder.finish() {
                            self.on_frame(frame);
                        }
                        break;
                    }
                    Err(_) => break,
                }
            }
        }
        // Stdout ended but the process lives on: it cannot be talked to any more; end it.
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
        self.pending.drain();
        if abnormal {
            self.sink.emit(Event::Error(error.clone()));
        }
        self.sink.emit(Event::Closed(Some(error)));
        // Then make sure nothing of the server is left: the process if stdout ended first, and
        // any grandchildren in its group.
        self.shutdown().await;
    }

    /// stdin closed → SIGTERM to the group → grace → SIGKILL → reaped.
    async fn shutdown(&mut self) {
        self.writing = None;
        self.stdin = None;
        self.outbox.clear();
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
