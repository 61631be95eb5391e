//! `loadAllMCPConfigs` (SPEC 7.1, 7.2): every provider in priority order, the first server of a
//! name wins, the winners are validated, then `enableProjectConfig`, `disabledServers`,
//! conversion, `enabled: false` and Exa filtering. Files are read afresh on every call (no read
//! cache, SPEC 7.10) and nothing here fails: problems become warnings.

use std::collections::HashSet;
use std::path::{Component, Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::EnvVars;
use super::convert::to_config;
use super::exa::filter_exa_servers;
use super::format::{Disk, Files};
use super::js::truthy;
use super::providers::{Context, Found, PROVIDERS};
use super::server::{Level, Server};

/// Options of [`load_all`] (`LoadMCPConfigsOptions` without the logger). Deserializes from the
/// JS options object; absent fields take the defaults.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct LoadOptions {
    /// Keep project-level servers (default true). `false` drops them after precedence is decided,
    /// so a project server that shadows a user server removes the name entirely.
    pub enable_project_config: bool,
    /// Remove Exa servers and collect their API keys (default true).
    pub filter_exa: bool,
    /// Provider ids to skip (`native`, `claude`, `codex`, `gemini`, `cursor`, `windsurf`,
    /// `vscode`, `mcp-json`); unknown ids are ignored.
    pub disabled_providers: Vec<String>,
}

impl Default for LoadOptions {
    fn default() -> Self {
        Self {
            enable_project_config: true,
            filter_exa: true,
            disabled_providers: Vec::new(),
        }
    }
}

/// What discovery found (`LoadMCPConfigsResult`): configs and sources by server name in merged
/// order, the API keys of the Exa servers removed, and the warnings.
#[derive(Debug, Default, Serialize)]
pub struct Loaded {
    /// Server configs by name, in precedence order.
    pub configs: Map<String, Value>,
    /// Where each came from (`SourceMeta` objects), by name.
    pub sources: Map<String, Value>,
    /// The API keys of the Exa servers removed, in order, duplicates kept.
    #[serde(rename = "exaApiKeys")]
    pub exa_api_keys: Vec<String>,
    /// `[<provider name>] <problem>`, each once, in the order found.
    pub warnings: Vec<String>,
}

/// Discovers every configured server for the project `cwd`, with `home` as `~` and `env` as
/// the process environment (for `${VAR}`, Codex's variables and the OMP agent directory).
pub fn load_all(cwd: &Path, home: &Path, env: &EnvVars, options: &LoadOptions) -> Loaded {
    load_with(&Disk, cwd, home, env, options)
}

/// [`load_all`] reading through `files`.
pub fn load_with(
    files: &dyn Files,
    cwd: &Path,
    home: &Path,
    env: &EnvVars,
    options: &LoadOptions,
) -> Loaded {
    let home = absolute(home);
    let ctx = Context {
        cwd: absolute(cwd),
        agent_dir: agent_dir(&home, env),
        home,
        env,
        files,
    };
    let mut warnings = Vec::new();
    let mut items = Vec::new();
    let mut disabled = HashSet::new();
    // Highest priority first; the sort is stable, so equal priorities keep the table's order.
    let mut providers: Vec<_> = PROVIDERS.iter().collect();
    providers.sort_by_key(|p| std::cmp::Reverse(p.priority));
    for provider in providers {
        if options
            .disabled_providers
            .iter()
            .any(|id| id == provider.id)
        {
            continue;
        }
        let mut found = Found::default();
        (provider.load)(&ctx, &mut found);
        let prefix = provider.name;
        warnings.extend(
            found
                .warnings
                .into_iter()
                .map(|w| format!("[{prefix}] {w}")),
        );
        items.extend(found.items);
        let applies = |level: &Level| options.enable_project_config || *level == Level::User;
        disabled.extend(
            found
                .disabled
                .into_iter()
                .filter(|(level, _)| applies(level))
                .map(|(_, name)| name),
        );
    }

    let mut seen = HashSet::new();
    let mut winners: Vec<Server> = items
        .into_iter()
        .filter(|s| seen.insert(s.name.clone()))
        .collect();
    winners.retain(|s| match invalid(s) {
        None => true,
        Some(problem) => {
            // An entry switched off on purpose (`{"enabled": false}` to hide a lower-priority
            // server) is removed all the same, without a warning.
            if s.enabled != Some(false) {
                warnings.push(format!(
                    "[{}] Invalid item at {}: {problem}",
                    s.source.provider_name, s.source.path
                ));
            }
            false
        }
    });
    if !options.enable_project_config {
        winners.retain(|s| s.source.level != Level::Project);
    }

    let mut out = Loaded::default();
    for server in winners {
        if disabled.contains(&server.name) {
            continue;
        }
        let config = to_config(&server);
        if config.get("enabled") == Some(&Value::Bool(false)) {
            continue;
        }
        let source = serde_json::to_value(&server.source).unwrap_or(Value::Null);
        out.sources.insert(server.name.clone(), source);
        out.configs.insert(server.name, Value::Object(config));
    }
    if options.filter_exa {
        let filtered = filter_exa_servers(std::mem::take(&mut out.configs), &out.sources);
        out.configs = filtered.configs;
        out.sources = filtered.sources;
        out.exa_api_keys = filtered.exa_api_keys;
    }
    let mut once = HashSet::new();
    warnings.retain(|w| once.insert(w.clone()));
    out.warnings = warnings;
    out
}

/// The capability's validation of a winner (SPEC 7.2), in order.
fn invalid(s: &Server) -> Option<&'static str> {
    let command = truthy(s.command.as_ref());
    let url = truthy(s.url.as_ref());
    if s.name.is_empty() {
        Some("Missing server name")
    } else if !command && !url {
        Some("Must have command or url")
    } else if s.transport.as_deref() == Some("stdio") && !command {
        Some("stdio transport requires command field")
    } else if matches!(s.transport.as_deref(), Some("http" | "sse")) && !url {
        Some("http/sse transport requires url field")
    } else {
        None
    }
}

/// The OMP agent directory, where the config writer puts user-level servers:
/// `$PI_CODING_AGENT_DIR`, else `~/<$PI_CONFIG_DIR or ".omp">/agent` (empty values count as
/// unset).
pub fn agent_dir(home: &Path, env: &EnvVars) -> PathBuf {
    let set = |name: &str| env.get(name).filter(|v| !v.is_empty());
    if let Some(dir) = set("PI_CODING_AGENT_DIR") {
        return absolute(Path::new(dir));
    }
    let config_dir = set("PI_CONFIG_DIR").map_or(".omp", String::as_str);
    absolute(&home.join(config_dir).join("agent"))
}

/// `path.resolve(p)`: absolute (against the process's working directory) with `.` and `..`
/// resolved lexically, no trailing separator.
pub fn absolute(p: &Path) -> PathBuf {
    let joined;
    let p = if p.is_absolute() {
        p
    } else {
        joined = std::env::current_dir()
            .unwrap_or_else(|_| PathBuf::from("/"))
            .join(p);
        &joined
    };
    let mut out = PathBuf::new();
    for part in p.components() {
        match part {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resolve_like_node() {
        assert_eq!(absolute(Path::new("/a/./b/../c/")), PathBuf::from("/a/c"));
        assert_eq!(absolute(Path::new("/../x")), PathBuf::from("/x"));
        assert!(absolute(Path::new("rel")).is_absolute());
    }

    #[test]
    fn agent_dir_follows_the_writer() {
        let home = Path::new("/h");
        let env = |pairs: &[(&str, &str)]| -> EnvVars {
            pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect()
        };
        assert_eq!(agent_dir(home, &env(&[])), PathBuf::from("/h/.omp/agent"));
        assert_eq!(
            agent_dir(home, &env(&[("PI_CONFIG_DIR", ".pi")])),
            PathBuf::from("/h/.pi/agent")
        );
        assert_eq!(
            agent_dir(
                home,
                &env(&[("PI_CONFIG_DIR", ".pi"), ("PI_CODING_AGENT_DIR", "/x/y/")])
            ),
            PathBuf::from("/x/y")
        );
        assert_eq!(
            agent_dir(
                home,
                &env(&[("PI_CODING_AGENT_DIR", ""), ("PI_CONFIG_DIR", "")])
            ),
            PathBuf::from("/h/.omp/agent")
        );
    }
}
