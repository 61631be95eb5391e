//! Draining the server's stderr: the tail kept for error reports, text delivered live while a
//! listener is set (paced by the consumer then: see [`crate::transport::paced`]; without a
//! listener it is always read, so a chatty server never blocks on a full pipe).

use std::collections::VecDeque;
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};

use tokio::io::AsyncReadExt;
use tokio::process::ChildStderr;

use super::STDERR_TAIL_BYTES;
use super::shared::Flags;
use crate::sync::Locked;
use crate::transport::{Event, EventSink};

/// The last [`STDERR_TAIL_BYTES`] of stderr.
#[derive(Default)]
pub(super) struct Tail(VecDeque<u8>);

impl Tail {
    pub(super) fn push(&mut self, data: &[u8]) {
        let data = &data[data.len().saturating_sub(STDERR_TAIL_BYTES)..];
        let overflow = (self.0.len() + data.len()).saturating_sub(STDERR_TAIL_BYTES);
        self.0.drain(..overflow);
        self.0.extend(data);
    }

    pub(super) fn text(&self) -> String {
        let (a, b) = self.0.as_slices();
        let mut bytes = Vec::with_capacity(self.0.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

pub(super) async fn drain_stderr(
    mut stderr: ChildStderr,
    tail: Arc<Mutex<Tail>>,
    flags: Arc<Flags>,
    sink: Arc<dyn EventSink>,
) {
    // Read into the spare room (never zeroed): a server that writes little to stderr makes
    // little of it resident (a zeroed 64 KiB buffer was 64 KiB of RSS per connection with
    // allocators that zero it by hand).
    let mut buf: Vec<u8> = Vec::with_capacity(64 * 1024);
    let mut carry: Vec<u8> = Vec::new();
    // Whether the last read delivered text (which the consumer may not have taken yet).
    let mut emitted = false;
    loop {
        buf.clear();
        // While text is delivered, no more than one read waits for the consumer (the server
        // waits on its full pipe meanwhile, as it would for a busy Node host); without a
        // listener, the tail is all that is kept and reading never waits.
        if emitted {
            crate::transport::paced(&*sink).await;
        }
        let n = match stderr.read_buf(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        tail.locked().push(&buf[..n]);
        if flags.stderr.load(Ordering::Relaxed) {
            carry.extend_from_slice(&buf[..n]);
            let text = take_utf8(&mut carry);
            emitted = !text.is_empty();
            if emitted {
                sink.emit(Event::Stderr(text));
            }
        } else {
            emitted = false;
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    pub(super) fn tail_keeps_the_last_bytes() {
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
    pub(super) fn utf8_split_across_chunks() {
        let mut carry = b"caf\xc3".to_vec();
        assert_eq!(take_utf8(&mut carry), "caf");
        carry.push(0xa9);
        assert_eq!(take_utf8(&mut carry), "é");
        assert!(carry.is_empty());
    }
}
