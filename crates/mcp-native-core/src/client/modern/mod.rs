//! The 2026-07-28 revision (SPEC 9): a connection with no `initialize` — every request carries
//! its `_meta` (and, over HTTP, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), the server's questions
//! come back inside `input_required` results that the client answers and re-sends, and which
//! era a server speaks is found out by probing with `server/discover`.
//!
//! Here: the connection's `ModernSession`, the errors that mark a modern server and the era
//! each URL spoke; `probe.rs` finds the era out, `call.rs` runs one request (its `_meta`, headers,
//! `input_required` rounds), `listen.rs` keeps `subscriptions/listen` open.

mod call;
mod listen;
mod probe;
#[cfg(test)]
mod tests;

pub(crate) use call::{Call, answer_input};
pub(crate) use listen::{listen, listen_filter};
pub(crate) use probe::{Probe, init_from_discover, probe};

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::headers::{self, ParamHeader};
use super::options::HandlerError;
use super::{Inner, lock};
use crate::error::Error;

/// The modern revision.
pub const MODERN_VERSION: &str = "2026-07-28";
/// The modern revisions this client speaks.
pub const MODERN_VERSIONS: &[&str] = &[MODERN_VERSION];
/// `input_required` rounds of one call before it fails (SPEC 9, "How the package surfaces these").
pub const MAX_INPUT_ROUNDS: usize = 8;

/// What a modern connection remembers (SPEC 9.2 step 5): the version, the `_meta` every request
/// carries, and the validated tools' `x-mcp-header` annotations.
#[derive(Debug)]
pub(crate) struct ModernSession {
    /// The chosen revision.
    pub(crate) version: String,
    /// The `_meta` members of every request.
    meta: Map<String, Value>,
    /// Over Streamable HTTP (headers are sent, tools with invalid annotations are left out).
    pub(crate) http: bool,
    /// Tool name → its annotations, from the last `tools/list`.
    tools: Mutex<HashMap<String, Vec<ParamHeader>>>,
}

impl ModernSession {
    pub(crate) fn new(inner: &Inner, version: &str, http: bool) -> Self {
        let o = &inner.options;
        let mut meta = Map::new();
        meta.insert(
            "io.modelcontextprotocol/protocolVersion".into(),
            json!(version),
        );
        let caps = if o.capabilities.is_object() {
            o.capabilities.clone()
        } else {
            json!({})
        };
        meta.insert("io.modelcontextprotocol/clientCapabilities".into(), caps);
        meta.insert(
            "io.modelcontextprotocol/clientInfo".into(),
            serde_json::to_value(&o.client_info).unwrap_or_else(|_| json!({})),
        );
        ModernSession {
            version: version.to_owned(),
            meta,
            http,
            tools: Mutex::default(),
        }
    }

    /// `params` with this session's `_meta` (members the caller put there, such as a
    /// `progressToken`, are kept) and the request's headers.
    pub(crate) fn prepare(
        &self,
        method: &str,
        params: Option<&str>,
    ) -> Result<(String, Vec<(String, String)>), Error> {
        let mut map: Map<String, Value> = match params {
            Some(text) => match serde_json::from_str(text) {
                Ok(Value::Object(m)) => m,
                _ => return Err(Error::Io("MCP error: params must be an object".into())),
            },
            None => Map::new(),
        };
        let meta = map
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if !meta.is_object() {
            *meta = Value::Object(Map::new());
        }
        if let Value::Object(m) = meta {
            for (k, v) in &self.meta {
                m.insert(k.clone(), v.clone());
            }
        }
        let mut hdrs = Vec::new();
        if self.http {
            hdrs = headers::standard_headers(method, &map);
            if method == "tools/call"
                && let Some(name) = map.get("name").and_then(Value::as_str)
                && let Some(annotations) = lock(&self.tools).get(name)
            {
                let args = map.get("arguments").cloned().unwrap_or(Value::Null);
                hdrs.extend(headers::param_values(annotations, &args));
            }
        }
        Ok((Value::Object(map).to_string(), hdrs))
    }

    /// A `tools/list` page's tools, minus those with an invalid `x-mcp-header` (over HTTP; each
    /// is reported through `warn`); the annotations of the others are kept for `tools/call`.
    pub(crate) fn admit_tools(
        &self,
        items: Vec<Box<RawValue>>,
        first_page: bool,
        warn: &dyn Fn(String),
    ) -> Vec<Box<RawValue>> {
        if !self.http {
            return items;
        }
        let mut tools = lock(&self.tools);
        if first_page {
            tools.clear();
        }
        let mut kept = Vec::with_capacity(items.len());
        for item in items {
            let tool: Value = serde_json::from_str(item.get()).unwrap_or(Value::Null);
            let name = tool
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            match headers::param_headers(tool.get("inputSchema").unwrap_or(&Value::Null)) {
                Ok(annotations) => {
                    if !annotations.is_empty() {
                        tools.insert(name, annotations);
                    }
                    kept.push(item);
                }
                Err(why) => warn(format!("MCP tool \"{name}\" left out: {why}")),
            }
        }
        kept
    }
}

/// The JSON-RPC error code (and `data`) an error carries: a JSON-RPC error reply, or an HTTP
/// error whose body is one.
pub(crate) fn rpc_code(error: &Error) -> Option<(i64, Option<Value>)> {
    let from_object = |v: &Value| {
        let e = v.get("error").unwrap_or(v);
        e.get("code")
            .and_then(Value::as_i64)
            .map(|c| (c, e.get("data").cloned()))
    };
    match error {
        Error::Rpc { raw, .. } => from_object(&serde_json::from_str(raw.get()).ok()?),
        Error::Http {
            status, message, ..
        } => {
            let body = message.strip_prefix(&format!("HTTP {status}: "))?;
            let mut values = serde_json::Deserializer::from_str(body).into_iter::<Value>();
            from_object(&values.next()?.ok()?)
        }
        _ => None,
    }
}

/// Whether an error says the server speaks the modern revision (SPEC 9.2 step 2).
pub(crate) fn is_modern_error(error: &Error) -> bool {
    matches!(rpc_code(error), Some((-32022..=-32020, _)))
}
/// Which era each HTTP server spoke (by URL), for this process: a client connecting again starts
/// with what worked (SPEC 9.2 step 5).
fn eras() -> &'static Mutex<HashMap<String, bool>> {
    static ERAS: OnceLock<Mutex<HashMap<String, bool>>> = OnceLock::new();
    ERAS.get_or_init(Mutex::default)
}

/// Remembers that the server at `url` is modern (`true`) or legacy.
pub(crate) fn remember(url: &str, modern: bool) {
    lock(eras()).insert(url.to_owned(), modern);
}

/// What the server at `url` spoke last time, if it was seen.
pub(crate) fn remembered(url: &str) -> Option<bool> {
    lock(eras()).get(url).copied()
}

/// Pending input requests asked of JavaScript, and the counter of their ids.
pub(crate) type Inputs = Mutex<(
    HashMap<String, tokio::sync::oneshot::Sender<Result<Value, HandlerError>>>,
    u64,
)>;

/// The modern session of a connection, once negotiated.
pub(crate) type SessionCell = Arc<OnceLock<Arc<ModernSession>>>;
