//! SPEC 8.6 `discoverOAuthEndpoints`: probe well-known paths on the server's origin, one GET at
//! a time, until a document names an authorization and a token endpoint.
//!
//! The reference read each document with JavaScript property access and `||`, and returned the
//! values it found as they were; [`endpoints_in`] keeps those semantics over `serde_json` values
//! (truthiness, the last operand of a `||` chain when none is truthy, `Array.prototype.join`), so
//! the JS side gets the same object. The one place where the reference would have thrown — a
//! `scopes_supported` that is not an array — reads as "no scopes" here.

use std::time::Duration;

use serde::Serialize;
use serde_json::Value;

use super::request::{Redirects, get_json};

/// The paths tried, in order, each replacing the server URL's path (only its origin is kept).
pub const DISCOVERY_PATHS: [&str; 5] = [
    "/.well-known/oauth-authorization-server",
    "/.well-known/openid-configuration",
    "/oauth/metadata",
    "/.mcp/auth",
    "/authorize",
];

/// The client-id keys of a document, in the order the first truthy one wins.
const CLIENT_ID_KEYS: [&str; 4] = [
    "client_id",
    "clientId",
    "default_client_id",
    "public_client_id",
];

/// What a document yielded: `OAuthEndpoints` with the values as found (`None` is `undefined`).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct FoundEndpoints {
    /// `authorization_endpoint` (or the nested `authorization_url`).
    pub authorization_url: Value,
    /// `token_endpoint` (or the nested `token_url`).
    pub token_url: Value,
    /// The client id, if any key held one (or the last key's falsy value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_id: Option<Value>,
    /// The scopes, space-separated, if the document listed any (or the last key's falsy value).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scopes: Option<Value>,
}

/// Probes [`DISCOVERY_PATHS`] on `server_url`'s origin (following up to 10 redirects, as `fetch`
/// does), each GET bounded by
/// `probe_timeout`; a failed, non-2xx, unparsable or unmatched probe moves on to the next path.
/// `None` after the last one, or at once when `server_url` is not a URL.
pub async fn discover(server_url: &str, probe_timeout: Duration) -> Option<FoundEndpoints> {
    let base = url::Url::parse(server_url).ok()?;
    for path in DISCOVERY_PATHS {
        let Ok(url) = base.join(path) else { continue };
        let Ok(reply) = get_json(url.as_str(), Redirects::Any(10), probe_timeout).await else {
            continue;
        };
        if !reply.ok() {
            continue;
        }
        if let Some(found) = reply.json().as_ref().and_then(endpoints_in) {
            return Some(found);
        }
    }
    None
}

/// The endpoints one metadata document names, by SPEC 8.6's two shapes: top-level
/// `authorization_endpoint` + `token_endpoint`, else `authorization_url` + `token_url` in the
/// first truthy of `oauth`/`authorization`/`auth`.
pub fn endpoints_in(doc: &Value) -> Option<FoundEndpoints> {
    let authorization = prop(doc, "authorization_endpoint");
    let token = prop(doc, "token_endpoint");
    if truthy(authorization) && truthy(token) {
        let joined = match prop(doc, "scopes_supported") {
            Some(Value::Array(items)) => Some(Value::String(join(items, " "))),
            _ => None,
        };
        return Some(FoundEndpoints {
            authorization_url: authorization.cloned().unwrap_or(Value::Null),
            token_url: token.cloned().unwrap_or(Value::Null),
            client_id: client_id(doc),
            scopes: or([joined.as_ref(), prop(doc, "scopes"), prop(doc, "scope")]),
        });
    }
    let nested = or([
        prop(doc, "oauth"),
        prop(doc, "authorization"),
        prop(doc, "auth"),
    ]);
    let nested = nested.as_ref().filter(|v| truthy(Some(v)))?;
    let authorization = prop(nested, "authorization_url");
    let token = prop(nested, "token_url");
    if truthy(authorization) && truthy(token) {
        return Some(FoundEndpoints {
            authorization_url: authorization.cloned().unwrap_or(Value::Null),
            token_url: token.cloned().unwrap_or(Value::Null),
            client_id: client_id(nested),
            scopes: or([prop(nested, "scopes"), prop(nested, "scope")]),
        });
    }
    None
}

fn client_id(doc: &Value) -> Option<Value> {
    or(CLIENT_ID_KEYS.map(|k| prop(doc, k)))
}

/// `value[key]` as JavaScript reads it from parsed JSON: only objects have these properties.
fn prop<'a>(value: &'a Value, key: &str) -> Option<&'a Value> {
    value.as_object()?.get(key)
}

/// JavaScript truthiness of a JSON value (`None` is `undefined`).
pub fn truthy(value: Option<&Value>) -> bool {
    match value {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0),
        Some(_) => true,
    }
}

/// `a || b || … || z`: the first truthy operand, else the last one.
fn or<const N: usize>(operands: [Option<&Value>; N]) -> Option<Value> {
    operands
        .iter()
        .find(|v| truthy(**v))
        .or(operands.last())
        .copied()
        .flatten()
        .cloned()
}

/// `Array.prototype.join(separator)` over JSON items (`null` prints as nothing).
fn join(items: &[Value], separator: &str) -> String {
    items
        .iter()
        .map(|item| match item {
            Value::Null => String::new(),
            other => crate::error::js_string(Some(other)),
        })
        .collect::<Vec<_>>()
        .join(separator)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn found(doc: Value) -> Option<Value> {
        endpoints_in(&doc).map(|f| serde_json::to_value(f).unwrap())
    }

    #[test]
    fn standard_metadata() {
        assert_eq!(
            found(
                json!({"authorization_endpoint": "A", "token_endpoint": "T", "scopes_supported": ["x", "y"]})
            ),
            Some(json!({"authorizationUrl": "A", "tokenUrl": "T", "scopes": "x y"}))
        );
        assert_eq!(
            found(
                json!({"authorization_endpoint": "A", "token_endpoint": "T", "clientId": "c", "scopes_supported": [], "scope": "s"})
            ),
            Some(json!({"authorizationUrl": "A", "tokenUrl": "T", "clientId": "c", "scopes": "s"}))
        );
        // Non-string items print as JavaScript's join prints them.
        assert_eq!(
            found(json!({"authorization_endpoint": "A", "token_endpoint": "T", "scopes_supported": ["a", 3, null, [1, 2]]}))
                .unwrap()["scopes"],
            json!("a 3  1,2")
        );
        // `||` yields the last operand when none is truthy.
        assert_eq!(
            found(json!({"authorization_endpoint": "A", "token_endpoint": "T", "public_client_id": null}))
                .unwrap()["clientId"],
            Value::Null
        );
        assert_eq!(
            found(json!({"authorization_endpoint": "A", "token_endpoint": ""})),
            None
        );
    }

    #[test]
    fn nested_metadata() {
        assert_eq!(
            found(
                json!({"auth": {"authorization_url": "A", "token_url": "T", "client_id": "c", "scope": "s"}})
            ),
            Some(json!({"authorizationUrl": "A", "tokenUrl": "T", "clientId": "c", "scopes": "s"}))
        );
        // The first truthy of oauth/authorization/auth is the only one looked at.
        assert_eq!(
            found(json!({"oauth": {"x": 1}, "auth": {"authorization_url": "A", "token_url": "T"}})),
            None
        );
        // Nested documents need the *_url keys, not the *_endpoint ones.
        assert_eq!(
            found(json!({"oauth": {"authorization_endpoint": "A", "token_endpoint": "T"}})),
            None
        );
    }

    #[test]
    fn documents_that_are_not_objects() {
        for doc in [json!(null), json!("x"), json!([1]), json!(7), json!({})] {
            assert_eq!(endpoints_in(&doc), None);
        }
    }
}
