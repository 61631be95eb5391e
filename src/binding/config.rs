//! Config discovery, validation, tool names and `!command` values (`crate::config`) for
//! `manager.js`. Results cross as JSON text or plain strings.

use std::path::Path;

use napi::bindgen_prelude::*;
use napi_derive::napi;
use serde_json::json;

use super::errors::descriptor;
use crate::config;

/// SPEC 6.2 `createMCPToolName(server, tool)`: `mcp_<server part>_<tool part>`.
#[napi]
pub fn mcp_tool_name(server: String, tool: String) -> String {
    config::tool_name(&server, &tool)
}

/// SPEC 6 validation of one server config (JSON text): the error messages, in order.
#[napi]
pub fn validate_server_config(name: String, config_json: String) -> Vec<String> {
    match serde_json::from_str(&config_json) {
        Ok(value) => config::validate(&name, &value),
        Err(_) => config::validate(&name, &serde_json::Value::Null),
    }
}

/// SPEC 6 default `loadConfigs`: JSON text `{ configs, sources, exaApiKeys }`, or
/// `{ error: <descriptor> }` when a config file cannot be read or parsed.
#[napi]
pub fn load_mcp_configs(
    cwd: String,
    home: Option<String>,
    enable_project_config: bool,
    filter_exa: bool,
) -> String {
    let options = config::LoadOptions {
        enable_project_config,
        filter_exa,
    };
    let loaded = config::load_configs(Path::new(&cwd), home.as_deref().map(Path::new), options);
    match loaded {
        Ok(l) => serde_json::to_string(&l).unwrap_or_else(|_| "{}".into()),
        Err(e) => json!({ "error": descriptor(&e) }).to_string(),
    }
}

/// Runs a `!command` value off the JS thread (SPEC 6.3).
pub struct ValueCommand {
    command: String,
    timeout_ms: u32,
}

impl Task for ValueCommand {
    type Output = Option<String>;
    type JsValue = Option<String>;

    fn compute(&mut self) -> Result<Self::Output> {
        let (tx, rx) = tokio::sync::oneshot::channel();
        let command = std::mem::take(&mut self.command);
        let timeout = std::time::Duration::from_millis(u64::from(self.timeout_ms));
        crate::runtime::runtime().spawn(async move {
            let _ = tx.send(config::run_value_command(&command, timeout).await);
        });
        Ok(rx.blocking_recv().ok().flatten())
    }

    fn resolve(&mut self, _env: Env, output: Self::Output) -> Result<Self::JsValue> {
        Ok(output)
    }
}

/// Runs `command` with `sh -c` (own process group, killed at `timeoutMs`): its trimmed stdout,
/// or undefined on failure, timeout or empty output.
#[napi(ts_return_type = "Promise<string | undefined>")]
pub fn run_value_command(command: String, timeout_ms: u32) -> AsyncTask<ValueCommand> {
    AsyncTask::new(ValueCommand {
        command,
        timeout_ms,
    })
}
