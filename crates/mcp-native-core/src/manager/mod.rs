//! Many servers (SPEC 6): the registry of servers and their status, validation, parallel connects
//! behind the startup gate (cached tools stand in for slow servers), tools per server, the
//! debounced `tools/list_changed` refresh, reconnect of managed servers, teardown. What belongs
//! to the owner — resolving a config, the tool cache, the tool objects, logging — is asked of a
//! [`ManagerHost`] at lifecycle points.
//!
//! Files: `mod.rs` the registry and its queries; `start.rs` starting a server and the gate;
//! `host.rs` the host interface and its defaults; `watch.rs` what the manager does with its
//! clients' events (reconnects, `list_changed`).

mod host;
mod start;
mod watch;

use std::sync::{Arc, Mutex};
use std::time::Duration;

pub(crate) use crate::sync::lock;

use serde_json::Value;
use tokio::sync::watch as tokio_watch;

pub use host::{DefaultHost, LogLevel, ManagerEvent, ManagerHost, ServerStatus, resolve_values};
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
}

impl Default for ManagerOptions {
    fn default() -> Self {
        ManagerOptions {
            client: ClientOptions::default(),
            gate: STARTUP_GATE,
            refresh_debounce: LIST_CHANGED_DEBOUNCE,
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
            }),
        }
    }

    /// Server `name`'s status (`disconnected` when unknown).
    pub fn status(&self, name: &str) -> ServerStatus {
        let servers = lock(&self.inner.servers);
        servers
            .iter()
            .find(|s| s.name == name)
            .map_or(ServerStatus::Disconnected, |s| s.status)
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

    /// The servers starting now, in start order.
    pub fn pending_servers(&self) -> Vec<String> {
        let servers = lock(&self.inner.servers);
        servers
            .iter()
            .filter(|s| s.start.is_some())
            .map(|s| s.name.clone())
            .collect()
    }

    /// Every server the manager holds (connected or starting), in start order.
    pub fn server_names(&self) -> Vec<String> {
        lock(&self.inner.servers)
            .iter()
            .map(|s| s.name.clone())
            .collect()
    }

    /// Server `name`'s client once it is connected: at once, after its start in progress, or
    /// `MCP server not connected: <name>`.
    pub async fn wait_for(&self, name: &str) -> Result<Client, Error> {
        let start = {
            let servers = lock(&self.inner.servers);
            match servers.iter().find(|s| s.name == name) {
                Some(s) if s.start.is_none() => return Ok(s.client.clone()),
                Some(s) => s.start.clone(),
                None => None,
            }
        };
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

    /// Closes server `name` (a start in progress is abandoned: a connect that finishes later is
    /// closed instead of registered) and forgets it; its tools go.
    pub async fn disconnect(&self, name: &str) {
        let removed = {
            let mut servers = lock(&self.inner.servers);
            servers
                .iter()
                .position(|s| s.name == name)
                .map(|i| servers.remove(i))
        };
        let Some(server) = removed else { return };
        if let Some(task) = server.refresh {
            task.abort();
        }
        server.client.close().await;
        if !report_removed(&self.inner, name) {
            return; // nor is it "disconnected": the newer start reports its own status
        }
        self.inner.host.event(ManagerEvent::Status {
            server: name.into(),
            status: ServerStatus::Disconnected,
            error: None,
        });
    }

    /// Closes every server.
    pub async fn disconnect_all(&self) {
        let names = self.server_names();
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
