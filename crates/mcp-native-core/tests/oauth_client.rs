//! The OAuth client of SPEC 10 from Rust, end to end: the Rust [`Client`] with
//! [`ClientOptions::oauth`] against `__test__/fixture/oauth-server.mjs` (a protected MCP server and
//! its authorization server on 127.0.0.1:0). First connection (401 → discovery → registration →
//! authorization → call), a restart on stored tokens ([`FileStore`]), refresh (near expiry and
//! after a 401), a revoked refresh token, step-up, `iss`/`state` mismatches, and no secret in any
//! error. Every secret the fixture issues contains `SENTINEL`. Every wait is bounded.
#![cfg(unix)] // fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows

mod common;

use std::process::Child;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use futures::future::BoxFuture;
use mcp_native_core::client::{Client, ClientOptions, ServerConfig};
use mcp_native_core::error::Error;
use mcp_native_core::oauth::client::{
    AuthError, AuthStore, AuthorizationPrompt, Authorizer, FileStore, HeadlessAuthorizer,
    MemoryStore, OAuthConfig,
};
use serde_json::{Value, json};

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../../__test__/fixture/oauth-server.mjs"
);
const WAIT: Duration = Duration::from_secs(20);
const REDIRECT: &str = "http://127.0.0.1:9/callback";

async fn within<T>(f: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(WAIT, f).await.expect("in time")
}

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Server {
    fn start() -> Server {
        let (child, port) = common::spawn_with_port(&[FIXTURE]);
        Server {
            child,
            base: format!("http://127.0.0.1:{port}"),
        }
    }

    fn url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    async fn stats(&self) -> Value {
        let text = mcp_native_core::net::client()
            .unwrap()
            .get(format!("{}/stats", self.base))
            .send()
            .await
            .unwrap()
            .text()
            .await
            .unwrap();
        serde_json::from_str(&text).unwrap()
    }

    async fn control(&self, body: Value) {
        let resp = mcp_native_core::net::client()
            .unwrap()
            .post(format!("{}/control", self.base))
            .body(body.to_string())
            .send()
            .await
            .unwrap();
        assert_eq!(resp.status(), 200);
    }
}

/// The headless authorizer, counted, with an optional change to the callback URL.
struct Counting {
    inner: HeadlessAuthorizer,
    calls: AtomicUsize,
    rewrite: Option<fn(String) -> String>,
}

impl Counting {
    fn new(rewrite: Option<fn(String) -> String>) -> Arc<Self> {
        Arc::new(Counting {
            inner: HeadlessAuthorizer::new().unwrap(),
            calls: AtomicUsize::new(0),
            rewrite,
        })
    }
}

impl Authorizer for Counting {
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, Result<String, AuthError>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let work = self.inner.authorize(prompt);
        let rewrite = self.rewrite;
        Box::pin(async move {
            let url = work.await?;
            Ok(match rewrite {
                Some(f) => f(url),
                None => url,
            })
        })
    }
}

fn config(authorizer: Arc<dyn Authorizer>, store: Arc<dyn AuthStore>) -> Arc<OAuthConfig> {
    let mut c = OAuthConfig::new("mcp-native tests", REDIRECT, authorizer);
    c.store = store;
    Arc::new(c)
}

fn options(oauth: Arc<OAuthConfig>) -> ClientOptions {
    ClientOptions {
        oauth: Some(oauth),
        ..ClientOptions::default()
    }
}

async fn whoami(client: &Client) -> String {
    let result = within(client.call_tool("whoami", json!({})))
        .await
        .expect("the tool call works");
    serde_json::to_value(&result.content).unwrap()[0]["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

/// No secret of the fixture in the error's Display or Debug.
fn assert_no_secret(e: &Error) {
    for text in [e.to_string(), format!("{e:?}")] {
        assert!(!text.contains("SENTINEL"), "a secret leaked: {text}");
    }
}

fn temp_file(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "mcp-native-oauth-{}-{name}-{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join("mcp-oauth.json")
}

#[tokio::test]
async fn first_connect_discovers_registers_authorizes_and_calls() {
    let server = Server::start();
    let authorizer = Counting::new(None);
    let oauth = config(authorizer.clone(), Arc::new(MemoryStore::default()));
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth),
    ))
    .await
    .expect("connects through the OAuth flow");
    assert!(whoami(&client).await.starts_with("ok whoami with mcp:read"));
    let tools = within(client.list_tools()).await.unwrap();
    assert_eq!(tools.len(), 2);
    let stats = server.stats().await;
    assert_eq!(stats["register"], 1);
    assert_eq!(stats["authorize"], 1);
    assert_eq!(stats["tokenCode"], 1);
    // PRM scopes_supported, plus offline_access that the AS lists (refresh tokens wanted).
    assert_eq!(stats["lastScope"], "mcp:read offline_access");
    assert_eq!(authorizer.calls.load(Ordering::SeqCst), 1);
    within(client.close()).await;
}

#[tokio::test]
async fn a_restart_reuses_the_tokens_in_the_file_store() {
    let server = Server::start();
    let path = temp_file("restart");
    let first = Counting::new(None);
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(config(first.clone(), Arc::new(FileStore::new(&path)))),
    ))
    .await
    .unwrap();
    whoami(&client).await;
    within(client.close()).await;
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600, "the store is private");
    }
    // A new process's client: a fresh store object on the same file, a fresh authorizer.
    let second = Counting::new(None);
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(config(second.clone(), Arc::new(FileStore::new(&path)))),
    ))
    .await
    .unwrap();
    whoami(&client).await;
    within(client.close()).await;
    assert_eq!(
        second.calls.load(Ordering::SeqCst),
        0,
        "no new authorization"
    );
    let stats = server.stats().await;
    assert_eq!(
        (stats["register"].clone(), stats["authorize"].clone()),
        (json!(1), json!(1))
    );
    assert_eq!(
        stats["unauthorized"], 1,
        "only the very first request was refused"
    );
    let _ = std::fs::remove_dir_all(path.parent().unwrap());
}

#[tokio::test]
async fn an_expired_access_token_is_refreshed() {
    let server = Server::start();
    let authorizer = Counting::new(None);
    let oauth = config(authorizer.clone(), Arc::new(MemoryStore::default()));
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth),
    ))
    .await
    .unwrap();
    whoami(&client).await;
    // The server forgets the token (it "expired" early): the 401 is answered with a refresh.
    server.control(json!({ "expireAll": true })).await;
    whoami(&client).await;
    let stats = server.stats().await;
    assert_eq!(stats["tokenRefresh"], 1);
    assert_eq!(stats["authorize"], 1, "no new authorization");
    // Tokens that expire within the refresh margin are refreshed before they are sent.
    server
        .control(json!({ "expiresIn": 30, "expireAll": true }))
        .await;
    whoami(&client).await; // 401 → refresh → a token for 30 s
    let before = server.stats().await;
    whoami(&client).await; // refreshed before sending: no 401
    let after = server.stats().await;
    assert_eq!(after["unauthorized"], before["unauthorized"]);
    assert_eq!(
        after["tokenRefresh"].as_u64().unwrap(),
        before["tokenRefresh"].as_u64().unwrap() + 1
    );
    assert_eq!(authorizer.calls.load(Ordering::SeqCst), 1);
    within(client.close()).await;
}

#[tokio::test]
async fn a_failing_token_endpoint_keeps_the_refresh_token() {
    let server = Server::start();
    let authorizer = Counting::new(None);
    let oauth = config(authorizer.clone(), Arc::new(MemoryStore::default()));
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth),
    ))
    .await
    .unwrap();
    whoami(&client).await;
    server
        .control(json!({ "expireAll": true, "tokenStatus": 503 }))
        .await;
    let e = within(client.call_tool("whoami", json!({})))
        .await
        .expect_err("no token while the endpoint fails");
    assert!(
        matches!(&e, Error::OAuth(AuthError::TokenEndpoint { error }) if error == "HTTP 503"),
        "{e:?}"
    );
    assert_no_secret(&e);
    // Back up: the kept refresh token works; nobody was asked to authorize again.
    server.control(json!({ "tokenStatus": null })).await;
    whoami(&client).await;
    let stats = server.stats().await;
    assert_eq!(stats["tokenRefresh"], 1);
    assert_eq!(stats["authorize"], 1);
    assert_eq!(authorizer.calls.load(Ordering::SeqCst), 1);
    within(client.close()).await;
}

#[tokio::test]
async fn a_revoked_refresh_token_leads_to_a_new_authorization() {
    let server = Server::start();
    let authorizer = Counting::new(None);
    let oauth = config(authorizer.clone(), Arc::new(MemoryStore::default()));
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth),
    ))
    .await
    .unwrap();
    whoami(&client).await;
    server
        .control(json!({ "expireAll": true, "revokeRefresh": true }))
        .await;
    whoami(&client).await;
    let stats = server.stats().await;
    assert_eq!(stats["tokenRefresh"], 1, "the refresh was tried");
    assert_eq!(stats["authorize"], 2, "then authorization again");
    assert_eq!(stats["register"], 1, "with the same registration");
    assert_eq!(authorizer.calls.load(Ordering::SeqCst), 2);
    within(client.close()).await;
}

#[tokio::test]
async fn insufficient_scope_steps_up_to_the_union() {
    let server = Server::start();
    let authorizer = Counting::new(None);
    let oauth = config(authorizer.clone(), Arc::new(MemoryStore::default()));
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth),
    ))
    .await
    .unwrap();
    let result = within(client.call_tool("write", json!({})))
        .await
        .expect("the step-up makes the call work");
    let text = serde_json::to_value(&result.content).unwrap()[0]["text"].clone();
    assert_eq!(text, "ok write with mcp:read offline_access mcp:write");
    let stats = server.stats().await;
    assert_eq!(stats["insufficientScope"], 1);
    assert_eq!(stats["authorize"], 2);
    assert_eq!(stats["lastScope"], "mcp:read offline_access mcp:write");
    within(client.close()).await;
}

/// Sleeps (the user in the browser), then completes headlessly.
struct SlowUser(HeadlessAuthorizer, Duration);

impl Authorizer for SlowUser {
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, Result<String, AuthError>> {
        let work = self.0.authorize(prompt);
        let pause = self.1;
        Box::pin(async move {
            tokio::time::sleep(pause).await;
            work.await
        })
    }
}

#[tokio::test]
async fn the_users_time_does_not_count_against_the_connect_and_request_deadlines() {
    let server = Server::start();
    let mut http = mcp_native_core::transport::http::HttpConfig::new(server.url());
    http.timeout_ms = 800;
    let user = Arc::new(SlowUser(
        HeadlessAuthorizer::new().unwrap(),
        Duration::from_millis(2500),
    ));
    let oauth = config(user, Arc::new(MemoryStore::default()));
    let client = within(Client::connect_to(
        "o",
        ServerConfig::Http(http),
        options(oauth),
    ))
    .await
    .expect("connects although the user took longer than the timeouts");
    assert!(whoami(&client).await.starts_with("ok whoami"));
    within(client.close()).await;
    // Without OAuth work in between, the same deadline still applies.
    let mut http =
        mcp_native_core::transport::http::HttpConfig::new(format!("{}/mcp", server.base));
    http.timeout_ms = 800;
    let never = Arc::new(SlowUser(
        HeadlessAuthorizer::new().unwrap(),
        Duration::from_secs(3600),
    ));
    let mut slow = OAuthConfig::new("t", REDIRECT, never);
    slow.authorize_timeout = Duration::from_millis(300);
    let e = within(Client::connect_to(
        "o",
        ServerConfig::Http(http),
        options(Arc::new(slow)),
    ))
    .await
    .expect_err("the authorizer's own bound ends it");
    assert!(matches!(e, Error::OAuth(AuthError::Authorizer(_))), "{e:?}");
}

/// Records how many authorizations run at once.
struct Overlap {
    inner: HeadlessAuthorizer,
    now: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
}

impl Authorizer for Overlap {
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, Result<String, AuthError>> {
        let (now, most) = (self.now.clone(), self.most.clone());
        let work = self.inner.authorize(prompt);
        Box::pin(async move {
            let at_once = now.fetch_add(1, Ordering::SeqCst) + 1;
            most.fetch_max(at_once, Ordering::SeqCst);
            tokio::time::sleep(Duration::from_millis(200)).await;
            let out = work.await;
            now.fetch_sub(1, Ordering::SeqCst);
            out
        })
    }
}

#[tokio::test]
async fn authorizations_of_one_config_take_turns() {
    let (a, b) = (Server::start(), Server::start());
    let most = Arc::new(AtomicUsize::new(0));
    let user = Arc::new(Overlap {
        inner: HeadlessAuthorizer::new().unwrap(),
        now: Arc::new(AtomicUsize::new(0)),
        most: most.clone(),
    });
    // One config for two servers, as a manager has: their users are asked one after the other.
    let oauth = config(user, Arc::new(MemoryStore::default()));
    let (one, two) = within(async {
        tokio::join!(
            Client::connect_to("a", ServerConfig::http(a.url()), options(oauth.clone())),
            Client::connect_to("b", ServerConfig::http(b.url()), options(oauth.clone())),
        )
    })
    .await;
    let (one, two) = (one.unwrap(), two.unwrap());
    assert_eq!(most.load(Ordering::SeqCst), 1, "never two at once");
    assert_eq!(a.stats().await["authorize"], 1);
    assert_eq!(b.stats().await["authorize"], 1);
    within(one.close()).await;
    within(two.close()).await;
}

#[tokio::test]
async fn a_wrong_iss_is_rejected_before_any_token_request() {
    let server = Server::start();
    server.control(json!({ "iss": "http://127.0.0.1:1" })).await;
    let oauth = config(Counting::new(None), Arc::new(MemoryStore::default()));
    let e = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth),
    ))
    .await
    .expect_err("the iss mismatch fails the connection");
    assert!(
        matches!(e, Error::OAuth(AuthError::IssMismatch { .. })),
        "{e:?}"
    );
    assert_eq!(e.code(), "MCP_OAUTH_ERROR");
    assert_no_secret(&e);
    let stats = server.stats().await;
    assert_eq!(stats["authorize"], 1);
    assert_eq!(
        stats["tokenCode"], 0,
        "no token request after the rejection"
    );
}

#[tokio::test]
async fn a_wrong_state_is_rejected_before_any_token_request() {
    let server = Server::start();
    // The callback URL comes back with another state (a forged or mixed-up response).
    let rewrite: fn(String) -> String = |url| {
        let mut u = url::Url::parse(&url).unwrap();
        let pairs: Vec<(String, String)> = u
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "state" {
                    "forged".into()
                } else {
                    v.into_owned()
                };
                (k.into_owned(), v)
            })
            .collect();
        u.query_pairs_mut().clear().extend_pairs(pairs);
        u.to_string()
    };
    let oauth = config(
        Counting::new(Some(rewrite)),
        Arc::new(MemoryStore::default()),
    );
    let e = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth),
    ))
    .await
    .expect_err("the state mismatch fails the connection");
    assert!(matches!(e, Error::OAuth(AuthError::StateMismatch)), "{e:?}");
    assert_no_secret(&e);
    assert_eq!(server.stats().await["tokenCode"], 0);
}

#[tokio::test]
async fn no_secret_appears_in_errors_or_debug_output() {
    let server = Server::start();
    let store = Arc::new(MemoryStore::default());
    let oauth = config(Counting::new(None), store.clone());
    let client = within(Client::connect_to(
        "o",
        ServerConfig::http(server.url()),
        options(oauth.clone()),
    ))
    .await
    .unwrap();
    whoami(&client).await;
    // The store now holds tokens and a client secret; Debug of the config, its store and the
    // client shows none of them.
    for text in [
        format!("{oauth:?}"),
        format!("{store:?}"),
        format!("{client:?}"),
    ] {
        assert!(!text.contains("SENTINEL"), "a secret leaked: {text}");
    }
    // A refused refresh and a refused step-up: errors without secrets.
    server
        .control(json!({ "expireAll": true, "revokeRefresh": true, "iss": "http://evil" }))
        .await;
    let e = within(client.call_tool("whoami", json!({})))
        .await
        .expect_err("the re-authorization fails on iss");
    assert!(
        matches!(e, Error::OAuth(AuthError::IssMismatch { .. })),
        "{e:?}"
    );
    assert_no_secret(&e);
    within(client.close()).await;
    // The store does hold the registration's secret (so the checks above mean something).
    let registration = store
        .get(&format!("client|{}|{REDIRECT}", server.base))
        .await
        .unwrap()
        .expect("the registration is stored");
    assert!(registration.contains("SENTINEL"));
}
