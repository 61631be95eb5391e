//! A larger stdout pipe while a large message arrives. With the default 64 KiB pipe, an 8 MiB
//! answer takes 128 fill-and-drain rounds, each a wake-up of the reading thread and a blocked
//! write of the server; with 1 MiB, 8. Measured on Bun (the Rust reader), 8 MiB answers: about
//! 66 ms → 52 ms (`npm run bench`, large section).
//!
//! Pipe buffers are a per-user resource (Linux charges `F_SETPIPE_SZ` against
//! `/proc/sys/fs/pipe-user-pages-soft`, 64 MiB by default, and past it gives the user's new pipes
//! one page), so a pipe grows only once its connection has shown a large message, and at most
//! [`MAX_GROWN`] pipes of this process are grown at a time (16 MiB).

use std::sync::atomic::{AtomicUsize, Ordering};

/// A partial line this long (bytes) grows its pipe.
pub(super) const GROW_AT: usize = 64 * 1024;

/// The grown pipe's size.
#[cfg(target_os = "linux")]
const GROWN_BYTES: libc::c_int = 1 << 20;

/// At most this many grown pipes at a time, process-wide.
#[cfg(target_os = "linux")]
const MAX_GROWN: usize = 16;

static GROWN: AtomicUsize = AtomicUsize::new(0);

/// One of the [`MAX_GROWN`] grants, held while its connection lasts.
#[derive(Debug)]
pub(super) struct Grant(());

impl Drop for Grant {
    fn drop(&mut self) {
        GROWN.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Grows the pipe `fd` to 1 MiB if a grant is free; the grant, if it grew.
#[cfg(target_os = "linux")]
pub(super) fn grow(fd: std::os::fd::RawFd) -> Option<Grant> {
    GROWN
        .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
            (n < MAX_GROWN).then_some(n + 1)
        })
        .ok()?;
    let grant = Grant(());
    // SAFETY: fcntl on the open stdout pipe; no memory is passed.
    let done = unsafe { libc::fcntl(fd, libc::F_SETPIPE_SZ, GROWN_BYTES) } >= 0;
    done.then_some(grant)
}

/// No `F_SETPIPE_SZ` elsewhere.
#[cfg(not(target_os = "linux"))]
pub(super) fn grow(_fd: std::os::fd::RawFd) -> Option<Grant> {
    None
}
