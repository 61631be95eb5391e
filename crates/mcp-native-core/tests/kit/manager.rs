// The kit of the manager tests (`manager.rs`, the 12.7 profile; `manager_policy.rs`, the agent as it
// ships today): the recording host, the in-memory servers on the paused clock, the fixture
// helpers. Included as text (`include!`) so each test crate sees its items as its own.

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_native_core::client::{
    Client, ClientEvent, ClientOptions, ClientSink, ReconnectPolicy, ServerConfig,
    Status as ClientStatus, TransportFactory,
};
use mcp_native_core::error::Error;
use mcp_native_core::manager::{
    ConnectionEvent, GateReport, LIST_CHANGED_DEBOUNCE, LogLevel, Manager, ManagerEvent, ManagerHost,
    ManagerOptions, STARTUP_GATE, ServerStatus, StartReport,
};
use mcp_native_core::transport::{Event, EventSink, Outcome, OutgoingRequest, Reply, Transport};
use serde_json::{Value, json};
use tokio::sync::oneshot;
use tokio::time::Instant;

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../__test__/fixture/server.mjs"
);
const WAIT: Duration = Duration::from_secs(20);
/// The fixture's tools, in its order.
const FIXTURE_TOOLS: [&str; 6] = ["echo", "big", "add", "mixed", "fail", "slow"];
const BROKEN: &str = "/nonexistent/server-binary";
const ENOENT: &str = "spawn /nonexistent/server-binary ENOENT";

fn ms(n: u64) -> Duration {
    Duration::from_millis(n)
}

fn strings(items: &[&str]) -> Vec<String> {
    items.iter().map(|s| (*s).to_owned()).collect()
}

fn names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("?").to_owned())
        .collect()
}

/// A fixture server's config in the `.mcp.json` shape.
fn fixture(flags: &[&str]) -> Value {
    let mut args = vec![FIXTURE.to_owned()];
    args.extend(flags.iter().map(|f| (*f).to_owned()));
    json!({ "command": "node", "args": args, "killGraceMs": 300 })
}

fn entry(name: &str, config: Value) -> (String, Value) {
    (name.to_owned(), config)
}

/// `--marker=…` unique to this test process and `what`.
fn marker(what: &str) -> String {
    format!("--marker=mcp-native-mgr-{}-{what}", std::process::id())
}

/// For tests against child processes (12.7 profile): the gate is the paused-clock tests' subject; here it is
/// long enough that a node that starts slowly on a busy machine is awaited, not deferred, so the
/// host sees the same calls on every run.
fn real_options() -> ManagerOptions {
    ManagerOptions {
        gate: WAIT,
        ..ManagerOptions::compat_12_7()
    }
}

async fn within<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, f).await.expect("in time")
}

async fn pid_of(client: &Client) -> u64 {
    let answer: Value = within(client.request("pid", &json!({}))).await.unwrap();
    answer["pid"].as_u64().unwrap()
}

// --- the recording host ---------------------------------------------------------------------

/// What the manager asked of its host or told it, in order.
#[derive(Debug, Clone, PartialEq)]
enum Call {
    Starting(String),
    Status(String, ServerStatus, Option<String>),
    Removed(String),
    /// A connection of the server's client was opened (from its client sink), by generation.
    Opened(String, u64),
    CacheGet(String),
    CacheSet(String, Vec<String>),
    Tools(String, Vec<String>),
    StandIn(String, Vec<String>),
    /// The server named in the details, the level, the message.
    Log(String, LogLevel, String),
}

use Call::*;

impl Call {
    fn server(&self) -> &str {
        match self {
            Starting(s)
            | Status(s, ..)
            | Removed(s)
            | Opened(s, _)
            | CacheGet(s)
            | CacheSet(s, _)
            | Tools(s, _)
            | StandIn(s, _)
            | Log(s, ..) => s,
        }
    }
}

fn status(server: &str, status: ServerStatus) -> Call {
    Status(server.into(), status, None)
}

fn tools(server: &str, tools: &[&str]) -> Call {
    Tools(server.into(), strings(tools))
}

fn cache_set(server: &str, tools: &[&str]) -> Call {
    CacheSet(server.into(), strings(tools))
}

fn connected_log(server: &str, count: usize) -> Call {
    Log(
        server.into(),
        LogLevel::Debug,
        format!("MCP server \"{server}\" connected with {count} tools"),
    )
}

struct Shared {
    calls: Mutex<Vec<Call>>,
    /// Notified on every call (for the one test that must block a runtime-less thread).
    changed: Condvar,
    /// Counts calls (for async waits).
    seq: tokio::sync::watch::Sender<usize>,
    cache: Mutex<HashMap<String, Vec<Value>>>,
    /// Each server's client, from its `Starting` event.
    clients: Mutex<HashMap<String, Client>>,
    /// For each `tools` call: the server's name and the name of the client it came with.
    tool_clients: Mutex<Vec<(String, String)>>,
    memory: Mutex<HashMap<String, Arc<MemServer>>>,
    refuse_stand_in: AtomicBool,
    prepare_delay: Mutex<Option<Duration>>,
    /// The next `tools` call of that server resolves only when the sender is used (or dropped).
    hold_tools: Mutex<HashMap<String, oneshot::Receiver<()>>>,
    /// At `Starting` of the first server, block (synchronously) until the second is `Removed`.
    block_starting: Mutex<Option<(String, String)>>,
    /// The 18.3.4 connection events, in order (kept apart from `calls`, which the 12.7 tests
    /// compare whole).
    connection: Mutex<Vec<(ConnectionEvent, Option<u64>)>>,
}

impl Shared {
    fn record(&self, call: Call) {
        let n = {
            let mut calls = self.calls.lock().unwrap();
            calls.push(call);
            calls.len()
        };
        self.changed.notify_all();
        self.seq.send_replace(n);
    }
}

struct Host {
    shared: Arc<Shared>,
}

impl Host {
    fn new() -> Arc<Host> {
        Arc::new(Host {
            shared: Arc::new(Shared {
                calls: Mutex::default(),
                changed: Condvar::new(),
                seq: tokio::sync::watch::channel(0).0,
                cache: Mutex::default(),
                clients: Mutex::default(),
                tool_clients: Mutex::default(),
                memory: Mutex::default(),
                refuse_stand_in: AtomicBool::new(false),
                prepare_delay: Mutex::default(),
                hold_tools: Mutex::default(),
                block_starting: Mutex::default(),
                connection: Mutex::default(),
            }),
        })
    }

    /// Serves `server` in memory.
    fn add(&self, server: &Arc<MemServer>) {
        self.shared
            .memory
            .lock()
            .unwrap()
            .insert(server.name.clone(), server.clone());
    }

    fn cache(&self, server: &str, tools: &[&str]) {
        self.shared
            .cache
            .lock()
            .unwrap()
            .insert(server.into(), tools.iter().map(|t| tool(t)).collect());
    }

    fn record(&self, call: Call) {
        self.shared.record(call);
    }

    fn calls(&self) -> Vec<Call> {
        self.shared.calls.lock().unwrap().clone()
    }

    fn mark(&self) -> usize {
        self.shared.calls.lock().unwrap().len()
    }

    fn since(&self, mark: usize) -> Vec<Call> {
        self.shared.calls.lock().unwrap()[mark..].to_vec()
    }

    /// The calls about `server`, in order.
    fn of(&self, server: &str) -> Vec<Call> {
        self.calls()
            .into_iter()
            .filter(|c| c.server() == server)
            .collect()
    }

    fn statuses(&self, server: &str) -> Vec<ServerStatus> {
        self.calls()
            .into_iter()
            .filter_map(|c| match c {
                Status(s, status, _) if s == server => Some(status),
                _ => None,
            })
            .collect()
    }

    /// Every `tools` call, by server.
    fn tools_by_server(&self) -> BTreeMap<String, Vec<Vec<String>>> {
        let mut out: BTreeMap<String, Vec<Vec<String>>> = BTreeMap::new();
        for call in self.calls() {
            if let Tools(server, tools) = call {
                out.entry(server).or_default().push(tools);
            }
        }
        out
    }

    /// Waits (bounded) until the calls satisfy `done`.
    async fn until(&self, done: impl Fn(&[Call]) -> bool) {
        let mut seq = self.shared.seq.subscribe();
        within(async {
            loop {
                if done(&self.shared.calls.lock().unwrap()) {
                    return;
                }
                seq.changed().await.unwrap();
            }
        })
        .await;
    }

    async fn until_call(&self, call: Call) {
        self.until(|calls| calls.contains(&call)).await;
    }

    /// Waits (bounded) until `server` was reported `status` (whatever the error).
    async fn until_status(&self, server: &str, status: ServerStatus) {
        self.until(|calls| {
            calls
                .iter()
                .any(|c| matches!(c, Status(s, st, _) if s == server && *st == status))
        })
        .await;
    }

    /// The 18.3.4 connection events so far.
    fn events(&self) -> Vec<ConnectionEvent> {
        self.event_calls().into_iter().map(|(e, _)| e).collect()
    }

    /// The 18.3.4 connection events so far, each with the `connect_servers` call it is of.
    fn event_calls(&self) -> Vec<(ConnectionEvent, Option<u64>)> {
        self.shared.connection.lock().unwrap().clone()
    }
}

impl ManagerHost for Host {
    fn prepare(&self, _name: &str, config: Value) -> BoxFuture<'static, Result<Value, Error>> {
        let delay = *self.shared.prepare_delay.lock().unwrap();
        Box::pin(async move {
            if let Some(delay) = delay {
                tokio::time::sleep(delay).await;
            }
            mcp_native_core::manager::resolve_values(config).await
        })
    }

    fn cache_get(&self, name: &str, _config: &Value) -> BoxFuture<'static, Option<Vec<Value>>> {
        self.record(CacheGet(name.into()));
        let hit = self.shared.cache.lock().unwrap().get(name).cloned();
        Box::pin(async move { hit })
    }

    fn cache_set(&self, name: &str, _config: &Value, tools: &[Value]) {
        self.record(CacheSet(name.into(), names(tools)));
        self.shared
            .cache
            .lock()
            .unwrap()
            .insert(name.into(), tools.to_vec());
    }

    fn tools(
        &self,
        name: &str,
        client: &Client,
        tools: &[Value],
    ) -> BoxFuture<'static, Result<(), Error>> {
        self.shared
            .tool_clients
            .lock()
            .unwrap()
            .push((name.into(), client.name().into()));
        self.record(Tools(name.into(), names(tools)));
        let hold = self.shared.hold_tools.lock().unwrap().remove(name);
        Box::pin(async move {
            if let Some(hold) = hold {
                let _ = hold.await;
            }
            Ok(())
        })
    }

    fn stand_in(&self, name: &str, tools: Vec<Value>) -> BoxFuture<'static, Result<(), Error>> {
        self.record(StandIn(name.into(), names(&tools)));
        let refuse = self.shared.refuse_stand_in.load(Ordering::Relaxed);
        Box::pin(async move {
            if refuse {
                Err(Error::Io("no stand-ins here".into()))
            } else {
                Ok(())
            }
        })
    }

    fn log(&self, level: LogLevel, message: &str, details: Value) {
        let server = details["server"].as_str().unwrap_or("").to_owned();
        self.record(Log(server, level, message.into()));
    }

    fn event(&self, event: ManagerEvent) {
        match event {
            ManagerEvent::Starting { server, client } => {
                self.shared
                    .clients
                    .lock()
                    .unwrap()
                    .insert(server.clone(), client);
                self.record(Starting(server.clone()));
                let block = self.shared.block_starting.lock().unwrap().clone();
                if let Some((at, until)) = block
                    && at == server
                {
                    let calls = self.shared.calls.lock().unwrap();
                    let (_calls, wait) = self
                        .shared
                        .changed
                        .wait_timeout_while(calls, WAIT, |c| !c.contains(&Removed(until.clone())))
                        .unwrap();
                    assert!(!wait.timed_out(), "{until} was not removed in time");
                }
            }
            ManagerEvent::Status {
                server,
                status,
                error,
            } => self.record(Status(server, status, error.map(|e| e.to_string()))),
            ManagerEvent::Removed { server } => self.record(Removed(server)),
            ManagerEvent::Connection { event, call } => {
                self.shared.connection.lock().unwrap().push((event, call));
                // Counted, so that `until` can wait for one.
                self.shared.seq.send_modify(|_| {});
            }
        }
    }

    fn client_sink(&self, name: &str) -> Option<Arc<dyn ClientSink>> {
        Some(Arc::new(HostSink {
            shared: self.shared.clone(),
            name: name.into(),
        }))
    }
}

/// A server's client sink: records its connections; installs the in-memory transport.
struct HostSink {
    shared: Arc<Shared>,
    name: String,
}

impl EventSink for HostSink {
    fn emit_all(&self, _events: Vec<Event>) {}
}

impl ClientSink for HostSink {
    fn client_event(&self, event: ClientEvent) {
        match event {
            ClientEvent::Status(ClientStatus::Connecting, _) => {
                let server = self.shared.memory.lock().unwrap().get(&self.name).cloned();
                let client = self.shared.clients.lock().unwrap().get(&self.name).cloned();
                if let (Some(server), Some(client)) = (server, client) {
                    client.set_config(server.config());
                }
            }
            ClientEvent::Opened { generation } => {
                self.shared.record(Opened(self.name.clone(), generation));
            }
            _ => {}
        }
    }
}

// --- in-memory servers ----------------------------------------------------------------------

fn tool(name: &str) -> Value {
    json!({ "name": name, "description": format!("Tool {name}"), "inputSchema": { "type": "object" } })
}

/// A server in this process: answers `initialize` (after `init_delay`, or with an error) and
/// `tools/list`; records every request with the (paused) time it came.
struct MemServer {
    name: String,
    tools: Mutex<Vec<Value>>,
    init_delay: Duration,
    init_error: AtomicBool,
    fail_list: AtomicBool,
    /// New connections are refused (the factory fails).
    refuse: AtomicBool,
    requests: Mutex<Vec<(String, Instant)>>,
    connections: Mutex<Vec<Arc<MemTransport>>>,
    /// When each connection was asked for (refused ones too).
    attempts: Mutex<Vec<Instant>>,
    /// Connections from this index on answer `initialize` at once.
    fast_from: std::sync::atomic::AtomicUsize,
}

impl MemServer {
    fn new(name: &str, tools: &[&str]) -> Arc<Self> {
        Self::slow(name, tools, Duration::ZERO)
    }

    /// Answers `initialize` after `init_delay`.
    fn slow(name: &str, tools: &[&str], init_delay: Duration) -> Arc<Self> {
        Arc::new(MemServer {
            name: name.into(),
            tools: Mutex::new(tools.iter().map(|t| tool(t)).collect()),
            init_delay,
            init_error: AtomicBool::new(false),
            fail_list: AtomicBool::new(false),
            refuse: AtomicBool::new(false),
            requests: Mutex::default(),
            connections: Mutex::default(),
            attempts: Mutex::default(),
            fast_from: std::sync::atomic::AtomicUsize::new(usize::MAX),
        })
    }

    /// Answers `initialize` with an error after `init_delay`.
    fn failing(name: &str, init_delay: Duration) -> Arc<Self> {
        let server = Self::slow(name, &[], init_delay);
        server.init_error.store(true, Ordering::Relaxed);
        server
    }

    /// Its name and JSON config, for `connect_servers`.
    fn entry(&self) -> (String, Value) {
        entry(
            &self.name,
            json!({ "command": format!("in-memory-{}", self.name) }),
        )
    }

    fn config(self: &Arc<Self>) -> ServerConfig {
        let server = self.clone();
        let factory: TransportFactory = Arc::new(move |sink| {
            server.attempts.lock().unwrap().push(Instant::now());
            if server.refuse.load(Ordering::Relaxed) {
                return Err(Error::Io(format!("{} refused", server.name)));
            }
            let index = server.connections.lock().unwrap().len();
            let t = Arc::new(MemTransport {
                index,
                server: server.clone(),
                sink,
                ids: AtomicU64::new(0),
                open: AtomicBool::new(true),
                pending: Arc::default(),
            });
            server.connections.lock().unwrap().push(t.clone());
            Ok(t as Arc<dyn Transport>)
        });
        ServerConfig::Custom {
            factory,
            timeout_ms: 5_000,
        }
    }

    fn set_tools(&self, tools: &[&str]) {
        *self.tools.lock().unwrap() = tools.iter().map(|t| tool(t)).collect();
    }

    fn count(&self, method: &str) -> usize {
        self.times(method).len()
    }

    /// When requests of `method` came.
    fn times(&self, method: &str) -> Vec<Instant> {
        self.requests
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .map(|(_, t)| *t)
            .collect()
    }

    /// Its name and a remote (`http`) JSON config: what the transport is does not change (the
    /// host swaps in the in-memory one), but the manager retries a lost remote server.
    fn remote_entry(&self) -> (String, Value) {
        entry(
            &self.name,
            json!({ "type": "http", "url": format!("http://127.0.0.1:9/{}", self.name) }),
        )
    }

    /// When connections were asked for, as offsets from `t0`.
    fn attempts_since(&self, t0: Instant) -> Vec<Duration> {
        self.attempts
            .lock()
            .unwrap()
            .iter()
            .map(|t| t.duration_since(t0))
            .collect()
    }

    fn connections(&self) -> usize {
        self.connections.lock().unwrap().len()
    }

    fn conn(&self, i: usize) -> Arc<MemTransport> {
        self.connections.lock().unwrap()[i].clone()
    }
}

struct MemTransport {
    /// Which connection of its server it is.
    index: usize,
    server: Arc<MemServer>,
    sink: Arc<dyn EventSink>,
    ids: AtomicU64,
    open: AtomicBool,
    /// Requests answered later (a slow `initialize`); failed when the connection closes.
    pending: Arc<Mutex<HashMap<u64, Reply>>>,
}

fn deliver(sink: &Arc<dyn EventSink>, reply: Reply, id: u64, outcome: Outcome) {
    let mut events = Vec::new();
    reply.deliver(id, outcome, &mut events);
    if !events.is_empty() {
        sink.emit_all(events);
    }
}

impl MemTransport {
    fn list_changed(&self) {
        self.sink.emit(Event::Notification {
            method: "notifications/tools/list_changed".into(),
            params: None,
        });
    }

    /// Ends the connection as a crash would.
    fn die(&self) {
        if self.open.swap(false, Ordering::Relaxed) {
            self.fail_pending();
            self.sink.emit(Event::Closed(Some(Error::closed())));
        }
    }

    fn fail_pending(&self) {
        let all: Vec<(u64, Reply)> = self.pending.lock().unwrap().drain().collect();
        for (id, reply) in all {
            deliver(&self.sink, reply, id, Err(Error::closed()));
        }
    }
}

impl Transport for MemTransport {
    fn next_id(&self) -> u64 {
        self.ids.fetch_add(1, Ordering::Relaxed) + 1
    }
    fn default_timeout_ms(&self) -> u64 {
        30_000
    }
    fn is_open(&self) -> bool {
        self.open.load(Ordering::Relaxed)
    }
    fn send(&self, requests: Vec<OutgoingRequest<'_>>) -> Result<(), Error> {
        if !self.is_open() {
            return Err(Error::NotConnected);
        }
        let s = &self.server;
        for r in requests {
            let method: String = serde_json::from_str(r.method_json).unwrap();
            s.requests
                .lock()
                .unwrap()
                .push((method.clone(), Instant::now()));
            let answer = match method.as_str() {
                "initialize" if s.init_error.load(Ordering::Relaxed) => {
                    Err(Error::Io("initialize refused".into()))
                }
                "initialize" => Ok(json!({
                    "protocolVersion": "2025-03-26",
                    "capabilities": { "tools": { "listChanged": true } },
                    "serverInfo": { "name": s.name, "version": "1" },
                })),
                "tools/list" if s.fail_list.load(Ordering::Relaxed) => {
                    Err(Error::Io("list failed".into()))
                }
                "tools/list" => Ok(json!({ "tools": *s.tools.lock().unwrap() })),
                _ => Ok(json!({})),
            };
            let outcome = answer.map(|v| Some(serde_json::value::to_raw_value(&v).unwrap()));
            let delay = if method == "initialize"
                && self.index < s.fast_from.load(Ordering::Relaxed)
            {
                s.init_delay
            } else {
                Duration::ZERO
            };
            if delay.is_zero() {
                deliver(&self.sink, r.reply, r.id, outcome);
                continue;
            }
            self.pending.lock().unwrap().insert(r.id, r.reply);
            let (pending, sink, id) = (self.pending.clone(), self.sink.clone(), r.id);
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let reply = pending.lock().unwrap().remove(&id);
                if let Some(reply) = reply {
                    deliver(&sink, reply, id, outcome);
                }
            });
        }
        Ok(())
    }
    fn notify(
        &self,
        _method: &str,
        _params: Option<&str>,
    ) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }
    fn respond(&self, _id: &str, _outcome: Result<&str, &str>) -> Result<(), Error> {
        Ok(())
    }
    fn cancel(&self, id: u64, _reason: &str) {
        self.pending.lock().unwrap().remove(&id);
    }
    fn close(&self) -> bool {
        let was = self.open.swap(false, Ordering::Relaxed);
        if was {
            self.fail_pending();
            self.sink.emit(Event::Closed(None));
        }
        was
    }
    fn set_request_listener(&self, _on: bool) {}
}

fn manager(host: &Arc<Host>, options: ManagerOptions) -> Manager {
    Manager::new(options, host.clone())
}
