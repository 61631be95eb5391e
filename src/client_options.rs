//! What `client.js` sends to build a client: its server config and its options (JSON), and the
//! callback that reads the config again before each reconnect.

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::Value;

use super::convert::millis;
use mcp_native_core::client::model::Implementation;
use mcp_native_core::client::{
    ClientOptions, ConfigSource, Handler, ReconnectPolicy, ServerConfig,
};
use mcp_native_core::error::Error as McpError;

/// JS `() => configJson`: the config object as it is now.
/// JS `getConfig() → string`, as its environment allows ([`super::sink::EnvBound`]).
pub(super) type ConfigCallback =
    super::sink::EnvBound<ThreadsafeFunction<(), String, (), Status, false, true>>;

/// A JS config (as `core.js` sends it) as a [`ServerConfig`].
pub(super) fn server_config(json: &str) -> std::result::Result<ServerConfig, McpError> {
    let value: Value = serde_json::from_str(json)
        .map_err(|_| McpError::InvalidConfig("the config must be an object".into()))?;
    mcp_native_core::client::json_config::server_config(&value)
}

/// The client options from `client.js`: `{ protocolVersion, capabilities, clientInfo,
/// reconnect: { maxAttempts, initialDelayMs, maxDelayMs } | null, forwardRequests }`.
pub(super) fn client_options(json: &str) -> std::result::Result<ClientOptions, McpError> {
    let v: Value = serde_json::from_str(json)
        .map_err(|_| McpError::InvalidConfig("the client options must be an object".into()))?;
    let mut o = ClientOptions::default();
    if let Some(p) = v.get("protocolVersion").and_then(Value::as_str) {
        o.protocol_version = p.to_owned();
    }
    if let Some(c) = v.get("capabilities").filter(|c| !c.is_null()) {
        o.capabilities = c.clone();
    }
    if let Some(info) = v.get("clientInfo").filter(|c| !c.is_null()) {
        o.client_info = serde_json::from_value(info.clone())
            .unwrap_or_else(|_| Implementation::new("omp-coding-agent", "1.0.0"));
    }
    if let Some(r) = v.get("reconnect").filter(|r| r.is_object()) {
        let num = |k: &str| r.get(k).and_then(Value::as_f64);
        let d = ReconnectPolicy::default();
        o.reconnect = Some(ReconnectPolicy {
            max_attempts: num("maxAttempts").map_or(d.max_attempts, |n| n.max(1.0) as u32),
            initial_delay: num("initialDelayMs")
                .map_or(d.initial_delay, |n| Duration::from_millis(millis(n))),
            max_delay: num("maxDelayMs").map_or(d.max_delay, |n| Duration::from_millis(millis(n))),
        });
    }
    if v.get("forwardRequests") == Some(&Value::Bool(true)) {
        o.handler = Handler::Forward;
    }
    // The `oauth` option (SPEC 10.3), made into a `NativeOAuth` by `oauth-client.js`.
    if let Some(id) = v.get("oauthId").and_then(Value::as_u64) {
        let config = u32::try_from(id)
            .ok()
            .and_then(super::oauth_client::config_of);
        o.oauth = Some(config.ok_or_else(|| {
            McpError::InvalidConfig("the oauth option is gone (its NativeOAuth was dropped)".into())
        })?);
    }
    Ok(o)
}

/// Reads the JS config again before each reconnect.
pub(super) struct JsConfig(pub(super) Arc<ConfigCallback>);

impl ConfigSource for JsConfig {
    fn current(&self) -> BoxFuture<'static, Option<ServerConfig>> {
        let tsfn = self.0.clone();
        Box::pin(async move {
            let json = tsfn.call_async(()).await.ok()?;
            server_config(&json).ok()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn options_and_configs_from_js() {
        let o = client_options(r#"{"protocolVersion":"2025-06-18","reconnect":{"maxAttempts":3,"initialDelayMs":50},"forwardRequests":true}"#).unwrap();
        assert_eq!(o.protocol_version, "2025-06-18");
        let r = o.reconnect.unwrap();
        assert_eq!(
            (r.max_attempts, r.initial_delay, r.max_delay),
            (3, Duration::from_millis(50), Duration::from_secs(30))
        );
        assert!(matches!(o.handler, Handler::Forward));
        assert_eq!(
            client_options("{}").unwrap().capabilities,
            json!({"roots":{"listChanged":false}})
        );
        assert!(
            matches!(server_config(r#"{"type":"sse","url":"http://h/sse"}"#).unwrap(), ServerConfig::Http(c) if c.legacy_fallback)
        );
        assert!(matches!(
            server_config(r#"{"command":"x"}"#).unwrap(),
            ServerConfig::Stdio { .. }
        ));
    }
}
