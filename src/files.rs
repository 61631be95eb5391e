//! The config writer's file work (`mcp_native_core::files`) for `lib/config-writer.js`: each call runs on a
//! blocking thread of the crate's runtime and answers with a promise, so neither the JS thread
//! nor a libuv worker waits for the disk.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{guard, promise};
use mcp_native_core::error::Error as McpError;
use mcp_native_core::files;

/// Runs `work` on the runtime's blocking pool.
async fn blocking<T: Send + 'static>(
    work: impl FnOnce() -> std::result::Result<T, McpError> + Send + 'static,
) -> std::result::Result<T, McpError> {
    match tokio::task::spawn_blocking(work).await {
        Ok(outcome) => outcome,
        Err(join) if join.is_panic() => Err(McpError::Internal("a file task panicked".into())),
        Err(_) => Err(McpError::Internal("a file task was cancelled".into())),
    }
}

/// The UTF-8 text of the file at `path`, or `null` when it does not exist. Other failures reject
/// with an `Error` like Node's fs errors (`code` `EACCES`, `EISDIR`, ...; `syscall`, `path`).
#[napi(ts_return_type = "Promise<string | null>")]
pub fn read_text_file(env: &Env, path: String) -> Result<Object<'_>> {
    guard(env, || {
        promise(env, async move {
            blocking(move || files::read_text(&PathBuf::from(path))).await
        })
    })
}

/// Replaces the file at `path` with `text`: parent directories created (mode 0o700), `text`
/// written to `<path>.tmp` (mode 0o600) and renamed onto `path`. Failures reject like Node's fs
/// errors; a temporary file is then left behind.
#[napi(ts_return_type = "Promise<void>")]
pub fn write_file_atomic(env: &Env, path: String, text: String) -> Result<Object<'_>> {
    guard(env, || {
        promise(env, async move {
            blocking(move || files::write_atomic(&PathBuf::from(path), &text)).await
        })
    })
}
