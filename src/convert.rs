//! The one place where values from JavaScript become Rust values: numbers (milliseconds, request
//! ids), transport configs (read by `client::json_config`, the core's one reader of that
//! shape), the headers of `setHeaders` and the per-tick request batch.

pub use mcp_native_core::client::json_config::{http_config, millis, stdio_config};
use mcp_native_core::transport::{OutgoingRequest, ProgressReset};

/// Headers from `core.js` as the JSON of `Object.entries(headers)` (`[["name", "value"], …]`, in
/// order), for `setHeaders`: anything else is an invalid config.
pub fn header_list(json: &str) -> Result<Vec<(String, String)>, mcp_native_core::error::Error> {
    serde_json::from_str(json).map_err(|_| {
        mcp_native_core::error::Error::InvalidConfig(
            "\"headers\" must be an object of strings".into(),
        )
    })
}

/// A JS request id (from `core.js`'s counter) as ours; anything else is 0 (no such request).
pub fn as_id(id: f64) -> u64 {
    if id.is_finite() && id > 0.0 && id.fract() == 0.0 {
        id as u64
    } else {
        0
    }
}

/// One line of the `sendRequests` batch: `<id> <timeoutMs> <method JSON string><params JSON>`,
/// where the timeout may carry `r` (reset on progress) and `r<maxTotal>`, and an empty id is the
/// one after `previous` (the id of the line before; `core.js` writes the digits only where the
/// ids skip, as JS makes every id's text in V8's number cache or with a JSON.stringify). `Err`
/// carries the id when it could be read, so that the request fails instead of vanishing.
pub fn request_line(previous: Option<u64>, line: &str) -> Result<OutgoingRequest<'_>, Option<u64>> {
    let (id, rest) = line.split_once(' ').ok_or(None)?;
    let id: u64 = if id.is_empty() {
        previous.and_then(|p| p.checked_add(1)).ok_or(None)?
    } else {
        id.parse().map_err(|_| None)?
    };
    let bad = Some(id);
    if id > mcp_native_core::jsonrpc::MAX_REQUEST_NUMBER {
        return Err(bad);
    }
    let (timeout, rest) = rest.split_once(' ').ok_or(bad)?;
    let bytes = rest.as_bytes();
    if bytes.first() != Some(&b'"') {
        return Err(bad);
    }
    let mut i = 1;
    while i < bytes.len() && bytes[i] != b'"' {
        i += if bytes[i] == b'\\' { 2 } else { 1 };
    }
    if i >= bytes.len() {
        return Err(bad);
    }
    let end = i + 1;
    let params = Some(&rest[end..]).filter(|p| !p.is_empty());
    if params.is_some_and(|p| !(p.starts_with('{') || p.starts_with('['))) {
        return Err(bad);
    }
    let number = |t: &str| t.parse::<f64>().map_err(|_| bad);
    let (timeout_ms, progress) = match timeout.split_once('r') {
        Some((t, max)) => (
            millis(number(t)?),
            Some(ProgressReset {
                max_total_ms: if max.is_empty() {
                    None
                } else {
                    Some(millis(number(max)?))
                },
            }),
        ),
        None => (millis(number(timeout)?), None),
    };
    let method_json = &rest[..end];
    // The one place where the public transports' behaviour is set from the method (SPEC 3.1,
    // 3.3): `initialize` opens a session and is never cancelled.
    let opens_session = method_json == "\"initialize\"";
    Ok(OutgoingRequest {
        id,
        method_json,
        params,
        timeout_ms,
        progress,
        cancellable: !opens_session,
        opens_session,
        headers: Vec::new(),
        reply: mcp_native_core::transport::Reply::Event,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use mcp_native_core::transport::MAX_TIMEOUT_MS;

    #[test]
    fn request_lines() {
        let r = request_line(None, r#"12 30000 "tools/call"{"name":"x"}"#).unwrap();
        assert_eq!(
            (r.id, r.timeout_ms, r.method_json, r.params),
            (12, 30000, r#""tools/call""#, Some(r#"{"name":"x"}"#))
        );
        assert!(r.cancellable && !r.opens_session);
        let init = request_line(None, r#"1 100 "initialize"{}"#).unwrap();
        assert!(!init.cancellable && init.opens_session);
        let r = request_line(None, r#"3 0.5 "a\"b\\"{}"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.method_json, r.params),
            (1, r#""a\"b\\""#, Some("{}"))
        );
        let r = request_line(None, r#"4 NaN "m""#).unwrap();
        assert_eq!((r.timeout_ms, r.params), (0, None));
        let r = request_line(None, r#"5 100r250 "m"{}"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.progress.unwrap().max_total_ms),
            (100, Some(250))
        );
        let r = request_line(None, r#"5 100.2r "m"[1]"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.progress.unwrap().max_total_ms),
            (101, None)
        );
        assert!(
            request_line(None, r#"5 100 "m"{}"#)
                .unwrap()
                .progress
                .is_none()
        );
        // Lines that cannot be sent fail their request (when the id can be read), never vanish.
        let err = |line| request_line(None, line).err().flatten();
        assert_eq!(err(r#"x 1 "m"{}"#), None);
        assert_eq!(err(r#"1 1 "unterminated"#), Some(1));
        assert_eq!(err(r#"2 1 "m"undefined"#), Some(2));
        assert_eq!(err(r#"3 x "m"{}"#), Some(3));
        assert_eq!(err(r#"4 1rx "m"{}"#), Some(4));
        assert!(request_line(None, "7").is_err());
        // A number whose id on the wire a JS number would not hold exactly is refused.
        let max = mcp_native_core::jsonrpc::MAX_REQUEST_NUMBER;
        assert!(request_line(None, &format!(r#"{max} 1 "m"{{}}"#)).is_ok());
        let over = format!(r#"{} 1 "m"{{}}"#, max + 1);
        assert_eq!(request_line(None, &over).err().flatten(), Some(max + 1));
        // An empty id is the one after the line before's; with none before, the line is unread.
        assert_eq!(request_line(Some(41), r#" 1 "m"{}"#).unwrap().id, 42);
        assert_eq!(request_line(None, r#" 1 "m"{}"#).err(), Some(None));
        assert_eq!(
            request_line(Some(u64::MAX), r#" 1 "m"{}"#).err(),
            Some(None)
        );
        let over = request_line(Some(max), r#" 1 "m"{}"#);
        assert_eq!(over.err().flatten(), Some(max + 1));
    }

    #[test]
    fn header_lists() {
        let list = header_list(r#"[["Authorization","Bearer t"],["X-A","1"]]"#).unwrap();
        assert_eq!(
            list,
            [
                ("Authorization".to_string(), "Bearer t".to_string()),
                ("X-A".to_string(), "1".to_string())
            ]
        );
        for bad in [r#"{"a":"b"}"#, r#"[["a",1]]"#, r#"[["a"]]"#, "null"] {
            assert_eq!(
                header_list(bad).unwrap_err().to_string(),
                "Invalid config: \"headers\" must be an object of strings"
            );
        }
    }

    #[test]
    fn numbers_convert_one_way() {
        assert_eq!(millis(1500.5), 1501);
        assert_eq!(millis(-1.0), 0);
        assert_eq!(millis(f64::NAN), 0);
        assert_eq!(millis(f64::INFINITY), MAX_TIMEOUT_MS);
        assert_eq!(
            (as_id(3.0), as_id(3.5), as_id(-1.0), as_id(f64::NAN)),
            (3, 0, 0, 0)
        );
    }
}
