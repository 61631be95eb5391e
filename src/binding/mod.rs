//! The only module that imports napi: thin convert → delegate → convert. Events cross to
//! JavaScript in batches of JSON text ([`sink`]); errors cross as JSON descriptors that `core.js`
//! turns into `Error` objects ([`errors`]).

pub mod config;
mod errors;
mod http;
mod sink;
mod stdio;

use napi_derive::napi;

use crate::transport::{OutgoingRequest, ProgressReset};

/// Terminates every server process group this addon started (SIGTERM, a short grace, SIGKILL).
/// `core.js` calls it when the host process exits.
#[napi]
pub fn kill_all_children() {
    crate::runtime::kill_all_children();
}

/// A JS number of milliseconds as a deadline: rounded up; NaN, 0 and negatives are 0 (at once).
fn millis(ms: f64) -> u64 {
    if ms.is_nan() || ms <= 0.0 {
        0
    } else {
        ms.ceil().min(u64::MAX as f64) as u64
    }
}

/// A JS request id (from `core.js`'s counter) as ours; anything else is 0 (no such request).
fn as_id(id: f64) -> u64 {
    if id.is_finite() && id > 0.0 {
        id as u64
    } else {
        0
    }
}

/// The reply to a server→client request from JS: `error` (JSON text) wins, else `result`, else `{}`.
fn reply_outcome<'a>(
    result: &'a Option<String>,
    error: &'a Option<String>,
) -> Result<&'a str, &'a str> {
    match (error, result) {
        (Some(e), _) => Err(e.as_str()),
        (None, Some(r)) => Ok(r.as_str()),
        (None, None) => Ok("{}"),
    }
}

/// One line of the `sendRequests` batch: `<id> <timeoutMs> <method JSON string><params JSON>`.
fn parse_request_line(line: &str) -> Option<OutgoingRequest<'_>> {
    let (id, rest) = line.split_once(' ')?;
    let (timeout, rest) = rest.split_once(' ')?;
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'"') {
        return None;
    }
    let mut i = 1;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    let end = (i < bytes.len()).then_some(i + 1)?;
    // `<timeout>` or `<timeout>r` or `<timeout>r<maxTotal>` (reset on progress).
    let (timeout, progress) = match timeout.split_once('r') {
        Some((t, max)) => (
            t,
            Some(ProgressReset {
                max_total_ms: max
                    .parse::<f64>()
                    .ok()
                    .filter(|m| *m >= 0.0)
                    .map(|m| m.ceil() as u64),
            }),
        ),
        None => (timeout, None),
    };
    let timeout_ms = millis(timeout.parse::<f64>().unwrap_or(f64::NAN));
    Some(OutgoingRequest {
        id: id.parse().ok()?,
        method_json: &rest[..end],
        params: Some(&rest[end..]).filter(|p| !p.is_empty()),
        timeout_ms,
        progress,
    })
}

#[cfg(test)]
mod tests {
    use super::parse_request_line;

    #[test]
    fn request_lines() {
        let r = parse_request_line(r#"12 30000 "tools/call"{"name":"x"}"#).unwrap();
        assert_eq!(
            (r.id, r.timeout_ms, r.method_json, r.params),
            (12, 30000, r#""tools/call""#, Some(r#"{"name":"x"}"#))
        );
        let r = parse_request_line(r#"3 0.5 "a\"b\\"{}"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.method_json, r.params),
            (1, r#""a\"b\\""#, Some("{}"))
        );
        let r = parse_request_line(r#"4 NaN "m""#).unwrap();
        assert_eq!((r.timeout_ms, r.params), (0, None));
        assert!(parse_request_line(r#"x 1 "m"{}"#).is_none());
        let r = parse_request_line(r#"5 100r250 "m"{}"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.progress.unwrap().max_total_ms),
            (100, Some(250))
        );
        assert_eq!(
            parse_request_line(r#"5 100r "m"{}"#)
                .unwrap()
                .progress
                .unwrap()
                .max_total_ms,
            None
        );
        assert!(
            parse_request_line(r#"5 100 "m"{}"#)
                .unwrap()
                .progress
                .is_none()
        );
        assert!(parse_request_line(r#"1 1 "unterminated"#).is_none());
    }
}
