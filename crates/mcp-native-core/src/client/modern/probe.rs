//! Finding out a server's era: the `server/discover` probe (SPEC 9.2).

use std::sync::Arc;

use serde_json::value::RawValue;
use serde_json::{Map, Value, json};

use super::*;
use crate::client::Inner;
use crate::error::Error;
use crate::transport::{RequestOptions, Transport, TransportExt};

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
