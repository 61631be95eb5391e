//! What the manager does with its clients' events before passing them to the owner's sink:
//! `tools/list_changed` → one debounced refresh; a managed server's reconnect → status and a
//! refresh once it is back; its end for good → forgotten, its tools gone.

use std::sync::{Arc, Weak};

use serde_json::json;

use super::host::{ConnectionEvent, LogLevel, ManagerEvent, ServerStatus, discard_sink};
use super::{Inner, lock};
use crate::client::{ClientEvent, ClientSink, Status};
use crate::error::Error;
use crate::transport::{Event, EventSink};

/// The sink of one managed server's client.
pub(crate) struct ServerSink {
    manager: Weak<Inner>,
    name: String,
    token: u64,
    downstream: Arc<dyn ClientSink>,
}

impl ServerSink {
    pub(crate) fn new(inner: &Arc<Inner>, name: &str, token: u64) -> Self {
        ServerSink {
            manager: Arc::downgrade(inner),
            name: name.into(),
            token,
            downstream: inner.host.client_sink(name).unwrap_or_else(discard_sink),
        }
    }

    /// Whether this server is registered (started, not being started) under this sink's token.
    fn registered(&self, inner: &Inner) -> bool {
        lock(&inner.servers)
            .iter()
            .any(|s| s.name == self.name && s.token == self.token && s.start.is_none())
    }
}

impl EventSink for ServerSink {
    fn emit_all(&self, events: Vec<Event>) {
        self.observe(&events);
        self.downstream.emit_all(events);
    }

    fn backlog(&self) -> Option<&tokio::sync::Notify> {
        self.downstream.backlog()
    }

    fn raw_answers_from(&self) -> Option<usize> {
        self.downstream.raw_answers_from()
    }
}

impl ClientSink for ServerSink {
    fn client_event(&self, event: ClientEvent) {
        // The client's own news first, then what the manager makes of it (its owner hears of the
        // client's close before the server is removed).
        let status = match (&event, self.manager.upgrade()) {
            (ClientEvent::Status(status, error), Some(inner)) if self.registered(&inner) => {
                Some((inner, *status, error.clone()))
            }
            _ => None,
        };
        self.downstream.client_event(event);
        if let Some((inner, status, error)) = status {
            on_client_status(&inner, &self.name, status, error);
        }
    }

    fn observe(&self, events: &[Event]) {
        if let Some(inner) = self.manager.upgrade()
            && events.iter().any(|e| matches!(e, Event::Notification { method, .. } if method == "notifications/tools/list_changed"))
        {
            schedule_refresh(&inner, &self.name);
        }
        self.downstream.observe(events);
    }
}

/// A registered server's client changed status: reconnecting → `connecting`; back →
/// `connected` and its tools listed again; closed for good → forgotten, or (the manager's
/// reconnect policy, 18.3.4) connected again with its tools kept meanwhile.
fn on_client_status(inner: &Arc<Inner>, name: &str, status: Status, error: Option<Error>) {
    if status == Status::Closed && inner.options.reconnect.is_some() {
        inner.host.log(
            LogLevel::Debug,
            "MCP transport lost, triggering reconnect",
            json!({ "server": name }),
        );
        let _ = error; // the ladder's last error is what a failure reports
        inner.host.event(ManagerEvent::Status {
            server: name.into(),
            status: ServerStatus::Connecting,
            error: None,
        });
        super::policy::emit(
            inner,
            ConnectionEvent::Reconnecting {
                server: name.into(),
            },
            None,
        );
        super::policy::begin(inner, name, super::policy::Ask::default());
        return;
    }
    let report = match status {
        Status::Reconnecting => ServerStatus::Connecting,
        Status::Connected => ServerStatus::Connected,
        Status::Closed => ServerStatus::Disconnected,
        Status::Idle | Status::Connecting => return,
    };
    {
        let mut servers = lock(&inner.servers);
        let Some(at) = servers.iter().position(|s| s.name == name) else {
            return;
        };
        if report == ServerStatus::Disconnected {
            let gone = servers.remove(at);
            if let Some(task) = gone.refresh {
                task.abort();
            }
        } else {
            servers[at].status = report;
        }
    }
    if report == ServerStatus::Disconnected {
        inner.host.event(ManagerEvent::Removed {
            server: name.into(),
        });
    }
    inner.host.event(ManagerEvent::Status {
        server: name.into(),
        status: report,
        error,
    });
    if report == ServerStatus::Connected {
        // Back after a reconnect: the server may have changed its tools.
        let (inner, name) = (inner.clone(), name.to_owned());
        crate::runtime::handle().spawn(async move { refresh_quietly(&inner, &name).await });
    }
}

/// One refresh for the `list_changed` notifications of one debounce window.
fn schedule_refresh(inner: &Arc<Inner>, name: &str) {
    let mut servers = lock(&inner.servers);
    let Some(server) = servers.iter_mut().find(|s| s.name == name) else {
        return;
    };
    if let Some(task) = server.refresh.take() {
        task.abort();
    }
    let (weak, name2, delay) = (
        Arc::downgrade(inner),
        name.to_owned(),
        inner.options.refresh_debounce,
    );
    let task = crate::runtime::handle().spawn(async move {
        tokio::time::sleep(delay).await;
        if let Some(inner) = weak.upgrade() {
            if let Some(s) = lock(&inner.servers).iter_mut().find(|s| s.name == name2) {
                s.refresh = None;
            }
            refresh_quietly(&inner, &name2).await;
        }
    });
    server.refresh = Some(task.abort_handle());
}

/// Lists server `name`'s tools again; the host takes them, the cache gets them.
pub(crate) async fn refresh(inner: &Arc<Inner>, name: &str) -> Result<(), Error> {
    let (client, config) = {
        let servers = lock(&inner.servers);
        match servers.iter().find(|s| s.name == name && s.start.is_none()) {
            Some(s) => (s.client.clone(), s.config.clone()),
            None => return Ok(()),
        }
    };
    let items = client.list_all_raw("tools/list", "tools").await?;
    let tools: Vec<serde_json::Value> = items
        .iter()
        .filter_map(|t| serde_json::from_str(t.get()).ok())
        .collect();
    let still = lock(&inner.servers)
        .iter()
        .any(|s| s.name == name && s.client.generation() == client.generation());
    if !still {
        return Ok(());
    }
    inner.host.tools(name, &client, &tools).await?;
    inner.host.cache_set(name, &config, &tools);
    Ok(())
}

/// A refresh nobody awaits (list_changed, after a reconnect, `refresh_all`): failures logged.
pub(crate) async fn refresh_quietly(inner: &Arc<Inner>, name: &str) {
    if let Err(e) = refresh(inner, name).await {
        inner.host.log(
            LogLevel::Error,
            &format!("MCP server \"{name}\": refreshing tools failed: {e}"),
            json!({ "server": name, "error": e.to_string() }),
        );
    }
}
