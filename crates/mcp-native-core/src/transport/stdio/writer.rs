//! The outgoing side: frames in order, written without blocking by whichever thread has them
//! (the caller's, or the owner's once stdin drains), the rest waiting in the outbox.

use std::collections::VecDeque;

use crate::error::Error;
use crate::jsonrpc;

/// The most bytes that wait for a server to read its stdin. A frame that would take the waiting
/// bytes past it is refused ([`Error::Backlog`]) unless nothing is waiting (a single large
/// request always goes): a server that leaves this much unread is not reading, and every
/// request, notification or reply queued behind it would only grow the process.
pub const MAX_STDIN_BACKLOG: usize = 64 * 1024 * 1024;

pub(super) struct Outgoing {
    /// The request this frame carries, so that an unsent frame can be dropped on cancel.
    pub(super) id: Option<u64>,
    pub(super) frame: Vec<u8>,
}

/// The outgoing side (behind [`Shared::out`]): frames in order, written without blocking by
/// whichever thread has them, the rest waiting for stdin to drain.
pub(super) struct Writer {
    /// Frames waiting for stdin to become writable, in order.
    pub(super) outbox: VecDeque<Outgoing>,
    /// Bytes of the outbox not yet written (at most about [`MAX_STDIN_BACKLOG`]).
    pub(super) queued: usize,
    /// Bytes of the front frame already written.
    pub(super) front_written: usize,
    /// The raw stdin descriptor while it is open (Windows: only that it is open). The owner
    /// closes it only after clearing this under the lock, so no write can reach a reused
    /// descriptor.
    pub(super) stdin: Option<super::process::StdinRaw>,
    /// Why stdin broke (`EPIPE`: the server closed its end), until the owner takes it to end
    /// the connection.
    pub(super) broken: Option<std::io::Error>,
    /// How request ids are written (the `notifications/cancelled` of [`Writer::forget`]).
    pub(super) id_format: crate::jsonrpc::IdFormat,
}

impl Writer {
    /// Whether `len` more bytes may wait: the bound of [`MAX_STDIN_BACKLOG`], given `queued`
    /// bytes waiting (the outbox's, plus frames of the same call already admitted).
    pub(super) fn admits(queued: usize, len: usize) -> Result<(), Error> {
        if queued == 0 || queued.saturating_add(len) <= MAX_STDIN_BACKLOG {
            Ok(())
        } else {
            Err(Error::Backlog {
                bytes: queued,
                limit: MAX_STDIN_BACKLOG,
            })
        }
    }

    /// Queues `frame` and writes what stdin takes right now. Returns true when bytes are left
    /// waiting where nothing was waiting before (the owner must then watch stdin).
    pub(super) fn send(&mut self, id: Option<u64>, frame: Vec<u8>) -> bool {
        self.send_all(std::iter::once((id, frame)))
    }

    /// [`Writer::send`] for several frames, written together.
    pub(super) fn send_all(
        &mut self,
        frames: impl Iterator<Item = (Option<u64>, Vec<u8>)>,
    ) -> bool {
        if self.stdin.is_none() {
            return false; // stdin is gone: the frames cannot be delivered; deadlines still run
        }
        let was_idle = self.outbox.is_empty();
        for (id, frame) in frames {
            self.queued += frame.len();
            self.outbox.push_back(Outgoing { id, frame });
        }
        if was_idle {
            self.flush();
        }
        was_idle && !self.outbox.is_empty()
    }

    /// Windows: nothing is written here; the owner takes the frames ([`Writer::take_chunk`]) and
    /// writes them (anonymous pipes cannot be written without blocking).
    #[cfg(windows)]
    pub(super) fn flush(&mut self) {}

    /// Windows: moves up to `max` bytes (whole frames, or what is left of the front one, at least
    /// one frame's worth) out of the outbox for the owner to write; they count as written.
    #[cfg(windows)]
    pub(super) fn take_chunk(&mut self, max: usize) -> Vec<u8> {
        let mut chunk = Vec::new();
        while let Some(front) = self.outbox.front() {
            let rest = &front.frame[self.front_written..];
            if !chunk.is_empty() && chunk.len() + rest.len() > max {
                break;
            }
            chunk.extend_from_slice(rest);
            let n = rest.len();
            self.consume(n);
        }
        chunk
    }

    /// Writes queued frames until stdin would block. Never blocks.
    #[cfg(unix)]
    pub(super) fn flush(&mut self) {
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
                    // The server closed its stdin (EPIPE) or it failed otherwise: nothing more can
                    // be delivered. The owner ends the connection (see `Shared::write_with`).
                    _ => {
                        self.break_with(err);
                        return;
                    }
                }
            }
            self.consume(n as usize);
        }
    }

    /// Pops the frames that `n` written bytes completed.
    pub(super) fn consume(&mut self, mut n: usize) {
        self.queued -= n.min(self.queued);
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
    /// otherwise tell the server when `tell` (SPEC 3.1: not for `initialize`). Returns what
    /// [`Writer::send`] returns.
    pub(super) fn forget(&mut self, id: u64, reason: &str, tell: bool) -> bool {
        match self.outbox.iter().position(|o| o.id == Some(id)) {
            Some(pos) if pos > 0 || self.front_written == 0 => {
                if let Some(dropped) = self.outbox.remove(pos) {
                    self.queued -= dropped.frame.len().min(self.queued);
                }
                false
            }
            _ if tell => self.send(None, jsonrpc::cancelled_frame(id, self.id_format, reason)),
            _ => false,
        }
    }

    /// Stdin failed: stops all writing and keeps the reason for the owner.
    pub(super) fn break_with(&mut self, err: std::io::Error) {
        if self.stdin.is_some() && self.broken.is_none() {
            self.broken = Some(err);
        }
        self.close();
    }

    /// Stops all writing (stdin closed or broken).
    pub(super) fn close(&mut self) {
        self.stdin = None;
        self.outbox.clear();
        self.queued = 0;
        self.front_written = 0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn writer(frames: &[usize]) -> Writer {
        Writer {
            outbox: frames
                .iter()
                .enumerate()
                .map(|(i, &len)| Outgoing {
                    id: Some(i as u64),
                    frame: vec![b'x'; len],
                })
                .collect(),
            queued: frames.iter().sum(),
            front_written: 0,
            stdin: None,
            broken: None,
            id_format: Default::default(),
        }
    }

    #[test]
    fn the_backlog_bound_refuses_only_past_it_and_never_when_nothing_waits() {
        assert!(
            Writer::admits(0, MAX_STDIN_BACKLOG * 2).is_ok(),
            "one large frame goes"
        );
        assert!(Writer::admits(MAX_STDIN_BACKLOG - 10, 10).is_ok());
        let refused = Writer::admits(MAX_STDIN_BACKLOG - 10, 11).unwrap_err();
        assert_eq!(refused.code(), "MCP_BACKLOG");
        assert_eq!(
            refused.to_string(),
            format!(
                "stdin backlog: {} bytes wait for the server to read them (limit 67108864 bytes)",
                MAX_STDIN_BACKLOG - 10
            )
        );
    }

    #[test]
    fn queued_follows_writes_drops_and_close() {
        let mut w = writer(&[100, 50, 25]);
        w.consume(60); // part of the first frame
        assert_eq!(w.queued, 115);
        assert_eq!(w.front_written, 60);
        w.consume(40); // the rest of the first
        assert_eq!((w.queued, w.outbox.len()), (75, 2));
        assert!(!w.forget(2, "gone", false), "an unsent frame is dropped");
        assert_eq!((w.queued, w.outbox.len()), (50, 1));
        w.close();
        assert_eq!((w.queued, w.outbox.len()), (0, 0));
    }
}
