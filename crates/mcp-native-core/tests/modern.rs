//! The 2026-07-28 revision from Rust (SPEC 9): the Rust client against the strict modern
//! fixture (`__test__/fixture/modern-server.mjs`) over stdio and Streamable HTTP — negotiation,
//! `_meta` and headers, tools with invalid annotations left out, `input_required` rounds answered
//! by a Rust handler — and a modern-first client against a legacy server. Every wait is bounded.
#![cfg(unix)] // fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows

mod common;

use std::process::Child;
use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_native_core::client::{
    Client, ClientOptions, Handler, HandlerError, RequestHandler, ServerConfig,
};
use serde_json::{Value, json};

const MODERN: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../__test__/fixture/modern-server.mjs"
);
const LEGACY: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../__test__/fixture/server.mjs"
);
const V: &str = "2026-07-28";
const WAIT: Duration = Duration::from_secs(20);

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, f).await.expect("in time")
}

struct Server(Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn start_http() -> (Server, String) {
    let (child, port) = common::spawn_with_port(&[MODERN, "--http"]);
    (Server(child), format!("http://127.0.0.1:{port}/mcp"))
}

fn stdio(script: &str) -> ServerConfig {
    let mut config = ServerConfig::stdio("node", &[script]);
    if let ServerConfig::Stdio { config, .. } = &mut config {
        config.kill_grace_ms = 300;
    }
    config
}

/// Accepts every elicitation with `{ ok: true }`.
struct Accept;

impl RequestHandler for Accept {
    fn handle(
        &self,
        method: String,
        _params: Option<Value>,
    ) -> BoxFuture<'static, Result<Value, HandlerError>> {
        Box::pin(async move {
            if method == "elicitation/create" {
                Ok(json!({ "action": "accept", "content": { "ok": true } }))
            } else {
                Err(HandlerError {
                    code: -32601,
                    message: "no".into(),
                })
            }
        })
    }
}

fn modern_options(handler: Handler) -> ClientOptions {
    ClientOptions {
        protocol_version: V.into(),
        handler,
        ..ClientOptions::default()
    }
}

fn text(result: &Value) -> Value {
    serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap()
}

async fn exercise(config: ServerConfig, http: bool) {
    let client = within(Client::connect_to(
        "m",
        config,
        modern_options(Handler::Rust(Arc::new(Accept))),
    ))
    .await
    .unwrap();
    assert_eq!(client.modern_version().as_deref(), Some(V));
    let info = client.server().unwrap().server_info.unwrap();
    assert_eq!(info.name, "modern-fixture");
    let names: Vec<String> = within(client.list_tools())
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect();
    if http {
        assert_eq!(
            names,
            ["echo", "confirm", "headers", "slow"],
            "bad_tool is left out over HTTP"
        );
    } else {
        assert!(names.contains(&"bad_tool".to_owned()));
    }
    let echo: Value = within(client.request(
        "tools/call",
        &json!({ "name": "echo", "arguments": { "x": 1 } }),
    ))
    .await
    .unwrap();
    assert_eq!(text(&echo), json!({ "x": 1 }));
    let confirm: Value =
        within(client.request("tools/call", &json!({ "name": "confirm", "arguments": {} })))
            .await
            .unwrap();
    assert_eq!(
        text(&confirm),
        json!({ "answer": { "action": "accept", "content": { "ok": true } }, "state": "state-1" })
    );
    if http {
        let headers: Value = within(client.request(
            "tools/call",
            &json!({ "name": "headers", "arguments": { "region": "us-west1", "priority": 42 } }),
        ))
        .await
        .unwrap();
        let h = text(&headers);
        assert_eq!(h["mcp-param-region"], "us-west1");
        assert_eq!(h["mcp-param-priority"], "42");
        assert_eq!(h["mcp-name"], "headers");
    }
    let seen: Value = within(client.request("requests", &json!({})))
        .await
        .unwrap();
    let methods: Vec<&str> = seen["requests"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["method"].as_str().unwrap())
        .filter(|m| *m != "subscriptions/listen")
        .collect();
    assert_eq!(methods[0], "server/discover");
    assert!(!methods.contains(&"initialize"));
    for r in seen["requests"].as_array().unwrap() {
        assert_eq!(
            r["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"],
            V
        );
    }
    within(client.close()).await;
}

#[tokio::test]
async fn a_modern_server_over_http() {
    let (_server, url) = start_http();
    exercise(ServerConfig::http(url), true).await;
}

#[tokio::test]
async fn a_modern_server_over_stdio() {
    exercise(stdio(MODERN), false).await;
}

#[tokio::test]
async fn without_a_handler_an_elicitation_fails_the_call() {
    let client = within(Client::connect_to(
        "m",
        stdio(MODERN),
        modern_options(Handler::Default),
    ))
    .await
    .unwrap();
    let err = within(
        client.request::<Value>("tools/call", &json!({ "name": "confirm", "arguments": {} })),
    )
    .await
    .unwrap_err();
    assert_eq!(
        err.to_string(),
        "MCP error: server asked for elicitation/create and no handler is set"
    );
    within(client.close()).await;
}

#[tokio::test]
async fn a_legacy_first_client_switches_once_for_a_modern_only_http_server() {
    let (_server, url) = start_http();
    let client = within(Client::connect_to(
        "m",
        ServerConfig::http(url),
        ClientOptions::default(),
    ))
    .await
    .unwrap();
    assert_eq!(client.modern_version().as_deref(), Some(V));
    within(client.close()).await;
}

#[tokio::test]
async fn a_modern_first_client_speaks_2025_to_a_legacy_stdio_server() {
    let client = within(Client::connect_to(
        "l",
        stdio(LEGACY),
        modern_options(Handler::Default),
    ))
    .await
    .unwrap();
    assert_eq!(client.modern_version(), None);
    assert_eq!(
        client.server().unwrap().protocol_version.as_deref(),
        Some("2025-11-25")
    );
    let tools = within(client.list_tools()).await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"));
    within(client.close()).await;
}
