//! Server configs in the `.mcp.json` / JavaScript shape (`{ type, command, args, env, cwd, url,
//! headers, timeout, maxMessageBytes, killGraceMs }`) as typed configs: the one place where they
//! are read, for the manager and for the JavaScript binding. Every error is
//! [`Error::InvalidConfig`] (code `MCP_INVALID_CONFIG`) with a message that names the field and
//! never repeats its value (a header or env value may be a secret).

use serde_json::{Map, Value};

use super::options::ServerConfig;
use crate::error::Error;
use crate::jsonrpc::IdFormat;
use crate::transport::MAX_TIMEOUT_MS;
use crate::transport::http::{
    DEFAULT_MAX_MESSAGE_BYTES as HTTP_MAX, DEFAULT_TIMEOUT_MS, HttpConfig, RedirectRule,
};
use crate::transport::stdio::{
    DEFAULT_KILL_GRACE_MS, DEFAULT_MAX_MESSAGE_BYTES as STDIO_MAX, StdioConfig,
};

/// A number of milliseconds as a deadline: fractions round up; NaN, 0 and negatives are 0
/// (at once); longer than [`MAX_TIMEOUT_MS`] is clamped to it.
pub fn millis(ms: f64) -> u64 {
    if ms.is_nan() || ms <= 0.0 {
        0
    } else {
        (ms.ceil().min(MAX_TIMEOUT_MS as f64)) as u64
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
/// maxMessageBytes, killGraceMs, callerReadsStdout, handOverLongLines }` (`env` already merged over the process's),
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
        hand_over_long_lines: f.opt_bool("handOverLongLines"),
        request_id_format: IdFormat::from_setting(f.opt_string("requestIdFormat")?.as_deref()),
        host_has_console: match f.get("hostHasConsole") {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        },
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
        legacy_only: f.opt_string("type")?.as_deref() == Some("sse") && f.opt_bool("legacyOnly"),
        protocol_headers_win: f.opt_bool("protocolHeadersWin"),
        close_on_stream_loss: f.opt_bool("closeOnStreamLoss"),
        request_id_format: IdFormat::from_setting(f.opt_string("requestIdFormat")?.as_deref()),
        redirects: match f.opt_string("redirects")?.as_deref() {
            Some("follow") => RedirectRule::Follow,
            Some("origin-locked") => RedirectRule::OriginLocked,
            _ => RedirectRule::SameOrigin,
        },
    })
}

/// A config of any type (`type` missing: stdio). `env` is taken as given: the caller merges it
/// over the process environment when it wants that (see [`with_process_env`]).
pub fn server_config(value: &Value) -> Result<ServerConfig, Error> {
    let json = value.to_string();
    let kind = value.get("type").and_then(Value::as_str).unwrap_or("stdio");
    match kind {
        "http" | "sse" => Ok(ServerConfig::Http(http_config(&json)?)),
        "stdio" => {
            let (config, timeout_ms) = stdio_config(&json)?;
            Ok(ServerConfig::Stdio { config, timeout_ms })
        }
        other => Err(Error::InvalidConfig(format!(
            "unknown server type \"{other}\""
        ))),
    }
}

/// `config` with its `env` merged over this process's environment (as the reference spawns).
pub fn with_process_env(config: &Value) -> Value {
    let mut out = config.clone();
    if let Value::Object(map) = &mut out
        && map.get("type").and_then(Value::as_str).unwrap_or("stdio") == "stdio"
    {
        let mut env: Map<String, Value> = std::env::vars()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        if let Some(Value::Object(own)) = map.get("env") {
            for (k, v) in own {
                env.insert(k.clone(), v.clone());
            }
        }
        map.insert("env".into(), Value::Object(env));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_settings_are_read_from_the_config() {
        let (stdio, _) =
            stdio_config(r#"{"command":"x","requestIdFormat":"string","hostHasConsole":false}"#)
                .unwrap();
        assert_eq!(stdio.request_id_format, IdFormat::String);
        assert_eq!(stdio.host_has_console, Some(false));
        let (plain, _) = stdio_config(r#"{"command":"x","hostHasConsole":"yes"}"#).unwrap();
        assert_eq!(plain.request_id_format, IdFormat::Number);
        assert_eq!(plain.host_has_console, None);
        let sse = http_config(
            r#"{"type":"sse","url":"http://h/sse","legacyOnly":true,"protocolHeadersWin":true,"closeOnStreamLoss":true,"redirects":"origin-locked"}"#,
        )
        .unwrap();
        assert_eq!(sse.redirects, RedirectRule::OriginLocked);
        let follow = http_config(r#"{"url":"http://h/mcp","redirects":"follow"}"#).unwrap();
        assert_eq!(follow.redirects, RedirectRule::Follow);
        assert!(
            sse.legacy_only
                && sse.legacy_fallback
                && sse.protocol_headers_win
                && sse.close_on_stream_loss
        );
        // legacyOnly means something only for type "sse".
        let http =
            http_config(r#"{"type":"http","url":"http://h/mcp","legacyOnly":true}"#).unwrap();
        assert_eq!(http.redirects, RedirectRule::SameOrigin);
        assert!(
            !http.legacy_only
                && !http.legacy_fallback
                && !http.protocol_headers_win
                && !http.close_on_stream_loss
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

    #[test]
    fn any_type_and_the_process_env() {
        assert!(matches!(
            server_config(&serde_json::json!({"command":"x"})).unwrap(),
            ServerConfig::Stdio { .. }
        ));
        assert!(
            matches!(server_config(&serde_json::json!({"type":"sse","url":"http://h/"})).unwrap(), ServerConfig::Http(c) if c.legacy_fallback)
        );
        assert_eq!(
            server_config(&serde_json::json!({"type":"ws"}))
                .unwrap_err()
                .to_string(),
            r#"Invalid config: unknown server type "ws""#
        );
        let merged =
            with_process_env(&serde_json::json!({"command":"x","env":{"MCP_NATIVE_OWN":"1"}}));
        assert_eq!(merged["env"]["MCP_NATIVE_OWN"], "1");
        assert!(merged["env"].as_object().unwrap().len() > 1);
    }
}
