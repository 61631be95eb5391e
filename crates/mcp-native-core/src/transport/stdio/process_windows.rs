//! Starting the server process and reading how it ended, on Windows (the items of `process.rs`).
//!
//! The command is planned by `win_command.rs` (PATHEXT, npm shims, batch files through the
//! standard library); the server goes into a Job Object that kills it and everything it started
//! when the job's last handle closes (the owner's, or the host's at any exit). Its pipes are
//! tokio's: the owner task alone writes stdin and reads stdout (Windows anonymous pipes have no
//! non-blocking mode to write from the caller's thread, and no socket a runtime could read).

use std::process::{ExitStatus, Stdio};
use std::sync::Arc;

use tokio::process::{ChildStdin, ChildStdout};

use super::win_command::{self, RealFiles};
use super::{Started, StdioConfig, project_dir};
use crate::error::{Error, ExitInfo};
use crate::runtime;
use crate::windows::{Job, host_has_console};

/// The server's stdin as the owner holds it (the owner writes it: see [`Pump`]).
pub(super) type StdinPipe = ChildStdin;
/// The server's stdout as the owner reads it.
pub(super) type StdoutPipe = ChildStdout;
/// What the writer holds of stdin: only that it is open (the owner writes).
pub(super) type StdinRaw = StdinOpen;

/// Stdin is open (see [`StdinRaw`]).
#[derive(Debug, Clone, Copy)]
pub(super) struct StdinOpen;
/// The owner's read buffer ([`READ_CHUNK`] bytes), reused for every read.
pub(super) type Scratch = Vec<u8>;

/// How much one read of stdout takes at most.
pub(super) const READ_CHUNK: usize = 256 * 1024;
/// How much the owner takes from the outbox for one write at most.
pub(super) const WRITE_CHUNK: usize = 1024 * 1024;

/// Bytes taken from the outbox and being written to stdin by the owner.
#[derive(Default)]
pub(super) struct Pump {
    pub(super) buf: Vec<u8>,
    pub(super) written: usize,
}

/// The child's environment as the plan reads it: `config.env` when set, else this process's.
fn child_env(config: &StdioConfig) -> Vec<(String, String)> {
    match &config.env {
        Some(env) => env.clone(),
        None => std::env::vars_os()
            .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
            .collect(),
    }
}

/// Starts the server of `config` on the runtime `rt`, in a job of its own. `caller_reads_stdout`
/// does not apply here: the owner always reads.
pub(super) fn start(config: &StdioConfig, rt: &tokio::runtime::Handle) -> Result<Started, Error> {
    let _enter = rt.enter();
    let job = Arc::new(Job::new().map_err(|e| Error::Io(format!("job setup failed: {e}")))?);
    let cwd = config
        .cwd
        .clone()
        .map(std::path::PathBuf::from)
        .or_else(project_dir);
    let cwd_text = cwd
        .as_ref()
        .map(|d| d.to_string_lossy().into_owned())
        .unwrap_or_default();
    let launch = win_command::plan(
        &config.command,
        &config.args,
        &cwd_text,
        &child_env(config),
        &RealFiles,
        config.host_has_console.unwrap_or_else(host_has_console),
    );
    let mut cmd = tokio::process::Command::new(&launch.program);
    cmd.args(&launch.args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(false);
    if launch.hide_window {
        cmd.creation_flags(windows_sys::Win32::System::Threading::CREATE_NO_WINDOW);
    }
    if let Some(env) = &config.env {
        cmd.env_clear();
        cmd.envs(env.iter().map(|(k, v)| (k, v)));
    }
    if let Some(dir) = &cwd {
        cmd.current_dir(dir);
    }
    let mut child = cmd.spawn().map_err(|e| Error::spawn(&config.command, &e))?;
    // The child runs before it is in the job: whatever it starts in that first instant is not
    // in it (the standard library cannot start a process suspended and resume it). Should the
    // assignment fail (a host in a job that allows no nested one, before Windows 8), the server
    // still runs: its shutdown then ends the process itself, not what it started.
    if let Some(handle) = child.raw_handle() {
        let _ = job.assign(handle);
    }
    let Some(pid) = child.id() else {
        job.terminate();
        return Err(Error::Io(
            "spawn: the server process ended before its id could be read".into(),
        ));
    };
    let registry_key = runtime::register_group(job.clone());
    let (Some(stdin), stdout, Some(stderr)) =
        (child.stdin.take(), child.stdout.take(), child.stderr.take())
    else {
        unreachable!("stdin, stdout and stderr are always pipes")
    };
    Ok(Started {
        child,
        pid,
        group: job,
        registry_key,
        stdin,
        stdin_raw: StdinOpen,
        stdout,
        stderr,
    })
}

/// How the server ended: its exit code (Windows has no signals; a process ended by
/// `TerminateProcess` or its job reports the code given there, 1).
pub(super) fn exit_info(status: ExitStatus) -> ExitInfo {
    ExitInfo {
        code: status.code(),
        signal: None,
    }
}

/// The conventional name of a signal number, as Node reports it (Windows has none of its own:
/// the numbers Node uses for the ones it emulates).
pub fn signal_name(sig: i32) -> String {
    match sig {
        2 => "SIGINT".into(),
        9 => "SIGKILL".into(),
        15 => "SIGTERM".into(),
        other => format!("SIG{other}"),
    }
}
