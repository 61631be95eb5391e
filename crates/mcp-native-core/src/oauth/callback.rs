//! The loopback listener an authorization server redirects the browser to: a minimal HTTP/1.1
//! server on `127.0.0.1` (and `[::1]` on the same port when it can, since `localhost` may resolve
//! to either) that answers each request once and closes the connection.
//!
//! Requests to the callback path are judged by the flow's `judge` (which reads the query), and
//! answered with an HTML page: 200 when the judge accepts, 500 with the judge's message when it
//! refuses. The verdict of the **first** callback request is handed to the one waiter
//! ([`CallbackServer::next`]); later ones are answered but change nothing. Any other path gets
//! 404 `Not Found`. Nothing here logs, and no page repeats a code or the callback URL.
//!
//! Bounds: a request head is at most [`MAX_HEAD_BYTES`] and must arrive within [`READ_TIMEOUT`];
//! at most [`MAX_CONNECTIONS`] connections are served at once (more are closed unanswered).
//! [`CallbackServer::stop`] closes the listeners and every open connection and returns once the
//! port is released; dropping the server does the same without waiting.

use std::io;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use crate::sync::Locked;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::{JoinHandle, JoinSet};

/// Longest request head (request line and headers) read: 16 KiB. A longer one gets 431.
pub const MAX_HEAD_BYTES: usize = 16 * 1024;
/// How long a connection may take to send its request head (and to take the answer).
pub const READ_TIMEOUT: Duration = Duration::from_secs(10);
/// Connections served at once; a browser opens a handful, anything more is not a browser.
pub const MAX_CONNECTIONS: usize = 32;

/// Most header lines a request head may have (a browser sends about 20).
const MAX_HEADERS: usize = 64;
/// How long a connection is kept after its answer to drain what the client still sends.
const LINGER: Duration = Duration::from_secs(1);
/// Pause after a failed `accept` (for example, out of file descriptors) before trying again.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// One request to the callback path, as the judge sees it.
#[derive(Clone)]
pub struct CallbackRequest {
    /// The request URL, rebuilt as `http://localhost:<port><target>`.
    pub url: url::Url,
}

impl CallbackRequest {
    /// The first value of query parameter `name`, form-decoded (`URLSearchParams.get`).
    pub fn param(&self, name: &str) -> Option<String> {
        self.url
            .query_pairs()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.into_owned())
    }
}

/// `Debug` without the URL: it carries the authorization code.
impl std::fmt::Debug for CallbackRequest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CallbackRequest(<redacted>)")
    }
}

/// Decides what a callback request means: `Ok` (page 200) or `Err` (page 500 showing the
/// error's `Display`, which must hold nothing secret).
pub type Judge<T, E> = Box<dyn Fn(&CallbackRequest) -> Result<T, E> + Send + Sync>;

/// A running listener. See the module doc.
pub struct CallbackServer<T, E> {
    port: u16,
    verdicts: tokio::sync::Mutex<mpsc::Receiver<Result<T, E>>>,
    task: Mutex<Option<JoinHandle<()>>>,
}

impl<T: Send + 'static, E: std::fmt::Display + Send + 'static> CallbackServer<T, E> {
    /// Listens on `127.0.0.1:<port>` (0: a free port) and, best effort, `[::1]` on the same
    /// port; serves `path` with `judge`. Fails when the IPv4 address cannot be bound.
    pub async fn bind(port: u16, path: &str, judge: Judge<T, E>) -> io::Result<Self> {
        let v4 = TcpListener::bind(SocketAddr::from((Ipv4Addr::LOCALHOST, port))).await?;
        let port = v4.local_addr()?.port();
        let v6 = TcpListener::bind(SocketAddr::from((Ipv6Addr::LOCALHOST, port)))
            .await
            .ok();
        let (tx, rx) = mpsc::channel(1);
        let shared = Arc::new(Shared {
            port,
            path: path.to_string(),
            judge,
            first: Mutex::new(Some(tx)),
        });
        let task = tokio::spawn(accept_loop(v4, v6, shared));
        Ok(CallbackServer {
            port,
            verdicts: tokio::sync::Mutex::new(rx),
            task: Mutex::new(Some(task)),
        })
    }

    /// The port listened on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// The verdict of the first callback request; `None` once it was taken or the server
    /// stopped. Cancel-safe: a waiter dropped before the callback loses nothing.
    pub async fn next(&self) -> Option<Result<T, E>> {
        self.verdicts.lock().await.recv().await
    }

    /// Stops listening, closes every open connection, and returns once the port is free.
    pub async fn stop(&self) {
        let task = self.task.locked().take();
        if let Some(task) = task {
            task.abort();
            let _ = task.await;
        }
    }
}

impl<T, E> Drop for CallbackServer<T, E> {
    fn drop(&mut self) {
        if let Some(task) = self.task.locked_mut().take() {
            task.abort();
        }
    }
}

struct Shared<T, E> {
    port: u16,
    path: String,
    judge: Judge<T, E>,
    /// The waiter's sender until the first callback request takes it.
    first: Mutex<Option<mpsc::Sender<Result<T, E>>>>,
}

async fn accept_loop<T: Send + 'static, E: std::fmt::Display + Send + 'static>(
    v4: TcpListener,
    v6: Option<TcpListener>,
    shared: Arc<Shared<T, E>>,
) {
    // Dropped with this task (on stop): aborts every connection still being served.
    let mut connections = JoinSet::new();
    loop {
        while connections.try_join_next().is_some() {}
        let accepted = match &v6 {
            // Both branches: `TcpListener::accept` is cancel-safe (no connection is lost).
            Some(v6) => tokio::select! {
                r = v4.accept() => r,
                r = v6.accept() => r,
            },
            None => v4.accept().await,
        };
        match accepted {
            Ok((stream, _)) if connections.len() < MAX_CONNECTIONS => {
                connections.spawn(serve(stream, shared.clone()));
            }
            Ok(_) => {} // over the limit: closed unanswered
            Err(_) => tokio::time::sleep(ACCEPT_BACKOFF).await,
        }
    }
}

async fn serve<T: Send + 'static, E: std::fmt::Display + Send + 'static>(
    mut stream: TcpStream,
    shared: Arc<Shared<T, E>>,
) {
    let answer = match tokio::time::timeout(READ_TIMEOUT, read_head(&mut stream)).await {
        Ok(Ok(Some(head))) => respond(&head, &shared),
        Ok(Ok(None)) => plain(431, "Request Header Fields Too Large"),
        Ok(Err(_)) | Err(_) => return,
    };
    let _ = tokio::time::timeout(READ_TIMEOUT, async {
        stream.write_all(&answer).await?;
        stream.shutdown().await
    })
    .await;
    // Lingering close: take what the client still sends (bounded), so that closing with unread
    // bytes does not reset the connection before the client has read the answer.
    let _ = tokio::time::timeout(LINGER, async {
        let mut sink = [0u8; 2048];
        let mut left = MAX_HEAD_BYTES;
        while left > 0 {
            match stream.read(&mut sink).await {
                Ok(n) if n > 0 => left = left.saturating_sub(n),
                _ => break,
            }
        }
    })
    .await;
}

/// The request head up to its blank line (or as far as it is invalid, which `respond` answers
/// with 400); `None` when it exceeds [`MAX_HEAD_BYTES`].
async fn read_head(stream: &mut TcpStream) -> io::Result<Option<Vec<u8>>> {
    let mut head = Vec::with_capacity(1024);
    let mut buf = [0u8; 2048];
    loop {
        let n = stream.read(&mut buf).await?;
        if n == 0 {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        head.extend_from_slice(&buf[..n]);
        let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
        match httparse::Request::new(&mut headers).parse(&head) {
            Ok(httparse::Status::Complete(end)) => {
                head.truncate(end);
                return Ok(Some(head));
            }
            Err(_) => return Ok(Some(head)),
            Ok(httparse::Status::Partial) => {}
        }
        if head.len() > MAX_HEAD_BYTES {
            return Ok(None);
        }
    }
}

/// The whole answer to one request head.
fn respond<T, E: std::fmt::Display>(head: &[u8], shared: &Shared<T, E>) -> Vec<u8> {
    let Some(url) = request_url(head, shared.port) else {
        return plain(400, "Bad Request");
    };
    if url.path() != shared.path {
        return plain(404, "Not Found");
    }
    let request = CallbackRequest { url };
    let verdict = (shared.judge)(&request);
    let page = match &verdict {
        Ok(_) => html(200, "OK", &success_page()),
        Err(error) => html(
            500,
            "Internal Server Error",
            &failure_page(&error.to_string()),
        ),
    };
    let first = shared.first.locked().take();
    if let Some(tx) = first {
        let _ = tx.try_send(verdict);
    }
    page
}

/// The URL of a complete request head's target: origin-form (`/callback?…`) or absolute-form
/// (`http:` only); `None` for anything httparse does not read as an HTTP/1.x request.
fn request_url(head: &[u8], port: u16) -> Option<url::Url> {
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    if !matches!(request.parse(head), Ok(httparse::Status::Complete(_))) {
        return None;
    }
    let target = request.path?;
    if target.starts_with('/') {
        url::Url::parse(&format!("http://localhost:{port}{target}")).ok()
    } else {
        url::Url::parse(target)
            .ok()
            .filter(|u| u.scheme() == "http")
    }
}

fn plain(status: u16, reason: &str) -> Vec<u8> {
    answer(status, reason, "text/plain; charset=utf-8", reason)
}

fn html(status: u16, reason: &str, body: &str) -> Vec<u8> {
    answer(status, reason, "text/html; charset=utf-8", body)
}

fn answer(status: u16, reason: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} {reason}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// The page of an accepted callback.
pub fn success_page() -> String {
    page(
        "Authentication successful",
        "You can close this window and return to the terminal.",
    )
}

/// The page of a refused callback, showing `message` (HTML-escaped).
pub fn failure_page(message: &str) -> String {
    page("Authentication failed", message)
}

fn page(title: &str, text: &str) -> String {
    format!(
        "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>{title}</title></head>\
         <body style=\"font-family:sans-serif;margin:3em\"><h1>{title}</h1><p>{}</p></body></html>\n",
        escape_html(text)
    )
}

fn escape_html(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn judge() -> Judge<String, String> {
        Box::new(|req: &CallbackRequest| match req.param("code") {
            Some(code) if !code.is_empty() => Ok(code),
            _ => Err("Missing <code>".into()),
        })
    }

    async fn get(port: u16, target: &str) -> String {
        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(format!("GET {target} HTTP/1.1\r\nHost: localhost\r\n\r\n").as_bytes())
            .await
            .unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        out
    }

    #[tokio::test]
    async fn first_callback_wins_other_paths_404_and_stop_frees_the_port() {
        let server = CallbackServer::bind(0, "/callback", judge()).await.unwrap();
        let port = server.port();
        assert!(get(port, "/favicon.ico").await.starts_with("HTTP/1.1 404 "));
        let refused = get(port, "/callback?state=x").await;
        assert!(refused.starts_with("HTTP/1.1 500 "));
        assert!(refused.contains("Missing &lt;code&gt;"));
        let ok = get(port, "/callback?code=a+b%21").await;
        assert!(ok.starts_with("HTTP/1.1 200 "));
        assert!(!ok.contains("a b!"));
        assert_eq!(server.next().await, Some(Err("Missing <code>".into())));
        server.stop().await;
        // Refused once stopped. The tests of this binary run in parallel and bind port 0:
        // another test's listener can be given the freed port at once (seen once in `npm test`),
        // so a connection that succeeds is tried again for a while; a listener of ours that
        // stayed open would keep accepting and fail the test.
        let mut refused = false;
        for _ in 0..40 {
            if TcpStream::connect(("127.0.0.1", port)).await.is_err() {
                refused = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        assert!(refused, "port {port} still accepts after stop");
        assert_eq!(server.next().await, None);
    }

    #[tokio::test]
    async fn absolute_targets_bad_lines_and_oversized_heads() {
        let server = CallbackServer::bind(0, "/cb", judge()).await.unwrap();
        let port = server.port();
        let abs = get(port, &format!("http://localhost:{port}/cb?code=z")).await;
        assert!(abs.starts_with("HTTP/1.1 200 "));
        assert_eq!(server.next().await, Some(Ok("z".into())));

        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        s.write_all(b"nonsense\r\n\r\n").await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        assert!(out.starts_with("HTTP/1.1 400 "));

        let mut s = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
        let long = format!("GET /cb?{} HTTP/1.1\r\n", "a".repeat(MAX_HEAD_BYTES + 10));
        s.write_all(long.as_bytes()).await.unwrap();
        let mut out = String::new();
        s.read_to_string(&mut out).await.unwrap();
        assert!(out.starts_with("HTTP/1.1 431 "));
    }

    #[tokio::test]
    async fn a_busy_port_fails_to_bind() {
        let server = CallbackServer::bind(0, "/cb", judge()).await.unwrap();
        assert!(
            CallbackServer::bind(server.port(), "/cb", judge())
                .await
                .is_err()
        );
    }

    #[test]
    fn request_lines() {
        assert_eq!(
            request_url(b"GET /a?b=c HTTP/1.1\r\nHost: x\r\n\r\n", 7)
                .unwrap()
                .as_str(),
            "http://localhost:7/a?b=c"
        );
        assert_eq!(
            request_url(b"GET //evil/x HTTP/1.1\r\n\r\n", 7)
                .unwrap()
                .path(),
            "//evil/x"
        );
        // Incomplete, not HTTP/1.x, a space in the target, a bad header, another scheme.
        assert!(request_url(b"GET /a", 7).is_none());
        assert!(request_url(b"GET /a HTTP/2.0\r\n\r\n", 7).is_none());
        assert!(request_url(b"GET /a b HTTP/1.1\r\n\r\n", 7).is_none());
        assert!(request_url(b"GET /a HTTP/1.1\r\nno colon\r\n\r\n", 7).is_none());
        assert!(request_url(b"GET ftp://x/a HTTP/1.1\r\n\r\n", 7).is_none());
    }
}
