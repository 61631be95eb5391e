//! The one shape of JS host callbacks the binding calls into and awaits: `host(kind,
//! payloadJson) → Promise<string>`, for the manager's lifecycle calls (`manager.rs`) and the
//! OAuth client's user functions and store (`oauth_client.rs`). Unref'd: a pending call does not
//! keep Node's event loop alive by itself.

use std::sync::Arc;

use futures::future::BoxFuture;
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
