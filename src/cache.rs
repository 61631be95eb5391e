//! `NativeCacheStore`: the napi face of [`mcp_native_core::cache::CacheStore`]. It is itself a storage
//! with the agent's synchronous `getCache`/`setCache`; `lib/tool-cache.js` puts an
//! `MCPToolCache` over it in `MCPToolCache.open()`.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::{guard, js_error};
use mcp_native_core::cache::CacheStore;
use mcp_native_core::error::Error as McpError;

/// The tool cache's SQLite file. Use `MCPToolCache.open()` from `mcp-native/tool-cache` instead.
#[napi(custom_finalize)]
pub struct NativeCacheStore {
    inner: Option<CacheStore>,
    path: String,
}

impl NativeCacheStore {
    fn store(&self) -> std::result::Result<&CacheStore, McpError> {
        self.inner
            .as_ref()
            .ok_or_else(|| McpError::Store("the store is closed".into()))
    }
}

#[napi]
impl NativeCacheStore {
    /// Opens the SQLite file at `path`, creating it, its parent directories (mode 0o700) and the
    /// table `cache(key, value, expires_at)` when absent. Throws when the file cannot be opened
    /// or is not a database.
    #[napi(factory)]
    pub fn open(env: Env, path: String) -> Result<Self> {
        guard(&env, || match CacheStore::open(Path::new(&path)) {
            Ok(store) => Ok(NativeCacheStore {
                inner: Some(store),
                path,
            }),
            Err(e) => Err(js_error(&env, &e)),
        })
    }

    /// The file this store was opened on.
    #[napi(getter)]
    pub fn path(&self, env: Env) -> Result<String> {
        guard(&env, || Ok(self.path.clone()))
    }

    /// The value stored under `key`, or `null` when there is none or it has expired.
    #[napi]
    pub fn get_cache(&self, env: Env, key: String) -> Result<Option<String>> {
        guard(&env, || {
            self.store()
                .and_then(|s| s.get(&key))
                .map_err(|e| js_error(&env, &e))
        })
    }

    /// Stores `value` under `key` until `expiresAtSec` (Unix seconds), replacing any earlier value.
    #[napi]
    pub fn set_cache(
        &self,
        env: Env,
        key: String,
        value: String,
        expires_at_sec: f64,
    ) -> Result<()> {
        guard(&env, || {
            let result = if expires_at_sec.is_finite() {
                // Saturating: a date past the year 292 billion is "never".
                self.store()
                    .and_then(|s| s.set(&key, &value, expires_at_sec.floor() as i64))
            } else {
                Err(McpError::Store(format!(
                    "expiresAtSec must be a finite number, got {expires_at_sec}"
                )))
            };
            result.map_err(|e| js_error(&env, &e))
        })
    }

    /// The `expires_at` (Unix seconds) of `key`'s row, expired or not; `null` without a row.
    #[napi]
    pub fn expires_at(&self, env: Env, key: String) -> Result<Option<i64>> {
        guard(&env, || {
            self.store()
                .and_then(|s| s.expires_at(&key))
                .map_err(|e| js_error(&env, &e))
        })
    }

    /// Closes the file. Later calls throw; closing twice does nothing.
    #[napi]
    pub fn close(&mut self, env: Env) -> Result<()> {
        guard(&env, || {
            self.inner = None;
            Ok(())
        })
    }
}

super::errors::guarded_finalize!(NativeCacheStore);
