//! `NativeStdio`: the napi face of [`crate::transport::stdio::StdioTransport`]. `core.js` wraps
//! it in the public `StdioTransport` class (promises, AbortSignal, assignable callbacks).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::errors::descriptor_text;
use super::sink::{BatchSink, batch_text};
use super::{as_id, parse_request_line, reply_outcome};
use crate::transport::OutgoingRequest;
use crate::transport::stdio::{StdioConfig, StdioTransport};

/// Low-level stdio transport. Use `StdioTransport` from the package root instead.
#[napi]
pub struct NativeStdio {
    inner: StdioTransport,
    sink: Arc<BatchSink>,
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

    /// Sends the requests queued by `core.js` in one tick, as one text of lines
    /// `<id> <timeoutMs> <method as JSON string><params JSON>\n` (JSON text never holds a raw
    /// newline). Returns false when the connection is gone (a `closed` event is on its way).
    #[napi]
    pub fn send_requests(&self, batch: String) -> bool {
        let requests: Vec<OutgoingRequest<'_>> = batch
            .split_terminator('\n')
            .filter_map(parse_request_line)
            .collect();
        self.inner.send_requests(&requests).is_ok()
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
        self.inner
            .reply(&id, reply_outcome(&result, &error))
            .is_ok()
    }

    /// With `callerReadsStdout`: the stdout pipe's descriptor, once. The caller owns it (and
    /// closes it) from then on.
    #[napi]
    pub fn take_stdout_fd(&mut self) -> Option<i32> {
        use std::os::fd::IntoRawFd;
        self.inner.take_stdout_fd().map(IntoRawFd::into_raw_fd)
    }

    /// With `callerReadsStdout`: decodes a chunk read from stdout; returns its events as a batch
    /// text (same format as `onEvents`).
    #[napi]
    pub fn feed(&self, chunk: &[u8]) -> String {
        batch_text(&self.inner.feed(chunk))
    }

    /// With `callerReadsStdout`: stdout ended; returns the last events as a batch text.
    #[napi]
    pub fn feed_end(&self) -> String {
        batch_text(&self.inner.feed_end())
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
