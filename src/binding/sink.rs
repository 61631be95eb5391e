//! Delivers transport events to JavaScript in order and in batches: events are appended to one
//! JSON array text, and a single threadsafe call is scheduled per batch, so a burst of answers
//! costs one wake-up of the JS thread and one `JSON.parse`. Raw JSON payloads are copied into the
//! text as they came from the server, never rebuilt.
//!
//! Batch format, one array per event: `[0,id,result?]` response, `[1,id,error]` failed request,
//! `[2,method,params?]` notification, `[3,id,method,params?]` server→client request,
//! `[4,text]` stderr, `[5,error]` transport error, `[6,error|null]` closed.

use std::sync::{Arc, Mutex};

use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};

use super::errors::descriptor_text;
use crate::client::{ClientEvent, ClientSink, Status as ClientStatus};
use crate::transport::{Event, EventSink};

/// The JS callback: receives a batch as JSON text. Weak (does not hold the event loop open by
/// itself); `core.js` refs it while requests are pending.
pub type EventCallback = ThreadsafeFunction<(), Unknown<'static>, String, Status, false, true>;

#[derive(Default)]
struct Batch {
    text: String,
    scheduled: bool,
}

/// The batching [`EventSink`] over one threadsafe function.
pub struct BatchSink {
    batch: Arc<Mutex<Batch>>,
    /// Notified on the JS thread each time a batch is taken (see `EventSink::backlog`).
    taken: Arc<tokio::sync::Notify>,
    /// Locked only to call it or to (un)ref it; `refer`/`unref` need `&mut`. With it, the count
    /// of holds (several faces may share one sink: a manager's servers): referenced while > 0.
    tsfn: Mutex<(EventCallback, usize)>,
}

impl BatchSink {
    /// Wraps the JS callback `on_events(batchText)`.
    pub fn new(callback: Function<'_, String, Unknown<'static>>) -> Result<Arc<Self>> {
        let batch: Arc<Mutex<Batch>> = Arc::default();
        let queue = batch.clone();
        let taken: Arc<tokio::sync::Notify> = Arc::default();
        let signal = taken.clone();
        let tsfn = callback
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |_ctx| {
                // Runs on the JS thread: take everything queued so far as one batch.
                let mut b = queue.lock().unwrap_or_else(|e| e.into_inner());
                b.scheduled = false;
                let mut text = std::mem::take(&mut b.text);
                drop(b);
                signal.notify_one();
                if text.is_empty() {
                    // Taken already (`take`).
                    text.push('[');
                }
                text.push(']');
                Ok(text)
            })?;
        Ok(Arc::new(BatchSink {
            batch,
            taken,
            tsfn: Mutex::new((tsfn, 0)),
        }))
    }

    /// Appends one event already written as JSON array text, and schedules the batch.
    fn push_raw(&self, event: &str) {
        let mut b = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        let sep = if b.text.is_empty() { '[' } else { ',' };
        b.text.push(sep);
        b.text.push_str(event);
        self.schedule(b);
    }

    fn schedule(&self, mut b: std::sync::MutexGuard<'_, Batch>) {
        if !b.scheduled {
            b.scheduled = true;
            drop(b);
            let guard = self.tsfn.lock().unwrap_or_else(|e| e.into_inner());
            guard.0.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    /// Takes the events queued so far as one batch text (on the JS thread), `None` when there
    /// are none; the delivery already scheduled then brings only what comes later.
    pub fn take(&self) -> Option<String> {
        let mut b = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        if b.text.is_empty() {
            return None;
        }
        let mut text = std::mem::take(&mut b.text);
        drop(b);
        self.taken.notify_one();
        text.push(']');
        Some(text)
    }

    /// Keeps (`true`) or stops keeping (`false`) the Node event loop alive for this sink.
    #[allow(deprecated)] // `refer`/`unref` are the documented napi_ref/unref_threadsafe_function.
    pub fn hold(&self, env: &Env, on: bool) -> Result<()> {
        let mut guard = self.tsfn.lock().unwrap_or_else(|e| e.into_inner());
        let (tsfn, holds) = &mut *guard;
        if on {
            *holds += 1;
            if *holds == 1 {
                return tsfn.refer(env);
            }
        } else if *holds > 0 {
            *holds -= 1;
            if *holds == 0 {
                return tsfn.unref(env);
            }
        }
        Ok(())
    }
}

impl EventSink for BatchSink {
    fn emit(&self, event: Event) {
        self.emit_all(vec![event]);
    }

    fn backlog(&self) -> Option<&tokio::sync::Notify> {
        let b = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        b.scheduled.then_some(&*self.taken)
    }

    fn emit_all(&self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let mut b = self.batch.lock().unwrap_or_else(|e| e.into_inner());
        for event in &events {
            let sep = if b.text.is_empty() { '[' } else { ',' };
            b.text.push(sep);
            write_event(&mut b.text, event);
        }
        self.schedule(b);
    }
}

/// Events as one batch text, `[...]`, for events returned to JS directly (not through the sink).
pub fn batch_text(events: &[Event]) -> String {
    let mut out = String::from("[");
    for (i, event) in events.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_event(&mut out, event);
    }
    out.push(']');
    out
}

fn push_json_str(out: &mut String, s: &str) {
    out.push_str(&serde_json::to_string(s).expect("string serialization"));
}

fn push_opt_raw(out: &mut String, raw: Option<&serde_json::value::RawValue>) {
    if let Some(raw) = raw {
        out.push(',');
        out.push_str(raw.get());
    }
}

fn write_event(out: &mut String, event: &Event) {
    use std::fmt::Write;
    match event {
        Event::Response { id, result } => {
            let _ = write!(out, "[0,{id}");
            push_opt_raw(out, result.as_deref());
        }
        Event::Failed { id, error } => {
            let _ = write!(out, "[1,{id},{}", descriptor_text(error));
        }
        Event::Notification { method, params } => {
            out.push_str("[2,");
            push_json_str(out, method);
            push_opt_raw(out, params.as_deref());
        }
        Event::Request { id, method, params } => {
            out.push_str("[3,");
            out.push_str(id.get());
            out.push(',');
            push_json_str(out, method);
            push_opt_raw(out, params.as_deref());
        }
        Event::Stderr(text) => {
            out.push_str("[4,");
            push_json_str(out, text);
        }
        Event::Error(error) => {
            let _ = write!(out, "[5,{}", descriptor_text(error));
        }
        Event::Closed(reason) => {
            out.push_str("[6,");
            match reason {
                Some(error) => out.push_str(&descriptor_text(error)),
                None => out.push_str("null"),
            }
        }
    }
    out.push(']');
}

/// A client event as batch text: `[7,status,error|null]` status change, `[8,generation,init]` a
/// connection (or a re-opened session) is up, `[9,error]` a reconnect attempt failed,
/// `[10,generation]` a connection was opened (take its stdout now), `[13,message]` a warning.
fn client_event_text(event: ClientEvent) -> String {
    use std::fmt::Write;
    let mut text = String::new();
    match event {
        ClientEvent::Status(status, error) => {
            let name = match status {
                ClientStatus::Idle => "idle",
                ClientStatus::Connecting => "connecting",
                ClientStatus::Connected => "connected",
                ClientStatus::Reconnecting => "reconnecting",
                ClientStatus::Closed => "closed",
            };
            let error = error.map_or_else(|| "null".into(), |e| descriptor_text(&e));
            let _ = write!(text, "[7,\"{name}\",{error}]");
        }
        ClientEvent::Connected { generation, init } => {
            let _ = write!(text, "[8,{generation},{}]", init.get());
        }
        ClientEvent::AttemptFailed(error) => {
            let _ = write!(text, "[9,{}]", descriptor_text(&error));
        }
        ClientEvent::Opened { generation } => {
            let _ = write!(text, "[10,{generation}]");
        }
        ClientEvent::Warning(message) => {
            text.push_str("[13,");
            text.push_str(&serde_json::to_string(&message).unwrap_or_else(|_| "\"\"".into()));
            text.push(']');
        }
    }
    text
}

impl ClientSink for BatchSink {
    fn client_event(&self, event: ClientEvent) {
        self.push_raw(&client_event_text(event));
    }
}

impl BatchSink {
    /// Appends `text` (one event) wrapped for server `tag` of a manager: `[11,tag,event]`.
    pub fn push_tagged(&self, tag: u32, text: &str) {
        self.push_raw(&format!("[11,{tag},{text}]"));
    }

    /// Appends one manager event already written as JSON array text.
    pub fn push_event(&self, text: &str) {
        self.push_raw(text);
    }
}

/// The sink of one managed server: its events go into the manager's batch, tagged.
pub struct TaggedSink {
    /// The server's tag.
    pub tag: u32,
    /// The manager's sink.
    pub batch: Arc<BatchSink>,
}

impl EventSink for TaggedSink {
    fn emit_all(&self, events: Vec<Event>) {
        for event in &events {
            let mut text = String::new();
            write_event(&mut text, event);
            self.batch.push_tagged(self.tag, &text);
        }
    }

    fn backlog(&self) -> Option<&tokio::sync::Notify> {
        self.batch.backlog()
    }
}

impl ClientSink for TaggedSink {
    fn client_event(&self, event: ClientEvent) {
        self.batch.push_tagged(self.tag, &client_event_text(event));
    }
}
