//! `manager`: every MCP server configured for a project, the way a coding agent starts them —
//! discovery ([`mcp_native_core::config::load_all`], SPEC 7), then [`mcp_native_core::manager::Manager`]
//! connects them all in parallel, lists their tools, and closes them again.
//!
//! ```text
//! cargo run --no-default-features --example manager -- [<dir>]
//! ```
//!
//! `<dir>` is the project directory (default: the current one). Discovery reads the project's
//! files there (`.mcp.json`, `mcp.json`, `.claude/`, `.cursor/`, `.vscode/`, …) and the user's
//! under `$HOME` (`~/.claude.json`, `~/.codex/config.toml`, the agent's own
//! `$PI_CODING_AGENT_DIR` or `~/.omp/agent`, …), as the agent does. Stdio servers start with
//! `<dir>` as their working directory.
//!
//! It prints what discovery found (each server and the file it came from) and its warnings, then
//! each server's status — `connected` with the server's name and version, or `failed` with the
//! reason — and its tools, one per line (`<server>: <tool> — <first line of the description>`),
//! then disconnects everything. Exit status: 0 when every discovered server connected (also when
//! there was none), 1 when one failed, 2 for a usage error. Connecting is bounded: each server by
//! its `timeout` (default 30 s) and the reconnect ladder that follows a timeout, the whole by
//! 60 s.
//!
//! How the tools are collected: the manager hands every server's tools to its [`ManagerHost`]
//! (`tools()`, at connect and again after a `list_changed` refresh), so this example's host keeps
//! them — no second `tools/list`. Its `prepare()` also differs from [`DefaultHost`]'s in one point:
//! after resolving `env` values it merges them over this process's environment
//! ([`with_process_env`]), as the agent spawns servers; `DefaultHost` would start a server that
//! has an `env` block with that block as its whole environment (no `PATH`, no `HOME`).
//!
//! Built without the crate's `node` feature (`--no-default-features`): the pure-Rust manager. With
//! the default features it builds and runs the same.
//!
//! [`ManagerHost`]: mcp_native_core::manager::ManagerHost
//! [`DefaultHost`]: mcp_native_core::manager::DefaultHost
//! [`with_process_env`]: mcp_native_core::client::json_config::with_process_env

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_native_core::client::Client;
use mcp_native_core::client::json_config::with_process_env;
use mcp_native_core::config::{EnvVars, LoadOptions, load_all};
use mcp_native_core::error::Error;
use mcp_native_core::manager::{
    LogLevel, Manager, ManagerEvent, ManagerHost, ManagerOptions, ServerStatus, resolve_values,
};
use mcp_native_core::sync::lock;
use serde_json::Value;

/// How long connecting may take in all.
const CONNECT_DEADLINE: Duration = Duration::from_secs(60);
/// How long disconnecting may take in all.
const CLOSE_DEADLINE: Duration = Duration::from_secs(15);

/// The manager's host: resolves configs like the agent, keeps each server's tools and the error
/// that failed a server.
#[derive(Default)]
struct Host {
    tools: Mutex<HashMap<String, Vec<Value>>>,
    errors: Mutex<HashMap<String, Error>>,
}

impl ManagerHost for Host {
    fn prepare(&self, _name: &str, config: Value) -> BoxFuture<'static, Result<Value, Error>> {
        Box::pin(async move { Ok(with_process_env(&resolve_values(config).await?)) })
    }

    fn tools(
        &self,
        name: &str,
        _client: &Client,
        tools: &[Value],
    ) -> BoxFuture<'static, Result<(), Error>> {
        lock(&self.tools).insert(name.to_owned(), tools.to_vec());
        Box::pin(async { Ok(()) })
    }

    fn log(&self, level: LogLevel, message: &str, details: Value) {
        // Failures are reported below from the connect report; warnings are worth seeing.
        if level == LogLevel::Warn {
            eprintln!("manager: {message} {details}");
        }
    }

    fn event(&self, event: ManagerEvent) {
        // The connect report has the message only; the event has the whole error (with the exit
        // status and stderr tail of a server process that ended on its own).
        if let ManagerEvent::Status {
            server,
            error: Some(error),
            ..
        } = event
        {
            lock(&self.errors).insert(server, error);
        }
    }
}

#[tokio::main]
async fn main() -> ExitCode {
    let mut argv = std::env::args().skip(1);
    let dir = match (argv.next(), argv.next()) {
        (Some(flag), _) if flag == "-h" || flag == "--help" => {
            println!("usage: manager [<dir>]");
            return ExitCode::SUCCESS;
        }
        (dir, None) => dir.map_or_else(|| PathBuf::from("."), PathBuf::from),
        (_, Some(_)) => {
            eprintln!("manager: one project directory at most\nusage: manager [<dir>]");
            return ExitCode::from(2);
        }
    };
    let dir = match dir.canonicalize() {
        Ok(dir) if dir.is_dir() => dir,
        _ => {
            eprintln!("manager: {} is not a directory", dir.display());
            return ExitCode::from(2);
        }
    };
    let Some(home) = std::env::var_os("HOME").filter(|h| !h.is_empty()) else {
        eprintln!("manager: HOME is not set");
        return ExitCode::from(2);
    };
    // Stdio servers start in the process's working directory: the project's, as in the agent.
    if let Err(e) = std::env::set_current_dir(&dir) {
        eprintln!("manager: cannot enter {}: {e}", dir.display());
        return ExitCode::from(2);
    }
    run(&dir, Path::new(&home)).await
}

async fn run(dir: &Path, home: &Path) -> ExitCode {
    // Discovery: every provider, by priority; problems are warnings, never errors.
    let vars: EnvVars = std::env::vars_os()
        .filter_map(|(k, v)| Some((k.into_string().ok()?, v.into_string().ok()?)))
        .collect();
    let loaded = load_all(dir, home, &vars, &LoadOptions::default());
    println!(
        "discovered {} server(s) for {}",
        loaded.configs.len(),
        dir.display()
    );
    for name in loaded.configs.keys() {
        let source = &loaded.sources[name];
        let text = |key: &str| source.get(key).and_then(Value::as_str).unwrap_or("?");
        println!(
            "  {name}  ({}, {} level: {})",
            text("providerName"),
            text("level"),
            text("path")
        );
    }
    if !loaded.exa_api_keys.is_empty() {
        println!(
            "  ({} Exa server(s) left out: the agent has its own Exa tools)",
            loaded.exa_api_keys.len()
        );
    }
    if !loaded.warnings.is_empty() {
        println!("warnings:");
        for warning in &loaded.warnings {
            println!("  {warning}");
        }
    }
    let names: Vec<String> = loaded.configs.keys().cloned().collect();
    if names.is_empty() {
        return ExitCode::SUCCESS;
    }

    // Connect them all: validation first, then every server in parallel. As in the agent, a
    // server slower than the startup window (250 ms) goes on in the background, and a start that
    // times out is tried again on the reconnect ladder; this example then waits for them all, as
    // the agent's print mode does (`wait_for_startup`), up to its deadline.
    let host = Arc::new(Host::default());
    let manager = Manager::new(ManagerOptions::default(), host.clone());
    let configs = loaded.configs.into_iter().collect();
    let report = manager.connect_servers(configs).await;
    let startup = manager.wait_for_startup(Some(CONNECT_DEADLINE)).await;
    if !startup.pending.is_empty() {
        println!("(gave up waiting after {CONNECT_DEADLINE:?})");
    }
    let mut failures: HashMap<String, String> = HashMap::new();
    failures.extend(report.start.errors.iter().cloned());
    failures.extend(startup.failed.iter().cloned());

    let tools = lock(&host.tools).clone();
    let errors = lock(&host.errors).clone();
    let mut all_connected = true;
    for name in &names {
        let status = manager.status(name);
        match (status, manager.client(name)) {
            (ServerStatus::Connected, Some(client)) => {
                let server = client
                    .server()
                    .and_then(|s| s.server_info)
                    .map_or_else(String::new, |i| format!(" — {} {}", i.name, i.version));
                let tools = tools.get(name).map_or(&[][..], Vec::as_slice);
                println!("{name}: connected{server}, {} tool(s)", tools.len());
                for tool in tools {
                    println!("  {name}: {}", tool_line(tool));
                }
            }
            _ => {
                all_connected = false;
                match (errors.get(name), failures.get(name)) {
                    (Some(error), _) => println!("{name}: failed — {}", describe(error)),
                    (None, Some(reason)) => println!("{name}: failed — {reason}"),
                    (None, None) => println!("{name}: {}", status.as_str()),
                }
            }
        }
    }

    if tokio::time::timeout(CLOSE_DEADLINE, manager.disconnect_all())
        .await
        .is_err()
    {
        eprintln!("manager: servers still closing after {CLOSE_DEADLINE:?}");
    }
    println!("disconnected");
    if all_connected {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `tool — first line of its description`, from the raw `tools/list` item.
fn tool_line(tool: &Value) -> String {
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("?");
    match tool
        .get("description")
        .and_then(Value::as_str)
        .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
    {
        Some(first) => format!("{name} — {first}"),
        None => name.to_owned(),
    }
}

/// The error's message, and — when the server process ended on its own — how it ended and the
/// last lines it wrote to stderr (usually the reason).
fn describe(error: &Error) -> String {
    let mut text = error.to_string();
    if let Error::Closed { exit, stderr } = error {
        if let Some(exit) = exit {
            match (&exit.code, &exit.signal) {
                (Some(code), _) => text.push_str(&format!(" (exited with code {code})")),
                (None, Some(signal)) => text.push_str(&format!(" (killed by {signal})")),
                (None, None) => text.push_str(" (exited)"),
            }
        }
        if let Some(tail) = stderr.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let lines: Vec<&str> = tail.lines().collect();
            let last = &lines[lines.len().saturating_sub(5)..];
            text.push_str("; stderr: ");
            text.push_str(&last.join(" | "));
        }
    }
    text
}
