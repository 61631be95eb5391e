//! The modern era's change notifications: `subscriptions/listen`.

use serde_json::{Map, Value, json};

use crate::client::{Inner, lock};
use crate::transport::{RequestOptions, TransportExt};

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
