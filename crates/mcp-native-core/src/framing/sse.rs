//! Server-Sent Events decoding (the WHATWG event-stream format), without I/O: bytes in, events
//! out. Lines end with CRLF, LF or CR (a CR at the end of one chunk and an LF at the start of the
//! next are one line end); `data:` lines of one event are joined with `\n`; one space after the
//! colon is removed; `event:`, `id:`, `retry:` and `:` comments are understood; a leading BOM is
//! skipped. One event is at most `max_event_bytes`; a larger one is discarded while it streams in
//! (reported as [`SseItem::Oversized`]), so memory stays bounded.

/// One dispatched event.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` type, `"message"` when none was given.
    pub event: String,
    /// The `data:` lines joined with `\n`.
    pub data: String,
    /// The last event id at dispatch time (`id:` persists across events), if any was set.
    pub id: Option<String>,
}

/// What the decoder yields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SseItem {
    /// A complete event.
    Event(SseEvent),
    /// An event larger than the limit was discarded.
    Oversized,
}

/// The longest start of a line that [`data_value_start`] needs: a byte-order mark and `data: `.
const DATA_HEAD_MAX: usize = 3 + 6;

/// `line` without the byte-order mark that may open the stream (only its first line, before
/// any line ended: `started` false).
fn without_bom(line: &[u8], started: bool) -> &[u8] {
    if started {
        line
    } else {
        line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line)
    }
}

/// Where the value of a `data:` line starts (after one space), once `line` — the start of a line,
/// at most [`DATA_HEAD_MAX`] bytes — is long enough to tell; `None` when it is not a `data:` line
/// or cannot tell yet.
fn data_value_start(line: &[u8], started: bool) -> Option<usize> {
    let field = without_bom(line, started);
    if field.len() < 6 || !field.starts_with(b"data:") {
        return None;
    }
    Some(line.len() - field.len() + 5 + usize::from(field[5] == b' '))
}

/// The stream ended in the middle of an event (`SSE stream ended unexpectedly`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incomplete;

/// The incremental decoder.
#[derive(Debug)]
pub struct SseDecoder {
    /// Bytes of the current, unterminated line.
    line: Vec<u8>,
    /// The current line has bytes (possibly discarded ones): its end is not a blank line.
    line_seen: bool,
    /// The previous chunk ended with CR: an LF that starts the next one belongs to it.
    after_cr: bool,
    /// A line of this stream has ended: a byte-order mark no longer opens it (set at each line
    /// end, cleared by `finish` for a resumed stream).
    started: bool,
    /// The current line is a `data:` line whose value goes straight into `data` (its first
    /// bytes, up to the value, were in `line`): a large value is copied once, not twice.
    in_data: bool,
    /// The event's data so far: bytes, read as UTF-8 (invalid bytes replaced) when the event is
    /// dispatched. Replacing per line or once is the same, as a line end is ASCII.
    data: Vec<u8>,
    has_data: bool,
    event: String,
    last_id: Option<String>,
    retry: Option<u64>,
    /// Bytes the current event holds so far.
    size: usize,
    max: usize,
    /// Skipping the rest of an oversized event, up to its blank line.
    discarding: bool,
    /// Lines were seen since the last dispatch (for [`SseDecoder::finish`]).
    in_event: bool,
    ready: std::collections::VecDeque<SseItem>,
}

impl SseDecoder {
    /// A decoder that discards events larger than `max_event_bytes`.
    pub fn new(max_event_bytes: usize) -> Self {
        SseDecoder {
            line: Vec::new(),
            line_seen: false,
            after_cr: false,
            started: false,
            in_data: false,
            data: Vec::new(),
            has_data: false,
            event: String::new(),
            last_id: None,
            retry: None,
            size: 0,
            max: max_event_bytes,
            discarding: false,
            in_event: false,
            ready: Default::default(),
        }
    }

    /// The last `retry:` value in milliseconds, if the server sent one.
    pub fn retry(&self) -> Option<u64> {
        self.retry
    }

    /// The last event id (for `Last-Event-ID` when resuming).
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_id.as_deref()
    }

    /// Feeds bytes; complete events are then available from [`SseDecoder::next_item`].
    pub fn push(&mut self, mut bytes: &[u8]) {
        if bytes.is_empty() {
            return; // an empty chunk must not end the wait for the LF of a CRLF
        }
        if self.after_cr {
            self.after_cr = false;
            if let Some(rest) = bytes.strip_prefix(b"\n") {
                bytes = rest;
            }
        }
        while !bytes.is_empty() {
            match memchr::memchr2(b'\n', b'\r', bytes) {
                Some(pos) => {
                    self.take_line_part(&bytes[..pos]);
                    let mut line = std::mem::take(&mut self.line);
                    if std::mem::take(&mut self.in_data) {
                        // its value is in `data` already
                    } else if self.line_seen {
                        self.on_line(&line);
                    } else {
                        self.dispatch(); // a blank line ends the event
                    }
                    self.line_seen = false;
                    // A byte-order mark opens the stream, not a later line.
                    self.started = true;
                    line.clear();
                    self.line = line;
                    if bytes[pos] == b'\r' {
                        match bytes.get(pos + 1) {
                            Some(b'\n') => bytes = &bytes[pos + 2..],
                            Some(_) => bytes = &bytes[pos + 1..],
                            None => {
                                self.after_cr = true;
                                bytes = &[];
                            }
                        }
                    } else {
                        bytes = &bytes[pos + 1..];
                    }
                }
                None => {
                    self.take_line_part(bytes);
                    bytes = &[];
                }
            }
        }
    }

    /// The next complete item, if any.
    pub fn next_item(&mut self) -> Option<SseItem> {
        self.ready.pop_front()
    }

    /// At end of stream: `Err(Incomplete)` if an event (or a line) was cut off. The last event
    /// id and `retry:` survive, so the decoder can read a resumed stream next (which may open
    /// with a byte-order mark of its own).
    pub fn finish(&mut self) -> Result<(), Incomplete> {
        let cut = self.line_seen || self.in_event;
        self.after_cr = false;
        self.in_data = false;
        self.started = false;
        self.line.clear();
        self.line_seen = false;
        self.reset_event();
        if cut { Err(Incomplete) } else { Ok(()) }
    }

    fn take_line_part(&mut self, mut part: &[u8]) {
        if part.is_empty() {
            return;
        }
        self.line_seen = true;
        if self.discarding {
            return;
        }
        self.size += part.len();
        if self.size > self.max {
            self.discard();
            return;
        }
        if self.in_data {
            self.data.extend_from_slice(part);
            return;
        }
        // A line's first bytes tell whether it is a `data:` line: once they do, its value goes
        // straight into `data`.
        if self.line.len() < DATA_HEAD_MAX {
            let head = (DATA_HEAD_MAX - self.line.len()).min(part.len());
            self.line.extend_from_slice(&part[..head]);
            part = &part[head..];
            if let Some(start) = data_value_start(&self.line, self.started) {
                self.in_event = true;
                self.in_data = true;
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.has_data = true;
                self.data.extend_from_slice(&self.line[start..]);
                self.data.extend_from_slice(part);
                self.line.clear();
                return;
            }
        }
        self.line.extend_from_slice(part);
    }

    fn discard(&mut self) {
        self.discarding = true;
        self.in_event = true;
        self.in_data = false;
        self.line.clear();
        self.data.clear();
        self.has_data = false;
    }

    /// A non-blank line (empty here only when it was discarded).
    fn on_line(&mut self, line: &[u8]) {
        // A byte-order mark may open the stream; it is not part of the first field name.
        let line = without_bom(line, self.started);
        if self.discarding || line.is_empty() || line[0] == b':' {
            return; // comments do not open an event
        }
        self.in_event = true;
        let (field, value) = match memchr::memchr(b':', line) {
            Some(i) => {
                let v = &line[i + 1..];
                (&line[..i], v.strip_prefix(b" ").unwrap_or(v))
            }
            None => (line, &b""[..]),
        };
        match field {
            b"data" => {
                if self.has_data {
                    self.data.push(b'\n');
                }
                self.data.extend_from_slice(value);
                self.has_data = true;
            }
            b"event" => self.event = String::from_utf8_lossy(value).into_owned(),
            b"id" if !value.contains(&0) => {
                self.last_id = Some(String::from_utf8_lossy(value).into_owned());
            }
            b"retry" if !value.is_empty() && value.iter().all(u8::is_ascii_digit) => {
                self.retry = std::str::from_utf8(value).ok().and_then(|v| v.parse().ok());
            }
            _ => {}
        }
    }

    fn dispatch(&mut self) {
        if self.discarding {
            self.ready.push_back(SseItem::Oversized);
        } else if self.has_data {
            let event = if self.event.is_empty() {
                "message".to_string()
            } else {
                std::mem::take(&mut self.event)
            };
            // Valid UTF-8 (the usual case) is checked by the fast validator; only invalid text
            // pays for the replacing one (measured: 8 MiB of data, ~15% of the I/O thread's time
            // in `from_utf8_lossy`'s chunk iterator).
            let data = String::from_utf8(std::mem::take(&mut self.data))
                .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned());
            self.ready.push_back(SseItem::Event(SseEvent {
                event,
                data,
                id: self.last_id.clone(),
            }));
        }
        self.reset_event();
    }

    fn reset_event(&mut self) {
        self.data.clear();
        self.has_data = false;
        self.event.clear();
        self.size = 0;
        self.discarding = false;
        self.in_event = false;
    }
}

/// The decoder's core property, for the fuzz target (`fuzz/`), its corpus replay (`tests/`) and
/// the randomized test: decoding `data` whole or cut at the points its first bytes choose gives
/// the same items and the same end; the line buffer never exceeds the limit. Panics otherwise.
#[doc(hidden)]
pub fn check_chunking(data: &[u8]) {
    let (head, stream) = data.split_at(data.len().min(3));
    let max = [8, 64, 1 << 20][head.first().map_or(0, |b| *b as usize % 3)];
    let decode = |cuts: &[usize]| {
        let mut d = SseDecoder::new(max);
        let mut items = Vec::new();
        let mut at = 0;
        for &cut in cuts.iter().chain(std::iter::once(&stream.len())) {
            let cut = cut.clamp(at, stream.len());
            d.push(&stream[at..cut]);
            assert!(d.line.len() <= max, "line buffer over the limit");
            items.extend(std::iter::from_fn(|| d.next_item()));
            at = cut;
        }
        (items, d.finish())
    };
    let whole = decode(&[]);
    let cuts: Vec<usize> = head
        .iter()
        .skip(1)
        .map(|b| *b as usize * stream.len() / 256)
        .collect();
    let mut sorted = cuts.clone();
    sorted.sort_unstable();
    assert_eq!(decode(&sorted), whole, "cut at {sorted:?}");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode_in(chunks: &[&[u8]], max: usize) -> (Vec<SseItem>, Result<(), Incomplete>) {
        let mut d = SseDecoder::new(max);
        let mut out = Vec::new();
        for c in chunks {
            d.push(c);
            out.extend(std::iter::from_fn(|| d.next_item()));
        }
        let end = d.finish();
        (out, end)
    }

    fn ev(event: &str, data: &str, id: Option<&str>) -> SseItem {
        SseItem::Event(SseEvent {
            event: event.into(),
            data: data.into(),
            id: id.map(Into::into),
        })
    }

    #[test]
    fn every_line_ending_form() {
        for sep in ["\n", "\r", "\r\n"] {
            let text = format!("data: a{sep}data:b{sep}{sep}event: x{sep}data: c{sep}{sep}");
            let (items, end) = decode_in(&[text.as_bytes()], 1 << 20);
            assert_eq!(
                items,
                vec![ev("message", "a\nb", None), ev("x", "c", None)],
                "{sep:?}"
            );
            assert_eq!(end, Ok(()));
        }
    }

    #[test]
    fn data_is_utf8_with_invalid_bytes_replaced_and_characters_whole_across_chunks() {
        // "é" split between two chunks stays one character; an invalid byte is U+FFFD.
        let (items, end) = decode_in(&[b"data: caf\xc3", b"\xa9 \xff!\n\n"], 1 << 20);
        assert_eq!(items, vec![ev("message", "café \u{fffd}!", None)]);
        assert_eq!(end, Ok(()));
        // A character cut by a line end is two replacements, as the stream decoded before its
        // lines are split (the WHATWG order) gives; so is one cut by the event's end.
        let (items, _) = decode_in(
            &[b"data: a\xe2\x98\ndata: \x83b\n\ndata: \xf0\x9f\n\n"],
            1 << 20,
        );
        assert_eq!(
            items,
            vec![
                ev("message", "a\u{fffd}\n\u{fffd}b", None),
                ev("message", "\u{fffd}", None)
            ]
        );
    }

    #[test]
    fn a_byte_order_mark_opens_a_stream_only_at_its_start() {
        let (items, _) = decode_in(&[b"\xEF\xBB", b"\xBFdata: a\n\n"], 1 << 20);
        assert_eq!(items, vec![ev("message", "a", None)]);
        // After a blank line it is part of the field's name: not `data`.
        let (items, _) = decode_in(&[b"\n\xEF\xBB\xBFdata: a\n\ndata: b\n\n"], 1 << 20);
        assert_eq!(items, vec![ev("message", "b", None)]);
        // A resumed stream (after `finish`) may open with one of its own.
        let mut d = SseDecoder::new(1 << 20);
        d.push(b"\xEF\xBB\xBFid: 1\ndata: a\n\n");
        assert_eq!(d.finish(), Ok(()));
        d.push(b"\xEF\xBB\xBFdata: b\n\n");
        let items: Vec<_> = std::iter::from_fn(|| d.next_item()).collect();
        assert_eq!(
            items,
            vec![ev("message", "a", Some("1")), ev("message", "b", Some("1"))]
        );
    }

    #[test]
    fn comments_ids_retry_and_odd_fields() {
        let text = ": keep-alive\nid: 7\nretry: 1500\nretry: soon\nfoo: bar\ndata\ndata:  two spaces\n\nid\ndata: x\n\n";
        let mut d = SseDecoder::new(1 << 20);
        d.push(text.as_bytes());
        let items: Vec<_> = std::iter::from_fn(|| d.next_item()).collect();
        assert_eq!(
            items,
            vec![
                ev("message", "\n two spaces", Some("7")),
                ev("message", "x", Some(""))
            ]
        );
        assert_eq!(d.retry(), Some(1500));
        assert_eq!(d.last_event_id(), Some(""));
    }

    #[test]
    fn an_event_without_data_is_not_dispatched_but_its_id_sticks() {
        let (items, _) = decode_in(&[b"id: 3\nevent: ping\n\ndata: y\n\n"], 1 << 20);
        assert_eq!(items, vec![ev("message", "y", Some("3"))]);
    }

    #[test]
    fn split_at_every_byte_boundary() {
        let text = "\u{feff}event: endpoint\r\ndata: /messages?s=1\r\n\r\nid: 9\rdata: {\"jsonrpc\":\"2.0\",\r\ndata: \"id\":\"é\"}\r\r: c\n\ndata: last\n\n";
        let bytes = text.as_bytes();
        let (whole, _) = decode_in(&[bytes], 1 << 20);
        assert_eq!(
            whole,
            vec![
                ev("endpoint", "/messages?s=1", None),
                ev("message", "{\"jsonrpc\":\"2.0\",\n\"id\":\"é\"}", Some("9")),
                ev("message", "last", Some("9")),
            ]
        );
        for cut in 0..=bytes.len() {
            let (items, end) = decode_in(&[&bytes[..cut], &bytes[cut..]], 1 << 20);
            assert_eq!(items, whole, "cut at {cut}");
            assert_eq!(end, Ok(()));
        }
        for cut in 1..bytes.len() - 1 {
            let (items, _) = decode_in(
                &[&bytes[..cut], &bytes[cut..cut + 1], &bytes[cut + 1..]],
                1 << 20,
            );
            assert_eq!(items, whole, "cuts at {cut}, {}", cut + 1);
        }
    }

    #[test]
    fn end_of_stream_inside_an_event_is_incomplete() {
        assert_eq!(decode_in(&[b"data: x\n"], 1024).1, Err(Incomplete));
        assert_eq!(decode_in(&[b"data: x"], 1024).1, Err(Incomplete));
        assert_eq!(decode_in(&[b"data: x\n\n"], 1024).1, Ok(()));
        assert_eq!(decode_in(&[b""], 1024).1, Ok(()));
        assert_eq!(decode_in(&[b"data: x\n\n: keep-alive\n"], 1024).1, Ok(()));
        assert_eq!(
            decode_in(&[b"data: x\n\n: keep-al"], 1024).1,
            Err(Incomplete)
        );
    }

    #[test]
    fn oversized_events_are_discarded_while_streaming() {
        let mut d = SseDecoder::new(64);
        d.push(b"data: ");
        for _ in 0..1000 {
            d.push(&[b'x'; 100]);
            assert!(d.line.len() <= 64);
        }
        d.push(b"\ndata: more\n\ndata: ok\n\n");
        let items: Vec<_> = std::iter::from_fn(|| d.next_item()).collect();
        assert_eq!(items, vec![SseItem::Oversized, ev("message", "ok", None)]);
    }

    /// The decoder's reading, line by line on a whole stream with no size limit: what it gives
    /// however it takes its lines in (a `data:` value straight into the event's data or not).
    fn by_lines(mut rest: &[u8]) -> Vec<SseItem> {
        let mut items = Vec::new();
        let (mut data, mut has_data, mut event) = (Vec::new(), false, String::new());
        let (mut last_id, mut started) = (None, false);
        while let Some(pos) = rest.iter().position(|b| matches!(b, b'\n' | b'\r')) {
            let mut line = &rest[..pos];
            let crlf = rest[pos] == b'\r' && rest.get(pos + 1) == Some(&b'\n');
            rest = &rest[pos + 1 + usize::from(crlf)..];
            let first = !std::mem::replace(&mut started, true);
            if line.is_empty() {
                if has_data {
                    items.push(SseItem::Event(SseEvent {
                        event: if event.is_empty() {
                            "message".into()
                        } else {
                            event.clone()
                        },
                        data: String::from_utf8_lossy(&data).into_owned(),
                        id: last_id.clone(),
                    }));
                }
                (data, has_data, event) = (Vec::new(), false, String::new());
                continue;
            }
            if first {
                line = line.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(line);
            }
            if line.is_empty() || line[0] == b':' {
                continue;
            }
            let (field, value) = match line.iter().position(|b| *b == b':') {
                Some(i) => (
                    &line[..i],
                    line[i + 1..].strip_prefix(b" ").unwrap_or(&line[i + 1..]),
                ),
                None => (line, &b""[..]),
            };
            match field {
                b"data" => {
                    if has_data {
                        data.push(b'\n');
                    }
                    data.extend_from_slice(value);
                    has_data = true;
                }
                b"event" => event = String::from_utf8_lossy(value).into_owned(),
                b"id" if !value.contains(&0) => {
                    last_id = Some(String::from_utf8_lossy(value).into_owned());
                }
                _ => {}
            }
        }
        items
    }

    /// A deterministic fuzz-style check (stable toolchain): random SSE-like streams, random
    /// chunkings; the events never depend on where the chunks are cut, are what a line-by-line
    /// reading gives, nothing panics, and the line buffer never exceeds the limit.
    #[test]
    fn random_streams_decode_the_same_however_they_are_cut() {
        const PIECES: &[&[u8]] = &[
            b"data",
            b"data:",
            b"data: ",
            b"event:",
            b"id:",
            b"retry:",
            b"12",
            b":",
            b" ",
            b"\r",
            b"\n",
            b"\r\n",
            b"x",
            b"{\"a\":1}",
            b"\xc3\xa9",
            b"\xff",
            b"\0",
            b"\xEF\xBB\xBF",
        ];
        let mut seed = 0x9E37_79B9_7F4A_7C15u64;
        let mut rand = move |n: usize| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            (seed % n as u64) as usize
        };
        for round in 0..2000 {
            let mut stream = Vec::new();
            for _ in 0..rand(60) {
                stream.extend_from_slice(PIECES[rand(PIECES.len())]);
            }
            let max = [8, 64, 1 << 20][round % 3];
            let (whole, whole_end) = decode_in(&[&stream], max);
            if max == 1 << 20 {
                assert_eq!(whole, by_lines(&stream), "round {round}: {stream:?}");
            }
            let mut chunks = Vec::new();
            let mut at = 0;
            while at < stream.len() {
                let n = 1 + rand(stream.len() - at);
                chunks.push(&stream[at..at + n]);
                at += n;
            }
            let mut d = SseDecoder::new(max);
            let mut items = Vec::new();
            for c in &chunks {
                d.push(c);
                assert!(d.line.len() <= max, "round {round}");
                items.extend(std::iter::from_fn(|| d.next_item()));
            }
            assert_eq!(items, whole, "round {round}: {stream:?} cut as {chunks:?}");
            assert_eq!(d.finish(), whole_end, "round {round}");
        }
    }
}
#[cfg(test)]
mod fuzz_regressions {
    /// Found by `cargo fuzz run sse`: an empty chunk between a CR and its LF made the LF a blank
    /// line (dispatching, or losing, an unfinished event).
    #[test]
    fn empty_chunk_between_cr_and_lf() {
        super::check_chunking(&[255, 255, 255, 234, 48, 192, 13, 10]);
        let mut d = super::SseDecoder::new(1024);
        d.push(b"data: x\r");
        d.push(b"");
        d.push(b"\n");
        assert!(
            d.next_item().is_none(),
            "CRLF is one line end, not a blank line"
        );
        d.push(b"\n");
        assert!(d.next_item().is_some());
    }
}
