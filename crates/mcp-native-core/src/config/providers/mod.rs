//! The discovery providers of SPEC 7.3, highest priority first, and what they share: reading and
//! parsing a file with the provider's warnings, walking a servers object (a `null` or non-object
//! entry is skipped with a warning, SPEC 7.10), copying fields, and `disabledServers`.
//!
//! A provider never fails: whatever goes wrong in one file becomes a warning (without the
//! provider's `[<name>] ` prefix, which the merge adds) and the provider goes on.

mod claude;
mod codex;
mod cursor;
mod gemini;
mod mcp_json;
mod native;
mod vscode;
mod windsurf;

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::EnvVars;
use super::format::{FileText, Files};
use super::server::{Level, Server, Source};

/// What every provider reads from.
pub struct Context<'a> {
    /// The project directory, absolute.
    pub cwd: PathBuf,
    /// The home directory (`~`), absolute.
    pub home: PathBuf,
    /// The OMP agent directory (user-level `mcp.json`), absolute.
    pub agent_dir: PathBuf,
    /// The process environment, for `${VAR}` expansion and Codex's `env_vars`.
    pub env: &'a EnvVars,
    pub files: &'a dyn Files,
}

/// What one provider found.
#[derive(Debug, Default)]
pub struct Found {
    /// Servers in the provider's precedence order (the first of a name wins).
    pub items: Vec<Server>,
    /// Warnings, without the `[<provider name>] ` prefix.
    pub warnings: Vec<String>,
    /// The `disabledServers` names of every file read, with that file's level.
    pub disabled: Vec<(Level, String)>,
}

/// A discovery source (SPEC 7.2 / 7.3).
pub struct Provider {
    /// The id used in `SourceMeta.provider` and in `disabledProviders`.
    pub id: &'static str,
    /// The display name (`SourceMeta.providerName`, warning prefix).
    pub name: &'static str,
    /// Higher wins; [`PROVIDERS`] is sorted by it.
    pub priority: u8,
    pub load: fn(&Context, &mut Found),
}

impl Provider {
    fn source(&self, path: &Path, level: Level) -> Source {
        Source {
            provider: self.id,
            provider_name: self.name,
            path: path.to_string_lossy().into_owned(),
            level,
        }
    }
}

/// Every provider, highest priority first; equal priorities keep the reference's import order.
pub const PROVIDERS: [Provider; 8] = [
    native::PROVIDER,
    claude::PROVIDER,
    codex::PROVIDER,
    gemini::PROVIDER,
    cursor::PROVIDER,
    windsurf::PROVIDER,
    vscode::PROVIDER,
    mcp_json::PROVIDER,
];

/// How a provider treats one file's text.
struct FileFormat<'f> {
    parse: fn(&str) -> Result<Value, String>,
    /// The warning for an empty (zero-byte) file; `None`: an empty file is silently no file.
    if_empty: Option<&'f dyn Fn(&Path) -> String>,
    /// The warning for a file that does not parse (given the path and the parser's reason).
    if_invalid: &'f dyn Fn(&Path, &str) -> String,
}

impl Found {
    fn warn(&mut self, message: String) {
        self.warnings.push(message);
    }

    /// Reads and parses `path`. `None` when it is missing (silent), unreadable, empty or invalid
    /// (each warned as `format` says).
    fn load(&mut self, ctx: &Context, path: &Path, format: &FileFormat) -> Option<Value> {
        let text = match ctx.files.read(path) {
            FileText::Missing => return None,
            FileText::Unreadable(reason) => {
                self.warn(format!("Failed to read {}: {reason}", path.display()));
                return None;
            }
            FileText::Text(text) => text,
        };
        if text.is_empty() {
            if let Some(warning) = format.if_empty {
                self.warn(warning(path));
            }
            return None;
        }
        match (format.parse)(&text) {
            Ok(doc) => Some(doc),
            Err(reason) => {
                self.warn((format.if_invalid)(path, &reason));
                None
            }
        }
    }

    /// Records the `disabledServers` (a string array at the top level) of a parsed file.
    fn note_disabled(&mut self, doc: &Value, level: Level) {
        if let Some(names) = doc.get("disabledServers").and_then(Value::as_array) {
            let names = names.iter().filter_map(Value::as_str);
            self.disabled
                .extend(names.map(|name| (level, name.to_owned())));
        }
    }

    /// The servers object `container[key]`: `None` when it is absent or falsy; a present value
    /// that is not an object is warned about and ignored.
    fn servers_of(
        &mut self,
        container: &Value,
        key: &str,
        path: &Path,
    ) -> Option<Map<String, Value>> {
        let value = container.get(key)?;
        match value {
            Value::Object(map) => Some(map.clone()),
            v if !super::js::truthy(Some(v)) => None,
            _ => {
                self.warn(format!("{}: invalid '{key}' key", path.display()));
                None
            }
        }
    }

    /// The object entries of a servers object; every other entry is skipped with `invalid(name)`.
    fn entries<'m>(
        &mut self,
        servers: &'m Map<String, Value>,
        invalid: impl Fn(&str) -> String,
    ) -> Vec<(&'m str, &'m Map<String, Value>)> {
        let mut out = Vec::with_capacity(servers.len());
        for (name, entry) in servers {
            match entry {
                Value::Object(obj) => out.push((name.as_str(), obj)),
                _ => self.warn(invalid(name)),
            }
        }
        out
    }
}

/// The warning for a skipped entry, in the words of the reference's Gemini and VS Code providers.
fn invalid_entry(name: &str, path: &Path) -> String {
    format!("Invalid config for server \"{name}\" in {}", path.display())
}

/// `obj[key]`, unless absent or `null`.
fn present(obj: &Map<String, Value>, key: &str) -> Option<Value> {
    obj.get(key).filter(|v| !v.is_null()).cloned()
}

/// `obj[key]` when it is a non-empty string.
fn non_empty_string(obj: &Map<String, Value>, key: &str) -> Option<Value> {
    obj.get(key)
        .filter(|v| v.as_str().is_some_and(|s| !s.is_empty()))
        .cloned()
}

/// The unchecked copies of native, mcp-json, Claude Code, Cursor and Windsurf (plus `cwd`, SPEC
/// 7.10): every value as written.
fn copy_unchecked(obj: &Map<String, Value>, server: &mut Server) {
    server.command = present(obj, "command");
    server.args = present(obj, "args");
    server.env = present(obj, "env");
    server.cwd = present(obj, "cwd");
    server.url = present(obj, "url");
    server.headers = present(obj, "headers");
}

/// The checked copies of Gemini CLI and VS Code: `command`, `url` and `cwd` only as strings,
/// `args` only as an array, `env` and `headers` only as objects.
fn copy_checked(obj: &Map<String, Value>, server: &mut Server) {
    let string = |key| obj.get(key).filter(|v| v.is_string()).cloned();
    let object = |key| obj.get(key).filter(|v| v.is_object()).cloned();
    server.command = string("command");
    server.url = string("url");
    server.cwd = string("cwd");
    server.args = obj.get("args").filter(|v| v.is_array()).cloned();
    server.env = object("env");
    server.headers = object("headers");
}

/// A transport only when `value` names `stdio`, `http` or `sse` (any case), lower-cased.
fn checked_transport(value: Option<&Value>) -> Option<String> {
    let name = value?.as_str()?;
    super::server::known_transport(name).map(str::to_owned)
}

/// `JSON.parse`, the format of every provider but Codex and VS Code, with these warnings.
fn json_format<'f>(
    if_empty: Option<&'f dyn Fn(&Path) -> String>,
    if_invalid: &'f dyn Fn(&Path, &str) -> String,
) -> FileFormat<'f> {
    FileFormat {
        parse: super::format::parse_json,
        if_empty,
        if_invalid,
    }
}

/// The warning most providers give for a file that does not parse.
fn invalid_json(path: &Path, reason: &str) -> String {
    format!("Invalid JSON in {}: {reason}", path.display())
}

#[cfg(test)]
mod tests;
