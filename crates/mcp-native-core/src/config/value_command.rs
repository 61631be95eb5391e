//! `!command` config values (SPEC 6.3): the command runs with `sh -c` in its own process group,
//! bounded in time and output; the caller (`manager.js`) caches and shares results.

use std::process::Stdio;
use std::time::Duration;

use tokio::io::AsyncReadExt;

use crate::runtime;

/// How long a `!command` config value may run before it is killed (SPEC 6.3: 10 s).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// The most stdout a `!command` may produce; more is cut off and the command is killed at once
/// (a secret is a line, not a file).
pub const COMMAND_MAX_OUTPUT: usize = 1 << 20;

/// Runs a `!command` config value (SPEC 6.3) with `sh -c` in its own process group: its trimmed
/// stdout, or `None` on a failed start, a non-zero exit, a timeout (the whole group is killed)
/// or empty output. The caller caches and shares results.
pub async fn run_value_command(command: &str, timeout: Duration) -> Option<String> {
    let mut child = shell(command).spawn().ok()?;
    let group = group_of(&child)?;
    #[allow(clippy::clone_on_copy)] // a pgid on Unix, a shared job on Windows
    let key = runtime::register_group(group.clone());
    let mut stdout = child.stdout.take()?;
    let run = async {
        let mut out = Vec::new();
        let mut limited = (&mut stdout).take(COMMAND_MAX_OUTPUT as u64 + 1);
        limited.read_to_end(&mut out).await.ok()?;
        if out.len() > COMMAND_MAX_OUTPUT {
            // Over the limit: cut, and end the run now rather than wait for a command that may
            // never stop writing (it is killed below).
            out.truncate(COMMAND_MAX_OUTPUT);
            return Some(out);
        }
        let status = child.wait().await.ok()?;
        status.success().then_some(out)
    };
    let result = tokio::time::timeout(timeout, run).await;
    // Whatever happened, nothing the command started may outlive it.
    kill(&group);
    runtime::unregister_group(key);
    let out = result.ok()??;
    let text = String::from_utf8_lossy(&out).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// `sh -c <command>` in a process group of its own.
#[cfg(unix)]
fn shell(command: &str) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new("sh");
    cmd.arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true);
    cmd
}

/// Windows: `cmd.exe /d /s /c <command>` (the command line as written: it is the user's own
/// shell command), without a window. The agent runs these through its embedded bash-like shell;
/// cmd.exe is the shell every Windows has. Its process tree goes into a job
/// ([`group_of`]).
#[cfg(windows)]
fn shell(command: &str) -> tokio::process::Command {
    let comspec = std::env::var("ComSpec").unwrap_or_else(|_| "cmd.exe".into());
    let mut cmd = tokio::process::Command::new(comspec);
    cmd.raw_arg(format!("/d /s /c \"{command}\""))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .creation_flags(windows_sys::Win32::System::Threading::CREATE_NO_WINDOW)
        .kill_on_drop(true);
    cmd
}

#[cfg(unix)]
fn group_of(child: &tokio::process::Child) -> Option<runtime::Group> {
    Some(child.id()? as i32)
}

#[cfg(windows)]
fn group_of(child: &tokio::process::Child) -> Option<runtime::Group> {
    let job = crate::windows::Job::new().ok()?;
    job.assign(child.raw_handle()?).ok()?;
    Some(std::sync::Arc::new(job))
}

#[cfg(unix)]
fn kill(group: &runtime::Group) {
    runtime::signal_group(*group, libc::SIGKILL);
}

#[cfg(windows)]
fn kill(group: &runtime::Group) {
    group.terminate();
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn value_commands_give_trimmed_output_or_nothing() {
        let rt = runtime::runtime();
        let run = |c: &str, ms: u64| rt.block_on(run_value_command(c, Duration::from_millis(ms)));
        assert_eq!(run("echo '  secret  '", 5000).as_deref(), Some("secret"));
        assert_eq!(run("exit 3", 5000), None);
        assert_eq!(run("printf ''", 5000), None);
        let started = std::time::Instant::now();
        assert_eq!(run("sleep 5; echo late", 200), None);
        assert!(started.elapsed() < Duration::from_secs(2));
        // Output over the limit is cut and the run ends at once (`yes` never stops by itself).
        let started = std::time::Instant::now();
        let out = run("yes", 10_000).expect("the cut output");
        assert!(started.elapsed() < Duration::from_secs(3));
        assert!(out.len() <= COMMAND_MAX_OUTPUT && out.starts_with("y\ny"));
    }
}
