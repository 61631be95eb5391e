//! The bench's Streamable HTTP server (bench/worker.mjs, section `http`).
//!
//! The tests' fixture (`__test__/fixture/http-server.mjs`, on `node:http`) costs ~19 µs of CPU a
//! request at 32 in flight: about what the fastest client costs, so on this two-core machine the
//! HTTP rounds measured the server as much as the clients. This one does the few methods the
//! rounds use on one thread (tokio's current-thread runtime, `httparse`), answering every request
//! that arrived in one read with one write, and costs a few µs a request.
//!
//! Wire format as the fixture's: JSON answers with a `content-length`; SSE answers chunked, one
//! event and then the end. POST /mcp: `initialize` (a session id in `mcp-session-id`),
//! notifications and client answers (202), `echo` (result = params), `tools/list`, `tools/call`
//! of `echo` (JSON) and `echo-sse` (SSE); other methods get -32601. GET /mcp: 405. DELETE /mcp:
//! 200. Other paths: 404. Requests may be pipelined; bodies may be chunked. A malformed request
//! gets 400 and the connection is closed.
//!
//! Listens on 127.0.0.1 (port 0), prints `{"port":N}` and exits when its stdin ends.

use std::borrow::Cow;
use std::io::{Read, Write};
use std::sync::atomic::{AtomicU64, Ordering};

use serde::Deserialize;
use serde_json::value::RawValue;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const MAX_HEAD: usize = 64 * 1024;
const MAX_BODY: usize = 64 * 1024 * 1024;
const TOOLS: &str = r#"{"tools":[{"name":"echo","inputSchema":{"type":"object","properties":{"message":{"type":"string"}}}},{"name":"echo-sse","inputSchema":{"type":"object"}}]}"#;

static SESSIONS: AtomicU64 = AtomicU64::new(0);

#[derive(Deserialize)]
struct Message<'a> {
    #[serde(borrow)]
    id: Option<&'a RawValue>,
    #[serde(borrow)]
    method: Option<Cow<'a, str>>,
    #[serde(borrow)]
    params: Option<&'a RawValue>,
}

#[derive(Deserialize, Default)]
struct InitParams {
    #[serde(rename = "protocolVersion")]
    protocol_version: Option<String>,
}

#[derive(Deserialize, Default)]
struct CallParams {
    #[serde(default)]
    name: String,
    arguments: Option<CallArgs>,
}

#[derive(Deserialize)]
struct CallArgs {
    message: Option<serde_json::Value>,
}

fn json_answer(out: &mut Vec<u8>, status: &str, extra: &str, body: &[u8]) {
    let _ = write!(
        out,
        "HTTP/1.1 {status}\r\ncontent-type: application/json\r\n{extra}content-length: {}\r\n\r\n",
        body.len()
    );
    out.extend_from_slice(body);
}

/// `{"jsonrpc":"2.0","id":ID,"result":RESULT}`
fn result_message(id: &RawValue, result: &str) -> Vec<u8> {
    let mut m = Vec::with_capacity(40 + id.get().len() + result.len());
    m.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    m.extend_from_slice(id.get().as_bytes());
    m.extend_from_slice(b",\"result\":");
    m.extend_from_slice(result.as_bytes());
    m.push(b'}');
    m
}

fn sse_answer(out: &mut Vec<u8>, message: &[u8]) {
    out.extend_from_slice(
        b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\n\r\n",
    );
    let _ = write!(out, "{:x}\r\ndata: ", message.len() + 8);
    out.extend_from_slice(message);
    out.extend_from_slice(b"\n\n\r\n0\r\n\r\n");
}

/// Writes the answer to one request.
fn answer(out: &mut Vec<u8>, method: &str, path: &str, body: &[u8]) {
    if path != "/mcp" {
        return json_answer(out, "404 Not Found", "", br#"{"error":"not found"}"#);
    }
    match method {
        "POST" => {}
        "DELETE" => return json_answer(out, "200 OK", "", b"{}"),
        _ => {
            return json_answer(
                out,
                "405 Method Not Allowed",
                "",
                br#"{"error":"Method Not Allowed"}"#,
            );
        }
    }
    let Ok(msg) = serde_json::from_slice::<Message>(body) else {
        return json_answer(out, "400 Bad Request", "", br#"{"error":"bad json"}"#);
    };
    let (Some(id), Some(method)) = (msg.id, msg.method) else {
        // a notification, or a client's answer to a server request
        return out.extend_from_slice(b"HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\n\r\n");
    };
    let params = msg.params.map_or("{}", RawValue::get);
    match &*method {
        "initialize" => {
            let p: InitParams = serde_json::from_str(params).unwrap_or_default();
            // members in the fixture's order (`json!` would sort them without `preserve_order`)
            let version = p.protocol_version.as_deref().unwrap_or("2025-03-26");
            let result = format!(
                r#"{{"protocolVersion":{},"capabilities":{{"tools":{{}}}},"serverInfo":{{"name":"mcp-native-bench-http","version":"1.0.0"}}}}"#,
                serde_json::Value::from(version)
            );
            let session = SESSIONS.fetch_add(1, Ordering::Relaxed) + 1;
            let extra = format!("mcp-session-id: sess-{session}\r\n");
            json_answer(
                out,
                "200 OK",
                &extra,
                &result_message(id, &result.to_string()),
            );
        }
        "echo" => json_answer(out, "200 OK", "", &result_message(id, params)),
        "tools/list" => json_answer(out, "200 OK", "", &result_message(id, TOOLS)),
        "tools/call" => {
            let p: CallParams = serde_json::from_str(params).unwrap_or_default();
            // as the fixture's String(message ?? ''): a string as it is, other JSON as its text
            let text = match p.arguments.and_then(|a| a.message) {
                None | Some(serde_json::Value::Null) => String::new(),
                Some(serde_json::Value::String(s)) => s,
                Some(other) => other.to_string(),
            };
            let result = format!(
                r#"{{"content":[{{"type":"text","text":{}}}]}}"#,
                serde_json::Value::from(text)
            );
            let message = result_message(id, &result);
            if p.name == "echo-sse" {
                sse_answer(out, &message);
            } else {
                json_answer(out, "200 OK", "", &message);
            }
        }
        other => {
            let error = serde_json::json!({ "code": -32601, "message": format!("Method not found: {other}") });
            let mut m = Vec::new();
            let _ = write!(
                m,
                r#"{{"jsonrpc":"2.0","id":{},"error":{error}}}"#,
                id.get()
            );
            json_answer(out, "200 OK", "", &m);
        }
    }
}

enum Parsed<'a> {
    /// More bytes are needed.
    Incomplete,
    Bad,
    Request {
        method: &'a str,
        path: &'a str,
        body: Cow<'a, [u8]>,
        len: usize,
        close: bool,
    },
}

/// A chunked body starting at `buf[0]`: Ok(Some((body, length taken))) when complete.
#[allow(clippy::type_complexity)]
fn chunked(buf: &[u8]) -> Result<Option<(Vec<u8>, usize)>, ()> {
    let mut body = Vec::new();
    let mut at = 0;
    loop {
        let Some(eol) = memchr::memmem::find(&buf[at..], b"\r\n").map(|i| at + i) else {
            return if buf.len() - at > 1024 {
                Err(())
            } else {
                Ok(None)
            };
        };
        let line = std::str::from_utf8(&buf[at..eol]).map_err(|_| ())?;
        let size = usize::from_str_radix(line.split(';').next().unwrap_or("").trim(), 16)
            .map_err(|_| ())?;
        if size == 0 {
            // the last chunk, then trailer lines (if any) and an empty line
            return Ok(memchr::memmem::find(&buf[eol..], b"\r\n\r\n").map(|i| (body, eol + i + 4)));
        }
        if size > MAX_BODY || body.len() + size > MAX_BODY {
            return Err(());
        }
        let data = eol + 2;
        if buf.len() < data + size + 2 {
            return Ok(None);
        }
        if &buf[data + size..data + size + 2] != b"\r\n" {
            return Err(());
        }
        body.extend_from_slice(&buf[data..data + size]);
        at = data + size + 2;
    }
}

fn parse(buf: &[u8]) -> Parsed<'_> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut req = httparse::Request::new(&mut headers);
    let head = match req.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) if buf.len() <= MAX_HEAD => return Parsed::Incomplete,
        _ => return Parsed::Bad,
    };
    let (mut length, mut is_chunked, mut close) = (0usize, false, req.version == Some(0));
    for h in req.headers.iter() {
        let value = std::str::from_utf8(h.value).unwrap_or("");
        if h.name.eq_ignore_ascii_case("content-length") {
            match value.trim().parse() {
                Ok(n) if n <= MAX_BODY => length = n,
                _ => return Parsed::Bad,
            }
        } else if h.name.eq_ignore_ascii_case("transfer-encoding") {
            is_chunked = value.to_ascii_lowercase().contains("chunked");
        } else if h.name.eq_ignore_ascii_case("connection") {
            let v = value.to_ascii_lowercase();
            close = v.contains("close") || (close && !v.contains("keep-alive"));
        }
    }
    let (Some(method), Some(path)) = (req.method, req.path) else {
        return Parsed::Bad;
    };
    let (body, len) = if is_chunked {
        match chunked(&buf[head..]) {
            Ok(Some((body, taken))) => (Cow::Owned(body), head + taken),
            Ok(None) => return Parsed::Incomplete,
            Err(()) => return Parsed::Bad,
        }
    } else {
        if buf.len() < head + length {
            return Parsed::Incomplete;
        }
        (Cow::Borrowed(&buf[head..head + length]), head + length)
    };
    Parsed::Request {
        method,
        path,
        body,
        len,
        close,
    }
}

async fn serve(mut sock: TcpStream) -> std::io::Result<()> {
    sock.set_nodelay(true)?;
    let mut buf: Vec<u8> = Vec::with_capacity(16 * 1024);
    let mut out: Vec<u8> = Vec::with_capacity(16 * 1024);
    loop {
        buf.reserve(16 * 1024);
        if sock.read_buf(&mut buf).await? == 0 {
            return Ok(());
        }
        let mut taken = 0;
        let mut close = false;
        loop {
            match parse(&buf[taken..]) {
                Parsed::Incomplete => break,
                Parsed::Bad => {
                    json_answer(
                        &mut out,
                        "400 Bad Request",
                        "connection: close\r\n",
                        br#"{"error":"bad request"}"#,
                    );
                    close = true;
                    break;
                }
                Parsed::Request {
                    method,
                    path,
                    body,
                    len,
                    close: last,
                } => {
                    let start = out.len();
                    answer(&mut out, method, path, &body);
                    taken += len;
                    if last {
                        // say so, after the status line
                        if let Some(i) = memchr::memmem::find(&out[start..], b"\r\n") {
                            let at = start + i + 2;
                            out.splice(at..at, b"connection: close\r\n".iter().copied());
                        }
                        close = true;
                        break;
                    }
                }
            }
        }
        buf.drain(..taken);
        if !out.is_empty() {
            sock.write_all(&out).await?;
            out.clear();
        }
        if close {
            return sock.shutdown().await;
        }
    }
}

fn main() -> std::io::Result<()> {
    // exit when the bench closes our stdin (it also kills us if that does not do it)
    std::thread::spawn(|| {
        let mut scratch = [0u8; 256];
        while let Ok(n) = std::io::stdin().read(&mut scratch) {
            if n == 0 {
                break;
            }
        }
        std::process::exit(0);
    });
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .enable_time()
        .build()?;
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let port = listener.local_addr()?.port();
        let mut stdout = std::io::stdout();
        writeln!(stdout, "{{\"port\":{port}}}")?;
        stdout.flush()?;
        loop {
            // An accept error (out of descriptors, a connection reset before it was taken)
            // ends only that accept.
            let sock = match listener.accept().await {
                Ok((sock, _)) => sock,
                Err(e) => {
                    eprintln!("bench-http-server: accept failed: {e}");
                    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
                    continue;
                }
            };
            tokio::spawn(async move {
                let _ = serve(sock).await;
            });
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn request(text: &str) -> (String, String, Vec<u8>, usize, bool) {
        match parse(text.as_bytes()) {
            Parsed::Request {
                method,
                path,
                body,
                len,
                close,
            } => (method.into(), path.into(), body.into_owned(), len, close),
            Parsed::Incomplete => panic!("incomplete: {text:?}"),
            Parsed::Bad => panic!("bad: {text:?}"),
        }
    }

    #[test]
    fn requests_with_a_length_or_chunked_and_pipelined() {
        let one = "POST /mcp HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}";
        let two = format!("{one}GET /mcp HTTP/1.1\r\n\r\n");
        assert_eq!(
            request(&two),
            (
                "POST".into(),
                "/mcp".into(),
                b"{}".to_vec(),
                one.len(),
                false
            )
        );
        assert_eq!(request(&two[one.len()..]).0, "GET");
        let chunked = "POST /mcp HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n3;x=y\r\n{\"a\r\n4\r\n\":1}\r\n0\r\nT: 1\r\n\r\nrest";
        let (_, _, body, len, _) = request(chunked);
        assert_eq!(body, b"{\"a\":1}");
        assert_eq!(&chunked[len..], "rest");
        assert!(request("POST /mcp HTTP/1.1\r\nconnection: close\r\ncontent-length: 0\r\n\r\n").4);
        assert!(request("GET /mcp HTTP/1.0\r\n\r\n").4);
        assert!(!request("GET /mcp HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").4);
    }

    #[test]
    fn partial_and_malformed_requests() {
        for partial in [
            "POST /mcp HTTP/1.1\r\nContent-Le",
            "POST /mcp HTTP/1.1\r\nContent-Length: 5\r\n\r\n{}",
            "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n5\r\n{}",
        ] {
            assert!(
                matches!(parse(partial.as_bytes()), Parsed::Incomplete),
                "{partial:?}"
            );
        }
        for bad in [
            "NOT HTTP\r\n\r\n",
            "POST / HTTP/1.1\r\ncontent-length: x\r\n\r\n",
            "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n",
        ] {
            assert!(matches!(parse(bad.as_bytes()), Parsed::Bad), "{bad:?}");
        }
    }

    #[test]
    fn malformed_chunks_are_refused_without_a_panic() {
        let head = "POST / HTTP/1.1\r\ntransfer-encoding: chunked\r\n\r\n";
        for body in [
            "2\r\n{}XX0\r\n\r\n",
            "2\r\n{}\r\nffffffffffffffff\r\n",
            "ffffffffffffffff\r\n",
        ] {
            assert!(
                matches!(parse(format!("{head}{body}").as_bytes()), Parsed::Bad),
                "{body:?}"
            );
        }
    }

    #[test]
    fn pipelined_requests_are_answered_in_order_and_a_closing_one_ends_the_connection() {
        use std::io::{Read, Write};
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let listener = rt.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
        let addr = listener.local_addr().unwrap();
        let server = std::thread::spawn(move || {
            rt.block_on(async {
                let (sock, _) = listener.accept().await.unwrap();
                serve(sock).await
            })
        });
        let mut c = std::net::TcpStream::connect(addr).unwrap();
        c.set_read_timeout(Some(std::time::Duration::from_secs(10)))
            .unwrap();
        let echo = |id: u32| {
            let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"echo","params":{{}}}}"#);
            format!(
                "POST /mcp HTTP/1.1\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        let last = "DELETE /mcp HTTP/1.1\r\nconnection: close\r\n\r\n";
        c.write_all(format!("{}{}{last}", echo(1), echo(2)).as_bytes())
            .unwrap();
        let mut got = String::new();
        c.read_to_string(&mut got).unwrap(); // ends: the server closed
        let one = got.find(r#""id":1"#).unwrap();
        let two = got.find(r#""id":2"#).unwrap();
        assert!(one < two);
        assert!(got.ends_with("HTTP/1.1 200 OK\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"), "{got}");
        server.join().unwrap().unwrap();
    }

    fn answer_to(method: &str, body: &str) -> String {
        let mut out = Vec::new();
        answer(&mut out, method, "/mcp", body.as_bytes());
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn answers_as_the_fixture_does() {
        let init = answer_to(
            "POST",
            r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18"}}"#,
        );
        assert!(init.starts_with(
            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: sess-"
        ));
        assert!(init.contains(r#""id":1,"result":{"protocolVersion":"2025-06-18""#));
        let echo = answer_to(
            "POST",
            r#"{"jsonrpc":"2.0","id":"a","method":"echo","params":{"x":[1,"\u00e9"]}}"#,
        );
        let body = r#"{"jsonrpc":"2.0","id":"a","result":{"x":[1,"\u00e9"]}}"#;
        assert_eq!(
            echo,
            format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
                body.len()
            )
        );
        let call = r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo-sse","arguments":{"message":"hé"}}}"#;
        let sse = answer_to("POST", call);
        let message =
            r#"{"jsonrpc":"2.0","id":7,"result":{"content":[{"type":"text","text":"hé"}]}}"#;
        let event = format!("data: {message}\n\n");
        assert!(
            sse.ends_with(&format!(
                "\r\n\r\n{:x}\r\n{event}\r\n0\r\n\r\n",
                event.len()
            )),
            "{sse}"
        );
        assert!(sse.contains("content-type: text/event-stream\r\n"));
        assert!(
            answer_to(
                "POST",
                r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
            )
            .starts_with("HTTP/1.1 202 ")
        );
        assert!(
            answer_to("POST", r#"{"jsonrpc":"2.0","id":2,"method":"nope"}"#)
                .contains(r#""error":{"code":-32601"#)
        );
        assert!(answer_to("POST", "{").starts_with("HTTP/1.1 400 "));
        assert!(answer_to("GET", "").starts_with("HTTP/1.1 405 "));
        assert!(answer_to("DELETE", "").starts_with("HTTP/1.1 200 "));
    }
}
