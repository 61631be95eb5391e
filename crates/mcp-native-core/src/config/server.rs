//! The canonical server every provider maps its entries to (the reference's `MCPServer`), and
//! where it came from (`SourceMeta`).

use serde::Serialize;
use serde_json::Value;

/// Whether a file belongs to the user or to the project (SPEC 2 `SourceMeta.level`; discovery
/// never produces `native`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// The user's own files (home directory, agent directory).
    User,
    /// The project's files (under the working directory).
    Project,
}

/// Where a server's configuration came from (SPEC 2 `SourceMeta`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Source {
    /// The provider id (`native`, `claude`, `codex`, …).
    pub provider: &'static str,
    /// The provider's display name (`OMP`, `Claude Code`, …).
    #[serde(rename = "providerName")]
    pub provider_name: &'static str,
    /// The absolute path of the file.
    pub path: String,
    /// User or project level.
    pub level: Level,
}

/// One server entry as a provider read it, before conversion (SPEC 7.3 `MCPServer`). Field values
/// are kept as written unless the provider checks them; `null` counts as absent.
#[derive(Debug, Clone)]
pub struct Server {
    pub name: String,
    pub enabled: Option<bool>,
    pub timeout: Option<f64>,
    pub command: Option<Value>,
    pub args: Option<Value>,
    pub env: Option<Value>,
    pub cwd: Option<Value>,
    pub url: Option<Value>,
    pub headers: Option<Value>,
    pub auth: Option<Value>,
    /// `stdio`, `http` or `sse` (lower-cased from any case), or another transport name as written.
    pub transport: Option<String>,
    pub source: Source,
}

impl Server {
    /// A server with only a name and a source.
    pub fn new(name: &str, source: Source) -> Self {
        Self {
            name: name.to_owned(),
            enabled: None,
            timeout: None,
            command: None,
            args: None,
            env: None,
            cwd: None,
            url: None,
            headers: None,
            auth: None,
            transport: None,
            source,
        }
    }
}

/// A transport name: `stdio`, `http` and `sse` in any case become lower case (SPEC 7.10); any
/// other string stays as written; a non-string value becomes its JavaScript string.
pub fn transport_name(v: &Value) -> Option<String> {
    match v {
        Value::Null => None,
        Value::String(s) => Some(known_transport(s).map_or_else(|| s.clone(), str::to_owned)),
        other => Some(super::js::to_js_string(other)),
    }
}

/// `Some("stdio" | "http" | "sse")` when `s` names one of them in any case.
pub fn known_transport(s: &str) -> Option<&'static str> {
    ["stdio", "http", "sse"]
        .into_iter()
        .find(|t| s.eq_ignore_ascii_case(t))
}
