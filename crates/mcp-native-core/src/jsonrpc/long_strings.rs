//! The long string values of a large message, cut out of its text so that they can cross to
//! JavaScript as strings of their own: an ASCII string without escapes of a line of 1 MiB or more
//! is the very bytes read (an external Latin-1 string, never copied), any other is copied or
//! decoded here, off the JS thread.
//! What is left — the skeleton, a placeholder where each long string was — is small, and its
//! `JSON.parse` followed by putting the strings back gives what `JSON.parse` of the whole text
//! gives, without that parse copying megabytes of text on the JS thread.
//!
//! Conservative: a long string is cut out only when its value is certain — UTF-8 without control
//! characters, valid escapes, surrogates in pairs. It crosses as Latin-1 when all its characters
//! are below U+0100, else as UTF-16. Anything else (bytes that are not UTF-8, control characters,
//! bad escapes, a lone surrogate) stays in the skeleton, where `JSON.parse` reads it, or rejects
//! it, as before. A text whose structure the walk cannot follow is not split.

use bytes::Bytes;

use crate::framing::jsonl::LONG_LINE;

/// One step of the path from the message's root to a value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// A member of an object, by its (decoded) key.
    Key(String),
    /// An element of an array.
    Index(usize),
}

/// A long string cut out of the message.
#[derive(Debug)]
pub struct LongString {
    /// Where its value sits.
    pub path: Vec<Step>,
    /// Its characters.
    pub text: Text,
}

/// The characters of a long string, as a JS engine holds them.
#[derive(Debug, PartialEq, Eq)]
pub enum Text {
    /// One byte per character, all below U+0100: the bytes read (printable ASCII without
    /// escapes), or decoded.
    Latin1(Bytes),
    /// UTF-16 code units, for a string with characters from U+0100 up (decoded).
    Utf16(Vec<u16>),
}

/// A message split by [`split_long_strings`].
#[derive(Debug)]
pub struct Split {
    /// The message's text with each long string replaced by `"\u0000{tag}:{k}"` (`k` its index).
    pub skeleton: Vec<u8>,
    /// The long strings, in the order of the text.
    pub strings: Vec<LongString>,
}

/// Splits the long strings (at least `min_len` bytes between the quotes) out of `line`, one JSON
/// value. `None` when it has none, when its structure cannot be followed, or when more than
/// `max_skeleton` bytes would stay (a message mostly made of small values is left to one
/// `JSON.parse`: the walk would then cost more than it saves). `tag` makes the placeholders
/// unguessable by a server (see [`Split::skeleton`]); it must be JSON-safe (e.g. hex digits).
pub fn split_long_strings(
    line: &Bytes,
    min_len: usize,
    max_skeleton: usize,
    tag: &str,
) -> Option<Split> {
    let mut walk = Walk {
        line,
        min_len,
        max_skeleton,
        tag,
        stack: Vec::new(),
        skeleton: Vec::new(),
        copied: 0,
        strings: Vec::new(),
    };
    walk.run()?;
    if walk.strings.is_empty() {
        return None;
    }
    walk.skeleton.extend_from_slice(&line[walk.copied..]);
    Some(Split {
        skeleton: walk.skeleton,
        strings: walk.strings,
    })
}

/// The deepest a long string may sit to be cut out (an MCP text result's is 4:
/// `result.content[i].text`); a deeper one stays with `JSON.parse`.
pub const MAX_DEPTH: usize = 32;

/// The most key text a long string's path may have (raw, before decoding); a string under longer
/// keys stays with `JSON.parse`.
pub const MAX_PATH_KEY_BYTES: usize = 1024;

/// An open container: an object with the byte range of its current key, or an array with the
/// index of its current element.
enum Open {
    Object(std::ops::Range<usize>),
    Array(usize),
}

struct Walk<'a> {
    line: &'a Bytes,
    min_len: usize,
    max_skeleton: usize,
    tag: &'a str,
    stack: Vec<Open>,
    skeleton: Vec<u8>,
    /// Bytes of `line` already in the skeleton (or cut).
    copied: usize,
    strings: Vec<LongString>,
}

impl Walk<'_> {
    fn run(&mut self) -> Option<()> {
        let line: &[u8] = self.line;
        let mut i = skip_ws(line, 0);
        loop {
            // A value starts at `i`.
            // What the skeleton would hold up to here.
            if self.skeleton.len() + (i - self.copied) > self.max_skeleton {
                return None;
            }
            match *line.get(i)? {
                b'{' => {
                    i = skip_ws(line, i + 1);
                    if line.get(i) == Some(&b'}') {
                        i += 1;
                    } else {
                        let (key, next) = key(line, i)?;
                        self.stack.push(Open::Object(key));
                        i = next;
                        continue;
                    }
                }
                b'[' => {
                    i = skip_ws(line, i + 1);
                    if line.get(i) == Some(&b']') {
                        i += 1;
                    } else {
                        self.stack.push(Open::Array(0));
                        continue;
                    }
                }
                b'"' => {
                    let (end, escaped) = string_end(line, i)?;
                    let len = end - (i + 1);
                    if len >= self.min_len {
                        self.consider(i, end, escaped);
                    }
                    i = end + 1;
                }
                _ => {
                    let len = line[i..]
                        .iter()
                        .position(|b| {
                            matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r')
                        })
                        .unwrap_or(line.len() - i);
                    if len == 0 {
                        return None;
                    }
                    i += len;
                }
            }
            // After a value: close what ends here, then move to the next value.
            loop {
                i = skip_ws(line, i);
                let Some(open) = self.stack.last_mut() else {
                    return (i == line.len()).then_some(());
                };
                match (line.get(i)?, open) {
                    (b',', Open::Array(n)) => {
                        *n += 1;
                        i = skip_ws(line, i + 1);
                        break;
                    }
                    (b',', Open::Object(k)) => {
                        let (key, next) = key(line, skip_ws(line, i + 1))?;
                        *k = key;
                        i = next;
                        break;
                    }
                    (b'}', Open::Object(_)) | (b']', Open::Array(_)) => {
                        self.stack.pop();
                        i += 1;
                    }
                    _ => return None,
                }
            }
        }
    }

    /// Cuts out the string whose quotes are at `open` and `close`, when its value is certain.
    fn consider(&mut self, open: usize, close: usize, escaped: bool) {
        if self.stack.is_empty() {
            return; // the message itself: left to JSON.parse
        }
        let content = &self.line[open + 1..close];
        let text = if !escaped && printable_ascii(content) {
            // The very bytes when the line has a buffer of its own; else a copy, since a kept
            // string would keep the buffer of the lines read around it too.
            Text::Latin1(if self.line.len() >= LONG_LINE {
                self.line.slice(open + 1..close)
            } else {
                Bytes::copy_from_slice(content)
            })
        } else {
            match decode(content) {
                Some(text) => text,
                None => return,
            }
        };
        let Some(path) = self.path() else { return };
        self.skeleton
            .extend_from_slice(&self.line[self.copied..open]);
        let k = self.strings.len();
        self.skeleton
            .extend_from_slice(format!("\"\\u0000{}:{k}\"", self.tag).as_bytes());
        self.copied = close + 1;
        self.strings.push(LongString { path, text });
    }

    /// The path to the value being read: `None` when a key cannot be decoded, or when the path
    /// is deeper than [`MAX_DEPTH`] or its keys longer than [`MAX_PATH_KEY_BYTES`] (a path is
    /// made, sent and walked once per string: a server must not make that cost grow with the
    /// product of nesting and strings).
    fn path(&self) -> Option<Vec<Step>> {
        if self.stack.len() > MAX_DEPTH {
            return None;
        }
        let key_bytes: usize = self
            .stack
            .iter()
            .map(|open| match open {
                Open::Object(key) => key.len(),
                Open::Array(_) => 0,
            })
            .sum();
        if key_bytes > MAX_PATH_KEY_BYTES {
            return None;
        }
        self.stack
            .iter()
            .map(|open| match open {
                Open::Array(n) => Some(Step::Index(*n)),
                Open::Object(key) => decode_key(&self.line[key.clone()]).map(Step::Key),
            })
            .collect()
    }
}

fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && matches!(line[i], b' ' | b'\t' | b'\n' | b'\r') {
        i += 1;
    }
    i
}

/// The closing quote of the string that opens at `start`, and whether it has escapes.
fn string_end(line: &[u8], start: usize) -> Option<(usize, bool)> {
    let mut i = start + 1;
    let mut escaped = false;
    loop {
        i += memchr::memchr2(b'"', b'\\', line.get(i..)?)?;
        if line[i] == b'"' {
            return Some((i, escaped));
        }
        escaped = true;
        i += 2; // an escape: the next byte is never the end
    }
}

/// A key at `i` (its quotes included) and its `:`: the range of its text between the quotes,
/// and where its value starts.
fn key(line: &[u8], i: usize) -> Option<(std::ops::Range<usize>, usize)> {
    if line.get(i) != Some(&b'"') {
        return None;
    }
    let (end, _) = string_end(line, i)?;
    let colon = skip_ws(line, end + 1);
    if line.get(colon) != Some(&b':') {
        return None;
    }
    Some((i + 1..end, skip_ws(line, colon + 1)))
}

/// A key's text as `JSON.parse` reads it (`None` for what it would reject).
fn decode_key(raw: &[u8]) -> Option<String> {
    if !raw.contains(&b'\\') && raw.iter().all(|&b| b >= 0x20) {
        return std::str::from_utf8(raw).ok().map(str::to_owned);
    }
    let mut quoted = Vec::with_capacity(raw.len() + 2);
    quoted.push(b'"');
    quoted.extend_from_slice(raw);
    quoted.push(b'"');
    serde_json::from_slice(&quoted).ok()
}

/// Whether every byte is printable ASCII (or DEL): then the bytes are the string's value.
fn printable_ascii(s: &[u8]) -> bool {
    every_byte(s, |b| (0x20..0x80).contains(&b))
}

/// Whether `f` holds for every byte: in blocks without an early exit inside, so that the check
/// of each is vectorised.
fn every_byte(s: &[u8], f: impl Fn(u8) -> bool) -> bool {
    s.chunks(64)
        .all(|c| c.iter().fold(true, |ok, &b| ok & f(b)))
}

/// The value of a string's content: `None` unless its raw bytes are UTF-8 without control
/// characters and its escapes are valid, surrogates in pairs (what `JSON.parse` would do with a
/// lone one, or with bytes that are not UTF-8, stays with it).
fn decode(s: &[u8]) -> Option<Text> {
    let mut out = Decoded {
        latin1: Vec::with_capacity(s.len()),
        wide: None,
    };
    let mut i = 0;
    while i < s.len() {
        // A backslash is never inside a UTF-8 sequence (their bytes are 0x80 and up).
        let run = memchr::memchr(b'\\', &s[i..]).unwrap_or(s.len() - i);
        let plain = &s[i..i + run];
        if printable_ascii(plain) {
            out.ascii(plain);
        } else {
            out.text(plain)?;
        }
        i += run;
        if i == s.len() {
            break;
        }
        let c = match *s.get(i + 1)? {
            b'"' => '"',
            b'\\' => '\\',
            b'/' => '/',
            b'b' => '\u{8}',
            b'f' => '\u{c}',
            b'n' => '\n',
            b'r' => '\r',
            b't' => '\t',
            b'u' => {
                let high = hex4(s.get(i + 2..i + 6)?)?;
                i += 4;
                match high {
                    0xd800..=0xdbff => {
                        // The low half must follow as an escape of its own.
                        if s.get(i + 2..i + 4)? != b"\\u" {
                            return None;
                        }
                        let low = hex4(s.get(i + 4..i + 8)?)?;
                        if !(0xdc00..=0xdfff).contains(&low) {
                            return None;
                        }
                        i += 6;
                        char::from_u32(0x10000 + ((high - 0xd800) << 10) + (low - 0xdc00))?
                    }
                    _ => char::from_u32(high)?, // `None` for a lone low half
                }
            }
            _ => return None,
        };
        out.push(c);
        i += 2;
    }
    Some(match out.wide {
        Some(wide) => Text::Utf16(wide),
        None => Text::Latin1(Bytes::from(out.latin1)),
    })
}

/// Four hex digits.
fn hex4(hex: &[u8]) -> Option<u32> {
    if !hex.iter().all(u8::is_ascii_hexdigit) {
        return None;
    }
    u32::from_str_radix(std::str::from_utf8(hex).ok()?, 16).ok()
}

/// Decoded characters: Latin-1 until the first one from U+0100 up, then UTF-16.
struct Decoded {
    latin1: Vec<u8>,
    wide: Option<Vec<u16>>,
}

impl Decoded {
    fn ascii(&mut self, run: &[u8]) {
        match &mut self.wide {
            None => self.latin1.extend_from_slice(run),
            Some(wide) => wide.extend(run.iter().map(|&b| u16::from(b))),
        }
    }

    /// Raw text without escapes: its ASCII stretches are widened in bulk, the rest decoded
    /// character by character. `None` when it is not UTF-8 or has a control character.
    fn text(&mut self, run: &[u8]) -> Option<()> {
        if !every_byte(run, |b| b >= 0x20) {
            return None;
        }
        let mut rest = std::str::from_utf8(run).ok()?;
        while !rest.is_empty() {
            let ascii = rest.bytes().position(|b| b >= 0x80).unwrap_or(rest.len());
            self.ascii(&rest.as_bytes()[..ascii]);
            rest = &rest[ascii..];
            let other = rest.bytes().position(|b| b < 0x80).unwrap_or(rest.len());
            // Split at ASCII bytes, which are always character boundaries (checked once, above).
            for c in rest[..other].chars() {
                self.push(c);
            }
            rest = &rest[other..];
        }
        Some(())
    }

    fn push(&mut self, c: char) {
        if self.wide.is_none() {
            if let Ok(byte) = u8::try_from(u32::from(c)) {
                self.latin1.push(byte);
                return;
            }
            let mut wide = Vec::with_capacity(self.latin1.capacity());
            wide.extend(self.latin1.iter().map(|&b| u16::from(b)));
            self.latin1 = Vec::new();
            self.wide = Some(wide);
        }
        if let Some(wide) = &mut self.wide {
            let mut units = [0u16; 2];
            wide.extend_from_slice(c.encode_utf16(&mut units));
        }
    }
}

#[cfg(test)]
mod tests;
