//! What a [`Manager`](super::Manager) asks of its owner, at lifecycle points only (never per tool
//! call): resolve a config before connecting, read and write the tool cache, accept a server's
//! tools, log, hear what happened. The defaults make a manager that works on its own (values
//! resolved in Rust, no cache, silent); the JavaScript binding answers with the agent's injected
//! functions.

use std::sync::Arc;

use futures::future::BoxFuture;
use serde_json::{Map, Value};

use crate::client::{Client, ClientSink};
use crate::error::Error;
use crate::transport::ChannelSink;

/// How loud a log line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogLevel {
    /// Something failed.
    Error,
    /// Something is off but handled.
    Warn,
    /// For the curious.
    Debug,
}

/// What a manager reports.
#[derive(Debug, Clone)]
pub enum ManagerEvent {
    /// Server `server` is being started (its client exists from now on).
    Starting {
        /// Its name.
        server: String,
        /// Its client.
        client: Client,
    },
    /// A server's status changed: `connecting`, `connected`, `disconnected` (SPEC 6).
    Status {
        /// Its name.
        server: String,
        /// The new status.
        status: ServerStatus,
        /// What caused it, when something failed.
        error: Option<Error>,
    },
    /// A server is gone (disconnected, failed, or forgotten): its tools go.
    Removed {
        /// Its name.
        server: String,
    },
    /// The 18.3.4 connection status event (`startup-events.ts`), in the order the agent emits
    /// them; the 12.7 profile's owner ignores these.
    Connection {
        /// The event.
        event: ConnectionEvent,
        /// The `connect_servers` call ([`StartReport::call`](super::StartReport::call)) whose
        /// start it is about — its own events and those of the reconnect that follows a start
        /// that timed out — for that call's own listener (18.3.4 `onStatus`); `None` for the
        /// rest.
        call: Option<u64>,
    },
}

/// The agent's `McpConnectionStatusEvent` (18.3.4 `startup-events.ts`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ConnectionEvent {
    /// `{type: "connecting", serverNames}`: the servers a `connect_servers` call starts (those
    /// refused by validation included), once per call.
    Connecting {
        /// In the order given.
        servers: Vec<String>,
    },
    /// `{type: "reconnecting", serverName}`: its connection ended (or its start timed out) and
    /// the manager connects it again.
    Reconnecting {
        /// Its name.
        server: String,
    },
    /// `{type: "connected", serverName}`: its tools are registered.
    Connected {
        /// Its name.
        server: String,
    },
    /// `{type: "failed", serverName, error}`: a start, or a reconnect after its last attempt,
    /// failed; or the crash-storm breaker stopped its reconnects.
    Failed {
        /// Its name.
        server: String,
        /// The message.
        error: String,
    },
}

impl ConnectionEvent {
    /// The server it is about (`None` for `Connecting`, which names several).
    pub fn server(&self) -> Option<&str> {
        match self {
            ConnectionEvent::Connecting { .. } => None,
            ConnectionEvent::Reconnecting { server }
            | ConnectionEvent::Connected { server }
            | ConnectionEvent::Failed { server, .. } => Some(server),
        }
    }
}

/// A managed server's status as SPEC 6 names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ServerStatus {
    /// Starting, or reconnecting.
    Connecting,
    /// Connected.
    Connected,
    /// Not connected.
    Disconnected,
}

impl ServerStatus {
    /// `connecting`, `connected` or `disconnected`.
    pub fn as_str(self) -> &'static str {
        match self {
            ServerStatus::Connecting => "connecting",
            ServerStatus::Connected => "connected",
            ServerStatus::Disconnected => "disconnected",
        }
    }
}

/// See the module documentation. Every method has a default.
pub trait ManagerHost: Send + Sync + 'static {
    /// The config to connect server `name` with (tokens injected, values resolved; a stdio
    /// config's `env` is the child's whole environment). Default: [`resolve_values`], then the
    /// `env` merged over this process's environment, as the reference spawns.
    fn prepare(&self, _name: &str, config: Value) -> BoxFuture<'static, Result<Value, Error>> {
        Box::pin(async move {
            let resolved = resolve_values(config).await?;
            Ok(crate::client::json_config::with_process_env(&resolved))
        })
    }

    /// Cached tool definitions of server `name` for this config. Default: none.
    fn cache_get(&self, _name: &str, _config: &Value) -> BoxFuture<'static, Option<Vec<Value>>> {
        Box::pin(async { None })
    }

    /// Stores server `name`'s tools for this config. Default: nothing.
    fn cache_set(&self, _name: &str, _config: &Value, _tools: &[Value]) {}

    /// Server `name` is connected with these tools (again, after a refresh or a reconnect):
    /// its owner takes them. An error fails the server (it is closed and reported).
    fn tools(
        &self,
        _name: &str,
        _client: &Client,
        _tools: &[Value],
    ) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }

    /// Server `name` is still starting after the gate: its cached tools stand in until it
    /// connects. An error refuses the stand-in: the server is then awaited like one without a
    /// cache entry. Default: taken.
    fn stand_in(&self, _name: &str, _tools: Vec<Value>) -> BoxFuture<'static, Result<(), Error>> {
        Box::pin(async { Ok(()) })
    }

    /// A log line with its details.
    fn log(&self, _level: LogLevel, _message: &str, _details: Value) {}

    /// What happened.
    fn event(&self, _event: ManagerEvent) {}

    /// Where server `name`'s client events go. Default: nowhere.
    fn client_sink(&self, _name: &str) -> Option<Arc<dyn ClientSink>> {
        None
    }
}

/// A host with every default.
#[derive(Debug, Default, Clone, Copy)]
pub struct DefaultHost;

impl ManagerHost for DefaultHost {}

/// Resolves a server config's `headers` (http/sse) or `env` (stdio) values (SPEC 6.3): a value
/// starting with `!` is the trimmed output of that shell command (10 s; failure, timeout or
/// empty output drop the entry), any other value names an environment variable and falls back
/// to itself when it is unset or empty. Entries that resolve to nothing are dropped.
pub async fn resolve_values(mut config: Value) -> Result<Value, Error> {
    let http = matches!(
        config.get("type").and_then(Value::as_str),
        Some("http" | "sse")
    );
    let key = if http { "headers" } else { "env" };
    let Some(Value::Object(values)) = config.get(key).cloned() else {
        return Ok(config);
    };
    let mut out = Map::new();
    for (name, value) in values {
        let resolved = match value {
            Value::String(s) if s.starts_with('!') => {
                crate::config::run_value_command(&s[1..], crate::config::COMMAND_TIMEOUT).await
            }
            Value::String(s) => Some(
                std::env::var(&s)
                    .ok()
                    .filter(|v| !v.is_empty())
                    .unwrap_or(s),
            ),
            Value::Null | Value::Bool(false) => None,
            other => Some(other.to_string()),
        };
        if let Some(v) = resolved.filter(|v| !v.is_empty()) {
            out.insert(name, Value::String(v));
        }
    }
    if let Value::Object(map) = &mut config {
        map.insert(key.into(), Value::Object(out));
    }
    Ok(config)
}

/// A sink for a server's client events that only keeps them for a stream (pure-Rust use).
pub(crate) fn discard_sink() -> Arc<dyn ClientSink> {
    ChannelSink::new().0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_default_host_gives_a_stdio_server_this_process_environment_too() {
        let cfg = serde_json::json!({ "command": "x", "env": { "OWN": "1" } });
        let out = DefaultHost.prepare("s", cfg).await.unwrap();
        assert_eq!(out["env"]["OWN"], "1");
        let path = std::env::var("PATH").unwrap();
        assert_eq!(out["env"]["PATH"], path.as_str());
    }

    #[tokio::test]
    async fn values_resolve_like_the_reference_with_its_fixes() {
        // SAFETY-free: a variable only this test reads.
        let name = format!("MCP_NATIVE_RESOLVE_{}", std::process::id());
        let cfg = serde_json::json!({
            "command": "x",
            "env": { "A": "!echo  a1 ", "B": name, "C": "!exit 1", "D": "literal", "E": "!printf ''" }
        });
        let out = resolve_values(cfg).await.unwrap();
        assert_eq!(
            out["env"],
            serde_json::json!({ "A": "a1", "B": name, "D": "literal" })
        );
        let http = resolve_values(
            serde_json::json!({ "type": "http", "url": "u", "headers": { "H": "!echo h" } }),
        )
        .await
        .unwrap();
        assert_eq!(http["headers"]["H"], "h");
    }
}
