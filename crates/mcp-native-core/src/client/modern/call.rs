//! One modern request: its `_meta` and headers, re-sent after `-32020`, answered through
//! `input_required` rounds (SPEC 9.1, 9.3).

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::*;
use crate::client::options::{Handler, HandlerError};
use crate::client::{Inner, lock};
use crate::error::Error;
use crate::transport::{Event, Outcome, RequestOptions, Transport, TransportExt};

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
pub(super) fn with_inputs(
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
