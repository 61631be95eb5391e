//! The config writer's own cross-process lock (`mcp_native_core::files::lock`) for
//! `lib/config-writer.js`, which makes the lock's directory, retries the attempts and releases the
//! lock when its edit ends. The attempt itself never waits: one `bind` (Linux) or one open and
//! `flock`/`LockFileEx` (macOS, Windows) on the JS thread, as the agent's own lock does.

use std::path::PathBuf;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{guard, js_error, promise};
use mcp_native_core::error::Error as McpError;
use mcp_native_core::files::{self, lock};

/// A held lock, from `tryFileLock`. Released by `release()`, by garbage collection, or when the
/// process ends.
#[napi(custom_finalize)]
pub struct NativeFileLock {
    held: Option<lock::FileLock>,
}

#[napi]
impl NativeFileLock {
    /// Gives the lock up; later calls do nothing.
    #[napi]
    pub fn release(&mut self, env: Env) -> Result<()> {
        guard(&env, || {
            if let Some(held) = self.held.take() {
                held.release();
            }
            Ok(())
        })
    }
}

super::errors::guarded_finalize!(NativeFileLock);

/// One attempt at the exclusive lock of `lockPath` (the writer's `<absolute config path>.lock`),
/// without waiting: the lock, or `null` while another holder — in this process or another, on
/// this package or the agent's own `withFileLock` where the platform shares it — has it. Other
/// failures throw like Node's fs errors (`code`, `syscall`, `path`).
#[napi]
pub fn try_file_lock(env: Env, lock_path: String) -> Result<Option<NativeFileLock>> {
    guard(&env, || match lock::try_acquire(&lock_path) {
        Ok(held) => Ok(held.map(|held| NativeFileLock { held: Some(held) })),
        Err(e) => Err(js_error(&env, &e)),
    })
}

/// `mkdir -p dir`, each directory it creates private (0o700; owner-only on Windows), on a
/// blocking thread: the directory of a config file and its lock, made before the lock is taken.
#[napi(ts_return_type = "Promise<void>")]
pub fn create_private_dirs(env: &Env, dir: String) -> Result<Object<'_>> {
    guard(env, || {
        promise(env, async move {
            let made = tokio::task::spawn_blocking(move || {
                files::create_private_dirs(&PathBuf::from(dir))
            })
            .await;
            match made {
                Ok(outcome) => outcome,
                Err(join) if join.is_panic() => {
                    Err(McpError::Internal("a file task panicked".into()))
                }
                Err(_) => Err(McpError::Internal("a file task was cancelled".into())),
            }
        })
    })
}
