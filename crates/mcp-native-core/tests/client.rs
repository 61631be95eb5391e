//! The Rust client (no Node): against the project's fixture servers (real child processes and a
//! loopback HTTP server), and — where timing is the point — against an in-memory transport on
//! tokio's paused clock. Every wait has a deadline.
#![cfg(unix)] // fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows

mod common;
use common::processes_with;

use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_native_core::client::{Client, ClientOptions, ReconnectPolicy, ServerConfig, Status};
use mcp_native_core::error::Error;
use mcp_native_core::transport::{Event, EventSink, OutgoingRequest, Transport};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../__test__/fixture/server.mjs"
);
const HTTP_FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../__test__/fixture/http-server.mjs"
);
const WAIT: Duration = Duration::from_secs(20);

fn fixture(flags: &[&str]) -> ServerConfig {
    let mut args = vec![FIXTURE];
    args.extend_from_slice(flags);
    let mut config = ServerConfig::stdio("node", &args);
    if let ServerConfig::Stdio { config, .. } = &mut config {
        config.kill_grace_ms = 300;
    }
    config
}

/// Client options with a reconnect policy: `attempts`, the first after `initial_ms`, waits
/// doubling up to `max_ms`.
fn reconnecting(attempts: u32, initial_ms: u64, max_ms: u64) -> ClientOptions {
    ClientOptions {
        reconnect: Some(ReconnectPolicy {
            max_attempts: attempts,
            initial_delay: Duration::from_millis(initial_ms),
            max_delay: Duration::from_millis(max_ms),
        }),
        ..ClientOptions::default()
    }
}

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, f).await.expect("in time")
}

async fn requests_of(client: &Client, method: &str) -> Vec<Value> {
    let all: Value = within(client.request("requests", &json!({})))
        .await
        .unwrap();
    all["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["method"] == method)
        .cloned()
        .collect()
}

#[tokio::test]
async fn handshake_with_the_reference_bytes_and_typed_calls() {
    let client = within(Client::connect_to(
        "fx",
        fixture(&[]),
        ClientOptions::default(),
    ))
    .await
    .unwrap();
    assert_eq!(client.status(), Status::Connected);
    let server = client.server().unwrap();
    assert_eq!(server.server_info.unwrap().name, "mcp-native-fixture");
    assert_eq!(server.protocol_version.as_deref(), Some("2025-03-26"));
    let init = &requests_of(&client, "initialize").await[0];
    assert_eq!(
        serde_json::to_string(&init["params"]).unwrap(),
        r#"{"protocolVersion":"2025-03-26","capabilities":{"roots":{"listChanged":false}},"clientInfo":{"name":"omp-coding-agent","version":"1.0.0"}}"#
    );
    let received: Value = within(client.request("received", &json!({})))
        .await
        .unwrap();
    assert_eq!(
        received["received"],
        json!([{ "method": "notifications/initialized", "params": {} }])
    );
    let tools = within(client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 6);
    assert_eq!(tools[0].name, "echo");
    let out = within(client.call_tool("add", json!({ "a": 2, "b": 3 })))
        .await
        .unwrap();
    assert_eq!((out.text(), out.is_error), ("5".to_string(), None));
    let failed = within(client.call_tool("fail", json!({}))).await.unwrap();
    assert_eq!(failed.is_error, Some(true));
    within(client.ping()).await.unwrap();
    assert_eq!(
        within(client.list_resources()).await.unwrap()[0].uri,
        "fixture://a"
    );
    let read = within(client.read_resource("fixture://a")).await.unwrap();
    assert_eq!(read["contents"][0]["text"], "content of fixture://a");
    assert_eq!(
        within(client.list_prompts()).await.unwrap()[0].name,
        "greet"
    );
    let prompt = within(client.get_prompt("greet", Some(json!({ "who": "Ann" }))))
        .await
        .unwrap();
    assert_eq!(
        prompt["messages"][0]["content"]["text"],
        "Hello Ann from greet"
    );
    client.close().await;
    assert_eq!(client.status(), Status::Closed);
}

#[tokio::test]
async fn negotiation_accepts_known_revisions_and_refuses_others() {
    let old = within(Client::connect_to(
        "fx",
        fixture(&["--init-version=2024-11-05"]),
        ClientOptions::default(),
    ))
    .await
    .unwrap();
    assert_eq!(
        old.server().unwrap().protocol_version.as_deref(),
        Some("2024-11-05")
    );
    old.close().await;
    let marker = format!("--marker=rust-client-{}", std::process::id());
    let client = Client::new(
        "fx",
        fixture(&["--init-version=1999-01-01", &marker]),
        ClientOptions::default(),
        None,
    );
    let err = within(client.connect()).await.unwrap_err();
    assert_eq!(err.to_string(), "Unsupported protocol version: 1999-01-01");
    assert_eq!(err.code(), "MCP_UNSUPPORTED_PROTOCOL");
    assert_eq!(client.status(), Status::Closed);
    assert!(
        processes_with(&marker).is_empty(),
        "the server is gone when connect fails"
    );
}

#[tokio::test]
async fn the_connect_deadline_closes_the_attempt_first() {
    let marker = format!("--marker=rust-hang-{}", std::process::id());
    let config = fixture(&["--init-hang", "--ignore-sigterm", &marker]).with_timeout_ms(300);
    let client = Client::new("hung", config, ClientOptions::default(), None);
    let started = std::time::Instant::now();
    let err = within(client.connect()).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        r#"Connection to MCP server "hung" timed out after 300ms"#
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        processes_with(&marker).is_empty(),
        "closed before the error was returned"
    );
}

#[tokio::test]
async fn paging_follows_cursors_and_stops_after_1000_pages() {
    let client = within(Client::connect_to(
        "fx",
        fixture(&["--pages=3"]),
        ClientOptions::default(),
    ))
    .await
    .unwrap();
    let tools = within(client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 6);
    let cursors: Vec<Value> = requests_of(&client, "tools/list")
        .await
        .iter()
        .map(|r| r["params"].clone())
        .collect();
    assert_eq!(
        cursors,
        vec![
            json!({}),
            json!({ "cursor": "page-1" }),
            json!({ "cursor": "page-2" })
        ]
    );
    client.close().await;
    let endless = within(Client::connect_to(
        "fx",
        fixture(&["--endless-pages"]),
        ClientOptions::default(),
    ))
    .await
    .unwrap();
    assert_eq!(within(endless.list_tools()).await.unwrap().len(), 1000);
    endless.close().await;
}

#[tokio::test]
async fn server_requests_get_roots_or_method_not_found_by_default() {
    let client = within(Client::connect_to(
        "fx",
        fixture(&[]),
        ClientOptions::default(),
    ))
    .await
    .unwrap();
    let roots: Value = within(client.request("reverse", &json!({ "method": "roots/list" })))
        .await
        .unwrap();
    assert_eq!(roots["answer"]["result"], json!({ "roots": [] }));
    let other: Value =
        within(client.request("reverse", &json!({ "method": "sampling/createMessage" })))
            .await
            .unwrap();
    assert_eq!(other["answer"]["error"]["code"], -32601);
    client.close().await;
}

#[tokio::test]
async fn reconnect_after_a_crash_with_a_new_process() {
    let options = reconnecting(3, 50, 200);
    let client = within(Client::connect_to("fx", fixture(&[]), options))
        .await
        .unwrap();
    let first = client.generation();
    let crash = within(client.request::<Value>("crash", &json!({ "code": 1 })))
        .await
        .unwrap_err();
    assert_eq!(crash.to_string(), "Transport closed");
    // Made while reconnecting: waits for the new connection.
    let later: Value = within(client.request("echo", &json!({ "after": "reconnect" })))
        .await
        .unwrap();
    assert_eq!(later, json!({ "after": "reconnect" }));
    assert_eq!(client.generation(), first + 1);
    client.close().await;
}

/// Holds the first `Event::Error` of a connection (emitted after the requests in flight failed
/// and before the `Closed` that tells the client) until the test lets it go.
struct HoldFirstError {
    held: tokio::sync::mpsc::UnboundedSender<()>,
    gate: Mutex<Option<std::sync::mpsc::Receiver<()>>>,
}

impl EventSink for HoldFirstError {
    fn emit_all(&self, events: Vec<Event>) {
        if events.iter().any(|e| matches!(e, Event::Error(_)))
            && let Some(gate) = self.gate.lock().unwrap().take()
        {
            let _ = self.held.send(());
            let _ = gate.recv_timeout(WAIT);
        }
    }
}

impl mcp_native_core::client::ClientSink for HoldFirstError {}

#[tokio::test]
async fn a_request_made_after_the_transport_ended_but_before_the_client_saw_it_waits_for_the_reconnect()
 {
    let options = reconnecting(3, 10, 50);
    let (held_tx, mut held) = tokio::sync::mpsc::unbounded_channel();
    let (release, gate) = std::sync::mpsc::channel();
    let sink = Arc::new(HoldFirstError {
        held: held_tx,
        gate: Mutex::new(Some(gate)),
    });
    let client = Client::new("fx", fixture(&[]), options, Some(sink));
    within(client.connect()).await.unwrap();
    let crash = within(client.request::<Value>("crash", &json!({ "code": 1 })))
        .await
        .unwrap_err();
    assert_eq!(crash.to_string(), "Transport closed");
    // The transport has ended; its `Closed` waits behind the held event.
    within(held.recv()).await.unwrap();
    assert_eq!(client.status(), Status::Connected);
    let params = json!({ "after": "reconnect" });
    let mut later = Box::pin(client.request::<Value>("echo", &params));
    assert!(
        futures::FutureExt::now_or_never(later.as_mut()).is_none(),
        "the request failed on the ended connection instead of waiting for the next one"
    );
    release.send(()).unwrap();
    assert_eq!(within(later).await.unwrap(), params);
    assert_eq!(client.generation(), 2);
    client.close().await;
}

#[tokio::test]
async fn an_expired_http_session_is_reopened_and_the_request_sent_again() {
    let (mut server, base) = start_http_fixture();
    let client = within(Client::connect_to(
        "h",
        ServerConfig::http(format!("{base}/mcp")),
        ClientOptions::default(),
    ))
    .await
    .unwrap();
    let session = |c: &Client| match c.conn().unwrap().kind() {
        mcp_native_core::client::ConnKind::Http(t) => t.session_id(),
        _ => None,
    };
    let first = session(&client).unwrap();
    let _: Value = within(client.request("expire-session", &json!({})))
        .await
        .unwrap();
    let echo: Value = within(client.request("echo", &json!({ "again": true })))
        .await
        .unwrap();
    assert_eq!(echo, json!({ "again": true }));
    assert_ne!(session(&client).unwrap(), first);
    client.close().await;
    let _ = server.kill();
}

#[tokio::test]
async fn a_large_http_result_goes_raw_to_a_sink_that_asks_for_it() {
    use mcp_native_core::transport::http::{HttpConfig, HttpTransport};
    use mcp_native_core::transport::{RequestOptions, TransportExt};

    let (mut server, base) = start_http_fixture();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let t = Arc::new(
        HttpTransport::new(
            HttpConfig::new(format!("{base}/mcp")),
            Arc::new(common::ChannelSink(tx, Some(4096))),
        )
        .unwrap(),
    );
    t.connect();
    let answer = async |rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>,
                        t: &HttpTransport,
                        method: &str,
                        params: &str| {
        let id = t.next_id();
        t.send(vec![OutgoingRequest::new(
            id,
            &serde_json::to_string(method).unwrap(),
            Some(params),
            20_000,
        )])
        .unwrap();
        loop {
            match within(rx.recv()).await.unwrap() {
                e @ (Event::Response { id: got, .. }
                | Event::RawAnswer { id: got, .. }
                | Event::Failed { id: got, .. })
                    if got == id =>
                {
                    break e;
                }
                _ => {}
            }
        }
    };
    // Small: parsed, as always.
    assert!(
        matches!(answer(&mut rx, &t, "echo", r#"{"a":1}"#).await, Event::Response { result: Some(r), .. } if r.get() == r#"{"a":1}"#)
    );
    // Large, as a JSON body and as an SSE event: the server's whole message (not a copy of its
    // result).
    for method in ["json-big", "sse-big"] {
        match answer(&mut rx, &t, method, r#"{"bytes":5000}"#).await {
            Event::RawAnswer { id, message } => {
                let value: Value = serde_json::from_slice(&message).unwrap();
                assert_eq!(
                    value,
                    json!({ "jsonrpc": "2.0", "id": id, "result": { "data": "x".repeat(5000) } })
                );
            }
            other => panic!("{method}: expected a raw answer, got {other:?}"),
        }
    }
    let wide = "é".repeat(3000);
    match answer(&mut rx, &t, "echo", &json!({ "wide": wide }).to_string()).await {
        Event::RawAnswer { message, .. } => {
            let value: Value = serde_json::from_slice(&message).unwrap();
            assert_eq!(value["result"]["wide"], wide.as_str());
        }
        other => panic!("expected a raw answer, got {other:?}"),
    }
    // A large error stays an error (its members make it).
    let data = "d".repeat(5000);
    let params = json!({ "code": -32001, "message": "no", "data": data }).to_string();
    assert!(matches!(
        answer(&mut rx, &t, "error", &params).await,
        Event::Failed { .. }
    ));
    // The transport's own callers (a reply channel) get it parsed, large or not.
    let result = within(TransportExt::request(
        &t,
        "json-big",
        Some(r#"{"bytes":5000}"#),
        RequestOptions::default(),
    ))
    .await
    .unwrap()
    .unwrap();
    assert!(result.get().contains(&"x".repeat(5000)));
    t.close();
    let _ = server.kill();
}

// --- paused time: an in-memory server ---------------------------------------------------------

/// A transport whose server lives in this process: answers `initialize` (unless told to refuse)
/// and `echo`; `die()` ends the connection as a crash would.
struct Memory {
    sink: Arc<dyn EventSink>,
    ids: AtomicU64,
    open: Mutex<bool>,
}

impl Memory {
    fn die(&self) {
        *self.open.lock().unwrap() = false;
        self.sink.emit(Event::Closed(Some(Error::closed())));
    }
}

impl Transport for Memory {
    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }
    fn default_timeout_ms(&self) -> u64 {
        30_000
    }
    fn is_open(&self) -> bool {
        *self.open.lock().unwrap()
    }
    fn send(&self, requests: Vec<OutgoingRequest<'_>>) -> Result<(), Error> {
        for r in requests {
            let result = match r.method_json {
                "\"initialize\"" => {
                    json!({ "protocolVersion": "2025-03-26", "capabilities": {}, "serverInfo": { "name": "memory", "version": "1" } })
                }
                _ => serde_json::from_str(r.params.unwrap_or("{}")).unwrap(),
            };
            let mut events = Vec::new();
            r.reply.deliver(
                r.id,
                Ok(Some(serde_json::value::to_raw_value(&result).unwrap())),
                &mut events,
            );
            self.sink.emit_all(events);
        }
        Ok(())
    }
    fn notify(
        &self,
        _method: &str,
        _params: Option<&str>,
    ) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }
    fn respond(&self, _id: &str, _outcome: Result<&str, &str>) -> Result<(), Error> {
        Ok(())
    }
    fn cancel(&self, _id: u64, _reason: &str) {}
    fn close(&self) -> bool {
        let was = std::mem::replace(&mut *self.open.lock().unwrap(), false);
        if was {
            self.sink.emit(Event::Closed(None));
        }
        was
    }
    fn set_request_listener(&self, _on: bool) {}
}

#[tokio::test(start_paused = true)]
async fn reconnect_backs_off_exponentially_up_to_the_cap() {
    let made: Arc<Mutex<Vec<Arc<Memory>>>> = Arc::default();
    let refuse_after_first = Arc::new(Mutex::new(false));
    let (made2, refuse) = (made.clone(), refuse_after_first.clone());
    let factory: mcp_native_core::client::TransportFactory = Arc::new(move |sink| {
        if *refuse.lock().unwrap() {
            return Err(Error::Io("refused".into()));
        }
        let t = Arc::new(Memory {
            sink,
            ids: AtomicU64::new(0),
            open: Mutex::new(true),
        });
        made2.lock().unwrap().push(t.clone());
        Ok(t as Arc<dyn Transport>)
    });
    let options = reconnecting(4, 500, 1500);
    let client = Client::new(
        "mem",
        ServerConfig::Custom {
            factory,
            timeout_ms: 1000,
        },
        options,
        None,
    );
    client.connect().await.unwrap();
    *refuse_after_first.lock().unwrap() = true;
    let t0 = tokio::time::Instant::now();
    made.lock().unwrap()[0].die();
    assert_eq!(client.status(), Status::Reconnecting);
    // The attempts fail (the factory refuses); they come at 500, +1000, +1500 (capped), +1500.
    let err = client.connected(10_000).await.err().unwrap();
    assert_eq!(err.to_string(), "refused");
    assert_eq!(
        tokio::time::Instant::now() - t0,
        Duration::from_millis(500 + 1000 + 1500 + 1500)
    );
    assert_eq!(client.status(), Status::Closed);
}

#[tokio::test(start_paused = true)]
async fn requests_wait_out_a_reconnect_bounded_by_their_timeout() {
    let made: Arc<Mutex<Vec<Arc<Memory>>>> = Arc::default();
    let made2 = made.clone();
    let factory: mcp_native_core::client::TransportFactory = Arc::new(move |sink| {
        let t = Arc::new(Memory {
            sink,
            ids: AtomicU64::new(0),
            open: Mutex::new(true),
        });
        made2.lock().unwrap().push(t.clone());
        Ok(t as Arc<dyn Transport>)
    });
    let options = reconnecting(2, 800, 800);
    let client = Client::new(
        "mem",
        ServerConfig::Custom {
            factory,
            timeout_ms: 1000,
        },
        options,
        None,
    );
    client.connect().await.unwrap();
    made.lock().unwrap()[0].die();
    let t0 = tokio::time::Instant::now();
    // Shorter than the backoff: times out.
    let short = client.connected(300).await.err().unwrap();
    assert_eq!(short.to_string(), "Request timeout after 300ms");
    // Longer: gets the new connection when the first attempt succeeds, at 800 ms.
    let echo: Value = client.request("echo", &json!({ "x": 1 })).await.unwrap();
    assert_eq!(echo, json!({ "x": 1 }));
    assert_eq!(tokio::time::Instant::now() - t0, Duration::from_millis(800));
    assert_eq!(client.generation(), 2);
}

// --- helpers ------------------------------------------------------------------------------------

fn start_http_fixture() -> (Child, String) {
    let (child, port) = common::spawn_with_port(&[HTTP_FIXTURE]);
    (child, format!("http://127.0.0.1:{port}"))
}
