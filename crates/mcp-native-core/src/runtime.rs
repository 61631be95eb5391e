//! The crate's own tokio runtime (so the core needs nothing from napi), and the registry of live
//! child process groups that is swept when the host process exits.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

use crate::sync::Locked;

/// How long [`kill_all_children`] waits after SIGTERM before it sends SIGKILL. Short: it runs while
/// the host process exits.
pub const EXIT_GRACE: Duration = Duration::from_millis(100);

/// The shared runtime, started on first use: a current-thread runtime driven by one dedicated
/// thread (`mcp-native`). One thread is all the I/O needs, and a current-thread scheduler parks
/// straight in the I/O driver, which makes each wake-up cheaper than a work-stealing worker's
/// (measured: sequential round trips, see `bench/`).
pub fn runtime() -> &'static tokio::runtime::Handle {
    static RT: OnceLock<tokio::runtime::Handle> = OnceLock::new();
    RT.get_or_init(|| {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("failed to start the mcp-native tokio runtime");
        let handle = rt.handle().clone();
        // Only `Runtime::block_on` drives a current-thread runtime's I/O and timers.
        std::thread::Builder::new()
            .name("mcp-native".into())
            .spawn(move || rt.block_on(std::future::pending::<()>()))
            .expect("failed to start the mcp-native runtime thread");
        handle
    })
}

/// Where the core's tasks run: the caller's tokio runtime when there is one (a Rust program, a
/// test on tokio's paused clock), the crate's own ([`runtime`]) otherwise (calls from JavaScript).
pub fn handle() -> tokio::runtime::Handle {
    tokio::runtime::Handle::try_current().unwrap_or_else(|_| runtime().clone())
}

/// A server's process tree as the exit sweep ends it: its process group id on Unix, its Job
/// Object on Windows.
#[cfg(unix)]
pub type Group = i32;
/// A server's process tree as the exit sweep ends it: its process group id on Unix, its Job
/// Object on Windows.
#[cfg(windows)]
pub type Group = std::sync::Arc<crate::windows::Job>;

fn registry() -> &'static Mutex<HashMap<u64, Group>> {
    static CHILDREN: OnceLock<Mutex<HashMap<u64, Group>>> = OnceLock::new();
    CHILDREN.get_or_init(Default::default)
}

/// Records a live process group; the returned key removes it again. On Unix, a `pgid` that cannot
/// be a server's group ([`is_server_group`]) is not recorded (the exit sweep never signals it).
pub fn register_group(group: Group) -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(1);
    let key = NEXT.fetch_add(1, Ordering::Relaxed);
    #[cfg(unix)]
    if !is_server_group(group) {
        return key;
    }
    registry().locked().insert(key, group);
    key
}

/// Forgets a process group that has been cleaned up.
pub fn unregister_group(key: u64) {
    registry().locked().remove(&key);
}

#[cfg(unix)]
/// Whether `pgid` can name a server's own process group. `kill(-pgid)` with 0 would signal the
/// host's own group, with 1 the group of init, and a negative pgid turns into a plain pid (or,
/// for -1, every process we may signal): none of them is ever one of ours.
pub fn is_server_group(pgid: i32) -> bool {
    pgid > 1 && pgid != std::process::id() as i32
}

#[cfg(unix)]
/// Sends `signal` to every process of group `pgid`. Returns false when the group has no process,
/// and refuses (false, nothing sent) a `pgid` that cannot be a server's group
/// ([`is_server_group`]).
pub fn signal_group(pgid: i32, signal: i32) -> bool {
    if !is_server_group(pgid) {
        return false;
    }
    // SAFETY: kill(2) has no memory-safety preconditions; a negative pid addresses a process group.
    unsafe { libc::kill(-pgid, signal) == 0 }
}

#[cfg(unix)]
/// True while group `pgid` has a process that is not a zombie (see `has_live_member` for how
/// closely each platform can tell). On Linux this can read every process's `/proc/<pid>/stat`
/// (milliseconds on a busy machine): async code calls [`group_alive_off_thread`] instead.
pub fn group_alive(pgid: i32) -> bool {
    signal_group(pgid, 0) && has_live_member(pgid)
}

#[cfg(unix)]
/// [`group_alive`] on tokio's blocking pool, so that its `/proc` scan never holds the I/O thread
/// that serves every other connection (it polls every few milliseconds during a shutdown grace).
/// A pool that cannot run it (the runtime is shutting down) answers "alive", which only means
/// that the SIGKILL that follows is sent.
pub async fn group_alive_off_thread(pgid: i32) -> bool {
    CHECKS.with(|n| n.set(n.get() + 1));
    if !signal_group(pgid, 0) {
        return false; // no process at all: no scan needed
    }
    tokio::task::spawn_blocking(move || has_live_member(pgid))
        .await
        .unwrap_or(true)
}

#[cfg(unix)]
thread_local! {
    static SCANS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    static CHECKS: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// For tests, on the calling thread: how many `/proc` scans [`group_alive`] made, and how many
/// checks [`group_alive_off_thread`] was asked for. The I/O thread asks and never scans.
#[doc(hidden)]
#[cfg(unix)]
pub fn proc_scans_on_this_thread() -> (u64, u64) {
    (
        SCANS.with(std::cell::Cell::get),
        CHECKS.with(std::cell::Cell::get),
    )
}

/// Whether group `pgid`, which `kill(…, 0)` found non-empty, has a member that is not a zombie:
/// kill(2) also counts zombies that nobody has reaped yet. On Linux, `/proc` tells (where it is
/// not mounted, the probe's answer stands).
#[cfg(target_os = "linux")]
fn has_live_member(pgid: i32) -> bool {
    SCANS.with(|n| n.set(n.get() + 1));
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return true;
    };
    for entry in dir.flatten() {
        let name = entry.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(format!("/proc/{pid}/stat")) else {
            continue;
        };
        // Fields after the command name (which may hold spaces): state ppid pgrp ...
        let Some(rest) = stat.rfind(')').map(|i| &stat[i + 1..]) else {
            continue;
        };
        let mut fields = rest.split_whitespace();
        let state = fields.next();
        let pgrp = fields.nth(1).and_then(|p| p.parse::<i32>().ok());
        if pgrp == Some(pgid) && state != Some("Z") && state != Some("X") {
            return true;
        }
    }
    false
}

/// Elsewhere (macOS, the BSDs) there is no `/proc`, and the `kill(…, 0)` probe is the answer: a
/// group whose only members are unreaped zombies counts as alive. What is weaker is time, not
/// what is left behind: a zombie is reaped by its parent (tokio, for the server itself) or, once
/// that parent is gone, by the system, so such a group empties soon after. Until then the waits
/// that poll this (the grace after SIGTERM in a transport's shutdown, and [`EXIT_GRACE`] in
/// [`kill_all_children`]) may run to their end, and the SIGKILL that follows reaches only
/// zombies.
#[cfg(all(unix, not(target_os = "linux")))]
fn has_live_member(_pgid: i32) -> bool {
    true
}

/// Terminates every registered child process group: SIGTERM, up to [`EXIT_GRACE`], then SIGKILL.
/// Called when the host process exits, so that no server outlives it.
#[cfg(unix)]
pub fn kill_all_children() {
    let groups: Vec<i32> = registry().locked().drain().map(|(_, pgid)| pgid).collect();
    if groups.is_empty() {
        return;
    }
    for &pgid in &groups {
        signal_group(pgid, libc::SIGTERM);
    }
    let deadline = std::time::Instant::now() + EXIT_GRACE;
    while std::time::Instant::now() < deadline
        && groups.iter().any(|&g| signal_group(g, 0) && group_alive(g))
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    for &pgid in &groups {
        signal_group(pgid, libc::SIGKILL);
    }
}

/// Terminates every registered server's job. Called when the host process exits (the jobs would
/// end with the host's handles anyway: this ends them before the host's own exit runs on).
#[cfg(windows)]
pub fn kill_all_children() {
    let jobs: Vec<Group> = registry().locked().drain().map(|(_, job)| job).collect();
    for job in jobs {
        job.terminate();
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn never_signals_the_hosts_group_init_or_everyone() {
        // kill(0, 0) and kill(-1, 0) succeed for any process: refused here, so nothing is sent.
        for pgid in [0, 1, -1, -5, std::process::id() as i32] {
            assert!(!is_server_group(pgid), "{pgid}");
            assert!(!signal_group(pgid, 0), "{pgid}");
            assert!(!group_alive(pgid), "{pgid}");
        }
        let key = register_group(0);
        assert!(!registry().lock().unwrap().contains_key(&key));
    }
}
