//! The legacy (2024-11-05) HTTP+SSE protocol, for `type: "sse"` servers that refuse the first
//! POST (SPEC 3.3): `GET url`, wait for the `endpoint` event, refuse an endpoint on another
//! origin, POST every message there and read every answer and notification from the GET stream.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use bytes::Bytes;
use tokio::sync::oneshot;
use tokio::task::AbortHandle;

use super::exchange::{ExchangeDeadline, Plan};
use super::post::{Resp, http_error};
use super::{Inner, lock};
use crate::error::Error;
use crate::framing::sse::{SseDecoder, SseItem};
use crate::runtime;
use crate::transport::dispatch::each_value;
use crate::transport::{Event, Outcome};

/// The legacy connection: messages are POSTed to `endpoint`; every answer and notification comes
/// on the GET stream, read by `reader`.
pub(crate) struct Legacy {
    pub(super) endpoint: reqwest::Url,
    waiters: Mutex<HashMap<u64, oneshot::Sender<Outcome>>>,
    reader: Mutex<Option<AbortHandle>>,
}

impl Legacy {
    /// Requests still waiting for their answer.
    pub(super) fn waiting(&self) -> usize {
        lock(&self.waiters).len()
    }
}

/// Removes a legacy waiter when its request ends or is aborted.
struct WaiterEntry<'a> {
    legacy: &'a Legacy,
    id: u64,
}

impl Drop for WaiterEntry<'_> {
    fn drop(&mut self) {
        lock(&self.legacy.waiters).remove(&self.id);
    }
}

impl Inner {
    /// Falls back to the legacy HTTP+SSE protocol: GET the stream, wait for its `endpoint`
    /// event, accept it only on the same origin, and keep reading the stream in the background.
    pub(super) async fn start_legacy(self: Arc<Self>) -> Result<Arc<Legacy>, Error> {
        let base = self.url.clone()?;
        let mut resp = self
            .get(self.get_headers(None).await?)
            .await
            .map_err(super::post::fetch_failed)?;
        if !(200..300).contains(&resp.status()) {
            let status = resp.status();
            let headers = resp.headers().clone();
            let body = resp.text().await;
            return Err(http_error(status, &body, &headers, false));
        }
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let endpoint = 'found: loop {
            let chunk = resp
                .chunk()
                .await
                .map_err(|e| Error::Io(format!("SSE stream failed: {e}")))?;
            let Some(chunk) = chunk else {
                return Err(Error::Parse("SSE stream ended unexpectedly".into()));
            };
            decoder.push(&chunk);
            while let Some(item) = decoder.next_item() {
                if let SseItem::Event(e) = item
                    && e.event == "endpoint"
                {
                    break 'found e.data;
                }
            }
        };
        let endpoint = base
            .join(endpoint.trim())
            .map_err(|e| Error::Parse(format!("Invalid legacy SSE endpoint: {e}")))?;
        if endpoint.origin() != base.origin() {
            return Err(Error::Parse(format!(
                "Legacy SSE endpoint on another origin refused: {endpoint}"
            )));
        }
        let legacy = Arc::new(Legacy {
            endpoint,
            waiters: Mutex::new(HashMap::new()),
            reader: Mutex::new(None),
        });
        let inner = self.clone();
        let reading = legacy.clone();
        let task = runtime::handle()
            .spawn(async move { inner.read_legacy(&reading, resp, decoder).await });
        *lock(&legacy.reader) = Some(task.abort_handle());
        *lock(&self.legacy) = Some(legacy.clone());
        Ok(legacy)
    }

    /// Reads the legacy GET stream: answers go to their waiters, the rest as on an SSE reply.
    async fn read_legacy(
        self: &Arc<Self>,
        legacy: &Legacy,
        mut resp: Resp,
        mut decoder: SseDecoder,
    ) {
        loop {
            let mut events = Vec::new();
            while let Some(item) = decoder.next_item() {
                let SseItem::Event(e) = item else { continue };
                each_value(e.data.as_bytes(), |value| {
                    if let Some((id, outcome)) = self.legacy_message(value, &mut events)
                        && let Some(waiter) = lock(&legacy.waiters).remove(&id)
                    {
                        let _ = waiter.send(outcome);
                    }
                });
            }
            // At most one read's events wait for the consumer (the server's socket holds the
            // rest); a read that emitted nothing does not wait for other sources' events.
            let emitted = !events.is_empty();
            self.sink.emit_all(events);
            if emitted {
                crate::transport::paced(&*self.sink).await;
            }
            match resp.chunk().await {
                Ok(Some(chunk)) => decoder.push(&chunk),
                _ => break,
            }
        }
        // The stream is gone: nothing can answer any more.
        for (_, waiter) in lock(&legacy.waiters).drain() {
            let _ = waiter.send(Err(Error::closed()));
        }
        // Still this transport's connection (not one a close and a new connect replaced)?
        let current = lock(&self.legacy)
            .as_ref()
            .is_some_and(|l| std::ptr::eq(&**l, legacy));
        if current && self.open.load(std::sync::atomic::Ordering::Acquire) {
            self.sink
                .emit(Event::Error(Error::Io("Legacy SSE stream ended".into())));
            // The server dropped the stream (it restarted, or forgot the session): nothing can
            // answer on this connection any more, and its endpoint answers 404. It closes as a
            // stdio server's exit closes stdio, so that a reconnecting client starts again.
            self.shut_down(true);
        }
    }

    /// One message of the legacy stream; returns an answer for the waiters.
    fn legacy_message(
        self: &Arc<Self>,
        value: &[u8],
        events: &mut Vec<Event>,
    ) -> Option<(u64, Outcome)> {
        let wanted = self.requests.load(std::sync::atomic::Ordering::Relaxed);
        let mut replies = Vec::new();
        let answer = crate::transport::dispatch::dispatch(value, wanted, &mut replies, events);
        for frame in replies {
            self.clone().post_in_background(frame);
        }
        answer
    }

    /// One request over the legacy protocol: POST to the endpoint, the answer from the stream.
    pub(super) async fn exchange_legacy(
        self: &Arc<Self>,
        legacy: &Legacy,
        plan: &Plan,
        frame: Bytes,
        deadline: &ExchangeDeadline,
    ) -> Outcome {
        let (tx, rx) = oneshot::channel();
        lock(&legacy.waiters).insert(plan.id, tx);
        let _waiter = WaiterEntry {
            legacy,
            id: plan.id,
        };
        let outcome = deadline
            .run(async {
                let resp = self.post(frame, &plan.headers, Some(deadline)).await?;
                resp.drain().await;
                rx.await.unwrap_or_else(|_| Err(Error::closed()))
            })
            .await;
        outcome.unwrap_or_else(|| Err(self.request_timed_out(plan, deadline)))
    }

    /// Ends the legacy connection, if any.
    pub(super) fn stop_legacy(&self) {
        if let Some(legacy) = lock(&self.legacy).take()
            && let Some(task) = lock(&legacy.reader).take()
        {
            task.abort();
        }
    }
}
