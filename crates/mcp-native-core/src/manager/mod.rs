//! Many servers (SPEC 6): the registry of servers and their status, validation, parallel connects
//! behind the startup gate (cached tools stand in for slow servers), tools per server, the
//! debounced `tools/list_changed` refresh, reconnect of managed servers, teardown. What belongs
//! to the owner — resolving a config, the tool cache, the tool objects, logging — is asked of a
//! [`ManagerHost`] at lifecycle points.
//!
//! Two profiles (SPEC 11.3): the agent as it ships today (18.3.4), the default — the manager's own
//! reconnect policy with its crash-storm breaker, servers without cached tools left to finish in
//! the background after the startup window — and the 12.7 one ([`ManagerOptions::compat_12_7`]):
//! a dropped server ends unless its client reconnects by itself, and the gate awaits every server
//! that has no cached tools.
//!
//! Files: `mod.rs` the registry and its queries; `start.rs` starting a server and the gate;
//! `host.rs` the host interface and its defaults; `watch.rs` what the manager does with its
//! clients' events (reconnects, `list_changed`); `policy.rs` the 18.3.4 reconnect policy and the
//! startup barriers.

mod host;
mod policy;
mod start;
mod watch;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) use crate::sync::lock;

use serde_json::Value;
use tokio::sync::watch as tokio_watch;

pub use host::{
    ConnectionEvent, DefaultHost, LogLevel, ManagerEvent, ManagerHost, ServerStatus, resolve_values,
};
pub use policy::{BREAKER_MESSAGE, ReconnectSchedule, STARTUP_CLOSED_MESSAGE, StartupStatus};
pub use start::{ConnectReport, GateReport, StartReport};

use crate::client::{Client, ClientOptions};
use crate::error::Error;

/// How long `connect_servers` waits before slow servers' cached tools stand in (SPEC 6).
pub const STARTUP_GATE: Duration = Duration::from_millis(250);
/// `tools/list_changed` notifications of one server within this window cause one refresh.
pub const LIST_CHANGED_DEBOUNCE: Duration = Duration::from_millis(300);

/// Options of a [`Manager`].
#[derive(Debug, Clone)]
pub struct ManagerOptions {
    /// The options of every server's client (handshake values, reconnect, request handler).
    pub client: ClientOptions,
    /// See [`STARTUP_GATE`].
    pub gate: Duration,
    /// See [`LIST_CHANGED_DEBOUNCE`].
    pub refresh_debounce: Duration,
    /// The manager's own reconnect policy (18.3.4, on by default): a server whose connection
    /// ends is connected again on a ladder of waits, behind a crash-storm breaker, its tools kept
    /// meanwhile; a remote one that stays lost is retried on a slower schedule. `None` (12.7): a
    /// dropped server is removed, unless its client reconnects by itself
    /// (`client.reconnect`).
    pub reconnect: Option<ReconnectSchedule>,
    /// Whether the gate awaits a server still starting that has no cached tools to stand in
    /// (12.7), or leaves it to finish in the background (18.3.4, the default: one unresponsive
    /// server must not hold up the others).
    pub await_uncached: bool,
}

impl Default for ManagerOptions {
    /// The agent as it ships today (SPEC 11.4).
    fn default() -> Self {
        ManagerOptions {
            client: ClientOptions::default(),
            gate: STARTUP_GATE,
            refresh_debounce: LIST_CHANGED_DEBOUNCE,
            reconnect: Some(ReconnectSchedule::default()),
            await_uncached: false,
        }
    }
}

impl ManagerOptions {
    /// The 12.7 profile (SPEC 6): no manager reconnect, the gate awaits uncached servers.
    pub fn compat_12_7() -> Self {
        ManagerOptions {
            reconnect: None,
            await_uncached: true,
            ..ManagerOptions::default()
        }
    }
}

/// The outcome of a start, for those who wait for it: `None` while it runs.
type Outcome = Option<Result<(), Error>>;

/// One managed server.
pub(crate) struct Server {
    pub(crate) name: String,
    pub(crate) client: Client,
    /// The config as given (before resolution): the tool cache's key.
    pub(crate) config: Value,
    pub(crate) status: ServerStatus,
    /// Set while it starts; tells waiters how the start ended.
    pub(crate) start: Option<tokio_watch::Receiver<Outcome>>,
    /// Counts starts of this name: a start that finds another in its place stands down.
    pub(crate) token: u64,
    /// The pending debounced refresh.
    pub(crate) refresh: Option<tokio::task::AbortHandle>,
}

pub(crate) struct Inner {
    pub(crate) options: ManagerOptions,
    pub(crate) host: Arc<dyn ManagerHost>,
    /// In start order.
    pub(crate) servers: Mutex<Vec<Server>>,
    /// The outcome of each name's latest start, kept after the server leaves `servers`, so that
    /// a gate run later still hears how a start that finished first ended.
    pub(crate) outcomes: Mutex<std::collections::HashMap<String, tokio_watch::Receiver<Outcome>>>,
    pub(crate) tokens: std::sync::atomic::AtomicU64,
    /// What the 18.3.4 policy keeps per name (configs, reconnects, the breaker, the startup book).
    pub(crate) policy: Mutex<policy::Book>,
    /// Bumped whenever a start or a reconnect settles: the startup barriers wait on it.
    pub(crate) activity: tokio_watch::Sender<u64>,
}

/// Many servers, one object. Cheap to clone; all clones are the same manager.
#[derive(Clone)]
pub struct Manager {
    pub(crate) inner: Arc<Inner>,
}

impl std::fmt::Debug for Manager {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Manager")
            .field("servers", &self.server_names())
            .finish()
    }
}

/// Tells the host that server `name` is gone (its tools withdrawn), unless a start of the same
/// name begun meanwhile holds it now: the host must not forget that one because an older one
/// ended (a disconnect or an abandoned start that closed while the name was started again).
/// Returns whether it was told.
pub(crate) fn report_removed(inner: &Inner, name: &str) -> bool {
    if lock(&inner.servers).iter().any(|s| s.name == name) {
        return false;
    }
    inner.host.event(ManagerEvent::Removed {
        server: name.into(),
    });
    true
}

impl Manager {
    /// A manager with no servers.
    pub fn new(options: ManagerOptions, host: Arc<dyn ManagerHost>) -> Self {
        Manager {
            inner: Arc::new(Inner {
                options,
                host,
                servers: Mutex::new(Vec::new()),
                outcomes: Mutex::default(),
                tokens: Default::default(),
                policy: Mutex::default(),
                activity: tokio_watch::channel(0).0,
            }),
        }
    }

    /// Server `name`'s status (`disconnected` when unknown; `connecting` while it reconnects).
    pub fn status(&self, name: &str) -> ServerStatus {
        let status = {
            let servers = lock(&self.inner.servers);
            servers.iter().find(|s| s.name == name).map(|s| s.status)
        };
        match status {
            Some(status) => status,
            None if policy::reconnecting(&self.inner, name).is_some() => ServerStatus::Connecting,
            None => ServerStatus::Disconnected,
        }
    }

    /// Server `name`'s client, while it is connected (or reconnecting).
    pub fn client(&self, name: &str) -> Option<Client> {
        let servers = lock(&self.inner.servers);
        servers
            .iter()
            .find(|s| s.name == name && s.start.is_none())
            .map(|s| s.client.clone())
    }

    /// Server `name`'s client, also while it starts.
    pub fn any_client(&self, name: &str) -> Option<Client> {
        let servers = lock(&self.inner.servers);
        servers
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.client.clone())
    }

    /// The config server `name` was started with (as given, before resolution).
    pub fn config(&self, name: &str) -> Option<Value> {
        let servers = lock(&self.inner.servers);
        servers
            .iter()
            .find(|s| s.name == name)
            .map(|s| s.config.clone())
    }

    /// The connected servers, in start order.
    pub fn connected_servers(&self) -> Vec<String> {
        let servers = lock(&self.inner.servers);
        servers
            .iter()
            .filter(|s| s.start.is_none())
            .map(|s| s.name.clone())
            .collect()
    }

    /// The servers starting (or reconnecting) now, in start order.
    pub fn pending_servers(&self) -> Vec<String> {
        let mut names: Vec<String> = {
            let servers = lock(&self.inner.servers);
            servers
                .iter()
                .filter(|s| s.start.is_some())
                .map(|s| s.name.clone())
                .collect()
        };
        // A reconnect between its attempts holds no entry.
        let mut more: Vec<String> = policy::reconnect_names(&self.inner)
            .into_iter()
            .filter(|n| !names.contains(n) && !self.server_names().contains(n))
            .collect();
        more.sort();
        names.extend(more);
        names
    }

    /// Every server the manager holds (connected or starting), in start order.
    pub fn server_names(&self) -> Vec<String> {
        lock(&self.inner.servers)
            .iter()
            .map(|s| s.name.clone())
            .collect()
    }

    /// Server `name`'s client once it is connected: at once, after its start or reconnect in
    /// progress, or `MCP server not connected: <name>`.
    pub async fn wait_for(&self, name: &str) -> Result<Client, Error> {
        let start = {
            let servers = lock(&self.inner.servers);
            match servers.iter().find(|s| s.name == name) {
                Some(s) if s.start.is_none() => return Ok(s.client.clone()),
                Some(s) => s.start.clone(),
                None => None,
            }
        };
        let start = start.or_else(|| policy::reconnecting(&self.inner, name));
        let not_connected = || Error::Io(format!("MCP server not connected: {name}"));
        let Some(mut start) = start else {
            return Err(not_connected());
        };
        let outcome = start
            .wait_for(Option::is_some)
            .await
            .map(|o| o.clone())
            .map_err(|_| not_connected())?;
        match outcome {
            Some(Ok(())) => self.client(name).ok_or_else(not_connected),
            Some(Err(e)) => Err(e),
            None => Err(not_connected()),
        }
    }

    /// Closes server `name` (a start or reconnect in progress is abandoned: a connect that
    /// finishes later is closed instead of registered) and forgets it; its tools go (also those
    /// a failed server kept).
    pub async fn disconnect(&self, name: &str) {
        let removed = {
            let mut servers = lock(&self.inner.servers);
            servers
                .iter()
                .position(|s| s.name == name)
                .map(|i| servers.remove(i))
        };
        let known = policy::forget(&self.inner, name);
        policy::bump(&self.inner);
        if removed.is_none() && !known {
            return;
        }
        if let Some(server) = removed {
            if let Some(task) = server.refresh {
                task.abort();
            }
            server.client.close().await;
        }
        if !report_removed(&self.inner, name) {
            return; // nor is it "disconnected": the newer start reports its own status
        }
        self.inner.host.event(ManagerEvent::Status {
            server: name.into(),
            status: ServerStatus::Disconnected,
            error: None,
        });
    }

    /// Closes every server, and forgets those it knows that are not connected.
    pub async fn disconnect_all(&self) {
        let mut names = self.server_names();
        for name in policy::known(&self.inner) {
            if !names.contains(&name) {
                names.push(name);
            }
        }
        futures::future::join_all(names.iter().map(|n| self.disconnect(n))).await;
    }

    /// Lists server `name`'s tools again and hands them to the host (and the cache); an error
    /// propagates (SPEC 6, as in the reference).
    pub async fn refresh(&self, name: &str) -> Result<(), Error> {
        watch::refresh(&self.inner, name).await
    }

    /// Refreshes every connected server; one server's failure is logged and does not stop the
    /// others.
    pub async fn refresh_all(&self) {
        let names = self.connected_servers();
        futures::future::join_all(names.iter().map(|n| watch::refresh_quietly(&self.inner, n)))
            .await;
    }
}
