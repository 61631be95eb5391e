//! Server configuration (SPEC 6): `.mcp.json` discovery, validation, tool names, and the shell
//! commands behind `!command` config values. No napi here; the manager in `manager.js` calls
//! these through `binding/config.rs`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde::Serialize;
use serde_json::{Map, Value};
use tokio::io::AsyncReadExt;

use crate::error::Error;
use crate::runtime;

/// The file name looked up in the project directory and in the home directory.
pub const CONFIG_FILE: &str = ".mcp.json";

/// How long a `!command` config value may run before it is killed (SPEC 6.3: 10 s).
pub const COMMAND_TIMEOUT: Duration = Duration::from_secs(10);

/// The most stdout a `!command` may produce; more is cut off and the command is killed at once
/// (a secret is a line, not a file).
pub const COMMAND_MAX_OUTPUT: usize = 1 << 20;

/// Where a server's configuration came from (SPEC 2 `SourceMeta`).
#[derive(Debug, Clone, Serialize, PartialEq, Eq)]
pub struct Source {
    pub provider: &'static str,
    #[serde(rename = "providerName")]
    pub provider_name: &'static str,
    pub path: String,
    pub level: &'static str,
}

/// What discovery found: configs by server name (in file order, project first), their sources,
/// and the Exa API keys collected from filtered-out Exa servers.
#[derive(Debug, Default, Serialize)]
pub struct Loaded {
    pub configs: Map<String, Value>,
    pub sources: Map<String, Value>,
    #[serde(rename = "exaApiKeys")]
    pub exa_api_keys: Vec<String>,
}

/// Options of [`load_configs`] (SPEC 6 `loadConfigs`).
#[derive(Debug, Clone, Copy)]
pub struct LoadOptions {
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
    options: LoadOptions,
) -> Result<Loaded, Error> {
    let mut files: Vec<(PathBuf, &'static str)> = Vec::new();
    if options.enable_project_config {
        files.push((cwd.join(CONFIG_FILE), "project"));
    }
    if let Some(home) = home {
        let user = home.join(CONFIG_FILE);
        // The home directory as the project directory: one file, read once, as the project's.
        if !files.iter().any(|(p, _)| same_file(p, &user)) {
            files.push((user, "user"));
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
    let mut out = Loaded::default();
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
            if options.filter_exa && is_exa(name, config) {
                for key in exa_keys(config) {
                    if !out.exa_api_keys.contains(&key) {
                        out.exa_api_keys.push(key);
                    }
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

const EXA_HOST: &str = "mcp.exa.ai";

fn strings(config: &Value) -> impl Iterator<Item = &str> {
    let url = config.get("url").and_then(Value::as_str);
    let args = config
        .get("args")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str);
    url.into_iter().chain(args)
}

/// An Exa server: named `exa` (any case), or its url or one of its args names `mcp.exa.ai`.
pub fn is_exa(name: &str, config: &Value) -> bool {
    name.eq_ignore_ascii_case("exa") || strings(config).any(|s| s.contains(EXA_HOST))
}

/// The API keys of an Exa server: `exaApiKey=<key>` in its url or args, and `env.EXA_API_KEY`.
pub fn exa_keys(config: &Value) -> Vec<String> {
    let mut keys = Vec::new();
    for s in strings(config) {
        let mut rest = s;
        while let Some(at) = rest.find("exaApiKey=") {
            rest = &rest[at + "exaApiKey=".len()..];
            let end = rest
                .find(|c: char| c == '&' || c == '#' || c.is_whitespace())
                .unwrap_or(rest.len());
            if end > 0 {
                keys.push(rest[..end].to_owned());
            }
        }
    }
    if let Some(key) = config
        .get("env")
        .and_then(|e| e.get("EXA_API_KEY"))
        .and_then(Value::as_str)
        .filter(|k| !k.is_empty())
    {
        keys.push(key.to_owned());
    }
    keys
}

/// SPEC 6 `connectServers` step 3: what is wrong with server `name`'s config (empty: nothing).
pub fn validate(name: &str, config: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let has = |field: &str| is_truthy(config.get(field));
    if has("command") && has("url") {
        errors.push(format!(
            "Server \"{name}\": both \"command\" and \"url\" are set - server should be either stdio (command) OR http/sse (url), not both"
        ));
    }
    let kind = match config.get("type") {
        None | Some(Value::Null) => "stdio".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    };
    match kind.as_str() {
        "stdio" if !has("command") => {
            errors.push(format!(
                "Server \"{name}\": stdio server requires \"command\" field"
            ));
        }
        "http" | "sse" if !has("url") => {
            errors.push(format!(
                "Server \"{name}\": {kind} server requires \"url\" field"
            ));
        }
        "stdio" | "http" | "sse" => {}
        _ => errors.push(format!("Server \"{name}\": unknown server type \"{kind}\"")),
    }
    errors
}

/// JavaScript truthiness of an optional JSON value.
fn is_truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(_) => true,
    }
}

/// SPEC 6.2 `createMCPToolName`: `mcp_<server part>_<tool part>`, each part lower-cased with every
/// run of characters outside `[a-z_]` turned into one `_`, `_` runs collapsed, `_` trimmed, empty
/// parts falling back to `server` / `tool`, and a tool part that starts with `<server part>_`
/// losing that prefix.
pub fn tool_name(server: &str, tool: &str) -> String {
    let s = name_part(server, "server");
    let t = name_part(tool, "tool");
    let t = match t.strip_prefix(&s).and_then(|r| r.strip_prefix('_')) {
        Some(rest) if !rest.is_empty() => rest,
        _ => t.as_str(),
    };
    format!("mcp_{s}_{t}")
}

fn name_part(text: &str, fallback: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars().flat_map(char::to_lowercase) {
        let c = if c.is_ascii_lowercase() { c } else { '_' };
        if c == '_' && (out.is_empty() || out.ends_with('_')) {
            continue;
        }
        out.push(c);
    }
    while out.ends_with('_') {
        out.pop();
    }
    if out.is_empty() {
        fallback.to_owned()
    } else {
        out
    }
}

/// Runs a `!command` config value (SPEC 6.3) with `sh -c` in its own process group: its trimmed
/// stdout, or `None` on a failed start, a non-zero exit, a timeout (the whole group is killed)
/// or empty output. The caller caches and shares results.
pub async fn run_value_command(command: &str, timeout: Duration) -> Option<String> {
    let mut child = tokio::process::Command::new("sh")
        .arg("-c")
        .arg(command)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .process_group(0)
        .kill_on_drop(true)
        .spawn()
        .ok()?;
    let pgid = child.id()? as i32;
    let key = runtime::register_group(pgid);
    let mut stdout = child.stdout.take()?;
    let run = async {
        let mut out = Vec::new();
        let mut limited = (&mut stdout).take(COMMAND_MAX_OUTPUT as u64 + 1);
        limited.read_to_end(&mut out).await.ok()?;
        if out.len() > COMMAND_MAX_OUTPUT {
            // Over the limit: cut, and end the run now rather than wait for a command that may
            // never stop writing (it is killed below).
            out.truncate(COMMAND_MAX_OUTPUT);
            return Some(out);
        }
        let status = child.wait().await.ok()?;
        status.success().then_some(out)
    };
    let result = tokio::time::timeout(timeout, run).await;
    // Whatever happened, nothing the command started may outlive it.
    runtime::signal_group(pgid, libc::SIGKILL);
    runtime::unregister_group(key);
    let out = result.ok()??;
    let text = String::from_utf8_lossy(&out).trim().to_owned();
    (!text.is_empty()).then_some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn tool_names_follow_the_reference_rules() {
        assert_eq!(tool_name("Fast-Srv", "get_thing"), "mcp_fast_srv_get_thing");
        assert_eq!(tool_name("github", "github_search"), "mcp_github_search");
        assert_eq!(tool_name("a", "a_b"), "mcp_a_b");
        assert_eq!(tool_name("a_b", "x"), "mcp_a_b_x");
        assert_eq!(tool_name("--", "!!"), "mcp_server_tool");
        assert_eq!(
            tool_name("S3 Store", "list2Buckets"),
            "mcp_s_store_list_buckets"
        );
        assert_eq!(tool_name("srv", "srv_"), "mcp_srv_srv");
        assert_eq!(tool_name("__x__", "__Y__z"), "mcp_x_y_z");
        assert_eq!(tool_name("ÄBC", "é"), "mcp_bc_tool");
    }

    #[test]
    fn validation_messages_are_exact_and_joined_in_order() {
        let both = validate("n", &json!({"command": "x", "url": "http://h"}));
        assert_eq!(
            both,
            [
                "Server \"n\": both \"command\" and \"url\" are set - server should be either stdio (command) OR http/sse (url), not both"
            ]
        );
        assert_eq!(
            validate("n", &json!({"args": []})),
            ["Server \"n\": stdio server requires \"command\" field"]
        );
        assert_eq!(
            validate("n", &json!({"type": "sse"})),
            ["Server \"n\": sse server requires \"url\" field"]
        );
        assert_eq!(
            validate("n", &json!({"type": "ws", "url": "x"})),
            ["Server \"n\": unknown server type \"ws\""]
        );
        let two = validate("n", &json!({"type": "http", "command": "x", "url": ""}));
        assert_eq!(two.len(), 1, "an empty url is missing: {two:?}");
        assert!(validate("n", &json!({"command": "x"})).is_empty());
        assert!(validate("n", &json!({"type": "http", "url": "http://h"})).is_empty());
    }

    #[test]
    fn exa_servers_are_recognised_and_their_keys_collected() {
        let by_url = json!({"type": "http", "url": "https://mcp.exa.ai/mcp?exaApiKey=k1&x=1"});
        assert!(is_exa("search", &by_url));
        assert_eq!(exa_keys(&by_url), ["k1"]);
        let by_args = json!({"command": "npx", "args": ["-y", "mcp-remote", "https://mcp.exa.ai/mcp?exaApiKey=k2"]});
        assert!(is_exa("x", &by_args));
        assert_eq!(exa_keys(&by_args), ["k2"]);
        let by_name = json!({"command": "exa-mcp", "env": {"EXA_API_KEY": "k3"}});
        assert!(is_exa("EXA", &by_name));
        assert_eq!(exa_keys(&by_name), ["k3"]);
        assert!(!is_exa("exa2", &json!({"command": "x"})));
    }

    #[test]
    fn discovery_merges_levels_and_skips_disabled_and_exa() {
        let dir = std::env::temp_dir().join(format!("mcp-native-config-{}", std::process::id()));
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
        let all = LoadOptions {
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

        let user_only = LoadOptions {
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

    #[test]
    fn value_commands_give_trimmed_output_or_nothing() {
        let rt = runtime::runtime();
        let run = |c: &str, ms: u64| rt.block_on(run_value_command(c, Duration::from_millis(ms)));
        assert_eq!(run("echo '  secret  '", 5000).as_deref(), Some("secret"));
        assert_eq!(run("exit 3", 5000), None);
        assert_eq!(run("printf ''", 5000), None);
        let started = std::time::Instant::now();
        assert_eq!(run("sleep 5; echo late", 200), None);
        assert!(started.elapsed() < Duration::from_secs(2));
        // Output over the limit is cut and the run ends at once (`yes` never stops by itself).
        let started = std::time::Instant::now();
        let out = run("yes", 10_000).expect("the cut output");
        assert!(started.elapsed() < Duration::from_secs(3));
        assert!(out.len() <= COMMAND_MAX_OUTPUT && out.starts_with("y\ny"));
    }
}
