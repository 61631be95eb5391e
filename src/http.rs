//! `NativeHttp`: the napi face of [`mcp_native_core::transport::http::HttpTransport`]. `core.js` wraps it in
//! the public `HttpTransport` class, sharing the promise/abort/callback layer with stdio.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::convert::{as_id, header_list, http_config, millis};
use super::errors::{descriptor_text, guard};
use super::host::{headers_refresher, host_callback};
use super::reply_outcome;
use super::sink::BatchSink;
use super::stdio::read_batch;
use mcp_native_core::transport::http::{HeadersRefresher, HttpTransport};
use mcp_native_core::transport::{EventSink, Reply, Transport};

/// Low-level HTTP transport. Use `HttpTransport` from the package root instead.
#[napi(custom_finalize)]
pub struct NativeHttp {
    /// Built by the first `connect` (and again by a `connect` after `close`, so a changed config
    /// is honoured).
    inner: Option<HttpTransport>,
    sink: Arc<BatchSink>,
    /// The JS face's `onAuthError`, for the transport's own work (see `setHeadersRefresher`).
    refresher: Option<HeadersRefresher>,
}

#[napi]
impl NativeHttp {
    /// `onEvents(batch)` as for `NativeStdio`.
    #[napi(constructor)]
    pub fn new(env: Env, on_events: Function<'_, String, Unknown<'static>>) -> Result<Self> {
        guard(&env, || {
            Ok(NativeHttp {
                inner: None,
                sink: BatchSink::new(&env, on_events)?,
                refresher: None,
            })
        })
    }

    /// Marks the transport connected (no I/O) with `configJson` (`{ type, url, headers,
    /// timeout, maxMessageBytes }`). Returns `null`, or an error descriptor when the config is
    /// invalid.
    #[napi]
    pub fn connect(&mut self, env: Env, config_json: String) -> Result<Option<String>> {
        guard(&env, || {
            let config = match http_config(&config_json) {
                Ok(c) => c,
                Err(e) => return Ok(Some(descriptor_text(&e))),
            };
            let transport = match HttpTransport::new(config, self.sink.clone()) {
                Ok(t) => t,
                Err(e) => return Ok(Some(descriptor_text(&e))),
            };
            transport.set_headers_refresher(self.refresher.clone());
            transport.connect();
            self.inner = Some(transport);
            Ok(None)
        })
    }

    /// Sends the requests of one JS tick (same line format as `NativeStdio.sendRequests`).
    #[napi]
    pub fn send_requests(&self, env: Env, batch: String) -> Result<bool> {
        guard(&env, || {
            let Some(inner) = &self.inner else {
                return Ok(false);
            };
            let (requests, failed) = read_batch(&batch);
            self.sink.emit_all(failed);
            Ok(inner.send(requests).is_ok())
        })
    }

    /// Sends a notification as exchange `id`; its outcome is reported for `id`.
    #[napi]
    pub fn notify(
        &self,
        env: Env,
        id: f64,
        method: String,
        params: Option<String>,
        timeout_ms: f64,
    ) -> Result<Option<String>> {
        guard(&env, || {
            let Some(inner) = &self.inner else {
                return Ok(Some(descriptor_text(
                    &mcp_native_core::error::Error::NotConnected,
                )));
            };
            Ok(inner
                .notify_as(
                    as_id(id),
                    &method,
                    params.as_deref(),
                    millis(timeout_ms),
                    Reply::Event,
                )
                .err()
                .map(|e| descriptor_text(&e)))
        })
    }

    /// Replaces the configured headers (`headersJson`: the JSON of `Object.entries(headers)`) for
    /// every request from now on, with the config's checks. Returns `null`, or the refusal's
    /// descriptor (`MCP_INVALID_CONFIG`, naming the header, never its value). Never connected:
    /// nothing to replace (`null`; the next `connect` takes the config's).
    #[napi]
    pub fn set_headers(&self, env: Env, headers_json: String) -> Result<Option<String>> {
        guard(&env, || {
            let Some(inner) = &self.inner else {
                return Ok(None);
            };
            Ok(header_list(&headers_json)
                .and_then(|headers| inner.set_headers(&headers))
                .err()
                .map(|e| descriptor_text(&e)))
        })
    }

    /// Sets (`host(kind, payload) → Promise<string>`, asked `("auth", "null")` and answering
    /// `"true"` once it applied new headers with `setHeaders`) or clears (`null`) what the
    /// transport asks when an SSE resumption is refused with 401/403 (the agent's rule: then
    /// resumed once with the new headers). Kept across `connect`s.
    #[napi]
    pub fn set_headers_refresher(
        &mut self,
        env: Env,
        host: Option<Function<'_, (String, String), Promise<String>>>,
    ) -> Result<()> {
        guard(&env, || {
            let refresher = match host {
                Some(host) => Some(headers_refresher(host_callback(&env, host)?)),
                None => None,
            };
            if let Some(inner) = &self.inner {
                inner.set_headers_refresher(refresher.clone());
            }
            self.refresher = refresher;
            Ok(())
        })
    }

    /// Starts the GET listener; its end is reported as a response for `id`. False when not
    /// connected or already listening.
    #[napi]
    pub fn start_listener(&self, env: Env, id: f64) -> Result<bool> {
        guard(&env, || {
            Ok(self
                .inner
                .as_ref()
                .is_some_and(|t| t.start_listener(as_id(id))))
        })
    }

    /// Abandons exchange `id` (its stream is closed) and tells the server why.
    #[napi]
    pub fn cancel(&self, env: Env, id: f64, reason: String) -> Result<()> {
        guard(&env, || {
            if let Some(t) = &self.inner {
                t.cancel(as_id(id), &reason);
            }
            Ok(())
        })
    }

    /// Answers a server→client request (as for `NativeStdio.reply`).
    #[napi]
    pub fn reply(
        &self,
        env: Env,
        id: String,
        result: Option<String>,
        error: Option<String>,
    ) -> Result<bool> {
        guard(&env, || {
            Ok(self
                .inner
                .as_ref()
                .is_some_and(|t| t.respond(&id, reply_outcome(&result, &error)).is_ok()))
        })
    }

    /// Closes (DELETE of the session, bounded); a `closed` event follows. False when not open.
    #[napi]
    pub fn close(&self, env: Env) -> Result<bool> {
        guard(&env, || {
            Ok(self.inner.as_ref().is_some_and(HttpTransport::close))
        })
    }

    /// Switches delivery of server→client requests (`stderr` is ignored: HTTP has none).
    #[napi]
    pub fn set_listeners(&self, env: Env, _stderr: bool, requests: bool) -> Result<()> {
        guard(&env, || {
            if let Some(t) = &self.inner {
                t.set_request_listener(requests);
            }
            Ok(())
        })
    }

    /// Keeps the event loop alive (`true`) while something waits for this transport.
    #[napi]
    pub fn hold(&self, env: Env, on: bool) -> Result<()> {
        guard(&env, || self.sink.hold(&env, on))
    }

    /// The session id the server gave, if any.
    #[napi(getter)]
    pub fn session_id(&self, env: Env) -> Result<Option<String>> {
        guard(&env, || {
            Ok(self.inner.as_ref().and_then(HttpTransport::session_id))
        })
    }

    /// The negotiated protocol version, once `initialize` succeeded.
    #[napi(getter)]
    pub fn protocol_version(&self, env: Env) -> Result<Option<String>> {
        guard(&env, || {
            Ok(self
                .inner
                .as_ref()
                .and_then(HttpTransport::protocol_version))
        })
    }

    /// `{ inflight, deadlines, waiters }` as JSON: what the transport still tracks (tests check
    /// that aborted work leaves nothing behind).
    #[napi]
    pub fn stats(&self, env: Env) -> Result<String> {
        guard(&env, || {
            let stats = self.inner.as_ref().map(HttpTransport::stats);
            Ok(serde_json::to_string(&stats.unwrap_or_default()).unwrap_or_default())
        })
    }
}

super::errors::guarded_finalize!(NativeHttp);
