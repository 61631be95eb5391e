//! The one HTTP client of the process: every request the package makes over `reqwest` (the HTTP
//! transport, OAuth discovery, the OAuth flow and client, the headless authorizer) goes through
//! [`send`], on one shared client ([`client`]) built once, so that HTTP servers get what the
//! agent gets from Bun's `fetch`:
//!
//! - **Proxies from the environment.** `HTTPS_PROXY`/`https_proxy` for `https:` URLs,
//!   `HTTP_PROXY`/`http_proxy` for `http:` URLs, `ALL_PROXY`/`all_proxy` for both when the
//!   scheme's own is unset, and `NO_PROXY`/`no_proxy` (comma-separated hosts, domains with their
//!   subdomains, IPs, CIDR ranges, `*`) to bypass them; the upper-case name wins when both are
//!   set. An `https:` target goes through an HTTP proxy with `CONNECT`; an `http:` target is sent
//!   to it as an absolute-URI request; `user:pass@` in the proxy URL becomes `Proxy-Authorization`.
//!   reqwest reads these variables when the client is built (once per process, like Node reads
//!   its own settings once; under CGI, where `REQUEST_METHOD` is set, it ignores them, the
//!   httpoxy rule) — this module relies on that and the tests pin it down.
//! - **The trust store of Node and Bun**: Mozilla's root certificates (bundled, `webpki-roots`)
//!   plus the PEM file named by `NODE_EXTRA_CA_CERTS`, read once per process; a file that cannot
//!   be read or holds no certificate is ignored. Not the operating system's store: that is what
//!   `fetch` in Node and Bun trusts by default, and it links no platform framework (the macOS
//!   build is linked from Linux).
//! - **Redirects decided by the caller** ([`Redirects`]): the shared client follows none itself;
//!   [`send`] follows them as the caller's policy says, and drops the credentials when a redirect
//!   leaves the origin.

use std::sync::{Arc, OnceLock};
use std::time::Duration;

use reqwest::header::{self, HeaderMap};
use reqwest::{Method, Url};

/// The environment variable naming a PEM file of extra trusted CA certificates.
pub const EXTRA_CA_CERTS_VAR: &str = "NODE_EXTRA_CA_CERTS";

/// Largest `NODE_EXTRA_CA_CERTS` file read: 16 MiB (a full system bundle is about 200 KiB). A
/// larger file is ignored like an unreadable one.
pub const MAX_CA_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// How long the shared client keeps an idle connection.
pub const POOL_IDLE: Duration = Duration::from_secs(90);

/// TCP keepalive of every connection: first probe after this much idle time, then one every
/// this often (a dead peer or a dropped NAT entry ends an idle connection, or an event stream
/// that has no deadline, instead of leaving it waiting forever).
pub const KEEPALIVE: Duration = Duration::from_secs(15);

/// Most redirects followed within the origin ([`Redirects::SameOrigin`]).
pub const MAX_SAME_ORIGIN_REDIRECTS: usize = 10;

/// Which redirects [`send`] follows (301, 302, 303, 307, 308 with a `Location`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Redirects {
    /// None: the redirect is the answer.
    Never,
    /// Those within the first request's origin (scheme, host, port), at most
    /// [`MAX_SAME_ORIGIN_REDIRECTS`]; one that leaves the origin, or one more, is the answer.
    SameOrigin,
    /// Any, at most this many; one more is an error (`too many redirects`).
    Any(usize),
    /// The agent's `headerPolicy: "origin-locked"` (18.3.4 `mcpFetch`): at most this many hops;
    /// a request other than a GET follows only 307 and 308 (another redirect is an error, never
    /// a silent GET); a hop to another origin than the first request's carries only the protocol
    /// headers ([`PROTOCOL_HEADERS`]: the configured ones, credentials included, stay behind,
    /// and come back on a hop to the first origin). One more hop is an error naming the URL
    /// with its credential-like query values redacted.
    OriginLocked(usize),
}

/// How an error of [`send`] starts when it is a redirect that [`Redirects::OriginLocked`]
/// refuses (a policy's answer, not a network failure): the caller words it without this.
pub const REFUSED_REDIRECT: &str = "refused redirect: ";

/// The headers a hop to another origin keeps under [`Redirects::OriginLocked`]: those the client
/// makes itself (the agent's "generated" headers).
pub const PROTOCOL_HEADERS: [&str; 5] = [
    "content-type",
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

/// `url` as an error may name it: the values of query parameters whose names look like
/// credentials (`key`, `token`, `secret`, `auth`, in any case) replaced by `[redacted]`.
pub fn redact_url(url: &Url) -> String {
    let sensitive = |name: &str| {
        let lower = name.to_ascii_lowercase();
        ["key", "token", "secret", "auth"]
            .iter()
            .any(|w| lower.contains(w))
    };
    if !url.query_pairs().any(|(k, _)| sensitive(&k)) {
        return url.to_string();
    }
    let mut out = url.clone();
    let pairs: Vec<(String, String)> = url
        .query_pairs()
        .map(|(k, v)| {
            let v = if sensitive(&k) {
                "[redacted]".to_owned()
            } else {
                v.into_owned()
            };
            (k.into_owned(), v)
        })
        .collect();
    out.query_pairs_mut().clear().extend_pairs(pairs);
    out.to_string()
}

/// The TLS setup of every connection: rustls (aws-lc-rs), Mozilla's roots plus the
/// `NODE_EXTRA_CA_CERTS` file, HTTP/1.1 by ALPN.
pub fn tls_config() -> Arc<rustls::ClientConfig> {
    static CONFIG: OnceLock<Arc<rustls::ClientConfig>> = OnceLock::new();
    CONFIG
        .get_or_init(|| {
            let mut roots = rustls::RootCertStore {
                roots: webpki_roots::TLS_SERVER_ROOTS.to_vec(),
            };
            // A certificate rustls cannot use is skipped, as Node skips it.
            let _ = roots.add_parsable_certificates(extra_roots().iter().cloned());
            let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
            let mut config = rustls::ClientConfig::builder_with_provider(provider)
                .with_safe_default_protocol_versions()
                .expect("aws-lc-rs supports the default TLS versions")
                .with_root_certificates(roots)
                .with_no_client_auth();
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
            Arc::new(config)
        })
        .clone()
}

/// The process's HTTP client (a handle: cheap to clone), built the first time it is asked for;
/// the error says why it could not be built.
pub fn client() -> Result<reqwest::Client, String> {
    static CLIENT: OnceLock<Result<reqwest::Client, String>> = OnceLock::new();
    CLIENT
        .get_or_init(|| {
            reqwest::Client::builder()
                .use_preconfigured_tls((*tls_config()).clone())
                .redirect(reqwest::redirect::Policy::none())
                .pool_idle_timeout(POOL_IDLE)
                .tcp_keepalive(KEEPALIVE)
                .build()
                .map_err(|e| format!("HTTP client setup failed: {}", error_chain(e)))
        })
        .clone()
}

/// Sends `request` (built on [`client`]) and follows its redirects as `redirects` says; the
/// error is the failure with its causes (see [`error_chain`]).
///
/// Following a redirect: a 303, and a 301 or 302 to a POST, becomes a GET without a body (as
/// `fetch` does); the others repeat the request. A redirect that leaves the origin of the
/// request before it drops `Authorization`, `Cookie` and `Proxy-Authorization`.
pub async fn send(
    request: reqwest::RequestBuilder,
    redirects: Redirects,
) -> Result<reqwest::Response, String> {
    let request = request.build().map_err(error_chain)?;
    let first = request.url().clone();
    let first_headers =
        matches!(redirects, Redirects::OriginLocked(_)).then(|| request.headers().clone());
    send_from(request, redirects, &first, first_headers.as_ref(), 0).await
}

/// [`send`] of a request that is already hop `followed` of a chain that began at `first` with
/// `first_headers` (needed by [`Redirects::OriginLocked`] only; the HTTP transport's own
/// connections met the first redirects).
pub async fn send_from(
    mut request: reqwest::Request,
    redirects: Redirects,
    first: &Url,
    first_headers: Option<&HeaderMap>,
    mut followed: usize,
) -> Result<reqwest::Response, String> {
    let client = client()?;
    loop {
        // A copy to send again (a body given as bytes can be; a stream cannot: not followed).
        let again = (redirects != Redirects::Never)
            .then(|| request.try_clone())
            .flatten();
        let response = client.execute(request).await.map_err(error_chain)?;
        let Some(sent) = again else {
            return Ok(response);
        };
        match next_hop(
            sent,
            redirects,
            (first, first_headers),
            followed,
            response.status().as_u16(),
            response.headers(),
        )? {
            Some((next, now)) => {
                drop(response);
                request = next;
                followed = now;
            }
            None => return Ok(response),
        }
    }
}

/// What follows an answer of `status` with `headers` to `sent` (hop `followed` of a chain that
/// began at `first`, with its headers when known): the next request and the hops followed then, `None` when the answer is
/// the caller's (not a redirect, or one the policy does not follow), or the error that ends the
/// chain.
///
/// Following: a 303, and a 301 or 302 to a POST, becomes a GET without a body (as `fetch` does;
/// [`Redirects::OriginLocked`] refuses those for a request other than a GET); the others repeat
/// the request. A redirect that leaves the origin of the request before it drops
/// `Authorization`, `Cookie` and `Proxy-Authorization`; one under
/// [`Redirects::OriginLocked`] has the first request's headers on the first origin and only
/// their [`PROTOCOL_HEADERS`] off it.
pub fn next_hop(
    mut next: reqwest::Request,
    redirects: Redirects,
    (first, first_headers): (&Url, Option<&HeaderMap>),
    followed: usize,
    status: u16,
    headers: &HeaderMap,
) -> Result<Option<(reqwest::Request, usize)>, String> {
    let Some(to) = redirect_target(status, headers, next.url()) else {
        return Ok(None);
    };
    match redirects {
        Redirects::Never => return Ok(None),
        Redirects::SameOrigin => {
            if to.origin() != first.origin() || followed >= MAX_SAME_ORIGIN_REDIRECTS {
                return Ok(None);
            }
        }
        Redirects::Any(max) => {
            if followed >= max {
                return Err("error following redirect: too many redirects".into());
            }
        }
        Redirects::OriginLocked(max) => {
            if next.method() != Method::GET && !matches!(status, 307 | 308) {
                return Err(format!(
                    "{REFUSED_REDIRECT}HTTP {status}: server redirected a {} request; refusing to follow",
                    next.method()
                ));
            }
            if followed >= max {
                return Err(format!(
                    "{REFUSED_REDIRECT}Too many redirects (> {max}) fetching {}",
                    redact_url(first)
                ));
            }
            if let Some(configured) = first_headers {
                next.headers_mut().clone_from(configured);
            }
            if to.origin() != first.origin() {
                let names: Vec<_> = next.headers().keys().cloned().collect();
                for name in names {
                    if !PROTOCOL_HEADERS.contains(&name.as_str()) {
                        next.headers_mut().remove(name);
                    }
                }
            }
            *next.url_mut() = to;
            return Ok(Some((next, followed + 1)));
        }
    }
    if status == 303 || (matches!(status, 301 | 302) && next.method() == Method::POST) {
        if next.method() != Method::HEAD {
            *next.method_mut() = Method::GET;
        }
        *next.body_mut() = None;
        for name in [
            header::CONTENT_TYPE,
            header::CONTENT_LENGTH,
            header::CONTENT_ENCODING,
            header::TRANSFER_ENCODING,
        ] {
            next.headers_mut().remove(name);
        }
    }
    if to.origin() != next.url().origin() {
        remove_credentials(next.headers_mut());
    }
    *next.url_mut() = to;
    Ok(Some((next, followed + 1)))
}

/// Where a redirect answer sends the request: its `Location` resolved against the URL it
/// answered, when the status is a redirect and the target is `http:` or `https:`.
fn redirect_target(status: u16, headers: &HeaderMap, url: &Url) -> Option<Url> {
    if !matches!(status, 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = headers.get(header::LOCATION)?.to_str().ok()?;
    let to = url.join(location).ok()?;
    matches!(to.scheme(), "http" | "https").then_some(to)
}

/// Drops the headers that must not travel to another origin.
fn remove_credentials(headers: &mut HeaderMap) {
    for name in [
        header::AUTHORIZATION,
        header::COOKIE,
        header::PROXY_AUTHORIZATION,
        header::WWW_AUTHENTICATE,
    ] {
        headers.remove(name);
    }
}

/// A reqwest failure as text, with its causes (`connection refused`, ...). The URL is left out:
/// its query may carry an API key (`?exaApiKey=`), and the caller knows the URL.
pub fn error_chain(e: reqwest::Error) -> String {
    chain(&e.without_url())
}

/// An error and its causes, each once (`: `-separated).
pub fn chain(e: &(dyn std::error::Error + 'static)) -> String {
    let mut text = e.to_string();
    let mut source = e.source();
    while let Some(s) = source {
        let s_text = s.to_string();
        if !text.contains(&s_text) {
            text.push_str(": ");
            text.push_str(&s_text);
        }
        source = s.source();
    }
    text
}

/// The certificates of `NODE_EXTRA_CA_CERTS`, read once per process.
fn extra_roots() -> &'static [rustls_pki_types::CertificateDer<'static>] {
    static ROOTS: OnceLock<Vec<rustls_pki_types::CertificateDer<'static>>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        std::env::var_os(EXTRA_CA_CERTS_VAR)
            .filter(|path| !path.is_empty())
            .and_then(|path| load_pem_file(std::path::Path::new(&path)))
            .unwrap_or_default()
    })
}

/// The certificates of a PEM file; `None` when it cannot be read, is too large, or holds none.
pub fn load_pem_file(
    path: &std::path::Path,
) -> Option<Vec<rustls_pki_types::CertificateDer<'static>>> {
    use std::io::Read;
    let file = std::fs::File::open(path).ok()?;
    let mut pem = Vec::new();
    file.take(MAX_CA_FILE_BYTES + 1)
        .read_to_end(&mut pem)
        .ok()?;
    if pem.len() as u64 > MAX_CA_FILE_BYTES {
        return None;
    }
    parse_pem_bundle(&pem)
}

/// The certificates of a PEM bundle; `None` when it holds none or one is malformed.
pub fn parse_pem_bundle(pem: &[u8]) -> Option<Vec<rustls_pki_types::CertificateDer<'static>>> {
    use rustls_pki_types::pem::PemObject;
    rustls_pki_types::CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .ok()
        .filter(|certs| !certs.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unusable_ca_files_are_ignored() {
        assert!(parse_pem_bundle(b"").is_none());
        assert!(parse_pem_bundle(b"not a certificate").is_none());
        assert!(load_pem_file(std::path::Path::new("/nonexistent/ca.pem")).is_none());
    }

    #[test]
    fn the_test_ca_is_read_from_its_pem_file() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let certs = load_pem_file(&dir.join("../../__test__/fixture/tls/ca.pem")).unwrap();
        assert_eq!(certs.len(), 1);
    }

    #[test]
    fn the_trust_store_is_mozillas_roots_and_speaks_http_1_1() {
        let config = tls_config();
        assert_eq!(config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        // Whatever NODE_EXTRA_CA_CERTS and the proxy variables hold here, a client results.
        assert!(client().is_ok());
        assert!(webpki_roots::TLS_SERVER_ROOTS.len() > 100);
    }

    use std::sync::Mutex;
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// A request as a test server saw it: method, path, headers (lower-case names) and body.
    #[derive(Debug, Clone)]
    struct Seen {
        method: String,
        path: String,
        headers: Vec<(String, String)>,
        body: String,
    }

    impl Seen {
        fn header(&self, name: &str) -> Option<&str> {
            self.headers
                .iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.as_str())
        }
    }

    /// A loopback server answering each request with `answer(path)` (a full response head and
    /// body) and closing; returns its base URL and what it saw.
    async fn server(answer: fn(&str, u16) -> String) -> (String, Arc<Mutex<Vec<Seen>>>) {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let seen = Arc::new(Mutex::new(Vec::new()));
        let log = seen.clone();
        tokio::spawn(async move {
            while let Ok((mut conn, _)) = listener.accept().await {
                let mut buf = Vec::new();
                let mut chunk = [0u8; 4096];
                let head_end = loop {
                    if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                        break i + 4;
                    }
                    match conn.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                };
                let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
                let mut lines = head.split("\r\n");
                let mut first = lines.next().unwrap().split(' ');
                let (method, path) = (
                    first.next().unwrap().to_string(),
                    first.next().unwrap().to_string(),
                );
                let headers: Vec<(String, String)> = lines
                    .filter_map(|l| l.split_once(':'))
                    .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
                    .collect();
                let length: usize = headers
                    .iter()
                    .find(|(n, _)| n == "content-length")
                    .map_or(0, |(_, v)| v.parse().unwrap());
                while buf.len() < head_end + length {
                    match conn.read(&mut chunk).await {
                        Ok(0) | Err(_) => return,
                        Ok(n) => buf.extend_from_slice(&chunk[..n]),
                    }
                }
                let body = String::from_utf8_lossy(&buf[head_end..head_end + length]).into_owned();
                let reply = answer(&path, port);
                log.lock().unwrap().push(Seen {
                    method,
                    path,
                    headers,
                    body,
                });
                let _ = conn.write_all(reply.as_bytes()).await;
            }
        });
        (format!("http://127.0.0.1:{port}"), seen)
    }

    fn redirect(status: u16, to: &str) -> String {
        format!(
            "HTTP/1.1 {status} R\r\nlocation: {to}\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
        )
    }

    fn ok(text: &str) -> String {
        format!(
            "HTTP/1.1 200 OK\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{text}",
            text.len()
        )
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn same_origin_redirects_keep_method_body_and_headers_and_stop_at_the_origin() {
        tokio::time::timeout(Duration::from_secs(10), async {
            // Another origin: a second server (another port).
            let (elsewhere, elsewhere_seen) = server(|_, _| ok("elsewhere")).await;
            static ELSEWHERE: OnceLock<String> = OnceLock::new();
            ELSEWHERE.set(elsewhere).unwrap();
            let (base, seen) = server(|path, _| match path {
                "/a" => redirect(307, "/b"),
                "/b" => ok("b"),
                "/away" => redirect(308, &format!("{}/x", ELSEWHERE.get().unwrap())),
                _ => ok("?"),
            })
            .await;
            let c = client().unwrap();
            let post = |path: &str| {
                c.post(format!("{base}{path}"))
                    .header("authorization", "Bearer k")
                    .body("{\"n\":1}")
            };
            let r = send(post("/a"), Redirects::SameOrigin).await.unwrap();
            assert_eq!(r.status(), 200);
            assert_eq!(r.text().await.unwrap(), "b");
            {
                let seen = seen.lock().unwrap();
                assert_eq!(seen.len(), 2);
                assert_eq!(
                    (seen[1].method.as_str(), seen[1].path.as_str()),
                    ("POST", "/b")
                );
                assert_eq!(seen[1].body, "{\"n\":1}");
                assert_eq!(seen[1].header("authorization"), Some("Bearer k"));
            }
            // Leaving the origin: the redirect is the answer; the other server sees nothing.
            let r = send(post("/away"), Redirects::SameOrigin).await.unwrap();
            assert_eq!(r.status(), 308);
            assert!(elsewhere_seen.lock().unwrap().is_empty());
            // Never: the first redirect is the answer.
            let r = send(post("/a"), Redirects::Never).await.unwrap();
            assert_eq!(r.status(), 307);
        })
        .await
        .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn any_redirects_drop_credentials_off_origin_turn_303_into_get_and_are_bounded() {
        tokio::time::timeout(Duration::from_secs(10), async {
            let (elsewhere, elsewhere_seen) = server(|_, _| ok("there")).await;
            static ELSEWHERE: OnceLock<String> = OnceLock::new();
            ELSEWHERE.set(elsewhere).unwrap();
            let (base, seen) = server(|path, _| match path {
                "/see-other" => redirect(303, "/landing"),
                "/landing" => ok("landed"),
                "/away" => redirect(302, &format!("{}/x", ELSEWHERE.get().unwrap())),
                "/loop" => redirect(302, "/loop"),
                _ => ok("?"),
            })
            .await;
            let c = client().unwrap();
            let r = send(
                c.post(format!("{base}/see-other"))
                    .header("content-type", "application/json")
                    .body("{}"),
                Redirects::Any(5),
            )
            .await
            .unwrap();
            assert_eq!(r.text().await.unwrap(), "landed");
            {
                let seen = seen.lock().unwrap();
                assert_eq!(
                    (seen[1].method.as_str(), seen[1].body.as_str()),
                    ("GET", "")
                );
                assert_eq!(seen[1].header("content-type"), None);
            }
            let r = send(
                c.get(format!("{base}/away"))
                    .header("authorization", "Bearer secret")
                    .header("x-kept", "1"),
                Redirects::Any(5),
            )
            .await
            .unwrap();
            assert_eq!(r.text().await.unwrap(), "there");
            {
                let there = elsewhere_seen.lock().unwrap();
                assert_eq!(there.len(), 1);
                assert_eq!(
                    there[0].header("authorization"),
                    None,
                    "dropped off the origin"
                );
                assert_eq!(there[0].header("x-kept"), Some("1"));
            }
            let before = seen.lock().unwrap().len();
            let e = send(c.get(format!("{base}/loop")), Redirects::Any(3))
                .await
                .unwrap_err();
            assert_eq!(e, "error following redirect: too many redirects");
            assert_eq!(
                seen.lock().unwrap().len() - before,
                4,
                "the first request and 3 redirects"
            );
        })
        .await
        .unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn origin_locked_redirects_drop_configured_headers_off_origin_refuse_303_and_stop_at_5() {
        tokio::time::timeout(Duration::from_secs(10), async {
            static FIRST: OnceLock<String> = OnceLock::new();
            let (elsewhere, elsewhere_seen) = server(|path, _| match path {
                "/back" => redirect(307, &format!("{}/home", FIRST.get().unwrap())),
                _ => ok("there"),
            })
            .await;
            static ELSEWHERE: OnceLock<String> = OnceLock::new();
            ELSEWHERE.set(elsewhere).unwrap();
            let (base, seen) = server(|path, _| match path {
                "/hop" => redirect(307, "/home"),
                "/home" => ok("home"),
                "/away" => redirect(308, &format!("{}/x", ELSEWHERE.get().unwrap())),
                "/round" => redirect(307, &format!("{}/back", ELSEWHERE.get().unwrap())),
                "/see-other" => redirect(303, "/home"),
                p if p.starts_with("/loop") => redirect(307, "/loop"),
                _ => ok("?"),
            })
            .await;
            FIRST.set(base.clone()).unwrap();
            let c = client().unwrap();
            let post = |path: &str| {
                c.post(format!("{base}{path}"))
                    .header("content-type", "application/json")
                    .header("mcp-protocol-version", "2025-11-25")
                    .header("authorization", "Bearer k")
                    .header("x-api-key", "secret")
                    .body("{\"n\":1}")
            };
            let locked = Redirects::OriginLocked(5);
            // Within the origin: everything kept.
            let r = send(post("/hop"), locked).await.unwrap();
            assert_eq!(r.text().await.unwrap(), "home");
            {
                let seen = seen.lock().unwrap();
                assert_eq!(
                    (seen[1].method.as_str(), seen[1].path.as_str()),
                    ("POST", "/home")
                );
                assert_eq!(seen[1].header("x-api-key"), Some("secret"));
                assert_eq!(seen[1].body, "{\"n\":1}");
            }
            // Off the origin: only the protocol headers, the body and method kept.
            let r = send(post("/away"), locked).await.unwrap();
            assert_eq!(r.text().await.unwrap(), "there");
            {
                let there = elsewhere_seen.lock().unwrap();
                assert_eq!(
                    (there[0].method.as_str(), there[0].body.as_str()),
                    ("POST", "{\"n\":1}")
                );
                assert_eq!(there[0].header("x-api-key"), None);
                assert_eq!(there[0].header("authorization"), None);
                assert_eq!(there[0].header("content-type"), Some("application/json"));
                assert_eq!(there[0].header("mcp-protocol-version"), Some("2025-11-25"));
            }
            // Back to the first origin: the configured headers again.
            let r = send(post("/round"), locked).await.unwrap();
            assert_eq!(r.text().await.unwrap(), "home");
            assert_eq!(
                seen.lock().unwrap().last().unwrap().header("x-api-key"),
                Some("secret")
            );
            // A POST redirected with 303: refused, not turned into a GET.
            let before = seen.lock().unwrap().len();
            let e = send(post("/see-other"), locked).await.unwrap_err();
            assert_eq!(
                e,
                format!(
                    "{REFUSED_REDIRECT}HTTP 303: server redirected a POST request; refusing to follow"
                )
            );
            assert_eq!(seen.lock().unwrap().len() - before, 1);
            // A GET follows it.
            let r = send(c.get(format!("{base}/see-other")), locked)
                .await
                .unwrap();
            assert_eq!(r.text().await.unwrap(), "home");
            // Six redirects in a row: the first request and 5 hops, then the error, the URL's
            // credential-like values redacted.
            let before = seen.lock().unwrap().len();
            let e = send(
                c.post(format!("{base}/loop?api_key=abc&page=2")).body("{}"),
                locked,
            )
            .await
            .unwrap_err();
            assert_eq!(
                e,
                format!(
                    "{REFUSED_REDIRECT}Too many redirects (> 5) fetching {base}/loop?api_key=%5Bredacted%5D&page=2"
                )
            );
            assert_eq!(seen.lock().unwrap().len() - before, 6);
        })
        .await
        .unwrap();
    }
}
