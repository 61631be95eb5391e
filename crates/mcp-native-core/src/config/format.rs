//! Reading config files and parsing their formats: strict JSON, JSONC (VS Code) and TOML (Codex),
//! all into `serde_json::Value` in file order. Reading goes through [`Files`], so the fuzz target
//! and tests can hand in bytes without a file system. Parse errors carry a position and a reason,
//! never the file's text (a config line can hold a secret).

use std::io::Read;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};

use super::jsonc;

/// The largest config file read (a larger one is reported and skipped). `~/.claude.json` keeps
/// Claude Code's per-project history and reaches tens of MiB; this leaves room for that while
/// keeping a runaway file (a FIFO, `/dev/zero` behind a symlink) from eating memory.
pub const MAX_FILE_BYTES: u64 = 256 << 20;

/// What reading one path gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FileText {
    /// No such file (or a path component is not a directory): silent, as in the reference.
    Missing,
    /// It exists but could not be read; the reason, for a warning.
    Unreadable(String),
    /// Its text (invalid UTF-8 replaced, as JavaScript's decoder does).
    Text(String),
}

/// Where discovery reads from.
pub trait Files {
    /// The text of `path`.
    fn read(&self, path: &Path) -> FileText;
    /// `path` with symlinks resolved, if it exists (used to match Claude Code's project keys).
    fn real_path(&self, path: &Path) -> Option<PathBuf>;
}

/// The real file system.
pub struct Disk;

impl Files for Disk {
    fn read(&self, path: &Path) -> FileText {
        let file = match std::fs::File::open(path) {
            Ok(f) => f,
            Err(e) if is_missing(&e) => return FileText::Missing,
            Err(e) => return FileText::Unreadable(e.to_string()),
        };
        let mut bytes = Vec::new();
        if let Err(e) = file.take(MAX_FILE_BYTES + 1).read_to_end(&mut bytes) {
            return FileText::Unreadable(e.to_string());
        }
        if bytes.len() as u64 > MAX_FILE_BYTES {
            return FileText::Unreadable(format!("larger than {MAX_FILE_BYTES} bytes"));
        }
        FileText::Text(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn real_path(&self, path: &Path) -> Option<PathBuf> {
        std::fs::canonicalize(path).ok()
    }
}

fn is_missing(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory
    )
}

/// A leading byte-order mark is not part of the document (editors on Windows add one).
fn without_bom(text: &str) -> &str {
    text.strip_prefix('\u{feff}').unwrap_or(text)
}

/// Strict JSON (`JSON.parse`). The error is serde's reason and position (no file content).
pub fn parse_json(text: &str) -> Result<Value, String> {
    serde_json::from_str(without_bom(text)).map_err(|e| e.to_string())
}

/// JSONC: JSON plus `//` and `/* */` comments and trailing commas.
pub fn parse_jsonc(text: &str) -> Result<Value, String> {
    parse_json(&jsonc::to_json(without_bom(text)))
}

/// TOML, as JSON: tables keep file order; datetimes become their text; a NaN or infinite float
/// becomes `null`. The error is the parser's reason and the line and column.
pub fn parse_toml(text: &str) -> Result<Value, String> {
    let text = without_bom(text);
    match text.parse::<toml::Table>() {
        Ok(table) => Ok(table_to_json(table)),
        Err(e) => {
            let reason = e.message().trim().to_owned();
            Err(match e.span() {
                Some(span) => {
                    let (line, column) = line_column(text, span.start);
                    format!("{reason} at line {line}, column {column}")
                }
                None => reason,
            })
        }
    }
}

fn line_column(text: &str, offset: usize) -> (usize, usize) {
    let before = text.get(..offset).unwrap_or(text);
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

fn table_to_json(table: toml::Table) -> Value {
    Value::Object(
        table
            .into_iter()
            .map(|(k, v)| (k, toml_to_json(v)))
            .collect::<Map<_, _>>(),
    )
}

fn toml_to_json(v: toml::Value) -> Value {
    match v {
        toml::Value::String(s) => Value::String(s),
        toml::Value::Integer(i) => Value::Number(i.into()),
        toml::Value::Float(f) => Number::from_f64(f).map_or(Value::Null, Value::Number),
        toml::Value::Boolean(b) => Value::Bool(b),
        toml::Value::Datetime(d) => Value::String(d.to_string()),
        toml::Value::Array(items) => Value::Array(items.into_iter().map(toml_to_json).collect()),
        toml::Value::Table(t) => table_to_json(t),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn toml_keeps_order_and_converts_values() {
        let v = parse_toml(
            "[mcp_servers.z]\ncommand = \"z\"\n[mcp_servers.a]\nargs = [\"-y\", 1]\nwhen = 1979-05-27T07:32:00Z\n",
        )
        .unwrap();
        let names: Vec<_> = v["mcp_servers"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["z", "a"]);
        assert_eq!(v["mcp_servers"]["a"]["args"], json!(["-y", 1]));
        assert_eq!(v["mcp_servers"]["a"]["when"], "1979-05-27T07:32:00Z");
    }

    #[test]
    fn errors_name_a_position_not_the_content() {
        let err = parse_toml("ok = 1\ntoken = \"sk-secret\n").unwrap_err();
        assert!(err.contains("line 2"), "{err}");
        assert!(!err.contains("sk-secret"), "{err}");
        let err = parse_json("{\n \"token\": \"sk-secret\",\n}").unwrap_err();
        assert!(err.contains("line 3"), "{err}");
        assert!(!err.contains("sk-secret"), "{err}");
    }

    #[test]
    fn bom_and_jsonc() {
        assert_eq!(parse_json("\u{feff}{}").unwrap(), json!({}));
        assert_eq!(
            parse_jsonc("\u{feff}{\"a\": 1, // c\n}").unwrap(),
            json!({"a": 1})
        );
        assert!(parse_json("{\"a\": 1,}").is_err());
    }

    #[test]
    fn disk_reads_missing_and_unreadable() {
        let dir = std::env::temp_dir().join(format!("mcp-native-format-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        assert_eq!(Disk.read(&dir.join("none.json")), FileText::Missing);
        std::fs::write(dir.join("file"), "x").unwrap();
        assert_eq!(Disk.read(&dir.join("file/below.json")), FileText::Missing);
        assert!(matches!(Disk.read(&dir), FileText::Unreadable(_)));
        std::fs::write(dir.join("bad.json"), b"{\"a\":\"\xff\"}").unwrap();
        assert_eq!(
            Disk.read(&dir.join("bad.json")),
            FileText::Text("{\"a\":\"\u{fffd}\"}".into())
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
