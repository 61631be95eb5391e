//! An SSE reply to a POST (SPEC 3.3): events until the answer, notifications and server→client
//! requests on the way, the bounded event size, and — in the legacy era — resuming a broken
//! stream with `GET` + `Last-Event-ID` after the server's `retry:`.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use bytes::Bytes;
use serde_json::value::RawValue;

use super::post::Resp;
use super::{Answer, Inner, Reading, SSE_RESUME_ATTEMPTS, SSE_RESUME_DEFAULT_RETRY_MS, lock};
use crate::error::Error;
use crate::framing::sse::{SseDecoder, SseItem};
use crate::jsonrpc::{self, Incoming};
use crate::transport::dispatch::{dispatch, dispatch_incoming, each_value};
use crate::transport::{Era, Event, progress_target};

impl Inner {
    /// Reads an SSE reply until the answer to `id`; notifications and server→client requests on
    /// the way are handled in order. An answer of `whole_from` bytes or more is kept in its
    /// event's data ([`Answer::Message`]).
    pub(super) async fn read_sse(
        self: Arc<Self>,
        id: u64,
        whole_from: Option<usize>,
        mut resp: Resp,
    ) -> Reading {
        if resp.status() == 204 {
            return Err(Error::Parse("No response body".into()));
        }
        let mut decoder = SseDecoder::new(self.config.max_message_bytes);
        let mut resumes = 0;
        // Whether this reply's last read emitted events (which the consumer may not have taken).
        let mut emitted = false;
        loop {
            let broken = loop {
                // At most one read's events of this reply wait for the consumer (the server's
                // socket holds the rest); the events of one read go out together. A read after
                // one that emitted nothing does not wait (the answer of a one-event reply never
                // waits for other replies' events).
                if emitted {
                    crate::transport::paced(&*self.sink).await;
                }
                let chunk = match resp.chunk().await {
                    Ok(Some(chunk)) => chunk,
                    Ok(None) => break None,
                    Err(e) => {
                        break Some(Error::Io(format!("SSE stream failed: {e}")));
                    }
                };
                decoder.push(&chunk);
                let mut events = Vec::new();
                while let Some(item) = decoder.next_item() {
                    // An event over the limit was discarded as it streamed in; in a reply stream
                    // it is taken to be the answer (whose id could not be read), as in stdio.
                    let SseItem::Event(event) = item else {
                        self.sink.emit_all(events);
                        return Err(Error::MessageTooLarge {
                            limit: self.config.max_message_bytes,
                        });
                    };
                    if event.data.trim() == "[DONE]" {
                        self.sink.emit_all(events);
                        return Err(Error::NoResponse {
                            id: jsonrpc::wire_id(id, self.config.request_id_format),
                        });
                    }
                    let found = self.on_sse_data(Some(id), whole_from, event.data, &mut events);
                    if let Some(outcome) = found {
                        self.sink.emit_all(events);
                        // The server is likely ending the stream now: its end keeps the
                        // connection (read in the background, briefly).
                        resp.finish();
                        return outcome;
                    }
                }
                emitted = !events.is_empty();
                self.sink.emit_all(events);
            };
            let cut = decoder.finish().is_err();
            // Without event ids there is nothing to resume from; the modern era never resumes
            // (SPEC 9.1: the client re-issues what it safely can).
            let last_id = decoder.last_event_id().map(str::to_string);
            let Some(last_id) = last_id.filter(|_| self.era() == Era::Legacy) else {
                return Err(match (broken, cut) {
                    (Some(e), _) => e,
                    (None, true) => Error::Parse("SSE stream ended unexpectedly".into()),
                    (None, false) => Error::NoResponse {
                        id: jsonrpc::wire_id(id, self.config.request_id_format),
                    },
                });
            };
            // Resume: GET with Last-Event-ID after the server's retry (bounded attempts). A
            // refused resumption (a 401 too) is never reported as an HTTP status: the server
            // accepted this request, and the JS face's `onAuthError` retry, which acts on HTTP
            // 401/403 only, must not send it again (18.3.4: never after an accepted SSE stream).
            loop {
                if resumes >= SSE_RESUME_ATTEMPTS {
                    return Err(Error::NoResponse {
                        id: jsonrpc::wire_id(id, self.config.request_id_format),
                    });
                }
                resumes += 1;
                tokio::time::sleep(Duration::from_millis(
                    decoder.retry().unwrap_or(SSE_RESUME_DEFAULT_RETRY_MS),
                ))
                .await;
                let get = self.get(self.get_headers(Some(&last_id)).await?).await;
                match get {
                    Ok(r) if (200..300).contains(&r.status()) => {
                        resp = r;
                        break;
                    }
                    // The agent's rule (18.3.4): a refused resumption fails the request at once,
                    // after one refresh of the headers on 401/403.
                    Ok(r) if self.config.protocol_headers_win => {
                        resp = self.resume_refused(r, &last_id).await?;
                        break;
                    }
                    _ => {}
                }
            }
        }
    }

    /// A resumption answered `refused` (not 2xx), under the agent's rule: on 401/403 the
    /// owner's [`super::HeadersRefresher`] is asked once and the resumption made again with its
    /// headers; otherwise (or if that is refused too) the request fails with `HTTP <status>
    /// resuming MCP SSE stream: <body>` (`auth refresh failed` when the refresher gave none) —
    /// an error that is not an HTTP status, so that nothing sends the accepted request again.
    async fn resume_refused(&self, refused: Resp, last_id: &str) -> Result<Resp, Error> {
        let status = refused.status();
        let refresher = lock(&self.headers_refresher).clone();
        let mut refused = refused;
        if let (401 | 403, Some(refresh)) = (status, refresher) {
            refused.finish();
            if !refresh().await {
                return Err(resume_error(status, "auth refresh failed"));
            }
            match self.get(self.get_headers(Some(last_id)).await?).await {
                Ok(r) if (200..300).contains(&r.status()) => return Ok(r),
                Ok(r) => refused = r,
                Err(e) => return Err(super::post::fetch_failed(e)),
            }
        }
        let status = refused.status();
        Err(resume_error(status, &refused.text().await))
    }

    /// Handles one SSE data payload (one or more JSON values): notifications (moving the
    /// deadline of a request they report progress for) and server→client requests to `events`
    /// or answered; returns the answer to `want` if it is among them (other answers are dropped),
    /// in the payload itself when that is `whole_from` bytes or more.
    pub(super) fn on_sse_data(
        self: &Arc<Self>,
        want: Option<u64>,
        whole_from: Option<usize>,
        data: String,
        events: &mut Vec<Event>,
    ) -> Option<Reading> {
        let wanted = self.requests.load(Ordering::Relaxed);
        let mut replies = Vec::new();
        let mut found = None;
        let before = events.len();
        // A large answer to `want` is only skimmed, as a large stdio answer is.
        let whole = want.is_some() && whole_from.is_some_and(|n| data.len() >= n);
        if whole && jsonrpc::skim_answer(data.as_bytes()) == want {
            return Some(Ok(Answer::Message(Bytes::from(data.into_bytes()))));
        }
        // One message, the usual payload, is read in one pass; only a payload that is not one
        // JSON value (several, or garbage) goes value by value.
        let incoming = jsonrpc::classify_str(&data);
        if !matches!(incoming, Incoming::Malformed) {
            let got = dispatch_incoming(incoming, wanted, &mut replies, events)
                .filter(|(id, _)| Some(*id) == want);
            self.note_progress(&events[before..]);
            found = if whole && matches!(&got, Some((_, Ok(Some(_))))) {
                Some(Ok(Answer::Message(Bytes::from(data.into_bytes()))))
            } else {
                got.map(|(_, outcome)| {
                    outcome.map(|result| Answer::Result(result.map(RawValue::to_owned)))
                })
            };
        } else {
            each_value(data.as_bytes(), |value| {
                if found.is_some() {
                    return;
                }
                let before = events.len();
                if let Some((id, outcome)) = dispatch(value, wanted, &mut replies, events)
                    && Some(id) == want
                {
                    found = Some(outcome.map(Answer::Result));
                }
                self.note_progress(&events[before..]);
            });
        }
        for frame in replies {
            self.clone().post_in_background(frame);
        }
        found
    }

    /// Moves the deadline of each request that `events` report progress for.
    fn note_progress(&self, events: &[Event]) {
        for event in events {
            if let Event::Notification { method, params } = event
                && let Some(target) = progress_target(method, params.as_deref())
                && let Some(d) = lock(&self.deadlines).get(&target)
            {
                d.on_progress();
            }
        }
    }
}

/// A refused SSE resumption, as the agent words it (18.3.4).
fn resume_error(status: u16, detail: &str) -> Error {
    Error::Io(format!("HTTP {status} resuming MCP SSE stream: {detail}"))
}
