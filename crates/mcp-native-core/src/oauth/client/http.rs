//! The HTTP side of the OAuth client: its request deadline and the metadata GET (on the
//! process's client, [`crate::net::client`], so proxies and extra CAs apply).
//!
//! Redirects: metadata GETs follow them (at most [`MAX_REDIRECTS`]; the `issuer` and `resource`
//! checks judge the document, not where it came from); every POST (registration, token) and the
//! headless authorizer's GET never do — a token request must not be replayed elsewhere, and the
//! authorization endpoint's redirect *is* the answer (SPEC 10.1 step 11).

use std::time::Duration;

use reqwest::header::ACCEPT;

use super::AuthError;
use crate::oauth::request::{self, Redirects, Reply, RequestError};

/// Redirects a metadata GET follows.
pub const MAX_REDIRECTS: usize = 5;

/// The HTTP settings of one OAuth client.
#[derive(Clone)]
pub(crate) struct OAuthHttp {
    /// The deadline of each request.
    pub(crate) timeout: Duration,
}

impl OAuthHttp {
    /// Settings with `timeout`; fails when the process's HTTP client cannot be built.
    pub(crate) fn new(timeout: Duration) -> Result<Self, AuthError> {
        crate::net::client().map_err(AuthError::Discovery)?;
        Ok(OAuthHttp { timeout })
    }

    /// GET a metadata document with `Accept: application/json` and, when known,
    /// `MCP-Protocol-Version` (SPEC 10.1 step 3).
    pub(crate) async fn get_metadata(
        &self,
        url: &str,
        protocol_version: Option<&str>,
    ) -> Result<Reply, AuthError> {
        let failed = |e: RequestError| AuthError::Discovery(format!("GET {url}: {}", describe(&e)));
        let mut req = request::request(reqwest::Method::GET, url)
            .map_err(failed)?
            .header(ACCEPT, "application/json");
        if let Some(v) = protocol_version {
            req = req.header("mcp-protocol-version", v);
        }
        request::send(req, Redirects::Any(MAX_REDIRECTS), self.timeout)
            .await
            .map_err(|e| AuthError::Discovery(format!("GET {url}: {}", describe(&e))))
    }

    /// A metadata document at one of several candidate URLs: `None` on a 4xx (try the next
    /// candidate), an error on any other failure, else the document's JSON object.
    pub(crate) async fn get_document(
        &self,
        url: &str,
        protocol_version: Option<&str>,
    ) -> Result<Option<serde_json::Map<String, serde_json::Value>>, AuthError> {
        let reply = self.get_metadata(url, protocol_version).await?;
        if (400..500).contains(&reply.status) {
            return Ok(None);
        }
        if !reply.ok() {
            return Err(AuthError::Discovery(format!(
                "GET {url}: HTTP {}",
                reply.status
            )));
        }
        json_object(&reply)
            .map(Some)
            .map_err(|e| AuthError::Discovery(format!("{url}: {e}")))
    }
}

/// A request failure as text (no URL, no body).
pub(crate) fn describe(e: &RequestError) -> String {
    match e {
        RequestError::Timeout => "timeout".to_string(),
        other => other.to_string(),
    }
}

/// The JSON object of a 2xx reply, or why there is none.
pub(crate) fn json_object(
    reply: &Reply,
) -> Result<serde_json::Map<String, serde_json::Value>, String> {
    match reply.json() {
        Some(serde_json::Value::Object(map)) => Ok(map),
        Some(_) => Err("the document is not a JSON object".into()),
        None => Err("the document is not JSON".into()),
    }
}

/// The string members of a JSON array member (`scopes_supported`, ...); `None` when absent or
/// not an array.
pub(crate) fn string_list(
    map: &serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<Vec<String>> {
    map.get(key)?.as_array().map(|items| {
        items
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect()
    })
}

/// A string member, verbatim.
pub(crate) fn string(
    map: &serde_json::Map<String, serde_json::Value>,
    key: &str,
) -> Option<String> {
    map.get(key)?.as_str().map(str::to_owned)
}
