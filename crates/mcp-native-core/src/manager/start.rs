//! Starting servers (SPEC 6 `connectServers`): validation, then in parallel resolve → connect →
//! list tools → hand them over; the startup gate, after which slow servers' cached tools stand
//! in while they finish.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::sync::watch;

use super::host::{LogLevel, ManagerEvent, ServerStatus};
use super::watch::ServerSink;
use super::{Inner, Manager, Outcome, Server, lock};
use crate::client::json_config::server_config;
use crate::client::{Client, ServerConfig};
use crate::error::Error;

/// What [`Manager::start`] did.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct StartReport {
    /// Started now, in order.
    pub started: Vec<String>,
    /// Connected already (not started again).
    pub connected: Vec<String>,
    /// Refused by validation: the messages joined with `; ` (SPEC 6 step 3).
    pub errors: Vec<(String, String)>,
}

/// How the servers of a start stood after the gate.
#[derive(Debug, Default, Clone)]
pub struct GateReport {
    /// Connected.
    pub connected: Vec<String>,
    /// Still starting; their cached tools stand in.
    pub deferred: Vec<String>,
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
        let mut report = StartReport::default();
        for (name, config) in configs {
            {
                let servers = lock(&self.inner.servers);
                match servers.iter().find(|s| s.name == name) {
                    Some(s) if s.start.is_none() => {
                        report.connected.push(name);
                        continue;
                    }
                    Some(_) => continue,
                    None => {}
                }
            }
            let problems = crate::config::validate(&name, &config);
            if !problems.is_empty() {
                report.errors.push((name, problems.join("; ")));
                continue;
            }
            spawn_start(&self.inner, name.clone(), config);
            report.started.push(name);
        }
        report
    }

    /// Waits until the servers of `started` settled or the gate passed; then, for each one still
    /// starting, its cached tools (raced against its own outcome) stand in, or it is awaited.
    pub async fn gate(&self, started: &[String]) -> GateReport {
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
        let _ = tokio::time::timeout(inner.options.gate, all).await;
        let mut deferred = Vec::new();
        let mut waiting = Vec::new();
        for (name, rx) in &starts {
            let Some(rx) = rx else { continue };
            if rx.borrow().is_some() {
                continue;
            }
            // Disconnected meanwhile: nothing to stand in for.
            let Some(config) = self.config(name) else {
                continue;
            };
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
            if stood_in {
                deferred.push(name.clone());
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

/// Registers server `name` as starting and runs its start in the background.
fn spawn_start(inner: &Arc<Inner>, name: String, config: Value) {
    let (tx, rx) = watch::channel(None);
    lock(&inner.outcomes).insert(name.clone(), rx.clone());
    let token = inner.tokens.fetch_add(1, Ordering::Relaxed) + 1;
    let sink = Arc::new(ServerSink::new(inner, &name, token));
    let placeholder = ServerConfig::stdio("", &[]);
    let client = Client::new(
        name.clone(),
        placeholder,
        inner.options.client.clone(),
        Some(sink),
    );
    lock(&inner.servers).push(Server {
        name: name.clone(),
        client: client.clone(),
        config: config.clone(),
        status: ServerStatus::Connecting,
        start: Some(rx),
        token,
        refresh: None,
    });
    inner.host.event(ManagerEvent::Starting {
        server: name.clone(),
        client: client.clone(),
    });
    inner.host.event(ManagerEvent::Status {
        server: name.clone(),
        status: ServerStatus::Connecting,
        error: None,
    });
    let inner = inner.clone();
    crate::runtime::handle().spawn(async move {
        let outcome = run_start(&inner, &name, token, &client, &config).await;
        finish(&inner, &name, token, &client, &config, outcome, tx).await;
    });
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

/// Registers a started server (or closes it, when it was disconnected meanwhile) and tells the
/// waiters; a failure is logged and reported.
async fn finish(
    inner: &Arc<Inner>,
    name: &str,
    token: u64,
    client: &Client,
    config: &Value,
    outcome: Result<Vec<Value>, Error>,
    tx: watch::Sender<Outcome>,
) {
    let outcome = match outcome {
        Ok(tools) if !current(inner, name, token) => {
            // [fix] Disconnected while connecting: closed instead of registered.
            client.close().await;
            let _ = tools;
            let _ = tx.send(Some(Ok(())));
            return;
        }
        Ok(tools) => match inner.host.tools(name, client, &tools).await {
            Ok(()) if !current(inner, name, token) => {
                // [fix] Disconnected while its owner took the tools: they are withdrawn again,
                // and the server is not reported up.
                client.close().await;
                super::report_removed(inner, name);
                let _ = tx.send(Some(Ok(())));
                return;
            }
            Ok(()) => Ok(tools),
            Err(e) => {
                client.close().await;
                Err(e)
            }
        },
        Err(e) => Err(e),
    };
    match outcome {
        Ok(tools) => {
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
            let _ = tx.send(Some(Ok(())));
            inner.host.event(ManagerEvent::Status {
                server: name.into(),
                status: ServerStatus::Connected,
                error: None,
            });
        }
        Err(error) => {
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
                return;
            }
            let _ = tx.send(Some(Err(error.clone())));
            inner.host.log(
                LogLevel::Error,
                "MCP tool load failed",
                json!({ "server": name, "error": message(&error) }),
            );
            // Deferred tools of a server that never came up are withdrawn.
            inner.host.event(ManagerEvent::Removed {
                server: name.into(),
            });
            inner.host.event(ManagerEvent::Status {
                server: name.into(),
                status: ServerStatus::Disconnected,
                error: Some(error),
            });
        }
    }
}
