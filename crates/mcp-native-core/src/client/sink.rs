//! What the client does with the events of one of its connections before passing them on: it
//! answers the server's requests (or forwards them to whoever answers), notices the end of the
//! connection (reconnecting when asked to), and passes everything else to its own sink.

use std::sync::{Arc, OnceLock, Weak};

use serde_json::Value;

use super::conn::Life;
use super::options::{Handler, HandlerError};
use super::{ClientSink, Inner, Status, lock, reconnect};
use crate::runtime;
use crate::transport::{Event, EventSink, Transport};

/// The sink of one connection (one generation) of a client.
pub(crate) struct ConnSink {
    pub(crate) client: Weak<Inner>,
    pub(crate) generation: u64,
    pub(crate) life: Arc<Life>,
    /// The connection's transport, to answer requests (weak: the transport owns this sink).
    pub(crate) transport: OnceLock<Weak<dyn Transport>>,
    /// The client's own sink (held here too, for its pacing).
    pub(crate) downstream: Arc<dyn ClientSink>,
}

impl ConnSink {
    fn transport(&self) -> Option<Arc<dyn Transport>> {
        self.transport.get().and_then(Weak::upgrade)
    }

    /// The client's part: acts on what concerns it; returns what goes on, in order.
    pub(crate) fn filter(&self, events: Vec<Event>) -> Vec<Event> {
        let Some(client) = self.client.upgrade() else {
            return events;
        };
        if lock(&client.state).generation != self.generation {
            // A connection the client has moved on from: nobody waits for its events (its
            // requests failed when it closed). Only its end matters, to who waits for it.
            if events.iter().any(|e| matches!(e, Event::Closed(_))) {
                self.life.mark_closed();
            }
            return Vec::new();
        }
        let mut out = Vec::with_capacity(events.len());
        for event in events {
            match event {
                Event::Request { id, method, params } => {
                    let handler = lock(&client.handler).clone();
                    match handler {
                        Handler::Forward => out.push(Event::Request { id, method, params }),
                        Handler::Rust(h) => {
                            let Some(transport) = self.transport() else {
                                continue;
                            };
                            let params: Option<Value> =
                                params.and_then(|p| serde_json::from_str(p.get()).ok());
                            let id = id.get().to_owned();
                            let answer = h.handle(method, params);
                            runtime::handle().spawn(async move {
                                let reply = answer.await;
                                respond(&*transport, &id, reply);
                            });
                        }
                        Handler::Default => {
                            let Some(transport) = self.transport() else {
                                continue;
                            };
                            // The default capabilities declare `roots`: say there are none
                            // rather than refuse the request.
                            let roots = method == "roots/list"
                                && client
                                    .options
                                    .capabilities
                                    .get("roots")
                                    .is_some_and(|r| !r.is_null());
                            let reply = if roots {
                                Ok(serde_json::json!({ "roots": [] }))
                            } else {
                                Err(HandlerError {
                                    code: -32601,
                                    message: "Method not found".into(),
                                })
                            };
                            respond(&*transport, id.get(), reply);
                        }
                    }
                }
                Event::Closed(reason) => {
                    self.life.mark_closed();
                    let current = {
                        let st = lock(&client.state);
                        st.generation == self.generation && st.status == Status::Connected
                    };
                    out.push(Event::Closed(reason.clone()));
                    if current {
                        reconnect::on_drop(&client, self.generation, reason);
                    }
                }
                other => out.push(other),
            }
        }
        out
    }
}

/// Sends a handler's answer (or refusal) to the server.
fn respond(transport: &dyn Transport, id: &str, reply: Result<Value, HandlerError>) {
    let _ = match reply {
        Ok(result) => transport.respond(id, Ok(&result.to_string())),
        Err(e) => {
            let error = serde_json::json!({ "code": e.code, "message": e.message }).to_string();
            transport.respond(id, Err(&error))
        }
    };
}

impl EventSink for ConnSink {
    fn emit_all(&self, events: Vec<Event>) {
        let out = self.filter(events);
        if !out.is_empty() {
            self.downstream.emit_all(out);
        }
    }

    /// The pacing of the client's own sink (the JavaScript batch).
    fn backlog(&self) -> Option<&tokio::sync::Notify> {
        self.downstream.backlog()
    }

    fn raw_answers_from(&self) -> Option<usize> {
        self.downstream.raw_answers_from()
    }
}
