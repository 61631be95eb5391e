//! Where the OAuth client keeps what outlives one flow (SPEC 10.2): [`AuthStore`] (JSON text
//! by key), [`MemoryStore`] (a process's map) and [`FileStore`] (one 0600 JSON file shared by
//! processes).
//!
//! Keys: `tokens|<issuer>|<resource>`, `client|<issuer>|<redirect_uri>`, `server|<url>` and
//! `prereg|<client_id>` (the issuer a pre-registration without one was bound to).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::sync::Locked;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use super::AuthError;

/// How long a [`FileStore`] write waits for the file's lock before failing: 10 s.
pub const LOCK_TIMEOUT: Duration = Duration::from_secs(10);
/// The pause between two attempts to take a busy lock.
const LOCK_POLL: Duration = Duration::from_millis(10);
/// Largest store file read: 4 MiB (a token set is about 1 KiB); a larger one is an error.
pub const MAX_FILE_BYTES: u64 = 4 * 1024 * 1024;

/// A key-value store of JSON text. Implementations must keep tokens and secrets confidential
/// at rest (the OS keychain, a 0600 file).
pub trait AuthStore: Send + Sync {
    /// The value of `key`, if any.
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<String>, AuthError>>;
    /// Sets `key` to `value` (JSON text).
    fn set<'a>(&'a self, key: &'a str, value: String) -> BoxFuture<'a, Result<(), AuthError>>;
    /// Removes `key` (absent is fine).
    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), AuthError>>;
}

/// A store in memory, for one process's lifetime (the default).
#[derive(Default)]
pub struct MemoryStore {
    map: Mutex<HashMap<String, String>>,
}

impl std::fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("MemoryStore").finish_non_exhaustive()
    }
}

impl MemoryStore {
    fn map(&self) -> std::sync::MutexGuard<'_, HashMap<String, String>> {
        self.map.locked()
    }
}

impl AuthStore for MemoryStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<String>, AuthError>> {
        let value = self.map().get(key).cloned();
        Box::pin(async move { Ok(value) })
    }

    fn set<'a>(&'a self, key: &'a str, value: String) -> BoxFuture<'a, Result<(), AuthError>> {
        self.map().insert(key.to_string(), value);
        Box::pin(async { Ok(()) })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        self.map().remove(key);
        Box::pin(async { Ok(()) })
    }
}

/// One JSON object in a file (`{ "<key>": <value>, ... }`), mode 0600 in a directory created
/// 0700. Each `set`/`delete` rewrites the file atomically (a temporary file, flushed, then
/// renamed over it) while holding an advisory lock (`flock` on `<path>.lock`), re-reading the
/// file under the lock first: two processes changing different keys never lose each other's
/// writes, and readers (who take no lock) see the old file or the new one, never half of one.
#[derive(Debug, Clone)]
pub struct FileStore {
    path: PathBuf,
}

impl FileStore {
    /// A store in `path` (created on the first write).
    pub fn new(path: impl Into<PathBuf>) -> Self {
        FileStore { path: path.into() }
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The lock file beside the store (a rename replaces the store's inode, so the store
    /// itself cannot carry the lock).
    fn lock_path(&self) -> PathBuf {
        let mut name = self.path.as_os_str().to_os_string();
        name.push(".lock");
        PathBuf::from(name)
    }

    /// The whole object; an absent file is empty.
    fn read_all(&self) -> Result<Map<String, Value>, AuthError> {
        use std::io::Read;
        let file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Map::new()),
            Err(e) => return Err(fs_error("open", &self.path, &e)),
        };
        let mut text = String::new();
        file.take(MAX_FILE_BYTES + 1)
            .read_to_string(&mut text)
            .map_err(|e| fs_error("read", &self.path, &e))?;
        if text.len() as u64 > MAX_FILE_BYTES {
            return Err(AuthError::Store(format!(
                "{} is larger than {MAX_FILE_BYTES} bytes",
                self.path.display()
            )));
        }
        if text.trim().is_empty() {
            return Ok(Map::new());
        }
        match serde_json::from_str(&text) {
            Ok(Value::Object(map)) => Ok(map),
            _ => Err(AuthError::Store(format!(
                "{} is not a JSON object",
                self.path.display()
            ))),
        }
    }

    /// Read, change and rewrite the file under the lock (blocking).
    fn update(&self, change: impl FnOnce(&mut Map<String, Value>)) -> Result<(), AuthError> {
        let _lock = self.lock()?;
        let mut map = self.read_all()?;
        change(&mut map);
        let text = serde_json::to_string_pretty(&Value::Object(map))
            .map_err(|e| AuthError::Store(e.to_string()))?;
        crate::files::write_atomic(&self.path, &text).map_err(|e| AuthError::Store(e.to_string()))
    }

    /// Takes the advisory lock, waiting at most [`LOCK_TIMEOUT`]; released when the returned
    /// file is dropped.
    fn lock(&self) -> Result<std::fs::File, AuthError> {
        #[cfg(unix)]
        use std::os::unix::fs::OpenOptionsExt;
        if let Some(parent) = self.path.parent().filter(|p| !p.as_os_str().is_empty()) {
            crate::files::create_private_dirs(parent)
                .map_err(|e| AuthError::Store(e.to_string()))?;
        }
        let path = self.lock_path();
        let mut options = std::fs::OpenOptions::new();
        options.read(true).write(true).create(true).truncate(false);
        // The lock file holds nothing; Windows: it inherits its private directory's access list.
        #[cfg(unix)]
        options.mode(0o600);
        let file = options
            .open(&path)
            .map_err(|e| fs_error("open", &path, &e))?;
        let start = Instant::now();
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(file),
                Err(std::fs::TryLockError::WouldBlock) if start.elapsed() < LOCK_TIMEOUT => {
                    std::thread::sleep(LOCK_POLL);
                }
                Err(std::fs::TryLockError::WouldBlock) => {
                    return Err(AuthError::Store(format!(
                        "{} stayed locked for {}ms",
                        path.display(),
                        LOCK_TIMEOUT.as_millis()
                    )));
                }
                Err(std::fs::TryLockError::Error(e)) => return Err(fs_error("flock", &path, &e)),
            }
        }
    }

    /// Runs blocking file work off the async threads.
    fn blocking<T: Send + 'static>(
        &self,
        work: impl FnOnce(FileStore) -> Result<T, AuthError> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, AuthError>> {
        let store = self.clone();
        Box::pin(async move {
            tokio::task::spawn_blocking(move || work(store))
                .await
                .map_err(|e| AuthError::Store(format!("the store task failed: {e}")))?
        })
    }
}

impl AuthStore for FileStore {
    fn get<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<Option<String>, AuthError>> {
        let key = key.to_string();
        self.blocking(move |s| Ok(s.read_all()?.get(&key).map(Value::to_string)))
    }

    fn set<'a>(&'a self, key: &'a str, value: String) -> BoxFuture<'a, Result<(), AuthError>> {
        let key = key.to_string();
        Box::pin(async move {
            let value: Value = serde_json::from_str(&value)
                .map_err(|_| AuthError::Store(format!("the value of \"{key}\" is not JSON")))?;
            self.blocking(move |s| {
                s.update(|map| {
                    map.insert(key, value);
                })
            })
            .await
        })
    }

    fn delete<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<(), AuthError>> {
        let key = key.to_string();
        self.blocking(move |s| {
            if !s.read_all()?.contains_key(&key) {
                return Ok(());
            }
            s.update(|map| {
                map.remove(&key);
            })
        })
    }
}

fn fs_error(syscall: &'static str, path: &Path, e: &std::io::Error) -> AuthError {
    AuthError::Store(crate::error::Error::fs(syscall, path, None, e).to_string())
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;
    use std::sync::Arc;

    use super::*;

    fn temp_dir(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!(
            "mcp-native-store-{name}-{}-{}",
            std::process::id(),
            crate::oauth::pkce::random_state()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[tokio::test]
    async fn memory_store_round_trip() {
        let s = MemoryStore::default();
        assert_eq!(s.get("k").await.unwrap(), None);
        s.set("k", "{\"a\":1}".into()).await.unwrap();
        assert_eq!(s.get("k").await.unwrap().as_deref(), Some("{\"a\":1}"));
        s.delete("k").await.unwrap();
        s.delete("k").await.unwrap();
        assert_eq!(s.get("k").await.unwrap(), None);
    }

    #[tokio::test]
    async fn file_store_round_trip_with_private_modes() {
        let dir = temp_dir("modes");
        let path = dir.join("sub").join("mcp-oauth.json");
        let s = FileStore::new(&path);
        assert_eq!(s.get("k").await.unwrap(), None);
        s.set("tokens|i|r", r#"{"access_token":"t"}"#.into())
            .await
            .unwrap();
        s.set("k2", "[1,2]".into()).await.unwrap();
        assert_eq!(
            s.get("tokens|i|r").await.unwrap().as_deref(),
            Some(r#"{"access_token":"t"}"#)
        );
        let mode = |p: &Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(&s.lock_path()), 0o600);
        assert_eq!(mode(path.parent().unwrap()), 0o700);
        // A file made by someone else with wider permissions is replaced by a private one.
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        s.delete("k2").await.unwrap();
        assert_eq!(mode(&path), 0o600);
        assert_eq!(s.get("k2").await.unwrap(), None);
        assert!(s.set("bad", "not json".into()).await.is_err());
        std::fs::write(&path, "garbage").unwrap();
        let e = s.get("k").await.unwrap_err();
        assert_eq!(e.code(), "MCP_STORE_ERROR");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// Writers with their own handles (their own lock descriptions, as two processes have) never
    /// lose each other's keys.
    #[test]
    fn concurrent_writers_lose_nothing() {
        let dir = temp_dir("writers");
        let path = dir.join("store.json");
        let writers: Vec<_> = (0..4)
            .map(|w| {
                let store = Arc::new(FileStore::new(&path));
                std::thread::spawn(move || {
                    for i in 0..25 {
                        store
                            .update(|map| {
                                map.insert(format!("w{w}-{i}"), Value::from(i));
                            })
                            .unwrap();
                    }
                })
            })
            .collect();
        for w in writers {
            w.join().unwrap();
        }
        let map = FileStore::new(&path).read_all().unwrap();
        assert_eq!(map.len(), 100);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_held_lock_is_waited_for() {
        let dir = temp_dir("held");
        let path = dir.join("store.json");
        let a = FileStore::new(&path);
        let held = a.lock().unwrap();
        let b = FileStore::new(&path);
        let (started_tx, started_rx) = std::sync::mpsc::channel();
        let writer = std::thread::spawn(move || {
            started_tx.send(()).unwrap();
            b.update(|map| {
                map.insert("k".into(), Value::Null);
            })
        });
        // The writer has started (not merely been spawned): unless it waits for the lock, it
        // finishes well within this (an update takes well under a millisecond).
        started_rx.recv_timeout(Duration::from_secs(5)).unwrap();
        std::thread::sleep(Duration::from_millis(200));
        assert!(
            !writer.is_finished(),
            "the update did not wait for the held lock"
        );
        drop(held);
        writer.join().unwrap().unwrap();
        assert!(a.read_all().unwrap().contains_key("k"));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
