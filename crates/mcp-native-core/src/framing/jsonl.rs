//! Newline-delimited JSON framing (SPEC 3.2): split on `\n`, strip a trailing `\r` and white space,
//! skip blank lines, keep partial lines across reads, parse a final unterminated line at end of
//! stream. Linear in the input: each byte is scanned for `\n` once, and complete lines are split
//! off the buffer without copying. A line longer than the limit is discarded as it streams in; only
//! its first [`SNIFF_PREFIX`] bytes are kept, to find the id of the request it answers. Where a
//! read ends never changes the frames (the `jsonl` fuzz target checks it).

use bytes::{Buf, Bytes, BytesMut};

/// How many leading bytes of an oversized line are kept to look for its `id`.
pub const SNIFF_PREFIX: usize = 4096;

/// How much spare room the reader asks for before each read.
pub const READ_CHUNK: usize = 64 * 1024;

/// A partial line this long gets a buffer of `LAZY_BYTES` (see `LineDecoder::make_room`); a
/// complete line this long is in a buffer of its own, of its size (`fitted`). A shorter line
/// shares its buffer with the lines read around it.
pub const LONG_LINE: usize = 1 << 20;

/// The size of a long line's buffer: at glibc's highest mapping threshold (its threshold moves
/// up to 32 MiB as large blocks are freed), so that it is mapped lazily and grows by remapping,
/// not copying. Address space, not memory: only the pages written count (under strict
/// overcommit, `vm.overcommit_memory=2`, it counts against the commit limit while it lives).
const LAZY_BYTES: usize = 32 << 20;

/// A long line in a buffer of its own, the buffer's unused room given back: the line may live
/// on (its long strings cross to JavaScript without a copy, src/jsonrpc/long_strings.rs), and
/// [`LAZY_BYTES`] of address space each would count against the commit limit under strict
/// overcommit. The line starts its buffer, which nothing else shares, so the buffer is taken
/// back as it is, and shrinking a mapped allocation remaps it in place (measured: ~1 µs and
/// ~20 µs for an 8 MiB line, no copy); were it shared, this would copy it.
fn fitted(line: BytesMut) -> Bytes {
    let mut whole = Vec::from(line.freeze());
    whole.shrink_to_fit();
    Bytes::from(whole)
}

/// One decoded unit.
#[derive(Debug, PartialEq, Eq)]
pub enum Frame {
    /// A complete, trimmed, non-blank line (without its line end).
    Line(Bytes),
    /// A non-blank line longer than the limit (counted without its `\n` or `\r\n`, white space
    /// included, so that the verdict never waits for bytes beyond the limit), discarded.
    Oversized {
        /// Its first [`SNIFF_PREFIX`] bytes after leading white space.
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
    /// `Some(prefix)` while the rest of an oversized line is being skipped; the prefix fills up
    /// to [`SNIFF_PREFIX`] bytes as they arrive, whatever the size of the reads.
    discarding: Option<BytesMut>,
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
        self.make_room(READ_CHUNK);
        &mut self.buf
    }

    /// At least `n` bytes of spare room. Once a line passes [`LONG_LINE`], the buffer is made
    /// [`LAZY_BYTES`] large at once: an allocation that size is mapped by the allocator and its
    /// pages touched only as bytes arrive, so the line is never copied again as it grows
    /// (doubling instead copied it up to log2 times, the last copy half of it in one read: ~4 ms
    /// for an 8 MiB answer, measured). Only the pages written count as memory.
    fn make_room(&mut self, n: usize) {
        let len = self.buf.len();
        if self.buf.capacity() - len >= n {
            return;
        }
        let mut want = n.max(len);
        if len + want >= LONG_LINE {
            let lazy = LAZY_BYTES.min(self.max.saturating_add(2));
            want = want.max(lazy.saturating_sub(len));
        }
        self.buf.reserve(want);
    }

    /// How many bytes of an incomplete line are held (0 while an oversized one is skipped).
    pub fn partial_len(&self) -> usize {
        self.buf.len()
    }

    /// Appends bytes (for callers that do not read into [`Self::read_buf`]).
    pub fn extend(&mut self, data: &[u8]) {
        self.make_room(data.len());
        self.buf.extend_from_slice(data);
    }

    /// The next complete frame in what was read so far; call until `None` after every read.
    /// Between reads the buffer holds at most the limit plus one byte (a `\r` whose `\n` may
    /// follow).
    pub fn next_frame(&mut self) -> Option<Frame> {
        loop {
            if let Some(prefix) = &mut self.discarding {
                let newline = memchr::memchr(b'\n', &self.buf);
                fill(prefix, &self.buf[..newline.unwrap_or(self.buf.len())]);
                let Some(pos) = newline else {
                    self.buf.clear();
                    return None;
                };
                self.buf.advance(pos + 1);
                match self.discarding.take() {
                    Some(prefix) if !prefix.is_empty() => {
                        return Some(Frame::Oversized {
                            prefix: prefix.freeze(),
                        });
                    }
                    _ => continue, // a blank line, however long
                }
            }
            match memchr::memchr(b'\n', &self.buf[self.scanned..]) {
                Some(rel) => {
                    let end = self.scanned + rel;
                    self.scanned = 0;
                    let line = if end >= LONG_LINE {
                        // The rest leaves the long line's large buffer (which the line keeps
                        // alive): later lines would otherwise touch its pages one after another.
                        let rest = &self.buf[end + 1..];
                        let mut next = BytesMut::with_capacity(READ_CHUNK.max(rest.len()));
                        next.extend_from_slice(rest);
                        let mut line = std::mem::replace(&mut self.buf, next);
                        line.truncate(end);
                        fitted(line)
                    } else {
                        let mut line = self.buf.split_to(end + 1);
                        line.truncate(end);
                        line.freeze()
                    };
                    if let Some(frame) = self.frame_of(line) {
                        return Some(frame);
                    }
                }
                None => {
                    self.scanned = self.buf.len();
                    // Over the limit for sure: more than one byte over, or one byte over that
                    // cannot be the `\r` of a `\r\n`.
                    let len = self.buf.len();
                    if len > self.max.saturating_add(1)
                        || (len > self.max && self.buf.last() != Some(&b'\r'))
                    {
                        let mut prefix = BytesMut::new();
                        fill(&mut prefix, &self.buf);
                        self.discarding = Some(prefix);
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
        self.scanned = 0;
        if let Some(mut prefix) = self.discarding.take() {
            fill(&mut prefix, &self.buf);
            self.buf.clear();
            return (!prefix.is_empty()).then(|| Frame::Oversized {
                prefix: prefix.freeze(),
            });
        }
        let rest = self.buf.split().freeze();
        self.frame_of(rest)
    }

    /// The frame of one whole line (without its `\n`).
    fn frame_of(&self, line: Bytes) -> Option<Frame> {
        let start = line.iter().position(|b| !b.is_ascii_whitespace())?;
        let body = line.len() - usize::from(line.last() == Some(&b'\r'));
        if body > self.max {
            let end = line.len().min(start + SNIFF_PREFIX);
            return Some(Frame::Oversized {
                prefix: line.slice(start..end),
            });
        }
        let end = line.iter().rposition(|b| !b.is_ascii_whitespace())? + 1;
        Some(Frame::Line(line.slice(start..end)))
    }
}

/// Appends the next bytes of a discarded line to its prefix: none past [`SNIFF_PREFIX`], and no
/// white space before the first other byte.
fn fill(prefix: &mut BytesMut, part: &[u8]) {
    let part = if prefix.is_empty() {
        part.trim_ascii_start()
    } else {
        part
    };
    let room = SNIFF_PREFIX - prefix.len();
    prefix.extend_from_slice(&part[..part.len().min(room)]);
}

/// The decoder's core property, for the fuzz target `jsonl` (`fuzz/`) and its corpus replay
/// (`tests/fuzz_corpus.rs`): decoding `data` whole, or cut at the points its first bytes choose,
/// gives the frames of a plain reference (split on `\n`, each line without a trailing `\r`
/// trimmed, blank lines skipped, the unterminated rest read at the end; a line longer than the
/// limit is oversized, its prefix being its first [`SNIFF_PREFIX`] bytes after leading white
/// space); between reads the buffer never holds more than the limit plus a pending `\r`.
/// Panics otherwise.
#[doc(hidden)]
pub fn check_chunking(data: &[u8]) {
    let (head, stream) = data.split_at(data.len().min(4));
    let max = [0, 1, 2, 5, 16, 64, 1000, 1 << 20][head.first().map_or(0, |b| *b as usize % 8)];
    let expected: Vec<Frame> = stream
        .split(|&b| b == b'\n')
        .filter_map(|line| {
            let body = line.strip_suffix(b"\r").unwrap_or(line);
            let start = line.trim_ascii_start();
            if start.is_empty() {
                None
            } else if body.len() > max {
                let prefix = &start[..start.len().min(SNIFF_PREFIX)];
                Some(Frame::Oversized {
                    prefix: Bytes::copy_from_slice(prefix),
                })
            } else {
                Some(Frame::Line(Bytes::copy_from_slice(body.trim_ascii())))
            }
        })
        .collect();
    let decode = |cuts: &[usize]| {
        let mut dec = LineDecoder::new(max);
        let mut frames = Vec::new();
        let mut at = 0;
        for (n, &cut) in cuts
            .iter()
            .chain(std::iter::once(&stream.len()))
            .enumerate()
        {
            let cut = cut.clamp(at, stream.len());
            if n % 2 == 0 {
                dec.extend(&stream[at..cut]);
            } else {
                dec.read_buf().extend_from_slice(&stream[at..cut]);
            }
            frames.extend(std::iter::from_fn(|| dec.next_frame()));
            assert!(dec.buf.len() <= max + 1, "buffer over the limit");
            at = cut;
        }
        frames.extend(dec.finish());
        assert_eq!(dec.finish(), None, "finish twice");
        frames
    };
    assert_eq!(decode(&[]), expected, "whole");
    let mut cuts: Vec<usize> = head
        .iter()
        .skip(1)
        .map(|b| *b as usize * stream.len() / 256)
        .collect();
    cuts.sort_unstable();
    assert_eq!(decode(&cuts), expected, "cut at {cuts:?}");
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_not_copied_as_it_grows_and_leaves_its_buffer_behind() {
        for reading in [false, true] {
            let mut dec = LineDecoder::new(128 << 20);
            // A line split off earlier and still alive (as JS holds a large answer).
            dec.extend(b"{\"first\":1}\n");
            let Some(Frame::Line(kept)) = dec.next_frame() else {
                panic!("a line")
            };
            let chunk = [b'x'; 4096];
            let mut allocations = 0;
            let mut last = dec.buf.as_ptr();
            for _ in 0..2048 {
                let long = dec.partial_len() >= 2 << 20;
                if reading {
                    dec.read_buf().extend_from_slice(&chunk);
                } else {
                    dec.extend(&chunk);
                }
                if dec.buf.as_ptr() != last && long {
                    allocations += 1;
                }
                last = dec.buf.as_ptr();
                assert!(dec.next_frame().is_none());
            }
            assert_eq!(dec.partial_len(), 8 << 20);
            // Past 2 MiB, doubling would move (copy) it twice more.
            assert_eq!(allocations, 0, "moved past 2 MiB");
            dec.extend(b"\n{\"next\":1}");
            let Some(Frame::Line(long)) = dec.next_frame() else {
                panic!("the long line")
            };
            assert_eq!(long.len(), 8 << 20);
            assert!(dec.buf.capacity() <= 1 << 20, "{}", dec.buf.capacity());
            assert_eq!(lines(&mut dec), Vec::<String>::new());
            assert_eq!(
                dec.finish(),
                Some(Frame::Line(Bytes::from_static(b"{\"next\":1}")))
            );
            assert_eq!(&kept[..], b"{\"first\":1}");
        }
    }

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
        let got = lines(&mut dec);
        let prefix = format!(
            "{{\"id\":\"9\",\"result\":\"{}",
            "x".repeat(SNIFF_PREFIX - 20)
        );
        assert_eq!(
            got,
            vec![format!("OVERSIZED:{prefix}"), "{\"ok\":1}".into()]
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

#[cfg(test)]
mod fuzz_regressions {
    use super::*;

    /// Found by `cargo fuzz run jsonl` in 22 runs: the prefix of an oversized line was whatever
    /// the read that crossed the limit held (here 1 byte instead of 3), so whether its id could
    /// be sniffed depended on where reads ended.
    #[test]
    fn the_prefix_of_an_oversized_line_does_not_depend_on_reads() {
        check_chunking(b"\x10\x03\x03\x30ol$\n2222");
        let mut dec = LineDecoder::new(2);
        dec.extend(b"  {\"");
        assert_eq!(dec.next_frame(), None);
        dec.extend(b"id\":1,\"result\":2}\r\n");
        assert_eq!(
            dec.next_frame(),
            Some(Frame::Oversized {
                prefix: Bytes::from_static(b"{\"id\":1,\"result\":2}\r")
            })
        );
    }

    /// The verdict was taken on the trimmed line when it arrived whole, on the raw bytes when a
    /// read ended inside it: a line of exactly the limit ending in CRLF, cut between CR and LF,
    /// was discarded; so was a short line with white space around it.
    #[test]
    fn the_limit_does_not_depend_on_reads() {
        let line = |s: &'static [u8]| Frame::Line(Bytes::from_static(s));
        let over = |s: &'static [u8]| Frame::Oversized {
            prefix: Bytes::from_static(s),
        };
        for (input, want) in [
            (&b"1234\r\n"[..], vec![line(b"1234")]),
            (b"  ab  \n", vec![over(b"ab  ")]),
            (b"          \n", vec![]),
        ] {
            for cut in 0..input.len() {
                let mut dec = LineDecoder::new(4);
                let mut got = Vec::new();
                for part in [&input[..cut], &input[cut..]] {
                    dec.extend(part);
                    got.extend(std::iter::from_fn(|| dec.next_frame()));
                }
                assert_eq!(got, want, "{input:?} cut at {cut}");
            }
        }
    }
}
