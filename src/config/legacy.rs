//! The first discovery, kept only for `native.loadMcpConfigs` until `manager.js` switches to
//! `loadAllMCPConfigs` (then this file and that binding go): `<cwd>/.mcp.json` (project) and
//! `~/.mcp.json` (user), a file that is not JSON being an error. Exa servers are recognised by
//! the SPEC 7.6 rules of [`super::exa`].

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::exa::{extract_exa_api_key, is_exa_server};
use super::server::{Level, Source};
use crate::error::Error;

/// The file name looked up in the project directory and in the home directory.
pub const CONFIG_FILE: &str = ".mcp.json";

/// What [`load_configs`] found.
#[derive(Debug, Default, serde::Serialize)]
pub struct LegacyLoaded {
    pub configs: Map<String, Value>,
    pub sources: Map<String, Value>,
    #[serde(rename = "exaApiKeys")]
    pub exa_api_keys: Vec<String>,
}

/// Options of [`load_configs`].
#[derive(Debug, Clone, Copy)]
pub struct LegacyOptions {
    /// Read `<cwd>/.mcp.json` (default true).
    pub enable_project_config: bool,
    /// Remove Exa servers and collect their API keys (default true).
    pub filter_exa: bool,
}

/// Reads `<cwd>/.mcp.json` (level `project`) and `<home>/.mcp.json` (level `user`). Project
/// entries win over user entries of the same name. Servers with `enabled: false` or named in the
/// `disabledServers` of either file are skipped. A missing file is no error; one that cannot be
/// read or is not valid JSON is, naming the file.
pub fn load_configs(
    cwd: &Path,
    home: Option<&Path>,
    options: LegacyOptions,
) -> Result<LegacyLoaded, Error> {
    let mut files: Vec<(PathBuf, Level)> = Vec::new();
    if options.enable_project_config {
        files.push((cwd.join(CONFIG_FILE), Level::Project));
    }
    if let Some(home) = home {
        let user = home.join(CONFIG_FILE);
        // The home directory as the project directory: one file, read once, as the project's.
        if !files.iter().any(|(p, _)| same_file(p, &user)) {
            files.push((user, Level::User));
        }
    }
    let mut read = Vec::new();
    for (path, level) in files {
        if let Some(doc) = read_config_file(&path)? {
            read.push((path, level, doc));
        }
    }
    let disabled: Vec<String> = read
        .iter()
        .filter_map(|(_, _, doc)| doc.get("disabledServers")?.as_array().cloned())
        .flatten()
        .filter_map(|v| v.as_str().map(str::to_owned))
        .collect();
    let mut out = LegacyLoaded::default();
    for (path, level, doc) in read {
        let Some(servers) = doc.get("mcpServers").and_then(Value::as_object) else {
            continue;
        };
        for (name, config) in servers {
            if out.configs.contains_key(name)
                || config.get("enabled") == Some(&Value::Bool(false))
                || disabled.iter().any(|d| d == name)
            {
                continue;
            }
            if options.filter_exa && is_exa_server(name, config) {
                if let Some(key) = extract_exa_api_key(config)
                    && !out.exa_api_keys.contains(&key)
                {
                    out.exa_api_keys.push(key);
                }
                continue;
            }
            let source = Source {
                provider: "mcp-json",
                provider_name: "MCP Config",
                path: path.to_string_lossy().into_owned(),
                level,
            };
            out.configs.insert(name.clone(), config.clone());
            out.sources.insert(
                name.clone(),
                serde_json::to_value(source).unwrap_or(Value::Null),
            );
        }
    }
    Ok(out)
}

fn same_file(a: &Path, b: &Path) -> bool {
    match (
        a.parent().map(Path::canonicalize),
        b.parent().map(Path::canonicalize),
    ) {
        (Some(Ok(x)), Some(Ok(y))) => x == y,
        _ => a == b,
    }
}

fn read_config_file(path: &Path) -> Result<Option<Value>, Error> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => {
            return Err(Error::InvalidConfig(format!(
                "cannot read {}: {e}",
                path.display()
            )));
        }
    };
    let doc: Value = serde_json::from_str(&text)
        .map_err(|e| Error::InvalidConfig(format!("{} is not valid JSON: {e}", path.display())))?;
    Ok(Some(doc))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn discovery_merges_levels_and_skips_disabled_and_exa() {
        let dir = std::env::temp_dir().join(format!("mcp-native-legacy-{}", std::process::id()));
        let (project, home) = (dir.join("p"), dir.join("h"));
        std::fs::create_dir_all(&project).unwrap();
        std::fs::create_dir_all(&home).unwrap();
        std::fs::write(
            project.join(CONFIG_FILE),
            r#"{"mcpServers":{"zeta":{"command":"p"},"both":{"command":"project"},"off":{"command":"x","enabled":false},"exa":{"command":"e","env":{"EXA_API_KEY":"k"}}}}"#,
        )
        .unwrap();
        std::fs::write(
            home.join(CONFIG_FILE),
            r#"{"mcpServers":{"both":{"command":"user"},"alpha":{"command":"u"},"gone":{"command":"g"}},"disabledServers":["gone"]}"#,
        )
        .unwrap();
        let all = LegacyOptions {
            enable_project_config: true,
            filter_exa: true,
        };
        let loaded = load_configs(&project, Some(&home), all).unwrap();
        let names: Vec<_> = loaded.configs.keys().cloned().collect();
        assert_eq!(
            names,
            ["zeta", "both", "alpha"],
            "file order, project first"
        );
        assert_eq!(loaded.configs["both"]["command"], "project");
        assert_eq!(loaded.sources["alpha"]["level"], "user");
        assert_eq!(loaded.sources["zeta"]["providerName"], "MCP Config");
        assert_eq!(loaded.exa_api_keys, ["k"]);

        let user_only = LegacyOptions {
            enable_project_config: false,
            filter_exa: false,
        };
        let loaded = load_configs(&project, Some(&home), user_only).unwrap();
        let names: Vec<_> = loaded.configs.keys().cloned().collect();
        assert_eq!(names, ["both", "alpha"]);

        std::fs::write(home.join(CONFIG_FILE), "{ not json").unwrap();
        let err = load_configs(&project, Some(&home), all)
            .unwrap_err()
            .to_string();
        assert!(
            err.contains(&home.join(CONFIG_FILE).display().to_string()),
            "{err}"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
