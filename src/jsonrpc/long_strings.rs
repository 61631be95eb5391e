//! The long string values of a large message, cut out of its text so that they can cross to
//! JavaScript as strings of their own: an ASCII string without escapes is the very bytes read (an
//! external Latin-1 string, never copied), one with escapes is decoded here, off the JS thread.
//! What is left — the skeleton, a placeholder where each long string was — is small, and its
//! `JSON.parse` followed by putting the strings back gives what `JSON.parse` of the whole text
//! gives, without that parse copying megabytes of text on the JS thread.
//!
//! Conservative: a long string is cut out only when its value is certain — printable ASCII and
//! escapes of characters up to U+00FF (Latin-1). Anything else (raw non-ASCII bytes, other
//! `\u` escapes, control characters, bad escapes) stays in the skeleton, where `JSON.parse` reads
//! it, or rejects it, as before. A text whose structure the walk cannot follow is not split.

use bytes::Bytes;

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
    /// Its characters, one byte each (Latin-1; ASCII unless decoded from `\u00XX` escapes).
    pub latin1: Bytes,
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
        cut: 0,
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
    /// Bytes cut out so far.
    cut: usize,
    strings: Vec<LongString>,
}

impl Walk<'_> {
    fn run(&mut self) -> Option<()> {
        let line: &[u8] = self.line;
        let mut i = skip_ws(line, 0);
        loop {
            // A value starts at `i`.
            if i - self.cut > self.max_skeleton {
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
        let latin1 = if escaped {
            match decode(content) {
                Some(text) => Bytes::from(text),
                None => return,
            }
        } else if printable_ascii(content) {
            self.line.slice(open + 1..close)
        } else {
            return;
        };
        let Some(path) = self.path() else { return };
        self.skeleton
            .extend_from_slice(&self.line[self.copied..open]);
        let k = self.strings.len();
        self.skeleton
            .extend_from_slice(format!("\"\\u0000{}:{k}\"", self.tag).as_bytes());
        self.copied = close + 1;
        self.cut += close + 1 - open;
        self.strings.push(LongString { path, latin1 });
    }

    /// The path to the value being read (`None` when a key cannot be decoded).
    fn path(&self) -> Option<Vec<Step>> {
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
    // Blocks without an early exit inside, so that the check of each is vectorised.
    s.chunks(64)
        .all(|c| c.iter().fold(true, |ok, &b| ok & (0x20..0x80).contains(&b)))
}

/// The value of a string's content with escapes, as Latin-1 bytes: `None` unless every raw byte
/// is printable ASCII and every escape is valid and below U+0100.
fn decode(s: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::with_capacity(s.len());
    let mut i = 0;
    while i < s.len() {
        let run = memchr::memchr(b'\\', &s[i..]).unwrap_or(s.len() - i);
        let plain = &s[i..i + run];
        if !printable_ascii(plain) {
            return None;
        }
        out.extend_from_slice(plain);
        i += run;
        if i == s.len() {
            break;
        }
        let byte = match *s.get(i + 1)? {
            b'"' => b'"',
            b'\\' => b'\\',
            b'/' => b'/',
            b'b' => 0x08,
            b'f' => 0x0c,
            b'n' => b'\n',
            b'r' => b'\r',
            b't' => b'\t',
            b'u' => {
                let hex = std::str::from_utf8(s.get(i + 2..i + 6)?).ok()?;
                if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                    return None;
                }
                let code = u16::from_str_radix(hex, 16).ok()?;
                i += 4;
                u8::try_from(code).ok()?
            }
            _ => return None,
        };
        out.push(byte);
        i += 2;
    }
    Some(out)
}

#[cfg(test)]
mod tests;
