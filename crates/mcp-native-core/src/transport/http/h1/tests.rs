//! The transport's own connections (hyper's HTTP/1.1 client, pooled here) against real sockets: a loopback server per test that answers as each case
//! needs (framings, reuse, a server that closes, garbage), counting connections and requests.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

use super::*;

/// Every test ends within this.
const LIMIT: Duration = Duration::from_secs(10);

/// What the test server does with each request on a connection: the bytes to send back
/// (written in pieces of `piece` bytes, 0 = at once) and whether to close afterwards.
struct Answer {
    bytes: Vec<u8>,
    piece: usize,
    close: bool,
}

fn answer(text: &str) -> Answer {
    Answer {
        bytes: text.as_bytes().to_vec(),
        piece: 0,
        close: false,
    }
}

/// A loopback server: `script(request_number, request_bytes)` answers each request (numbered
/// from 0 across connections). Returns the URL, the count of accepted connections and the
/// requests received.
struct Server {
    url: String,
    connections: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
}

async fn serve(script: impl Fn(usize, &[u8]) -> Answer + Send + Sync + 'static) -> Server {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let requests = Arc::new(Mutex::new(Vec::new()));
    let script = Arc::new(script);
    let (c, r) = (connections.clone(), requests.clone());
    tokio::spawn(async move {
        loop {
            let Ok((conn, _)) = listener.accept().await else {
                return;
            };
            c.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(serve_conn(conn, script.clone(), r.clone()));
        }
    });
    Server {
        url,
        connections,
        requests,
    }
}

async fn serve_conn(
    mut conn: TcpStream,
    script: Arc<impl Fn(usize, &[u8]) -> Answer>,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
) {
    let mut buf = Vec::new();
    loop {
        let Some(request) = read_request(&mut conn, &mut buf).await else {
            return;
        };
        let n = {
            let mut all = requests.lock().unwrap();
            all.push(request.clone());
            all.len() - 1
        };
        let a = script(n, &request);
        if a.piece == 0 {
            let _ = conn.write_all(&a.bytes).await;
        } else {
            for piece in a.bytes.chunks(a.piece) {
                let _ = conn.write_all(piece).await;
                let _ = conn.flush().await;
                tokio::time::sleep(Duration::from_millis(1)).await;
            }
        }
        if a.close {
            return;
        }
    }
}

/// One request (head and `content-length` body), or `None` at the end of the connection.
async fn read_request(conn: &mut TcpStream, buf: &mut Vec<u8>) -> Option<Vec<u8>> {
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length: "))
                .map_or(0, |v| v.trim().parse().unwrap());
            if buf.len() >= end + 4 + len {
                return Some(buf.drain(..end + 4 + len).collect());
            }
        }
        let mut chunk = [0u8; 4096];
        match conn.read(&mut chunk).await {
            Ok(0) | Err(_) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
        }
    }
}

fn pool(url: &str) -> Arc<Pool> {
    Pool::new(
        Target::for_url(url, |_| None).unwrap(),
        Duration::from_secs(90),
    )
}

/// The requests the tests make, to the test server's `/mcp`.
trait Requests {
    async fn post(&self, headers: &HeaderMap, body: &[u8]) -> Result<Response, String>;
    async fn get(&self, headers: &HeaderMap) -> Result<Response, String>;
}

impl Requests for Arc<Pool> {
    async fn post(&self, headers: &HeaderMap, body: &[u8]) -> Result<Response, String> {
        let url = format!("{}/mcp", self.target.origin.ascii_serialization());
        let url = url::Url::parse(&url).unwrap();
        let body = Bytes::copy_from_slice(body);
        self.send(reqwest::Method::POST, &url, headers, body).await
    }

    async fn get(&self, headers: &HeaderMap) -> Result<Response, String> {
        let url = format!("{}/mcp", self.target.origin.ascii_serialization());
        let url = url::Url::parse(&url).unwrap();
        self.send(reqwest::Method::GET, &url, headers, Bytes::new())
            .await
    }
}

fn json_headers() -> HeaderMap {
    let mut h = HeaderMap::new();
    h.insert("content-type", HeaderValue::from_static("application/json"));
    h
}

async fn body(r: &mut Response) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while let Some(c) = r.chunk().await? {
        out.extend_from_slice(&c);
    }
    Ok(out)
}

async fn post_text(p: &Arc<Pool>, body_bytes: &[u8]) -> Result<(u16, Vec<u8>), String> {
    let mut r = p.post(&json_headers(), body_bytes).await?;
    let b = body(&mut r).await?;
    Ok((r.status, b))
}

#[tokio::test]
async fn the_request_is_one_post_with_host_and_length() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|_, _| answer("HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok")).await;
        let url = format!("{}?key=1#frag", s.url);
        let p = pool(&url);
        let mut headers = json_headers();
        headers.insert("content-length", HeaderValue::from_static("999"));
        headers.insert("x-custom", HeaderValue::from_static("v"));
        let url = url::Url::parse(&url).unwrap();
        let body_bytes = Bytes::from_static(b"{\"a\":1}");
        let mut r = p
            .send(reqwest::Method::POST, &url, &headers, body_bytes)
            .await
            .unwrap();
        assert_eq!(body(&mut r).await.unwrap(), b"ok");
        let req = String::from_utf8(s.requests.lock().unwrap()[0].clone()).unwrap();
        let authority = s.url.trim_start_matches("http://").trim_end_matches("/mcp");
        assert_eq!(
            req,
            format!(
                "POST /mcp?key=1 HTTP/1.1\r\nhost: {authority}\r\ncontent-type: \
                 application/json\r\nx-custom: v\r\ncontent-length: 7\r\n\r\n{{\"a\":1}}"
            )
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_kept_alive_connection_serves_the_next_requests() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|n, _| {
            answer(&format!(
                "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{n:02}"
            ))
        })
        .await;
        let p = pool(&s.url);
        for n in 0..3 {
            assert_eq!(
                post_text(&p, b"{}").await.unwrap(),
                (200, format!("{n:02}").into_bytes())
            );
        }
        assert_eq!(s.connections.load(Ordering::SeqCst), 1);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn chunked_bodies_with_extensions_and_trailers_arrive_byte_by_byte() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|_, _| Answer {
            bytes: b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n\
                     1\r\n \r\n5\r\nworld\r\n0\r\nx-trailer: t\r\n\r\n"
                .to_vec(),
            piece: 1,
            close: false,
        })
        .await;
        let p = pool(&s.url);
        assert_eq!(post_text(&p, b"{}").await.unwrap().1, b"hello world");
        // Read to its end: the connection serves the next request.
        assert_eq!(post_text(&p, b"{}").await.unwrap().1, b"hello world");
        assert_eq!(s.connections.load(Ordering::SeqCst), 1);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_body_without_length_is_read_until_close_and_its_connection_not_kept() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|_, _| Answer {
            close: true,
            ..answer("HTTP/1.1 200 OK\r\n\r\nuntil the end")
        })
        .await;
        let p = pool(&s.url);
        assert_eq!(post_text(&p, b"{}").await.unwrap().1, b"until the end");
        assert_eq!(post_text(&p, b"{}").await.unwrap().1, b"until the end");
        assert_eq!(s.connections.load(Ordering::SeqCst), 2);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn connection_close_and_http_1_0_are_not_kept() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|n, _| {
            answer(if n % 2 == 0 {
                "HTTP/1.1 200 OK\r\nConnection: keep-alive, Close\r\nContent-Length: 1\r\n\r\na"
            } else {
                "HTTP/1.0 200 OK\r\nContent-Length: 1\r\n\r\nb"
            })
        })
        .await;
        let p = pool(&s.url);
        for _ in 0..4 {
            post_text(&p, b"{}").await.unwrap();
        }
        assert_eq!(s.connections.load(Ordering::SeqCst), 4);
        // Nor one the request asked to close.
        let s = serve(|_, _| answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\na")).await;
        let p = pool(&s.url);
        let mut headers = json_headers();
        headers.insert("connection", HeaderValue::from_static("close"));
        for _ in 0..2 {
            let mut r = p.post(&headers, b"{}").await.unwrap();
            body(&mut r).await.unwrap();
        }
        assert_eq!(s.connections.load(Ordering::SeqCst), 2);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn an_idle_connection_the_server_closed_is_not_used() {
    tokio::time::timeout(LIMIT, async {
        // Keep-alive framing, but the server closes after each answer (its idle timeout).
        let s = serve(|_, _| Answer {
            close: true,
            ..answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
        })
        .await;
        let p = pool(&s.url);
        for _ in 0..3 {
            assert_eq!(post_text(&p, b"{}").await.unwrap().1, b"ok");
            tokio::time::sleep(Duration::from_millis(20)).await; // the FIN arrives
        }
        assert_eq!(s.connections.load(Ordering::SeqCst), 3);
        assert_eq!(
            s.requests.lock().unwrap().len(),
            3,
            "no request was sent twice"
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_request_the_server_dropped_unanswered_fails_and_is_not_sent_again() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|n, _| {
            if n == 0 {
                answer("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok")
            } else {
                Answer {
                    close: true,
                    ..answer("")
                }
            }
        })
        .await;
        let p = pool(&s.url);
        post_text(&p, b"{}").await.unwrap();
        // On the reused connection: read, not answered, closed.
        let e = post_text(&p, b"{}").await.unwrap_err();
        assert_eq!(
            e,
            "error sending request: connection closed before message completed"
        );
        assert_eq!(s.requests.lock().unwrap().len(), 2);
        // And on a fresh one.
        let e = post_text(&p, b"{}").await.unwrap_err();
        assert!(
            e.contains("connection closed before message completed"),
            "{e}"
        );
        assert_eq!(s.requests.lock().unwrap().len(), 3);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_truncated_body_is_an_error() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|n, _| Answer {
            close: true,
            ..answer(if n == 0 {
                "HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nabc"
            } else {
                "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nab"
            })
        })
        .await;
        let p = pool(&s.url);
        for _ in 0..2 {
            let e = post_text(&p, b"{}").await.unwrap_err();
            assert!(
                e.starts_with(
                    "error decoding response body: error reading a body from connection: "
                ),
                "{e}"
            );
        }
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn interim_responses_are_skipped_and_204_has_no_body() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|n, _| {
            answer(if n == 0 {
                "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n"
            } else {
                "HTTP/1.1 204 No Content\r\n\r\n"
            })
        })
        .await;
        let p = pool(&s.url);
        assert_eq!(post_text(&p, b"{}").await.unwrap(), (202, vec![]));
        assert_eq!(post_text(&p, b"{}").await.unwrap(), (204, vec![]));
        assert_eq!(s.connections.load(Ordering::SeqCst), 1);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn garbage_and_oversized_heads_are_errors() {
    tokio::time::timeout(LIMIT, async {
        let huge = format!(
            "HTTP/1.1 200 OK\r\nx-big: {}",
            "a".repeat(MAX_HEAD_BYTES + 10)
        );
        let s = serve(move |n, _| match n {
            0 => answer("NOT HTTP AT ALL\r\n\r\n"),
            1 => answer(&huge),
            2 => answer("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n"),
            3 => answer("HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n"),
            4 => answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n"),
            5 => answer("HTTP/1.1 101 Switching Protocols\r\n\r\n"),
            6 => answer("HTTP/1.1 200 OK\r\nContent-Length: +2\r\n\r\nok"),
            _ => {
                answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n+2\r\nok\r\n0\r\n\r\n")
            }
        })
        .await;
        let p = pool(&s.url);
        let mut errors = Vec::new();
        for _ in 0..8 {
            errors.push(post_text(&p, b"{}").await.unwrap_err());
        }
        // hyper's words for each (a `+` sign is no digit, in a length or a chunk size).
        let bad_length = "error sending request: invalid content-length parsed";
        let bad_chunk = "error decoding response body: error reading a body from connection: \
                         Invalid chunk size line: missing size digit";
        assert_eq!(
            errors,
            [
                "error sending request: invalid HTTP version parsed",
                "error sending request: message head is too large",
                bad_length,
                bad_length,
                bad_chunk,
                "error sending request: unexpected protocol switch",
                bad_length,
                bad_chunk,
            ]
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_response_dropped_before_its_end_closes_its_connection() {
    tokio::time::timeout(LIMIT, async {
        let big = format!(
            "HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n{}",
            "x".repeat(100_000)
        );
        let s = serve(move |_, _| answer(&big)).await;
        let p = pool(&s.url);
        let mut r = p.post(&json_headers(), b"{}").await.unwrap();
        assert!(r.chunk().await.unwrap().is_some());
        drop(r);
        assert_eq!(post_text(&p, b"{}").await.unwrap().1.len(), 100_000);
        assert_eq!(s.connections.load(Ordering::SeqCst), 2);
        // That one was read to its end: kept.
        post_text(&p, b"{}").await.unwrap();
        assert_eq!(s.connections.load(Ordering::SeqCst), 2);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn connection_errors_say_what_failed() {
    tokio::time::timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        drop(listener);
        let e = post_text(&pool(&url), b"{}").await.unwrap_err();
        assert!(
            e.starts_with("error sending request: tcp connect error: "),
            "{e}"
        );
        assert!(e.contains("refused"), "{e}");
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn idle_connections_close_after_the_idle_time_and_with_the_pool() {
    tokio::time::timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let mut ends = Vec::new();
            for _ in 0..2 {
                let (mut conn, _) = listener.accept().await.unwrap();
                let mut buf = Vec::new();
                read_request(&mut conn, &mut buf).await.unwrap();
                conn.write_all(b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")
                    .await
                    .unwrap();
                // The client closes it: the server reads the end of the stream.
                let start = tokio::time::Instant::now();
                assert!(read_request(&mut conn, &mut buf).await.is_none());
                ends.push(start.elapsed());
            }
            ends
        });
        let target = Target::for_url(&url, |_| None).unwrap();
        let p = Pool::new(target.clone(), Duration::from_millis(100));
        post_text(&p, b"{}").await.unwrap();
        // The second: a pool with a long idle time, dropped.
        let p2 = Pool::new(target, Duration::from_secs(90));
        tokio::time::sleep(Duration::from_millis(50)).await;
        post_text(&p2, b"{}").await.unwrap();
        drop(p2);
        let ends = server.await.unwrap();
        assert!(ends[0] >= Duration::from_millis(60), "{ends:?}");
        assert!(ends[1] < Duration::from_secs(5), "{ends:?}");
        drop(p);
    })
    .await
    .unwrap();
}

#[test]
fn which_urls_the_lean_client_serves() {
    let none = |_: &str| None;
    let t = Target::for_url("http://127.0.0.1:8080/mcp?k=v#f", none).unwrap();
    assert_eq!(t.authority, "127.0.0.1:8080");
    let same = url::Url::parse("http://127.0.0.1:8080/mcp?k=v#f").unwrap();
    assert_eq!(t.path_of(&same).unwrap(), "/mcp?k=v");
    let other_port = url::Url::parse("http://127.0.0.1:8081/mcp").unwrap();
    assert!(
        t.path_of(&other_port).is_none(),
        "another origin is not served"
    );
    assert_eq!(t.connect, Connect::Addr("127.0.0.1:8080".parse().unwrap()));
    let t = Target::for_url("http://[::1]:3000", none).unwrap();
    assert_eq!(t.authority, "[::1]:3000");
    let root = url::Url::parse("http://[::1]:3000").unwrap();
    assert_eq!(t.path_of(&root).unwrap(), "/");
    assert_eq!(t.connect, Connect::Addr("[::1]:3000".parse().unwrap()));
    let t = Target::for_url("http://LocalHost/x", none).unwrap();
    assert_eq!(t.authority, "localhost");
    assert_eq!(t.connect, Connect::Name("localhost".into(), 80));
    // Not served: other host names (reqwest races their addresses), TLS, credentials in the
    // URL, a proxy in the environment.
    assert!(Target::for_url("http://example.com/mcp", none).is_none());
    assert!(Target::for_url("https://example.com/mcp", none).is_none());
    assert!(Target::for_url("https://127.0.0.1/mcp", none).is_none());
    assert!(Target::for_url("http://u:p@example.com/mcp", none).is_none());
    assert!(Target::for_url("not a url", none).is_none());
    for var in PROXY_VARS {
        let env = |v: &str| (v == var).then(|| "http://127.0.0.1:1".to_string());
        assert!(
            Target::for_url("http://127.0.0.1/mcp", env).is_none(),
            "{var}"
        );
    }
    let blank = |v: &str| (v == "HTTP_PROXY").then(|| " ".to_string());
    assert!(Target::for_url("http://127.0.0.1/mcp", blank).is_some());
}

#[tokio::test]
async fn a_body_whose_end_came_with_its_data_keeps_its_connection_when_dropped() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|_, _| {
            answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n")
        })
        .await;
        let p = pool(&s.url);
        for _ in 0..3 {
            let mut r = p.post(&json_headers(), b"{}").await.unwrap();
            assert_eq!(&r.chunk().await.unwrap().unwrap()[..], b"hello");
            drop(r); // without reading the end: it was buffered already
        }
        assert_eq!(s.connections.load(Ordering::SeqCst), 1);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn finishing_in_the_background_keeps_a_connection_whose_body_ends_soon() {
    tokio::time::timeout(LIMIT, async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let server = tokio::spawn(async move {
            let (mut conn, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            // 1: the end 50 ms after the data — finished in the background, kept.
            read_request(&mut conn, &mut buf).await.unwrap();
            let head = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n";
            conn.write_all(format!("{head}5\r\nhello\r\n").as_bytes())
                .await
                .unwrap();
            tokio::time::sleep(Duration::from_millis(50)).await;
            conn.write_all(b"0\r\n\r\n").await.unwrap();
            // 2: on the same connection, a body that never ends — closed after FINISH_WAIT.
            read_request(&mut conn, &mut buf).await.unwrap();
            conn.write_all(format!("{head}5\r\nhello\r\n").as_bytes())
                .await
                .unwrap();
            let start = tokio::time::Instant::now();
            assert!(read_request(&mut conn, &mut buf).await.is_none());
            start.elapsed()
        });
        let p = pool(&url);
        for _ in 0..2 {
            let mut r = p.post(&json_headers(), b"{}").await.unwrap();
            assert_eq!(&r.chunk().await.unwrap().unwrap()[..], b"hello");
            r.finish_in_background();
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
        let closed_after = server.await.unwrap();
        assert!(
            closed_after >= FINISH_WAIT - Duration::from_millis(200),
            "{closed_after:?}"
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn a_get_has_no_body_and_streams_its_answer() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|_, _| Answer {
            bytes:
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\r\ndata: 1\n\ndata: 2\n\n"
                    .to_vec(),
            piece: 9,
            close: true,
        })
        .await;
        let p = pool(&s.url);
        let mut headers = HeaderMap::new();
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let mut r = p.get(&headers).await.unwrap();
        assert_eq!(body(&mut r).await.unwrap(), b"data: 1\n\ndata: 2\n\n");
        let req = String::from_utf8(s.requests.lock().unwrap()[0].clone()).unwrap();
        let authority = s.url.trim_start_matches("http://").trim_end_matches("/mcp");
        assert_eq!(
            req,
            format!("GET /mcp HTTP/1.1\r\nhost: {authority}\r\naccept: text/event-stream\r\n\r\n")
        );
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn equal_lengths_are_one_and_a_message_framed_both_ways_closes_its_connection() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|n, _| {
            answer(if n == 0 {
                "HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok"
            } else {
                "HTTP/1.1 200 OK\r\nContent-Length: 9\r\nTransfer-Encoding: chunked\r\n\r\n\
                 2\r\nok\r\n0\r\n\r\n"
            })
        })
        .await;
        let p = pool(&s.url);
        for _ in 0..3 {
            assert_eq!(post_text(&p, b"{}").await.unwrap().1, b"ok");
        }
        // The first kept its connection for the second; the second closed it.
        assert_eq!(s.connections.load(Ordering::SeqCst), 2);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn data_before_bad_framing_is_delivered_before_the_error() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|_, _| Answer {
            close: true,
            ..answer("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhelloXX")
        })
        .await;
        let p = pool(&s.url);
        let mut r = p.post(&json_headers(), b"{}").await.unwrap();
        assert_eq!(&r.chunk().await.unwrap().unwrap()[..], b"hello");
        assert_eq!(
            r.chunk().await.unwrap_err(),
            "error decoding response body: error reading a body from connection: Invalid chunk \
             body CR"
        );
    })
    .await
    .unwrap();
}

#[cfg(unix)] // socket2 reads the keepalive time and interval back on Unix only
#[tokio::test]
async fn connections_get_tcp_keepalive() {
    tokio::time::timeout(LIMIT, async {
        let s = serve(|_, _| answer("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n")).await;
        let p = pool(&s.url);
        post_text(&p, b"{}").await.unwrap();
        let (link, _) = p.idle.lock().unwrap().pop().unwrap();
        let conn = link.conn.into_parts().io.into_inner();
        let sock = socket2::SockRef::from(&conn);
        assert!(sock.keepalive().unwrap());
        assert_eq!(sock.tcp_keepalive_time().unwrap(), crate::net::KEEPALIVE);
        assert_eq!(
            sock.tcp_keepalive_interval().unwrap(),
            crate::net::KEEPALIVE
        );
        assert_eq!(sock.tcp_keepalive_retries().unwrap(), 3);
    })
    .await
    .unwrap();
}

#[tokio::test]
async fn the_reaper_closes_idle_connections_the_server_closed() {
    tokio::time::timeout(LIMIT, async {
        // The server closes each connection a while after its answer (its idle timeout), when
        // the connection already sits in the pool.
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut buf = Vec::new();
                    read_request(&mut conn, &mut buf).await.unwrap();
                    let ok = b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n";
                    conn.write_all(ok).await.unwrap();
                    tokio::time::sleep(Duration::from_millis(50)).await;
                });
            }
        });
        let p = Arc::new(Pool {
            target: Target::for_url(&url, |_| None).unwrap(),
            idle: Mutex::new(Vec::new()),
            idle_for: Duration::from_secs(90),
            reap_every: Duration::from_millis(100),
            reaping: std::sync::atomic::AtomicBool::new(false),
            last_path: Mutex::new(None),
        });
        let idle = |p: &Arc<Pool>| p.idle.lock().unwrap().len();
        for round in 0..2 {
            post_text(&p, b"{}").await.unwrap();
            assert_eq!(
                idle(&p),
                1,
                "kept: nothing said it would close (round {round})"
            );
            // Nobody uses the pool now: only the reaper can see the server's close.
            while idle(&p) == 1 {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            while p.reaping.load(Ordering::SeqCst) {
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
            // And the reaper ended: the next connection starts one again.
        }
    })
    .await
    .unwrap();
}
