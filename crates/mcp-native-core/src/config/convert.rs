//! A canonical server → the `MCPServerConfig` the manager connects with (SPEC 7.4, with 7.10's
//! case-insensitive transports and unknown types kept).
//!
//! `type` is the transport, or else `stdio` if `command` is truthy, `http` if `url` is, `stdio`
//! otherwise. `stdio` keeps `command` (`""` when absent) and truthy `args`, `env`, `cwd`; `http`
//! and `sse` keep `url` (`""` when absent) and truthy `headers`; any other type is kept as written
//! with every field it has, so validation names it (`unknown server type`). `enabled`, `timeout`
//! and `auth` follow when set.

use serde_json::{Map, Value};

use super::js::{number_value, truthy};
use super::server::Server;

/// The config of `server`.
pub fn to_config(server: &Server) -> Map<String, Value> {
    let kind = match &server.transport {
        Some(t) => t.clone(),
        None if truthy(server.command.as_ref()) => "stdio".into(),
        None if truthy(server.url.as_ref()) => "http".into(),
        None => "stdio".into(),
    };
    let mut out = Map::new();
    let empty = || Value::String(String::new());
    let put_if_truthy = |out: &mut Map<String, Value>, key: &str, v: &Option<Value>| {
        if let Some(v) = v.as_ref().filter(|v| truthy(Some(v))) {
            out.insert(key.to_owned(), v.clone());
        }
    };
    match kind.as_str() {
        "stdio" => {
            out.insert("type".into(), Value::String(kind));
            out.insert(
                "command".into(),
                server.command.clone().unwrap_or_else(empty),
            );
            put_if_truthy(&mut out, "args", &server.args);
            put_if_truthy(&mut out, "env", &server.env);
            put_if_truthy(&mut out, "cwd", &server.cwd);
        }
        "http" | "sse" => {
            out.insert("type".into(), Value::String(kind));
            out.insert("url".into(), server.url.clone().unwrap_or_else(empty));
            put_if_truthy(&mut out, "headers", &server.headers);
        }
        _ => {
            out.insert("type".into(), Value::String(kind));
            for (key, value) in [
                ("command", &server.command),
                ("args", &server.args),
                ("env", &server.env),
                ("cwd", &server.cwd),
                ("url", &server.url),
                ("headers", &server.headers),
            ] {
                put_if_truthy(&mut out, key, value);
            }
        }
    }
    if let Some(enabled) = server.enabled {
        out.insert("enabled".into(), Value::Bool(enabled));
    }
    if let Some(timeout) = server.timeout {
        out.insert("timeout".into(), number_value(timeout));
    }
    if let Some(auth) = &server.auth {
        out.insert("auth".into(), auth.clone());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::server::{Level, Source};
    use serde_json::json;

    fn server(f: impl FnOnce(&mut Server)) -> Value {
        let source = Source {
            provider: "native",
            provider_name: "OMP",
            path: "/p".into(),
            level: Level::Project,
        };
        let mut s = Server::new("a", source);
        f(&mut s);
        Value::Object(to_config(&s))
    }

    #[test]
    fn conversion_rules() {
        assert_eq!(
            server(|s| s.command = Some(json!("x"))),
            json!({"type": "stdio", "command": "x"})
        );
        // command + url, no type: stdio without the url.
        assert_eq!(
            server(|s| {
                s.command = Some(json!("x"));
                s.url = Some(json!("https://h"));
                s.args = Some(json!([]));
                s.env = Some(json!({"A": "1"}));
                s.cwd = Some(json!("/w"));
            }),
            json!({"type": "stdio", "command": "x", "args": [], "env": {"A": "1"}, "cwd": "/w"})
        );
        // + type sse: sse without the command.
        assert_eq!(
            server(|s| {
                s.command = Some(json!("x"));
                s.url = Some(json!("https://h"));
                s.headers = Some(json!({"H": "v"}));
                s.transport = Some("sse".into());
            }),
            json!({"type": "sse", "url": "https://h", "headers": {"H": "v"}})
        );
        assert_eq!(
            server(|s| s.url = Some(json!("https://h"))),
            json!({"type": "http", "url": "https://h"})
        );
        assert_eq!(server(|_| {}), json!({"type": "stdio", "command": ""}));
        assert_eq!(
            server(|s| s.transport = Some("http".into())),
            json!({"type": "http", "url": ""})
        );
        // An unknown type is kept, with what the entry has.
        assert_eq!(
            server(|s| {
                s.transport = Some("ws".into());
                s.url = Some(json!("wss://h"));
                s.env = Some(json!({}));
            }),
            json!({"type": "ws", "url": "wss://h", "env": {}})
        );
        assert_eq!(
            server(|s| {
                s.command = Some(json!("x"));
                s.enabled = Some(true);
                s.timeout = Some(5000.0);
                s.auth = Some(json!({"type": "oauth"}));
            }),
            json!({"type": "stdio", "command": "x", "enabled": true, "timeout": 5000, "auth": {"type": "oauth"}})
        );
    }
}
