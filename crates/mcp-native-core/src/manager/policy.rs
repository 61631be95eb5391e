//! The agent's reconnect policy and startup barriers as it ships today (18.3.4 `manager.ts`,
//! SPEC 11.4), on by default ([`ManagerOptions::reconnect`](super::ManagerOptions::reconnect)):
//!
//! - a server whose connection ends is connected again: one reconnect per server at a time
//!   (callers share it), each a full start (config prepared again, connect, tools listed), tried
//!   once and then after each wait of the ladder (500, 1000, 2000, 4000 ms); its tools stay with
//!   the owner meanwhile and after a failure (a tool call then fails, and may ask for a reconnect);
//! - the crash-storm breaker: more than 5 reconnects of one server within 30 s and automatic
//!   reconnects stop (the connection is torn down, the tools stay, `failed` is reported); a
//!   manual reconnect resets the window;
//! - a remote (http/sse) server that was connected and is lost is retried quietly once the
//!   ladder failed, after 15 s, the wait doubling up to 5 minutes, until it answers or is
//!   disconnected or started with a new config; a stdio server stops at the ladder;
//! - the startup barriers: [`Manager::wait_for_startup`] and [`Manager::wait_for_pending`].
//!
//! What the policy keeps per server name lives in one [`Book`] behind one lock.

use std::collections::HashMap;
use std::sync::{Arc, Weak};
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;
use tokio::time::Instant;

use super::host::{ConnectionEvent, LogLevel, ManagerEvent, ServerStatus};
use super::{Inner, Manager, Outcome, lock};
use crate::client::Client;
use crate::error::Error;

/// The breaker's message (the `failed` event's `error`).
pub const BREAKER_MESSAGE: &str =
    "MCP server crashed too many times; automatic reconnects suspended";
/// [`Manager::wait_for_startup`]: a server that is neither connected, starting nor failed with
/// a message of its own.
pub const STARTUP_CLOSED_MESSAGE: &str = "Connection closed before tools became available";

/// How the manager paces reconnects (the agent's `MCPReconnectPolicy`, plus its breaker).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReconnectSchedule {
    /// The waits between the attempts of one reconnect (one attempt more than waits).
    pub ladder: Vec<Duration>,
    /// The first wait of a lost remote server's quiet retries.
    pub retry_base: Duration,
    /// The longest wait between them (each wait doubles up to it).
    pub retry_max: Duration,
    /// More reconnects of one server than this within [`ReconnectSchedule::burst_window`] trip
    /// the breaker.
    pub burst_limit: usize,
    /// See [`ReconnectSchedule::burst_limit`].
    pub burst_window: Duration,
}

impl Default for ReconnectSchedule {
    fn default() -> Self {
        ReconnectSchedule {
            ladder: [500, 1000, 2000, 4000].map(Duration::from_millis).to_vec(),
            retry_base: Duration::from_secs(15),
            retry_max: Duration::from_secs(300),
            burst_limit: 5,
            burst_window: Duration::from_secs(30),
        }
    }
}

/// [`Manager::wait_for_startup`]: how the servers named to `connect_servers` stand.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct StartupStatus {
    /// Connected, tools registered.
    pub connected: Vec<String>,
    /// Still starting or reconnecting.
    pub pending: Vec<String>,
    /// Neither: the name and why.
    pub failed: Vec<(String, String)>,
}

/// A lost remote server's retry schedule.
struct Lost {
    /// Tells this schedule from a later one of the same name.
    id: u64,
    /// The next wait.
    delay: Duration,
    timer: Option<tokio::task::AbortHandle>,
}

/// What the policy keeps per server name.
#[derive(Default)]
pub(crate) struct Book {
    /// Counter for config versions and schedule ids.
    next: u64,
    /// The config each known server was last started with (as given), by version: a reconnect
    /// uses it, and stops when the version changed (disconnected, or started anew).
    configs: HashMap<String, (u64, Value)>,
    /// The reconnect in flight per server; callers share it.
    reconnects: HashMap<String, watch::Receiver<Outcome>>,
    /// When the recent reconnects of each server began (the breaker's window).
    history: HashMap<String, Vec<Instant>>,
    lost: HashMap<String, Lost>,
    /// The servers named to `connect_servers`, in order, and the failure of each that failed.
    startup: Vec<String>,
    failures: HashMap<String, String>,
}

impl Book {
    fn forget_lost(&mut self, name: &str) {
        if let Some(lost) = self.lost.remove(name)
            && let Some(timer) = lost.timer
        {
            timer.abort();
        }
    }
}

/// Tells the host a connection event, keeping the startup book's failures in step.
pub(crate) fn emit(inner: &Inner, event: ConnectionEvent, call: Option<u64>) {
    {
        let mut book = lock(&inner.policy);
        match &event {
            ConnectionEvent::Failed { server, error } if book.startup.contains(server) => {
                book.failures.insert(server.clone(), error.clone());
            }
            ConnectionEvent::Connected { server } => {
                book.failures.remove(server);
            }
            _ => {}
        }
    }
    inner.host.event(ManagerEvent::Connection { event, call });
}

/// A start or a reconnect settled (or a server left): the startup barriers look again.
pub(crate) fn bump(inner: &Inner) {
    inner.activity.send_modify(|n| *n = n.wrapping_add(1));
}

/// `connect_servers` was given `name`: it counts for [`Manager::wait_for_startup`].
pub(crate) fn note_startup(inner: &Inner, name: &str) {
    let mut book = lock(&inner.policy);
    if !book.startup.iter().any(|n| n == name) {
        book.startup.push(name.to_owned());
    }
}

/// `name` starts with `config`: the config reconnects use from now on; a retry schedule for an
/// older config ends.
pub(crate) fn note_config(inner: &Inner, name: &str, config: &Value) {
    let mut book = lock(&inner.policy);
    book.next += 1;
    let version = book.next;
    book.configs
        .insert(name.to_owned(), (version, config.clone()));
    book.forget_lost(name);
}

/// Forgets everything the policy keeps of `name` (its reconnect in flight stops at its next
/// step). Whether it was known.
pub(crate) fn forget(inner: &Inner, name: &str) -> bool {
    let mut book = lock(&inner.policy);
    let known = book.configs.remove(name).is_some();
    book.reconnects.remove(name);
    book.history.remove(name);
    book.forget_lost(name);
    book.startup.retain(|n| n != name);
    book.failures.remove(name);
    known
}

/// The names the policy knows (started and not disconnected), for `disconnect_all`.
pub(crate) fn known(inner: &Inner) -> Vec<String> {
    lock(&inner.policy).configs.keys().cloned().collect()
}

/// The servers with a reconnect in flight.
pub(crate) fn reconnect_names(inner: &Inner) -> Vec<String> {
    lock(&inner.policy).reconnects.keys().cloned().collect()
}

/// The reconnect in flight for `name`.
pub(crate) fn reconnecting(inner: &Inner, name: &str) -> Option<watch::Receiver<Outcome>> {
    lock(&inner.policy).reconnects.get(name).cloned()
}

/// Whether `version` is still `name`'s config.
fn still(inner: &Inner, name: &str, version: u64) -> bool {
    lock(&inner.policy)
        .configs
        .get(name)
        .is_some_and(|(v, _)| *v == version)
}

fn is_remote(config: &Value) -> bool {
    matches!(
        config.get("type").and_then(Value::as_str),
        Some("http" | "sse")
    )
}

/// Records a reconnect of `name` in the breaker's window: whether the breaker is now open.
fn trip(book: &mut Book, name: &str, schedule: &ReconnectSchedule) -> bool {
    let now = Instant::now();
    let recent = book.history.entry(name.to_owned()).or_default();
    recent.retain(|t| now.duration_since(*t) < schedule.burst_window);
    recent.push(now);
    recent.len() > schedule.burst_limit
}

/// How a reconnect is asked for.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Ask {
    /// By the user: the breaker's window starts over.
    pub(crate) manual: bool,
    /// A lost remote server's quiet retry: one attempt, no ladder, past the breaker.
    pub(crate) scheduled: bool,
    /// The `connect_servers` call whose start timed out (its events carry it).
    pub(crate) call: Option<u64>,
}

/// Starts a reconnect of `name`, or joins the one in flight. `None` when there is nothing to
/// reconnect (no policy, an unknown name) or the breaker is open.
pub(crate) fn begin(inner: &Arc<Inner>, name: &str, ask: Ask) -> Option<watch::Receiver<Outcome>> {
    let schedule = inner.options.reconnect.as_ref()?;
    let mut book = lock(&inner.policy);
    if ask.manual {
        book.history.remove(name);
    }
    if let Some(rx) = book.reconnects.get(name) {
        return Some(rx.clone());
    }
    // Decided: a name the manager never started has nothing to reconnect and no breaker entry
    // (18.3.4 counts it first; it then finds no config and returns null all the same).
    let (version, config) = book.configs.get(name).cloned()?;
    if !ask.scheduled && trip(&mut book, name, schedule) {
        book.forget_lost(name);
        drop(book);
        open_breaker(inner, name);
        return None;
    }
    let (tx, rx) = watch::channel(None);
    book.reconnects.insert(name.to_owned(), rx.clone());
    drop(book);
    // The live connection, if any, is replaced from here on: the server reads `connecting`.
    let had = {
        let mut servers = lock(&inner.servers);
        match servers.iter_mut().find(|s| s.name == name) {
            Some(s) => {
                let had = s.start.is_none();
                s.start = Some(rx.clone());
                s.status = ServerStatus::Connecting;
                had.then(|| s.client.clone())
            }
            None => None,
        }
    };
    if let Some(old) = &had {
        // From here a remote server is lost until a reconnect succeeds (18.3.4: a server that
        // never connected is not; a stdio server stops at the ladder).
        if is_remote(&config) {
            let mut book = lock(&inner.policy);
            if !book.lost.contains_key(name) {
                book.next += 1;
                let id = book.next;
                book.lost.insert(
                    name.to_owned(),
                    Lost {
                        id,
                        delay: schedule.retry_base,
                        timer: None,
                    },
                );
            }
        }
        // Closed in the background: an HTTP session's DELETE must not hold up the reconnect.
        let old = old.clone();
        crate::runtime::handle().spawn(async move { old.close().await });
    }
    let (inner2, name2, rx2) = (inner.clone(), name.to_owned(), rx.clone());
    crate::runtime::handle().spawn(async move {
        let outcome = run(&inner2, &name2, version, &config, &rx2, ask).await;
        settle(&inner2, &name2, &rx2, outcome, tx);
    });
    Some(rx)
}

/// The breaker opened: the connection is torn down (so that nobody is handed a dead client),
/// the tools stay, `failed` is reported.
fn open_breaker(inner: &Arc<Inner>, name: &str) {
    let crashes = lock(&inner.policy).history.get(name).map_or(0, Vec::len);
    inner.host.log(
        LogLevel::Error,
        "MCP server crashed too many times; suspending automatic reconnects",
        json!({
            "server": name,
            "crashes": crashes,
            "windowMs": inner.options.reconnect.as_ref().map_or(0, |s| s.burst_window.as_millis() as u64),
        }),
    );
    let stale = {
        let mut servers = lock(&inner.servers);
        let at = servers.iter().position(|s| s.name == name);
        at.map(|i| servers.remove(i))
    };
    if let Some(stale) = stale {
        if let Some(task) = stale.refresh {
            task.abort();
        }
        let client = stale.client;
        crate::runtime::handle().spawn(async move { client.close().await });
    }
    bump(inner);
    inner.host.event(ManagerEvent::Status {
        server: name.into(),
        status: ServerStatus::Disconnected,
        error: Some(Error::Io(BREAKER_MESSAGE.into())),
    });
    emit(
        inner,
        ConnectionEvent::Failed {
            server: name.into(),
            error: BREAKER_MESSAGE.into(),
        },
        None,
    );
}

/// The attempts of one reconnect.
async fn run(
    inner: &Arc<Inner>,
    name: &str,
    version: u64,
    config: &Value,
    rx: &watch::Receiver<Outcome>,
    ask: Ask,
) -> Result<(), Error> {
    let scheduled = ask.scheduled;
    let gone = || {
        Error::Io(format!(
            "Server \"{name}\" was disconnected during reconnection"
        ))
    };
    let ladder = if scheduled {
        Vec::new()
    } else {
        inner
            .options
            .reconnect
            .as_ref()
            .map(|s| s.ladder.clone())
            .unwrap_or_default()
    };
    let mut attempt = 0;
    loop {
        if !still(inner, name, version) {
            return Err(gone());
        }
        let error = match super::start::attempt(inner, name, config, rx, ask.call).await {
            Ok(()) => return Ok(()),
            Err(e) => e,
        };
        if !still(inner, name, version) {
            return Err(gone());
        }
        let details = json!({ "server": name, "attempt": attempt + 1, "error": error.to_string() });
        if let Some(wait) = ladder.get(attempt) {
            inner.host.log(
                LogLevel::Debug,
                "MCP reconnect attempt failed, retrying",
                details,
            );
            tokio::time::sleep(*wait).await;
            attempt += 1;
            continue;
        }
        if scheduled {
            inner.host.log(
                LogLevel::Debug,
                "MCP scheduled reconnect attempt failed",
                details,
            );
        } else {
            inner.host.log(
                LogLevel::Error,
                "MCP reconnect failed after retries",
                details,
            );
            emit(
                inner,
                ConnectionEvent::Failed {
                    server: name.into(),
                    error: error.to_string(),
                },
                ask.call,
            );
        }
        return Err(error);
    }
}

/// A reconnect ended: its waiters hear how; a failed one leaves the server disconnected (tools
/// kept) and, when the server is a lost remote one, arms its next quiet retry.
fn settle(
    inner: &Arc<Inner>,
    name: &str,
    rx: &watch::Receiver<Outcome>,
    outcome: Result<(), Error>,
    tx: watch::Sender<Outcome>,
) {
    let ours = |r: &watch::Receiver<Outcome>| r.same_channel(rx);
    let failed_entry = outcome.is_err() && {
        let mut servers = lock(&inner.servers);
        let at = servers
            .iter()
            .position(|s| s.name == name && s.start.as_ref().is_some_and(ours));
        at.map(|i| servers.remove(i)).is_some_and(|s| {
            let client = s.client;
            crate::runtime::handle().spawn(async move { client.close().await });
            true
        })
    };
    let relost = {
        let mut book = lock(&inner.policy);
        if book.reconnects.get(name).is_some_and(ours) {
            book.reconnects.remove(name);
        }
        if outcome.is_ok() {
            book.forget_lost(name);
            false
        } else {
            book.lost.contains_key(name)
        }
    };
    if let Err(e) = &outcome
        && failed_entry
    {
        inner.host.event(ManagerEvent::Status {
            server: name.into(),
            status: ServerStatus::Disconnected,
            error: Some(e.clone()),
        });
    }
    if relost {
        schedule_lost(inner, name);
    }
    let _ = tx.send(Some(outcome));
    bump(inner);
}

/// Arms the next quiet retry of a lost remote server, doubling the wait after it (up to the
/// ceiling). A reconnect asked for meanwhile takes its place; the timer then stands down.
fn schedule_lost(inner: &Arc<Inner>, name: &str) {
    let Some(schedule) = inner.options.reconnect.as_ref() else {
        return;
    };
    let mut book = lock(&inner.policy);
    let Some(lost) = book.lost.get_mut(name) else {
        return;
    };
    if let Some(timer) = lost.timer.take() {
        timer.abort();
    }
    let delay = lost.delay;
    lost.delay = (delay * 2).min(schedule.retry_max);
    let (weak, name2, id): (Weak<Inner>, String, u64) =
        (Arc::downgrade(inner), name.to_owned(), lost.id);
    let task = crate::runtime::handle().spawn(async move {
        tokio::time::sleep(delay).await;
        let Some(inner) = weak.upgrade() else { return };
        {
            let mut book = lock(&inner.policy);
            match book.lost.get_mut(&name2) {
                Some(lost) if lost.id == id => lost.timer = None,
                _ => return,
            }
            if book.reconnects.contains_key(&name2) {
                return;
            }
        }
        begin(
            &inner,
            &name2,
            Ask {
                scheduled: true,
                ..Ask::default()
            },
        );
    });
    lost.timer = Some(task.abort_handle());
    drop(book);
    inner.host.log(
        LogLevel::Debug,
        "MCP reconnect scheduled",
        json!({ "server": name, "delayMs": delay.as_millis() as u64 }),
    );
}

impl Manager {
    /// Connects server `name` again (18.3.4 `reconnectServer`): shares a reconnect in flight;
    /// `manual` (the user asked) starts the breaker's window over. The new client, or `None`
    /// when it failed, the breaker is open, the name is unknown, or the manager has no
    /// reconnect policy.
    pub async fn reconnect(&self, name: &str, manual: bool) -> Option<Client> {
        self.begin_reconnect(name, manual).await
    }

    /// [`Manager::reconnect`], begun now (the server is reconnecting when this returns, as 18.3.4's
    /// `reconnectServer` marks it at once); the future tells the outcome.
    pub fn begin_reconnect(
        &self,
        name: &str,
        manual: bool,
    ) -> impl std::future::Future<Output = Option<Client>> + Send + 'static {
        let rx = begin(
            &self.inner,
            name,
            Ask {
                manual,
                ..Ask::default()
            },
        );
        let (manager, name) = (self.clone(), name.to_owned());
        async move {
            let outcome = rx?.wait_for(Option::is_some).await.ok()?.clone();
            match outcome {
                Some(Ok(())) => manager.client(&name),
                _ => None,
            }
        }
    }

    /// The config server `name` was last started with, connected or not (18.3.4
    /// `getServerConfig`: also a server whose start failed).
    pub fn known_config(&self, name: &str) -> Option<Value> {
        self.config(name).or_else(|| {
            lock(&self.inner.policy)
                .configs
                .get(name)
                .map(|(_, c)| c.clone())
        })
    }

    /// Records a failure of the startup that is not a server's (the agent's `.mcp.json` when its
    /// config loader throws): it counts for [`Manager::wait_for_startup`] and is reported.
    pub fn startup_failed(&self, name: &str, error: &str) {
        note_startup(&self.inner, name);
        emit(
            &self.inner,
            ConnectionEvent::Failed {
                server: name.into(),
                error: error.into(),
            },
            None,
        );
    }

    /// Whether any server is starting or reconnecting.
    fn busy(&self) -> bool {
        lock(&self.inner.servers).iter().any(|s| s.start.is_some())
            || !lock(&self.inner.policy).reconnects.is_empty()
    }

    /// Waits until no server is starting or reconnecting, or `timeout` passed (`None`: no
    /// deadline); then how the servers named to `connect_servers` stand (18.3.4
    /// `waitForStartup`).
    pub async fn wait_for_startup(&self, timeout: Option<Duration>) -> StartupStatus {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut activity = self.inner.activity.subscribe();
        while self.busy() {
            let changed = activity.changed();
            match deadline {
                Some(at) => {
                    if tokio::time::timeout_at(at, changed).await.is_err() {
                        break;
                    }
                }
                None => {
                    let _ = changed.await;
                }
            }
        }
        let (startup, failures) = {
            let book = lock(&self.inner.policy);
            (book.startup.clone(), book.failures.clone())
        };
        let mut status = StartupStatus::default();
        for name in startup {
            let entry = lock(&self.inner.servers)
                .iter()
                .find(|s| s.name == name)
                .map(|s| s.start.is_none());
            let pending = entry == Some(false) || reconnecting(&self.inner, &name).is_some();
            if pending {
                status.pending.push(name);
            } else if entry == Some(true) {
                status.connected.push(name);
            } else {
                let error = failures
                    .get(&name)
                    .cloned()
                    .unwrap_or_else(|| STARTUP_CLOSED_MESSAGE.into());
                status.failed.push((name, error));
            }
        }
        status
    }

    /// Waits until no server is starting or reconnecting (18.3.4 `waitForPendingConnections`:
    /// for one-shot callers that read right after discovery). The breaker bounds a storm.
    pub async fn wait_for_pending(&self) {
        let mut activity = self.inner.activity.subscribe();
        while self.busy() {
            let _ = activity.changed().await;
        }
    }
}
