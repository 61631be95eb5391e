//! Rust errors → JSON descriptors `{ message, code, ...extra }`, turned into `Error`s by `core.js`.

use serde_json::{Map, Value, json};

use crate::error::Error;

/// The descriptor of `error` as a JSON value.
pub fn descriptor(error: &Error) -> Value {
    let mut d = Map::new();
    d.insert("message".into(), Value::String(error.to_string()));
    d.insert("code".into(), Value::String(error.code().into()));
    match error {
        Error::Rpc { raw, .. } => {
            if let Ok(Value::Object(obj)) = serde_json::from_str::<Value>(raw.get()) {
                if let Some(code) = obj.get("code") {
                    d.insert("rpcCode".into(), code.clone());
                }
                if let Some(data) = obj.get("data") {
                    d.insert("data".into(), data.clone());
                }
            }
        }
        Error::Closed { exit, stderr } => {
            if let Some(exit) = exit {
                d.insert("exitCode".into(), json!(exit.code));
                d.insert("signal".into(), json!(exit.signal));
            }
            if let Some(stderr) = stderr {
                d.insert("stderr".into(), Value::String(stderr.clone()));
            }
        }
        Error::Timeout { ms } | Error::NotifyTimeout { ms } | Error::SseTimeout { ms } => {
            d.insert("timeout".into(), json!(ms));
        }
        Error::Http { status, .. } => {
            d.insert("status".into(), json!(status));
        }
        // Like Node's own spawn errors: `code` is the errno name, plus `syscall` and `path`.
        Error::Spawn { command, errno, .. } => {
            d.insert("code".into(), Value::String(errno.clone()));
            d.insert("syscall".into(), Value::String(format!("spawn {command}")));
            d.insert("path".into(), Value::String(command.clone()));
        }
        _ => {}
    }
    Value::Object(d)
}

/// The descriptor as JSON text.
pub fn descriptor_text(error: &Error) -> String {
    descriptor(error).to_string()
}
