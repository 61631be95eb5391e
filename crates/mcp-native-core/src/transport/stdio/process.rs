//! Starting the server process and reading how it ended (Unix; `process_windows.rs` is the
//! Windows counterpart, with the same items).

use std::os::fd::{AsRawFd, OwnedFd};
use std::process::{ExitStatus, Stdio};

use tokio::io::Interest;
use tokio::io::unix::AsyncFd;
use tokio::process::Child;

use super::{Started, StdioConfig, project_dir};
use crate::error::{Error, ExitInfo};
use crate::runtime;
use crate::sync::Locked;

/// The server's stdin as the owner holds it: a non-blocking descriptor, written by whichever
/// thread has frames (see `writer.rs`).
pub(super) type StdinPipe = AsyncFd<OwnedFd>;
/// The server's stdout as the owner reads it (or, handed over, the caller's socket).
pub(super) type StdoutPipe = AsyncFd<OwnedFd>;
/// What the writer holds of stdin: the raw descriptor it writes to.
pub(super) type StdinRaw = std::os::fd::RawFd;
/// Per-connection read buffer of the owner: none here (reads go straight into the decoder).
pub(super) type Scratch = ();
/// Per-connection write state of the owner: none here (frames are written where they are sent).
pub(super) type Pump = ();

/// Starts the server of `config` on the runtime `rt` and sets up its pipes (see [`spawn`]).
pub(super) fn start(config: &StdioConfig, rt: &tokio::runtime::Handle) -> Result<Started, Error> {
    let (mut child, caller_end) = spawn(config, rt)?;
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
    let (stdin, stdout, stderr) = (child.stdin.take(), child.stdout.take(), child.stderr.take());
    let (Some(stdin), Some(stderr)) = (stdin, stderr) else {
        unreachable!("stdin and stderr are always pipes")
    };
    // When the caller reads, the owner gets a copy of its socket: to read long lines from
    // with hand-over (registered with the reactor only while it does, so that small answers
    // never wake it), and to see whether the caller has read everything after an exit.
    let pipes = (|| {
        let stdin = async_fd(stdin.into_owned_fd()?, Interest::WRITABLE)?;
        let mine = match stdout {
            Some(pipe) => Some(async_fd(pipe.into_owned_fd()?, Interest::READABLE)?),
            None => None,
        };
        let caller_copy = caller_end.as_ref().map(OwnedFd::try_clone).transpose()?;
        Ok::<_, std::io::Error>((stdin, mine, caller_copy))
    })();
    match pipes {
        Ok((stdin, stdout, caller_copy)) => Ok(Started {
            child,
            pid,
            group: pgid,
            registry_key,
            stdin_raw: stdin.as_raw_fd(),
            stdin,
            stdout,
            stderr,
            caller_end,
            caller_copy,
        }),
        Err(e) => {
            runtime::signal_group(pgid, libc::SIGKILL);
            runtime::unregister_group(registry_key);
            Err(Error::Io(format!("pipe setup failed: {e}")))
        }
    }
}

/// A pipe end taken out of tokio's process types, made non-blocking and watched for `interest`,
/// so that it can be read and written with plain system calls (see the module docs).
pub(super) fn async_fd(fd: OwnedFd, interest: Interest) -> std::io::Result<AsyncFd<OwnedFd>> {
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

/// Starts the server. Its stdin and stderr are pipes. Its stdout is a pipe too, except with
/// `caller_reads_stdout`: then it is one end of a Unix socket pair, whose other end is returned
/// for the caller. A socket is what the runtimes can read on their own event loop — Node's
/// `net.Socket` reads either, but Bun wraps a descriptor (`Bun.connect({ fd })`) only when it is
/// a socket — and it is what servers get from Node's own `child_process` (libuv makes stdio
/// pipes as socket pairs), so servers written for Node hosts expect it.
///
/// The fork happens on the crate's spawner thread ([`on_spawner_thread`]), whatever thread asks,
/// inside the runtime `rt` (which then reaps the child).
fn spawn(
    config: &StdioConfig,
    rt: &tokio::runtime::Handle,
) -> Result<(Child, Option<OwnedFd>), Error> {
    let (config, rt) = (config.clone(), rt.clone());
    on_spawner_thread(move || {
        let _enter = rt.enter();
        spawn_here(&config)
    })
}

/// Runs `job` on the crate's spawner thread and waits for it. Linux's parent-death signal
/// (`end_with_host`) belongs to the *thread* that forked, not the process: a server forked by a
/// thread that later ends (a tokio blocking-pool thread retires after 10 s idle, a caller's
/// short-lived thread) would be SIGTERMed then. The spawner thread lives as long as the process.
/// If it cannot be started, `job` runs on the calling thread.
fn on_spawner_thread<T: Send + 'static>(job: impl FnOnce() -> T + Send + 'static) -> T {
    type Job = Box<dyn FnOnce() + Send>;
    static SPAWNER: std::sync::OnceLock<Option<std::sync::Mutex<std::sync::mpsc::Sender<Job>>>> =
        std::sync::OnceLock::new();
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<Job>();
        std::thread::Builder::new()
            .name("mcp-native-spawn".into())
            .spawn(move || {
                for job in rx {
                    // A panic stays in its job (the caller sees its result channel closed).
                    let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(job));
                }
            })
            .ok()
            .map(|_| std::sync::Mutex::new(tx))
    });
    let Some(spawner) = spawner else {
        return job();
    };
    let (done_tx, done_rx) = std::sync::mpsc::sync_channel::<T>(1);
    let run: Job = Box::new(move || {
        let _ = done_tx.send(job());
    });
    // The thread loops for as long as the process runs: the send cannot fail; the result is
    // missing only when the job panicked, which then goes on here, on the caller's thread.
    if spawner.locked().send(run).is_err() {
        panic!("the spawner thread ended");
    }
    done_rx
        .recv()
        .expect("the job on the spawner thread panicked")
}

fn spawn_here(config: &StdioConfig) -> Result<(Child, Option<OwnedFd>), Error> {
    let (stdout, caller_end) = if config.caller_reads_stdout {
        // Both ends are close-on-exec; the child's end is dup'ed onto its fd 1 and the parent's
        // copy closes when `cmd` is dropped at the end of this function.
        let (ours, theirs) = std::os::unix::net::UnixStream::pair()
            .map_err(|e| Error::Io(format!("pipe setup failed: {e}")))?;
        allow_large_writes(&theirs);
        (
            Stdio::from(OwnedFd::from(theirs)),
            Some(OwnedFd::from(ours)),
        )
    } else {
        (Stdio::piped(), None)
    };
    let mut cmd = tokio::process::Command::new(&config.command);
    cmd.args(&config.args)
        .stdin(Stdio::piped())
        .stdout(stdout)
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    own_group(&mut cmd);
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
    end_with_host(&mut cmd);
    let child = cmd.spawn().map_err(|e| Error::spawn(&config.command, &e))?;
    Ok((child, caller_end))
}

/// How much the server can write to a socket stdout before it waits for the reader: 1 MiB
/// instead of the system default (about 208 KiB), so that a large answer comes in fewer,
/// larger reads (as the pipe grows for the Rust reader, `pipe.rs`). A limit, not an allocation;
/// the kernel caps it at `net.core.wmem_max`, silently; on failure the default stays.
const STDOUT_SOCKET_BYTES: libc::c_int = 1 << 20;

fn allow_large_writes(socket: &std::os::unix::net::UnixStream) {
    // SAFETY: setsockopt on a socket we own, with a pointer to a c_int and its size.
    unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::SOL_SOCKET,
            libc::SO_SNDBUF,
            (&STDOUT_SOCKET_BYTES as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

/// The server leads a process group of its own (whose members the shutdown signals). On Linux it
/// also gets a session of its own (`setsid`, as the agent does since 18.x: no controlling
/// terminal of the host's); on macOS it stays in the host's session (as the agent keeps it, so
/// that macOS permission prompts of tools like `xcrun mcpbridge` work). SPEC 11.6.
#[cfg(target_os = "linux")]
fn own_group(cmd: &mut tokio::process::Command) {
    // SAFETY: runs in the forked child before exec; setsid(2) is async-signal-safe. The child is
    // not a group leader yet, so setsid makes it the leader of a new session and group (pgid =
    // sid = its pid).
    unsafe {
        cmd.pre_exec(|| {
            if libc::setsid() < 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
}

#[cfg(not(target_os = "linux"))]
fn own_group(cmd: &mut tokio::process::Command) {
    cmd.process_group(0);
}

/// Ties the server to the host process for the case the exit hook cannot cover: the host dying
/// without running it (SIGKILL, a crash). On Linux the kernel does it: `PR_SET_PDEATHSIG`
/// SIGTERMs the server when the thread that spawned it dies (the spawner thread: see
/// [`on_spawner_thread`]).
#[cfg(target_os = "linux")]
fn end_with_host(cmd: &mut tokio::process::Command) {
    // SAFETY: runs in the forked child before exec, where only async-signal-safe calls are
    // allowed; prctl(2) and getppid(2) are. If the parent died before prctl took effect, getppid
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

/// Elsewhere (macOS, the BSDs) there is no parent-death signal, so nothing is set up here and
/// this is weaker than on Linux. A host that exits normally still takes every server group down
/// through the exit sweep ([`crate::runtime::kill_all_children`]: `core.js` calls it on `exit`,
/// a Rust host can call it too), but a host killed without running its exit hooks leaves only
/// the closing of the server's stdin behind. A server that ends at stdin EOF (as MCP's stdio
/// transport asks) still goes; one that ignores EOF, and whatever it started in its group,
/// outlives the host.
#[cfg(not(target_os = "linux"))]
fn end_with_host(_cmd: &mut tokio::process::Command) {}

pub(super) fn exit_info(status: ExitStatus) -> ExitInfo {
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
