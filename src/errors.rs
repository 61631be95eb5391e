//! Rust errors → JSON descriptors `{ message, code, ...extra }`, turned into `Error`s by `core.js`.

use napi::Env;
use napi::bindgen_prelude::{JsObjectValue, ToNapiValue};
use serde_json::{Map, Value, json};

use mcp_native_core::error::{Error, TokenExchangeFailure};

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
        Error::Timeout { ms }
        | Error::NotifyTimeout { ms }
        | Error::SseTimeout { ms }
        | Error::ConnectTimeout { ms, .. } => {
            d.insert("timeout".into(), json!(ms));
        }
        Error::UnsupportedProtocol(version) => {
            d.insert("protocolVersion".into(), json!(version));
        }
        Error::Http { status, .. }
        | Error::TokenExchange(TokenExchangeFailure::Status { status, .. }) => {
            d.insert("status".into(), json!(status));
        }
        Error::TokenExchange(TokenExchangeFailure::Timeout { ms }) => {
            d.insert("timeout".into(), json!(ms));
        }
        // Like Node's own spawn errors: `code` is the errno name, plus `syscall` and `path`.
        Error::Spawn { command, .. } => {
            d.insert("syscall".into(), Value::String(format!("spawn {command}")));
            d.insert("path".into(), Value::String(command.clone()));
        }
        // Like Node's fs errors: `errno` (negative), `syscall`, `path`, and `dest` for a rename.
        Error::Fs {
            os_code,
            syscall,
            path,
            dest,
            ..
        } => {
            if let Some(code) = os_code {
                d.insert("errno".into(), json!(-code));
            }
            d.insert("syscall".into(), Value::String((*syscall).into()));
            d.insert("path".into(), Value::String(path.clone()));
            if let Some(dest) = dest {
                d.insert("dest".into(), Value::String(dest.clone()));
            }
        }
        // The OAuth client (SPEC 10): what kind of failure, for apps that act on it
        // (`needs_client_credentials` → ask the user for credentials).
        Error::OAuth(e) => {
            d.insert("reason".into(), Value::String(e.reason().into()));
        }
        _ => {}
    }
    Value::Object(d)
}

/// The descriptor as JSON text.
pub fn descriptor_text(error: &Error) -> String {
    descriptor(error).to_string()
}

/// A JS `Error` built from `error`'s descriptor (message, `code`, extra properties), as a napi
/// error that throws or rejects with exactly that object.
pub fn js_error(env: &Env, error: &Error) -> napi::Error {
    let build = || -> napi::Result<napi::Error> {
        let Value::Object(d) = descriptor(error) else {
            unreachable!("descriptors are objects")
        };
        let mut obj = env.create_error(napi::Error::from_reason(error.to_string()))?;
        for (key, value) in d {
            if key != "message" {
                obj.set_named_property(&key, value)?;
            }
        }
        Ok(napi::Error::from(ToNapiValue::into_unknown(obj, env)?))
    };
    build().unwrap_or_else(|e| e)
}

/// What a stdio `notify` returns: true when queued, false when the transport is not open (the
/// caller says `Transport closed`), thrown when the server's stdin backlog is full.
pub fn notified(env: &Env, sent: Result<(), Error>) -> napi::Result<bool> {
    match sent {
        Ok(()) => Ok(true),
        Err(e @ Error::Backlog { .. }) => Err(js_error(env, &e)),
        Err(_) => Ok(false),
    }
}

/// The message of a caught panic.
fn panic_text(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_string()
    } else {
        "a panic without a message".into()
    }
}

/// Runs `f` where no unwinding may pass: a finalizer or `Drop` that the engine calls from C. A
/// panic that unwound out of an `extern "C"` function would abort the host; here it is caught
/// and written to stderr (`what` names the place), and the rest of that clean-up is skipped —
/// a leak at worst, never a crash.
pub fn no_unwind(what: &str, f: impl FnOnce()) {
    if let Err(payload) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        // Writing can fail (stderr closed): nothing more to do then.
        let _ = std::io::Write::write_all(
            &mut std::io::stderr(),
            format!(
                "mcp-native: a panic in {what} was caught: {}\n",
                panic_text(&*payload)
            )
            .as_bytes(),
        );
    }
}

/// `ObjectFinalize` for napi classes: the object's state is dropped inside [`no_unwind`]. napi-rs
/// drops a class's state in its finalizer, called from C, where a panic of any field's `Drop`
/// (a transport's, a client's, a manager's) would abort the host.
macro_rules! guarded_finalize {
    ($class:ty) => {
        impl napi::bindgen_prelude::ObjectFinalize for $class {
            fn finalize(self, _env: napi::Env) -> napi::Result<()> {
                $crate::errors::no_unwind(concat!(stringify!($class), "'s finalizer"), move || {
                    drop(self)
                });
                Ok(())
            }
        }
    };
}
pub(crate) use guarded_finalize;

/// Runs the body of an exported call: a panic inside becomes a thrown `Error` with code
/// `MCP_INTERNAL` instead of unwinding into the host (which would abort it).
pub fn guard<T>(env: &Env, f: impl FnOnce() -> napi::Result<T>) -> napi::Result<T> {
    match std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)) {
        Ok(result) => result,
        Err(payload) => Err(js_error(env, &Error::Internal(panic_text(&*payload)))),
    }
}

type Resolver<T> = Box<dyn FnOnce(Env) -> napi::Result<T> + Send>;

/// A promise for `work`, run on the crate's runtime (no libuv worker is held while it runs). It
/// resolves with the value, rejects with the descriptor's `Error`, and a panic inside `work`
/// rejects with code `MCP_INTERNAL`.
pub fn promise<'env, T, F>(
    env: &'env Env,
    work: F,
) -> napi::Result<napi::bindgen_prelude::Object<'env>>
where
    T: napi::bindgen_prelude::ToNapiValue + Send + 'static,
    F: std::future::Future<Output = Result<T, Error>> + Send + 'static,
{
    let (deferred, promise) = env.create_deferred::<T, Resolver<T>>()?;
    let rt = mcp_native_core::runtime::runtime();
    let task = rt.spawn(work);
    rt.spawn(async move {
        let outcome = match task.await {
            Ok(outcome) => outcome,
            Err(join) if join.is_panic() => Err(Error::Internal(panic_text(&*join.into_panic()))),
            Err(_) => Err(Error::Internal("the task was cancelled".into())),
        };
        deferred.resolve(Box::new(move |env: Env| match outcome {
            Ok(value) => Ok(value),
            Err(error) => Err(js_error(&env, &error)),
        }));
    });
    Ok(promise)
}

#[cfg(test)]
mod no_unwind_tests {
    use super::no_unwind;

    /// Every napi class of the binding drops its state through `guarded_finalize!`, or (its
    /// state a number) guards its own `Drop`: a class added with a plain `#[napi]` fails here.
    #[test]
    fn every_napi_class_drops_its_state_inside_no_unwind() {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/src");
        let mut classes = 0;
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            let text = std::fs::read_to_string(&path).unwrap();
            let lines: Vec<&str> = text.lines().collect();
            for pair in lines.windows(2) {
                let Some(name) = pair[1]
                    .strip_prefix("pub struct ")
                    .and_then(|rest| rest.split([' ', '{', '(']).next())
                else {
                    continue;
                };
                if !pair[0].starts_with("#[napi") {
                    continue;
                }
                classes += 1;
                let guarded = pair[0] == "#[napi(custom_finalize)]"
                    && text.contains(&format!("guarded_finalize!({name});"));
                let own_drop = text.contains(&format!("impl Drop for {name} {{"))
                    && text.contains(&format!("no_unwind(\"{name}'s finalizer\""));
                assert!(guarded || own_drop, "{}: {name}", path.display());
            }
        }
        assert!(classes >= 8, "found {classes} classes");
    }

    #[test]
    fn a_panic_inside_is_caught_and_the_rest_is_skipped() {
        let mut after = false;
        no_unwind("a test", || {
            if !after {
                panic!("in a finalizer");
            }
            after = true;
        });
        assert!(!after);
        let mut ran = false;
        no_unwind("a test", || ran = true);
        assert!(ran);
    }
}
