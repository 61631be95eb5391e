//! `NativeHttp`: the napi face of [`crate::transport::http::HttpTransport`]. `core.js` wraps it in
//! the public `HttpTransport` class, sharing the promise/abort/callback layer with stdio.

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::descriptor_text;
use super::sink::BatchSink;
use super::{as_id, millis, parse_request_line, reply_outcome};
use crate::transport::http::{HttpConfig, HttpTransport};

/// Low-level HTTP transport. Use `HttpTransport` from the package root instead.
#[napi]
pub struct NativeHttp {
    inner: HttpTransport,
    sink: Arc<BatchSink>,
}

#[napi]
impl NativeHttp {
    /// `configJson`: `{ url, headers: [[name, value]…], timeoutMs, maxMessageBytes }`;
    /// `onEvents(batch)` as for `NativeStdio`.
    #[napi(constructor)]
    pub fn new(
        config_json: String,
        on_events: Function<'_, String, Unknown<'static>>,
    ) -> Result<Self> {
        let config: HttpConfig = serde_json::from_str(&config_json)
            .map_err(|e| Error::from_reason(format!("Invalid config: {e}")))?;
        let sink = BatchSink::new(on_events)?;
        let inner = HttpTransport::new(config, sink.clone())
            .map_err(|e| Error::from_reason(e.to_string()))?;
        Ok(NativeHttp { inner, sink })
    }

    /// Marks the transport connected (no I/O).
    #[napi]
    pub fn connect(&self) {
        self.inner.connect();
    }

    /// Sends the requests of one JS tick (same line format as `NativeStdio.sendRequests`).
    #[napi]
    pub fn send_requests(&self, batch: String) -> bool {
        batch
            .split_terminator('\n')
            .filter_map(parse_request_line)
            .all(|r| {
                self.inner
                    .request(r.id, r.method_json, r.params, r.timeout_ms, r.progress)
                    .is_ok()
            })
    }

    /// Sends a notification as exchange `id`; its outcome is reported for `id`.
    #[napi]
    pub fn notify(
        &self,
        id: f64,
        method: String,
        params: Option<String>,
        timeout_ms: f64,
    ) -> Option<String> {
        self.inner
            .notify(as_id(id), &method, params.as_deref(), millis(timeout_ms))
            .err()
            .map(|e| descriptor_text(&e))
    }

    /// Starts the GET listener; its end is reported as a response for `id`. False when not
    /// connected or already listening.
    #[napi]
    pub fn start_listener(&self, id: f64) -> bool {
        self.inner.start_listener(as_id(id))
    }

    /// Abandons exchange `id` (its stream is closed) and tells the server why.
    #[napi]
    pub fn cancel(&self, id: f64, reason: String) {
        self.inner.cancel(as_id(id), &reason);
    }

    /// Answers a server→client request (as for `NativeStdio.reply`).
    #[napi]
    pub fn reply(&self, id: String, result: Option<String>, error: Option<String>) -> bool {
        self.inner
            .reply(&id, reply_outcome(&result, &error))
            .is_ok()
    }

    /// Closes (DELETE of the session, bounded); a `closed` event follows. False when not open.
    #[napi]
    pub fn close(&self) -> bool {
        self.inner.close()
    }

    /// Switches delivery of server→client requests (`stderr` is ignored: HTTP has none).
    #[napi]
    pub fn set_listeners(&self, _stderr: bool, requests: bool) {
        self.inner.set_request_listener(requests);
    }

    /// Keeps the event loop alive (`true`) while something waits for this transport.
    #[napi]
    pub fn hold(&self, env: Env, on: bool) -> Result<()> {
        self.sink.hold(&env, on)
    }

    /// The session id the server gave, if any.
    #[napi(getter)]
    pub fn session_id(&self) -> Option<String> {
        self.inner.session_id()
    }

    /// The negotiated protocol version, once `initialize` succeeded.
    #[napi(getter)]
    pub fn protocol_version(&self) -> Option<String> {
        self.inner.protocol_version()
    }
}
