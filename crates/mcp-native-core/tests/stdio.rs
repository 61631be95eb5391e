//! Integration tests of the stdio transport against the project's fixture server (a real child
//! process). Every wait has a deadline.
#![cfg(unix)] // fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_native_core::error::Error;
use mcp_native_core::jsonrpc::{IdFormat, WIRE_ID_BASE};
use mcp_native_core::runtime::group_alive;
use mcp_native_core::transport::stdio::{StdioConfig, StdioTransport};
use mcp_native_core::transport::{Event, OutgoingRequest, RequestOptions, Transport, TransportExt};
use serde_json::{Value, json};
use tokio::sync::mpsc;

mod common;
use common::ChannelSink;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../__test__/fixture/server.mjs"
);
const WAIT: Duration = Duration::from_secs(20);

/// Sends `method` with its outcome as an event; returns its id.
trait RequestAsEvent {
    fn request(&self, method: &str, params: Option<&str>, timeout_ms: u64) -> Result<u64, Error>;
}

impl RequestAsEvent for StdioTransport {
    fn request(&self, method: &str, params: Option<&str>, timeout_ms: u64) -> Result<u64, Error> {
        let id = self.next_id();
        let method_json = serde_json::to_string(method).unwrap();
        self.send(vec![OutgoingRequest::new(
            id,
            &method_json,
            params,
            timeout_ms,
        )])?;
        Ok(id)
    }
}

fn fixture(flags: &[&str]) -> StdioConfig {
    let mut args = vec![FIXTURE];
    args.extend_from_slice(flags);
    StdioConfig::new("node", &args)
}

fn connect(config: StdioConfig) -> (StdioTransport, mpsc::UnboundedReceiver<Event>) {
    let (tx, rx) = mpsc::unbounded_channel();
    let t = StdioTransport::spawn(&config, Arc::new(ChannelSink(tx, None)), 30_000)
        .expect("spawn fixture");
    (t, rx)
}

async fn next(rx: &mut mpsc::UnboundedReceiver<Event>) -> Event {
    tokio::time::timeout(WAIT, rx.recv())
        .await
        .expect("event in time")
        .expect("channel open")
}

/// Waits for the outcome of request `id`, collecting other events on the way.
async fn outcome(
    rx: &mut mpsc::UnboundedReceiver<Event>,
    id: u64,
    seen: &mut Vec<Event>,
) -> Result<String, Error> {
    loop {
        match next(rx).await {
            Event::Response { id: got, result } if got == id => {
                return Ok(result.map(|r| r.get().to_string()).unwrap_or_default());
            }
            Event::Failed { id: got, error } if got == id => return Err(error),
            Event::Closed(reason) => return Err(reason.unwrap_or_else(Error::closed)),
            other => seen.push(other),
        }
    }
}

async fn call(
    t: &StdioTransport,
    rx: &mut mpsc::UnboundedReceiver<Event>,
    method: &str,
    params: &str,
) -> Result<String, Error> {
    let id = t.request(method, Some(params), 30_000).unwrap();
    outcome(rx, id, &mut Vec::new()).await
}

#[tokio::test]
async fn answers_notifications_and_rpc_errors() {
    let (t, mut rx) = connect(fixture(&[]));
    assert_eq!(
        call(&t, &mut rx, "echo", r#"{"a":[1,2]}"#).await.unwrap(),
        r#"{"a":[1,2]}"#
    );
    let id = t.request("notify", Some(r#"{"count":3}"#), 30_000).unwrap();
    let mut seen = Vec::new();
    assert_eq!(
        outcome(&mut rx, id, &mut seen).await.unwrap(),
        r#"{"sent":3}"#
    );
    let notes: Vec<String> = seen
        .iter()
        .filter_map(|e| match e {
            Event::Notification { method, params } => {
                Some(format!("{method} {}", params.as_ref().unwrap().get()))
            }
            _ => None,
        })
        .collect();
    assert_eq!(
        notes,
        vec![
            r#"fixture/note {"i":0}"#,
            r#"fixture/note {"i":1}"#,
            r#"fixture/note {"i":2}"#
        ]
    );
    let err = call(
        &t,
        &mut rx,
        "error",
        r#"{"code":-32000,"message":"bad thing"}"#,
    )
    .await
    .unwrap_err();
    assert_eq!(err.to_string(), "MCP error -32000: bad thing");
    let err = call(&t, &mut rx, "nope", "{}").await.unwrap_err();
    assert_eq!(err.to_string(), "MCP error -32601: Method not found: nope");
}

#[tokio::test]
async fn out_of_order_answers_and_a_thousand_in_flight() {
    let (t, mut rx) = connect(fixture(&[]));
    let slow = t
        .request("delay", Some(r#"{"ms":200,"value":"slow"}"#), 30_000)
        .unwrap();
    let fast = t
        .request("delay", Some(r#"{"ms":10,"value":"fast"}"#), 30_000)
        .unwrap();
    let mut order = Vec::new();
    while order.len() < 2 {
        if let Event::Response { id, result } = next(&mut rx).await {
            order.push((id, result.unwrap().get().to_string()));
        }
    }
    assert_eq!(
        order,
        vec![
            (fast, "\"fast\"".to_string()),
            (slow, "\"slow\"".to_string())
        ]
    );

    let ids: Vec<u64> = (0..1000)
        .map(|i| {
            t.request("echo", Some(&format!(r#"{{"n":{i}}}"#)), 30_000)
                .unwrap()
        })
        .collect();
    let mut got = std::collections::HashMap::new();
    while got.len() < ids.len() {
        if let Event::Response { id, result } = next(&mut rx).await {
            got.insert(id, result.unwrap().get().to_string());
        }
    }
    for (i, id) in ids.iter().enumerate() {
        assert_eq!(got[id], format!(r#"{{"n":{i}}}"#));
    }
}

#[tokio::test]
async fn bad_lines_are_skipped_and_the_connection_stays_up() {
    let (t, mut rx) = connect(fixture(&[]));
    assert_eq!(
        call(&t, &mut rx, "garbage", "{}").await.unwrap(),
        r#"{"ok":true}"#
    );
    assert_eq!(
        call(&t, &mut rx, "crlf", "{}").await.unwrap(),
        r#"{"crlf":true}"#
    );
    assert_eq!(
        call(&t, &mut rx, "split", r#"{"delayMs":50}"#)
            .await
            .unwrap(),
        r#"{"split":true}"#
    );
    assert_eq!(
        call(&t, &mut rx, "numeric-id", "{}").await.unwrap(),
        r#"{"numeric":true}"#
    );
    assert_eq!(
        call(&t, &mut rx, "stray-id", "{}").await.unwrap(),
        r#"{"real":true}"#
    );
    assert_eq!(
        call(&t, &mut rx, "echo", r#"{"still":"up"}"#)
            .await
            .unwrap(),
        r#"{"still":"up"}"#
    );
}

#[tokio::test]
async fn an_oversized_answer_fails_its_request_only() {
    let mut config = fixture(&[]);
    config.max_message_bytes = 1024 * 1024;
    let (t, mut rx) = connect(config);
    let err = call(&t, &mut rx, "big", r#"{"bytes":209715200}"#)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "Message exceeds maxMessageBytes (1048576 bytes)"
    );
    assert_eq!(
        call(&t, &mut rx, "echo", r#"{"after":"big"}"#)
            .await
            .unwrap(),
        r#"{"after":"big"}"#
    );
}

#[tokio::test]
async fn a_request_number_above_the_maximum_fails_at_once() {
    let (t, _events) = connect(fixture(&[]));
    let t = Arc::new(t);
    // Below the string ids' base, so that the two forms never stand for the same number.
    let max = mcp_native_core::jsonrpc::MAX_REQUEST_NUMBER;
    assert_eq!(max + 1, WIRE_ID_BASE);
    let options = |id| RequestOptions {
        id: Some(id),
        ..RequestOptions::default()
    };
    let refused = tokio::time::timeout(WAIT, t.request("echo", None, options(max + 1)))
        .await
        .expect("at once");
    assert_eq!(
        refused.unwrap_err().to_string(),
        format!(
            "Internal error: request number {} is out of range (at most {max})",
            max + 1
        )
    );
    // The last one is sent and answered (echoed back with its id as the server saw it).
    let answered = tokio::time::timeout(WAIT, t.request("echo", Some("{}"), options(max)))
        .await
        .expect("answered");
    assert_eq!(answered.unwrap().unwrap().get(), "{}");
}

/// The requests the fixture has read, as it read them.
async fn requests_seen(t: &StdioTransport, rx: &mut mpsc::UnboundedReceiver<Event>) -> Vec<Value> {
    let text = call(t, rx, "requests", "{}").await.unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    value["requests"].as_array().unwrap().clone()
}

#[tokio::test]
async fn request_ids_are_numbers_unless_the_config_asks_for_strings() {
    // The default (18.3.4 `requestIdFormat`): the request's number as a JSON number, which a
    // server that reads nothing else (Apple's `xcrun mcpbridge`) answers.
    let (t, mut rx) = connect(fixture(&["--number-ids-only"]));
    let id = t.request("echo", Some(r#"{"a":1}"#), 30_000).unwrap();
    assert_eq!(
        outcome(&mut rx, id, &mut Vec::new()).await.unwrap(),
        r#"{"a":1}"#
    );
    let seen = requests_seen(&t, &mut rx).await;
    assert_eq!(seen[0]["id"], json!(id));
    assert!(t.close());

    // "string": the decimal string of the base plus the number; that server never answers it.
    let mut config = fixture(&["--number-ids-only"]);
    config.request_id_format = IdFormat::String;
    let (t, mut rx) = connect(config);
    let id = t.request("echo", Some("{}"), 300).unwrap();
    assert_eq!(
        outcome(&mut rx, id, &mut Vec::new())
            .await
            .unwrap_err()
            .to_string(),
        "Request timeout after 300ms"
    );
    assert!(t.close());
    let mut config = fixture(&[]);
    config.request_id_format = IdFormat::String;
    let (t, mut rx) = connect(config);
    let id = t.request("no-reply", None, 100).unwrap();
    assert!(outcome(&mut rx, id, &mut Vec::new()).await.is_err());
    let seen = requests_seen(&t, &mut rx).await;
    assert_eq!(seen[0]["id"], json!((WIRE_ID_BASE + id).to_string()));
    // Its cancellation names it the same way.
    let received = call(&t, &mut rx, "received", "{}").await.unwrap();
    assert!(
        received.contains(&format!(r#""requestId":"{}""#, WIRE_ID_BASE + id)),
        "{received}"
    );
}

#[tokio::test]
async fn timeout_fails_the_request_and_tells_the_server() {
    let (t, mut rx) = connect(fixture(&[]));
    let id = t.request("no-reply", None, 50).unwrap();
    let started = Instant::now();
    let err = outcome(&mut rx, id, &mut Vec::new()).await.unwrap_err();
    assert_eq!(err.to_string(), "Request timeout after 50ms");
    assert!(started.elapsed() < Duration::from_secs(2));
    let zero = t.request("echo", None, 0).unwrap();
    assert_eq!(
        outcome(&mut rx, zero, &mut Vec::new())
            .await
            .unwrap_err()
            .to_string(),
        "Request timeout after 0ms"
    );
    let received = call(&t, &mut rx, "received", "{}").await.unwrap();
    assert!(
        received.contains(&format!(r#"{{"method":"notifications/cancelled","params":{{"requestId":{id},"reason":"Request timeout after 50ms"}}}}"#)),
        "{received}"
    );
    // The 0 ms request was never sent, so there is nothing to cancel.
    assert_eq!(
        received.matches("notifications/cancelled").count(),
        1,
        "{received}"
    );
}

#[tokio::test]
async fn server_requests_get_ping_answers_and_method_not_found() {
    let (t, mut rx) = connect(fixture(&[]));
    let ping = call(&t, &mut rx, "reverse", r#"{"method":"ping"}"#)
        .await
        .unwrap();
    assert!(ping.contains(r#""result":{}"#), "{ping}");
    let other = call(&t, &mut rx, "reverse", r#"{"method":"roots/list"}"#)
        .await
        .unwrap();
    assert!(
        other.contains(r#""error":{"code":-32601,"message":"Method not found"}"#),
        "{other}"
    );
}

#[tokio::test]
async fn a_crash_fails_pending_requests_with_exit_status_and_stderr() {
    let (t, mut rx) = connect(fixture(&[]));
    let pending = t.request("no-reply", None, 30_000).unwrap();
    let crash = t
        .request(
            "crash",
            Some(r#"{"code":7,"stderr":"fatal: out of cheese\n"}"#),
            30_000,
        )
        .unwrap();
    let mut events = Vec::new();
    loop {
        let e = next(&mut rx).await;
        let closed = matches!(e, Event::Closed(_));
        events.push(e);
        if closed {
            break;
        }
    }
    assert!(
        !events
            .iter()
            .any(|e| matches!(e, Event::Response { id, .. } if *id == pending || *id == crash))
    );
    let Some(Event::Error(Error::Closed { exit, stderr })) =
        events.iter().find(|e| matches!(e, Event::Error(_)))
    else {
        panic!("no error event: {events:?}");
    };
    assert_eq!(exit.as_ref().unwrap().code, Some(7));
    assert!(stderr.as_ref().unwrap().contains("out of cheese"));
    match events.last() {
        Some(Event::Closed(Some(e))) => assert_eq!(e.to_string(), "Transport closed"),
        other => panic!("{other:?}"),
    }
    assert!(t.request("echo", None, 1000).is_err());
}

/// A server that dies at start: a request made after its end was seen, while its exit report
/// is collected or after, fails with that report (exit status and stderr), not a bare "Transport
/// closed" — which one a caller got depended on timing (seen under load in tests/examples.rs).
#[tokio::test]
async fn a_request_after_the_server_died_fails_with_its_exit_status_and_stderr() {
    let config = StdioConfig::new(
        "node",
        &["-e", "console.error('missing API key'); process.exit(3)"],
    );
    let (t, mut rx) = connect(config);
    let t = Arc::new(t);
    let started = Instant::now();
    while t.is_open() {
        assert!(started.elapsed() < WAIT, "the server's end is seen");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    // At once (the report is being collected), and again once it is (after Closed).
    let at_once = TransportExt::request(&t, "initialize", None, RequestOptions::default());
    let early = tokio::time::timeout(WAIT, at_once).await.unwrap();
    loop {
        if let Event::Closed(_) = next(&mut rx).await {
            break;
        }
    }
    let after = TransportExt::request(&t, "initialize", None, RequestOptions::default());
    let late = tokio::time::timeout(WAIT, after).await.unwrap();
    for outcome in [early, late] {
        match outcome {
            Err(Error::Closed {
                exit: Some(exit),
                stderr: Some(stderr),
            }) => {
                assert_eq!(exit.code, Some(3));
                assert!(stderr.contains("missing API key"), "{stderr}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn stderr_flood_without_reading_stdin_does_not_deadlock() {
    let (t, mut rx) = connect(fixture(&["--stderr-flood=10485760"]));
    t.set_listeners(true, false);
    let started = Instant::now();
    assert_eq!(
        call(&t, &mut rx, "echo", r#"{"x":1}"#).await.unwrap(),
        r#"{"x":1}"#
    );
    assert!(started.elapsed() < Duration::from_secs(15));
}

#[tokio::test]
async fn close_kills_a_sigterm_ignoring_server_and_its_grandchild() {
    let mut config = fixture(&["--ignore-sigterm"]);
    config.kill_grace_ms = 300;
    let (t, mut rx) = connect(config);
    let pid = t.pid().unwrap() as i32;
    let grandchild = call(&t, &mut rx, "spawn-grandchild", "{}").await.unwrap();
    let gpid: i32 = grandchild
        .trim_start_matches("{\"pid\":")
        .trim_end_matches('}')
        .parse()
        .unwrap();
    assert!(group_alive(pid));
    let started = Instant::now();
    assert!(t.close());
    loop {
        if let Event::Closed(reason) = next(&mut rx).await {
            assert!(reason.is_none());
            break;
        }
    }
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(250) && took < Duration::from_millis(1500),
        "{took:?}"
    );
    assert!(
        !group_alive(pid),
        "process group {pid} still has live members"
    );
    assert!(!alive(pid) && !alive(gpid));
}

/// During the grace after SIGTERM the transport polls whether the server's group still has live
/// members; on Linux each poll scans /proc. That scan must not run on the I/O thread, which
/// serves every other connection meanwhile (it did, every 10 ms of the grace).
#[tokio::test]
async fn the_shutdown_grace_scans_proc_off_the_io_thread() {
    let mut config = fixture(&[]);
    config.kill_grace_ms = 300;
    let (t, mut rx) = connect(config);
    // A second member of the group, so that the group outlives the server and is checked.
    let grandchild = call(&t, &mut rx, "spawn-grandchild", "{}").await.unwrap();
    let gpid: i32 = grandchild
        .trim_start_matches("{\"pid\":")
        .trim_end_matches('}')
        .parse()
        .unwrap();
    // The transport's tasks run on the crate's runtime, on its one thread: the counts are read there.
    let (scans, checks) = on_io_thread().await;
    assert!(t.close());
    loop {
        if let Event::Closed(_) = next(&mut rx).await {
            break;
        }
    }
    let (scans_after, checks_after) = on_io_thread().await;
    assert!(
        checks_after > checks,
        "the group was checked after the server went"
    );
    assert_eq!(scans_after, scans, "no /proc scan on the I/O thread");
    let gone = Instant::now();
    while alive(gpid) {
        assert!(gone.elapsed() < WAIT, "nothing of the group is left");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

/// [`mcp_native_core::runtime::proc_scans_on_this_thread`] of the crate's I/O thread.
async fn on_io_thread() -> (u64, u64) {
    mcp_native_core::runtime::runtime()
        .spawn(async { mcp_native_core::runtime::proc_scans_on_this_thread() })
        .await
        .unwrap()
}

fn alive(pid: i32) -> bool {
    // A zombie that nobody reaped is not alive.
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            let state = s
                .rsplit(')')
                .next()
                .unwrap_or("")
                .split_whitespace()
                .next()
                .unwrap_or("");
            state != "Z" && state != "X"
        })
        .unwrap_or(false)
}

#[tokio::test]
async fn spawn_failure_names_command_and_reason() {
    let (tx, _rx) = mpsc::unbounded_channel();
    let err = StdioTransport::spawn(
        &StdioConfig::new("/nonexistent/bin", &[]),
        Arc::new(ChannelSink(tx, None)),
        30_000,
    )
    .err()
    .unwrap();
    assert_eq!(err.to_string(), "spawn /nonexistent/bin ENOENT");
}

#[tokio::test]
async fn large_answers_come_raw_to_a_sink_that_asks() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let shared = Arc::new(
        StdioTransport::spawn(&fixture(&[]), Arc::new(ChannelSink(tx, Some(1024))), 30_000)
            .unwrap(),
    );
    let t = &*shared;
    let next_answer = async |rx: &mut mpsc::UnboundedReceiver<Event>| loop {
        if let e @ (Event::Response { .. } | Event::RawAnswer { .. } | Event::Failed { .. }) =
            next(rx).await
        {
            break e;
        }
    };
    // Small: parsed, as always.
    let id = t.request("echo", Some(r#"{"a":1}"#), 30_000).unwrap();
    assert!(matches!(next_answer(&mut rx).await, Event::Response { id: got, .. } if got == id));
    // Large: the whole message.
    let big = "é".repeat(2000);
    let id = t
        .request("echo", Some(&format!(r#"{{"big":"{big}"}}"#)), 30_000)
        .unwrap();
    match next_answer(&mut rx).await {
        Event::RawAnswer { id: got, message } => {
            assert_eq!(got, id);
            let value: serde_json::Value = serde_json::from_slice(&message).unwrap();
            assert_eq!(value["result"]["big"], big.as_str());
        }
        other => panic!("expected a raw answer, got {other:?}"),
    }
    let id = t.request("big", Some(r#"{"bytes":5000}"#), 30_000).unwrap();
    assert!(matches!(next_answer(&mut rx).await, Event::RawAnswer { id: got, .. } if got == id));
    // A large error: parsed (its members make the error).
    let data = "d".repeat(5000);
    let params = format!(r#"{{"code":-32001,"message":"no","data":"{data}"}}"#);
    let id = t.request("error", Some(&params), 30_000).unwrap();
    assert!(matches!(next_answer(&mut rx).await, Event::Failed { id: got, .. } if got == id));
    // The transport's own callers (a reply channel) get it parsed, large or not.
    let params = format!(r#"{{"big":"{big}"}}"#);
    let waiting = TransportExt::request(&shared, "echo", Some(&params), RequestOptions::default());
    let result = tokio::time::timeout(WAIT, waiting).await.unwrap().unwrap();
    assert!(result.unwrap().get().contains(&big));
}

#[tokio::test]
async fn a_caller_that_reads_stdout_gets_a_socket_and_feeds_it() {
    use std::io::Read;
    use std::os::fd::AsRawFd;

    let mut config = fixture(&[]);
    config.caller_reads_stdout = true;
    let (t, _rx) = connect(config);
    let fd = t.take_stdout_fd().expect("the descriptor, once");
    assert!(t.take_stdout_fd().is_none(), "taken once");
    // SAFETY: fstat into a zeroed struct on a descriptor we own.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    assert_eq!(unsafe { libc::fstat(fd.as_raw_fd(), &mut st) }, 0);
    assert_eq!(
        st.st_mode & libc::S_IFMT,
        libc::S_IFSOCK,
        "a socket, not a pipe"
    );

    let id = t.request("stdout-kind", None, 30_000).unwrap();
    // Read on a thread of our own, as a runtime's event loop would, and feed what comes.
    let mut stream = std::os::unix::net::UnixStream::from(fd);
    stream.set_read_timeout(Some(WAIT)).unwrap();
    let reader = std::thread::spawn(move || {
        let mut chunks = Vec::new();
        let mut buf = [0u8; 4096];
        loop {
            let n = stream.read(&mut buf).expect("read in time");
            chunks.push(buf[..n].to_vec());
            if n == 0 || buf[..n].contains(&b'\n') {
                return chunks;
            }
        }
    });
    let mut events = Vec::new();
    for chunk in reader.join().unwrap() {
        events.extend(t.feed(&chunk));
    }
    let result = events.iter().find_map(|e| match e {
        Event::Response { id: got, result } if *got == id => result.as_ref().map(|r| r.get()),
        _ => None,
    });
    // The server sees a socket too.
    assert_eq!(result, Some(r#"{"socket":true,"fifo":false}"#));
    assert!(t.close());
}

/// A caller that reads stdout with hand-over, as Bun's binding does: its socket, and the sink's
/// events (large answers raw).
fn hand_over_fixture() -> (
    StdioTransport,
    mpsc::UnboundedReceiver<Event>,
    std::os::unix::net::UnixStream,
) {
    let mut config = fixture(&[]);
    config.caller_reads_stdout = true;
    config.hand_over_long_lines = true;
    let (tx, rx) = mpsc::unbounded_channel();
    let t = StdioTransport::spawn(&config, Arc::new(ChannelSink(tx, Some(1024))), 30_000)
        .expect("spawn fixture");
    let stream = std::os::unix::net::UnixStream::from(t.take_stdout_fd().unwrap());
    (t, rx, stream)
}

/// One read of at most 128 KiB, waiting for data (the transport makes the socket non-blocking
/// when it reads it too) without blocking the runtime the transport's tasks run on.
async fn read_some(stream: &mut std::os::unix::net::UnixStream) -> Vec<u8> {
    use std::io::Read;
    stream.set_nonblocking(true).unwrap();
    let mut buf = vec![0u8; 128 * 1024];
    let started = Instant::now();
    loop {
        match stream.read(&mut buf) {
            Ok(n) => {
                buf.truncate(n);
                return buf;
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock && started.elapsed() < WAIT => {
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
            Err(e) => panic!("read: {e}"),
        }
    }
}

/// A caller-read fixture asked for `big-then-exit` of `bytes`, once the server has exited and
/// the transport has reaped it; the request's id.
async fn answered_then_exited(
    bytes: usize,
) -> (
    StdioTransport,
    mpsc::UnboundedReceiver<Event>,
    std::os::unix::net::UnixStream,
    u64,
) {
    let (t, rx, stream) = hand_over_fixture();
    let pid = t.pid().unwrap();
    let params = format!(r#"{{"bytes":{bytes}}}"#);
    let id = t.request("big-then-exit", Some(&params), 30_000).unwrap();
    let started = Instant::now();
    while std::path::Path::new(&format!("/proc/{pid}")).exists() {
        assert!(started.elapsed() < WAIT, "the server exits");
        tokio::time::sleep(Duration::from_millis(1)).await;
    }
    (t, rx, stream, id)
}

/// Events from the sink until the transport hands stdout back (that event included).
async fn until_handed_back(rx: &mut mpsc::UnboundedReceiver<Event>) -> Vec<Event> {
    let mut events = Vec::new();
    loop {
        let event = next(rx).await;
        let back = matches!(event, Event::CallerReads(true));
        events.push(event);
        if back {
            return events;
        }
    }
}

#[tokio::test]
async fn a_long_line_is_read_by_the_transport_and_handed_back() {
    let (t, mut rx, mut stream) = hand_over_fixture();
    for round in 0..2 {
        let big = t
            .request("big", Some(r#"{"bytes":2097152}"#), 30_000)
            .unwrap();
        // The caller reads until told to stop: after the start of the long line only.
        let mut fed = 0;
        loop {
            let chunk = read_some(&mut stream).await;
            assert!(!chunk.is_empty(), "the server is still up");
            fed += chunk.len();
            match &t.feed(&chunk)[..] {
                [] => continue,
                [Event::CallerReads(false)] => break,
                other => panic!("unexpected {other:?}"),
            }
        }
        assert!(fed < 1 << 20, "fed {fed} bytes");
        // The caller has stopped reading: the second step of the hand-over.
        assert!(t.hand_over().is_empty());
        // The transport reads the rest and sends the answer, raw, then hands back.
        let handed = until_handed_back(&mut rx).await;
        assert!(
            matches!(&handed[..], [Event::RawAnswer { id, message }, Event::CallerReads(true)] if *id == big && message.len() > 2097152),
            "{handed:?}"
        );
        // The caller reads again, and small answers come from its feed.
        let params = format!(r#"{{"round":{round}}}"#);
        let echo = t.request("echo", Some(&params), 30_000).unwrap();
        let answer = loop {
            let events = t.feed(&read_some(&mut stream).await);
            if let Some(Event::Response { id, result }) = events.first() {
                assert_eq!(*id, echo);
                break result.as_ref().map(|r| r.get().to_owned());
            }
            assert!(events.is_empty(), "{events:?}");
        };
        assert_eq!(answer, Some(params));
    }
    assert!(t.close());
}

/// Feeds what the caller reads until the transport asks it to stop reading; the bytes fed.
async fn feed_until_asked(
    t: &StdioTransport,
    stream: &mut std::os::unix::net::UnixStream,
) -> usize {
    let mut fed = 0;
    loop {
        let chunk = read_some(stream).await;
        assert!(!chunk.is_empty(), "the server is still up");
        fed += chunk.len();
        match &t.feed(&chunk)[..] {
            [] => continue,
            [Event::CallerReads(false)] => return fed,
            other => panic!("unexpected {other:?}"),
        }
    }
}

#[tokio::test]
async fn a_chunk_the_runtime_delivers_after_the_pause_is_fed_in_order() {
    // Bun 1.3.x delivers one more read after pause(): fed before the hand-over, it stays in
    // order, and the answer comes back whole (it came back 512 KiB short when the transport
    // took over at once).
    let (t, mut rx, mut stream) = hand_over_fixture();
    let bytes = 8 << 20;
    let big = t
        .request("big", Some(&format!(r#"{{"bytes":{bytes}}}"#)), 30_000)
        .unwrap();
    let fed = feed_until_asked(&t, &mut stream).await;
    let late = read_some(&mut stream).await;
    assert!(!late.is_empty());
    assert!(
        t.feed(&late).is_empty(),
        "no second ask while one is pending"
    );
    assert!(t.hand_over().is_empty());
    let handed = until_handed_back(&mut rx).await;
    match &handed[..] {
        [Event::RawAnswer { id, message }, Event::CallerReads(true)] => {
            assert_eq!(*id, big);
            let value: serde_json::Value = serde_json::from_slice(message).unwrap();
            assert_eq!(value["result"]["data"].as_str().map(str::len), Some(bytes));
            assert!(fed + late.len() < message.len());
        }
        other => panic!("unexpected {other:?}"),
    }
    let echo = t.request("echo", Some(r#"{"after":1}"#), 30_000).unwrap();
    let events = t.feed(&read_some(&mut stream).await);
    assert!(
        matches!(&events[..], [Event::Response { id, .. }] if *id == echo),
        "{events:?}"
    );
    assert!(t.close());
}

#[tokio::test]
async fn a_chunk_fed_after_the_hand_over_closes_the_connection_with_an_error() {
    let (t, mut rx, mut stream) = hand_over_fixture();
    let part = t
        .request("big-part", Some(r#"{"bytes":300000}"#), 30_000)
        .unwrap();
    feed_until_asked(&t, &mut stream).await;
    assert!(t.hand_over().is_empty());
    // The runtime read on after the hand-over: the chunk is refused, never decoded.
    assert!(t.feed(b"\"}}\n").is_empty());
    let mut events = Vec::new();
    loop {
        let event = next(&mut rx).await;
        let closed = matches!(event, Event::Closed(_));
        events.push(event);
        if closed {
            break;
        }
    }
    let errors: Vec<String> = events
        .iter()
        .filter_map(|e| match e {
            Event::Error(e) => Some(e.to_string()),
            _ => None,
        })
        .collect();
    assert!(
        errors
            .iter()
            .any(|e| e.contains("after the stdout reader was handed over")),
        "{events:?}"
    );
    // The request never gets an answer made of the refused bytes; the close fails it (the
    // sink's consumer rejects what is pending on `Closed`).
    assert!(
        !events.iter().any(
            |e| matches!(e, Event::Response { id, .. } | Event::RawAnswer { id, .. } if *id == part)
        ),
        "{events:?}"
    );
    assert!(
        matches!(events.last(), Some(Event::Closed(Some(_)))),
        "{events:?}"
    );
    assert!(!t.is_open());
}

#[tokio::test]
async fn a_hand_over_whose_line_completed_meanwhile_gives_the_reading_back_at_once() {
    let (t, _rx, mut stream) = hand_over_fixture();
    let big = t
        .request("big", Some(r#"{"bytes":200000}"#), 30_000)
        .unwrap();
    feed_until_asked(&t, &mut stream).await;
    // The runtime delivered the rest of the line before the second step.
    let mut events = Vec::new();
    while !events
        .iter()
        .any(|e| matches!(e, Event::RawAnswer { .. } | Event::Response { .. }))
    {
        events.extend(t.feed(&read_some(&mut stream).await));
    }
    assert!(
        matches!(events.last(), Some(Event::RawAnswer { id, .. } | Event::Response { id, .. }) if *id == big),
        "{events:?}"
    );
    assert!(matches!(&t.hand_over()[..], [Event::CallerReads(true)]));
    // Nothing is pending any more: a second call does nothing.
    assert!(t.hand_over().is_empty());
    assert!(t.close());
}

#[tokio::test]
async fn a_long_line_handed_over_after_the_server_exited_is_still_read() {
    // The server writes it all (the socket holds it) and exits; once it is reaped, the
    // transport is past serving and only waits for the caller to reach the end.
    let (t, mut rx, mut stream, id) = answered_then_exited(600_000).await;
    let first = t.feed(&read_some(&mut stream).await);
    assert!(
        matches!(&first[..], [Event::Notification { method, .. }, Event::CallerReads(false)] if method == "before"),
        "{first:?}"
    );
    assert!(t.hand_over().is_empty());
    let handed = until_handed_back(&mut rx).await;
    assert!(
        matches!(&handed[..], [Event::RawAnswer { id: got, .. }, Event::Notification { method, .. }, Event::CallerReads(true)] if *got == id && method == "after"),
        "{handed:?}"
    );
    // The caller finds the end itself.
    assert!(read_some(&mut stream).await.is_empty());
    assert!(t.feed_end().is_empty());
    match next(&mut rx).await {
        Event::Closed(Some(e)) => assert_eq!(e.to_string(), "Transport closed"),
        other => panic!("unexpected {other:?}"),
    }
}

#[tokio::test]
async fn a_caller_busy_when_the_server_exits_still_gets_its_last_answer() {
    let (t, mut rx, mut stream, id) = answered_then_exited(1000).await;
    // The caller is busy for four times the usual drain: its answer still waits for it.
    tokio::time::sleep(4 * mcp_native_core::transport::stdio::DRAIN_AFTER_EXIT).await;
    assert!(rx.try_recv().is_err(), "nothing reported yet");
    let events = t.feed(&read_some(&mut stream).await);
    let methods: Vec<_> = events
        .iter()
        .map(|e| match e {
            Event::Notification { method, .. } => method.clone(),
            Event::Response { id: got, .. } | Event::RawAnswer { id: got, .. } if *got == id => {
                "answer".into()
            }
            other => format!("{other:?}"),
        })
        .collect();
    assert_eq!(methods, ["before", "answer", "after"]);
    assert!(read_some(&mut stream).await.is_empty());
    assert!(t.feed_end().is_empty());
    match next(&mut rx).await {
        Event::Closed(Some(e)) => assert_eq!(e.to_string(), "Transport closed"),
        other => panic!("unexpected {other:?}"),
    }
}

/// Linux's parent-death signal belongs to the thread that forked: a server spawned by a thread
/// that then ends (a tokio blocking-pool thread retiring, a caller's short-lived thread) was
/// SIGTERMed at that moment. Spawns happen on the crate's own long-lived thread instead.
#[tokio::test]
async fn a_server_outlives_the_thread_that_asked_for_it() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let config = fixture(&[]);
    // Spawned from a thread of its own, which ends at once.
    let t = std::thread::spawn(move || {
        StdioTransport::spawn(&config, Arc::new(ChannelSink(tx, None)), 30_000).expect("spawn")
    })
    .join()
    .unwrap();
    let pgid = t.pid().expect("the server's pid") as i32;
    // The signal was sent as the thread exited (before `join` returned), and its default
    // action ends the server at once: a round trip after the join shows it is still there.
    let id = t.request("ping", None, 10_000).unwrap();
    let mut seen = Vec::new();
    assert_eq!(outcome(&mut rx, id, &mut seen).await.unwrap(), "{}");
    assert!(group_alive(pgid));
    assert!(t.close());
}

/// A Rust caller's runtime that ends before its transport (a short-lived runtime, a test's): the
/// server is still shut down and reaped when the transport is dropped, and answers until then.
#[test]
fn a_server_outlives_the_runtime_that_asked_for_it_and_goes_with_its_transport() {
    let (tx, mut rx) = mpsc::unbounded_channel();
    let caller = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let t = caller.block_on(async {
        StdioTransport::spawn(&fixture(&[]), Arc::new(ChannelSink(tx, None)), 30_000)
            .expect("spawn")
    });
    drop(caller);
    let pid = t.pid().expect("the server's pid") as i32;
    let later = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    later.block_on(async {
        let id = t.request("ping", None, 10_000).unwrap();
        let mut seen = Vec::new();
        assert_eq!(outcome(&mut rx, id, &mut seen).await.unwrap(), "{}");
        drop(t);
        let gone = Instant::now();
        // Not a zombie either: gone from /proc once reaped.
        while std::path::Path::new(&format!("/proc/{pid}")).exists() {
            assert!(gone.elapsed() < WAIT, "the server is shut down and reaped");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    });
}

/// SPEC 11.6: on Linux the server runs in a session of its own (`setsid`), leading its own process
/// group; the host's session is not its.
#[cfg(target_os = "linux")]
#[tokio::test]
async fn on_linux_the_server_leads_a_session_and_group_of_its_own() {
    let (t, _rx) = connect(fixture(&[]));
    let pid = t.pid().expect("the server's pid") as i32;
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command's closing parenthesis: state, ppid, pgrp, session.
    let fields: Vec<i32> = stat
        .rsplit(')')
        .next()
        .unwrap()
        .split_whitespace()
        .skip(1)
        .take(3)
        .map(|f| f.parse().unwrap())
        .collect();
    let (pgrp, session) = (fields[1], fields[2]);
    assert_eq!(pgrp, pid, "its own process group");
    assert_eq!(session, pid, "its own session");
    // SAFETY: getsid(0) asks for the calling process's session; no preconditions.
    assert_ne!(
        session,
        unsafe { libc::getsid(0) },
        "not the host's session"
    );
    assert!(t.close());
}
