//! JSON-RPC 2.0 wire types: outgoing frames (exact key order of SPEC 3.1) and the classification of
//! incoming messages. Payloads stay raw JSON text ([`RawValue`]) so that they cross to JavaScript
//! without being rebuilt.

use std::fmt;

use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;

// The properties the `jsonrpc` fuzz target and `tests/fuzz_corpus.rs` check.
pub mod long_strings;
#[doc(hidden)]
pub mod properties;
mod skim;
#[doc(hidden)]
pub use properties::check_message;
pub use skim::skim_answer;

/// An incoming message, classified by SPEC 3.1.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// `id` present and not null, no `method`: the answer to one of our requests.
    Response {
        /// The id as sent by the server.
        id: &'a RawValue,
        /// `Err(error)` when `error` is truthy, else `Ok(result)` (`None` when missing; `null`
        /// is `Some`, as `JSON.parse` gives it).
        outcome: Result<Option<&'a RawValue>, &'a RawValue>,
    },
    /// `method` present, `id` missing or null.
    Notification {
        /// The notification method.
        method: String,
        /// Its params, when present (`null` included).
        params: Option<&'a RawValue>,
    },
    /// `method` and a non-null `id`: a server→client request that needs an answer.
    Request {
        /// The id to echo back, raw.
        id: &'a RawValue,
        /// The request method.
        method: String,
        /// Its params, when present.
        params: Option<&'a RawValue>,
    },
    /// Valid JSON that is not a message object (`5`, `null`, `"x"`, arrays, `{}`).
    Ignored,
    /// Not JSON at all (or a message object of the wrong shape): dropped by the transports.
    Malformed,
}

/// The members of a message object that classification reads, as `JSON.parse` sees them: the
/// last of duplicate keys wins (a derived `Deserialize` would refuse the message), and `null` is
/// a value (an `Option` field would read it as missing) except in `id` and `method`, where SPEC
/// 3.1 makes it mean none.
#[derive(Default)]
struct Wire<'a> {
    id: Option<&'a RawValue>,
    /// Raw: only the last `method` has to be a string.
    method: Option<&'a RawValue>,
    params: Option<&'a RawValue>,
    result: Option<&'a RawValue>,
    error: Option<&'a RawValue>,
}

/// A key of a message object.
enum Key {
    Id,
    Method,
    Params,
    Result,
    Error,
    Other,
}

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Name;
        impl Visitor<'_> for Name {
            type Value = Key;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key, E> {
                Ok(match key {
                    "id" => Key::Id,
                    "method" => Key::Method,
                    "params" => Key::Params,
                    "result" => Key::Result,
                    "error" => Key::Error,
                    _ => Key::Other,
                })
            }
        }
        d.deserialize_identifier(Name)
    }
}

impl<'de> Deserialize<'de> for Wire<'de> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Wire<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a message object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Wire<'de>, A::Error> {
                let mut wire = Wire::default();
                while let Some(key) = map.next_key()? {
                    match key {
                        Key::Id => wire.id = map.next_value()?,
                        Key::Method => wire.method = map.next_value()?,
                        Key::Params => wire.params = Some(map.next_value()?),
                        Key::Result => wire.result = Some(map.next_value()?),
                        Key::Error => wire.error = Some(map.next_value()?),
                        Key::Other => {
                            map.next_value::<de::IgnoredAny>()?;
                        }
                    }
                }
                Ok(wire)
            }
        }
        d.deserialize_map(Members)
    }
}

/// The `result` and `error` of a reply body (an HTTP POST's JSON answer), as `JSON.parse` sees
/// them: the last of duplicate keys wins and `null` is a value. `Ok(None)` for valid JSON that
/// is not an object (its `result` is `undefined` in JavaScript); `Err` for text that is not
/// JSON. One pass over the text, which it checks whole.
#[allow(clippy::type_complexity)]
pub fn reply_members(
    text: &[u8],
) -> Result<Option<(Option<&RawValue>, Option<&RawValue>)>, serde_json::Error> {
    let first = text.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        return serde_json::from_slice::<serde::de::IgnoredAny>(text).map(|_| None);
    }
    let wire: Wire<'_> = serde_json::from_slice(text)?;
    Ok(Some((wire.result, wire.error)))
}

/// Classifies one complete JSON text (one JSONL line or one SSE data payload).
pub fn classify(text: &[u8]) -> Incoming<'_> {
    classify_with(text, serde_json::from_slice, |t| {
        serde_json::from_slice::<serde::de::IgnoredAny>(t).is_ok()
    })
}

/// [`classify`] of a text known to be UTF-8 (an SSE event's data): the same, without checking
/// the bytes of its values as UTF-8 again.
pub fn classify_str(text: &str) -> Incoming<'_> {
    classify_with(text, serde_json::from_str, |t| {
        serde_json::from_str::<serde::de::IgnoredAny>(t).is_ok()
    })
}

fn classify_with<'a, T: AsRef<[u8]> + ?Sized>(
    text: &'a T,
    wire: impl FnOnce(&'a T) -> serde_json::Result<Wire<'a>>,
    is_json: impl FnOnce(&'a T) -> bool,
) -> Incoming<'a> {
    let first = text.as_ref().iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        // Non-objects are ignored when they are JSON, dropped when they are not; both are skipped.
        return if is_json(text) {
            Incoming::Ignored
        } else {
            Incoming::Malformed
        };
    }
    let wire: Wire<'a> = match wire(text) {
        Ok(w) => w,
        Err(_) => return Incoming::Malformed,
    };
    let method = match wire
        .method
        .map(|m| serde_json::from_str(m.get()))
        .transpose()
    {
        Ok(method) => method,
        Err(_) => return Incoming::Malformed, // a method that is not a string
    };
    // `id: null` counts as absent (`Wire` reads it as `None`).
    match (wire.id, method) {
        (Some(id), Some(method)) => Incoming::Request {
            id,
            method,
            params: wire.params,
        },
        (None, Some(method)) => Incoming::Notification {
            method,
            params: wire.params,
        },
        (Some(id), None) => Incoming::Response {
            id,
            outcome: match wire.error {
                Some(err) if is_truthy(err) => Err(err),
                _ => Ok(wire.result),
            },
        },
        (None, None) => Incoming::Ignored,
    }
}

/// JavaScript truthiness of a JSON value.
pub fn is_truthy(value: &RawValue) -> bool {
    match value.get().trim() {
        "null" | "false" | "\"\"" => false,
        text if text.starts_with(['-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9']) => {
            text.parse::<f64>().map(|f| f != 0.0).unwrap_or(true)
        }
        _ => true,
    }
}

/// How a transport writes its request ids (the agent's `requestIdFormat`, 18.3.4): a JSON number
/// by default — the request's number as it is, as the official SDKs and the agent send them (some
/// servers answer nothing else: Apple's `xcrun mcpbridge` never answers a string id) — or with
/// `"string"` the decimal string of [`WIRE_ID_BASE`] plus the number.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum IdFormat {
    /// `"id":7`.
    #[default]
    Number,
    /// `"id":"10000000007"`.
    String,
}

impl IdFormat {
    /// `"string"` is [`IdFormat::String`]; anything else (or nothing) the default, as the agent
    /// reads the setting.
    pub fn from_setting(setting: Option<&str>) -> Self {
        if setting == Some("string") {
            IdFormat::String
        } else {
            IdFormat::Number
        }
    }
}

/// What a request's number (a per-transport counter from 1) is offset by in a string id
/// ([`IdFormat::String`]): the id a server sees is the decimal string of [`WIRE_ID_BASE`] plus the
/// number, 11 digits or more. V8's
/// `JSON.parse`, which most MCP servers run on, interns every string value of up to 10
/// characters: an id of 1–10 digits cost such a server a string-table lookup and insertion per
/// request (measured, Node 20: 1.4–2.0 µs to parse a `tools/call` line with `"id":"123456"`
/// against 0.96–1.1 µs with an 11-digit id or a number; the fixture server's CPU per call at 64
/// in flight 3.7–3.8 µs against 3.5 µs). The form of the id is ours to choose (SPEC 3.1); a
/// number that equals it once stringified still matches.
pub const WIRE_ID_BASE: u64 = 10_000_000_000;

/// The highest request number: below [`WIRE_ID_BASE`], so that a number id and a string id never
/// stand for the same number (ten billion requests on one transport: never reached). A request
/// numbered above it is refused where requests are made (`binding::convert::request_line`,
/// `transport::request_on`).
pub const MAX_REQUEST_NUMBER: u64 = WIRE_ID_BASE - 1;

/// The id on the wire of request number `n` (saturating: a direct `Transport::send` of a number
/// over [`MAX_REQUEST_NUMBER`] must not panic).
pub fn wire_id(n: u64, format: IdFormat) -> u64 {
    match format {
        IdFormat::Number => n,
        IdFormat::String => WIRE_ID_BASE.saturating_add(n),
    }
}

/// Returns the request number an incoming id refers to: a number id is the number itself, a
/// string id [`WIRE_ID_BASE`] plus it; either form is taken for either (a server may turn an id
/// into the other: a string that equals the number once stringified, or a number).
pub fn our_id(id: &RawValue) -> Option<u64> {
    our_id_text(id.get())
}

/// [`our_id`] of an id's JSON text.
fn our_id_text(text: &str) -> Option<u64> {
    let n = id_number(text)?;
    Some(if n >= WIRE_ID_BASE {
        n - WIRE_ID_BASE
    } else {
        n
    })
}

/// The number an id's JSON text stands for: a decimal string as `n.to_string()` writes it, or a
/// JSON number that is a whole number a JS number holds exactly. (The request's number is the
/// progress token as it is, see `transport::progress_target`.)
pub fn id_number(text: &str) -> Option<u64> {
    let text = text.trim();
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        // `"\u0031"` is the string `1` to `JSON.parse`: escapes are decoded (rare, so only then).
        let inner: std::borrow::Cow<'_, str> = if inner.contains('\\') {
            serde_json::from_str::<String>(text).ok()?.into()
        } else {
            inner.into()
        };
        let n: u64 = inner.parse().ok()?;
        return (n.to_string() == inner).then_some(n);
    }
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    let f: f64 = text.parse().ok()?;
    (f >= 0.0 && f.fract() == 0.0 && f < 9_007_199_254_740_992.0).then_some(f as u64)
}

/// Finds the id of the request that a message too large to parse answers, in its first bytes, so
/// that the request can be failed. Tracks nesting and strings, so an `id` inside `result` is not
/// taken. Only a response answers: the id counts once a top-level `result` or `error` key is seen,
/// and a top-level `method` means none (a server→client request carries the server's own ids,
/// which may equal ours). As in `JSON.parse`, a later `id` replaces an earlier one.
pub fn sniff_id(prefix: &[u8]) -> Option<u64> {
    let skip_ws = |mut i: usize| {
        while i < prefix.len() && prefix[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let (mut depth, mut i, mut expect_key) = (0usize, 0usize, false);
    let (mut id, mut response) = (None, false);
    while i < prefix.len() {
        match prefix[i] {
            b'"' => {
                let start = i + 1;
                let mut j = start;
                while j < prefix.len() && prefix[j] != b'"' {
                    j += if prefix[j] == b'\\' { 2 } else { 1 };
                }
                if j >= prefix.len() {
                    return None;
                }
                i = j + 1;
                if depth == 1 && expect_key {
                    expect_key = false;
                    let colon = skip_ws(i);
                    if prefix.get(colon) != Some(&b':') {
                        return None;
                    }
                    i = colon + 1;
                    match &prefix[start..j] {
                        b"id" => id = sniff_value(&prefix[skip_ws(i)..]),
                        b"result" | b"error" => response = true,
                        b"method" => return None,
                        _ => {}
                    }
                    if response && id.is_some() {
                        return id;
                    }
                }
                continue;
            }
            b'{' => {
                depth += 1;
                expect_key = depth == 1;
            }
            b'[' => depth += 1,
            b'}' | b']' => depth = depth.saturating_sub(1),
            b',' => expect_key = depth == 1,
            _ => {}
        }
        i += 1;
    }
    None
}

/// A complete string or number at the start of `value`, as one of our ids.
fn sniff_value(value: &[u8]) -> Option<u64> {
    let len = if value.first() == Some(&b'"') {
        value[1..].iter().position(|&b| b == b'"' || b == b'\\')? + 2
    } else {
        value
            .iter()
            .position(|b| !(b.is_ascii_digit() || matches!(b, b'.' | b'-' | b'e' | b'E' | b'+')))?
    };
    let text = std::str::from_utf8(&value[..len]).ok()?;
    our_id(&RawValue::from_string(text.to_string()).ok()?)
}

fn push_json_str(out: &mut Vec<u8>, s: &str) {
    // Writing a &str into a Vec cannot fail.
    serde_json::to_writer(&mut *out, s).expect("string serialization");
}

fn push_params(out: &mut Vec<u8>, params: Option<&str>) {
    out.extend_from_slice(b",\"params\":");
    out.extend_from_slice(params.unwrap_or("{}").as_bytes());
    out.extend_from_slice(b"}\n");
}

/// `{"jsonrpc":"2.0","id":<wire_id(id)>,"method":<method>,"params":<params ?? {}>}` plus `\n`,
/// the id written in `format`. `params` must be JSON text (the binding gets it from
/// `JSON.stringify`).
pub fn request_frame(id: u64, format: IdFormat, method: &str, params: Option<&str>) -> Vec<u8> {
    request_frame_json(
        id,
        format,
        &serde_json::to_string(method).expect("string serialization"),
        params,
    )
}

/// An id as JSON text in `format`.
fn push_id(out: &mut Vec<u8>, id: u64, format: IdFormat) {
    let digits = wire_id(id, format).to_string();
    match format {
        IdFormat::Number => out.extend_from_slice(digits.as_bytes()),
        IdFormat::String => {
            out.push(b'"');
            out.extend_from_slice(digits.as_bytes());
            out.push(b'"');
        }
    }
}

/// [`request_frame`] with the method already as JSON string text (`"\"tools/call\""`).
pub fn request_frame_json(
    id: u64,
    format: IdFormat,
    method_json: &str,
    params: Option<&str>,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(64 + method_json.len() + params.map_or(2, str::len));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    push_id(&mut out, id, format);
    out.extend_from_slice(b",\"method\":");
    out.extend_from_slice(method_json.as_bytes());
    push_params(&mut out, params);
    out
}

/// `{"jsonrpc":"2.0","method":<method>,"params":<params ?? {}>}` plus `\n`.
pub fn notification_frame(method: &str, params: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(40 + method.len() + params.map_or(2, str::len));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":");
    push_json_str(&mut out, method);
    push_params(&mut out, params);
    out
}

/// The `notifications/cancelled` frame for one of our requests (its id as it was sent).
pub fn cancelled_frame(id: u64, format: IdFormat, reason: &str) -> Vec<u8> {
    let mut params = b"{\"requestId\":".to_vec();
    push_id(&mut params, id, format);
    params.extend_from_slice(b",\"reason\":");
    params.extend_from_slice(
        serde_json::to_string(reason)
            .expect("string serialization")
            .as_bytes(),
    );
    params.push(b'}');
    let params = String::from_utf8(params).expect("JSON text is UTF-8");
    notification_frame("notifications/cancelled", Some(&params))
}

/// A reply to a server→client request: `result` when `Ok`, `error` (raw JSON object) when `Err`.
pub fn reply_frame(id: &str, outcome: Result<&str, &str>) -> Vec<u8> {
    let (key, body) = match outcome {
        Ok(result) => ("result", result),
        Err(error) => ("error", error),
    };
    format!("{{\"jsonrpc\":\"2.0\",\"id\":{id},\"{key}\":{body}}}\n").into_bytes()
}

/// The JSON-RPC error object for an unknown server→client method.
pub const METHOD_NOT_FOUND: &str = r#"{"code":-32601,"message":"Method not found"}"#;

#[cfg(test)]
mod fuzz_regressions;
#[cfg(test)]
mod tests;
