//! The Rust client (no Node): against the project's fixture servers (real child processes and a
//! loopback HTTP server), and — where timing is the point — against an in-memory transport on
//! tokio's paused clock. Every wait has a deadline.

mod common;
use common::processes_with;

use std::process::Child;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_native_core::client::{Client, ClientOptions, ReconnectPolicy, ServerConfig, Status};
use mcp_native_core::error::Error;
use mcp_native_core::jsonrpc::WIRE_ID_BASE;
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
    let options = ClientOptions {
        reconnect: Some(ReconnectPolicy {
            max_attempts: 3,
            initial_delay: Duration::from_millis(50),
            max_delay: Duration::from_millis(200),
        }),
        ..ClientOptions::default()
    };
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
                    json!({ "jsonrpc": "2.0", "id": (WIRE_ID_BASE + id).to_string(), "result": { "data": "x".repeat(5000) } })
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
    let options = ClientOptions {
        reconnect: Some(ReconnectPolicy {
            max_attempts: 4,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_millis(1500),
        }),
        ..ClientOptions::default()
    };
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
    let options = ClientOptions {
        reconnect: Some(ReconnectPolicy {
            max_attempts: 2,
            initial_delay: Duration::from_millis(800),
            max_delay: Duration::from_millis(800),
        }),
        ..ClientOptions::default()
    };
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

/// A request sent from a thread outside any tokio runtime (JavaScript's, in the package) while
/// nothing else is in flight is written on that thread: it reaches the server while the crate's
/// I/O thread is held busy. (The server is a bare loopback socket, to see what arrives when.)
#[test]
fn a_lone_request_from_outside_a_runtime_is_written_on_the_callers_thread() {
    use mcp_native_core::transport::http::{HttpConfig, HttpTransport};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let t = HttpTransport::new(
        HttpConfig::new(url),
        Arc::new(common::ChannelSink(tx, None)),
    )
    .unwrap();
    t.connect();

    // The first request opens the keep-alive connection.
    let id1 = send_echo(&t);
    let mut conn = accept_within(&listener, WAIT);
    conn.set_read_timeout(Some(WAIT)).unwrap();
    let request = read_http_request(&mut conn).unwrap();
    assert!(
        request.contains(&format!("\"id\":\"{}\"", WIRE_ID_BASE + id1)),
        "{request}"
    );
    answer_http(&mut conn, id1);
    assert_eq!(next_result(&mut rx, id1), json!({ "n": id1 }));

    // The I/O thread held: the next request arrives all the same.
    let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    mcp_native_core::runtime::runtime().spawn(async move {
        held_tx.send(()).unwrap();
        let _ = release_rx.recv_timeout(WAIT);
    });
    held_rx.recv_timeout(WAIT).unwrap();
    let id2 = send_echo(&t);
    conn.set_read_timeout(Some(Duration::from_secs(3))).unwrap();
    let request = read_http_request(&mut conn);
    if request.is_ok() {
        // Answered while only the first poll's (no-op) waker was registered: the task, once it
        // runs, still reads the answer.
        answer_http(&mut conn, id2);
        std::thread::sleep(Duration::from_millis(20));
    }
    release_tx.send(()).unwrap();
    let request = request.expect("the request was not written while the I/O thread was busy");
    assert!(
        request.contains(&format!("\"id\":\"{}\"", WIRE_ID_BASE + id2)),
        "{request}"
    );
    conn.set_read_timeout(Some(WAIT)).unwrap();
    assert_eq!(next_result(&mut rx, id2), json!({ "n": id2 }));
    assert_eq!(t.stats().inflight, 0);
    assert_eq!(t.stats().deadlines, 0);

    // Closed while a request started on this thread waits for its answer: nothing is left.
    let id3 = send_echo(&t);
    assert!(
        read_http_request(&mut conn)
            .unwrap()
            .contains(&format!("\"id\":\"{}\"", WIRE_ID_BASE + id3))
    );
    assert!(t.close());
    assert_eq!(t.stats().inflight, 0);
}

/// A request that fails before anything is sent (a configured header with CR/LF), from outside
/// any runtime: its failure is reported, and nothing stays in flight.
#[test]
fn a_request_that_fails_on_the_callers_thread_is_reported() {
    use mcp_native_core::transport::http::{HttpConfig, HttpTransport};

    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let mut config = HttpConfig::new(format!("http://{}/mcp", listener.local_addr().unwrap()));
    config.headers = vec![("X-Bad".into(), "a\r\nb".into())];
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let t = HttpTransport::new(config, Arc::new(common::ChannelSink(tx, None))).unwrap();
    t.connect();
    let id = send_echo(&t);
    // Reported before `send` returned: the request failed on this thread.
    match rx.try_recv() {
        Ok(Event::Failed { id: got, error }) if got == id => {
            assert!(error.to_string().contains("X-Bad"), "{error}")
        }
        other => panic!("expected the failure at once, got {other:?}"),
    }
    assert_eq!(t.stats().inflight, 0);
    t.close();
}

// --- helpers ------------------------------------------------------------------------------------

fn start_http_fixture() -> (Child, String) {
    let (child, port) = common::spawn_with_port(&[HTTP_FIXTURE]);
    (child, format!("http://127.0.0.1:{port}"))
}

/// The next connection to `listener`, waiting at most `wait` (a blocking socket).
fn accept_within(listener: &std::net::TcpListener, wait: Duration) -> std::net::TcpStream {
    listener.set_nonblocking(true).unwrap();
    let until = std::time::Instant::now() + wait;
    loop {
        match listener.accept() {
            Ok((conn, _)) => {
                conn.set_nonblocking(false).unwrap();
                return conn;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                assert!(std::time::Instant::now() < until, "no connection came");
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => panic!("accept: {e}"),
        }
    }
}

/// Sends `echo` with empty params; its id.
fn send_echo(t: &mcp_native_core::transport::http::HttpTransport) -> u64 {
    let id = t.next_id();
    let request = OutgoingRequest::new(id, "\"echo\"", Some("{}"), 20_000);
    t.send(vec![request]).unwrap();
    id
}

/// One HTTP request as it arrives (head and `Content-Length` body), or the read's error.
fn read_http_request(conn: &mut std::net::TcpStream) -> std::io::Result<String> {
    use std::io::Read;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        if let Some(end) = got.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&got[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .map_or(0, |v| v.trim().parse().unwrap());
            if got.len() >= end + 4 + len {
                return Ok(String::from_utf8_lossy(&got).into_owned());
            }
        }
        let n = conn.read(&mut buf)?;
        if n == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        got.extend_from_slice(&buf[..n]);
    }
}

/// Answers request `id` with `{"n": id}` on a keep-alive connection.
fn answer_http(conn: &mut std::net::TcpStream, id: u64) {
    use std::io::Write;
    let wire = WIRE_ID_BASE + id;
    let body = format!(r#"{{"jsonrpc":"2.0","id":"{wire}","result":{{"n":{id}}}}}"#);
    write!(
        conn,
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
}

/// The next event about request `id`, waiting at most [`WAIT`] (no runtime needed).
fn next_event(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>, id: u64) -> Event {
    let until = std::time::Instant::now() + WAIT;
    loop {
        match rx.try_recv() {
            Ok(
                e @ (Event::Response { id: got, .. }
                | Event::RawAnswer { id: got, .. }
                | Event::Failed { id: got, .. }),
            ) if got == id => return e,
            Ok(_) => {}
            Err(_) if std::time::Instant::now() < until => {
                std::thread::sleep(Duration::from_millis(2));
            }
            Err(e) => panic!("no event for request {id}: {e}"),
        }
    }
}

/// The result of request `id` (see [`next_event`]).
fn next_result(rx: &mut tokio::sync::mpsc::UnboundedReceiver<Event>, id: u64) -> Value {
    match next_event(rx, id) {
        Event::Response {
            result: Some(raw), ..
        } => serde_json::from_str(raw.get()).unwrap(),
        other => panic!("expected a result, got {other:?}"),
    }
}
