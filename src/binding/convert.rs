//! The one place where values from JavaScript become Rust values: numbers (milliseconds, byte
//! counts, request ids), transport configs and the per-tick request batch. Every config error is
//! [`Error::InvalidConfig`] (code `MCP_INVALID_CONFIG`) with a message that names the field and
//! never repeats its value (a header or env value may be a secret).

use serde_json::{Map, Value};

use crate::error::Error;
use crate::transport::http::{
    DEFAULT_MAX_MESSAGE_BYTES as HTTP_MAX, DEFAULT_TIMEOUT_MS, HttpConfig,
};
use crate::transport::stdio::{
    DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_MESSAGE_BYTES as STDIO_MAX, StdioConfig,
};
use crate::transport::{MAX_TIMEOUT_MS, OutgoingRequest, ProgressReset};

/// A JS number of milliseconds as a deadline: fractions round up; NaN, 0 and negatives are 0
/// (at once); longer than [`MAX_TIMEOUT_MS`] is clamped to it.
pub fn millis(ms: f64) -> u64 {
    if ms.is_nan() || ms <= 0.0 {
        0
    } else {
        (ms.ceil().min(MAX_TIMEOUT_MS as f64)) as u64
    }
}

/// A JS request id (from `core.js`'s counter) as ours; anything else is 0 (no such request).
pub fn as_id(id: f64) -> u64 {
    if id.is_finite() && id > 0.0 && id.fract() == 0.0 {
        id as u64
    } else {
        0
    }
}

fn invalid(field: &str, what: &str) -> Error {
    Error::InvalidConfig(format!("\"{field}\" {what}"))
}

/// The fields of one JS config object (as JSON; `core.js` turns non-finite numbers into their
/// text so that `NaN` is not mistaken for an absent `null`).
struct Fields(Map<String, Value>);

impl Fields {
    fn parse(json: &str) -> Result<Self, Error> {
        match serde_json::from_str(json) {
            Ok(Value::Object(map)) => Ok(Fields(map)),
            _ => Err(Error::InvalidConfig("the config must be an object".into())),
        }
    }

    /// The field, unless absent or `null`.
    fn get(&self, field: &str) -> Option<&Value> {
        self.0.get(field).filter(|v| !v.is_null())
    }

    fn string(&self, field: &str) -> Result<String, Error> {
        self.opt_string(field)?
            .ok_or_else(|| invalid(field, "must be a string"))
    }

    fn opt_string(&self, field: &str) -> Result<Option<String>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(invalid(field, "must be a string")),
        }
    }

    fn opt_bool(&self, field: &str) -> bool {
        matches!(self.get(field), Some(Value::Bool(true)))
    }

    /// A non-negative finite number.
    fn opt_number(&self, field: &str) -> Result<Option<f64>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Number(n)) => match n.as_f64() {
                Some(f) if f.is_finite() && f >= 0.0 => Ok(Some(f)),
                _ => Err(invalid(field, "must be a non-negative number")),
            },
            Some(_) => Err(invalid(field, "must be a non-negative number")),
        }
    }

    fn millis(&self, field: &str, default: u64) -> Result<u64, Error> {
        Ok(self.opt_number(field)?.map_or(default, millis))
    }

    fn bytes(&self, field: &str, default: usize) -> Result<usize, Error> {
        Ok(self
            .opt_number(field)?
            .map_or(default, |b| b.floor().min(usize::MAX as f64) as usize))
    }

    fn string_list(&self, field: &str) -> Result<Vec<String>, Error> {
        match self.get(field) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    scalar_text(v).ok_or_else(|| invalid(field, "must be an array of strings"))
                })
                .collect(),
            Some(_) => Err(invalid(field, "must be an array of strings")),
        }
    }

    /// An object of names to strings (numbers and booleans are taken as their text; `null`
    /// entries are left out), in order.
    fn string_map(&self, field: &str) -> Result<Option<Vec<(String, String)>>, Error> {
        match self.get(field) {
            None => Ok(None),
            Some(Value::Object(map)) => map
                .iter()
                .filter(|(_, v)| !v.is_null())
                .map(|(k, v)| {
                    scalar_text(v).map(|v| (k.clone(), v)).ok_or_else(|| {
                        Error::InvalidConfig(format!("\"{field}.{k}\" must be a string"))
                    })
                })
                .collect::<Result<Vec<_>, _>>()
                .map(Some),
            Some(_) => Err(invalid(field, "must be an object of strings")),
        }
    }
}

/// `String(value)` for the scalars a config may hold where text is meant.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// The stdio transport config from `core.js`: `{ command, args, env, cwd, timeout,
/// maxMessageBytes, killGraceMs, callerReadsStdout }` (`env` already merged over the process's),
/// and its `timeout` (default 30 s).
pub fn stdio_config(json: &str) -> Result<(StdioConfig, u64), Error> {
    let f = Fields::parse(json)?;
    let timeout = f.millis("timeout", DEFAULT_TIMEOUT_MS)?;
    let config = StdioConfig {
        command: f.string("command")?,
        args: f.string_list("args")?,
        env: f.string_map("env")?,
        cwd: f.opt_string("cwd")?,
        max_message_bytes: f.bytes("maxMessageBytes", STDIO_MAX)?,
        kill_grace_ms: f.millis("killGraceMs", DEFAULT_KILL_GRACE_MS)?,
        caller_reads_stdout: f.opt_bool("callerReadsStdout"),
    };
    Ok((config, timeout))
}

/// The HTTP transport config from `core.js`: `{ type, url, headers, timeout, maxMessageBytes }`.
pub fn http_config(json: &str) -> Result<HttpConfig, Error> {
    let f = Fields::parse(json)?;
    let url = f.string("url")?;
    if reqwest::Url::parse(&url).is_err() {
        return Err(invalid("url", "must be an absolute http(s) URL"));
    }
    Ok(HttpConfig {
        url,
        headers: f.string_map("headers")?.unwrap_or_default(),
        timeout_ms: f.millis("timeout", DEFAULT_TIMEOUT_MS)?,
        max_message_bytes: f.bytes("maxMessageBytes", HTTP_MAX)?,
        legacy_fallback: f.opt_string("type")?.as_deref() == Some("sse"),
    })
}

/// One line of the `sendRequests` batch: `<id> <timeoutMs> <method JSON string><params JSON>`,
/// where the timeout may carry `r` (reset on progress) and `r<maxTotal>`. `Err` carries the id
/// when it could be read, so that the request fails instead of vanishing.
pub fn request_line(line: &str) -> Result<OutgoingRequest<'_>, Option<u64>> {
    let (id, rest) = line.split_once(' ').ok_or(None)?;
    let id: u64 = id.parse().map_err(|_| None)?;
    let bad = Some(id);
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
        reply: crate::transport::Reply::Event,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_lines() {
        let r = request_line(r#"12 30000 "tools/call"{"name":"x"}"#).unwrap();
        assert_eq!(
            (r.id, r.timeout_ms, r.method_json, r.params),
            (12, 30000, r#""tools/call""#, Some(r#"{"name":"x"}"#))
        );
        assert!(r.cancellable && !r.opens_session);
        let init = request_line(r#"1 100 "initialize"{}"#).unwrap();
        assert!(!init.cancellable && init.opens_session);
        let r = request_line(r#"3 0.5 "a\"b\\"{}"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.method_json, r.params),
            (1, r#""a\"b\\""#, Some("{}"))
        );
        let r = request_line(r#"4 NaN "m""#).unwrap();
        assert_eq!((r.timeout_ms, r.params), (0, None));
        let r = request_line(r#"5 100r250 "m"{}"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.progress.unwrap().max_total_ms),
            (100, Some(250))
        );
        let r = request_line(r#"5 100.2r "m"[1]"#).unwrap();
        assert_eq!(
            (r.timeout_ms, r.progress.unwrap().max_total_ms),
            (101, None)
        );
        assert!(request_line(r#"5 100 "m"{}"#).unwrap().progress.is_none());
        // Lines that cannot be sent fail their request (when the id can be read), never vanish.
        let err = |line| request_line(line).err().flatten();
        assert_eq!(err(r#"x 1 "m"{}"#), None);
        assert_eq!(err(r#"1 1 "unterminated"#), Some(1));
        assert_eq!(err(r#"2 1 "m"undefined"#), Some(2));
        assert_eq!(err(r#"3 x "m"{}"#), Some(3));
        assert_eq!(err(r#"4 1rx "m"{}"#), Some(4));
        assert!(request_line("7").is_err());
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

    #[test]
    fn config_errors_name_the_field_and_never_the_value() {
        let err = |json: &str| stdio_config(json).unwrap_err().to_string();
        assert_eq!(
            err(r#"{"command":5}"#),
            r#"Invalid config: "command" must be a string"#
        );
        assert_eq!(
            err(r#"{"command":"x","timeout":"abc"}"#),
            r#"Invalid config: "timeout" must be a non-negative number"#
        );
        assert_eq!(
            err(r#"{"command":"x","killGraceMs":"NaN"}"#),
            r#"Invalid config: "killGraceMs" must be a non-negative number"#
        );
        assert_eq!(
            err(r#"{"command":"x","env":{"TOKEN":{"secret":"s3cr3t"}}}"#),
            r#"Invalid config: "env.TOKEN" must be a string"#
        );
        let (ok, _) = stdio_config(
            r#"{"command":"x","args":["a",1],"env":{"A":"1","B":2,"C":null},"timeout":1500.5,"killGraceMs":0.5}"#,
        )
        .unwrap();
        assert_eq!(ok.args, ["a", "1"]);
        assert_eq!(
            ok.env.unwrap(),
            [("A".into(), "1".into()), ("B".into(), "2".into())]
        );
        assert_eq!(ok.kill_grace_ms, 1);
        let http = http_config(r#"{"type":"sse","url":"http://127.0.0.1:1/mcp","timeout":1500.5}"#)
            .unwrap();
        assert_eq!((http.timeout_ms, http.legacy_fallback), (1501, true));
        assert_eq!(
            http_config(r#"{"url":"not a url"}"#)
                .unwrap_err()
                .to_string(),
            r#"Invalid config: "url" must be an absolute http(s) URL"#
        );
        assert_eq!(
            http_config(r#"{"url":"http://h/","headers":"x"}"#)
                .unwrap_err()
                .code(),
            "MCP_INVALID_CONFIG"
        );
    }
}
