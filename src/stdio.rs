//! `NativeStdio`: the napi face of [`mcp_native_core::transport::stdio::StdioTransport`]. `core.js` wraps
//! it in the public `StdioTransport` class (promises, AbortSignal, assignable callbacks).

use std::sync::Arc;

use napi::bindgen_prelude::*;
use napi_derive::napi;

use super::convert::{as_id, request_line, stdio_config};
use super::errors::{descriptor_text, guard, notified};
use super::reply_outcome;
use super::sink::{BatchSink, Delivery, batch_of};
use mcp_native_core::error::Error as McpError;
use mcp_native_core::transport::stdio::StdioTransport;
use mcp_native_core::transport::{Event, EventSink, OutgoingRequest, Transport};

/// Low-level stdio transport. Use `StdioTransport` from the package root instead.
#[napi(custom_finalize)]
pub struct NativeStdio {
    /// The current connection (a new one per `connect`).
    inner: Option<Arc<StdioTransport>>,
    sink: Arc<BatchSink>,
    /// The listener switches, applied to every connection.
    listeners: (bool, bool),
}

/// Splits a `sendRequests` batch into the requests to send and the failures of lines that could
/// not be read (a broken contract with `core.js`: those requests fail, they never vanish).
pub(super) fn read_batch(batch: &str) -> (Vec<OutgoingRequest<'_>>, Vec<Event>) {
    let mut requests = Vec::new();
    let mut failed = Vec::new();
    let mut previous = None;
    for line in batch.split_terminator('\n') {
        match request_line(previous, line) {
            Ok(r) => {
                previous = Some(r.id);
                requests.push(r);
            }
            Err(Some(id)) => {
                previous = Some(id);
                failed.push(Event::Failed {
                    id,
                    error: McpError::Internal("a queued request could not be read".into()),
                });
            }
            Err(None) => previous = None,
        }
    }
    (requests, failed)
}

#[napi]
impl NativeStdio {
    /// `onEvents(batch)` receives every event of every connection of this transport, in order, as
    /// JSON text.
    #[napi(constructor)]
    pub fn new(env: Env, on_events: Function<'_, String, Unknown<'static>>) -> Result<Self> {
        guard(&env, || {
            Ok(NativeStdio {
                inner: None,
                sink: BatchSink::new(&env, on_events)?,
                listeners: (false, false),
            })
        })
    }

    /// Spawns the server described by `configJson` (command, args, env, cwd, timeout,
    /// maxMessageBytes, killGraceMs, callerReadsStdout). Returns `null`, or an error descriptor
    /// (JSON) when the config is invalid or the server could not be started.
    #[napi]
    pub fn connect(&mut self, env: Env, config_json: String) -> Result<Option<String>> {
        guard(&env, || {
            let (config, timeout_ms) = match stdio_config(&config_json) {
                Ok(c) => c,
                Err(e) => return Ok(Some(descriptor_text(&e))),
            };
            // The previous connection, if any, is shut down with its last handle.
            self.inner = None;
            match StdioTransport::spawn(&config, self.sink.clone(), timeout_ms) {
                Ok(t) => {
                    t.set_listeners(self.listeners.0, self.listeners.1);
                    self.inner = Some(Arc::new(t));
                    Ok(None)
                }
                Err(e) => Ok(Some(descriptor_text(&e))),
            }
        })
    }

    /// Sends the requests queued by `core.js` in one tick, as one text of lines
    /// `<id> <timeoutMs> <method as JSON string><params JSON>\n`, where an empty id is the one
    /// after the line before's (`convert::request_line`; JSON text never holds a raw newline).
    /// Returns false when the connection is gone (a `closed` event is on its way).
    #[napi]
    pub fn send_requests(&self, env: Env, batch: String) -> Result<bool> {
        guard(&env, || {
            let (requests, failed) = read_batch(&batch);
            self.sink.emit_all(failed);
            Ok(self
                .inner
                .as_ref()
                .is_some_and(|t| t.send_requests(requests).is_ok()))
        })
    }

    /// Queues a notification; false when the connection is gone.
    #[napi]
    pub fn notify(&self, env: Env, method: String, params: Option<String>) -> Result<bool> {
        guard(&env, || match &self.inner {
            Some(t) => notified(&env, t.notify_now(&method, params.as_deref())),
            None => Ok(false),
        })
    }

    /// Abandons request `id` (caller abort) and tells the server why.
    #[napi]
    pub fn cancel(&self, env: Env, id: f64, reason: String) -> Result<()> {
        guard(&env, || {
            if let Some(t) = &self.inner {
                t.cancel(as_id(id), &reason);
            }
            Ok(())
        })
    }

    /// Answers a server→client request. `id` is JSON text; exactly one of `result` / `error`
    /// (JSON text) is used, `error` first.
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

    /// With `callerReadsStdout`: the stdout pipe's descriptor, once. The caller owns it (and
    /// closes it) from then on.
    #[napi]
    /// Windows: always `null` (the transport reads stdout itself there).
    pub fn take_stdout_fd(&mut self, env: Env) -> Result<Option<i32>> {
        guard(&env, || {
            #[cfg(unix)]
            {
                use std::os::fd::IntoRawFd;
                Ok(self
                    .inner
                    .as_ref()
                    .and_then(|t| t.take_stdout_fd())
                    .map(IntoRawFd::into_raw_fd))
            }
            #[cfg(not(unix))]
            Ok(None)
        })
    }

    /// With `callerReadsStdout`: decodes a chunk read from stdout; returns its events as a batch
    /// text (same format as `onEvents`).
    #[napi(ts_return_type = "string | string[]")]
    pub fn feed(&self, env: Env, chunk: &[u8]) -> Result<Delivery> {
        guard(&env, || {
            Ok(batch_of(
                self.inner
                    .as_ref()
                    .map(|t| t.feed(chunk))
                    .unwrap_or_default(),
            ))
        })
    }

    /// With `callerReadsStdout`: stdout ended; returns the last events as a batch text.
    #[napi(ts_return_type = "string | string[]")]
    pub fn feed_end(&self, env: Env) -> Result<Delivery> {
        guard(&env, || {
            Ok(batch_of(
                self.inner
                    .as_ref()
                    .map(|t| t.feed_end())
                    .unwrap_or_default(),
            ))
        })
    }

    /// With `handOverLongLines`: the reader has stopped after event 15 and fed what its runtime
    /// still delivered; the I/O thread reads the long line from here on. Its events (16 when
    /// there was nothing to hand over) as a batch text.
    #[napi(ts_return_type = "string | string[]")]
    pub fn hand_over(&self, env: Env) -> Result<Delivery> {
        guard(&env, || {
            Ok(batch_of(
                self.inner
                    .as_ref()
                    .map(|t| t.hand_over())
                    .unwrap_or_default(),
            ))
        })
    }

    /// Starts the close sequence; a `closed` event follows. False when nothing is running.
    #[napi]
    pub fn close(&mut self, env: Env) -> Result<bool> {
        guard(&env, || Ok(self.inner.as_ref().is_some_and(|t| t.close())))
    }

    /// Switches delivery of stderr text and of server→client requests.
    #[napi]
    pub fn set_listeners(&mut self, env: Env, stderr: bool, requests: bool) -> Result<()> {
        guard(&env, || {
            self.listeners = (stderr, requests);
            if let Some(t) = &self.inner {
                t.set_listeners(stderr, requests);
            }
            Ok(())
        })
    }

    /// Keeps the event loop alive (`true`) while something waits for this transport.
    #[napi]
    pub fn hold(&self, env: Env, on: bool) -> Result<()> {
        guard(&env, || self.sink.hold(&env, on))
    }

    /// The server's process id while connected.
    #[napi(getter)]
    pub fn pid(&self, env: Env) -> Result<Option<u32>> {
        guard(&env, || Ok(self.inner.as_ref().and_then(|t| t.pid())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_batch_numbers_lines_without_an_id_after_the_line_before() {
        let batch = "5 1 \"m\"{}\n 1 \"m\"{}\n 1 \"m\"oops\n 1 \"m\"{}\n9 1 \"m\"{}\n";
        let (requests, failed) = read_batch(batch);
        let ids: Vec<u64> = requests.iter().map(|r| r.id).collect();
        assert_eq!(ids, [5, 6, 8, 9]);
        assert!(matches!(failed[..], [Event::Failed { id: 7, .. }]));
        // After a line whose id cannot be read, an empty id has nothing to follow.
        let (requests, failed) = read_batch("x 1 \"m\"{}\n 1 \"m\"{}\n3 1 \"m\"{}\n");
        assert_eq!(requests.iter().map(|r| r.id).collect::<Vec<_>>(), [3]);
        assert!(failed.is_empty());
    }
}

super::errors::guarded_finalize!(NativeStdio);
