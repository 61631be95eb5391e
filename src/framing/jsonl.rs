//! Newline-delimited JSON framing (SPEC 3.2): split on `\n`, strip a trailing `\r` and white space,
//! skip blank lines, keep partial lines across reads, parse a final unterminated line at end of
//! stream. Linear in the input: each byte is scanned for `\n` once, and complete lines are split
//! off the buffer without copying. A line longer than the limit is discarded as it streams in; only
//! its first [`SNIFF_PREFIX`] bytes are kept, to find the id of the request it answers.

use bytes::{Bytes, BytesMut};

/// How many leading bytes of an oversized line are kept to look for its `id`.
pub const SNIFF_PREFIX: usize = 4096;

/// How much spare room the reader asks for before each read.
pub const READ_CHUNK: usize = 64 * 1024;

/// One decoded unit.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete, trimmed, non-blank line (without its line end).
    Line(Bytes),
    /// A line longer than the limit, discarded; `prefix` is its start.
    Oversized {
        /// The first bytes of the discarded line.
        prefix: Bytes,
    },
}

/// The incremental line decoder.
#[derive(Debug)]
pub struct LineDecoder {
    buf: BytesMut,
    /// Bytes of `buf` already searched for `\n`.
    scanned: usize,
    max: usize,
    /// `Some(prefix)` while the rest of an oversized line is being skipped.
    discarding: Option<Bytes>,
}

impl LineDecoder {
    /// A decoder that discards lines longer than `max_line_bytes`.
    pub fn new(max_line_bytes: usize) -> Self {
        LineDecoder {
            buf: BytesMut::with_capacity(READ_CHUNK),
            scanned: 0,
            max: max_line_bytes,
            discarding: None,
        }
    }

    /// The buffer to read into (with at least [`READ_CHUNK`] bytes of spare room).
    pub fn read_buf(&mut self) -> &mut BytesMut {
        self.buf.reserve(READ_CHUNK);
        &mut self.buf
    }

    /// Appends bytes (for callers that do not read into [`Self::read_buf`]).
    pub fn extend(&mut self, data: &[u8]) {
        self.buf.extend_from_slice(data);
    }

    /// The next complete frame in what was read so far; call until `None` after every read.
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            if let Some(prefix) = self.discarding.take() {
                match memchr::memchr(b'\n', &self.buf) {
                    Some(pos) => {
                        let _ = self.buf.split_to(pos + 1);
                        return Some(Frame::Oversized { prefix });
                    }
                    None => {
                        self.buf.clear();
                        self.discarding = Some(prefix);
                        return None;
                    }
                }
            }
            match memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                Some(rel) => {
                    let line = self.buf.split_to(self.scanned + rel + 1).freeze();
                    self.scanned = 0;
                    if let Some(frame) = self.frame_of(line) {
                        return Some(frame);
                    }
                }
                None => {
                    self.scanned = self.buf.len();
                    if self.buf.len() > self.max {
                        let keep = self.buf.len().min(SNIFF_PREFIX);
                        self.discarding = Some(Bytes::copy_from_slice(&self.buf[..keep]));
                        self.buf.clear();
                        self.scanned = 0;
                    }
                    return None;
                }
            }
        }
    }

    /// At end of stream: the final line without a newline, if any.
    pub fn finish(&mut self) -> Option<Frame> {
        if let Some(prefix) = self.discarding.take() {
            self.buf.clear();
            return Some(Frame::Oversized { prefix });
        }
        self.scanned = 0;
        let rest = self.buf.split().freeze();
        self.frame_of(rest)
    }

    fn frame_of(&self, line: Bytes) -> Option<Frame> {
        let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
        let end = line.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
        if end - start > self.max {
            let keep = (end - start).min(SNIFF_PREFIX);
            return Some(Frame::Oversized {
                prefix: line.slice(start..start + keep),
            });
        }
        Some(Frame::Line(line.slice(start..end)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(dec: &mut LineDecoder) -> Vec<String> {
        std::iter::from_fn(|| dec.next_frame())
            .map(|f| match f {
                Frame::Line(b) => String::from_utf8(b.to_vec()).unwrap(),
                Frame::Oversized { prefix } => {
                    format!("OVERSIZED:{}", String::from_utf8_lossy(&prefix))
                }
            })
            .collect()
    }

    #[test]
    fn splits_trims_and_skips_blank_lines() {
        let mut dec = LineDecoder::new(1024);
        dec.extend(b"{\"a\":1}\r\n\n   \r\n  {\"b\":2}  \n{\"c\"");
        assert_eq!(lines(&mut dec), vec!["{\"a\":1}", "{\"b\":2}"]);
        dec.extend(b":3}");
        assert!(lines(&mut dec).is_empty());
        dec.extend(b"\n");
        assert_eq!(lines(&mut dec), vec!["{\"c\":3}"]);
        dec.extend(b"{\"tail\":true}\r");
        assert!(lines(&mut dec).is_empty());
        assert_eq!(
            dec.finish(),
            Some(Frame::Line(Bytes::from_static(b"{\"tail\":true}")))
        );
        assert_eq!(dec.finish(), None);
    }

    #[test]
    fn every_split_point_gives_the_same_lines() {
        let input = b"{\"x\":1}\r\n\n{\"y\":\"\xc3\xa9\"}\n  \n{\"z\":[1,2]}\n";
        for cut in 0..=input.len() {
            let mut dec = LineDecoder::new(1024);
            dec.extend(&input[..cut]);
            let mut got = lines(&mut dec);
            dec.extend(&input[cut..]);
            got.extend(lines(&mut dec));
            assert_eq!(
                got,
                vec!["{\"x\":1}", "{\"y\":\"é\"}", "{\"z\":[1,2]}"],
                "cut at {cut}"
            );
        }
    }

    #[test]
    fn oversized_lines_are_discarded_while_streaming() {
        let mut dec = LineDecoder::new(16);
        dec.extend(b"{\"id\":\"9\",\"result\":\"");
        assert!(lines(&mut dec).is_empty());
        // Memory stays bounded while the rest of the line streams in.
        for _ in 0..100 {
            dec.extend(&[b'x'; 1000]);
            assert!(lines(&mut dec).is_empty());
            assert!(dec.buf.len() <= 1000);
        }
        dec.extend(b"\"}\n{\"ok\":1}\n");
        assert_eq!(
            lines(&mut dec),
            vec!["OVERSIZED:{\"id\":\"9\",\"result\":\"", "{\"ok\":1}"]
        );
    }

    #[test]
    fn oversized_line_within_one_read_and_at_end_of_stream() {
        let mut dec = LineDecoder::new(4);
        dec.extend(b"123456\nab\n");
        assert_eq!(lines(&mut dec), vec!["OVERSIZED:123456", "ab"]);
        dec.extend(b"abcdefgh");
        assert!(lines(&mut dec).is_empty());
        assert!(matches!(dec.finish(), Some(Frame::Oversized { .. })));
    }
}
