//! Starting servers (SPEC 6 `connectServers`): validation, then in parallel resolve → connect →
//! list tools → hand them over; the startup gate, after which slow servers' cached tools stand
//! in while they finish.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use super::host::{ConnectionEvent, LogLevel, ManagerEvent, ServerStatus};
use super::watch::ServerSink;
use super::{Inner, Manager, Outcome, Server, lock, policy};
use crate::client::json_config::server_config;
use crate::client::{Client, ServerConfig};
use crate::error::Error;

/// What [`Manager::start`] did.
#[derive(Debug, Default, Clone)]
pub struct StartReport {
    /// Started now, in order.
    pub started: Vec<String>,
    /// Connected already (not started again).
    pub connected: Vec<String>,
    /// Refused by validation: the messages joined with `; ` (SPEC 6 step 3).
    pub errors: Vec<(String, String)>,
    /// This call's id, as its connection events carry it.
    pub call: u64,
}

/// Reports compare by what they report; the call's id is an identity, not an outcome.
impl PartialEq for StartReport {
    fn eq(&self, other: &Self) -> bool {
        self.started == other.started
            && self.connected == other.connected
            && self.errors == other.errors
    }
}

/// How the servers of a start stood after the gate.
#[derive(Debug, Default, Clone)]
pub struct GateReport {
    /// Connected.
    pub connected: Vec<String>,
    /// Still starting; their cached tools stand in.
    pub deferred: Vec<String>,
    /// Still starting, with no cached tools, and not awaited (18.3.4): they finish in the
    /// background, and their owner hears of them then.
    pub pending: Vec<String>,
    /// Failed, with the error (its message is what the JavaScript result's `errors` holds).
    pub errors: Vec<(String, Error)>,
}

/// Errors compare by their message (what the JavaScript result holds).
impl PartialEq for GateReport {
    fn eq(&self, other: &Self) -> bool {
        let messages = |r: &GateReport| {
            r.errors
                .iter()
                .map(|(n, e)| (n.clone(), e.to_string()))
                .collect::<Vec<_>>()
        };
        self.connected == other.connected
            && self.deferred == other.deferred
            && self.pending == other.pending
            && messages(self) == messages(other)
    }
}

/// [`Manager::connect_servers`]: both reports.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ConnectReport {
    /// The start.
    pub start: StartReport,
    /// After the gate.
    pub gate: GateReport,
}

fn message(e: &Error) -> String {
    e.to_string()
}

impl Manager {
    /// Starts every server of `configs` (name → config, in order) that is neither connected nor
    /// starting already and passes validation; returns at once.
    pub fn start(&self, configs: Vec<(String, Value)>) -> StartReport {
        self.start_with(configs, |_, _| Vec::new())
    }

    /// [`Manager::start`] with the host's own check of each config before the package's: the
    /// problems `check` finds (the agent's injected `validateServerConfig`, SPEC 11.2) refuse the
    /// config with its words; a config it passes still goes through the package's validation
    /// (which refuses only what cannot be run). `check` sees only the configs that would start.
    pub fn start_with(
        &self,
        configs: Vec<(String, Value)>,
        mut check: impl FnMut(&str, &Value) -> Vec<String>,
    ) -> StartReport {
        let call = self.inner.tokens.fetch_add(1, Ordering::Relaxed) + 1;
        let mut report = StartReport {
            call,
            ..StartReport::default()
        };
        // Every name reported `connecting` (those refused by validation too), as 18.3.4 does.
        let mut announced = Vec::new();
        let mut starts = Vec::new();
        for (name, config) in configs {
            policy::note_startup(&self.inner, &name);
            {
                let servers = lock(&self.inner.servers);
                match servers.iter().find(|s| s.name == name) {
                    Some(s) if s.start.is_none() => {
                        report.connected.push(name);
                        continue;
                    }
                    Some(_) => continue,
                    None if policy::reconnecting(&self.inner, &name).is_some() => continue,
                    None => {}
                }
            }
            announced.push(name.clone());
            let mut problems = check(&name, &config);
            if problems.is_empty() {
                problems = crate::config::validate(&name, &config);
            }
            if !problems.is_empty() {
                report.errors.push((name, problems.join("; ")));
                continue;
            }
            starts.push((name, config));
        }
        if !announced.is_empty() {
            policy::emit(
                &self.inner,
                ConnectionEvent::Connecting { servers: announced },
                Some(call),
            );
            for (name, error) in &report.errors {
                policy::emit(
                    &self.inner,
                    ConnectionEvent::Failed {
                        server: name.clone(),
                        error: error.clone(),
                    },
                    Some(call),
                );
            }
        }
        for (name, config) in starts {
            // A new config: reconnects use it, and a retry schedule of the old one ends.
            policy::note_config(&self.inner, &name, &config);
            spawn_start(&self.inner, name.clone(), config, call);
            report.started.push(name);
        }
        report
    }

    /// Waits until the servers of `started` settled or the gate passed; then, for each one still
    /// starting, its cached tools (raced against its own outcome) stand in, or it is awaited
    /// (12.7) or left to finish in the background (18.3.4; see [`ManagerOptions::await_uncached`](super::ManagerOptions::await_uncached)).
    pub async fn gate(&self, started: &[String]) -> GateReport {
        self.gate_within(started, Some(self.inner.options.gate))
            .await
    }

    /// [`Manager::gate`] with this call's own window (`None`: wait for every server to settle;
    /// 18.3.4's `startupTimeoutMs` 0).
    pub async fn gate_within(&self, started: &[String], window: Option<Duration>) -> GateReport {
        let inner = &self.inner;
        let starts: Vec<(String, Option<watch::Receiver<Outcome>>)> = {
            let outcomes = lock(&inner.outcomes);
            started
                .iter()
                .map(|n| (n.clone(), outcomes.get(n).cloned()))
                .collect()
        };
        let all =
            futures::future::join_all(starts.iter().filter_map(|(_, rx)| rx.clone()).map(settled));
        match window {
            Some(window) => {
                let _ = tokio::time::timeout(window, all).await;
            }
            None => {
                all.await;
            }
        }
        // Every server still starting at once: its cache entry is read (raced against its own
        // outcome) and stands in, or it is awaited (12.7) or left to the background (18.3.4). At
        // once, not one after the other: each read is a round trip to the owner (the JavaScript
        // thread, busy with the other starts), and with 50 servers in turn the call outlasted
        // the window many times over.
        let looks = starts.iter().filter_map(|(name, rx)| {
            let rx = rx.as_ref()?;
            if rx.borrow().is_some() {
                return None;
            }
            // Disconnected meanwhile: nothing to stand in for.
            let config = self.config(name)?;
            Some(async move {
                let cached = tokio::select! {
                    cached = inner.host.cache_get(name, &config) => cached,
                    () = settled(rx.clone()) => None,
                };
                let still = self.pending_servers().contains(name);
                let stood_in = match cached {
                    Some(tools) if still && rx.borrow().is_none() => {
                        inner.host.stand_in(name, tools).await.is_ok()
                    }
                    _ => false,
                };
                (name, rx, stood_in)
            })
        });
        let looked = futures::future::join_all(looks).await;
        let mut deferred = Vec::new();
        let mut background = Vec::new();
        let mut waiting = Vec::new();
        for (name, rx, stood_in) in looked {
            if stood_in {
                deferred.push(name.clone());
            } else if !inner.options.await_uncached {
                background.push(name.clone());
            } else {
                let user = lock(&inner.servers)
                    .iter()
                    .find(|s| &s.name == name)
                    .and_then(|s| s.client.waiting_for_user());
                waiting.push(settled_unless_user(rx.clone(), user));
            }
        }
        // A server whose OAuth authorization waits for its user is not awaited (SPEC 10.3): it
        // is in no list of the report (its status stays `connecting`); it comes up, or fails
        // to the log and the status events, when its user is done.
        futures::future::join_all(waiting).await;
        let mut report = GateReport::default();
        for (name, rx) in starts {
            let outcome = rx.as_ref().and_then(|r| r.borrow().clone());
            match outcome {
                Some(Ok(())) if self.client(&name).is_some() => report.connected.push(name),
                Some(Err(e)) => report.errors.push((name, e)),
                _ if deferred.contains(&name) => report.deferred.push(name),
                _ if background.contains(&name) => report.pending.push(name),
                _ => {}
            }
        }
        report
    }

    /// [`Manager::start`] and [`Manager::gate`].
    pub async fn connect_servers(&self, configs: Vec<(String, Value)>) -> ConnectReport {
        let start = self.start(configs);
        let gate = self.gate(&start.started).await;
        ConnectReport { start, gate }
    }
}

/// Resolves once the start behind `rx` has an outcome.
async fn settled(mut rx: watch::Receiver<Outcome>) {
    let _ = rx.wait_for(Option::is_some).await;
}

/// [`settled`], or sooner, once the server's OAuth authorizer waits for its user.
async fn settled_unless_user(rx: watch::Receiver<Outcome>, user: Option<watch::Receiver<bool>>) {
    let Some(mut user) = user else {
        return settled(rx).await;
    };
    let done = settled(rx);
    tokio::pin!(done);
    tokio::select! {
        // Cancel-safe: pinned, and awaited again below when the other branch needs it.
        () = &mut done => {}
        // Cancel-safe: a watch read; nothing is lost when dropped.
        gone = async { user.wait_for(|w| *w).await.is_err() } => {
            // The OAuth client is gone: only the outcome is left to wait for.
            if gone {
                done.await;
            }
        }
    }
}

/// Makes server `name`'s client and registers it as starting, under a new token: a new entry at
/// the end, or (a reconnect's attempt) in place of the entry of that name. Its owner hears of
/// the client (`Starting`).
fn register(
    inner: &Arc<Inner>,
    name: &str,
    config: &Value,
    rx: watch::Receiver<Outcome>,
) -> (u64, Client) {
    let token = inner.tokens.fetch_add(1, Ordering::Relaxed) + 1;
    let sink = Arc::new(ServerSink::new(inner, name, token));
    let placeholder = ServerConfig::stdio("", &[]);
    let client = Client::new(
        name.to_owned(),
        placeholder,
        inner.options.client.clone(),
        Some(sink),
    );
    let entry = Server {
        name: name.to_owned(),
        client: client.clone(),
        config: config.clone(),
        status: ServerStatus::Connecting,
        start: Some(rx),
        token,
        refresh: None,
    };
    {
        let mut servers = lock(&inner.servers);
        match servers.iter_mut().find(|s| s.name == name) {
            Some(s) => {
                if let Some(task) = s.refresh.take() {
                    task.abort();
                }
                *s = entry;
            }
            None => servers.push(entry),
        }
    }
    inner.host.event(ManagerEvent::Starting {
        server: name.to_owned(),
        client: client.clone(),
    });
    (token, client)
}

/// Registers server `name` as starting and runs its start in the background.
fn spawn_start(inner: &Arc<Inner>, name: String, config: Value, call: u64) {
    let (tx, rx) = watch::channel(None);
    lock(&inner.outcomes).insert(name.clone(), rx.clone());
    let (token, client) = register(inner, &name, &config, rx);
    inner.host.event(ManagerEvent::Status {
        server: name.clone(),
        status: ServerStatus::Connecting,
        error: None,
    });
    let inner = inner.clone();
    crate::runtime::handle().spawn(async move {
        let outcome = run_start(&inner, &name, token, &client, &config).await;
        let start = Start {
            name: &name,
            token,
            client: &client,
            config: &config,
            call,
        };
        finish(&inner, &start, outcome, tx).await;
    });
}

/// One attempt of a reconnect (the policy's): a new client in the server's entry, started as a
/// first start is; `Ok` once it is registered, connected, its tools with its owner. The entry
/// stays (starting) when it fails: the reconnect decides what follows.
pub(crate) async fn attempt(
    inner: &Arc<Inner>,
    name: &str,
    config: &Value,
    rx: &watch::Receiver<Outcome>,
    call: Option<u64>,
) -> Result<(), Error> {
    // The entry may have gone meanwhile (disconnected): then there is nothing to attempt.
    if !lock(&inner.servers).iter().any(|s| s.name == name)
        && super::policy::reconnecting(inner, name).is_none()
    {
        return Err(Error::Io(format!("MCP server not connected: {name}")));
    }
    let (token, client) = register(inner, name, config, rx.clone());
    let tools = run_start(inner, name, token, &client, config).await?;
    match adopt(inner, name, token, &client, config, tools, call).await? {
        true => Ok(()),
        false => Err(Error::Io(format!(
            "Server \"{name}\" was disconnected during reconnection"
        ))),
    }
}

/// Whether the start of `name` with `token` is still the one the manager holds.
fn current(inner: &Inner, name: &str, token: u64) -> bool {
    lock(&inner.servers)
        .iter()
        .any(|s| s.name == name && s.token == token)
}

/// resolve → connect → list tools → hand them over. `Ok(tools)` when it is up.
async fn run_start(
    inner: &Arc<Inner>,
    name: &str,
    token: u64,
    client: &Client,
    config: &Value,
) -> Result<Vec<Value>, Error> {
    // The owner's resolution (auth storage, config values) is bounded by the connect deadline.
    let ms = config
        .get("timeout")
        .and_then(Value::as_f64)
        .map_or(30_000, crate::client::json_config::millis);
    let prepared = tokio::time::timeout(
        Duration::from_millis(ms),
        inner.host.prepare(name, config.clone()),
    )
    .await
    .map_err(|_| Error::ConnectTimeout {
        name: name.into(),
        ms,
    })??;
    if !current(inner, name, token) {
        return Err(Error::Io(format!("MCP server not connected: {name}")));
    }
    client.set_config(server_config(&prepared)?);
    client.connect().await?;
    let tools = if client.server().is_some_and(|s| s.supports("tools")) {
        match client.list_all_raw("tools/list", "tools").await {
            Ok(items) => items
                .iter()
                .filter_map(|t| serde_json::from_str(t.get()).ok())
                .collect(),
            Err(e) => {
                client.close().await;
                return Err(e);
            }
        }
    } else {
        Vec::new()
    };
    Ok(tools)
}

/// A started server's tools go to its owner and it is registered as connected: `Ok(true)`.
/// `Ok(false)` when it was disconnected meanwhile (closed instead, its tools withdrawn again if
/// its owner took them); an error of the owner closes it.
async fn adopt(
    inner: &Arc<Inner>,
    name: &str,
    token: u64,
    client: &Client,
    config: &Value,
    tools: Vec<Value>,
    call: Option<u64>,
) -> Result<bool, Error> {
    if !current(inner, name, token) {
        // [fix] Disconnected while connecting: closed instead of registered.
        client.close().await;
        return Ok(false);
    }
    if let Err(e) = inner.host.tools(name, client, &tools).await {
        client.close().await;
        return Err(e);
    }
    if !current(inner, name, token) {
        // [fix] Disconnected while its owner took the tools: they are withdrawn again, and
        // the server is not reported up.
        client.close().await;
        super::report_removed(inner, name);
        return Ok(false);
    }
    {
        let mut servers = lock(&inner.servers);
        if let Some(s) = servers
            .iter_mut()
            .find(|s| s.name == name && s.token == token)
        {
            s.start = None;
            s.status = ServerStatus::Connected;
        }
    }
    inner.host.cache_set(name, config, &tools);
    inner.host.log(
        LogLevel::Debug,
        &format!("MCP server \"{name}\" connected with {} tools", tools.len()),
        json!({ "server": name }),
    );
    inner.host.event(ManagerEvent::Status {
        server: name.into(),
        status: ServerStatus::Connected,
        error: None,
    });
    policy::emit(
        inner,
        ConnectionEvent::Connected {
            server: name.into(),
        },
        call,
    );
    Ok(true)
}

/// One start of a server: what [`finish`] needs to know of it.
struct Start<'a> {
    name: &'a str,
    token: u64,
    client: &'a Client,
    config: &'a Value,
    /// The `connect_servers` call it belongs to.
    call: u64,
}

/// A start ended: registered (or closed, when it was disconnected meanwhile), or failed —
/// logged and reported; with the reconnect policy a failed server keeps its tools and a start
/// that timed out is tried again (18.3.4). Its waiters hear how it ended.
async fn finish(
    inner: &Arc<Inner>,
    start: &Start<'_>,
    outcome: Result<Vec<Value>, Error>,
    tx: watch::Sender<Outcome>,
) {
    let Start {
        name,
        token,
        client,
        config,
        call,
    } = *start;
    let outcome = match outcome {
        Ok(tools) => adopt(inner, name, token, client, config, tools, Some(call)).await,
        Err(e) => Err(e),
    };
    let error = match outcome {
        Ok(_) => {
            // Connected, or disconnected meanwhile (not a failure: the gate reports nothing).
            let _ = tx.send(Some(Ok(())));
            policy::bump(inner);
            return;
        }
        Err(error) => error,
    };
    let was = {
        let mut servers = lock(&inner.servers);
        let at = servers
            .iter()
            .position(|s| s.name == name && s.token == token);
        at.map(|i| servers.remove(i))
    };
    if was.is_none() {
        // Its owner disconnected it meanwhile: not a failure (the gate reports nothing).
        let _ = tx.send(Some(Ok(())));
        policy::bump(inner);
        return;
    }
    inner.host.log(
        LogLevel::Error,
        "MCP tool load failed",
        json!({ "server": name, "error": message(&error) }),
    );
    let policy = inner.options.reconnect.is_some();
    if !policy {
        // Deferred tools of a server that never came up are withdrawn (12.7).
        inner.host.event(ManagerEvent::Removed {
            server: name.into(),
        });
    }
    inner.host.event(ManagerEvent::Status {
        server: name.into(),
        status: ServerStatus::Disconnected,
        error: Some(error.clone()),
    });
    policy::emit(
        inner,
        ConnectionEvent::Failed {
            server: name.into(),
            error: message(&error),
        },
        Some(call),
    );
    // 18.3.4: a start that timed out in its handshake is tried again at once (the server may
    // only have been slow); its waiters wait for that reconnect.
    if policy && matches!(error, Error::ConnectTimeout { .. }) {
        policy::emit(
            inner,
            ConnectionEvent::Reconnecting {
                server: name.into(),
            },
            Some(call),
        );
        let ask = policy::Ask {
            call: Some(call),
            ..policy::Ask::default()
        };
        policy::begin(inner, name, ask);
    }
    let _ = tx.send(Some(Err(error)));
    policy::bump(inner);
}
