//! After an unexpected close: reconnect with capped exponential backoff (SPEC 5.2), or close for
//! good. After a session expired (HTTP): a new session on the same transport, shared by every
//! request that found it gone, and each of them sent once more (SPEC 3.3, 5.2).

use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures::FutureExt;
use futures::future::{BoxFuture, Shared};

use super::options::ReconnectPolicy;
use super::session::{adopt, close_wait, handshake, open_session};
use super::{ClientEvent, Conn, Inner, Status, lock};
use crate::error::Error;
use crate::runtime;
use crate::transport::SessionHook;

/// The session re-initialization in progress, if any.
pub(crate) type SharedReinit = Mutex<Option<Shared<BoxFuture<'static, Result<(), Error>>>>>;

/// Connection `generation` of `client` ended while connected (SPEC 5.2): without a reconnect
/// policy the client closes for good; with one, the reconnect loop starts. Requests in flight
/// have already failed with `Transport closed`; they are never re-sent.
pub(crate) fn on_drop(client: &Arc<Inner>, generation: u64, reason: Option<Error>) {
    let mut st = lock(&client.state);
    if st.generation != generation || st.status != Status::Connected {
        return;
    }
    st.conn = None;
    match client.options.reconnect {
        None => {
            st.status = Status::Closed;
            let reason = reason.unwrap_or_else(Error::closed);
            st.last_error = Some(reason.clone());
            drop(st);
            client.set_status(Status::Closed, Some(reason));
        }
        Some(policy) => {
            st.status = Status::Reconnecting;
            let epoch = st.epoch;
            let task = runtime::handle().spawn(reconnect(client.clone(), policy, epoch));
            st.reconnecting = Some(task.abort_handle());
            drop(st);
            client.set_status(Status::Reconnecting, None);
        }
    }
}

/// The reconnect loop: `max_attempts` attempts, the first after `initial_delay`, each wait twice
/// the last (at most `max_delay`); every failure reported; the client closes with the last error
/// when none succeeded.
async fn reconnect(client: Arc<Inner>, policy: ReconnectPolicy, epoch: u64) {
    let mut delay = policy.initial_delay;
    let mut last = Error::closed();
    for _ in 0..policy.max_attempts.max(1) {
        tokio::time::sleep(delay).await;
        let source = lock(&client.config_source).clone();
        if let Some(source) = source
            && let Some(config) = source.current().await
        {
            *lock(&client.config) = config;
        }
        let generation = {
            let mut st = lock(&client.state);
            if st.epoch != epoch || st.status != Status::Reconnecting {
                return;
            }
            st.generation += 1;
            st.generation
        };
        let ms = client.config().timeout_ms();
        let attempt = tokio::time::timeout(
            Duration::from_millis(ms),
            open_session(&client, generation, epoch),
        )
        .await;
        match attempt {
            Ok(Ok((conn, init, raw))) => {
                let _ = adopt(&client, epoch, conn, init, raw).await;
                return;
            }
            Ok(Err(e)) => last = e,
            Err(_) => {
                let attempt = lock(&client.state).attempt.take();
                if let Some(conn) = attempt {
                    conn.close_and_wait(close_wait(&client.config())).await;
                }
                last = Error::ConnectTimeout {
                    name: client.name.clone(),
                    ms,
                };
            }
        }
        if lock(&client.state).epoch != epoch {
            return;
        }
        client
            .sink
            .client_event(ClientEvent::AttemptFailed(last.clone()));
        delay = (delay * 2).min(policy.max_delay);
    }
    let mut st = lock(&client.state);
    if st.epoch != epoch {
        return;
    }
    st.status = Status::Closed;
    st.reconnecting = None;
    st.last_error = Some(last.clone());
    drop(st);
    client.set_status(Status::Closed, Some(last));
}

/// Waits until the client is connected (at once, or through a (re)connect in progress, at most
/// `timeout_ms`); fails when there is nothing to wait for or the client closed meanwhile.
pub(crate) async fn when_connected(client: &Inner, timeout_ms: u64) -> Result<Conn, Error> {
    let mut status = client.status_tx.subscribe();
    let wait = async {
        loop {
            {
                let st = lock(&client.state);
                match st.status {
                    // A connection whose transport has ended but whose end the client has
                    // not seen yet (its requests already failed; `on_drop` is on its way):
                    // wait for what comes next — a reconnect, or the close with its error.
                    Status::Connected => {
                        if let Some(conn) = &st.conn
                            && conn.transport().is_open()
                        {
                            return Ok(conn.clone());
                        }
                    }
                    Status::Connecting | Status::Reconnecting => {}
                    Status::Closed if st.last_error.is_some() => {
                        return Err(st.last_error.clone().unwrap_or_else(Error::closed));
                    }
                    Status::Idle | Status::Closed => return Err(Error::NotConnected),
                }
            }
            if status.changed().await.is_err() {
                return Err(Error::closed());
            }
        }
    };
    match tokio::time::timeout(Duration::from_millis(timeout_ms), wait).await {
        Ok(r) => r,
        Err(_) => Err(Error::Timeout { ms: timeout_ms }),
    }
}

/// The client's [`SessionHook`] on one HTTP connection.
pub(crate) struct ReinitHook {
    pub(crate) client: Weak<Inner>,
    pub(crate) generation: u64,
}

impl SessionHook for ReinitHook {
    fn reinitialize(&self) -> BoxFuture<'static, Result<(), Error>> {
        let Some(client) = self.client.upgrade() else {
            return Box::pin(async { Err(Error::closed()) });
        };
        let generation = self.generation;
        let mut slot = lock(&client.reinit);
        if let Some(shared) = slot.as_ref() {
            return shared.clone().boxed();
        }
        let weak = self.client.clone();
        let work: BoxFuture<'static, Result<(), Error>> = Box::pin(async move {
            let client = weak.upgrade().ok_or_else(Error::closed)?;
            let conn = {
                let st = lock(&client.state);
                st.conn.clone().filter(|c| c.generation == generation)
            };
            let result = match conn {
                Some(conn) => handshake(&client, &conn).await.map(|(init, raw)| {
                    lock(&client.state).init = Some((init, raw.clone()));
                    client.sink.client_event(ClientEvent::Connected {
                        generation,
                        init: raw,
                    });
                }),
                None => Err(Error::closed()),
            };
            *lock(&client.reinit) = None;
            result
        });
        let shared = work.shared();
        *slot = Some(shared.clone());
        shared.boxed()
    }
}
