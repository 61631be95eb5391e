//! How a [`Client`](super::Client) reaches its server and what it offers: the server config
//! (stdio or HTTP), the handshake values, the reconnect policy, the request handler.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use serde_json::{Value, json};

use super::model::Implementation;
use crate::error::Error;
use crate::transport::http::HttpConfig;
use crate::transport::stdio::StdioConfig;
use crate::transport::{EventSink, Transport};

/// Protocol revisions this client speaks in the legacy (`initialize`) era (SPEC 5.1).
pub const SUPPORTED_PROTOCOL_VERSIONS: [&str; 4] =
    ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"];
/// The revision offered by default (the reference's).
pub const DEFAULT_PROTOCOL_VERSION: &str = "2025-03-26";
/// The latest revision of the `initialize` era, offered by a modern-first client to a legacy server.
pub const LATEST_LEGACY_VERSION: &str = "2025-11-25";
pub use crate::transport::DEFAULT_TIMEOUT_MS;
/// `list_*` stops after this many pages (SPEC 5.1).
pub const MAX_PAGES: usize = 1000;

/// Makes a transport of one's own for a client (an in-process server, a test double): called
/// for every (re)connect with the sink the transport must report to; `timeout_ms` is the
/// connect deadline.
pub type TransportFactory =
    Arc<dyn Fn(Arc<dyn EventSink>) -> Result<Arc<dyn Transport>, Error> + Send + Sync>;

/// Which server, and how to reach it.
#[derive(Clone)]
pub enum ServerConfig {
    /// A child process speaking newline-delimited JSON.
    Stdio {
        /// How to start it.
        config: StdioConfig,
        /// The per-request and connect timeout in milliseconds.
        timeout_ms: u64,
    },
    /// A Streamable HTTP endpoint (with the legacy HTTP+SSE fallback when `legacy_fallback`).
    Http(HttpConfig),
    /// A transport of the caller's making.
    Custom {
        /// Makes the transport of each connection.
        factory: TransportFactory,
        /// The connect deadline in milliseconds.
        timeout_ms: u64,
    },
}

impl std::fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ServerConfig::Stdio { config, timeout_ms } => f
                .debug_struct("Stdio")
                .field("command", &config.command)
                .field("timeout_ms", timeout_ms)
                .finish_non_exhaustive(),
            ServerConfig::Http(c) => f
                .debug_struct("Http")
                .field("timeout_ms", &c.timeout_ms)
                .finish_non_exhaustive(),
            ServerConfig::Custom { timeout_ms, .. } => f
                .debug_struct("Custom")
                .field("timeout_ms", timeout_ms)
                .finish_non_exhaustive(),
        }
    }
}

impl ServerConfig {
    /// `command args…` over stdio, with every default.
    pub fn stdio(command: impl Into<String>, args: &[&str]) -> Self {
        ServerConfig::Stdio {
            config: StdioConfig::new(command, args),
            timeout_ms: DEFAULT_TIMEOUT_MS,
        }
    }

    /// A Streamable HTTP endpoint, with every default.
    pub fn http(url: impl Into<String>) -> Self {
        ServerConfig::Http(HttpConfig::new(url))
    }

    /// The per-request and connect timeout in milliseconds.
    pub fn timeout_ms(&self) -> u64 {
        match self {
            ServerConfig::Stdio { timeout_ms, .. } | ServerConfig::Custom { timeout_ms, .. } => {
                *timeout_ms
            }
            ServerConfig::Http(c) => c.timeout_ms,
        }
    }

    /// The same config with another timeout.
    pub fn with_timeout_ms(mut self, ms: u64) -> Self {
        match &mut self {
            ServerConfig::Stdio { timeout_ms, .. } | ServerConfig::Custom { timeout_ms, .. } => {
                *timeout_ms = ms
            }
            ServerConfig::Http(c) => c.timeout_ms = ms,
        }
        self
    }
}

/// Reconnect after an unexpected close, with capped exponential backoff (SPEC 5.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReconnectPolicy {
    /// Attempts before giving up (default 5).
    pub max_attempts: u32,
    /// The wait before the first attempt; doubled after each failure (default 500 ms).
    pub initial_delay: Duration,
    /// The longest wait (default 30 s).
    pub max_delay: Duration,
}

impl Default for ReconnectPolicy {
    fn default() -> Self {
        ReconnectPolicy {
            max_attempts: 5,
            initial_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(30),
        }
    }
}

/// What answers the server's requests (`elicitation/create`, `sampling/createMessage`,
/// `roots/list`): the result as JSON, or an error that becomes the JSON-RPC error reply.
pub trait RequestHandler: Send + Sync + 'static {
    /// Answers one request.
    fn handle(
        &self,
        method: String,
        params: Option<Value>,
    ) -> BoxFuture<'static, Result<Value, HandlerError>>;
}

/// A request handler's refusal: the JSON-RPC error the server gets.
#[derive(Debug, Clone, PartialEq)]
pub struct HandlerError {
    /// The JSON-RPC error code (e.g. -32601, -32603).
    pub code: i64,
    /// Its message.
    pub message: String,
}

/// Who answers the server's requests.
#[derive(Clone, Default)]
pub enum Handler {
    /// Nobody: `roots/list` gets no roots (when `roots` is declared), anything else `-32601`.
    #[default]
    Default,
    /// They go on as [`Event::Request`](crate::transport::Event::Request) to the client's sink,
    /// whose owner answers them (the JavaScript binding's `onRequest`).
    Forward,
    /// A Rust handler.
    Rust(Arc<dyn RequestHandler>),
}

impl std::fmt::Debug for Handler {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Handler::Default => "Default",
            Handler::Forward => "Forward",
            Handler::Rust(_) => "Rust",
        })
    }
}

/// Options of a [`Client`](super::Client) (SPEC 5.1, 5.2).
#[derive(Debug, Clone)]
pub struct ClientOptions {
    /// The revision offered in `initialize` (default `2025-03-26`).
    pub protocol_version: String,
    /// The capabilities declared (default `{ "roots": { "listChanged": false } }`).
    pub capabilities: Value,
    /// Who this client is (default `omp-coding-agent` `1.0.0`).
    pub client_info: Implementation,
    /// Reconnect after an unexpected close (default off).
    pub reconnect: Option<ReconnectPolicy>,
    /// Who answers the server's requests.
    pub handler: Handler,
    /// The OAuth client of SPEC 10 for a Streamable HTTP server (default none): its 401s (and
    /// 403 `insufficient_scope`) start discovery, registration and authorization, and every
    /// request carries the bearer token. A static `Authorization` header in the server's config
    /// wins: the flow never starts then (SPEC 10.3). Ignored for stdio.
    pub oauth: Option<Arc<crate::oauth::client::OAuthConfig>>,
}

impl Default for ClientOptions {
    fn default() -> Self {
        ClientOptions {
            protocol_version: DEFAULT_PROTOCOL_VERSION.into(),
            capabilities: json!({ "roots": { "listChanged": false } }),
            client_info: Implementation::new("omp-coding-agent", "1.0.0"),
            reconnect: None,
            handler: Handler::Default,
            oauth: None,
        }
    }
}
