//! A lean HTTP/1.1 client for the POSTs (and the GET stream) of a plain `http://` server: one
//! `write` per request,
//! the response head parsed with `httparse`, the body handed on as it arrives (length, chunked
//! or until close), and keep-alive connections pooled per transport.
//!
//! Why: measured on this project's bench (Bun, sequential JSON calls to a loopback server), the
//! general client (reqwest over hyper-util's pool) spent about 60 µs of CPU per POST on the I/O
//! thread in user space — URL re-parsing and formatting, header-map clones, the pool's checkout,
//! the connection task and its channels — where Bun's own `fetch` spends about 15 µs. On two
//! cores that CPU comes out of the server's share and the call rate.
//!
//! It is used only where it cannot change what is sent or how the server is reached: an `http:`
//! URL to an IP address or `localhost`, without credentials, no proxy variable in the
//! environment, a body of at most [`LEAN_MAX_BODY`], and the transport's own URL (not a legacy
//! endpoint). Anything else — `https:`, other host names, proxies, large bodies — goes through
//! reqwest as before; so does a redirect the lean client receives (the request is sent again
//! through reqwest, whose policy follows it within the origin, and the transport stays on
//! reqwest until it closes). Its sockets get TCP keepalive as reqwest's do.
//!
//! Connection reuse: an idle connection is checked before use (a peek: the server's FIN or
//! unexpected bytes retire it). A request whose write fails on a reused connection (the server
//! closed it at that moment) is sent once more on a fresh connection; once written, a request is
//! never sent again (the server may have acted on it), as in hyper. A response read
//! to its end, on HTTP/1.1 without `Connection: close`, with no bytes after it, gives its
//! connection back; one dropped before its end closes it. Idle connections live at most
//! [`POOL_IDLE`](super::POOL_IDLE) and close with the transport.

use std::net::SocketAddr;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::runtime;
use crate::sync::Locked;

/// Bodies up to this size go through the lean client (larger ones ask for `Connection: close`
/// and go through reqwest, see `post::CLOSE_AFTER_BODY_BYTES`).
pub(super) const LEAN_MAX_BODY: usize = 64 * 1024;
/// Largest response head (status line and headers) accepted.
pub(super) const MAX_HEAD_BYTES: usize = 256 * 1024;
/// Most response headers accepted.
const MAX_HEADERS: usize = 128;
/// Most idle connections kept.
const MAX_IDLE: usize = 64;
/// How much is read at a time.
const READ_AT_LEAST: usize = 16 * 1024;
/// An idle connection keeps its read buffer (for the next exchange: one allocation less a
/// request) unless the buffer ever grew larger than this (a large response head).
const KEEP_BUFFER_UP_TO: usize = 64 * 1024;
/// TCP keepalive: first probe after this much idle time, then one every this often.
pub(super) const KEEPALIVE: Duration = Duration::from_secs(15);
/// TCP keepalive: unanswered probes before the connection is dropped.
const KEEPALIVE_RETRIES: u32 = 3;
/// How often idle connections are checked (the server may have closed them).
const REAP_EVERY: Duration = Duration::from_secs(5);
/// Longest chunk-size line (with extensions) accepted.
const MAX_CHUNK_LINE: usize = 4096;

/// Where requests go: resolved from the URL once.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Target {
    /// A literal address, or a host name to resolve at connect time.
    connect: Connect,
    /// The `Host` header: host and, when the URL names a port, the port.
    authority: String,
    /// Path and query.
    path: String,
}

#[derive(Debug, Clone, PartialEq)]
enum Connect {
    Addr(SocketAddr),
    Name(String, u16),
}

/// The environment variables that send `http:` requests through a proxy (reqwest's reading of
/// them); when any is set, the lean client is not used.
const PROXY_VARS: [&str; 4] = ["HTTP_PROXY", "http_proxy", "ALL_PROXY", "all_proxy"];

impl Target {
    /// The target of `url` when the lean client may serve it (see the module doc); `env` reads
    /// an environment variable.
    pub(super) fn for_url(url: &str, env: impl Fn(&str) -> Option<String>) -> Option<Target> {
        if PROXY_VARS
            .iter()
            .any(|v| env(v).is_some_and(|s| !s.trim().is_empty()))
        {
            return None;
        }
        let url = url::Url::parse(url).ok()?;
        if url.scheme() != "http" || !url.username().is_empty() || url.password().is_some() {
            return None;
        }
        let port = url.port_or_known_default()?;
        let connect = match url.host()? {
            // Only `localhost` by name: for other names reqwest races the addresses of both
            // families (a host whose IPv6 route is black-holed answers on IPv4 after 300 ms),
            // which tries them one after another.
            url::Host::Domain(d) if d == "localhost" => Connect::Name(d.to_string(), port),
            url::Host::Domain(_) => return None,
            url::Host::Ipv4(a) => Connect::Addr(SocketAddr::new(a.into(), port)),
            url::Host::Ipv6(a) => Connect::Addr(SocketAddr::new(a.into(), port)),
        };
        let host = url.host_str()?;
        let authority = match url.port() {
            Some(p) => format!("{host}:{p}"),
            None => host.to_string(),
        };
        let mut path = url.path().to_string();
        if let Some(q) = url.query() {
            path.push('?');
            path.push_str(q);
        }
        Some(Target {
            connect,
            authority,
            path,
        })
    }

    /// The target of `url` in this process's environment.
    pub(super) fn from_env(url: &str) -> Option<Target> {
        Target::for_url(url, |v| std::env::var(v).ok())
    }
}

/// One transport's connections to its target.
pub(super) struct Pool {
    target: Target,
    /// Idle connections, each with its read buffer (empty; see [`KEEP_BUFFER_UP_TO`]) and
    /// since when it is idle.
    idle: Mutex<Vec<Idle>>,
    /// How long a connection may stay idle.
    idle_for: Duration,
    /// How often the reaper looks at the idle connections.
    reap_every: Duration,
    /// A reaper task is running (at most one).
    reaping: std::sync::atomic::AtomicBool,
}

struct Idle {
    conn: TcpStream,
    buf: BytesMut,
    since: Instant,
}

/// A response: its status and headers; the body is read with [`Response::chunk`].
pub(super) struct Response {
    pub(super) status: u16,
    pub(super) headers: HeaderMap,
    body: Body,
}

struct Body {
    conn: Option<TcpStream>,
    buf: BytesMut,
    framing: Framing,
    /// The connection may serve another request once this body is read to its end.
    reusable: bool,
    /// `buf` never grew past [`KEEP_BUFFER_UP_TO`]: the idle connection may keep it. (Its
    /// `capacity()` later shows only the room past what was split off, not its allocation.)
    small_buf: bool,
    pool: Weak<Pool>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Framing {
    /// This many bytes remain.
    Length(u64),
    /// Chunked: in the state given.
    Chunked(Chunk),
    /// Until the server closes the connection.
    Eof,
    /// Read to its end.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Chunk {
    /// Expecting a chunk-size line.
    Size,
    /// This many bytes of chunk data remain.
    Data(u64),
    /// Expecting the CRLF after a chunk's data.
    DataEnd,
    /// After the last chunk: trailer lines until an empty one.
    Trailers,
}

/// Why a request failed, and whether it may be sent again on a fresh connection (its write
/// failed, so the server did not get it).
struct Failure {
    message: String,
    retry: bool,
}

impl Pool {
    pub(super) fn new(target: Target, idle_for: Duration) -> Arc<Pool> {
        Arc::new(Pool {
            target,
            idle: Mutex::new(Vec::new()),
            idle_for,
            reap_every: idle_for.min(REAP_EVERY),
            reaping: std::sync::atomic::AtomicBool::new(false),
        })
    }

    /// POSTs `body` with `headers` (the transport's, in order); the error text says why it
    /// failed (`error sending request: …`, `error reading response: …`).
    pub(super) async fn post(
        self: &Arc<Self>,
        headers: &HeaderMap,
        body: &[u8],
    ) -> Result<Response, String> {
        self.send(self.encode("POST", headers, Some(body)), headers)
            .await
    }

    /// A GET with `headers` (the event stream), as [`Pool::post`].
    pub(super) async fn get(self: &Arc<Self>, headers: &HeaderMap) -> Result<Response, String> {
        self.send(self.encode("GET", headers, None), headers).await
    }

    async fn send(
        self: &Arc<Self>,
        request: Vec<u8>,
        headers: &HeaderMap,
    ) -> Result<Response, String> {
        let close = headers
            .get("connection")
            .is_some_and(|v| has_token(v.as_bytes(), b"close"));
        if let Some((conn, buf)) = self.checkout() {
            match self.exchange(conn, buf, &request, close).await {
                Ok(r) => return Ok(r),
                Err(f) if f.retry => {}
                Err(f) => return Err(f.message),
            }
        }
        let conn = self.connect().await?;
        self.exchange(conn, BytesMut::new(), &request, close)
            .await
            .map_err(|f| f.message)
    }

    /// The request's bytes: request line, `Host`, the headers, `Content-Length` and the body
    /// (when there is one).
    fn encode(&self, method: &str, headers: &HeaderMap, body: Option<&[u8]>) -> Vec<u8> {
        let mut out = Vec::with_capacity(256 + body.map_or(0, <[u8]>::len));
        out.extend_from_slice(method.as_bytes());
        out.push(b' ');
        out.extend_from_slice(self.target.path.as_bytes());
        out.extend_from_slice(b" HTTP/1.1\r\n");
        if !headers.contains_key("host") {
            out.extend_from_slice(b"host: ");
            out.extend_from_slice(self.target.authority.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        for (name, value) in headers {
            if name == "content-length" || name == "transfer-encoding" {
                continue;
            }
            out.extend_from_slice(name.as_str().as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
        if let Some(body) = body {
            out.extend_from_slice(b"content-length: ");
            out.extend_from_slice(body.len().to_string().as_bytes());
            out.extend_from_slice(b"\r\n\r\n");
            out.extend_from_slice(body);
        } else {
            out.extend_from_slice(b"\r\n");
        }
        out
    }

    /// An idle connection that still looks usable, if any, with its read buffer.
    fn checkout(&self) -> Option<(TcpStream, BytesMut)> {
        let mut idle = self.idle.locked();
        while let Some(Idle { conn, buf, since }) = idle.pop() {
            if since.elapsed() < self.idle_for && still_open(&conn) {
                return Some((conn, buf));
            }
        }
        None
    }

    async fn connect(&self) -> Result<TcpStream, String> {
        let conn = match &self.target.connect {
            Connect::Addr(addr) => TcpStream::connect(addr).await,
            Connect::Name(host, port) => TcpStream::connect((host.as_str(), *port)).await,
        }
        .map_err(|e| format!("error sending request: tcp connect error: {}", e))?;
        let _ = conn.set_nodelay(true);
        // As reqwest does: a dead peer or a dropped NAT entry ends an idle connection (and the
        // GET stream, which has no deadline) instead of leaving it waiting forever.
        let keepalive = socket2::TcpKeepalive::new()
            .with_time(KEEPALIVE)
            .with_interval(KEEPALIVE)
            .with_retries(KEEPALIVE_RETRIES);
        let _ = socket2::SockRef::from(&conn).set_tcp_keepalive(&keepalive);
        Ok(conn)
    }

    /// Sends the request on `conn` and reads the response head.
    async fn exchange(
        self: &Arc<Self>,
        mut conn: TcpStream,
        mut buf: BytesMut,
        request: &[u8],
        close: bool,
    ) -> Result<Response, Failure> {
        if let Err(e) = conn.write_all(request).await {
            return Err(Failure {
                message: format!("error sending request: {}", e),
                retry: true,
            });
        }
        // `buf` is empty: new, or kept by the idle connection (room again once the last
        // answer's bytes read from it were dropped)
        let mut small_buf = make_room(&mut buf);
        let fail = |message: String| Failure {
            message,
            retry: false,
        };
        loop {
            match parse_head(&buf) {
                Ok(Some((head, used))) => {
                    if (100..200).contains(&head.status) && head.status != 101 {
                        buf.advance(used); // an interim response (100 Continue): skip it
                        continue;
                    }
                    buf.advance(used);
                    return self
                        .response(head, conn, buf, close, small_buf)
                        .map_err(fail);
                }
                Ok(None) if buf.len() > MAX_HEAD_BYTES => {
                    return Err(fail(
                        "error reading response: response head too large".into(),
                    ));
                }
                Ok(None) => {}
                Err(message) => return Err(fail(message)),
            }
            small_buf &= make_room(&mut buf);
            match conn.read_buf(&mut buf).await {
                Ok(0) => {
                    return Err(fail(
                        "error reading response: connection closed before message completed".into(),
                    ));
                }
                Ok(_) => {}
                Err(e) => {
                    return Err(fail(format!("error reading response: {}", e)));
                }
            }
        }
    }

    fn response(
        self: &Arc<Self>,
        head: Head,
        conn: TcpStream,
        buf: BytesMut,
        close: bool,
        small_buf: bool,
    ) -> Result<Response, String> {
        if head.status == 101 {
            return Err("error reading response: unexpected protocol switch".into());
        }
        let mut reusable = head.http11 && !close;
        let mut framing = Framing::Eof;
        let mut length: Option<u64> = None;
        let mut chunked = false;
        let mut te = false;
        for (name, value) in &head.headers {
            if name == "connection" {
                if has_token(value.as_bytes(), b"close") {
                    reusable = false;
                }
            } else if name == "transfer-encoding" {
                te = true;
                // Only a final `chunked` frames the body; anything else reads until close.
                chunked = value
                    .to_str()
                    .ok()
                    .and_then(|v| v.rsplit(',').next())
                    .is_some_and(|last| last.trim().eq_ignore_ascii_case("chunked"));
            } else if name == "content-length" {
                // Digits only; a list of equal values is one value (RFC 9110 8.6).
                for part in value.as_bytes().split(|&b| b == b',') {
                    let n = parse_digits(part.trim_ascii(), 10)
                        .ok_or("error reading response: invalid content-length")?;
                    if length.is_some_and(|l| l != n) {
                        return Err("error reading response: conflicting content-length".into());
                    }
                    length = Some(n);
                }
            }
        }
        if te && length.is_some() {
            reusable = false; // RFC 9112 6.1: close after a message framed both ways
        }
        if head.status == 204 || head.status == 304 {
            framing = Framing::Length(0);
        } else if te {
            framing = if chunked {
                Framing::Chunked(Chunk::Size)
            } else {
                Framing::Eof
            };
        } else if let Some(n) = length {
            framing = Framing::Length(n);
        }
        if framing == Framing::Eof {
            reusable = false;
        }
        let mut headers = HeaderMap::with_capacity(head.headers.len());
        for (name, value) in head.headers {
            headers.append(name, value);
        }
        let mut body = Body {
            conn: Some(conn),
            buf,
            framing,
            reusable,
            small_buf,
            pool: Arc::downgrade(self),
        };
        body.settle();
        Ok(Response {
            status: head.status,
            headers,
            body,
        })
    }

    /// Takes back a connection whose response was read to its end.
    fn check_in(self: &Arc<Self>, conn: TcpStream, buf: BytesMut) {
        let mut idle = self.idle.locked();
        if idle.len() >= MAX_IDLE {
            return;
        }
        idle.push(Idle {
            conn,
            buf,
            since: Instant::now(),
        });
        drop(idle);
        if !self.reaping.swap(true, std::sync::atomic::Ordering::AcqRel) {
            let pool = Arc::downgrade(self);
            runtime::handle().spawn(reap(pool, self.reap_every));
        }
    }
}

/// Closes connections idle for longer than the pool allows or that the server closed; ends
/// when the pool is gone or has no idle connection left.
async fn reap(pool: Weak<Pool>, every: Duration) {
    /// Clears the pool's `reaping` flag if the task ends early (its runtime shut down).
    struct Reaping(Weak<Pool>);
    impl Drop for Reaping {
        fn drop(&mut self) {
            if let Some(pool) = self.0.upgrade() {
                pool.reaping
                    .store(false, std::sync::atomic::Ordering::Release);
            }
        }
    }
    let mut reaping = Reaping(pool.clone());
    loop {
        tokio::time::sleep(every).await;
        let Some(pool) = pool.upgrade() else { return };
        let mut idle = pool.idle.locked();
        idle.retain(|i| i.since.elapsed() < pool.idle_for && still_open(&i.conn));
        if idle.is_empty() {
            // Under the lock: a connection checked in after this starts a new reaper.
            pool.reaping
                .store(false, std::sync::atomic::Ordering::Release);
            reaping.0 = Weak::new(); // done: nothing left for the guard to clear
            return;
        }
    }
}

/// Whether an idle connection is still open with nothing unread (the server's FIN, a reset or
/// unexpected bytes retire it).
fn still_open(conn: &TcpStream) -> bool {
    use std::os::fd::AsRawFd;
    let mut byte = 0u8;
    // SAFETY: a one-byte peek into a local buffer on a descriptor `conn` owns.
    let n = unsafe {
        libc::recv(
            conn.as_raw_fd(),
            (&raw mut byte).cast(),
            1,
            libc::MSG_PEEK | libc::MSG_DONTWAIT,
        )
    };
    n < 0 && {
        let e = std::io::Error::last_os_error().raw_os_error();
        e == Some(libc::EAGAIN) || e == Some(libc::EWOULDBLOCK)
    }
}

/// Makes room in `buf` for the next read; whether it is still small enough for an idle
/// connection to keep (see [`KEEP_BUFFER_UP_TO`]: read right after it grows, `capacity()` is its
/// allocation).
fn make_room(buf: &mut BytesMut) -> bool {
    buf.reserve(READ_AT_LEAST);
    buf.capacity() <= KEEP_BUFFER_UP_TO
}

/// A number written only with the digits of `radix` (no sign, no space), if it fits.
fn parse_digits(text: &[u8], radix: u32) -> Option<u64> {
    if text.is_empty() || !text.iter().all(|&b| char::from(b).is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(std::str::from_utf8(text).ok()?, radix).ok()
}

/// Whether a comma-separated header value holds `token` (any case).
fn has_token(value: &[u8], token: &[u8]) -> bool {
    value
        .split(|&b| b == b',')
        .any(|t| t.trim_ascii().eq_ignore_ascii_case(token))
}

struct Head {
    status: u16,
    http11: bool,
    headers: Vec<(HeaderName, HeaderValue)>,
}

/// The response head at the start of `buf` and its length, `None` when incomplete.
fn parse_head(buf: &[u8]) -> Result<Option<(Head, usize)>, String> {
    let mut slots = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut resp = httparse::Response::new(&mut slots);
    let used = match resp.parse(buf) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => {
            return Err(format!(
                "error reading response: invalid HTTP response: {e}"
            ));
        }
    };
    let status = resp.code.unwrap_or(0);
    let mut headers = Vec::with_capacity(resp.headers.len());
    for h in resp.headers.iter() {
        let name = HeaderName::from_bytes(h.name.as_bytes())
            .map_err(|_| "error reading response: invalid header name".to_string())?;
        let value = HeaderValue::from_bytes(h.value)
            .map_err(|_| "error reading response: invalid header value".to_string())?;
        headers.push((name, value));
    }
    Ok(Some((
        Head {
            status,
            http11: resp.version == Some(1),
            headers,
        },
        used,
    )))
}

impl Body {
    /// After progress: a body read to its end gives its connection back when it may.
    fn settle(&mut self) {
        if self.framing == Framing::Length(0) {
            self.framing = Framing::Done;
        }
        if self.framing == Framing::Done
            && let Some(conn) = self.conn.take()
            && self.reusable
            && self.buf.is_empty()
            && let Some(pool) = self.pool.upgrade()
        {
            let buf = if self.small_buf {
                std::mem::take(&mut self.buf)
            } else {
                BytesMut::new()
            };
            pool.check_in(conn, buf);
        }
    }

    /// Reads more of the body; 0 at the end of the connection. A read error ends the body
    /// (and closes its connection).
    async fn fill(&mut self) -> Result<usize, String> {
        let Some(conn) = self.conn.as_mut() else {
            return Ok(0);
        };
        self.small_buf &= make_room(&mut self.buf);
        conn.read_buf(&mut self.buf).await.map_err(|e| {
            self.framing = Framing::Done;
            self.conn = None;
            format!("error decoding response body: {}", e)
        })
    }

    /// The connection ended before the body did: the body ends (its connection closed), and
    /// the error says so.
    fn cut_short(&mut self) -> String {
        self.framing = Framing::Done;
        self.conn = None;
        "error decoding response body: connection closed before message completed".into()
    }

    /// The next piece of the body; `None` at its end.
    async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        loop {
            match self.framing {
                Framing::Done => return Ok(None),
                Framing::Length(left) => {
                    if !self.buf.is_empty() {
                        let n = (self.buf.len() as u64).min(left) as usize;
                        let out = self.buf.split_to(n).freeze();
                        self.framing = Framing::Length(left - n as u64);
                        self.settle();
                        return Ok(Some(out));
                    }
                    if self.fill().await? == 0 {
                        return Err(self.cut_short());
                    }
                }
                Framing::Eof => {
                    if !self.buf.is_empty() {
                        return Ok(Some(self.buf.split().freeze()));
                    }
                    if self.fill().await? == 0 {
                        self.framing = Framing::Done;
                        self.conn = None;
                        return Ok(None);
                    }
                }
                Framing::Chunked(state) => {
                    match self.step_chunked(state)? {
                        Some(Some(out)) => {
                            self.skip_buffered_framing();
                            return Ok(Some(out));
                        }
                        Some(None) => {
                            self.settle();
                            if self.framing == Framing::Done {
                                return Ok(None);
                            }
                            continue;
                        }
                        None => {}
                    }
                    if self.fill().await? == 0 {
                        return Err(self.cut_short());
                    }
                }
            }
        }
    }

    /// After a piece of chunked data: the chunk's end, the next size line and the trailers, as
    /// far as they are already buffered — so that a body whose last bytes came with its data
    /// ends now (and its connection goes back to the pool even if the reader stops here).
    /// Bad framing stops it without an error: the data before it is delivered first, and the
    /// next read reports it.
    fn skip_buffered_framing(&mut self) {
        while let Framing::Chunked(state) = self.framing {
            if matches!(state, Chunk::Data(_)) || !matches!(self.step_chunked(state), Ok(Some(_))) {
                break;
            }
        }
        self.settle();
    }

    /// One step of the chunked decoder on the buffered bytes: `Some(Some(data))` a piece of
    /// data, `Some(None)` progress without data (state moved), `None` more bytes needed.
    fn step_chunked(&mut self, state: Chunk) -> Result<Option<Option<Bytes>>, String> {
        let bad =
            |what: &str| format!("error decoding response body: invalid chunked body: {what}");
        match state {
            Chunk::Size => {
                let Some(end) = memchr::memchr(b'\n', &self.buf) else {
                    if self.buf.len() > MAX_CHUNK_LINE {
                        return Err(bad("chunk size line too long"));
                    }
                    return Ok(None);
                };
                let line = &self.buf[..end];
                let line = line.strip_suffix(b"\r").unwrap_or(line);
                let size_text = line.split(|&b| b == b';').next().unwrap_or_default();
                let size =
                    parse_digits(size_text.trim_ascii(), 16).ok_or_else(|| bad("chunk size"))?;
                self.buf.advance(end + 1);
                self.framing = Framing::Chunked(if size == 0 {
                    Chunk::Trailers
                } else {
                    Chunk::Data(size)
                });
                Ok(Some(None))
            }
            Chunk::Data(left) => {
                if self.buf.is_empty() {
                    return Ok(None);
                }
                let n = (self.buf.len() as u64).min(left) as usize;
                let out = self.buf.split_to(n).freeze();
                let left = left - n as u64;
                self.framing = Framing::Chunked(if left == 0 {
                    Chunk::DataEnd
                } else {
                    Chunk::Data(left)
                });
                Ok(Some(Some(out)))
            }
            Chunk::DataEnd => {
                if self.buf.len() < 2 && !self.buf.starts_with(b"\n") {
                    return Ok(None);
                }
                if self.buf.starts_with(b"\r\n") {
                    self.buf.advance(2);
                } else if self.buf.starts_with(b"\n") {
                    self.buf.advance(1);
                } else {
                    return Err(bad("missing CRLF after chunk data"));
                }
                self.framing = Framing::Chunked(Chunk::Size);
                Ok(Some(None))
            }
            Chunk::Trailers => {
                let Some(end) = memchr::memchr(b'\n', &self.buf) else {
                    if self.buf.len() > MAX_HEAD_BYTES {
                        return Err(bad("trailers too long"));
                    }
                    return Ok(None);
                };
                let line_len = self.buf[..end].strip_suffix(b"\r").map_or(end, <[u8]>::len);
                self.buf.advance(end + 1);
                if line_len == 0 {
                    self.framing = Framing::Done;
                }
                Ok(Some(None))
            }
        }
    }
}

impl Response {
    /// The next piece of the body; `None` at its end. The error text says what failed.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        self.body.chunk().await
    }

    /// Reads what is left of the body in the background, for at most [`FINISH_WAIT`] and
    /// [`FINISH_MAX_BYTES`], so that its connection can serve another request: for an SSE
    /// reply whose answer was found while the server was still ending the stream. A body that
    /// does not end in time closes its connection.
    pub(super) fn finish_in_background(mut self) {
        if self.body.framing == Framing::Done || !self.body.reusable {
            return;
        }
        runtime::handle().spawn(async move {
            let mut read = 0usize;
            let drain = async {
                while let Ok(Some(c)) = self.body.chunk().await {
                    read += c.len();
                    if read > FINISH_MAX_BYTES {
                        return;
                    }
                }
            };
            let _ = tokio::time::timeout(FINISH_WAIT, drain).await;
        });
    }
}

/// How long [`Response::finish_in_background`] waits for the end of a body.
pub(super) const FINISH_WAIT: Duration = Duration::from_secs(1);
/// How much of a body [`Response::finish_in_background`] reads, at most.
pub(super) const FINISH_MAX_BYTES: usize = 1024 * 1024;

#[cfg(test)]
mod tests;
