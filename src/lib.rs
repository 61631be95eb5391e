//! mcp-native: the Node.js binding of `mcp-native-core` (crates/mcp-native-core), and the only
//! crate that imports napi: thin convert → delegate → convert. Values from JS become
//! Rust values in one place (`convert`); events cross to JavaScript in batches of JSON text
//! (`sink`); errors cross as JSON descriptors that `core.js` turns into `Error` objects, or as
//! `Error` objects built here (`errors`). Every exported call runs inside `errors::guard` (or
//! `errors::promise`): a panic becomes an `Error` with code `MCP_INTERNAL`, never an abort.
//! `alloc` is the addon's global allocator (mimalloc under 64 KiB, the system's from 64 KiB up),
//! behind the cargo feature `allocator` (on by default).

#[cfg(feature = "allocator")]
mod alloc;
mod cache;
mod client;
mod client_options;
pub mod config;
mod convert;
mod errors;
pub mod file_lock;
pub mod files;
mod host;
mod hot;
mod http;
mod manager;
pub mod oauth;
mod oauth_client;
mod sink;
mod stdio;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use errors::guard;

/// The protocol revision a client offers by default (SPEC 5.1): the core's, read by the JS faces.
#[napi]
pub const DEFAULT_PROTOCOL_VERSION: &str = mcp_native_core::client::DEFAULT_PROTOCOL_VERSION;

/// The default timeout of a request and of a client's connect, in ms (SPEC 3.1, 5.1).
#[napi]
pub const DEFAULT_TIMEOUT_MS: u32 = mcp_native_core::transport::DEFAULT_TIMEOUT_MS as u32;

/// A list method stops after this many pages (SPEC 5.1).
#[napi]
pub const MAX_PAGES: u32 = mcp_native_core::client::MAX_PAGES as u32;

/// The protocol revisions a client speaks in the `initialize` era (SPEC 5.1), oldest first.
#[napi]
pub fn supported_protocol_versions() -> Vec<&'static str> {
    mcp_native_core::client::SUPPORTED_PROTOCOL_VERSIONS.to_vec()
}

/// Terminates every server process group this addon started (SIGTERM, a short grace, SIGKILL).
/// `core.js` calls it when the host process exits.
#[napi]
pub fn kill_all_children(env: Env) -> Result<()> {
    guard(&env, || {
        mcp_native_core::runtime::kill_all_children();
        Ok(())
    })
}

/// The calling thread's JS environment is ending (`core.js` calls it from a worker's `exit`
/// event): the sinks of this environment deliver nothing more (see `sink.rs`, `env_closing`).
#[napi]
pub fn env_closing(env: Env) -> Result<()> {
    guard(&env, || {
        sink::mark_env_closing(&env);
        Ok(())
    })
}

/// Test hook: panics inside an exported call — synchronously, or (`inPromise`) inside the work
/// of a returned promise — to show that the panic reaches JS as an `Error` with code
/// `MCP_INTERNAL`. Harmless: it only ever throws or rejects.
#[napi(ts_return_type = "void | Promise<void>")]
pub fn test_panic(env: &Env, in_promise: bool) -> Result<Unknown<'_>> {
    guard(env, || {
        if in_promise {
            let p = errors::promise(env, async move {
                if in_promise {
                    panic!("test panic in a promise");
                }
                Ok(())
            })?;
            return ToNapiValue::into_unknown(p, env);
        }
        panic!("test panic");
    })
}

/// The reply to a server→client request from JS: `error` (JSON text) wins, else `result`, else `{}`.
fn reply_outcome<'a>(
    result: &'a Option<String>,
    error: &'a Option<String>,
) -> std::result::Result<&'a str, &'a str> {
    match (error, result) {
        (Some(e), _) => Err(e.as_str()),
        (None, Some(r)) => Ok(r.as_str()),
        (None, None) => Ok("{}"),
    }
}
