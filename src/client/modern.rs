//! The 2026-07-28 revision (SPEC 9): a connection with no `initialize` — every request carries
//! its `_meta` (and, over HTTP, `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`), the server's questions
//! come back inside `input_required` results that the client answers and re-sends, and which
//! era a server speaks is found out by probing with `server/discover`.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::headers::{self, ParamHeader};
use super::options::{Handler, HandlerError};
use super::{Inner, lock};
use crate::error::Error;
use crate::transport::{Event, Outcome, RequestOptions, Transport, TransportExt};

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

/// How a probe came out.
pub(crate) enum Probe {
    /// A modern server: the version chosen and the `server/discover` result.
    Modern(String, Box<RawValue>),
    /// Anything else: run `initialize`.
    Legacy,
}

/// `server/discover` with the modern `_meta` (SPEC 9.2): a DiscoverResult (or a recognised
/// modern refusal) means modern; `-32022` is answered once with a version both sides speak.
pub(crate) async fn probe(
    inner: &Inner,
    transport: &Arc<dyn Transport>,
    http: bool,
    timeout_ms: u64,
) -> Result<Probe, Error> {
    let mut version = if MODERN_VERSIONS.contains(&inner.options.protocol_version.as_str()) {
        inner.options.protocol_version.clone()
    } else {
        MODERN_VERSION.to_owned()
    };
    for attempt in 0..2 {
        transport.set_era(crate::transport::Era::Modern);
        transport.set_protocol_version(Some(&version));
        let session = ModernSession::new(inner, &version, http);
        let (params, headers) = session.prepare("server/discover", None)?;
        let options = RequestOptions {
            timeout_ms: Some(timeout_ms),
            headers,
            ..RequestOptions::default()
        };
        let outcome = transport
            .request("server/discover", Some(&params), options)
            .await;
        match outcome {
            Ok(Some(raw)) => {
                let v: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
                let Some(supported) = v.get("supportedVersions").and_then(Value::as_array) else {
                    break; // a legacy server's `{}` (SPEC 9.2 step 3)
                };
                if !supported.iter().any(|s| s.as_str() == Some(&version)) {
                    match common_version(supported) {
                        Some(v) => version = v,
                        None => return Err(Error::UnsupportedProtocol(join(supported))),
                    }
                }
                return Ok(Probe::Modern(version, raw));
            }
            Ok(None) => break,
            Err(e) => match rpc_code(&e) {
                Some((-32022, data)) if attempt == 0 => {
                    let supported = data
                        .as_ref()
                        .and_then(|d| d.get("supported"))
                        .and_then(Value::as_array)
                        .cloned()
                        .unwrap_or_default();
                    match common_version(&supported) {
                        Some(v) => version = v,
                        None => return Err(Error::UnsupportedProtocol(join(&supported))),
                    }
                }
                Some((-32022..=-32020, _)) => return Err(e),
                _ if is_fatal(&e, http) => return Err(e),
                _ => break,
            },
        }
    }
    transport.set_era(crate::transport::Era::Legacy);
    transport.set_protocol_version(None);
    Ok(Probe::Legacy)
}

/// A failure that says nothing about the era: the server cannot be reached, or an authorization
/// step failed. (A stdio timeout, or any other refusal, means legacy.)
fn is_fatal(e: &Error, http: bool) -> bool {
    match e {
        Error::Http { status, .. } => *status == 401 || *status == 403,
        Error::Closed { .. } | Error::Io(_) | Error::NotConnected | Error::Spawn { .. } => true,
        Error::Timeout { .. } | Error::SseTimeout { .. } => http,
        _ => false,
    }
}

fn common_version(supported: &[Value]) -> Option<String> {
    MODERN_VERSIONS
        .iter()
        .find(|v| supported.iter().any(|s| s.as_str() == Some(v)))
        .map(|v| (*v).to_owned())
}

fn join(versions: &[Value]) -> String {
    versions
        .iter()
        .filter_map(Value::as_str)
        .collect::<Vec<_>>()
        .join(", ")
}

/// The `initialize`-shaped view of a `server/discover` result (what the connection object and
/// `server()` show): `serverInfo` from the body or its `_meta` (SPEC 9.5 item 1).
pub(crate) fn init_from_discover(version: &str, raw: &RawValue) -> Box<RawValue> {
    let v: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
    let server_info = v
        .get("serverInfo")
        .or_else(|| v.pointer("/_meta/io.modelcontextprotocol~1serverInfo"))
        .cloned();
    let mut out = Map::new();
    out.insert("protocolVersion".into(), json!(version));
    out.insert(
        "capabilities".into(),
        v.get("capabilities").cloned().unwrap_or(json!({})),
    );
    if let Some(info) = server_info {
        out.insert("serverInfo".into(), info);
    }
    if let Some(i) = v.get("instructions") {
        out.insert("instructions".into(), i.clone());
    }
    if let Some(s) = v.get("supportedVersions") {
        out.insert("supportedVersions".into(), s.clone());
    }
    serde_json::value::to_raw_value(&Value::Object(out)).expect("an object is JSON")
}

/// What a call needs besides its transport: the session, and who answers input requests.
pub(crate) struct Call<'a> {
    pub(crate) inner: &'a Arc<Inner>,
    pub(crate) session: &'a ModernSession,
    pub(crate) transport: Arc<dyn Transport>,
}

impl Call<'_> {
    /// One request in the modern era: `_meta` and headers added, `input_required` rounds
    /// answered and the request re-sent with a new id (at most [`MAX_INPUT_ROUNDS`]), a header
    /// mismatch on `tools/call` answered by listing the tools again once, a broken stream of a
    /// request without side effects re-issued once.
    pub(crate) async fn run(
        &self,
        method: &str,
        params: Option<&str>,
        options: RequestOptions,
    ) -> Outcome {
        let mut extra: Option<(Value, Option<Value>)> = None; // (inputResponses, requestState)
        let mut relisted = false;
        let mut reissued = false;
        for _round in 0..=MAX_INPUT_ROUNDS {
            let with_round = match &extra {
                None => params.map(str::to_owned),
                Some((responses, state)) => Some(with_inputs(params, responses, state.as_ref())?),
            };
            let (body, headers) = self.session.prepare(method, with_round.as_deref())?;
            let mut o = options.clone();
            o.headers.extend(headers);
            if extra.is_some() || relisted || reissued {
                o.id = None; // a re-sent request gets a new id (SPEC 9.1)
            }
            let outcome = self.transport.request(method, Some(&body), o).await;
            let raw = match outcome {
                Ok(Some(raw)) => raw,
                Err(e)
                    if !relisted
                        && method == "tools/call"
                        && matches!(rpc_code(&e), Some((-32020, _))) =>
                {
                    relisted = true;
                    self.relist_tools(&options).await;
                    continue;
                }
                Err(Error::Io(m))
                    if !reissued
                        && side_effect_free(method)
                        && m.contains("SSE stream ended unexpectedly") =>
                {
                    reissued = true;
                    continue;
                }
                other => return other,
            };
            if !raw.get().contains("input_required") {
                return Ok(Some(raw));
            }
            let v: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
            if v.get("resultType").and_then(Value::as_str) != Some("input_required") {
                return Ok(Some(raw));
            }
            let responses = self
                .answer_inputs(v.get("inputRequests"), options.timeout_ms)
                .await?;
            extra = Some((responses, v.get("requestState").cloned()));
        }
        Err(Error::Io("MCP error: too many input rounds".into()))
    }

    async fn relist_tools(&self, options: &RequestOptions) {
        let mut o = options.clone();
        o.headers.clear();
        o.id = None;
        o.progress = None;
        if let Ok((body, headers)) = self.session.prepare("tools/list", None) {
            o.headers = headers;
            if let Ok(Some(raw)) = self.transport.request("tools/list", Some(&body), o).await {
                let v: Value = serde_json::from_str(raw.get()).unwrap_or(Value::Null);
                let items = v
                    .get("tools")
                    .and_then(Value::as_array)
                    .map(|a| {
                        a.iter()
                            .filter_map(|t| serde_json::value::to_raw_value(t).ok())
                            .collect()
                    })
                    .unwrap_or_default();
                self.session.admit_tools(items, true, &|_| {});
            }
        }
    }

    /// The answers to one round's `inputRequests`, keyed as they were.
    async fn answer_inputs(
        &self,
        requests: Option<&Value>,
        timeout_ms: Option<u64>,
    ) -> Result<Value, Error> {
        let mut out = Map::new();
        let Some(Value::Object(requests)) = requests else {
            return Ok(Value::Object(out));
        };
        for (key, request) in requests {
            let method = request
                .get("method")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_owned();
            let params = request.get("params").cloned();
            let answer = ask(self.inner, &method, params, timeout_ms).await?;
            out.insert(key.clone(), answer);
        }
        Ok(Value::Object(out))
    }
}

/// The change notifications a server offers in its capabilities (`listChanged` of tools,
/// resources, prompts), as a `subscriptions/listen` filter; `None` when it offers none.
pub(crate) fn listen_filter(capabilities: &Value) -> Option<Value> {
    let wants = |cap: &str| {
        capabilities.pointer(&format!("/{cap}/listChanged")) == Some(&Value::Bool(true))
    };
    let mut filter = Map::new();
    for (cap, key) in [
        ("tools", "toolsListChanged"),
        ("resources", "resourcesListChanged"),
        ("prompts", "promptsListChanged"),
    ] {
        if wants(cap) {
            filter.insert(key.into(), Value::Bool(true));
        }
    }
    (!filter.is_empty()).then_some(Value::Object(filter))
}

/// The modern era's change notifications (SPEC 9, "How the package surfaces these"): a
/// `subscriptions/listen` request without a deadline, whose stream carries `list_changed`
/// notifications like any others; re-opened with the GET listener's bounded backoff when it ends,
/// while connection `generation` is the client's; given up (the server told, by
/// `notifications/cancelled`) when the connection goes.
pub(crate) async fn listen(inner: std::sync::Weak<Inner>, generation: u64, filter: Value) {
    use crate::transport::http::listener::reconnect_delay;
    // The connection of `generation`, while the client (still referenced) is on it.
    let current = |inner: &std::sync::Weak<Inner>| {
        let client = inner.upgrade()?;
        let st = lock(&client.state);
        st.conn.clone().filter(|c| c.generation == generation)
    };
    let mut failures = 0u32;
    loop {
        let Some(conn) = current(&inner) else { return };
        let Some(session) = conn.modern() else { return };
        let params = json!({ "notifications": filter }).to_string();
        let Ok((body, headers)) = session.prepare("subscriptions/listen", Some(&params)) else {
            return;
        };
        let options = RequestOptions {
            timeout_ms: Some(crate::transport::MAX_TIMEOUT_MS),
            headers,
            ..RequestOptions::default()
        };
        let started = tokio::time::Instant::now();
        let request = conn
            .transport()
            .request("subscriptions/listen", Some(&body), options);
        drop(conn);
        tokio::pin!(request);
        // The request holds the transport: it is dropped (and the server told) as soon as the
        // client is gone or has moved to another connection.
        let outcome = loop {
            tokio::select! {
                outcome = &mut request => break outcome,
                () = tokio::time::sleep(std::time::Duration::from_secs(2)) => {
                    if current(&inner).is_none() {
                        return;
                    }
                }
            }
        };
        // A stream that lasted was a success; one refused at once counts towards giving up.
        if outcome.is_ok() || started.elapsed() > std::time::Duration::from_secs(10) {
            failures = 0;
        } else {
            failures += 1;
            if failures >= crate::transport::http::LISTENER_MAX_FAILURES {
                return;
            }
        }
        tokio::time::sleep(reconnect_delay(failures, None)).await;
    }
}

/// Methods that can be sent twice without doing anything twice.
fn side_effect_free(method: &str) -> bool {
    matches!(
        method,
        "tools/list"
            | "resources/list"
            | "resources/templates/list"
            | "prompts/list"
            | "resources/read"
            | "prompts/get"
            | "server/discover"
    )
}

/// The original params with this round's `inputResponses` and, only when the server sent one,
/// its `requestState` (SPEC 9.1: never `null`).
fn with_inputs(
    params: Option<&str>,
    responses: &Value,
    state: Option<&Value>,
) -> Result<String, Error> {
    let mut map: Map<String, Value> = match params {
        Some(text) => serde_json::from_str(text)
            .map_err(|_| Error::Io("MCP error: params must be an object".into()))?,
        None => Map::new(),
    };
    map.insert("inputResponses".into(), responses.clone());
    match state {
        Some(s) => map.insert("requestState".into(), s.clone()),
        None => map.remove("requestState"),
    };
    Ok(Value::Object(map).to_string())
}

/// Asks the client's handler one input request: a Rust handler directly, JavaScript's
/// `onRequest` through the sink (it answers with [`answer_input`]), or the defaults (`roots/list`
/// → no roots; anything else fails the call).
async fn ask(
    inner: &Arc<Inner>,
    method: &str,
    params: Option<Value>,
    timeout_ms: Option<u64>,
) -> Result<Value, Error> {
    let handler = lock(&inner.handler).clone();
    let reply = match handler {
        Handler::Rust(h) => h.handle(method.to_owned(), params).await,
        Handler::Forward => {
            let (id, rx) = {
                let mut inputs = lock(&inner.inputs);
                inputs.1 += 1;
                let id = format!("\"mcp-native-input-{}\"", inputs.1);
                let (tx, rx) = tokio::sync::oneshot::channel();
                inputs.0.insert(id.clone(), tx);
                (id, rx)
            };
            let params = params.and_then(|p| serde_json::value::to_raw_value(&p).ok());
            inner.sink.emit(Event::Request {
                id: RawValue::from_string(id.clone()).expect("a JSON string"),
                method: method.to_owned(),
                params,
            });
            let ms = timeout_ms.unwrap_or_else(|| inner.config().timeout_ms());
            let waited = tokio::time::timeout(std::time::Duration::from_millis(ms), rx).await;
            lock(&inner.inputs).0.remove(&id);
            match waited {
                Ok(Ok(reply)) => reply,
                Ok(Err(_)) => return Err(Error::closed()),
                Err(_) => return Err(Error::Timeout { ms }),
            }
        }
        Handler::Default if method == "roots/list" => Ok(json!({ "roots": [] })),
        Handler::Default => {
            return Err(Error::Io(format!(
                "MCP error: server asked for {method} and no handler is set"
            )));
        }
    };
    reply.map_err(|e| Error::Io(e.message))
}

/// Routes JavaScript's answer to an input request (its id is one [`ask`] made); false when the id
/// is not one of those (a legacy server→client request).
pub(crate) fn answer_input(inner: &Inner, id: &str, outcome: Result<&str, &str>) -> bool {
    let Some(tx) = lock(&inner.inputs).0.remove(id) else {
        return false;
    };
    let reply = match outcome {
        Ok(result) => Ok(serde_json::from_str(result).unwrap_or(Value::Null)),
        Err(error) => {
            let e: Value = serde_json::from_str(error).unwrap_or(Value::Null);
            Err(HandlerError {
                code: e.get("code").and_then(Value::as_i64).unwrap_or(-32603),
                message: e
                    .get("message")
                    .and_then(Value::as_str)
                    .unwrap_or("the request handler failed")
                    .to_owned(),
            })
        }
    };
    let _ = tx.send(reply);
    true
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modern_error_codes_from_json_rpc_and_http_bodies() {
        let rpc = Error::rpc(
            RawValue::from_string(
                r#"{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}"#.into(),
            )
            .unwrap()
            .as_ref(),
        );
        assert_eq!(rpc_code(&rpc).map(|c| c.0), Some(-32022));
        let http = Error::Http {
            status: 400,
            message: r#"HTTP 400: {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}} [WWW-Authenticate: x]"#.into(),
            session_expired: false,
        };
        assert!(is_modern_error(&http));
        let legacy = Error::Http {
            status: 400,
            message: r#"HTTP 400: {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#.into(),
            session_expired: false,
        };
        assert!(!is_modern_error(&legacy));
        assert_eq!(
            rpc_code(&Error::Http {
                status: 400,
                message: "HTTP 400: ".into(),
                session_expired: false
            }),
            None
        );
    }

    #[test]
    fn input_responses_and_request_state_only_as_the_server_sent_them() {
        let with = with_inputs(
            Some(r#"{"name":"t","requestState":null}"#),
            &json!({"a":1}),
            Some(&json!("s1")),
        )
        .unwrap();
        assert_eq!(
            serde_json::from_str::<Value>(&with).unwrap(),
            json!({"name":"t","inputResponses":{"a":1},"requestState":"s1"})
        );
        let without = with_inputs(Some(r#"{"name":"t"}"#), &json!({}), None).unwrap();
        assert!(!without.contains("requestState"));
    }

    #[test]
    fn discover_results_read_as_an_initialize_result() {
        let raw = RawValue::from_string(r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#.into()).unwrap();
        let init: Value =
            serde_json::from_str(init_from_discover("2026-07-28", &raw).get()).unwrap();
        assert_eq!(init["serverInfo"]["name"], "s");
        assert_eq!(init["protocolVersion"], "2026-07-28");
        assert_eq!(init["capabilities"], json!({"tools":{}}));
    }
}
