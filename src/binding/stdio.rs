//! `NativeStdio`: the napi face of [`crate::transport::stdio::StdioTransport`]. `index.js` wraps
//! it in the public `StdioTransport` class (promises, AbortSignal, assignable callbacks).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::descriptor_text;
use super::sink::BatchSink;
use crate::transport::stdio::{StdioConfig, StdioTransport};

/// Low-level stdio transport. Use `StdioTransport` from the package root instead.
#[napi]
pub struct NativeStdio {
    inner: StdioTransport,
    sink: Arc<BatchSink>,
}

fn as_id(id: f64) -> u64 {
    if id.is_finite() && id > 0.0 {
        id as u64
    } else {
        0
    }
}

#[napi]
impl NativeStdio {
    /// `onEvents(batch)` receives every event of every connection of this transport, in order, as
    /// JSON text.
    #[napi(constructor)]
    pub fn new(on_events: Function<'_, String, Unknown<'static>>) -> Result<Self> {
        Ok(NativeStdio {
            inner: StdioTransport::new(StdioConfig::new("", &[])),
            sink: BatchSink::new(on_events)?,
        })
    }

    /// Spawns the server described by `configJson` (command, args, env, cwd, maxMessageBytes,
    /// killGraceMs). Returns `null`, or an error descriptor (JSON) when it could not be started.
    #[napi]
    pub fn connect(&mut self, config_json: String) -> Option<String> {
        let config: StdioConfig = match serde_json::from_str(&config_json) {
            Ok(c) => c,
            Err(e) => {
                return Some(descriptor_text(&crate::error::Error::InvalidConfig(
                    e.to_string(),
                )));
            }
        };
        self.inner.set_config(config);
        self.inner
            .connect(self.sink.clone())
            .err()
            .map(|e| descriptor_text(&e))
    }

    /// Queues a request; returns its id (> 0), or 0 when the connection is gone (a `closed` event
    /// is then on its way).
    #[napi]
    pub fn request(&self, method: String, params: Option<String>, timeout_ms: f64) -> f64 {
        let timeout = if timeout_ms.is_nan() || timeout_ms <= 0.0 {
            0
        } else {
            timeout_ms.ceil().min(u64::MAX as f64) as u64
        };
        self.inner
            .request(&method, params.as_deref(), timeout)
            .map_or(0.0, |id| id as f64)
    }

    /// Queues a notification; false when the connection is gone.
    #[napi]
    pub fn notify(&self, method: String, params: Option<String>) -> bool {
        self.inner.notify(&method, params.as_deref()).is_ok()
    }

    /// Abandons request `id` (caller abort) and tells the server why.
    #[napi]
    pub fn cancel(&self, id: f64, reason: String) {
        self.inner.cancel(as_id(id), &reason);
    }

    /// Answers a server→client request. `id` is JSON text; exactly one of `result` / `error`
    /// (JSON text) is used, `error` first.
    #[napi]
    pub fn reply(&self, id: String, result: Option<String>, error: Option<String>) -> bool {
        let outcome = match (&error, &result) {
            (Some(e), _) => Err(e.as_str()),
            (None, Some(r)) => Ok(r.as_str()),
            (None, None) => Ok("{}"),
        };
        self.inner.reply(&id, outcome).is_ok()
    }

    /// Starts the close sequence; a `closed` event follows. False when nothing is running.
    #[napi]
    pub fn close(&mut self) -> bool {
        self.inner.close()
    }

    /// Switches delivery of stderr text and of server→client requests.
    #[napi]
    pub fn set_listeners(&self, stderr: bool, requests: bool) {
        self.inner.set_listeners(stderr, requests);
    }

    /// Keeps the event loop alive (`true`) while something waits for this transport.
    #[napi]
    pub fn hold(&self, env: Env, on: bool) -> Result<()> {
        self.sink.hold(&env, on)
    }

    /// The server's process id while connected.
    #[napi(getter)]
    pub fn pid(&self) -> Option<u32> {
        self.inner.pid()
    }
}
