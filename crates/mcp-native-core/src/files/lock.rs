//! The config writer's cross-process lock (SPEC 11.4; the agent's 17.1.0 fix "concurrent config
//! writes lose nothing") when the agent injects none of its own: one non-blocking attempt at an
//! exclusive OS lock named by a lock path (the writer passes `<absolute config path>.lock`). The
//! caller retries and releases; the OS releases it too when the holder dies.
//!
//! It is the lock the agent itself takes for that path (`@oh-my-pi/pi-utils` `withFileLock` over
//! `@oh-my-pi/pi-natives` `FileLock`), so that a writer on this package and one on the agent's
//! TypeScript layer exclude each other without any injection, where the platform allows:
//! - Linux: the abstract Unix datagram socket `omp-file-lock-<h><l>` bound for as long as the lock
//!   is held, `h` and `l` the XXH64 of the lock path's UTF-8 bytes with two fixed seeds, 16 hex
//!   digits each. No file is made. (pi-natives does exactly this on Linux — not `flock` —, so a
//!   `flock` here would not exclude the agent. Abstract names live per network namespace: two
//!   containers that share the file but not the network namespace do not exclude each other.)
//! - Other Unix (macOS, the BSDs): `flock(LOCK_EX | LOCK_NB)` on the lock path, created (0o600)
//!   when missing and left in place, as pi-natives does there.
//! - Windows: `LockFileEx` (exclusive, fail immediately) on the lock path, through std's
//!   `File::try_lock`. pi-natives takes a named mutex there instead, so on Windows only the
//!   injected lock excludes the agent.

use std::fs::File;
use std::path::Path;

use crate::error::Error;

/// An exclusive lock held on a lock path; dropping it (or [`FileLock::release`]) gives it up.
#[derive(Debug)]
pub struct FileLock {
    held: Held,
}

#[derive(Debug)]
enum Held {
    /// The bound abstract socket: the name is taken while it is open.
    #[cfg(target_os = "linux")]
    Name(std::os::unix::net::UnixDatagram),
    /// The open lock file with the lock on it: closing it unlocks.
    #[cfg_attr(target_os = "linux", allow(dead_code))]
    File(File),
}

impl FileLock {
    /// Gives the lock up now (the same as dropping it).
    pub fn release(self) {
        match self.held {
            #[cfg(target_os = "linux")]
            Held::Name(socket) => drop(socket),
            Held::File(file) => drop(file),
        }
    }
}

/// One attempt, without waiting: `Some` when this call now holds the lock of `lock_path`, `None`
/// when another holder (another process, or another attempt of this one) has it. The directory of
/// a lock file must exist (the writer creates it first); other failures are [`Error::Fs`].
pub fn try_acquire(lock_path: &str) -> Result<Option<FileLock>, Error> {
    #[cfg(target_os = "linux")]
    return try_name(lock_path);
    #[cfg(not(target_os = "linux"))]
    return try_file(Path::new(lock_path));
}

/// Linux: binds the abstract socket of `lock_path` ([`lock_name`]); the name in use means held.
#[cfg(target_os = "linux")]
fn try_name(lock_path: &str) -> Result<Option<FileLock>, Error> {
    use std::os::linux::net::SocketAddrExt;
    use std::os::unix::net::{SocketAddr, UnixDatagram};
    let fail = |e: &std::io::Error| Error::fs("bind", Path::new(lock_path), None, e);
    let addr = SocketAddr::from_abstract_name(lock_name(lock_path)).map_err(|e| fail(&e))?;
    match UnixDatagram::bind_addr(&addr) {
        Ok(socket) => Ok(Some(FileLock {
            held: Held::Name(socket),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::AddrInUse => Ok(None),
        Err(e) => Err(fail(&e)),
    }
}

/// Opens (creating, 0o600 on Unix) the lock file and tries to lock it exclusively.
#[cfg(any(not(target_os = "linux"), test))]
fn try_file(lock_path: &Path) -> Result<Option<FileLock>, Error> {
    use std::fs::{OpenOptions, TryLockError};
    #[cfg(unix)]
    use std::os::unix::fs::OpenOptionsExt;
    let mut options = OpenOptions::new();
    options.read(true).write(true).create(true).truncate(false);
    #[cfg(unix)]
    options.mode(0o600);
    let file = options
        .open(lock_path)
        .map_err(|e| Error::fs("open", lock_path, None, &e))?;
    match file.try_lock() {
        Ok(()) => Ok(Some(FileLock {
            held: Held::File(file),
        })),
        Err(TryLockError::WouldBlock) => Ok(None),
        Err(TryLockError::Error(e)) => Err(Error::fs("flock", lock_path, None, &e)),
    }
}

/// The agent's name for a lock on Linux (pi-natives' `memory_lock_name`), and the XXH64 under it.
#[cfg(any(target_os = "linux", test))]
mod agent_name {
    /// The agent's name for the lock of `lock_path` on Linux: `omp-file-lock-` and the two XXH64
    /// digests of the path's UTF-8 bytes (seeds "OMP-LOCK" and "PI-FILEL" as big-endian ASCII).
    pub(super) fn lock_name(lock_path: &str) -> String {
        const HIGH_SEED: u64 = u64::from_be_bytes(*b"OMP-LOCK");
        const LOW_SEED: u64 = u64::from_be_bytes(*b"PI-FILEL");
        let bytes = lock_path.as_bytes();
        format!(
            "omp-file-lock-{:016x}{:016x}",
            xxh64(bytes, HIGH_SEED),
            xxh64(bytes, LOW_SEED)
        )
    }

    const P1: u64 = 0x9E37_79B1_85EB_CA87;
    const P2: u64 = 0xC2B2_AE3D_27D4_EB4F;
    const P3: u64 = 0x1656_67B1_9E37_79F9;
    const P4: u64 = 0x85EB_CA77_C2B2_AE63;
    const P5: u64 = 0x27D4_EB2F_1656_67C5;

    fn lane(acc: u64, input: u64) -> u64 {
        acc.wrapping_add(input.wrapping_mul(P2))
            .rotate_left(31)
            .wrapping_mul(P1)
    }

    fn word(bytes: &[u8]) -> u64 {
        u64::from_le_bytes(bytes[..8].try_into().expect("8 bytes"))
    }

    /// XXH64 (Yann Collet's xxHash, 64-bit) of `input` with `seed`.
    pub(super) fn xxh64(input: &[u8], seed: u64) -> u64 {
        let mut rest = input;
        let mut h = if input.len() >= 32 {
            let mut v = [
                seed.wrapping_add(P1).wrapping_add(P2),
                seed.wrapping_add(P2),
                seed,
                seed.wrapping_sub(P1),
            ];
            while rest.len() >= 32 {
                for (i, acc) in v.iter_mut().enumerate() {
                    *acc = lane(*acc, word(&rest[i * 8..]));
                }
                rest = &rest[32..];
            }
            let mut h = v[0]
                .rotate_left(1)
                .wrapping_add(v[1].rotate_left(7))
                .wrapping_add(v[2].rotate_left(12))
                .wrapping_add(v[3].rotate_left(18));
            for acc in v {
                h = (h ^ lane(0, acc)).wrapping_mul(P1).wrapping_add(P4);
            }
            h
        } else {
            seed.wrapping_add(P5)
        };
        h = h.wrapping_add(input.len() as u64);
        while rest.len() >= 8 {
            h = (h ^ lane(0, word(rest)))
                .rotate_left(27)
                .wrapping_mul(P1)
                .wrapping_add(P4);
            rest = &rest[8..];
        }
        if rest.len() >= 4 {
            let half = u64::from(u32::from_le_bytes(rest[..4].try_into().expect("4 bytes")));
            h = (h ^ half.wrapping_mul(P1))
                .rotate_left(23)
                .wrapping_mul(P2)
                .wrapping_add(P3);
            rest = &rest[4..];
        }
        for &byte in rest {
            h = (h ^ u64::from(byte).wrapping_mul(P5))
                .rotate_left(11)
                .wrapping_mul(P1);
        }
        h ^= h >> 33;
        h = h.wrapping_mul(P2);
        h ^= h >> 29;
        h = h.wrapping_mul(P3);
        h ^ (h >> 32)
    }
}
#[cfg(any(target_os = "linux", test))]
use agent_name::lock_name;

#[cfg(test)]
mod tests {
    use super::agent_name::xxh64;
    use super::*;

    #[test]
    fn xxh64_matches_the_reference() {
        // xxHash's own sanity values for the empty input.
        assert_eq!(xxh64(b"", 0), 0xEF46_DB37_51D8_E999);
        assert_eq!(xxh64(b"a", 0), 0xD24E_C4F1_A98C_6E5B);
        assert_eq!(xxh64(b"abc", 0), 0x44BC_2CF5_AD77_0999);
    }

    #[test]
    fn lock_names_are_the_agents() {
        // Names read back from a running pi-natives 18.2.10 (`/proc/net/unix`), and published
        // vectors of the same derivation (one over 32 bytes, one with non-ASCII text).
        for (path, name) in [
            (
                "/tmp/lockprobe/cfg.json.lock",
                "omp-file-lock-b264b208ed6f81e09ffc9e956e97f0a5",
            ),
            ("", "omp-file-lock-dd4458733774f8b02ff557a2e70c6e06"),
            (
                "/tmp/config.yml.lock",
                "omp-file-lock-71327ba360366b2a3eb5de2fa0093fa0",
            ),
            (
                &format!("/a/{}.lock", "b".repeat(100)),
                "omp-file-lock-84bf27afdf270489c51bc843e1a7d324",
            ),
            (
                "/tmp/日本/config.yml.lock",
                "omp-file-lock-8e86d6a4347e8cc9794efc489b074c6b",
            ),
        ] {
            assert_eq!(lock_name(path), name, "{path}");
        }
    }

    fn temp(name: &str) -> std::path::PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-native-lock-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn one_holder_at_a_time_until_release() {
        let dir = temp("held");
        let path = dir.join("mcp.json.lock");
        let path = path.to_str().unwrap();
        let first = try_acquire(path).unwrap().expect("free");
        assert!(try_acquire(path).unwrap().is_none());
        first.release();
        let again = soon(|| try_acquire(path)).expect("released");
        drop(again);
        assert!(soon(|| try_acquire(path)).is_some());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// The lock within a second: a child that another test thread forks at the moment of the
    /// release holds a copy of the socket (or of the locked file) until its `exec` closes it
    /// (close-on-exec), so the lock may stay taken for that long (microseconds) — as the
    /// writer's retries allow for.
    fn soon(attempt: impl Fn() -> Result<Option<FileLock>, Error>) -> Option<FileLock> {
        for _ in 0..100 {
            if let Some(lock) = attempt().unwrap() {
                return Some(lock);
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        None
    }

    #[test]
    fn the_file_lock_excludes_a_second_handle() {
        let dir = temp("file");
        let path = dir.join("mcp.json.lock");
        let first = try_file(&path).unwrap().expect("free");
        assert!(try_file(&path).unwrap().is_none());
        first.release();
        assert!(soon(|| try_file(&path)).is_some());
        let missing = try_file(&dir.join("absent/mcp.json.lock")).unwrap_err();
        assert_eq!(missing.code(), "ENOENT");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
