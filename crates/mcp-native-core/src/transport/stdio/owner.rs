//! The task that owns a connection's process: reads stdout (unless the caller does), fires
//! deadlines, waits out stdin backpressure, and runs the shutdown sequence.

#[cfg(unix)]
use std::os::fd::{AsRawFd, OwnedFd};
use std::process::ExitStatus;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::Duration;

#[cfg(unix)]
use tokio::io::Interest;
use tokio::process::Child;
use tokio::time::Instant;

#[cfg(unix)]
use super::pipe;
#[cfg(unix)]
use super::process::async_fd;
use super::process::{Pump, Scratch, StdinPipe, StdoutPipe, exit_info};
use super::shared::{Reader, Shared, State};
use super::stderr::Tail;
use super::{CALLER_CATCH_UP, DRAIN_AFTER_EXIT};
use crate::error::Error;
use crate::framing::jsonl::Frame;
use crate::runtime;
use crate::sync::Locked;
use crate::transport::Event;

/// How the read loop ended.
enum Ending {
    /// `close()` was called.
    Requested,
    /// The handle was dropped: close without reporting.
    Dropped,
    /// The process exited, stdout ended or failed, or stdin broke (`cause`: reported to
    /// `onError` once, instead of the exit).
    OnItsOwn {
        exit: Option<ExitStatus>,
        cause: Option<Error>,
    },
}

/// What one read of stdout gave.
enum Read {
    /// Complete frames (possibly none).
    Frames(Vec<Frame>),
    /// End of stream, with the final unterminated line if any.
    End(Option<Frame>),
    /// Reading a handed-over stdout: the long line is complete (or the stream ended, or failed:
    /// the caller sees that for itself); the frames of the last read, and the caller reads again.
    #[cfg_attr(windows, allow(dead_code))]
    HandBack(Vec<Frame>),
}

/// Reads what stdout has and decodes it; never completes when the caller reads stdout itself.
///
/// Paced by the consumer when `pace` is set: once stdout is readable, if events read earlier are
/// still waiting to be taken (`EventSink::backlog`), it waits until they are before reading, so
/// that what arrives meanwhile is read, parsed and delivered in one go. A consumer that keeps up
/// never waits here, and no extra wake-up happens. Cancel-safe: bytes leave the pipe only in the
/// final synchronous read.
///
/// `handing`: `stdout` is the caller's, handed over ([`super::StdioConfig::hand_over_long_lines`]):
/// the end of the stream, or a read after which no long line is left incomplete, hands it back
/// ([`Read::HandBack`]); the end is left for the caller to find (a socket's end is found again
/// by every read), and so is an error (the owner hands back on one).
#[cfg(unix)]
async fn read_paced(
    stdout: &mut Option<StdoutPipe>,
    _scratch: &mut Scratch,
    shared: &Shared,
    pace: bool,
    handing: bool,
) -> std::io::Result<Read> {
    let Some(stdout) = stdout else {
        return std::future::pending().await;
    };
    loop {
        let mut guard = stdout.readable().await?;
        if pace {
            crate::transport::paced(&*shared.sink).await;
        }
        let result = guard.try_io(|fd| {
            let mut reader = shared.reader.locked();
            let buf = reader.read_buf();
            let spare = buf.spare_capacity_mut();
            // SAFETY: reads at most `spare.len()` bytes into the buffer's spare capacity, which
            // is valid for writes; `fd` is the open stdout pipe owned by the AsyncFd.
            let n = unsafe { libc::read(fd.as_raw_fd(), spare.as_mut_ptr().cast(), spare.len()) };
            if n < 0 {
                return Err(std::io::Error::last_os_error());
            }
            if n == 0 {
                return Ok(if handing {
                    Read::HandBack(Vec::new())
                } else {
                    Read::End(reader.finish())
                });
            }
            // SAFETY: the kernel initialised exactly `n` bytes of the spare capacity.
            unsafe { buf.set_len(buf.len() + n as usize) };
            let frames = std::iter::from_fn(|| reader.next_frame()).collect();
            if handing {
                return Ok(if reader.partial_len() < super::HAND_OVER_AT {
                    Read::HandBack(frames)
                } else {
                    Read::Frames(frames)
                });
            }
            // What is left is one incomplete line: a large message on its way.
            if reader.partial_len() >= pipe::GROW_AT {
                shared.grow_pipe(fd.as_raw_fd());
            }
            Ok(Read::Frames(frames))
        });
        match result {
            Ok(Err(e)) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Ok(done) => return done,
            Err(_would_block) => continue,
        }
    }
}

/// Windows: [`read_paced`] on tokio's pipe (its reads run on the blocking pool, and one cancelled
/// here keeps what it read for the next call). Pacing comes before the read, as there is no
/// readiness to wait for first. A stdout handed over never happens here.
#[cfg(windows)]
async fn read_paced(
    stdout: &mut Option<StdoutPipe>,
    scratch: &mut Scratch,
    shared: &Shared,
    pace: bool,
    _handing: bool,
) -> std::io::Result<Read> {
    use tokio::io::AsyncReadExt;
    let Some(stdout) = stdout else {
        return std::future::pending().await;
    };
    if pace {
        crate::transport::paced(&*shared.sink).await;
    }
    if scratch.len() < super::process::READ_CHUNK {
        scratch.resize(super::process::READ_CHUNK, 0);
    }
    let n = stdout.read(scratch).await?;
    let mut reader = shared.reader.locked();
    if n == 0 {
        return Ok(Read::End(reader.finish()));
    }
    reader.extend(&scratch[..n]);
    Ok(Read::Frames(
        std::iter::from_fn(|| reader.next_frame()).collect(),
    ))
}

/// Waits until stdin can take more bytes, or never when there is nothing to wait for (the caller
/// then writes under the writer's lock, [`super::writer::Writer::flush`]).
#[cfg(unix)]
async fn pump_stdin(
    stdin: &mut Option<StdinPipe>,
    _pump: &mut Pump,
    _shared: &Shared,
    wanted: bool,
) -> std::io::Result<()> {
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

/// Windows: writes the next bytes of the outbox to stdin (taken into `pump` first: they count as
/// written from then on), or waits forever when there is nothing to write. Cancel-safe: a write
/// cancelled before it completes wrote nothing, and `pump` keeps its place.
#[cfg(windows)]
async fn pump_stdin(
    stdin: &mut Option<StdinPipe>,
    pump: &mut Pump,
    shared: &Shared,
    wanted: bool,
) -> std::io::Result<()> {
    use tokio::io::AsyncWriteExt;
    let Some(pipe) = stdin else {
        return std::future::pending().await;
    };
    if pump.written == pump.buf.len() {
        if !wanted {
            return std::future::pending().await;
        }
        let mut chunk = Vec::new();
        shared.write_with(|w| {
            chunk = w.take_chunk(super::process::WRITE_CHUNK);
            false
        });
        if chunk.is_empty() {
            return std::future::pending().await;
        }
        *pump = Pump {
            buf: chunk,
            written: 0,
        };
    }
    let n = pipe.write(&pump.buf[pump.written..]).await?;
    if n == 0 {
        return Err(std::io::ErrorKind::WriteZero.into());
    }
    pump.written += n;
    if pump.written == pump.buf.len() {
        pipe.flush().await?;
        *pump = Pump::default();
    }
    Ok(())
}

/// The task that reads a connection's stdout, fires its deadlines, waits out stdin backpressure
/// and runs its shutdown.
pub(super) struct Owner {
    pub(super) child: Child,
    /// The server's process group (Unix) or job (Windows).
    pub(super) group: runtime::Group,
    pub(super) registry_key: u64,
    pub(super) stdin: Option<StdinPipe>,
    /// `None` when the caller reads stdout.
    pub(super) stdout: Option<StdoutPipe>,
    /// The caller reads stdout (`caller_reads_stdout`; never on Windows).
    pub(super) caller_reads: bool,
    /// When the caller reads stdout: a copy of its socket.
    #[cfg(unix)]
    pub(super) caller_copy: Option<OwnedFd>,
    /// While the caller's stdout is handed over: that copy, registered for reading.
    pub(super) handing: Option<StdoutPipe>,
    pub(super) scratch: Scratch,
    pub(super) pump: Pump,
    pub(super) kill_grace: Duration,
    pub(super) shared: Arc<Shared>,
    pub(super) tail: Arc<Mutex<Tail>>,
    pub(super) stderr_task: Option<tokio::task::JoinHandle<()>>,
}

impl Owner {
    pub(super) async fn run(mut self) {
        match self.serve().await {
            Ending::Requested => {
                self.shutdown().await;
                self.shared.sink.emit(Event::Closed(None));
            }
            Ending::Dropped => self.shutdown().await,
            Ending::OnItsOwn { exit, cause } => self.ended_on_its_own(exit, cause).await,
        }
        runtime::unregister_group(self.registry_key);
    }

    /// Reads, writes and fires deadlines until close, drop, exit or end of stdout.
    async fn serve(&mut self) -> Ending {
        let far = Instant::now() + Duration::from_secs(86400 * 365);
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
                    State::Ending | State::Ended => {
                        unreachable!("only the owner ends a connection")
                    }
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
            self.take_over();
            if self.caller_reads && self.shared.stdout_eof.load(Ordering::Acquire) {
                return self.ended(None); // the caller reached the end of stdout
            }
            if self.shared.late.load(Ordering::Acquire) {
                let cause = Error::Io(super::shared::LATE_CHUNK.into());
                return self.ended_because(None, Some(cause));
            }
            if self.shared.broken.load(Ordering::Acquire) {
                // Stdin broke: nothing can reach the server any more. End the connection now,
                // rather than let every request wait out its deadline.
                let err = self.shared.out().broken.take();
                let cause = Error::Io(match err {
                    Some(e) => format!("write {}", crate::error::errno_name(&e)),
                    None => "write failed".into(),
                });
                return self.ended_because(None, Some(cause));
            }
            let backlog = self.shared.backlog.load(Ordering::Acquire) > 0;
            if deadline != timer_at {
                timer_at = deadline;
                timer.as_mut().reset(deadline.unwrap_or(far));
            }
            tokio::select! {
                biased;
                // Cancel-safe: bytes are only taken from the pipe in the last, synchronous step.
                read = read_paced(
                    if self.caller_reads { &mut self.handing } else { &mut self.stdout },
                    &mut self.scratch,
                    &self.shared,
                    true,
                    self.caller_reads,
                ) => match read {
                    Ok(Read::Frames(frames)) => self.on_frames(frames.into_iter()),
                    Ok(Read::HandBack(frames)) => self.hand_back(frames),
                    Ok(Read::End(last)) => {
                        self.on_frames(last.into_iter());
                        return self.ended(None);
                    }
                    // The caller's socket: the caller meets the error itself.
                    Err(_) if self.caller_reads => self.hand_back(Vec::new()),
                    Err(e) => {
                        self.shared.sink.emit(Event::Error(Error::Io(format!("stdout read failed: {e}"))));
                        return self.ended(None);
                    }
                },
                // Cancel-safe: waiting for writability holds no data.
                ready = pump_stdin(&mut self.stdin, &mut self.pump, &self.shared, backlog) => {
                    self.shared.write_with(|w| {
                        match ready {
                            Ok(()) => w.flush(),
                            Err(e) => w.break_with(e),
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
        self.ended_because(exit, None)
    }

    /// [`Owner::ended`] with the error that ended it, when it was not the process's own doing.
    fn ended_because(&self, exit: Option<ExitStatus>, cause: Option<Error>) -> Ending {
        let mut table = self.shared.table();
        match table.state {
            State::Closing => Ending::Requested,
            State::Dropped => Ending::Dropped,
            _ => {
                table.state = State::Ending;
                Ending::OnItsOwn { exit, cause }
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
                ms: entry.deadline.reported_ms(),
            };
            self.shared
                .forget(id, &error.to_string(), entry.cancellable);
            entry.reply.deliver(id, Err(error), &mut events);
        }
        self.shared.sink.emit_all(events);
    }

    /// The caller handed its stdout over ([`Shared::feed`]): starts reading it, if not yet.
    /// Should that fail, hands it straight back (the caller goes on reading).
    #[cfg(unix)]
    fn take_over(&mut self) {
        if self.handing.is_some() || !self.shared.reader_is(Reader::Owner) {
            return;
        }
        let copy = self.caller_copy.as_ref().map(|fd| fd.try_clone());
        match copy.map(|fd| fd.and_then(|fd| async_fd(fd, Interest::READABLE))) {
            Some(Ok(fd)) => self.handing = Some(fd),
            _ => self.hand_back(Vec::new()),
        }
    }

    /// Windows: the caller never reads stdout, so nothing is ever handed over.
    #[cfg(windows)]
    fn take_over(&mut self) {}

    /// Windows: the caller never reads stdout.
    #[cfg(windows)]
    fn caller_behind(&self) -> bool {
        false
    }

    /// The caller's stdout socket still holds bytes the caller has not read.
    #[cfg(unix)]
    fn caller_behind(&self) -> bool {
        let Some(fd) = &self.caller_copy else {
            return false;
        };
        let mut unread: libc::c_int = 0;
        // SAFETY: FIONREAD on a socket we hold a copy of, into a c_int.
        let ok = unsafe { libc::ioctl(fd.as_raw_fd(), libc::FIONREAD, &mut unread) } == 0;
        ok && unread > 0
    }

    /// The long line is in (or reading stopped): the caller reads again, after the events of
    /// the last read, in the same batch.
    fn hand_back(&mut self, frames: Vec<Frame>) {
        self.handing = None;
        self.shared.set_reader(Reader::Caller);
        let mut events = self.shared.handle(frames.into_iter());
        events.push(Event::CallerReads(true));
        self.shared.sink.emit_all(events);
    }

    /// Handles the frames of one read and delivers their events as one batch.
    fn on_frames(&self, frames: impl Iterator<Item = Frame>) {
        let events = self.shared.handle(frames);
        self.shared.sink.emit_all(events);
    }

    /// The process exited, its stdout ended or its stdin broke: collect what it said last,
    /// report (`cause`, when given, is the one error `onError` gets), clean up.
    async fn ended_on_its_own(&mut self, exit: Option<ExitStatus>, cause: Option<Error>) {
        let mut deadline = Instant::now() + DRAIN_AFTER_EXIT;
        let catch_up_until = Instant::now() + CALLER_CATCH_UP;
        // Whatever the server wrote before exiting is still in the pipe: read it first (or,
        // when the caller reads stdout, wait for the caller to reach its end).
        if exit.is_some() {
            if !self.caller_reads {
                loop {
                    let read = tokio::time::timeout_at(
                        deadline,
                        read_paced(
                            &mut self.stdout,
                            &mut self.scratch,
                            &self.shared,
                            false,
                            false,
                        ),
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
                let shared = self.shared.clone();
                loop {
                    // A long line on its way (handed over before or while waiting) is read here,
                    // then handed back for the caller to find the end.
                    self.take_over();
                    while self.handing.is_some() {
                        let read = tokio::time::timeout_at(
                            deadline,
                            read_paced(
                                &mut self.handing,
                                &mut self.scratch,
                                &self.shared,
                                false,
                                true,
                            ),
                        );
                        match read.await {
                            Ok(Ok(Read::Frames(frames))) => self.on_frames(frames.into_iter()),
                            Ok(Ok(Read::HandBack(frames))) => self.hand_back(frames),
                            _ => self.hand_back(Vec::new()),
                        }
                    }
                    if shared.stdout_eof.load(Ordering::Acquire) {
                        break;
                    }
                    if tokio::time::timeout_at(deadline, shared.wake.notified())
                        .await
                        .is_err()
                    {
                        // Bytes the caller has not read yet: its thread is busy (not a
                        // grandchild holding stdout open, which leaves none): wait on.
                        if self.caller_behind() && Instant::now() < catch_up_until {
                            deadline = Instant::now() + DRAIN_AFTER_EXIT;
                            continue;
                        }
                        break;
                    }
                }
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
        let stderr = self.tail.locked().text();
        let info = exit.map(exit_info);
        let abnormal = info.as_ref().is_none_or(|i| i.code != Some(0));
        let error = Error::Closed {
            exit: info,
            stderr: Some(stderr),
        };
        {
            let mut table = self.shared.table();
            table.pending.close_all(&error);
            table.ended_with = Some(error.clone());
            table.state = State::Ended;
        }
        match cause {
            Some(cause) => self.shared.sink.emit(Event::Error(cause)),
            None if abnormal => self.shared.sink.emit(Event::Error(error.clone())),
            None => {}
        }
        self.shared.sink.emit(Event::Closed(Some(error)));
        // Then make sure nothing of the server is left: the process if stdout ended first, and
        // any grandchildren in its group.
        self.shutdown().await;
    }

    /// The first step of every shutdown: no more requests, the pending ones failed, nothing more
    /// written (stdin is closed next, now that no writer can reach it).
    fn take_no_more(&mut self) {
        {
            let mut table = self.shared.table();
            if matches!(table.state, State::Open | State::Ending) {
                table.state = State::Ended;
            }
            table.pending.close_all(&Error::closed());
        }
        self.shared.out().close();
    }

    /// stdin closed → SIGTERM to the group → grace → SIGKILL → reaped.
    #[cfg(unix)]
    async fn shutdown(&mut self) {
        self.take_no_more();
        self.stdin = None; // closes the descriptor, now that no writer can reach it
        runtime::signal_group(self.group, libc::SIGTERM);
        let deadline = Instant::now() + self.kill_grace;
        let reaped = tokio::time::timeout(self.kill_grace, self.child.wait())
            .await
            .is_ok();
        // The server is gone; give the rest of its group what is left of the grace period.
        // (Each check scans /proc on the blocking pool, never on this I/O thread.)
        while reaped
            && Instant::now() < deadline
            && runtime::group_alive_off_thread(self.group).await
        {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        if !reaped || runtime::group_alive_off_thread(self.group).await {
            runtime::signal_group(self.group, libc::SIGKILL);
        }
        if !reaped {
            let _ = self.child.wait().await;
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }

    /// Windows (SPEC 11.6: close stdin, terminate, kill): stdin closed → up to the grace for the
    /// server to exit on its own (Windows has no signal it could catch: end of input is its
    /// notice) → the server terminated → its job terminated (everything it started) → reaped.
    #[cfg(windows)]
    async fn shutdown(&mut self) {
        self.take_no_more();
        // Closes our end of stdin: the server reads end of input (once a write still under way on
        // the blocking pool has finished).
        self.stdin = None;
        self.pump = Pump::default();
        let exited = tokio::time::timeout(self.kill_grace, self.child.wait())
            .await
            .is_ok();
        if !exited {
            let _ = self.child.start_kill();
        }
        self.group.terminate();
        if !exited {
            let _ = self.child.wait().await;
        }
        if let Some(task) = self.stderr_task.take() {
            task.abort();
        }
    }
}
