//! File work for the config writer (SPEC 8.5) and the cache store: read a file's text, telling
//! "absent" apart from every other failure; replace a file atomically (`<path>.tmp`, then
//! rename); create private directories. The config JSON itself stays in JavaScript
//! (`JSON.stringify`/`JSON.parse` give the reference's exact text and its `SyntaxError`s).
//! Failures are [`Error::Fs`], printed like Node's fs errors.

use std::io::Write;
#[cfg(unix)]
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use crate::error::Error;

pub mod lock;

/// Mode of a written config file: it may hold tokens in `headers` or `env`. (Windows: an
/// access list with the current user alone, `crate::windows::owner_only`.)
#[cfg(unix)]
const FILE_MODE: u32 = 0o600;
/// Mode of the directories this module creates (config and cache directories are private).
#[cfg(unix)]
const DIR_MODE: u32 = 0o700;

/// Windows: `mkdir -p`, each directory it creates made owner-only (the counterpart of 0o700);
/// existing ones are left as they are.
#[cfg(windows)]
pub fn create_private_dirs(dir: &Path) -> Result<(), Error> {
    let missing: Vec<&Path> = dir.ancestors().take_while(|d| !d.exists()).collect();
    std::fs::create_dir_all(dir).map_err(|e| Error::fs("mkdir", dir, None, &e))?;
    for created in missing.into_iter().rev() {
        crate::windows::owner_only(created, true)
            .map_err(|e| Error::fs("chmod", created, None, &e))?;
    }
    Ok(())
}

/// `mkdir -p` with mode 0o700 (before the umask) for the directories it creates; existing ones
/// are left as they are.
#[cfg(unix)]
pub fn create_private_dirs(dir: &Path) -> Result<(), Error> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)
        .map_err(|e| Error::fs("mkdir", dir, None, &e))
}

/// The UTF-8 text of `path` (invalid sequences become U+FFFD, as Node's `readFile(p, "utf-8")`
/// does), or `None` when it does not exist (ENOENT). Every other failure is an error.
pub fn read_text(path: &Path) -> Result<Option<String>, Error> {
    match std::fs::read(path) {
        Ok(bytes) => Ok(Some(match String::from_utf8(bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        })),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        // Reading a directory fails at read(2), not open(2), as in Node.
        #[cfg(unix)]
        Err(e) if e.raw_os_error() == Some(libc::EISDIR) => Err(Error::fs("read", path, None, &e)),
        // Windows cannot open a directory as a file (access denied): Node says EISDIR at read.
        #[cfg(windows)]
        Err(_) if path.is_dir() => Err(Error::fs(
            "read",
            path,
            None,
            &std::io::Error::from(std::io::ErrorKind::IsADirectory),
        )),
        Err(e) => Err(Error::fs("open", path, None, &e)),
    }
}

/// The temporary file a write goes through: `<path>.tmp`.
pub fn temp_path(path: &Path) -> PathBuf {
    let mut name = path.as_os_str().to_os_string();
    name.push(".tmp");
    PathBuf::from(name)
}

/// Replaces `path` with `text`: creates the parent directories (0o700), writes `<path>.tmp`
/// (0o600, flushed to disk so that a crash never leaves an empty config behind the rename), then
/// renames it onto `path`. On failure the temporary file is left as it is (SPEC 8.5).
pub fn write_atomic(path: &Path, text: &str) -> Result<(), Error> {
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_private_dirs(parent)?;
    }
    let tmp = temp_path(path);
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    options.mode(FILE_MODE);
    let mut file = options
        .open(&tmp)
        .map_err(|e| Error::fs("open", &tmp, None, &e))?;
    // Windows: owner-only before a byte is written (the rename keeps the access list).
    #[cfg(windows)]
    crate::windows::owner_only(&tmp, false).map_err(|e| Error::fs("chmod", &tmp, None, &e))?;
    file.write_all(text.as_bytes())
        .and_then(|()| file.sync_all())
        .map_err(|e| Error::fs("write", &tmp, None, &e))?;
    drop(file);
    std::fs::rename(&tmp, path).map_err(|e| Error::fs("rename", &tmp, Some(path), &e))
}

#[cfg(all(test, unix))]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn temp(name: &str) -> PathBuf {
        let dir =
            std::env::temp_dir().join(format!("mcp-native-files-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        dir
    }

    fn mode(path: &Path) -> u32 {
        std::fs::metadata(path).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn absent_is_none_and_writes_replace_atomically() {
        let dir = temp("write");
        let file = dir.join("x/y/mcp.json");
        assert_eq!(read_text(&file).unwrap(), None);
        write_atomic(&file, "{\n  \"a\": 1\n}").unwrap();
        assert_eq!(
            read_text(&file).unwrap().as_deref(),
            Some("{\n  \"a\": 1\n}")
        );
        assert!(!temp_path(&file).exists());
        assert_eq!(mode(&file), FILE_MODE);
        assert_eq!(mode(&dir.join("x/y")), 0o700);
        write_atomic(&file, "{}").unwrap();
        assert_eq!(read_text(&file).unwrap().as_deref(), Some("{}"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn failures_look_like_node_errors() {
        let dir = temp("fail");
        std::fs::create_dir_all(&dir).unwrap();
        let err = read_text(&dir).unwrap_err();
        assert_eq!(err.code(), "EISDIR");
        assert_eq!(
            err.to_string(),
            format!(
                "EISDIR: illegal operation on a directory, read '{}'",
                dir.display()
            )
        );
        // Renaming onto a directory fails; the temporary file stays.
        let target = dir.join("taken");
        std::fs::create_dir_all(target.join("inner")).unwrap();
        let err = write_atomic(&target, "{}").unwrap_err();
        assert!(
            matches!(
                &err,
                Error::Fs {
                    syscall: "rename",
                    dest: Some(_),
                    ..
                }
            ),
            "{err}"
        );
        assert!(temp_path(&target).exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn invalid_utf8_is_replaced() {
        let dir = temp("utf8");
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("bad.json");
        std::fs::write(&file, b"{\"a\":\"\xff\"}").unwrap();
        assert_eq!(
            read_text(&file).unwrap().as_deref(),
            Some("{\"a\":\"\u{fffd}\"}")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
