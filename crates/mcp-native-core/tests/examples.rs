//! The examples (`examples/call.rs`, `examples/manager.rs`) run the way a user runs them — as
//! programs, with their output read back — against the project's fixture server and the real
//! `@modelcontextprotocol/server-everything` (from `node_modules`: `npm ci` first).
//!
//! The example binaries come from a nested `cargo build --example …` with this test's own
//! features, asked for their paths (`--message-format=json`): a no-op when `cargo test` already
//! built them, and never a stale binary under `cargo test --test examples` (which builds no
//! examples). Cargo holds no lock while tests run, so the nested build does not wait on the outer
//! one. Every child runs under a deadline and is killed when it passes it: no test hangs.
#![cfg(unix)] // fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows

use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

const ROOT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
/// This crate's own folder (where `cargo build --example` runs).
const CRATE: &str = env!("CARGO_MANIFEST_DIR");
/// How long one run of an example may take.
const RUN_LIMIT: Duration = Duration::from_secs(60);
/// How long building the examples may take (a cold build on a small machine is slow).
const BUILD_LIMIT: Duration = Duration::from_secs(1200);

fn fixture() -> String {
    format!("{ROOT}/__test__/fixture/server.mjs")
}

/// server-everything's entry point, as the JS tests' `mcpPackage('server-everything')`.
fn everything() -> String {
    let path = format!("{ROOT}/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    assert!(
        Path::new(&path).is_file(),
        "{path} is missing: run `npm ci` in {ROOT} first"
    );
    path
}

/// What a finished child left.
struct Output {
    status: ExitStatus,
    stdout: String,
    stderr: String,
}

impl std::fmt::Display for Output {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}\n--- stdout\n{}--- stderr\n{}---",
            self.status, self.stdout, self.stderr
        )
    }
}

/// Runs `cmd` to its end, or kills it once `limit` has passed (and fails the test).
fn run(cmd: &mut Command, limit: Duration) -> Output {
    cmd.stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let drain = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut text = String::new();
            if let Some(mut pipe) = pipe {
                let _ = pipe.read_to_string(&mut text);
            }
            text
        })
    };
    let stdout = drain(child.stdout.take().map(|p| Box::new(p) as _));
    let stderr = drain(child.stderr.take().map(|p| Box::new(p) as _));
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().expect("waiting for a child") {
            break status;
        }
        if started.elapsed() > limit {
            // The example's servers go with it (they are started with PR_SET_PDEATHSIG).
            let _ = child.kill();
            let status = child.wait().expect("reaping a killed child");
            let out = Output {
                status,
                stdout: stdout.join().unwrap_or_default(),
                stderr: stderr.join().unwrap_or_default(),
            };
            panic!("{cmd:?} did not finish within {limit:?}: {out}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: stdout.join().unwrap_or_default(),
        stderr: stderr.join().unwrap_or_default(),
    }
}

/// The path of example `name`, built once for every test.
fn example(name: &str) -> PathBuf {
    static BUILT: OnceLock<HashMap<String, PathBuf>> = OnceLock::new();
    let built = BUILT.get_or_init(|| {
        let mut cmd = Command::new(env!("CARGO"));
        cmd.current_dir(CRATE).args([
            "build",
            "--example",
            "call",
            "--example",
            "manager",
            "--message-format=json-render-diagnostics",
        ]);
        let out = run(&mut cmd, BUILD_LIMIT);
        assert!(out.status.success(), "building the examples failed: {out}");
        out.stdout
            .lines()
            .filter_map(|line| serde_json::from_str::<serde_json::Value>(line).ok())
            .filter(|m| m["reason"] == "compiler-artifact")
            .filter_map(|m| {
                let name = m["target"]["name"].as_str()?.to_owned();
                let exe = m["executable"].as_str()?.into();
                Some((name, exe))
            })
            .collect()
    });
    built
        .get(name)
        .unwrap_or_else(|| panic!("cargo reported no executable for example {name}"))
        .clone()
}

fn call(args: &[&str]) -> Output {
    run(Command::new(example("call")).args(args), RUN_LIMIT)
}

/// A directory of its own under the system's temporary directory, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new() -> Self {
        static NEXT: AtomicU32 = AtomicU32::new(0);
        let path = std::env::temp_dir().join(format!(
            "mcp-native-examples-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(path.join("home")).unwrap();
        std::fs::create_dir_all(path.join("project")).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The manager example for a project whose `.mcp.json` is `mcp_json` (`None`: no file), with an
/// empty `HOME` so that none of this machine's own configs is discovered.
fn manager(mcp_json: Option<serde_json::Value>) -> Output {
    let dir = TempDir::new();
    let project = dir.0.join("project");
    if let Some(json) = mcp_json {
        std::fs::write(project.join(".mcp.json"), json.to_string()).unwrap();
    }
    run(
        Command::new(example("manager"))
            .arg(&project)
            .env("HOME", dir.0.join("home"))
            .env_remove("PI_CODING_AGENT_DIR")
            .env_remove("PI_CONFIG_DIR"),
        RUN_LIMIT,
    )
}

/// Asserts that `text` has these lines, in this order (other lines may come between).
#[track_caller]
fn assert_lines_in_order(out: &Output, lines: &[&str]) {
    let mut rest = out.stdout.lines();
    for want in lines {
        assert!(
            rest.any(|line| line == *want),
            "no line {want:?} (in this order) in: {out}"
        );
    }
}

#[test]
fn call_lists_and_echoes_with_the_fixture() {
    let out = call(&["node", &fixture()]);
    assert!(out.status.success(), "{out}");
    assert_lines_in_order(
        &out,
        &[
            "server: mcp-native-fixture 1.0.0 (protocol 2025-03-26)",
            "tools (6):",
            "  echo — Echoes its input",
            "  big — Returns a text of the given size",
            "  add — Adds two numbers",
            "  mixed",
            "  fail — Always reports an error",
            "  slow — Answers after {ms}",
            r#"call echo {"message":"hello"}:"#,
            "hello",
        ],
    );
}

#[test]
fn call_options_and_failures_with_the_fixture() {
    let fixture = fixture();

    let out = call(&[
        "--tool",
        "add",
        "--args",
        r#"{"a":2,"b":3}"#,
        "--",
        "node",
        &fixture,
    ]);
    assert!(out.status.success(), "{out}");
    assert_lines_in_order(&out, &[r#"call add {"a":2,"b":3}:"#, "5"]);

    // Non-text content is summarized.
    let out = call(&["--tool=mixed", "node", &fixture]);
    assert!(out.status.success(), "{out}");
    assert_lines_in_order(
        &out,
        &[
            "call mixed {}:",
            "first",
            "[image image/png, 3 bytes]",
            "[resource fixture://r1]",
            "inside",
            "[resource fixture://r2]",
        ],
    );

    // A tool's own failure (isError) is printed, and the exit status says so.
    let out = call(&["--tool", "fail", "node", &fixture]);
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert_lines_in_order(&out, &["call fail {}:", "it broke"]);
    assert!(
        out.stderr.contains("call: the tool fail reported an error"),
        "{out}"
    );

    let out = call(&["--tool", "nope", "node", &fixture]);
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(
        out.stderr
            .contains(r#"the server has no tool named "nope""#),
        "{out}"
    );

    // No tools: the list only.
    let out = call(&["node", &fixture, "--no-tools"]);
    assert!(out.status.success(), "{out}");
    assert_lines_in_order(&out, &["tools (0):"]);
    assert!(!out.stdout.contains("call "), "{out}");

    // A server that never answers the handshake: the deadline, not a hang.
    let started = Instant::now();
    let out = call(&["--timeout", "1", "--", "node", &fixture, "--init-hang"]);
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(
        out.stderr
            .contains(r#"Connection to MCP server "node" timed out after 1000ms"#),
        "{out}"
    );
    assert!(started.elapsed() < Duration::from_secs(20), "{out}");

    // A server that dies at start: its exit status and stderr are in the message.
    let out = call(&[
        "node",
        "-e",
        "console.error('missing API key'); process.exit(3)",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(out.stderr.contains("exited with code 3"), "{out}");
    assert!(out.stderr.contains("missing API key"), "{out}");

    let out = call(&["mcp-native-no-such-command"]);
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(
        out.stderr
            .contains("spawn mcp-native-no-such-command ENOENT"),
        "{out}"
    );

    let out = call(&[]);
    assert_eq!(out.status.code(), Some(2), "{out}");
    assert!(out.stderr.contains("usage: call"), "{out}");
    let out = call(&["--args", "[1]", "node", &fixture]);
    assert_eq!(out.status.code(), Some(2), "{out}");
    assert!(out.stderr.contains("--args must be a JSON object"), "{out}");
}

#[test]
fn call_lists_and_echoes_with_server_everything() {
    let out = call(&["node", &everything(), "stdio"]);
    assert!(out.status.success(), "{out}");
    let server = out.stdout.lines().next().unwrap_or_default();
    assert!(
        server.starts_with("server: mcp-servers/everything "),
        "{out}"
    );
    assert!(
        out.stdout.lines().any(|l| l.starts_with("  echo — ")),
        "{out}"
    );
    assert!(
        out.stdout.lines().any(|l| l.starts_with("  get-sum — ")),
        "{out}"
    );
    assert_lines_in_order(&out, &[r#"call echo {"message":"hello"}:"#, "Echo: hello"]);

    let out = call(&[
        "--tool",
        "get-sum",
        "--args",
        r#"{"a":2,"b":3}"#,
        "node",
        &everything(),
        "stdio",
    ]);
    assert!(out.status.success(), "{out}");
    assert!(out.stdout.contains("The sum of 2 and 3 is 5"), "{out}");
}

#[test]
fn manager_connects_the_fixture_and_server_everything() {
    let out = manager(Some(serde_json::json!({
        "mcpServers": {
            "fixture": { "command": "node", "args": [fixture()] },
            "everything": {
                "command": "node",
                "args": [everything(), "stdio"],
                "env": { "MCP_NATIVE_EXAMPLE": "1" },
            },
        }
    })));
    assert!(out.status.success(), "{out}");
    assert!(
        out.stdout.starts_with("discovered 2 server(s) for "),
        "{out}"
    );
    assert!(!out.stdout.contains("warnings:"), "{out}");
    assert_lines_in_order(
        &out,
        &[
            "fixture: connected — mcp-native-fixture 1.0.0, 6 tool(s)",
            "  fixture: echo — Echoes its input",
            "  fixture: mixed",
            "  fixture: slow — Answers after {ms}",
        ],
    );
    let everything = out
        .stdout
        .lines()
        .find(|l| l.starts_with("everything: connected — mcp-servers/everything "))
        .unwrap_or_else(|| panic!("server-everything not connected: {out}"));
    assert!(everything.ends_with(" tool(s)"), "{out}");
    assert!(
        out.stdout
            .lines()
            .any(|l| l.starts_with("  everything: echo — ")),
        "{out}"
    );
    assert!(out.stdout.ends_with("disconnected\n"), "{out}");
}

#[test]
fn manager_reports_warnings_and_failures() {
    let out = manager(Some(serde_json::json!({
        "mcpServers": {
            "fixture": { "command": "node", "args": [fixture()] },
            "crashes": {
                "command": "node",
                "args": ["-e", "console.error('missing API key'); process.exit(4)"],
            },
            "hangs": { "command": "node", "args": [fixture(), "--init-hang"], "timeout": 1000 },
            "incomplete": { "args": ["no command, no url"] },
        }
    })));
    assert_eq!(out.status.code(), Some(1), "{out}");
    assert!(
        out.stdout.starts_with("discovered 3 server(s) for "),
        "{out}"
    );
    assert_lines_in_order(
        &out,
        &[
            "warnings:",
            "fixture: connected — mcp-native-fixture 1.0.0, 6 tool(s)",
        ],
    );
    assert!(out.stdout.contains("Must have command or url"), "{out}");
    assert!(
        out.stdout.contains(
            "crashes: failed — Transport closed (exited with code 4); stderr: missing API key"
        ),
        "{out}"
    );
    assert!(
        out.stdout
            .contains(r#"hangs: failed — Connection to MCP server "hangs" timed out after 1000ms"#),
        "{out}"
    );
    assert!(out.stdout.ends_with("disconnected\n"), "{out}");
}

#[test]
fn manager_with_nothing_configured() {
    let out = manager(None);
    assert!(out.status.success(), "{out}");
    assert!(
        out.stdout.starts_with("discovered 0 server(s) for "),
        "{out}"
    );
}
