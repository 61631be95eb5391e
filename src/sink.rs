//! Delivers transport events to JavaScript in order and in batches: events are appended to one
//! JSON array text, and a single threadsafe call is scheduled per batch, so a burst of answers
//! costs one wake-up of the JS thread and one `JSON.parse`. Raw JSON payloads are copied into the
//! text as they came from the server, never rebuilt. A large answer ([`Event::RawAnswer`]) is not
//! copied into the text at all: it crosses as a string of its own — an external Latin-1 string
//! over the bytes read when it is ASCII, so not copied at all — for one `JSON.parse` in JS.
//!
//! Batch format, one array per event, whose first member is its [`EventKind`] (defined here
//! once; JavaScript reads the numbers from the addon as `EventKind`, never retyped): `[Result,
//! id,result?]` response, `[Failed,id,error]` failed request, `[Notification,method,params?]`,
//! `[Request,id,method,params?]` server→client request, `[Stderr,text]`, `[Error,error]`
//! transport error, `[Closed,error|null]`, `[RawAnswer,id,k]` the answer to `id` is the batch's
//! raw message `k` (below); a client's and a manager's kinds are listed with [`EventKind`].
//!
//! A batch reaches JS as its text, or, when it carries raw messages, as an array: the text, then
//! raw message 0, 1, ….

use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use napi_derive::napi;

use super::errors::descriptor_text;
use mcp_native_core::client::{ClientEvent, ClientSink, Status as ClientStatus};
use mcp_native_core::jsonrpc::long_strings::{Split, Step, Text, split_long_strings};
use mcp_native_core::sync::Locked;
use mcp_native_core::transport::{Event, EventSink};

/// The kind of an event crossing to JavaScript: the first member of its array in a batch.
#[napi]
pub enum EventKind {
    /// `[Result,id,result?]`: the answer to request `id`.
    Result = 0,
    /// `[Failed,id,error]`: request `id` failed (an error descriptor).
    Failed = 1,
    /// `[Notification,method,params?]` from the server.
    Notification = 2,
    /// `[Request,id,method,params?]`: a server→client request.
    Request = 3,
    /// `[Stderr,text]`: a line of the server's stderr.
    Stderr = 4,
    /// `[Error,error]`: a transport error.
    Error = 5,
    /// `[Closed,error|null]`: the transport closed.
    Closed = 6,
    /// `[ClientStatus,status,error|null]`: a client's status changed.
    ClientStatus = 7,
    /// `[ClientConnected,generation,init]`: a client's connection (or a re-opened session) is up.
    ClientConnected = 8,
    /// `[ClientAttemptFailed,error]`: a client's reconnect attempt failed.
    ClientAttemptFailed = 9,
    /// `[ClientOpened,generation]`: a client's connection was opened (take its stdout now).
    ClientOpened = 10,
    /// `[Server,tag,event]`: an event of a manager's server `tag`.
    Server = 11,
    /// `[Manager,name,…]`: a manager's own event (src/manager.rs).
    Manager = 12,
    /// `[ClientWarning,message]`: a client's warning.
    ClientWarning = 13,
    /// `[RawAnswer,id,k,tag?,paths?]`: the answer to `id` is the batch's raw message `k`.
    RawAnswer = 14,
    /// `[CallerStops]`: a long line is arriving: stop reading stdout, then hand it over.
    CallerStops = 15,
    /// `[CallerReads]`: read stdout again.
    CallerReads = 16,
}

impl EventKind {
    /// The number written for this kind.
    pub const fn n(self) -> u8 {
        self as u8
    }
}

/// Answers of this size or more cross unparsed ([`Event::RawAnswer`]). Below it, the batch text
/// is cheaper (one `JSON.parse` for many answers); above it, the copies into the text, its
/// decoding and the parse of the copy cost more than a string of its own (measured: `npm run bench`,
/// large section).
pub const RAW_ANSWER_BYTES: usize = 64 * 1024;

/// String values of a raw answer this long or longer cross as strings of their own, not through
/// its `JSON.parse` ([`split_long_strings`]): below it, the copy `JSON.parse` makes is cheaper
/// than an external string and putting it in place.
const LONG_STRING_BYTES: usize = 16 * 1024;

/// A raw answer is split only when at most this much of it is left to `JSON.parse`: the walk
/// that finds the strings then costs far less than the parse it saves.
const MAX_SKELETON_BYTES: usize = 256 * 1024;

/// The placeholders' tag, random per process: a server cannot forge a placeholder.
fn tag() -> &'static str {
    static TAG: OnceLock<String> = OnceLock::new();
    TAG.get_or_init(|| {
        use std::hash::{BuildHasher, Hasher};
        let random = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        format!("{random:016x}")
    })
}

fn path_json(path: &[Step]) -> Vec<serde_json::Value> {
    path.iter()
        .map(|step| match step {
            Step::Key(key) => serde_json::Value::String(key.clone()),
            Step::Index(i) => serde_json::Value::from(*i),
        })
        .collect()
}

/// One batch: events as JSON array text (without its closing `]`), and the raw messages its
/// `[RawAnswer,id,k]` events refer to.
#[derive(Default)]
pub struct Delivery {
    text: String,
    raws: Vec<Raw>,
}

/// A string of a batch besides its text: a large answer, its skeleton, or one of its long strings.
enum Raw {
    /// UTF-8 (`false`) or Latin-1 (`true`: ASCII, or a long string's characters below U+0100).
    Bytes(Bytes, bool),
    /// A long string with characters from U+0100 up.
    Utf16(Vec<u16>),
}

impl Delivery {
    fn is_empty(&self) -> bool {
        self.text.is_empty()
    }

    /// Starts the next element of the batch array.
    fn separate(&mut self) {
        self.text.push(if self.text.is_empty() { '[' } else { ',' });
    }

    /// Appends one event already written as JSON array text.
    fn push_text(&mut self, event: &str) {
        self.separate();
        self.text.push_str(event);
    }

    fn push_event(&mut self, event: Ready) {
        self.separate();
        write_event(self, event);
    }

    /// The batch as handed over: the text closed with `]` (`[]` when empty).
    fn finish(mut self) -> Self {
        if self.text.is_empty() {
            self.text.push('[');
        }
        self.text.push(']');
        self
    }
}

impl ToNapiValue for Delivery {
    unsafe fn to_napi_value(env: sys::napi_env, val: Self) -> Result<sys::napi_value> {
        if val.raws.is_empty() {
            return unsafe { String::to_napi_value(env, val.text) };
        }
        let mut array = std::ptr::null_mut();
        check_status!(unsafe {
            sys::napi_create_array_with_length(env, val.raws.len() + 1, &mut array)
        })?;
        let text = unsafe { String::to_napi_value(env, val.text)? };
        check_status!(unsafe { sys::napi_set_element(env, array, 0, text) })?;
        for (k, raw) in val.raws.into_iter().enumerate() {
            let string = match raw {
                Raw::Bytes(message, latin1) => unsafe { raw_string(env, message, latin1)? },
                Raw::Utf16(units) => unsafe { utf16_string(env, units)? },
            };
            check_status!(unsafe { sys::napi_set_element(env, array, k as u32 + 1, string) })?;
        }
        Ok(array)
    }
}

/// `node_api_create_external_string_latin1` and `_utf16` (Node ≥ 20.4, Bun), of characters `C`.
/// Looked up at run time: where the host lacks them, strings are copied instead.
type ExternalString<C> = unsafe extern "C" fn(
    sys::napi_env,
    *mut C,
    usize,
    Option<Finalize>,
    *mut std::ffi::c_void,
    *mut sys::napi_value,
    *mut bool,
) -> sys::napi_status;

type Finalize = unsafe extern "C" fn(sys::napi_env, *mut std::ffi::c_void, *mut std::ffi::c_void);

/// The host's external-string maker `name`, looked up once (into `found`): `None` where the host
/// lacks it.
fn host_maker<C>(
    found: &'static OnceLock<Option<ExternalString<C>>>,
    name: &std::ffi::CStr,
) -> Option<ExternalString<C>> {
    *found.get_or_init(|| {
        let f = host_symbol(name);
        // SAFETY: a non-null result is the host's function of that name, which has this
        // signature (js_native_api.h).
        (!f.is_null())
            .then(|| unsafe { std::mem::transmute::<*mut std::ffi::c_void, ExternalString<C>>(f) })
    })
}

/// The address of the host's exported function `name`, or null.
#[cfg(unix)]
fn host_symbol(name: &std::ffi::CStr) -> *mut std::ffi::c_void {
    // SAFETY: dlsym with a NUL-terminated name.
    unsafe { libc::dlsym(libc::RTLD_DEFAULT, name.as_ptr()) }
}

/// Windows: the host executable exports N-API (node.exe, bun.exe), as napi-rs finds it too.
#[cfg(windows)]
fn host_symbol(name: &std::ffi::CStr) -> *mut std::ffi::c_void {
    use windows_sys::Win32::System::LibraryLoader::{GetModuleHandleW, GetProcAddress};
    // SAFETY: the module of the running executable (null name: never fails while it runs), and
    // a NUL-terminated name.
    unsafe {
        let host = GetModuleHandleW(std::ptr::null());
        GetProcAddress(host, name.as_ptr().cast())
            .map_or(std::ptr::null_mut(), |f| f as *mut std::ffi::c_void)
    }
}

fn external_latin1() -> Option<ExternalString<std::ffi::c_char>> {
    static FOUND: OnceLock<Option<ExternalString<std::ffi::c_char>>> = OnceLock::new();
    host_maker(&FOUND, c"node_api_create_external_string_latin1")
}

fn external_utf16() -> Option<ExternalString<u16>> {
    static FOUND: OnceLock<Option<ExternalString<u16>>> = OnceLock::new();
    host_maker(&FOUND, c"node_api_create_external_string_utf16")
}

/// What an external string is made over, and the bytes of it the engine was told of.
struct Owned<T> {
    owner: T,
    reported: i64,
}

/// Drops what an external string was made over (the engine is done with it), and takes its
/// bytes back from the engine's count of memory held outside its heap.
unsafe extern "C" fn drop_owner<T>(
    env: sys::napi_env,
    _data: *mut std::ffi::c_void,
    hint: *mut std::ffi::c_void,
) {
    super::errors::no_unwind("an external string's finalizer", || {
        let owned = unsafe { Box::from_raw(hint.cast::<Owned<T>>()) };
        // Node passes no env once the environment is gone (a worker that ended holding the
        // string): its count went with it.
        if owned.reported != 0 && !env.is_null() {
            let mut total = 0;
            // SAFETY: a basic finalizer may adjust the count (js_native_api.h: node_api_basic_env).
            unsafe { sys::napi_adjust_external_memory(env, -owned.reported, &mut total) };
        }
    });
}

/// An external string over the `len` characters at `chars`, which `owner` holds (heap data,
/// which does not move when the owner is boxed). `Err(owner)` where the host cannot make one:
/// the caller copies instead.
///
/// # Safety
/// `chars` points at `len` characters owned by `owner`, unchanged while it lives.
unsafe fn external<T, C>(
    env: sys::napi_env,
    create: Option<ExternalString<C>>,
    owner: T,
    chars: *mut C,
    len: usize,
) -> std::result::Result<sys::napi_value, T> {
    let Some(create) = create else {
        return Err(owner);
    };
    // The engine holds these bytes until it collects the string: told of them, it counts them
    // when it decides to collect (else a host that makes little garbage of its own keeps every
    // large answer it ever had). Told before the string exists, so that the finalizer, which
    // takes them back, may run at any time (at once when the engine copies). The count is the
    // string's own bytes: a long string cut from a line of its own keeps that whole line alive.
    let bytes = (len * std::mem::size_of::<C>()) as i64;
    let mut total = 0;
    // SAFETY: a plain count on the JS thread.
    unsafe { sys::napi_adjust_external_memory(env, bytes, &mut total) };
    let hint = Box::into_raw(Box::new(Owned {
        owner,
        reported: bytes,
    }));
    let (mut out, mut copied) = (std::ptr::null_mut(), false);
    // SAFETY: the characters stay alive and unchanged until `drop_owner::<T>` frees their owner
    // (the engine calls it when done with the string, or at once when it copied them); `hint`
    // is not touched after the call unless it failed.
    let status = unsafe {
        create(
            env,
            chars,
            len,
            Some(drop_owner::<T>),
            hint.cast(),
            &mut out,
            &mut copied,
        )
    };
    if status == sys::Status::napi_ok {
        return Ok(out);
    }
    // Not created: the finalizer never runs; the owner and its count are ours again.
    unsafe { sys::napi_adjust_external_memory(env, -bytes, &mut total) };
    Err(unsafe { Box::from_raw(hint) }.owner)
}

/// A long string of UTF-16 code units as a JS string: external (no copy) where the host can,
/// else copied.
unsafe fn utf16_string(env: sys::napi_env, mut units: Vec<u16>) -> Result<sys::napi_value> {
    let (ptr, len) = (units.as_mut_ptr(), units.len());
    // SAFETY: the units are the Vec's, which is the owner.
    let units = match unsafe { external(env, external_utf16(), units, ptr, len) } {
        Ok(string) => return Ok(string),
        Err(units) => units,
    };
    let mut out = std::ptr::null_mut();
    check_status!(unsafe {
        sys::napi_create_string_utf16(env, units.as_ptr(), units.len() as isize, &mut out)
    })?;
    Ok(out)
}

/// One raw message as a JS string: Latin-1 (ASCII, or a long string's decoded characters) as
/// an external string (no copy, no decoding), else decoded from UTF-8 (invalid sequences become
/// U+FFFD, as a JS reader decodes them).
unsafe fn raw_string(env: sys::napi_env, message: Bytes, latin1: bool) -> Result<sys::napi_value> {
    let message = if latin1 {
        let (ptr, len) = (message.as_ptr().cast_mut().cast(), message.len());
        // SAFETY: the bytes are the `Bytes`' (shared, never written), which is the owner.
        match unsafe { external(env, external_latin1(), message, ptr, len) } {
            Ok(string) => return Ok(string),
            Err(message) => message,
        }
    } else {
        message
    };
    let copy = if latin1 {
        sys::napi_create_string_latin1
    } else {
        sys::napi_create_string_utf8
    };
    let mut out = std::ptr::null_mut();
    let (ptr, len) = (message.as_ptr(), message.len() as isize);
    check_status!(unsafe { copy(env, ptr.cast(), len, &mut out) })?;
    Ok(out)
}

/// The JS callback: receives a batch ([`Delivery`]). Weak (does not hold the event loop open by
/// itself); `core.js` refs it while requests are pending.
pub type EventCallback = ThreadsafeFunction<(), Unknown<'static>, Delivery, Status, false, true>;

#[derive(Default)]
struct Batch {
    delivery: Delivery,
    scheduled: bool,
}

/// The batching [`EventSink`] over one threadsafe function.
pub struct BatchSink {
    batch: Arc<Mutex<Batch>>,
    /// Notified (all waiters: several sources may share this sink) on the JS thread each time a
    /// batch is taken (see `EventSink::backlog`).
    taken: Arc<tokio::sync::Notify>,
    /// Locked only to call it or to (un)ref it; `refer`/`unref` need `&mut`. With it, the count
    /// of holds (several faces may share one sink: a manager's servers): referenced while > 0.
    /// Left alone rather than released once its environment is ending ([`EnvBound`]).
    tsfn: EnvBound<Mutex<(EventCallback, usize)>>,
}

thread_local! {
    /// This thread's JS environment is going away: set by an env cleanup hook (registered once per
    /// environment, on its own JS thread — the main thread or a worker's).
    static ENV_CLOSING: std::cell::OnceCell<Arc<std::sync::atomic::AtomicBool>> =
        const { std::cell::OnceCell::new() };
}

/// The flag set when the calling thread's JS environment starts to go away (a worker ending, the
/// process exiting). Sinks check it before calling into that environment: Bun 1.3 on Windows
/// aborts the process (`EventLoop.enqueueTaskConcurrent: VM has terminated`) when a threadsafe
/// function is called after a worker's VM has ended and before the function is finalized, where
/// N-API says such a call returns `napi_closing`.
fn env_closing(env: &Env) -> Arc<std::sync::atomic::AtomicBool> {
    ENV_CLOSING.with(|cell| {
        cell.get_or_init(|| {
            let flag = Arc::new(std::sync::atomic::AtomicBool::new(false));
            let set = flag.clone();
            // Without the hook the flag stays false: calls go on as before.
            let _ = env.add_env_cleanup_hook(set, |set| {
                set.store(true, std::sync::atomic::Ordering::Release);
            });
            flag
        })
        .clone()
    })
}

/// A threadsafe function (or what holds one) of one JS environment, released when dropped —
/// unless that environment is ending: a release then (from the I/O thread, after a worker ended)
/// is what Bun 1.3 on Windows aborts on (`EventLoop.enqueueTaskConcurrent: VM has terminated`),
/// and the environment's teardown frees the function anyway.
pub struct EnvBound<T> {
    inner: std::mem::ManuallyDrop<T>,
    closing: Arc<std::sync::atomic::AtomicBool>,
}

impl<T> EnvBound<T> {
    /// `inner`, of the environment `env` (the calling thread's).
    pub fn new(env: &Env, inner: T) -> Self {
        EnvBound {
            inner: std::mem::ManuallyDrop::new(inner),
            closing: env_closing(env),
        }
    }

    /// Whether the environment is ending: nothing should be called into it any more.
    pub fn closing(&self) -> bool {
        self.closing.load(std::sync::atomic::Ordering::Acquire)
    }
}

impl<T> std::ops::Deref for EnvBound<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.inner
    }
}

impl<T> Drop for EnvBound<T> {
    fn drop(&mut self) {
        if !self.closing() {
            // SAFETY: dropped once, here; `inner` is never used again.
            unsafe { std::mem::ManuallyDrop::drop(&mut self.inner) };
        }
    }
}

/// Marks the calling thread's JS environment as ending, before its own cleanup (a worker's
/// `exit` event runs before its VM ends; the cleanup hook may run only after).
pub fn mark_env_closing(env: &Env) {
    env_closing(env).store(true, std::sync::atomic::Ordering::Release);
}

impl BatchSink {
    /// Wraps the JS callback `on_events(batch)`, which lives in `env`.
    pub fn new(env: &Env, callback: Function<'_, String, Unknown<'static>>) -> Result<Arc<Self>> {
        let batch: Arc<Mutex<Batch>> = Arc::default();
        let queue = batch.clone();
        let taken: Arc<tokio::sync::Notify> = Arc::default();
        let signal = taken.clone();
        let tsfn = callback
            .build_threadsafe_function::<()>()
            .callee_handled::<false>()
            .weak::<true>()
            .build_callback(move |_ctx| {
                // Runs on the JS thread: take everything queued so far as one batch (`[]` when
                // `take` took it already).
                let mut b = queue.locked();
                b.scheduled = false;
                let delivery = std::mem::take(&mut b.delivery);
                drop(b);
                signal.notify_waiters();
                Ok(delivery.finish())
            })?;
        Ok(Arc::new(BatchSink {
            batch,
            taken,
            tsfn: EnvBound::new(env, Mutex::new((tsfn, 0))),
        }))
    }

    /// Appends one event already written as JSON array text, and schedules the batch.
    fn push_raw(&self, event: &str) {
        let mut b = self.batch.locked();
        b.delivery.push_text(event);
        self.schedule(b);
    }

    fn schedule(&self, mut b: std::sync::MutexGuard<'_, Batch>) {
        if self.tsfn.closing() {
            return; // nobody is left to take it
        }
        if !b.scheduled {
            b.scheduled = true;
            drop(b);
            let guard = self.tsfn.locked();
            guard.0.call((), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }

    /// Takes the events queued so far as one batch (on the JS thread), `None` when there are
    /// none; the delivery already scheduled then brings only what comes later.
    pub fn take(&self) -> Option<Delivery> {
        let mut b = self.batch.locked();
        if b.delivery.is_empty() {
            return None;
        }
        let delivery = std::mem::take(&mut b.delivery);
        drop(b);
        self.taken.notify_waiters();
        Some(delivery.finish())
    }

    /// Keeps (`true`) or stops keeping (`false`) the Node event loop alive for this sink.
    #[allow(deprecated)] // `refer`/`unref` are the documented napi_ref/unref_threadsafe_function.
    pub fn hold(&self, env: &Env, on: bool) -> Result<()> {
        let mut guard = self.tsfn.locked();
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
        let b = self.batch.locked();
        b.scheduled.then_some(&*self.taken)
    }

    fn emit_all(&self, events: Vec<Event>) {
        if events.is_empty() {
            return;
        }
        let events: Vec<Ready> = events.into_iter().map(ready).collect();
        let mut b = self.batch.locked();
        for event in events {
            b.delivery.push_event(event);
        }
        self.schedule(b);
    }

    fn raw_answers_from(&self) -> Option<usize> {
        Some(RAW_ANSWER_BYTES)
    }
}

/// Events as one batch, for events returned to JS directly (not through the sink).
pub fn batch_of(events: Vec<Event>) -> Delivery {
    let mut delivery = Delivery::default();
    for event in events {
        delivery.push_event(ready(event));
    }
    delivery.finish()
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

/// An event made ready for a batch before its lock is taken: a raw answer's long strings are
/// cut out here, on the emitting thread (a pass over megabytes must not hold the lock that the
/// JS thread takes batches under).
enum Ready {
    Event(Event),
    Raw { id: u64, message: Bytes, cut: Cut },
}

/// How a raw answer's message crosses.
enum Cut {
    /// Its long strings cut out of it.
    Split(Split),
    /// In one piece; `ascii`: every byte is ASCII (it then crosses as Latin-1, without decoding).
    Whole { ascii: bool },
}

fn ready(event: Event) -> Ready {
    match event {
        Event::RawAnswer { id, message } => {
            // The ASCII check only for a message that crosses whole: a cut one's skeleton is
            // checked instead (at most MAX_SKELETON_BYTES, usually a few hundred bytes).
            let cut =
                match split_long_strings(&message, LONG_STRING_BYTES, MAX_SKELETON_BYTES, tag()) {
                    Some(split) => Cut::Split(split),
                    None => Cut::Whole {
                        ascii: message.is_ascii(),
                    },
                };
            Ready::Raw { id, message, cut }
        }
        event => Ready::Event(event),
    }
}

/// Writes `event` as batch text; a raw answer's message joins the batch's raw messages.
fn write_event(batch: &mut Delivery, event: Ready) {
    use std::fmt::Write;
    let out = &mut batch.text;
    let event = match event {
        Ready::Event(event) => event,
        Ready::Raw { id, message, cut } => {
            let _ = write!(
                out,
                "[{},{id},{}",
                EventKind::RawAnswer.n(),
                batch.raws.len()
            );
            match cut {
                Cut::Split(split) => {
                    // `[RawAnswer,id,k,tag,paths]`: raw message k is the skeleton, k+1… its strings.
                    let paths: Vec<Vec<serde_json::Value>> =
                        split.strings.iter().map(|s| path_json(&s.path)).collect();
                    let _ = write!(out, ",\"{}\",", tag());
                    out.push_str(&serde_json::to_string(&paths).expect("paths serialize"));
                    let ascii = split.skeleton.is_ascii();
                    batch
                        .raws
                        .push(Raw::Bytes(Bytes::from(split.skeleton), ascii));
                    for s in split.strings {
                        batch.raws.push(match s.text {
                            Text::Latin1(bytes) => Raw::Bytes(bytes, true),
                            Text::Utf16(units) => Raw::Utf16(units),
                        });
                    }
                }
                Cut::Whole { ascii } => batch.raws.push(Raw::Bytes(message, ascii)),
            }
            out.push(']');
            return;
        }
    };
    match event {
        Event::Response { id, result } => {
            let _ = write!(out, "[{},{id}", EventKind::Result.n());
            push_opt_raw(out, result.as_deref());
        }
        Event::Failed { id, error } => {
            let _ = write!(
                out,
                "[{},{id},{}",
                EventKind::Failed.n(),
                descriptor_text(&error)
            );
        }
        Event::Notification { method, params } => {
            let _ = write!(out, "[{},", EventKind::Notification.n());
            push_json_str(out, &method);
            push_opt_raw(out, params.as_deref());
        }
        Event::Request { id, method, params } => {
            let _ = write!(out, "[{},", EventKind::Request.n());
            out.push_str(id.get());
            out.push(',');
            push_json_str(out, &method);
            push_opt_raw(out, params.as_deref());
        }
        Event::Stderr(text) => {
            let _ = write!(out, "[{},", EventKind::Stderr.n());
            push_json_str(out, &text);
        }
        Event::Error(error) => {
            let _ = write!(out, "[{},{}", EventKind::Error.n(), descriptor_text(&error));
        }
        Event::Closed(reason) => {
            let _ = write!(out, "[{},", EventKind::Closed.n());
            match reason {
                Some(error) => out.push_str(&descriptor_text(&error)),
                None => out.push_str("null"),
            }
        }
        // `ready` makes every raw answer a `Ready::Raw`; were one to come here, it goes there.
        raw @ Event::RawAnswer { .. } => return write_event(batch, ready(raw)),
        Event::CallerReads(again) => {
            let kind = if again {
                EventKind::CallerReads
            } else {
                EventKind::CallerStops
            };
            let _ = write!(out, "[{}", kind.n());
        }
    }
    out.push(']');
}

/// A client event as batch text (kinds [`EventKind::ClientStatus`] to
/// [`EventKind::ClientOpened`] and [`EventKind::ClientWarning`]).
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
            let _ = write!(text, "[{},\"{name}\",{error}]", EventKind::ClientStatus.n());
        }
        ClientEvent::Connected { generation, init } => {
            let kind = EventKind::ClientConnected.n();
            let _ = write!(text, "[{kind},{generation},{}]", init.get());
        }
        ClientEvent::AttemptFailed(error) => {
            let kind = EventKind::ClientAttemptFailed.n();
            let _ = write!(text, "[{kind},{}]", descriptor_text(&error));
        }
        ClientEvent::Opened { generation } => {
            let _ = write!(text, "[{},{generation}]", EventKind::ClientOpened.n());
        }
        ClientEvent::Warning(message) => {
            let _ = write!(text, "[{},", EventKind::ClientWarning.n());
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
    /// Appends `text` (one event) wrapped for server `tag` of a manager: `[Server,tag,event]`.
    pub fn push_tagged(&self, tag: u32, text: &str) {
        self.push_raw(&format!("[{},{tag},{text}]", EventKind::Server.n()));
    }

    /// Appends events of server `tag` of a manager, each wrapped: `[Server,tag,event]`.
    fn push_tagged_events(&self, tag: u32, events: Vec<Event>) {
        use std::fmt::Write;
        let events: Vec<Ready> = events.into_iter().map(ready).collect();
        let mut b = self.batch.locked();
        for event in events {
            let d = &mut b.delivery;
            d.separate();
            let _ = write!(d.text, "[{},{tag},", EventKind::Server.n());
            write_event(d, event);
            d.text.push(']');
        }
        self.schedule(b);
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
        if !events.is_empty() {
            self.batch.push_tagged_events(self.tag, events);
        }
    }

    fn backlog(&self) -> Option<&tokio::sync::Notify> {
        self.batch.backlog()
    }

    fn raw_answers_from(&self) -> Option<usize> {
        self.batch.raw_answers_from()
    }
}

impl ClientSink for TaggedSink {
    fn client_event(&self, event: ClientEvent) {
        self.batch.push_tagged(self.tag, &client_event_text(event));
    }
}
