//! Opening a connection: the transport for the config, the handshake (`initialize`, version
//! negotiation, `notifications/initialized`), the GET stream on Streamable HTTP — within the
//! connect deadline, and always closing what a failed attempt opened before reporting it.

use std::sync::atomic::Ordering;
use std::sync::{Arc, OnceLock};

use std::time::Duration;

use serde_json::json;
use serde_json::value::RawValue;

use super::conn::{Conn, ConnKind, Life};
use super::model::InitializeResult;
use super::modern;
use super::options::{SUPPORTED_PROTOCOL_VERSIONS, ServerConfig};
use super::sink::ConnSink;
use super::{ClientEvent, Inner, Status, lock, reconnect};
use crate::error::Error;
use crate::transport::http::HttpTransport;
use crate::transport::stdio::StdioTransport;
use crate::transport::{EventSink, RequestOptions, Transport, TransportExt};

/// How long a connection gets to close before the client stops waiting to hear of it (the
/// stdio kill grace plus a margin; for HTTP the DELETE's timeout plus a margin).
pub(super) fn close_wait(config: &ServerConfig) -> Duration {
    match config {
        ServerConfig::Stdio { config, .. } => {
            Duration::from_millis(config.kill_grace_ms) + Duration::from_secs(2)
        }
        ServerConfig::Http(c) => {
            Duration::from_millis(c.timeout_ms.min(10_000)) + Duration::from_secs(1)
        }
        ServerConfig::Custom { .. } => Duration::from_secs(5),
    }
}

/// Starts the transport of `config` (no handshake yet); its events go through a [`ConnSink`].
fn open(inner: &Arc<Inner>, generation: u64) -> Result<Conn, Error> {
    let life = Arc::new(Life::default());
    let sink = Arc::new(ConnSink {
        client: Arc::downgrade(inner),
        generation,
        life: life.clone(),
        transport: OnceLock::new(),
        downstream: inner.sink.clone(),
    });
    let as_sink: Arc<dyn EventSink> = sink.clone();
    let kind = match &inner.config() {
        ServerConfig::Stdio { config, timeout_ms } => {
            let t = Arc::new(StdioTransport::spawn(config, as_sink, *timeout_ms)?);
            t.set_listeners(inner.stderr.load(Ordering::Relaxed), true);
            ConnKind::Stdio(t)
        }
        ServerConfig::Http(config) => {
            let t = HttpTransport::new(config.clone(), as_sink)?;
            if let Some(hook) = oauth_client(inner, config)? {
                t.set_auth_hook(Some(hook as Arc<dyn crate::transport::AuthHook>));
            }
            t.set_headers_refresher(lock(&inner.headers_refresher).clone());
            t.connect();
            ConnKind::Http(Arc::new(t))
        }
        ServerConfig::Custom { factory, .. } => ConnKind::Other(factory(as_sink)?),
    };
    let conn = Conn {
        kind,
        life,
        modern: Default::default(),
        sink: sink.clone(),
        generation,
    };
    let transport = conn.transport();
    // The client sees every server request (it answers or forwards them).
    transport.set_request_listener(true);
    let _ = sink.transport.set(Arc::downgrade(&transport));
    if let ConnKind::Http(t) = &conn.kind {
        t.set_session_hook(Some(Arc::new(reconnect::ReinitHook {
            client: Arc::downgrade(inner),
            generation,
        })));
    }
    Ok(conn)
}

/// The OAuth client for an HTTP connection when the options ask for one and the config carries
/// no static `Authorization` header (which wins, SPEC 10.3); the same one across reconnects to
/// the same URL.
pub(super) fn oauth_client(
    inner: &Inner,
    config: &crate::transport::http::HttpConfig,
) -> Result<Option<Arc<crate::oauth::client::OAuthClient>>, Error> {
    let Some(oauth) = &inner.options.oauth else {
        return Ok(None);
    };
    if config
        .headers
        .iter()
        .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
    {
        return Ok(None);
    }
    let mut held = lock(&inner.oauth);
    if let Some(client) = held.as_ref()
        && client.server_url() == config.url
        && Arc::ptr_eq(client.config(), oauth)
    {
        return Ok(Some(client.clone()));
    }
    let client = crate::oauth::client::OAuthClient::new(oauth.clone(), config.url.clone())
        .map_err(Error::from)?
        .with_server_name(inner.name.clone())
        .with_protocol_version(inner.options.protocol_version.clone());
    let client = Arc::new(client);
    *held = Some(client.clone());
    Ok(Some(client))
}

/// Finds out which era the server speaks and opens the connection in it (SPEC 9.2): with a
/// modern `protocolVersion` (or an HTTP server known to be modern) `server/discover` first, and
/// `initialize` when that says legacy; otherwise `initialize` first, and the probe only when the
/// server refuses it the modern way.
pub(super) async fn handshake(
    inner: &Inner,
    conn: &Conn,
) -> Result<(InitializeResult, Box<RawValue>), Error> {
    let config = inner.config();
    let url = match &config {
        ServerConfig::Http(c) => Some(c.url.clone()),
        _ => None,
    };
    let http = url.is_some();
    let modern_first = modern::MODERN_VERSIONS.contains(&inner.options.protocol_version.as_str())
        || url.as_deref().and_then(modern::remembered) == Some(true);
    let timeout = config.timeout_ms();
    // A stdio server that ignores unknown methods must not cost the whole connect deadline.
    let probe_ms = if http { timeout } else { timeout.min(5_000) };
    if modern_first
        && conn.modern.get().is_none()
        && let modern::Probe::Modern(version, raw) =
            modern::probe(inner, &conn.transport(), http, probe_ms).await?
    {
        return modern_session(inner, conn, url.as_deref(), &version, &raw);
    }
    match initialize(inner, conn).await {
        Err(e) if !modern_first && modern::is_modern_error(&e) => {
            match modern::probe(inner, &conn.transport(), http, probe_ms).await? {
                modern::Probe::Modern(version, raw) => {
                    modern_session(inner, conn, url.as_deref(), &version, &raw)
                }
                modern::Probe::Legacy => Err(e),
            }
        }
        other => {
            if let (Some(url), Ok(_)) = (url.as_deref(), &other) {
                modern::remember(url, false);
            }
            other
        }
    }
}

/// The connection speaks the modern revision: its session, and the `initialize`-shaped answer.
fn modern_session(
    inner: &Inner,
    conn: &Conn,
    url: Option<&str>,
    version: &str,
    discover: &RawValue,
) -> Result<(InitializeResult, Box<RawValue>), Error> {
    let session = Arc::new(modern::ModernSession::new(inner, version, url.is_some()));
    let _ = conn.modern.set(session);
    if let Some(url) = url {
        modern::remember(url, true);
    }
    let raw = modern::init_from_discover(version, discover);
    let init: InitializeResult = serde_json::from_str(raw.get())
        .map_err(|e| Error::Parse(format!("Invalid server/discover result: {e}")))?;
    Ok((init, raw))
}

/// `initialize` with the client's values, the version check, `notifications/initialized`.
async fn initialize(
    inner: &Inner,
    conn: &Conn,
) -> Result<(InitializeResult, Box<RawValue>), Error> {
    let o = &inner.options;
    // A modern-first client offers the latest legacy revision to a legacy server.
    let offered = if modern::MODERN_VERSIONS.contains(&o.protocol_version.as_str()) {
        super::options::LATEST_LEGACY_VERSION
    } else {
        o.protocol_version.as_str()
    };
    let params = json!({
        "protocolVersion": offered,
        "capabilities": o.capabilities,
        "clientInfo": o.client_info,
    })
    .to_string();
    let transport = conn.transport();
    // The connect deadline bounds the handshake; the request's own deadline is later.
    let options = RequestOptions {
        timeout_ms: Some(inner.config().timeout_ms().saturating_add(1000)),
        opens_session: true,
        ..RequestOptions::default()
    };
    let raw = transport
        .request("initialize", Some(&params), options)
        .await?;
    let raw = raw.unwrap_or_else(|| RawValue::from_string("null".into()).expect("null is JSON"));
    let init: Option<InitializeResult> = serde_json::from_str(raw.get()).ok();
    let version = init.as_ref().and_then(|i| i.protocol_version.clone());
    let supported = version
        .as_deref()
        .is_some_and(|v| v == offered || SUPPORTED_PROTOCOL_VERSIONS.contains(&v));
    let (Some(init), true) = (init, supported) else {
        return Err(Error::UnsupportedProtocol(
            version.unwrap_or_else(|| "undefined".into()),
        ));
    };
    transport.set_protocol_version(init.protocol_version.as_deref());
    transport
        .notify("notifications/initialized", Some("{}"))
        .await?;
    Ok((init, raw))
}

/// Opens a connection and runs the handshake; on failure, the connection is closed (and its end
/// awaited) before the error is returned. While it runs, the connection is the state's
/// `attempt`, so that `close()` (or a deadline) can close it.
pub(super) async fn open_session(
    inner: &Arc<Inner>,
    generation: u64,
    epoch: u64,
) -> Result<(Conn, InitializeResult, Box<RawValue>), Error> {
    let conn = if matches!(inner.config(), ServerConfig::Stdio { .. }) {
        // Starting a process waits for its fork and exec (on the crate's spawner thread): not on
        // this thread, which is the runtime's only one. 50 servers started at once blocked it
        // for over a second, and with it every timer and answer, the startup window's included.
        // The new connection is the attempt as soon as it exists, while `starting` is held: a
        // deadline or `close()` that comes meanwhile waits for it and closes it (and its
        // process) before it returns, as when the fork happened on this thread. One at a time:
        // the forks are made one after the other on the spawner thread anyway, and one waiting
        // thread is enough (50 would each hold a thread and its allocator heap).
        static STARTS: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(1);
        let _turn = STARTS
            .acquire()
            .await
            .map_err(|_| Error::Io("starting the server failed: closed".into()))?;
        let starting = inner.starting.clone().lock_owned().await;
        let inner2 = inner.clone();
        tokio::task::spawn_blocking(move || {
            let _starting = starting;
            let conn = open(&inner2, generation)?;
            let mut st = lock(&inner2.state);
            if st.epoch == epoch {
                st.attempt = Some(conn.clone());
            }
            Ok::<_, Error>(conn)
        })
        .await
        .map_err(|e| Error::Io(format!("starting the server failed: {e}")))??
    } else {
        open(inner, generation)?
    };
    let stale = {
        let mut st = lock(&inner.state);
        let stale = st.epoch != epoch;
        if !stale {
            st.attempt = Some(conn.clone());
        }
        stale
    };
    if stale {
        conn.close_and_wait(close_wait(&inner.config())).await;
        return Err(Error::closed());
    }
    inner.sink.client_event(ClientEvent::Opened { generation });
    match handshake(inner, &conn).await {
        Ok((init, raw)) => Ok((conn, init, raw)),
        Err(e) => {
            conn.close_and_wait(close_wait(&inner.config())).await;
            Err(e)
        }
    }
}

/// Makes `conn` the client's connection (unless the client was closed meanwhile: then it is
/// closed instead); opens the GET stream on Streamable HTTP.
pub(super) async fn adopt(
    inner: &Arc<Inner>,
    epoch: u64,
    conn: Conn,
    init: InitializeResult,
    raw: Box<RawValue>,
) -> Result<InitializeResult, Error> {
    {
        let mut st = lock(&inner.state);
        st.attempt = None;
        if st.epoch == epoch {
            st.conn = Some(conn.clone());
            st.init = Some((init.clone(), raw.clone()));
            st.status = Status::Connected;
            st.reconnecting = None;
            drop(st);
            if conn.modern.get().is_some() {
                // The modern era's change notifications come through `subscriptions/listen`.
                let caps = serde_json::to_value(&init.capabilities).unwrap_or_default();
                if let Some(filter) = modern::listen_filter(&caps) {
                    let (weak, generation) = (Arc::downgrade(inner), conn.generation);
                    crate::runtime::handle().spawn(modern::listen(weak, generation, filter));
                }
            } else if let ConnKind::Http(t) = &conn.kind {
                // Servers send what belongs to no request (an elicitation, list_changed) there.
                let id = t.next_id();
                t.start_listener(id);
            }
            inner.sink.client_event(ClientEvent::Connected {
                generation: conn.generation,
                init: raw,
            });
            inner.set_status(Status::Connected, None);
            return Ok(init);
        }
    }
    conn.close_and_wait(close_wait(&inner.config())).await;
    Err(Error::closed())
}

/// Runs `fut` within `ms`, not counting the time while `waiting` is true (an OAuth authorizer
/// waiting for its user, which has its own bound: SPEC 10.3); `None` when the time is up.
async fn unless_late<F: std::future::Future>(
    ms: u64,
    waiting: Option<tokio::sync::watch::Receiver<bool>>,
    fut: F,
) -> Option<F::Output> {
    let Some(mut waiting) = waiting else {
        return tokio::time::timeout(Duration::from_millis(ms), fut)
            .await
            .ok();
    };
    tokio::pin!(fut);
    let mut left = Duration::from_millis(ms);
    loop {
        if *waiting.borrow_and_update() {
            tokio::select! {
                // Cancel-safe: the future is pinned across iterations and polled to the end.
                out = &mut fut => return Some(out),
                // Cancel-safe: `changed` only marks the value seen; the loop reads it again.
                changed = waiting.changed() => {
                    if changed.is_err() {
                        return tokio::time::timeout(left, fut).await.ok();
                    }
                }
            }
            continue;
        }
        let start = tokio::time::Instant::now();
        tokio::select! {
            // Cancel-safe: the future is pinned across iterations and polled to the end.
            out = &mut fut => return Some(out),
            // Cancel-safe: a fresh sleep of what is left each round.
            () = tokio::time::sleep(left) => return None,
            // Cancel-safe: `changed` only marks the value seen; the loop reads it again.
            changed = waiting.changed() => {
                left = left.saturating_sub(start.elapsed());
                if changed.is_err() {
                    return tokio::time::timeout(left, fut).await.ok();
                }
            }
        }
    }
}

/// SPEC 5.1 `connect`: bounded by the config's timeout; connected already → at once; a connect
/// in progress is shared.
pub(super) async fn connect(inner: &Arc<Inner>) -> Result<InitializeResult, Error> {
    enum Start {
        Done(Box<InitializeResult>),
        Wait,
        Go(u64, u64),
    }
    let start = {
        let mut st = lock(&inner.state);
        match (st.status, &st.init) {
            (Status::Connected, Some((init, _))) => Start::Done(Box::new(init.clone())),
            (Status::Connecting | Status::Reconnecting, _) => Start::Wait,
            _ => {
                st.status = Status::Connecting;
                st.generation += 1;
                Start::Go(st.epoch, st.generation)
            }
        }
    };
    let (epoch, generation) = match start {
        Start::Done(init) => return Ok(*init),
        Start::Wait => {
            reconnect::when_connected(inner, inner.config().timeout_ms()).await?;
            let init = lock(&inner.state).init.as_ref().map(|(i, _)| i.clone());
            return init.ok_or_else(Error::closed);
        }
        Start::Go(epoch, generation) => (epoch, generation),
    };
    inner.set_status(Status::Connecting, None);
    let ms = inner.config().timeout_ms();
    // The OAuth client exists before the clock starts, so that its user's time is not counted.
    let waiting = match inner.config() {
        ServerConfig::Http(c) => oauth_client(inner, &c)
            .ok()
            .flatten()
            .map(|o| o.waiting_for_user()),
        _ => None,
    };
    let outcome = unless_late(ms, waiting, open_session(inner, generation, epoch)).await;
    let result = match outcome {
        Some(Ok((conn, init, raw))) => return adopt(inner, epoch, conn, init, raw).await,
        Some(Err(e)) => Err(e),
        None => {
            // Whether the transport was still starting or already talking: it is closed before
            // the caller hears of the failure, so nothing outlives the attempt (a process being
            // started is waited for first).
            drop(inner.starting.lock().await);
            let attempt = lock(&inner.state).attempt.take();
            if let Some(conn) = attempt {
                conn.close_and_wait(close_wait(&inner.config())).await;
            }
            Err(Error::ConnectTimeout {
                name: inner.name.clone(),
                ms,
            })
        }
    };
    if let Err(e) = &result {
        let mut st = lock(&inner.state);
        if st.epoch == epoch {
            st.status = Status::Closed;
            st.last_error = Some(e.clone());
            drop(st);
            inner.set_status(Status::Closed, Some(e.clone()));
        }
    }
    result
}

/// SPEC 5.2 `close`: no reconnect any more; the connection closed and its end awaited.
pub(super) async fn close(inner: &Arc<Inner>) {
    // A process being started is waited for: it is then the attempt, closed below.
    drop(inner.starting.lock().await);
    let (conn, was) = {
        let mut st = lock(&inner.state);
        st.epoch += 1;
        let was = st.status;
        st.status = Status::Closed;
        if let Some(task) = st.reconnecting.take() {
            task.abort();
        }
        (
            st.conn
                .take()
                .into_iter()
                .chain(st.attempt.take())
                .collect::<Vec<_>>(),
            was,
        )
    };
    // The connection, and an attempt under way (a connect or reconnect): both closed and awaited.
    for conn in conn {
        conn.close_and_wait(close_wait(&inner.config())).await;
    }
    if !matches!(was, Status::Closed | Status::Idle) {
        inner.set_status(Status::Closed, None);
    }
}

impl Inner {
    /// Tells waiters and the sink's owner of a status change.
    pub(crate) fn set_status(&self, status: Status, error: Option<Error>) {
        self.status_tx.send_replace(status);
        self.sink.client_event(ClientEvent::Status(status, error));
    }
}
