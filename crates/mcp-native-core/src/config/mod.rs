//! Server configuration (SPEC 6, 7): discovery of every configured server (the agent's own
//! `.omp` files, `mcp.json`/`.mcp.json`, Claude Code, Codex, Gemini CLI, Cursor, Windsurf, VS Code),
//! validation, Exa detection, tool names and the shell commands behind `!command` values. No napi
//! here: the binding's `src/config.rs` exposes it to `lib/config.js` and `manager.js`.
//!
//! Files, one concept each:
//! - [`merge`]: `loadAllMCPConfigs` — providers by priority, dedup, validation, options.
//! - `providers/`: one file per source (SPEC 7.3), what each reads and how it maps entries.
//! - [`format`](mod@format): reading files (through a [`Files`](format::Files) seam) and parsing JSON, JSONC, TOML;
//!   `jsonc`: comments and trailing commas out.
//! - [`expand`]: `${VAR}` / `${VAR:-default}` (SPEC 7.5) against a passed-in environment.
//! - `server`: the canonical server and its [`Source`]; `convert`: server → config (SPEC 7.4).
//! - [`exa`]: Exa servers and keys (SPEC 7.6).
//! - `js`: the JavaScript semantics the reference's rules are written in.
//! - [`value_command`]: `!command` values (SPEC 6.3).
//! - `fuzz`: the property check behind `fuzz/fuzz_targets/config.rs`.

mod convert;
pub mod exa;
pub mod expand;
pub mod format;
mod fuzz;
mod js;
mod jsonc;
pub mod merge;
pub mod naming;
mod providers;
mod server;
pub mod value_command;

use serde_json::Value;

pub use exa::{ExaFiltered, extract_exa_api_key, filter_exa_servers, is_exa_server};
#[doc(hidden)]
pub use fuzz::fuzz_check;
pub use merge::{LoadOptions, Loaded, load_all, load_with};
pub use server::{Level, Source};
pub use value_command::{COMMAND_MAX_OUTPUT, COMMAND_TIMEOUT, run_value_command};

/// The process environment as discovery sees it (the JS side passes `process.env`).
pub type EnvVars = std::collections::HashMap<String, String>;

/// SPEC 6 `connectServers` step 3: what is wrong with server `name`'s config (empty: nothing).
pub fn validate(name: &str, config: &Value) -> Vec<String> {
    let mut errors = Vec::new();
    let has = |field: &str| js::truthy(config.get(field));
    if has("command") && has("url") {
        errors.push(format!(
            "Server \"{name}\": both \"command\" and \"url\" are set - server should be either stdio (command) OR http/sse (url), not both"
        ));
    }
    let kind = match config.get("type") {
        None | Some(Value::Null) => "stdio".to_owned(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => js::to_js_string(other),
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

/// SPEC 6.2 `createMCPToolName`: `mcp_<server part>_<tool part>`, each part lower-cased with every
/// run of characters outside `[a-z_]` turned into one `_`, `_` runs collapsed, `_` trimmed, empty
/// parts falling back to `server` / `tool`, and a tool part that starts with `<server part>_`
/// losing that prefix.
pub fn tool_name(server: &str, tool: &str) -> String {
    let s = naming::part(server, "server", false);
    let t = naming::part(tool, "tool", false);
    let t = match t.strip_prefix(&s).and_then(|r| r.strip_prefix('_')) {
        Some(rest) if !rest.is_empty() => rest,
        _ => t.as_str(),
    };
    format!("mcp_{s}_{t}")
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
}
