//! The one shape of JS host callbacks the binding calls into and awaits: `host(kind,
//! payloadJson) → Promise<string>`, for the manager's lifecycle calls (`manager.rs`) and the
//! OAuth client's user functions and store (`oauth_client.rs`). Unref'd: a pending call does not
//! keep Node's event loop alive by itself.

use std::sync::Arc;

use futures::future::BoxFuture;
use mcp_native_core::transport::http::HeadersRefresher;
use napi::bindgen_prelude::*;
use napi::threadsafe_function::ThreadsafeFunction;
use serde_json::Value;

use super::sink::EnvBound;

/// JS `host(kind, payloadJson) → Promise<string>`, as its environment allows ([`EnvBound`]).
pub(super) type HostCallback = EnvBound<
    ThreadsafeFunction<(String, String), Promise<String>, (String, String), Status, false, true>,
>;

/// The threadsafe, unref'd form of `host`, which lives in `env`.
pub(super) fn host_callback(
    env: &Env,
    host: Function<'_, (String, String), Promise<String>>,
) -> Result<Arc<HostCallback>> {
    Ok(Arc::new(EnvBound::new(
        env,
        host.build_threadsafe_function::<(String, String)>()
            .callee_handled::<false>()
            .weak::<true>()
            .build()?,
    )))
}

/// Calls `host(kind, payload)` and awaits its promise; a throw or rejection is its reason.
pub(super) fn ask(
    call: &Arc<HostCallback>,
    kind: &'static str,
    payload: &Value,
) -> BoxFuture<'static, std::result::Result<String, String>> {
    let call = call.clone();
    let payload = payload.to_string();
    Box::pin(async move {
        let answer = call
            .call_async((kind.to_owned(), payload))
            .await
            .map_err(|e| e.reason.clone())?;
        answer.await.map_err(|e| e.reason.clone())
    })
}

/// The agent's `onAuthError` as the core's [`HeadersRefresher`]: `host("auth", null)` resolves to
/// `"true"` when the JS face applied new headers (`setHeaders`) first; anything else, a throw or
/// a rejection, is none.
pub(super) fn headers_refresher(call: Arc<HostCallback>) -> HeadersRefresher {
    Arc::new(move || {
        let asked = ask(&call, "auth", &Value::Null);
        Box::pin(async move { matches!(asked.await.as_deref(), Ok("true")) })
    })
}
