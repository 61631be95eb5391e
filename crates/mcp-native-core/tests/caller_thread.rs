//! Requests made from a thread outside any tokio runtime (JavaScript's, in the package) start on
//! that thread. A process of its own: one test holds the crate's I/O thread, which every other
//! test of a binary shares.
#![cfg(unix)] // fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows

mod common;

use std::sync::Arc;
use std::time::Duration;

use mcp_native_core::transport::{Event, OutgoingRequest, Transport};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(20);

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
    assert!(request.contains(&format!("\"id\":{id1},")), "{request}");
    answer_http(&mut conn, id1);
    assert_eq!(next_result(&mut rx, id1), json!({ "n": id1 }));

    // The I/O thread held (this test binary is a process of its own, so no other test shares
    // that thread): the next request arrives all the same, and is answered while it is held.
    let (held_tx, held_rx) = std::sync::mpsc::channel::<()>();
    let (release_tx, release_rx) = std::sync::mpsc::channel::<()>();
    mcp_native_core::runtime::runtime().spawn(async move {
        held_tx.send(()).unwrap();
        // Until released, or until the test ends (a panic drops the sender).
        let _ = release_rx.recv();
    });
    held_rx.recv_timeout(WAIT).unwrap();
    let id2 = send_echo(&t);
    conn.set_read_timeout(Some(WAIT)).unwrap();
    let request = read_http_request(&mut conn);
    if request.is_ok() {
        // Answered while only the first poll's waker is registered (the answer is in this
        // socket's receive buffer when the write returns): the task, once it runs, reads it.
        answer_http(&mut conn, id2);
    }
    release_tx.send(()).unwrap();
    let request = request.expect("the request was not written while the I/O thread was busy");
    assert!(request.contains(&format!("\"id\":{id2},")), "{request}");
    conn.set_read_timeout(Some(WAIT)).unwrap();
    assert_eq!(next_result(&mut rx, id2), json!({ "n": id2 }));
    assert_eq!(t.stats().inflight, 0);
    assert_eq!(t.stats().deadlines, 0);

    // Closed while a request started on this thread waits for its answer: nothing is left.
    let id3 = send_echo(&t);
    assert!(
        read_http_request(&mut conn)
            .unwrap()
            .contains(&format!("\"id\":{id3},"))
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
    let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"n":{id}}}}}"#);
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
