//! The properties of [`classify`] (and [`classify_str`]), [`our_id`], [`sniff_id`], [`is_truthy`] and the frame builders,
//! checked against a reference built on `serde_json::Value` with the semantics of `JSON.parse`
//! (the last of duplicate members wins, `null` is a value, numbers are read correctly rounded —
//! serde_json's own float parsing can be an ulp off without its `float_roundtrip` feature, so
//! the reference reads number literals with Rust's parser). Shared by the fuzz target `jsonrpc`
//! (`fuzz/`) and its corpus replay (`tests/fuzz_corpus.rs`).

use std::collections::HashMap;

use serde::de::{Deserialize, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use super::*;

/// Checks every property on `data` (as a message text, as a frame's content, and as the seed of
/// frames we build); panics on the first that does not hold.
pub fn check_message(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let reference = reference_class(&text);
    if let Some(expected) = &reference {
        let got = observe(&classify(data));
        if let Ok(text) = std::str::from_utf8(data) {
            assert_eq!(&got, expected, "classify");
            assert_eq!(&observe(&classify_str(text)), expected, "classify_str");
        } else {
            // JavaScript would read these bytes with U+FFFD in place of invalid UTF-8; the crate
            // may drop the message instead, but must not see anything else in it.
            assert!(
                got == Class::Malformed || &got == expected,
                "classify: {got:?}"
            );
        }
    }
    if let Ok(raw) = RawValue::from_string(text.to_string())
        && serde_json::from_str::<Value>(raw.get()).is_ok()
    {
        assert_eq!(our_id(&raw), reference_id(&raw), "our_id");
        assert_eq!(is_truthy(&raw), truthy(&raw), "is_truthy");
    }
    match &reference {
        Some(class) if *class != Class::Malformed && std::str::from_utf8(data).is_ok() => {
            check_sniffing(data, class)
        }
        _ => {}
    }
    check_skim(data, reference.as_ref());
    check_long_strings(data);
    check_builders(data, &text);
}

/// The tag of the placeholders [`check_long_strings`] uses.
const TAG: &str = "5eed";

/// What JavaScript does with a split (lib/core.js `putLongStrings`): parses the skeleton, then
/// puts each string where its placeholder still is (a later duplicate key may have replaced the
/// placeholder or a container on its path: then nothing is put). `None` when the skeleton is
/// not JSON.
pub fn rebuild_split(split: &long_strings::Split, tag: &str) -> Option<Value> {
    let mut root: Value = serde_json::from_slice(&split.skeleton).ok()?;
    for (k, s) in split.strings.iter().enumerate() {
        let mut node = Some(&mut root);
        for step in &s.path {
            node = node.and_then(|n| match step {
                long_strings::Step::Key(key) => n.get_mut(key.as_str()),
                long_strings::Step::Index(i) => n.get_mut(*i),
            });
        }
        if let Some(slot) = node
            && *slot == Value::String(format!("\u{0}{tag}:{k}"))
        {
            *slot = Value::String(match &s.text {
                long_strings::Text::Latin1(bytes) => bytes.iter().map(|&b| char::from(b)).collect(),
                long_strings::Text::Utf16(units) => String::from_utf16(units).ok()?,
            });
        }
    }
    Some(root)
}

/// A text split into its long strings (here: of 2 bytes and more) and a skeleton rebuilds to
/// what parsing it whole gives; a text that is not JSON leaves a skeleton that is not JSON.
fn check_long_strings(data: &[u8]) {
    if std::str::from_utf8(data).is_err() {
        return; // JS decodes both alike (U+FFFD), which serde_json does not model
    }
    let line = bytes::Bytes::copy_from_slice(data);
    let Some(split) = long_strings::split_long_strings(&line, 2, usize::MAX, TAG) else {
        return;
    };
    match serde_json::from_slice::<Value>(data) {
        Ok(whole) => assert_eq!(rebuild_split(&split, TAG), Some(whole), "long strings"),
        Err(_) => assert!(
            serde_json::from_slice::<Value>(&split.skeleton).is_err(),
            "long strings: the skeleton of a text that is not JSON parses"
        ),
    }
}

/// What a message is, as plain values (`None` for a missing member).
#[derive(Debug, PartialEq)]
enum Class {
    Malformed,
    Ignored,
    Notification(String, Option<Value>),
    Request(Value, String, Option<Value>),
    Response(Value, Result<Option<Value>, Value>),
}

fn observe(incoming: &Incoming<'_>) -> Class {
    let value = |raw: &RawValue| serde_json::from_str::<Value>(raw.get()).expect("valid JSON");
    match incoming {
        Incoming::Malformed => Class::Malformed,
        Incoming::Ignored => Class::Ignored,
        Incoming::Notification { method, params } => {
            Class::Notification(method.clone(), params.map(value))
        }
        Incoming::Request { id, method, params } => {
            Class::Request(value(id), method.clone(), params.map(value))
        }
        Incoming::Response { id, outcome } => Class::Response(
            value(id),
            match outcome {
                Ok(result) => Ok(result.map(value)),
                Err(error) => Err(value(error)),
            },
        ),
    }
}

/// SPEC 3.1 on the value `JSON.parse` would give; `None` when serde_json cannot build that value
/// (nesting deeper than its limit, numbers beyond `f64`), where there is nothing to compare.
fn reference_class(text: &str) -> Option<Class> {
    let value: Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(_) if serde_json::from_str::<IgnoredAny>(text).is_ok() => return None,
        Err(_) => return Some(Class::Malformed),
    };
    let Value::Object(mut object) = value else {
        return Some(Class::Ignored);
    };
    let raw: HashMap<String, Box<RawValue>> = serde_json::from_str(text).expect("an object");
    let id = object.remove("id").filter(|id| !id.is_null());
    let method = match object.remove("method") {
        None | Some(Value::Null) => None,
        Some(Value::String(method)) => Some(method),
        // A decision of the crate: a method that is not a string makes the message malformed.
        Some(_) => return Some(Class::Malformed),
    };
    let params = object.remove("params");
    Some(match (id, method) {
        (Some(id), Some(method)) => Class::Request(id, method, params),
        (None, Some(method)) => Class::Notification(method, params),
        (Some(id), None) => {
            let error = object.remove("error").filter(|_| truthy(&raw["error"]));
            Class::Response(id, error.map_or_else(|| Ok(object.remove("result")), Err))
        }
        (None, None) => Class::Ignored,
    })
}

/// JavaScript truthiness.
fn truthy(raw: &RawValue) -> bool {
    match serde_json::from_str(raw.get()).expect("valid JSON") {
        Value::Null => false,
        Value::Bool(b) => b,
        Value::Number(_) => number(raw) != 0.0,
        Value::String(s) => !s.is_empty(),
        Value::Array(_) | Value::Object(_) => true,
    }
}

/// A number literal's value, as JavaScript reads it (correctly rounded).
fn number(raw: &RawValue) -> f64 {
    raw.get().parse().expect("a JSON number is a Rust float")
}

/// The counter value an id refers to: a number id is the counter, a string id the decimal string
/// of [`WIRE_ID_BASE`] plus it (escaped or not), and either form is read for either (at or above
/// the base: a string id's); a number matches when it is a whole number below 2^53 (where
/// JavaScript prints it as those digits), or an integer literal that fits a `u64`.
fn reference_id(id: &RawValue) -> Option<u64> {
    let wire = match serde_json::from_str(id.get()).expect("valid JSON") {
        Value::String(s) => s.parse::<u64>().ok().filter(|n| n.to_string() == s),
        Value::Number(_) => id.get().parse::<u64>().ok().or_else(|| {
            let f = number(id);
            (f >= 0.0 && f.fract() == 0.0 && f < 9_007_199_254_740_992.0).then_some(f as u64)
        }),
        _ => None,
    };
    wire.map(|w| {
        if w >= WIRE_ID_BASE {
            w - WIRE_ID_BASE
        } else {
            w
        }
    })
}

/// The top-level members of an object in order, duplicates kept.
struct Members(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(Members(members))
            }
        }
        d.deserialize_map(V)
    }
}

/// [`sniff_id`] on prefixes of a valid message finds nothing, or the id of the request the
/// message answers: never the id of a request, notification or anything else.
fn check_sniffing(text: &[u8], class: &Class) {
    let Ok(Members(members)) = serde_json::from_slice::<Members>(text) else {
        for cut in cuts(text.len()) {
            assert_eq!(
                sniff_id(&text[..cut]),
                None,
                "sniff_id in a non-object at {cut}"
            );
        }
        return;
    };
    let has = |key: &str| members.iter().any(|(k, _)| k == key);
    let method = members
        .iter()
        .any(|(k, v)| k == "method" && v.get() != "null");
    let ids: Vec<&RawValue> = members
        .iter()
        .filter(|(k, _)| k == "id")
        .map(|m| &*m.1)
        .collect();
    let allowed: Vec<u64> = if ids.len() > 1 || (method && (has("result") || has("error"))) {
        // A prefix cannot know which of several ids `JSON.parse` keeps, nor that a `method`
        // follows the `result` it has seen: any of the ids may come out.
        ids.iter().filter_map(|id| reference_id(id)).collect()
    } else if let (Class::Response(..), Some(id)) = (class, ids.last()) {
        reference_id(id).into_iter().collect()
    } else {
        Vec::new()
    };
    for cut in cuts(text.len()) {
        if let Some(id) = sniff_id(&text[..cut]) {
            assert!(
                allowed.contains(&id),
                "sniff_id found {id} at {cut}, allowed {allowed:?}"
            );
        }
    }
}

/// [`skim_answer`] finds an id only in an answer with a result to that id: on any text that
/// `JSON.parse` reads (valid UTF-8 JSON), what it finds is what [`classify`] and the reference
/// see; on any other text it may find something (its consumer's `JSON.parse` then fails).
fn check_skim(data: &[u8], reference: Option<&Class>) {
    let Some(id) = skim_answer(data) else { return };
    if std::str::from_utf8(data).is_err() {
        return;
    }
    match reference {
        Some(Class::Malformed) | None => {}
        Some(Class::Response(found, Ok(_))) => {
            let raw = RawValue::from_string(found.to_string()).expect("an id");
            assert_eq!(reference_id(&raw), Some(id), "skim_answer's id");
        }
        Some(other) => panic!("skim_answer found {id} in {other:?}"),
    }
}

/// Prefix lengths to try: all of them for short texts, about 256 spread evenly for long ones.
fn cuts(len: usize) -> impl Iterator<Item = usize> {
    let step = (len / 256).max(1);
    (0..=len).step_by(step).chain(std::iter::once(len))
}

/// The frames we build parse back to what went in, are one line each, and classify as what
/// they are, in both id formats; a plain response with one of our ids is found by [`sniff_id`].
fn check_builders(data: &[u8], text: &str) {
    // A request's number is at most MAX_REQUEST_NUMBER (the binding refuses the rest).
    let n = data
        .iter()
        .take(8)
        .fold(0u64, |n, &b| n << 8 | u64::from(b))
        % (MAX_REQUEST_NUMBER + 1);
    for format in [IdFormat::Number, IdFormat::String] {
        check_builders_in(n, format, text);
    }
}

/// [`check_builders`] for request number `n`, its ids written in `format`.
fn check_builders_in(n: u64, format: IdFormat, text: &str) {
    let wire = wire_id(n, format);
    // The id as JSON text and as a value, in this format.
    let (id_json, id_value) = match format {
        IdFormat::Number => (wire.to_string(), Value::from(wire)),
        IdFormat::String => (format!("\"{wire}\""), Value::String(wire.to_string())),
    };
    let method = text;
    let params = RawValue::from_string(text.to_string())
        .ok()
        .filter(|_| !text.contains('\n'));
    let params_value = params
        .as_ref()
        .map_or(Value::Object(Default::default()), |p| {
            serde_json::from_str(p.get()).unwrap_or(Value::Null)
        });
    let representable = params
        .as_ref()
        .is_none_or(|p| serde_json::from_str::<Value>(p.get()).is_ok());
    let one_line = |frame: &[u8]| {
        let (line, end) = frame.split_at(frame.len() - 1);
        assert_eq!(end, b"\n");
        assert!(!line.contains(&b'\n'), "a frame is one line");
        line.to_vec()
    };

    let request = one_line(&request_frame(
        n,
        format,
        method,
        params.as_ref().map(|p| p.get()),
    ));
    let head = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"method\":");
    assert!(request.starts_with(head.as_bytes()), "request key order");
    for cut in cuts(request.len()) {
        assert_eq!(
            sniff_id(&request[..cut]),
            None,
            "sniff_id in our request at {cut}"
        );
    }
    match classify(&request) {
        Incoming::Request { id, .. } => assert_eq!(our_id(id), Some(n)),
        other => panic!("request classified as {other:?}"),
    }

    let notification = one_line(&notification_frame(
        method,
        params.as_ref().map(|p| p.get()),
    ));
    let cancelled = one_line(&cancelled_frame(n, format, text));
    let cancel_params = serde_json::json!({ "requestId": id_value.clone(), "reason": text });
    if representable {
        assert_eq!(
            observe(&classify(&request)),
            Class::Request(id_value.clone(), method.into(), Some(params_value.clone()))
        );
        assert_eq!(
            observe(&classify(&notification)),
            Class::Notification(method.into(), Some(params_value.clone()))
        );
    }
    assert_eq!(
        observe(&classify(&cancelled)),
        Class::Notification("notifications/cancelled".into(), Some(cancel_params))
    );

    // A server's answer to request `n`: found in any prefix that reaches its `result`.
    let result = params.as_ref().map_or("{}", |p| p.get());
    let known = format!("{{\"jsonrpc\":\"2.0\",\"id\":{id_json},\"result\":");
    let answer = format!("{known}{result}}}");
    for cut in cuts(answer.len()).filter(|&cut| cut >= known.len()) {
        assert_eq!(
            sniff_id(&answer.as_bytes()[..cut]),
            Some(n),
            "answer cut at {cut}"
        );
    }
    // The answer with the id in either form (a server may turn one into the other).
    for reply_id in [format!("\"{wire}\""), wire.to_string()] {
        let reply = one_line(&reply_frame(&reply_id, Ok(result)));
        match classify(&reply) {
            Incoming::Response {
                id,
                outcome: Ok(Some(r)),
            } => {
                assert_eq!(our_id(id), Some(n));
                assert_eq!(r.get(), result.trim());
            }
            other => panic!("reply classified as {other:?}"),
        }
        let refusal = one_line(&reply_frame(&reply_id, Err(METHOD_NOT_FOUND)));
        match classify(&refusal) {
            Incoming::Response {
                id,
                outcome: Err(e),
            } => {
                assert_eq!(our_id(id), Some(n), "either form matches");
                assert_eq!(e.get(), METHOD_NOT_FOUND);
            }
            other => panic!("refusal classified as {other:?}"),
        }
    }
    for number in [
        format!("{wire}.0"),
        format!("{wire}e0"),
        format!("{wire}.000E+0"),
    ] {
        let raw = RawValue::from_string(number).expect("a JSON number");
        assert_eq!(our_id(&raw), Some(n), "{raw}");
    }
}
