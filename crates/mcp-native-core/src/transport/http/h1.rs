//! The transport's own connections to a plain `http:` server: HTTP/1.1 by hyper's
//! connection-level client (`hyper::client::conn::http1`), kept alive in a small pool per
//! transport that closes with it.
//!
//! Why not only the process's client ([`crate::net`]): a transport's connections must close
//! when the transport does (a closed server connection must not hold sockets for the pool's
//! idle time), and a request's first write may be made by the calling thread (see
//! `spawn_tracked`): each connection here is driven by the future that uses it — the request's,
//! then its response body's — not by a task of its own, so the first poll of a request writes
//! it. Measured on this project's bench (Bun, sequential JSON calls to a loopback server), the
//! general client spent about 60 µs of CPU per POST on the I/O thread (URL re-parsing, header
//! maps, the pool's checkout, the connection task and its channels) where Bun's own `fetch`
//! spends about 15 µs.
//!
//! It serves only what it cannot change the meaning of: an `http:` origin on an IP address or
//! `localhost`, without credentials, with no proxy variable in the environment. Anything else —
//! `https:`, other host names, proxies — goes through the process's client. So does a redirect
//! received here (the request is sent again there, whose same-origin policy follows it, and the
//! transport stays there until it closes).
//!
//! Connection reuse: hyper frames every message (lengths, chunks, trailers, interim answers)
//! and says when a connection may serve another request. An idle connection is polled before
//! use: one the server closed, or one still busy (a request body the server never read), is
//! dropped and a fresh one made. A request hyper says it did not send (its connection closed
//! before it was written) is sent once more on a fresh connection; once written, a request is
//! never sent again (the server may have acted on it). A response dropped before its end closes
//! its connection. Idle connections live at most [`POOL_IDLE`](super::POOL_IDLE), are checked
//! by a reaper, and close with the transport. Sockets get TCP keepalive as the process's
//! client's do.

use std::future::{Future, poll_fn};
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use reqwest::header::{HeaderMap, HeaderValue};
use tokio::net::TcpStream;
use tokio::time::Instant;

use crate::net::chain;
use crate::runtime;
use crate::sync::Locked;

/// Largest response head (status line and headers) accepted, in bytes of hyper's read buffer.
pub(super) const MAX_HEAD_BYTES: usize = 256 * 1024;
/// Most idle connections kept.
const MAX_IDLE: usize = 64;
/// Unanswered keepalive probes before a connection is dropped.
const KEEPALIVE_RETRIES: u32 = 3;
/// How often idle connections are checked (the server may have closed them).
const REAP_EVERY: Duration = Duration::from_secs(5);

/// Where requests go: resolved from the URL once.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Target {
    /// A literal address, or a host name to resolve at connect time.
    connect: Connect,
    /// The `Host` header: host and, when the URL names a port, the port.
    authority: HeaderValue,
    /// The origin served: requests to other origins are not sent here.
    origin: url::Origin,
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
    /// The target of `url`'s origin when the lean client may serve it (see the module doc);
    /// `env` reads an environment variable.
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
            // Only `localhost` by name: for other names the process's client races the
            // addresses of both families (a host whose IPv6 route is black-holed answers on
            // IPv4 after 300 ms), which tries them one after another.
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
        Some(Target {
            connect,
            authority: HeaderValue::from_str(&authority).ok()?,
            origin: url.origin(),
        })
    }

    /// The target of `url` in this process's environment.
    pub(super) fn from_env(url: &str) -> Option<Target> {
        Target::for_url(url, |v| std::env::var(v).ok())
    }

    /// The request target (path and query) of `url` when it is on this origin.
    fn path_of(&self, url: &url::Url) -> Option<hyper::Uri> {
        if url.origin() != self.origin {
            return None;
        }
        let path = match url.query() {
            Some(q) => format!("{}?{q}", url.path()),
            None => url.path().to_string(),
        };
        path.parse().ok()
    }
}

/// One connection: hyper's handle for sending and the connection itself, which whoever uses
/// the connection polls (there is no task per connection).
struct Link {
    sender: http1::SendRequest<Full<Bytes>>,
    conn: http1::Connection<TokioIo<TcpStream>, Full<Bytes>>,
    /// The connection ended (closed, or failed).
    ended: bool,
}

impl Link {
    /// Polls the connection (reads and writes as far as they go); `true` once it has ended.
    fn drive(&mut self, cx: &mut Context<'_>) -> bool {
        if !self.ended && Pin::new(&mut self.conn).poll(cx).is_ready() {
            self.ended = true;
        }
        self.ended
    }

    /// Whether the connection can take a request now (polled once: an idle connection the
    /// server closed, or one still busy with an earlier exchange, cannot).
    fn ready_now(&mut self) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        !self.drive(&mut cx) && matches!(self.sender.poll_ready(&mut cx), Poll::Ready(Ok(())))
    }
}

/// One transport's connections to its target.
pub(super) struct Pool {
    target: Target,
    /// Idle connections and since when each is idle.
    idle: Mutex<Vec<(Box<Link>, Instant)>>,
    /// How long a connection may stay idle.
    idle_for: Duration,
    /// How often the reaper looks at the idle connections.
    reap_every: Duration,
    /// A reaper task is running (at most one).
    reaping: std::sync::atomic::AtomicBool,
    /// The request target of the URL last asked for (the transport's own, nearly always): no
    /// origin check, formatting or URI parse per request.
    last_path: Mutex<Option<(String, hyper::Uri)>>,
}

/// A response: its status and headers; the body is read with [`Response::chunk`].
pub(super) struct Response {
    pub(super) status: u16,
    pub(super) headers: HeaderMap,
    body: Incoming,
    /// The connection, driven while the body is read; back to the pool at the body's end.
    link: Option<Box<Link>>,
    done: bool,
    /// The connection may serve another request once the body has ended.
    reusable: bool,
    pool: Weak<Pool>,
}

/// Why a request failed, and whether it may be sent again on a fresh connection (hyper says
/// it was not written).
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
            last_path: Mutex::new(None),
        })
    }

    /// Whether `url` is on this pool's origin.
    pub(super) fn serves(&self, url: &url::Url) -> bool {
        self.path_of(url).is_some()
    }

    /// The request target of `url` when it is on this pool's origin (see `last_path`).
    fn path_of(&self, url: &url::Url) -> Option<hyper::Uri> {
        let mut last = self.last_path.locked();
        if let Some((text, path)) = last.as_ref()
            && text == url.as_str()
        {
            return Some(path.clone());
        }
        let path = self.target.path_of(url)?;
        *last = Some((url.as_str().to_string(), path.clone()));
        Some(path)
    }

    /// Sends `method` to `url` (on this pool's origin: see [`Pool::serves`]) with `headers`
    /// (the transport's, in order) and `body`; the error text says why it failed (`error
    /// sending request: …`).
    pub(super) async fn send(
        self: &Arc<Self>,
        method: reqwest::Method,
        url: &url::Url,
        headers: &HeaderMap,
        body: Bytes,
    ) -> Result<Response, String> {
        let path = self
            .path_of(url)
            .ok_or("error sending request: not this connection's origin")?;
        let request = || {
            let mut req = hyper::Request::new(Full::new(body.clone()));
            *req.method_mut() = method.clone();
            *req.uri_mut() = path.clone();
            let h = req.headers_mut();
            h.reserve(headers.len() + 1);
            if !headers.contains_key("host") {
                h.insert("host", self.target.authority.clone());
            }
            for (name, value) in headers {
                // The body's own length frames it (hyper writes `content-length`).
                if name != "content-length" && name != "transfer-encoding" {
                    h.append(name, value.clone());
                }
            }
            req
        };
        if let Some(link) = self.checkout() {
            match self.exchange(link, request()).await {
                Ok(r) => return Ok(r),
                Err(f) if f.retry => {}
                Err(f) => return Err(f.message),
            }
        }
        let link = self.connect().await?;
        self.exchange(link, request()).await.map_err(|f| f.message)
    }

    /// An idle connection that can take a request now, if any.
    fn checkout(&self) -> Option<Box<Link>> {
        let mut idle = self.idle.locked();
        while let Some((mut link, since)) = idle.pop() {
            if since.elapsed() < self.idle_for && link.ready_now() {
                return Some(link);
            }
        }
        None
    }

    async fn connect(&self) -> Result<Box<Link>, String> {
        let conn = match &self.target.connect {
            Connect::Addr(addr) => TcpStream::connect(addr).await,
            Connect::Name(host, port) => TcpStream::connect((host.as_str(), *port)).await,
        }
        .map_err(|e| format!("error sending request: tcp connect error: {}", e))?;
        let _ = conn.set_nodelay(true);
        let keepalive = socket2::TcpKeepalive::new()
            .with_time(crate::net::KEEPALIVE)
            .with_interval(crate::net::KEEPALIVE)
            .with_retries(KEEPALIVE_RETRIES);
        let _ = socket2::SockRef::from(&conn).set_tcp_keepalive(&keepalive);
        let (sender, conn) = http1::Builder::new()
            .max_buf_size(MAX_HEAD_BYTES)
            .handshake(TokioIo::new(conn))
            .await
            .map_err(|e| format!("error sending request: {}", chain(&e)))?;
        // Boxed: a connection moves between the pool and each response it serves.
        Ok(Box::new(Link {
            sender,
            conn,
            ended: false,
        }))
    }

    /// Sends the request on `link`, driving the connection until the response head is in.
    async fn exchange(
        self: &Arc<Self>,
        mut link: Box<Link>,
        request: hyper::Request<Full<Bytes>>,
    ) -> Result<Response, Failure> {
        let mut answer = std::pin::pin!(link.sender.try_send_request(request));
        let head = poll_fn(|cx| {
            link.drive(cx);
            answer.as_mut().poll(cx)
        })
        .await;
        match head {
            Ok(resp) if resp.status() == hyper::StatusCode::SWITCHING_PROTOCOLS => Err(Failure {
                retry: false,
                message: "error sending request: unexpected protocol switch".into(),
            }),
            Ok(resp) => {
                let (parts, body) = resp.into_parts();
                // RFC 9112 6.1: a message framed both ways may be an attempt at response
                // splitting; its connection serves nothing more.
                let both = parts.headers.contains_key("transfer-encoding")
                    && parts.headers.contains_key("content-length");
                let mut r = Response {
                    reusable: !both,
                    status: parts.status.as_u16(),
                    headers: parts.headers,
                    done: body.is_end_stream(),
                    body,
                    link: Some(link),
                    pool: Arc::downgrade(self),
                };
                r.settle();
                Ok(r)
            }
            Err(mut e) => Err(Failure {
                retry: e.take_message().is_some(),
                message: format!("error sending request: {}", chain(e.error())),
            }),
        }
    }

    /// Takes back a connection whose response was read to its end.
    fn check_in(self: &Arc<Self>, link: Box<Link>) {
        if link.ended {
            return;
        }
        let mut idle = self.idle.locked();
        if idle.len() >= MAX_IDLE {
            return;
        }
        idle.push((link, Instant::now()));
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
        let mut cx = Context::from_waker(std::task::Waker::noop());
        idle.retain_mut(|(link, since)| since.elapsed() < pool.idle_for && !link.drive(&mut cx));
        if idle.is_empty() {
            // Under the lock: a connection checked in after this starts a new reaper.
            pool.reaping
                .store(false, std::sync::atomic::Ordering::Release);
            reaping.0 = Weak::new(); // done: nothing left for the guard to clear
            return;
        }
    }
}

impl Response {
    /// A response whose body has ended gives its connection back at once.
    fn settle(&mut self) {
        if self.done
            && let Some(link) = self.link.take()
            && self.reusable
            && let Some(pool) = self.pool.upgrade()
        {
            pool.check_in(link);
        }
    }

    /// Whether the rest of the body is already here and empty (its end came with the last
    /// data): polled without waiting.
    fn ends_now(&mut self) -> bool {
        let mut cx = Context::from_waker(std::task::Waker::noop());
        loop {
            if let Some(link) = self.link.as_mut() {
                link.drive(&mut cx);
            }
            match Pin::new(&mut self.body).poll_frame(&mut cx) {
                Poll::Ready(None) => return true,
                Poll::Ready(Some(Ok(frame))) if frame.data_ref().is_none_or(Bytes::is_empty) => {}
                _ => return false,
            }
        }
    }

    /// The next piece of the body; `None` at its end. The error text says what failed; after
    /// an error the body has ended (and its connection is closed).
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        loop {
            if self.done {
                return Ok(None);
            }
            let frame = poll_fn(|cx| {
                if let Some(link) = self.link.as_mut() {
                    link.drive(cx);
                }
                Pin::new(&mut self.body).poll_frame(cx)
            })
            .await;
            match frame {
                None => {
                    self.done = true;
                    self.settle();
                    return Ok(None);
                }
                Some(Err(e)) => {
                    self.done = true;
                    self.link = None;
                    return Err(format!("error decoding response body: {}", chain(&e)));
                }
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if self.body.is_end_stream() {
                            self.done = true;
                            self.settle();
                        }
                        if !data.is_empty() {
                            return Ok(Some(data));
                        }
                    }
                    // Trailers, or an empty piece: read on.
                }
            }
        }
    }

    /// Reads what is left of the body in the background, for at most [`FINISH_WAIT`] and
    /// [`FINISH_MAX_BYTES`], so that its connection can serve another request: for an SSE
    /// reply whose answer was found while the server was still ending the stream. A body that
    /// does not end in time closes its connection.
    pub(super) fn finish_in_background(mut self) {
        if self.done || self.link.is_none() {
            return;
        }
        runtime::handle().spawn(async move {
            let mut read = 0usize;
            let drain = async {
                while let Ok(Some(c)) = self.chunk().await {
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

impl Drop for Response {
    /// A body dropped before its end closes its connection, unless its end is already here
    /// (the connection then serves the next request).
    fn drop(&mut self) {
        if !self.done && self.link.is_some() && self.reusable && self.ends_now() {
            self.done = true;
            self.settle();
        }
    }
}

/// How long [`Response::finish_in_background`] waits for the end of a body.
pub(super) const FINISH_WAIT: Duration = Duration::from_secs(1);
/// How much of a body [`Response::finish_in_background`] reads, at most.
pub(super) const FINISH_MAX_BYTES: usize = 1024 * 1024;

#[cfg(test)]
mod tests;
