//! The tool cache's embedded store (SPEC 8.11): one SQLite file holding the agent's table
//! `cache(key TEXT PRIMARY KEY, value TEXT NOT NULL, expires_at INTEGER NOT NULL)`. A read sees a
//! row only while `expires_at > unixepoch()`; a write is an upsert. `MCPToolCache` (JS) keeps its
//! entries here; what a value means is its business, not the store's.
//!
//! Several processes (agents in different terminals) use the same file: the journal is WAL, so
//! readers never wait for a writer, and a writer waits at most [`BUSY_TIMEOUT`] for another. The
//! binding calls this on the JS thread: a call that would wait longer fails instead ("database is
//! locked"), and `MCPToolCache` skips the cache for that call with a warning.

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OptionalExtension, params};

use crate::error::Error;
use crate::files::create_private_dirs;

/// How long a statement waits for another connection's lock before it fails with "database is
/// locked": 50 ms. With WAL only writers ever wait, and a write is one small row (well under a
/// millisecond), so this is only reached when another process holds a write transaction open for
/// far longer than this store ever does; the write then fails (and `MCPToolCache.set` drops it,
/// with a warning). It bounds how long a call can hold the JS thread (it was 2 s: another agent
/// holding the lock stalled the event loop that long).
pub const BUSY_TIMEOUT: Duration = Duration::from_millis(50);

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS cache (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL,
    expires_at INTEGER NOT NULL
)";
const SELECT_LIVE: &str = "SELECT value FROM cache WHERE key = ?1 AND expires_at > unixepoch()";
const SELECT_EXPIRY: &str = "SELECT expires_at FROM cache WHERE key = ?1";
const UPSERT: &str = "INSERT INTO cache (key, value, expires_at) VALUES (?1, ?2, ?3)
    ON CONFLICT(key) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at";
const DELETE_EXPIRED: &str = "DELETE FROM cache WHERE expires_at <= unixepoch()";

fn store_error(e: rusqlite::Error) -> Error {
    Error::Store(e.to_string())
}

/// An open cache file.
pub struct CacheStore {
    conn: Connection,
    path: PathBuf,
}

impl CacheStore {
    /// Opens the file at `path`, creating it, its parent directories (mode 0o700: the cache lists
    /// the tools of the user's servers, nobody else's business) and the table
    /// when absent, and drops rows that have expired.
    pub fn open(path: &Path) -> Result<Self, Error> {
        if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
            create_private_dirs(parent)?;
        }
        let conn = Connection::open(path).map_err(store_error)?;
        conn.busy_timeout(BUSY_TIMEOUT).map_err(store_error)?;
        // WAL needs shared memory, which some file systems (network mounts) lack; the store then
        // stays on the default rollback journal, still correct across processes, just with
        // readers waiting for writers (bounded by BUSY_TIMEOUT).
        let _ = conn
            .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get::<_, String>(0));
        conn.execute_batch(SCHEMA).map_err(store_error)?;
        // Housekeeping only: a busy or read-only file keeps its expired rows (reads skip them),
        // and it never waits for another connection's lock.
        conn.busy_timeout(Duration::ZERO).map_err(store_error)?;
        let _ = conn.execute(DELETE_EXPIRED, []);
        conn.busy_timeout(BUSY_TIMEOUT).map_err(store_error)?;
        Ok(CacheStore {
            conn,
            path: path.to_path_buf(),
        })
    }

    /// The file this store was opened on.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The value of `key`, if its row exists and has not expired.
    pub fn get(&self, key: &str) -> Result<Option<String>, Error> {
        let mut stmt = self.conn.prepare_cached(SELECT_LIVE).map_err(store_error)?;
        stmt.query_row(params![key], |row| row.get(0))
            .optional()
            .map_err(store_error)
    }

    /// Stores `value` under `key` until `expires_at` (Unix seconds), replacing any earlier row.
    pub fn set(&self, key: &str, value: &str, expires_at: i64) -> Result<(), Error> {
        let mut stmt = self.conn.prepare_cached(UPSERT).map_err(store_error)?;
        stmt.execute(params![key, value, expires_at])
            .map(drop)
            .map_err(store_error)
    }

    /// The `expires_at` of `key`'s row, expired or not (for inspection and tests).
    pub fn expires_at(&self, key: &str) -> Result<Option<i64>, Error> {
        let mut stmt = self
            .conn
            .prepare_cached(SELECT_EXPIRY)
            .map_err(store_error)?;
        stmt.query_row(params![key], |row| row.get(0))
            .optional()
            .map_err(store_error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now() -> i64 {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs() as i64
    }

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-native-cache-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    #[test]
    fn creates_parents_and_round_trips_with_upsert() {
        let dir = temp("roundtrip");
        let file = dir.join("a/b/mcp-cache.db");
        let store = CacheStore::open(&file).unwrap();
        assert!(file.exists());
        assert_eq!(store.path(), file);
        assert_eq!(store.get("k").unwrap(), None);
        store.set("k", "one", now() + 60).unwrap();
        assert_eq!(store.get("k").unwrap().as_deref(), Some("one"));
        store.set("k", "two", now() + 120).unwrap();
        assert_eq!(store.get("k").unwrap().as_deref(), Some("two"));
        let expires = store.expires_at("k").unwrap().unwrap();
        assert!((expires - (now() + 120)).abs() <= 1, "{expires}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn expired_rows_are_invisible_and_dropped_on_open() {
        let dir = temp("expiry");
        let file = dir.join("c.db");
        let store = CacheStore::open(&file).unwrap();
        store.set("old", "v", now() - 1).unwrap();
        store.set("edge", "v", now()).unwrap(); // expires_at > unixepoch() is false at once
        store.set("live", "v", now() + 60).unwrap();
        assert_eq!(store.get("old").unwrap(), None);
        assert_eq!(store.get("edge").unwrap(), None);
        assert_eq!(store.get("live").unwrap().as_deref(), Some("v"));
        assert!(store.expires_at("old").unwrap().is_some());
        drop(store);
        let store = CacheStore::open(&file).unwrap();
        assert_eq!(store.expires_at("old").unwrap(), None);
        assert_eq!(store.get("live").unwrap().as_deref(), Some("v"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn two_connections_share_the_file() {
        let dir = temp("shared");
        let file = dir.join("s.db");
        let a = CacheStore::open(&file).unwrap();
        let b = CacheStore::open(&file).unwrap();
        a.set("k", "from a", now() + 60).unwrap();
        assert_eq!(b.get("k").unwrap().as_deref(), Some("from a"));
        b.set("k", "from b", now() + 60).unwrap();
        assert_eq!(a.get("k").unwrap().as_deref(), Some("from b"));
        let mode: String = a
            .conn
            .query_row("PRAGMA journal_mode", [], |r| r.get(0))
            .unwrap();
        assert_eq!(mode, "wal");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn another_connections_write_lock_fails_a_write_within_the_busy_timeout_and_reads_go_on() {
        let dir = temp("locked");
        let file = dir.join("l.db");
        let store = CacheStore::open(&file).unwrap();
        store.set("k", "v", now() + 60).unwrap();
        // Another process's long write transaction.
        let other = Connection::open(&file).unwrap();
        other.execute_batch("BEGIN IMMEDIATE").unwrap();
        let started = std::time::Instant::now();
        match store.set("k", "w", now() + 60) {
            Err(Error::Store(text)) => assert!(text.contains("locked"), "{text}"),
            other => panic!("unexpected {other:?}"),
        }
        // Well under the 2 s it waited before (the bound is 50 ms; the margin is for a loaded
        // machine, not for the bound).
        assert!(
            started.elapsed() < Duration::from_millis(1000),
            "{:?}",
            started.elapsed()
        );
        // Readers never wait for a writer (WAL); opening skips its housekeeping.
        assert_eq!(store.get("k").unwrap().as_deref(), Some("v"));
        let started = std::time::Instant::now();
        let again = CacheStore::open(&file).unwrap();
        assert!(
            started.elapsed() < Duration::from_millis(1000),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(again.get("k").unwrap().as_deref(), Some("v"));
        other.execute_batch("COMMIT").unwrap();
        store.set("k", "w", now() + 60).unwrap();
        assert_eq!(again.get("k").unwrap().as_deref(), Some("w"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn open_failures_are_typed() {
        let dir = temp("fail");
        std::fs::create_dir_all(&dir).unwrap();
        let blocker = dir.join("file");
        std::fs::write(&blocker, "x").unwrap();
        // The parent is a regular file: mkdir fails like Node's.
        match CacheStore::open(&blocker.join("c.db")) {
            Err(Error::Fs { errno, syscall, .. }) => {
                assert_eq!(errno, "EEXIST");
                assert_eq!(syscall, "mkdir");
            }
            other => panic!("unexpected {:?}", other.map(|_| ())),
        }
        // A file that is not a database.
        let junk = dir.join("junk.db");
        std::fs::write(&junk, vec![b'z'; 4096]).unwrap();
        match CacheStore::open(&junk) {
            Err(Error::Store(text)) => assert!(text.contains("not a database"), "{text}"),
            other => panic!("unexpected {:?}", other.map(|_| ())),
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
