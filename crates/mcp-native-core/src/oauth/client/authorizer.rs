//! Who takes the user to the authorization endpoint and brings the callback URL back
//! ([`Authorizer`]), and the three built-in ways (SPEC 10.3):
//!
//! - [`HeadlessAuthorizer`]: GET the URL with redirects disabled and return the `Location` of
//!   the 3xx — for tests and for authorization servers that approve without a user.
//! - [`LoopbackAuthorizer`]: listen on the redirect URI's port on the loopback interface, have
//!   the URL opened (a callback), answer the first callback request.
//! - [`ManualAuthorizer`]: a callback returns the callback URL the user pasted; a bare code is
//!   refused, since `state` and `iss` must be checked.
//!
//! The OAuth client bounds every call by
//! [`OAuthConfig::authorize_timeout`](super::OAuthConfig::authorize_timeout). The interactive
//! authorizers serve one prompt at a time (a loopback port can be bound once).

use std::sync::Arc;
use std::time::Duration;

use futures::future::BoxFuture;
use reqwest::header::LOCATION;

use super::AuthError;
use super::config::is_loopback;
use crate::oauth::callback::{CallbackRequest, CallbackServer, Judge};

/// What an authorizer is asked to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationPrompt {
    /// The authorization URL to open.
    pub url: String,
    /// Where the authorization server will redirect.
    pub redirect_uri: String,
    /// The server's name, when the caller gave one.
    pub server_name: Option<String>,
    /// The MCP server's URL.
    pub server_url: String,
    /// The scopes requested.
    pub scopes: Vec<String>,
}

/// Takes the user through authorization: shows or opens `prompt.url` and returns the full
/// callback URL (query intact) the authorization server redirected to.
pub trait Authorizer: Send + Sync {
    /// One authorization.
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, Result<String, AuthError>>;

    /// Whether a person takes part (default `true`): their time is outside the connect deadline
    /// and the manager's startup gate (SPEC 10.3). The headless authorizer says `false`.
    fn interactive(&self) -> bool {
        true
    }
}

/// GET the authorization URL with redirects disabled and return the redirect's `Location`
/// (resolved against the URL). An answer that is not a redirect fails.
#[derive(Clone)]
pub struct HeadlessAuthorizer {
    timeout: Duration,
}

impl std::fmt::Debug for HeadlessAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HeadlessAuthorizer")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl HeadlessAuthorizer {
    /// An authorizer with the package's HTTP setup (proxies, extra CAs), redirects off and the
    /// 10 s request deadline.
    pub fn new() -> Result<Self, AuthError> {
        crate::net::client().map_err(AuthError::Authorizer)?;
        Ok(HeadlessAuthorizer {
            timeout: crate::oauth::request::DEFAULT_REQUEST_TIMEOUT,
        })
    }
}

impl Authorizer for HeadlessAuthorizer {
    fn interactive(&self) -> bool {
        false
    }

    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, Result<String, AuthError>> {
        let timeout = self.timeout;
        Box::pin(async move {
            let exchange = async {
                let failed =
                    |e: String| AuthError::Authorizer(format!("GET the authorization URL: {e}"));
                let client = crate::net::client().map_err(failed)?;
                let resp = crate::net::send(client.get(&prompt.url), crate::net::Redirects::Never)
                    .await
                    .map_err(failed)?;
                let status = resp.status();
                let location = resp
                    .headers()
                    .get(LOCATION)
                    .and_then(|v| v.to_str().ok())
                    .map(str::to_owned);
                match location {
                    Some(location) if status.is_redirection() => {
                        let base = url::Url::parse(&prompt.url).map_err(|_| {
                            AuthError::Authorizer("the authorization URL is invalid".into())
                        })?;
                        base.join(&location).map(String::from).map_err(|_| {
                            AuthError::Authorizer("the redirect's Location is not a URL".into())
                        })
                    }
                    _ => Err(AuthError::Authorizer(format!(
                        "the authorization endpoint answered HTTP {}, not a redirect",
                        status.as_u16()
                    ))),
                }
            };
            tokio::time::timeout(timeout, exchange)
                .await
                .unwrap_or_else(|_| {
                    Err(AuthError::Authorizer(format!(
                        "the authorization endpoint did not answer within {}ms",
                        timeout.as_millis()
                    )))
                })
        })
    }
}

/// Opens a URL for the user (a browser); an `Err` text is reported, and the flow goes on
/// waiting (the user may open the URL by hand).
pub type OpenUrl = Arc<dyn Fn(&str) -> Result<(), String> + Send + Sync>;

/// Listens on the redirect URI's port (on `127.0.0.1`, and `[::1]` when possible), has the URL
/// opened, and answers the first request to the redirect path: the callback URL (see
/// [`crate::oauth::callback`] for the listener's bounds). The redirect URI must be `http` on a
/// loopback host with an explicit port.
#[derive(Clone)]
pub struct LoopbackAuthorizer {
    open_url: OpenUrl,
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for LoopbackAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LoopbackAuthorizer").finish_non_exhaustive()
    }
}

impl LoopbackAuthorizer {
    /// An authorizer that calls `open_url` with each authorization URL.
    pub fn new(open_url: OpenUrl) -> Self {
        LoopbackAuthorizer {
            open_url,
            one_at_a_time: Arc::new(tokio::sync::Mutex::new(())),
        }
    }
}

impl Authorizer for LoopbackAuthorizer {
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, Result<String, AuthError>> {
        let open_url = self.open_url.clone();
        let gate = self.one_at_a_time.clone();
        Box::pin(async move {
            let redirect = url::Url::parse(&prompt.redirect_uri)
                .ok()
                .filter(|u| u.scheme() == "http" && is_loopback(u.as_str()));
            let Some((redirect, port)) = redirect.and_then(|u| u.port().map(|p| (u, p))) else {
                return Err(AuthError::Authorizer(
                    "the loopback authorizer needs an http redirect URI on localhost with a port"
                        .into(),
                ));
            };
            let _turn = gate.lock().await;
            let state = url::Url::parse(&prompt.url).ok().and_then(|u| {
                u.query_pairs()
                    .find(|(k, _)| k == "state")
                    .map(|(_, v)| v.into_owned())
            });
            // The page says whether this is the expected callback; the OAuth client checks
            // everything again.
            let judge: Judge<String, &'static str> = Box::new(move |req: &CallbackRequest| {
                if req.param("state") != state {
                    Err("The authorization response does not match the request.")
                } else if req.param("error").is_some() {
                    Err("Authorization was not granted.")
                } else {
                    Ok(req.url.to_string())
                }
            });
            let server = CallbackServer::bind(port, redirect.path(), judge)
                .await
                .map_err(|e| AuthError::Authorizer(format!("cannot listen on port {port}: {e}")))?;
            let _ = (open_url)(&prompt.url);
            let verdict = server.next().await;
            server.stop().await;
            match verdict {
                Some(Ok(callback)) => Ok(callback),
                Some(Err(page)) => Err(AuthError::Callback(page.to_string())),
                None => Err(AuthError::Authorizer(
                    "the callback listener stopped".into(),
                )),
            }
        })
    }
}

/// Asks for the callback URL (the user pastes what the browser shows after approving).
pub type PromptForCallback =
    Arc<dyn Fn(AuthorizationPrompt) -> BoxFuture<'static, Result<String, AuthError>> + Send + Sync>;

/// A callback returns the pasted callback URL. A bare code is refused: without the URL's
/// `state` and `iss` the response cannot be checked.
#[derive(Clone)]
pub struct ManualAuthorizer {
    prompt: PromptForCallback,
    one_at_a_time: Arc<tokio::sync::Mutex<()>>,
}

impl std::fmt::Debug for ManualAuthorizer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ManualAuthorizer").finish_non_exhaustive()
    }
}

impl ManualAuthorizer {
    /// An authorizer that asks `prompt` for each callback URL.
    pub fn new(prompt: PromptForCallback) -> Self {
        ManualAuthorizer {
            prompt,
            one_at_a_time: Arc::new(tokio::sync::Mutex::new(())),
        }
    }
}

impl Authorizer for ManualAuthorizer {
    fn authorize(
        &self,
        prompt: AuthorizationPrompt,
    ) -> BoxFuture<'static, Result<String, AuthError>> {
        let ask = self.prompt.clone();
        let gate = self.one_at_a_time.clone();
        Box::pin(async move {
            let _turn = gate.lock().await;
            let pasted = ask(prompt).await?;
            let pasted = pasted.trim();
            let is_callback = url::Url::parse(pasted).is_ok_and(|u| {
                u.query_pairs()
                    .any(|(k, _)| k == "code" || k == "error" || k == "state")
            });
            if is_callback {
                Ok(pasted.to_string())
            } else {
                Err(AuthError::Callback(
                    "paste the whole URL the browser was sent to, not the code alone".into(),
                ))
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    fn prompt(url: &str, redirect: &str) -> AuthorizationPrompt {
        AuthorizationPrompt {
            url: url.into(),
            redirect_uri: redirect.into(),
            server_name: None,
            server_url: "http://127.0.0.1:1/mcp".into(),
            scopes: vec![],
        }
    }

    #[tokio::test]
    async fn manual_refuses_a_bare_code() {
        let answer = Arc::new(std::sync::Mutex::new(String::new()));
        let a = answer.clone();
        let m = ManualAuthorizer::new(Arc::new(move |_| {
            let text = a.lock().unwrap().clone();
            Box::pin(async move { Ok(text) })
        }));
        *answer.lock().unwrap() = "SENTINEL-CODE".into();
        let e = m
            .authorize(prompt("http://as/a", "http://localhost:1/cb"))
            .await
            .unwrap_err();
        assert!(matches!(e, AuthError::Callback(_)));
        assert!(!e.to_string().contains("SENTINEL"));
        *answer.lock().unwrap() = " http://localhost:1/cb?code=c&state=s \n".into();
        assert_eq!(
            m.authorize(prompt("http://as/a", "http://localhost:1/cb"))
                .await
                .unwrap(),
            "http://localhost:1/cb?code=c&state=s"
        );
    }

    #[tokio::test]
    async fn loopback_answers_the_first_callback() {
        // A free port for the redirect URI.
        let port = {
            let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
            l.local_addr().unwrap().port()
        };
        let opened = Arc::new(std::sync::Mutex::new(None::<String>));
        let o = opened.clone();
        let a = LoopbackAuthorizer::new(Arc::new(move |url: &str| {
            *o.lock().unwrap() = Some(url.to_string());
            let target = "/callback?code=SENTINEL&state=st1".to_string();
            tokio::spawn(async move {
                let mut s = tokio::net::TcpStream::connect(("127.0.0.1", port))
                    .await
                    .unwrap();
                s.write_all(format!("GET {target} HTTP/1.1\r\nHost: x\r\n\r\n").as_bytes())
                    .await
                    .unwrap();
                let mut page = String::new();
                let _ = s.read_to_string(&mut page).await;
            });
            Ok(())
        }));
        let redirect = format!("http://127.0.0.1:{port}/callback");
        let got = tokio::time::timeout(
            Duration::from_secs(10),
            a.authorize(prompt("http://as/authorize?state=st1", &redirect)),
        )
        .await
        .unwrap()
        .unwrap();
        assert_eq!(
            got,
            format!("http://localhost:{port}/callback?code=SENTINEL&state=st1")
        );
        assert_eq!(
            opened.lock().unwrap().as_deref(),
            Some("http://as/authorize?state=st1")
        );
        // The port is free again.
        assert!(std::net::TcpListener::bind(("127.0.0.1", port)).is_ok());
        let e = a
            .authorize(prompt("http://as/a", "http://example.com:1/cb"))
            .await
            .unwrap_err();
        assert!(matches!(e, AuthError::Authorizer(_)));
    }
}
