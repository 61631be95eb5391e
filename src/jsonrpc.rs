//! JSON-RPC 2.0 wire types: outgoing frames (exact key order of SPEC 3.1) and the classification of
//! incoming messages. Payloads stay raw JSON text ([`RawValue`]) so that they cross to JavaScript
//! without being rebuilt.

use serde::Deserialize;
use serde_json::value::RawValue;

/// An incoming message, classified by SPEC 3.1.
#[derive(Debug)]
pub enum Incoming<'a> {
    /// `id` present and not null, no `method`: the answer to one of our requests.
    Response {
        /// The id as sent by the server.
        id: &'a RawValue,
        /// `Err(error)` when `error` is truthy, else `Ok(result)` (possibly missing).
        outcome: Result<Option<&'a RawValue>, &'a RawValue>,
    },
    /// `method` present, `id` missing or null.
    Notification {
        /// The notification method.
        method: String,
        /// Its params, when present.
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

#[derive(Deserialize)]
struct Wire<'a> {
    #[serde(borrow, default)]
    id: Option<&'a RawValue>,
    #[serde(default)]
    method: Option<String>,
    #[serde(borrow, default)]
    params: Option<&'a RawValue>,
    #[serde(borrow, default)]
    result: Option<&'a RawValue>,
    #[serde(borrow, default)]
    error: Option<&'a RawValue>,
}

/// Classifies one complete JSON text (one JSONL line or one SSE data payload).
pub fn classify(text: &[u8]) -> Incoming<'_> {
    let first = text.iter().find(|b| !b.is_ascii_whitespace());
    if first != Some(&b'{') {
        // Non-objects are ignored when they are JSON, dropped when they are not; both are skipped.
        return match serde_json::from_slice::<serde::de::IgnoredAny>(text) {
            Ok(_) => Incoming::Ignored,
            Err(_) => Incoming::Malformed,
        };
    }
    let wire: Wire<'_> = match serde_json::from_slice(text) {
        Ok(w) => w,
        Err(_) => return Incoming::Malformed,
    };
    // `Option<&RawValue>` reads `null` as `None`, so `id: null` counts as absent.
    match (wire.id, wire.method) {
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

/// Our request ids are decimal strings of a per-transport counter. Returns the counter value an
/// incoming id refers to: the exact string, or a number that equals it once stringified.
pub fn our_id(id: &RawValue) -> Option<u64> {
    let text = id.get().trim();
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"')) {
        let n: u64 = inner.parse().ok()?;
        return (n.to_string() == inner).then_some(n);
    }
    if let Ok(n) = text.parse::<u64>() {
        return Some(n);
    }
    let f: f64 = text.parse().ok()?;
    (f >= 0.0 && f.fract() == 0.0 && f < 9_007_199_254_740_992.0).then_some(f as u64)
}

/// Finds the top-level `id` in the first bytes of a message too large to parse, so that the request
/// it answers can be failed. Tracks nesting and strings, so an `id` inside `result` is not taken.
pub fn sniff_id(prefix: &[u8]) -> Option<u64> {
    let skip_ws = |mut i: usize| {
        while i < prefix.len() && prefix[i].is_ascii_whitespace() {
            i += 1;
        }
        i
    };
    let (mut depth, mut i, mut expect_key) = (0usize, 0usize, false);
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
                    if &prefix[start..j] == b"id" {
                        return sniff_value(&prefix[skip_ws(i)..]);
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

/// `{"jsonrpc":"2.0","id":"<id>","method":<method>,"params":<params ?? {}>}` plus `\n`.
/// `params` must be JSON text (the binding gets it from `JSON.stringify`).
pub fn request_frame(id: u64, method: &str, params: Option<&str>) -> Vec<u8> {
    request_frame_json(
        id,
        &serde_json::to_string(method).expect("string serialization"),
        params,
    )
}

/// [`request_frame`] with the method already as JSON string text (`"\"tools/call\""`).
pub fn request_frame_json(id: u64, method_json: &str, params: Option<&str>) -> Vec<u8> {
    let mut out = Vec::with_capacity(48 + method_json.len() + params.map_or(2, str::len));
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":\"");
    out.extend_from_slice(id.to_string().as_bytes());
    out.extend_from_slice(b"\",\"method\":");
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

/// The `notifications/cancelled` frame for one of our requests.
pub fn cancelled_frame(id: u64, reason: &str) -> Vec<u8> {
    let mut params = String::from("{\"requestId\":\"");
    params.push_str(&id.to_string());
    params.push_str("\",\"reason\":");
    params.push_str(&serde_json::to_string(reason).expect("string serialization"));
    params.push('}');
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
mod tests {
    use super::*;

    fn raw(s: &str) -> Box<RawValue> {
        RawValue::from_string(s.to_string()).unwrap()
    }

    #[test]
    fn frames_have_the_exact_key_order() {
        assert_eq!(
            String::from_utf8(request_frame(7, "tools/list", None)).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":\"7\",\"method\":\"tools/list\",\"params\":{}}\n"
        );
        assert_eq!(
            String::from_utf8(notification_frame("a\"b", Some("{\"x\":1}"))).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"a\\\"b\",\"params\":{\"x\":1}}\n"
        );
        assert_eq!(
            String::from_utf8(cancelled_frame(3, "Request timeout after 5ms")).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"3\",\"reason\":\"Request timeout after 5ms\"}}\n"
        );
        assert_eq!(
            String::from_utf8(reply_frame("5", Err(METHOD_NOT_FOUND))).unwrap(),
            "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n"
        );
    }

    #[test]
    fn classification() {
        assert!(matches!(classify(b"5"), Incoming::Ignored));
        assert!(matches!(classify(b"null"), Incoming::Ignored));
        assert!(matches!(classify(b"[1,2]"), Incoming::Ignored));
        assert!(matches!(classify(b"\"x\""), Incoming::Ignored));
        assert!(matches!(classify(b"not json"), Incoming::Malformed));
        assert!(matches!(classify(b"{\"id\":"), Incoming::Malformed));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"n","id":null}"#),
            Incoming::Notification { params: None, .. }
        ));
        assert!(matches!(
            classify(br#"{"jsonrpc":"2.0","method":"ping","id":4}"#),
            Incoming::Request { .. }
        ));
        match classify(br#"{"id":"1","result":{"a":1},"error":null}"#) {
            Incoming::Response {
                outcome: Ok(Some(r)),
                ..
            } => assert_eq!(r.get(), "{\"a\":1}"),
            other => panic!("{other:?}"),
        }
        match classify(br#"{"id":"1","error":{"code":1}}"#) {
            Incoming::Response {
                outcome: Err(e), ..
            } => assert_eq!(e.get(), "{\"code\":1}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            classify(br#"{"id":"1","error":0}"#),
            Incoming::Response {
                outcome: Ok(None),
                ..
            }
        ));
    }

    #[test]
    fn ids_match_as_strings_or_stringified_numbers() {
        assert_eq!(our_id(&raw("\"12\"")), Some(12));
        assert_eq!(our_id(&raw("12")), Some(12));
        assert_eq!(our_id(&raw("12.0")), Some(12));
        assert_eq!(our_id(&raw("\"012\"")), None);
        assert_eq!(our_id(&raw("\"abc\"")), None);
        assert_eq!(our_id(&raw("-1")), None);
    }

    #[test]
    fn sniffs_the_id_of_a_truncated_message() {
        assert_eq!(
            sniff_id(br#"{"jsonrpc":"2.0","id":"42","result":{"text":"xxxx"#),
            Some(42)
        );
        assert_eq!(
            sniff_id(br#"{"result":{"content":[{"id":"7"}]},"id": 9, "x"#),
            Some(9)
        );
        assert_eq!(sniff_id(br#"{ "id" : 5 ,"#), Some(5));
        assert_eq!(sniff_id(br#"{"result":"has \"id\":\"3\" inside"#), None);
        assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":"4"#), None);
    }

    #[test]
    fn truthiness() {
        for falsy in ["null", "false", "0", "-0", "0.0", "\"\""] {
            assert!(!is_truthy(&raw(falsy)), "{falsy}");
        }
        for truthy in ["1", "{}", "[]", "\"0\"", "true", "-2"] {
            assert!(is_truthy(&raw(truthy)), "{truthy}");
        }
    }
}
