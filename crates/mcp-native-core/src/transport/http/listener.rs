//! The GET stream of server-initiated messages (SPEC 3.3 `startSSEListener`, legacy era): it
//! reconnects with `Last-Event-ID` after a drop, honouring `retry:`, with capped exponential
//! backoff and jitter, and gives up after [`LISTENER_MAX_FAILURES`] consecutive failures.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;

use super::post::Resp;
use super::{Inner, LISTENER_BASE_DELAY, LISTENER_MAX_DELAY, LISTENER_MAX_FAILURES};
use crate::error::Error;
use crate::framing::sse::{SseDecoder, SseItem};
use crate::sync::lock;
use crate::transport::Event;

impl Inner {
    /// Reads server-initiated messages until the server refuses the stream (405 and friends),
    /// too many consecutive failures, or the transport closes. A stream that ends without any
    /// event counts as a failure, so a server that keeps closing cannot make it loop.
    pub(super) async fn listen(self: &Arc<Self>) {
        let mut failures = 0u32;
        let mut last_id: Option<String> = None;
        let mut retry: Option<u64> = None;
        // Whether a stream was open before (the GET now is a resumption).
        let mut streamed = false;
        while self.open.load(Ordering::Acquire) {
            let Ok(headers) = self.get_headers(last_id.as_deref()).await else {
                return;
            };
            let mut got_event = false;
            match self.get(headers).await {
                Ok(resp) if !(200..300).contains(&resp.status()) => {
                    // 405 and friends; a resumption refused is the stream lost.
                    if streamed && self.config.close_on_stream_loss {
                        self.stream_lost("SSE listener resume refused");
                    }
                    return;
                }
                // Under the agent's rule, a 2xx that is not an event stream (a server answering GET
                // with 202 or JSON) has no stream to lose: the listener ends quietly (a resumption
                // answered so is the stream lost).
                Ok(resp)
                    if self.config.close_on_stream_loss
                        && !resp
                            .headers()
                            .get("content-type")
                            .and_then(|v| v.to_str().ok())
                            .is_some_and(|v| v.contains("text/event-stream")) =>
                {
                    if streamed {
                        self.stream_lost("SSE listener resume refused");
                    }
                    return;
                }
                Ok(mut resp) => {
                    streamed = true;
                    let mut decoder = SseDecoder::new(self.config.max_message_bytes);
                    let mut emitted = false;
                    loop {
                        // At most one read's events of this stream wait for the consumer (the
                        // server's socket holds the rest).
                        if emitted {
                            crate::transport::paced(&*self.sink).await;
                        }
                        match resp.chunk().await {
                            Ok(Some(chunk)) => {
                                decoder.push(&chunk);
                                let mut events = Vec::new();
                                while let Some(item) = decoder.next_item() {
                                    if let SseItem::Event(e) = item {
                                        got_event = true;
                                        self.on_sse_data(None, None, e.data, &mut events);
                                    }
                                }
                                emitted = !events.is_empty();
                                self.sink.emit_all(events);
                                last_id = decoder.last_event_id().map(str::to_string).or(last_id);
                                retry = decoder.retry().or(retry);
                            }
                            Ok(None) => break,
                            Err(e) => {
                                self.listener_failed(e);
                                break;
                            }
                        }
                    }
                }
                Err(e) => {
                    if streamed && self.config.close_on_stream_loss {
                        return self.stream_lost(&format!("SSE listener: {e}"));
                    }
                    self.listener_failed(e)
                }
            }
            // The agent's rule (18.3.4): a stream that ends with nothing to resume from, or whose
            // resumption delivered nothing, is the connection lost: the transport closes, so that
            // its owner (the manager's reconnect policy) takes over.
            if streamed && self.config.close_on_stream_loss && (last_id.is_none() || !got_event) {
                return self.stream_lost("SSE stream ended");
            }
            failures = if got_event { 0 } else { failures + 1 };
            if failures >= LISTENER_MAX_FAILURES {
                return;
            }
            tokio::time::sleep(reconnect_delay(failures, retry)).await;
        }
    }

    /// GETs the event stream (the listener's, or an SSE reply's resumption): through the lean
    /// client when it serves this server (a warm pooled connection: the stream is open before
    /// the requests that follow the handshake need it — a server may send them an elicitation
    /// there; and it closes with the transport), else through reqwest.
    pub(super) async fn get(&self, headers: reqwest::header::HeaderMap) -> Result<Resp, String> {
        let url = self.url.clone().map_err(|e| e.to_string())?;
        self.fetch(reqwest::Method::GET, url, headers, Bytes::new())
            .await
    }

    /// The GET stream is gone for good: reported, and the transport closes as a stdio server's
    /// exit closes stdio (its owner sees the connection end).
    fn stream_lost(self: &Arc<Self>, why: &str) {
        if self.open.load(Ordering::Acquire) {
            self.sink.emit(Event::Error(Error::Io(why.to_string())));
            // Not through the listener handle: this task is the listener.
            lock(&self.listener).take();
            self.shut_down(true);
        }
    }

    fn listener_failed(&self, e: String) {
        if self.open.load(Ordering::Acquire) {
            self.sink
                .emit(Event::Error(Error::Io(format!("SSE listener: {e}"))));
        }
    }
}

/// The wait before reconnect number `failures` (0 after a stream that delivered events): the
/// server's `retry:` if given, else exponential from [`LISTENER_BASE_DELAY`]; capped at
/// [`LISTENER_MAX_DELAY`]; with ±25% jitter so that many clients do not reconnect in step.
pub(crate) fn reconnect_delay(failures: u32, retry_ms: Option<u64>) -> Duration {
    let base = match retry_ms {
        Some(ms) => Duration::from_millis(ms),
        None => LISTENER_BASE_DELAY.saturating_mul(1u32 << failures.min(16)),
    }
    .min(LISTENER_MAX_DELAY);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let jitter = 0.75 + (nanos % 1000) as f64 / 2000.0;
    base.mul_f64(jitter)
}
