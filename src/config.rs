//! Config discovery, validation, Exa detection, tool names and `!command` values
//! (`mcp_native_core::config`) for `lib/config.js` and `manager.js`. Configs cross as JSON text both ways;
//! errors never quote a config value (it may be a secret).

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::{Map, Value, json};

use super::convert::millis;
use super::errors::{guard, js_error, promise};
use mcp_native_core::config;
use mcp_native_core::error::Error;

/// SPEC 6.2 `createMCPToolName(server, tool)`: `mcp_<server part>_<tool part>`.
#[napi]
pub fn mcp_tool_name(env: Env, server: String, tool: String) -> Result<String> {
    guard(&env, || Ok(config::tool_name(&server, &tool)))
}

/// SPEC 11.3 tool names (the agent's `createMCPToolName` as it ships today): `mcp__<server
/// part>_<tool part>`, digits kept, capped at 64 characters with a wyhash suffix.
#[napi]
pub fn mcp_tool_name_current(env: Env, server: String, tool: String) -> Result<String> {
    guard(&env, || {
        Ok(config::naming::current_tool_name(&server, &tool))
    })
}

/// The agent's `createLegacyMCPToolName`: the name before digits were kept, when it differs.
#[napi]
pub fn mcp_tool_name_legacy(env: Env, server: String, tool: String) -> Result<Option<String>> {
    guard(&env, || {
        Ok(config::naming::legacy_tool_name(&server, &tool))
    })
}

/// The agent's `canonicalMCPToolNameCandidates`.
#[napi]
pub fn mcp_tool_name_candidates(env: Env, name: String) -> Result<Vec<String>> {
    guard(&env, || Ok(config::naming::candidates(&name)))
}

/// wyhash (Zig's, seed 0: the agent's `Bun.hash`) of `text`'s UTF-8 bytes.
#[napi]
pub fn mcp_wyhash(env: Env, text: String) -> Result<BigInt> {
    guard(&env, || {
        Ok(BigInt::from(config::naming::wyhash(text.as_bytes())))
    })
}

/// SPEC 6 / 7.6 `validateServerConfig`: the error messages for one server config (JSON text),
/// in order.
#[napi]
pub fn validate_server_config(env: Env, name: String, config_json: String) -> Result<Vec<String>> {
    guard(&env, || {
        Ok(config::validate(&name, &parse_or_null(&config_json)))
    })
}

/// SPEC 7 `loadAllMCPConfigs`: every configured server of the project `cwd` (absolute), with
/// `home` as `~`, `envJson` the process environment as a JSON object of strings, and `optionsJson`
/// `{ enableProjectConfig?, filterExa?, disabledProviders? }`. Resolves with JSON text
/// `{ configs, sources, exaApiKeys, warnings }`; file problems are warnings, never rejections.
/// The files are read on a blocking-pool thread: the JS thread and the I/O thread never wait.
#[napi(ts_return_type = "Promise<string>")]
pub fn load_all_mcp_configs<'env>(
    env: &'env Env,
    cwd: String,
    home: String,
    env_json: String,
    options_json: String,
) -> Result<Object<'env>> {
    guard(env, || {
        let vars = parse_env(&env_json);
        let options: config::LoadOptions = serde_json::from_str(&options_json).map_err(|_| {
            js_error(
                env,
                &Error::InvalidConfig("discovery options are not a valid options object".into()),
            )
        })?;
        promise(env, async move {
            let load = move || {
                let loaded = config::load_all(Path::new(&cwd), Path::new(&home), &vars, &options);
                serde_json::to_string(&loaded).unwrap_or_else(|_| "{}".into())
            };
            tokio::task::spawn_blocking(load)
                .await
                .map_err(|_| Error::Internal("config discovery stopped unexpectedly".into()))
        })
    })
}

/// SPEC 7.6 `isExaMCPServer(name, config)` (config as JSON text).
#[napi]
pub fn is_exa_mcp_server(env: Env, name: String, config_json: String) -> Result<bool> {
    guard(&env, || {
        Ok(config::is_exa_server(&name, &parse_or_null(&config_json)))
    })
}

/// SPEC 7.6 `extractExaApiKey(config)` (config as JSON text): the key, or nothing.
#[napi]
pub fn extract_exa_api_key(env: Env, config_json: String) -> Result<Option<String>> {
    guard(&env, || {
        Ok(config::extract_exa_api_key(&parse_or_null(&config_json)))
    })
}

/// SPEC 7.6 `filterExaMCPServers`, the decision part: for `configsJson` (an object of configs by
/// name), JSON text `{ removed: [names], exaApiKeys: [keys] }`. `lib/config.js` builds the result
/// from the caller's own objects, so the configs it keeps are the very same objects.
#[napi]
pub fn find_exa_mcp_servers(env: Env, configs_json: String) -> Result<String> {
    guard(&env, || {
        let configs = match serde_json::from_str(&configs_json) {
            Ok(Value::Object(map)) => map,
            _ => Map::new(),
        };
        let names: Vec<String> = configs.keys().cloned().collect();
        let filtered = config::filter_exa_servers(configs, &Map::new());
        let removed: Vec<&String> = names
            .iter()
            .filter(|n| !filtered.configs.contains_key(*n))
            .collect();
        Ok(json!({ "removed": removed, "exaApiKeys": filtered.exa_api_keys }).to_string())
    })
}

/// Runs `command` with `sh -c` (own process group, killed at `timeoutMs`): its trimmed stdout,
/// or undefined on failure, timeout or empty output. The run is a task on the crate's runtime:
/// no libuv worker waits for it.
#[napi(ts_return_type = "Promise<string | undefined>")]
pub fn run_value_command<'env>(
    env: &'env Env,
    command: String,
    timeout_ms: f64,
) -> Result<Object<'env>> {
    guard(env, || {
        let timeout = std::time::Duration::from_millis(millis(timeout_ms));
        promise(env, async move {
            Ok(config::run_value_command(&command, timeout).await)
        })
    })
}

/// A config from JS as JSON; text that is not JSON is `null` (every check then fails cleanly).
fn parse_or_null(json: &str) -> Value {
    serde_json::from_str(json).unwrap_or(Value::Null)
}

/// `process.env` as JSON: its string values (anything else is not an environment value).
fn parse_env(json: &str) -> config::EnvVars {
    match serde_json::from_str(json) {
        Ok(Value::Object(map)) => map
            .into_iter()
            .filter_map(|(k, v)| match v {
                Value::String(s) => Some((k, s)),
                _ => None,
            })
            .collect(),
        _ => config::EnvVars::new(),
    }
}
