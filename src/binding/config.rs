//! Config discovery, validation, tool names and `!command` values (`crate::config`) for
//! `manager.js`. Results cross as JSON text or plain strings.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::json;

use super::convert::millis;
use super::errors::{descriptor, guard, promise};
use crate::config;

/// SPEC 6.2 `createMCPToolName(server, tool)`: `mcp_<server part>_<tool part>`.
#[napi]
pub fn mcp_tool_name(env: Env, server: String, tool: String) -> Result<String> {
    guard(&env, || Ok(config::tool_name(&server, &tool)))
}

/// SPEC 6 validation of one server config (JSON text): the error messages, in order.
#[napi]
pub fn validate_server_config(env: Env, name: String, config_json: String) -> Result<Vec<String>> {
    guard(&env, || {
        Ok(match serde_json::from_str(&config_json) {
            Ok(value) => config::validate(&name, &value),
            Err(_) => config::validate(&name, &serde_json::Value::Null),
        })
    })
}

/// SPEC 6 default `loadConfigs`: JSON text `{ configs, sources, exaApiKeys }`, or
/// `{ error: <descriptor> }` when a config file cannot be read or parsed.
#[napi]
pub fn load_mcp_configs(
    env: Env,
    cwd: String,
    home: Option<String>,
    enable_project_config: bool,
    filter_exa: bool,
) -> Result<String> {
    guard(&env, || {
        let options = config::LoadOptions {
            enable_project_config,
            filter_exa,
        };
        let loaded = config::load_configs(Path::new(&cwd), home.as_deref().map(Path::new), options);
        Ok(match loaded {
            Ok(l) => serde_json::to_string(&l).unwrap_or_else(|_| "{}".into()),
            Err(e) => json!({ "error": descriptor(&e) }).to_string(),
        })
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
