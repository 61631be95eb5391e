//! One POST: its headers (SPEC 3.3 order: defaults, the config's, the session, the protocol
//! version, the request's own, the authorization), the session it carries back, its status, and
//! — when an [`AuthHook`](super::AuthHook) is set — an authorization step and a retry after
//! each 401/403 the hook takes on (at most [`MAX_AUTH_RETRIES`] per request).

use std::sync::Arc;
use std::sync::atomic::Ordering;

use bytes::Bytes;
use reqwest::header::{HeaderMap, HeaderName, HeaderValue};
use serde_json::value::RawValue;

use super::h1;
use super::{Answer, Inner, Reading, lock};
use crate::error::Error;
use crate::jsonrpc;
use crate::runtime;
use crate::transport::{AuthRefusal, Era, MAX_AUTH_RETRIES, MAX_TIMEOUT_MS};

/// The most room a JSON reply's announced length reserves ahead (see `read_json`).
const RESERVE_AT_MOST: usize = 32 * 1024 * 1024;

/// The configured headers as a map; a value with CR or LF (or otherwise invalid) is an error
/// that names the header, never its value. With `protocol_headers_win`, `MCP-Protocol-Version`
/// (any case) is left out: the client sends the negotiated one, and a config never injects its
/// own (the agent's rule since 18.3.4).
pub(super) fn header_map(
    headers: &[(String, String)],
    protocol_headers_win: bool,
) -> Result<HeaderMap, Error> {
    let mut map = HeaderMap::new();
    for (name, value) in headers {
        if protocol_headers_win && name.eq_ignore_ascii_case("mcp-protocol-version") {
            continue;
        }
        if value.contains(['\r', '\n']) {
            return Err(Error::InvalidConfig(format!(
                "header \"{name}\" contains CR or LF"
            )));
        }
        let n = HeaderName::from_bytes(name.as_bytes())
            .map_err(|_| Error::InvalidConfig(format!("invalid header name \"{name}\"")))?;
        let v = HeaderValue::from_str(value)
            .map_err(|_| Error::InvalidConfig(format!("invalid value for header \"{name}\"")))?;
        map.insert(n, v);
    }
    Ok(map)
}

/// `HTTP <status>: <body>` plus the auth hints of SPEC 3.3.
pub(super) fn http_error(
    status: u16,
    body: &str,
    headers: &HeaderMap,
    session_expired: bool,
) -> Error {
    let mut hints = Vec::new();
    for name in ["WWW-Authenticate", "Mcp-Auth-Server"] {
        if let Some(v) = headers.get(name).and_then(|v| v.to_str().ok()) {
            hints.push(format!("{name}: {v}"));
        }
    }
    let mut message = format!("HTTP {status}: {body}");
    if !hints.is_empty() {
        message.push_str(&format!(" [{}]", hints.join("; ")));
    }
    Error::Http {
        status,
        message,
        session_expired,
    }
}

/// POST bodies larger than this ask for `Connection: close`. A server may answer before it has
/// read such a body (a 404 for an unknown session, a 413); hyper then neither hands that
/// connection back to the pool nor closes it — not even when the client has no pool — so neither
/// `close()` nor dropping the client ended it, and the socket stayed until the server's
/// keep-alive timeout (the fault suite's fd-leak cases; robustness test "answers before reading a
/// large body"). With `Connection: close` the server ends the connection after its answer. The
/// price: a server that closes while the body is still being sent can make the client report the
/// broken write (`fetch failed: error sending request …`) instead of the answer it had sent. Such
/// bodies are rare (large tool arguments) and cost far more than a new connection to send.
pub(super) const CLOSE_AFTER_BODY_BYTES: usize = 64 * 1024;

pub(super) use crate::net::error_chain;

/// A POST's response, from the lean client ([`h1`]) or from reqwest.
pub(super) enum Resp {
    Std(reqwest::Response),
    Lean(h1::Response),
}

impl Resp {
    pub(super) fn status(&self) -> u16 {
        match self {
            Resp::Std(r) => r.status().as_u16(),
            Resp::Lean(r) => r.status,
        }
    }

    pub(super) fn headers(&self) -> &HeaderMap {
        match self {
            Resp::Std(r) => r.headers(),
            Resp::Lean(r) => &r.headers,
        }
    }

    /// The next piece of the body, `None` at its end; the error says why reading failed.
    pub(super) async fn chunk(&mut self) -> Result<Option<Bytes>, String> {
        match self {
            Resp::Std(r) => r.chunk().await.map_err(error_chain),
            Resp::Lean(r) => r.chunk().await,
        }
    }

    /// Done with a body that may not have ended yet: the lean client reads the rest in the
    /// background (briefly) to keep its connection; reqwest's closes.
    pub(super) fn finish(self) {
        if let Resp::Lean(r) = self {
            r.finish_in_background();
        }
    }

    /// Reads the body to its end and drops it (so that the connection can be reused).
    pub(super) async fn drain(mut self) {
        while let Ok(Some(_)) = self.chunk().await {}
    }

    /// The body as text (invalid UTF-8 replaced, as reqwest's `text()` without its `charset`
    /// feature); empty when it cannot be read to its end.
    pub(super) async fn text(mut self) -> String {
        let mut body = Vec::new();
        loop {
            match self.chunk().await {
                Ok(Some(chunk)) => body.extend_from_slice(&chunk),
                Ok(None) => return String::from_utf8_lossy(&body).into_owned(),
                Err(_) => return String::new(),
            }
        }
    }
}

/// `body` as UTF-8 text is decoded (invalid bytes replaced, a leading byte-order mark dropped);
/// `None` when that changes nothing.
fn decoded_as_text(body: &[u8]) -> Option<Vec<u8>> {
    let text = String::from_utf8_lossy(body);
    let bare = text.strip_prefix('\u{feff}').unwrap_or(&text);
    (bare.len() != body.len()).then(|| bare.as_bytes().to_vec())
}

/// The statuses reqwest's redirect policy follows.
fn is_redirect(status: u16) -> bool {
    matches!(status, 301 | 302 | 303 | 307 | 308)
}

impl Inner {
    /// The lean client's pool, when it serves this transport's own URL.
    pub(super) fn lean(&self) -> Option<Arc<h1::Pool>> {
        lock(&self.lean).clone()
    }

    /// Sends `method` to `url` with `headers` and `body` (none when empty): on the transport's
    /// own connections when they serve `url`'s origin ([`h1`]), else on the process's client;
    /// redirects are followed as the config's rule says (a redirect met on the own connections
    /// is followed from that answer, on the process's client, and so are all later requests
    /// until the transport closes).
    pub(super) async fn fetch(
        &self,
        method: reqwest::Method,
        url: url::Url,
        headers: HeaderMap,
        body: Bytes,
    ) -> Result<Resp, String> {
        let policy = self.config.redirects.policy();
        let standard = |method, url, headers| {
            let request = self.client.request(method, url).headers(headers);
            if body.is_empty() {
                request
            } else {
                request.body(body.clone())
            }
        };
        let Some(pool) = self.lean().filter(|pool| pool.serves(&url)) else {
            return self
                .send(standard(method, url, headers))
                .await
                .map(Resp::Std);
        };
        let r = pool
            .send(method.clone(), &url, &headers, body.clone())
            .await?;
        if !is_redirect(r.status) {
            return Ok(Resp::Lean(r));
        }
        *lock(&self.lean) = None;
        let request = standard(method, url.clone(), headers.clone())
            .build()
            .map_err(crate::net::error_chain)?;
        let first = (&url, Some(&headers));
        match crate::net::next_hop(request, policy, first, 0, r.status, &r.headers)? {
            Some((next, followed)) => {
                crate::net::send_from(next, policy, &url, Some(&headers), followed)
                    .await
                    .map(Resp::Std)
            }
            // Not followed: the redirect is the answer.
            None => Ok(Resp::Lean(r)),
        }
    }
}

/// The error of a POST that got no answer: a network failure (`fetch failed: …`), or a redirect
/// the config's rule refuses, worded as the agent words it (`HTTP 303: server redirected a POST
/// request; refusing to follow` with its status, `Too many redirects (> 5) fetching …`).
pub(super) fn fetch_failed(e: String) -> Error {
    let Some(refused) = e.strip_prefix(crate::net::REFUSED_REDIRECT) else {
        return Error::Io(format!("fetch failed: {e}"));
    };
    let status = refused
        .strip_prefix("HTTP ")
        .and_then(|rest| rest.get(..3))
        .and_then(|code| code.parse::<u16>().ok());
    match status {
        Some(status) => Error::Http {
            status,
            message: refused.to_owned(),
            session_expired: false,
        },
        None => Error::Io(refused.to_owned()),
    }
}

/// Whether a refusal asks for an authorization step: 401, or 403 with `insufficient_scope`.
fn wants_authorization(status: u16, www_authenticate: Option<&str>) -> bool {
    status == 401
        || (status == 403 && www_authenticate.is_some_and(|w| w.contains("insufficient_scope")))
}

impl Inner {
    /// The headers of a POST (SPEC 3.3): the content type and `Accept`, the config's over them
    /// (12.7) or under them (`protocol_headers_win`, the agent's rule since 18.3.4: a configured
    /// header never replaces a protocol header, in any case of its name), then the session
    /// (legacy era) and the protocol version, then `extra` (the request's own), then the
    /// authorization.
    async fn post_headers(&self, extra: &[(String, String)]) -> Result<HeaderMap, Error> {
        let mut headers = HeaderMap::new();
        {
            // Read under the lock, which is not held across an await.
            let configured = lock(&self.headers);
            let configured = configured.as_ref().map_err(Clone::clone)?;
            if self.config.protocol_headers_win {
                headers.clone_from(configured);
            }
            headers.insert("content-type", HeaderValue::from_static("application/json"));
            headers.insert(
                "accept",
                HeaderValue::from_static("application/json, text/event-stream"),
            );
            if !self.config.protocol_headers_win {
                for (name, value) in configured {
                    headers.insert(name, value.clone());
                }
            }
        }
        if self.era() == Era::Legacy
            && let Some(session) = lock(&self.session).as_deref()
            && let Ok(v) = HeaderValue::from_str(session)
        {
            headers.insert("mcp-session-id", v);
        }
        if let Some(version) = lock(&self.protocol_version).as_deref()
            && let Ok(v) = HeaderValue::from_str(version)
        {
            headers.insert("mcp-protocol-version", v);
        }
        for (name, value) in extra {
            let n = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| Error::InvalidConfig(format!("invalid header name \"{name}\"")))?;
            let v = HeaderValue::from_str(value).map_err(|_| {
                Error::InvalidConfig(format!("invalid value for header \"{name}\""))
            })?;
            headers.insert(n, v);
        }
        self.add_authorization(&mut headers).await?;
        Ok(headers)
    }

    /// The [`AuthHook`](super::AuthHook)'s `Authorization`, when one is set and has a token.
    pub(super) async fn add_authorization(&self, headers: &mut HeaderMap) -> Result<(), Error> {
        let hook = lock(&self.auth_hook).clone();
        if let Some(hook) = hook
            && let Some(value) = hook.authorization().await?
            && let Ok(v) = HeaderValue::from_str(&value)
        {
            headers.insert("authorization", v);
        }
        Ok(())
    }

    /// Takes the session id from any response; only visible ASCII is accepted; none in the
    /// modern era (SPEC 9.1: servers may still send one; it is ignored).
    fn capture_session(&self, headers: &HeaderMap) {
        if self.era() == Era::Modern {
            return;
        }
        if let Some(v) = headers.get("mcp-session-id")
            && !v.as_bytes().is_empty()
            && v.as_bytes().iter().all(|b| (0x21..=0x7e).contains(b))
            && let Ok(s) = v.to_str()
        {
            *lock(&self.session) = Some(s.to_string());
        }
    }

    /// POSTs `frame`; returns the response after the status checks (non-2xx → error). With an
    /// auth hook, a 401 (or 403 `insufficient_scope`) becomes an authorization step and a retry,
    /// as long as the hook asks for one (and at most [`MAX_AUTH_RETRIES`] times).
    ///
    /// The authorization step does not count against `deadline` (the exchange's): it has its own
    /// bounds (each OAuth request, the authorizer's time).
    pub(super) async fn post(
        &self,
        frame: Bytes,
        extra: &[(String, String)],
        deadline: Option<&super::exchange::ExchangeDeadline>,
    ) -> Result<Resp, Error> {
        let (mut retries, mut step_ups) = (0u32, 0u32);
        loop {
            let mut headers = self.post_headers(extra).await?;
            if frame.len() > CLOSE_AFTER_BODY_BYTES && !headers.contains_key("connection") {
                headers.insert("connection", HeaderValue::from_static("close"));
            }
            let sent_authorization = headers
                .get("authorization")
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned);
            let had_session = headers.contains_key("mcp-session-id");
            let url = match lock(&self.legacy).as_ref() {
                Some(legacy) => legacy.endpoint.clone(),
                None => self.url.clone()?,
            };
            let resp = self
                .fetch(reqwest::Method::POST, url, headers, frame.clone())
                .await
                .map_err(fetch_failed)?;
            self.capture_session(resp.headers());
            let status = resp.status();
            if (200..300).contains(&status) {
                self.posted.store(true, Ordering::Release);
                return Ok(resp);
            }
            let headers = resp.headers().clone();
            let challenges: Vec<&str> = headers
                .get_all("www-authenticate")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .collect();
            let challenge = (!challenges.is_empty()).then(|| challenges.join(", "));
            let hook = lock(&self.auth_hook).clone();
            if let Some(hook) = hook
                && retries < MAX_AUTH_RETRIES
                && wants_authorization(status, challenge.as_deref())
            {
                // Read (and drop) the body so the connection can be reused, then authorize.
                resp.drain().await;
                let refusal = AuthRefusal {
                    status,
                    www_authenticate: challenge,
                    protocol_version: lock(&self.protocol_version).clone(),
                    sent_authorization,
                    retries,
                    step_ups,
                };
                let paused = deadline.map(|d| d.pause());
                let retry = hook.challenge(refusal).await;
                drop(paused);
                if retry? {
                    retries += 1;
                    step_ups += u32::from(status == 403);
                    continue;
                }
                return Err(http_error(status, "", &headers, false));
            }
            let body = resp.text().await;
            let expired = had_session
                && (status == 404
                    || (status == 400 && body.to_ascii_lowercase().contains("session")));
            if expired {
                *lock(&self.session) = None;
            }
            return Err(http_error(status, &body, &headers, expired));
        }
    }

    /// A POST whose 2xx answer carries nothing we need (notifications, replies).
    pub(super) async fn post_only(
        self: Arc<Self>,
        frame: Vec<u8>,
        timeout_ms: u64,
    ) -> Result<(), Error> {
        let ms = timeout_ms.min(MAX_TIMEOUT_MS);
        let deadline = super::exchange::ExchangeDeadline::new(ms, None);
        let exchange = async {
            let resp = self.post(Bytes::from(frame), &[], Some(&deadline)).await?;
            resp.drain().await;
            Ok(())
        };
        match deadline.run(exchange).await {
            Some(r) => r,
            None => Err(Error::NotifyTimeout { ms }),
        }
    }

    /// A POST nobody waits for (replies to the server, `notifications/cancelled`).
    pub(super) fn post_in_background(self: Arc<Self>, frame: Vec<u8>) {
        let ms = self.config.timeout_ms;
        runtime::handle().spawn(async move {
            let _ = self.post_only(frame, ms).await;
        });
    }

    /// A JSON reply: read in chunks, so that a body over the limit is refused without being held
    /// whole; `error` → the JSON-RPC error, else `result`, or the whole body when it is
    /// `whole_from` bytes or more ([`Answer::Message`]; only skimmed, as a large stdio answer is,
    /// when the skim finds an answer, not an error, to one of our requests).
    pub(super) async fn read_json(&self, mut resp: Resp, whole_from: Option<usize>) -> Reading {
        let limit = self.config.max_message_bytes;
        // Room for the whole body at once when its length is given: growing by doubling copied
        // a large body log2 times. Bounded (the limit, and 32 MiB, as the stdio reader's large
        // buffer): the room is only address space until bytes arrive, but a server may announce
        // a length it never sends.
        let length = resp
            .headers()
            .get("content-length")
            .and_then(|v| v.to_str().ok()?.parse::<usize>().ok())
            .unwrap_or(0);
        let mut body = Vec::with_capacity(length.min(limit).min(RESERVE_AT_MOST));
        while let Some(chunk) = resp
            .chunk()
            .await
            .map_err(|e| Error::Io(format!("reading the response failed: {e}")))?
        {
            if body.len() + chunk.len() > limit {
                return Err(Error::MessageTooLarge { limit });
            }
            body.extend_from_slice(&chunk);
        }
        let whole = whole_from.is_some_and(|n| body.len() >= n);
        if whole && jsonrpc::skim_answer(&body).is_some() {
            return Ok(Answer::Message(Bytes::from(body)));
        }
        // As `JSON.parse` reads it: the last of duplicate keys, `"result": null` is null. A body
        // that does not parse as it came is read again as `fetch`'s `json()` decodes it (invalid
        // UTF-8 as U+FFFD, a leading byte-order mark dropped), as it is when the skim lets it
        // through to the consumer's parse; well-formed bodies are parsed once.
        let mut decoded: Option<Vec<u8>> = None;
        let members = match jsonrpc::reply_members(&body) {
            Err(e) => {
                decoded = decoded_as_text(&body);
                decoded.as_deref().map_or(Err(e), jsonrpc::reply_members)
            }
            members => members,
        };
        let result = match members {
            Err(e) => return Err(super::invalid_json(e)),
            Ok(Some((_, Some(err)))) if jsonrpc::is_truthy(err) => return Err(Error::rpc(err)),
            Ok(Some((result, _))) => result,
            Ok(None) => None, // valid JSON that is not an object: `result` is undefined
        };
        if whole && result.is_some() {
            return Ok(Answer::Message(Bytes::from(decoded.unwrap_or(body))));
        }
        Ok(Answer::Result(result.map(RawValue::to_owned)))
    }

    /// Headers of a GET for an event stream: the configured ones, `Accept: text/event-stream`,
    /// the session, the protocol version, the authorization and, when resuming, `Last-Event-ID`.
    pub(super) async fn get_headers(
        &self,
        last_event_id: Option<&str>,
    ) -> Result<HeaderMap, Error> {
        let mut headers = lock(&self.headers).clone()?;
        headers.insert("accept", HeaderValue::from_static("text/event-stream"));
        let session = lock(&self.session).clone();
        let version = lock(&self.protocol_version).clone();
        for (name, value) in [
            ("mcp-session-id", session.as_deref()),
            ("mcp-protocol-version", version.as_deref()),
            ("last-event-id", last_event_id),
        ] {
            if let Some(v) = value.and_then(|v| HeaderValue::from_str(v).ok()) {
                headers.insert(name, v);
            }
        }
        self.add_authorization(&mut headers).await?;
        Ok(headers)
    }
}
