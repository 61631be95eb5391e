//! `call`: one stdio MCP server by hand, with [`mcp_native_core::client::Client`] — spawn it, run the
//! handshake, list its tools, call one, print what came back.
//!
//! ```text
//! cargo run --no-default-features --example call -- [OPTIONS] [--] <command> [args…]
//!
//!   --tool NAME     the tool to call. Default: `echo` when the server has a tool of that name,
//!                   otherwise none (the tool list is all that is printed)
//!   --args JSON     the tool's arguments, a JSON object. Default: {"message":"hello"} for
//!                   `echo`, {} for any other tool
//!   --timeout SECS  the deadline of the connect and of each request (default 30); the whole run
//!                   is bounded by four times that
//!   -h, --help      this text
//! ```
//!
//! Options come first; the first word that is not an option (or whatever follows a `--`) is the
//! server's command, and every word after it is passed to the server untouched. For example:
//!
//! ```text
//! cargo run --no-default-features --example call -- node __test__/fixture/server.mjs
//! cargo run --no-default-features --example call -- --tool add --args '{"a":2,"b":3}' -- node __test__/fixture/server.mjs
//! cargo run --no-default-features --example call -- \
//!     node node_modules/@modelcontextprotocol/server-everything/dist/index.js stdio
//! ```
//!
//! It prints the server (`server: <name> <version> (protocol <version>)`), its tools one per line
//! (`  <name> — <first line of the description>`), then the call and its result: text items as
//! they are, other content as a one-line summary, `structuredContent` as JSON.
//!
//! Exit status: 0 when everything worked; 1 when the server could not be started or connected, a
//! request failed or timed out, the tool does not exist, or the tool reported an error
//! (`isError`); 2 for a usage error. Failures are one line on stderr starting with `call:`; when
//! the server process ended on its own, its exit status and the tail of its stderr follow.
//!
//! The example builds without the crate's `node` feature (`--no-default-features`), which is the
//! pure-Rust client; with the default features it builds and runs the same.

use std::process::ExitCode;
use std::time::Duration;

use mcp_native_core::client::model::{CallToolResult, Content, Tool};
use mcp_native_core::client::{Client, ClientOptions, ServerConfig};
use mcp_native_core::error::Error;
use serde_json::{Value, json};

const USAGE: &str =
    "usage: call [--tool NAME] [--args JSON] [--timeout SECS] [--] <command> [args…]";

/// What the command line asked for.
struct Options {
    tool: Option<String>,
    args: Option<Value>,
    timeout: Duration,
    command: String,
    command_args: Vec<String>,
}

/// Reads the command line (without the program name). `Ok(None)`: help was asked for.
fn parse(argv: Vec<String>) -> Result<Option<Options>, String> {
    let mut tool = None;
    let mut args = None;
    let mut timeout = Duration::from_secs(30);
    let mut rest = argv.into_iter();
    let mut command = None;
    while let Some(word) = rest.next() {
        if word == "--" {
            command = rest.next();
            break;
        }
        if !word.starts_with('-') {
            command = Some(word);
            break;
        }
        // `--name value` or `--name=value`.
        let (name, inline) = match word.split_once('=') {
            Some((n, v)) => (n.to_owned(), Some(v.to_owned())),
            None => (word.clone(), None),
        };
        if name == "-h" || name == "--help" {
            return Ok(None);
        }
        let mut value = || {
            inline
                .clone()
                .or_else(|| rest.next())
                .ok_or_else(|| format!("{name} needs a value"))
        };
        match name.as_str() {
            "--tool" => tool = Some(value()?),
            "--args" => {
                let text = value()?;
                match serde_json::from_str::<Value>(&text) {
                    Ok(v @ Value::Object(_)) => args = Some(v),
                    Ok(_) => return Err("--args must be a JSON object".into()),
                    Err(e) => return Err(format!("--args is not JSON: {e}")),
                }
            }
            "--timeout" => {
                let text = value()?;
                let secs: f64 = text
                    .parse()
                    .ok()
                    .filter(|s: &f64| s.is_finite() && *s > 0.0)
                    .ok_or_else(|| format!("--timeout must be a positive number, not {text:?}"))?;
                timeout = Duration::from_secs_f64(secs);
            }
            _ => return Err(format!("unknown option {name}")),
        }
    }
    let command = command.ok_or("no server command given")?;
    Ok(Some(Options {
        tool,
        args,
        timeout,
        command,
        command_args: rest.collect(),
    }))
}

#[tokio::main]
async fn main() -> ExitCode {
    let options = match parse(std::env::args().skip(1).collect()) {
        Ok(Some(options)) => options,
        Ok(None) => {
            println!("{USAGE}");
            return ExitCode::SUCCESS;
        }
        Err(message) => {
            eprintln!("call: {message}\n{USAGE}");
            return ExitCode::from(2);
        }
    };

    let args: Vec<&str> = options.command_args.iter().map(String::as_str).collect();
    let config = ServerConfig::stdio(options.command.as_str(), &args)
        .with_timeout_ms(options.timeout.as_millis().try_into().unwrap_or(u64::MAX));
    // The client's name is the server's name in messages (`Connection to MCP server "node" …`).
    let client = Client::new(&options.command, config, ClientOptions::default(), None);

    // Every step has its own deadline (the config's timeout); this one bounds the whole run, so
    // that nothing — a server that pages forever, say — keeps the example from ending.
    let outcome = match tokio::time::timeout(options.timeout * 4, run(&client, &options)).await {
        Ok(outcome) => outcome,
        Err(_) => Err(format!(
            "gave up after {:?} (the whole run's deadline)",
            options.timeout * 4
        )),
    };
    // Stops the server (SIGTERM, then SIGKILL after its grace period) and reaps it.
    if tokio::time::timeout(Duration::from_secs(10), client.close())
        .await
        .is_err()
    {
        eprintln!("call: the server did not close within 10 s");
    }
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("call: {message}");
            ExitCode::FAILURE
        }
    }
}

async fn run(client: &Client, options: &Options) -> Result<(), String> {
    let init = client
        .connect()
        .await
        .map_err(|e| format!("could not connect to {}: {}", options.command, describe(&e)))?;
    let (name, version) = init
        .server_info
        .as_ref()
        .map_or(("(unnamed)", "(no version)"), |i| {
            (i.name.as_str(), i.version.as_str())
        });
    let protocol = init.protocol_version.as_deref().unwrap_or("(none)");
    println!("server: {name} {version} (protocol {protocol})");

    let tools = client
        .list_tools()
        .await
        .map_err(|e| format!("tools/list failed: {}", describe(&e)))?;
    println!("tools ({}):", tools.len());
    for tool in &tools {
        println!("  {}", tool_line(tool));
    }

    let tool = match &options.tool {
        Some(name) if !tools.iter().any(|t| &t.name == name) => {
            return Err(format!("the server has no tool named {name:?}"));
        }
        Some(name) => name.as_str(),
        None if tools.iter().any(|t| t.name == "echo") => "echo",
        None => {
            println!("(no tool called: the server has no `echo`; choose one with --tool NAME)");
            return Ok(());
        }
    };
    let arguments = match &options.args {
        Some(args) => args.clone(),
        None if tool == "echo" => json!({ "message": "hello" }),
        None => json!({}),
    };
    println!("call {tool} {arguments}:");
    let result = client
        .call_tool(tool, arguments)
        .await
        .map_err(|e| format!("tools/call {tool} failed: {}", describe(&e)))?;
    print_result(&result);
    if result.is_error == Some(true) {
        return Err(format!("the tool {tool} reported an error"));
    }
    Ok(())
}

/// `name — first line of the description`.
fn tool_line(tool: &Tool) -> String {
    match tool
        .description
        .as_deref()
        .and_then(|d| d.lines().map(str::trim).find(|l| !l.is_empty()))
    {
        Some(first) => format!("{} — {first}", tool.name),
        None => tool.name.clone(),
    }
}

fn print_result(result: &CallToolResult) {
    for item in &result.content {
        match item {
            Content::Text { text } => println!("{text}"),
            Content::Image { data, mime_type } => {
                println!("[image {mime_type}, {} bytes]", decoded_len(data));
            }
            Content::Audio { data, mime_type } => {
                println!("[audio {mime_type}, {} bytes]", decoded_len(data));
            }
            Content::Resource { resource } => {
                let uri = resource.get("uri").and_then(Value::as_str).unwrap_or("?");
                match resource.get("text").and_then(Value::as_str) {
                    Some(text) => println!("[resource {uri}]\n{text}"),
                    None => println!("[resource {uri}]"),
                }
            }
            Content::ResourceLink { uri, .. } => println!("[resource link {uri}]"),
            Content::Unknown => println!("[content of an unknown type]"),
        }
    }
    if let Some(structured) = result.extra.get("structuredContent") {
        println!("structured: {structured}");
    }
}

/// The size of base64 data once decoded.
fn decoded_len(base64: &str) -> usize {
    let padding = base64.bytes().rev().take_while(|&b| b == b'=').count();
    (base64.len() / 4 * 3).saturating_sub(padding)
}

/// The error's message, and — when the server process ended on its own — how it ended and the
/// tail of what it wrote to stderr (usually the reason).
fn describe(error: &Error) -> String {
    let mut text = error.to_string();
    if let Error::Closed { exit, stderr } = error {
        if let Some(exit) = exit {
            match (&exit.code, &exit.signal) {
                (Some(code), _) => text.push_str(&format!(" (the server exited with code {code})")),
                (None, Some(signal)) => {
                    text.push_str(&format!(" (the server was killed by {signal})"))
                }
                (None, None) => text.push_str(" (the server exited)"),
            }
        }
        if let Some(tail) = stderr.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let lines: Vec<&str> = tail.lines().collect();
            let last = &lines[lines.len().saturating_sub(10)..];
            text.push_str("; its stderr ended with:\n  ");
            text.push_str(&last.join("\n  "));
        }
    }
    text
}
