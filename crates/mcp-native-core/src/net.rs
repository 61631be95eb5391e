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
use reqwest::{Method, StatusCode, Url};

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
    let client = client()?;
    let mut request = request.build().map_err(error_chain)?;
    let first = request.url().clone();
    let mut followed = 0usize;
    loop {
        // A copy to send again (a body given as bytes can be; a stream cannot: not followed).
        let again = (redirects != Redirects::Never)
            .then(|| request.try_clone())
            .flatten();
        let response = client.execute(request).await.map_err(error_chain)?;
        let Some(mut next) = again else {
            return Ok(response);
        };
        let Some(to) = redirect_target(&response) else {
            return Ok(response);
        };
        match redirects {
            Redirects::Never => return Ok(response),
            Redirects::SameOrigin => {
                if to.origin() != first.origin() || followed >= MAX_SAME_ORIGIN_REDIRECTS {
                    return Ok(response);
                }
            }
            Redirects::Any(max) => {
                if followed >= max {
                    return Err("error following redirect: too many redirects".into());
                }
            }
        }
        followed += 1;
        let status = response.status();
        drop(response);
        if status == StatusCode::SEE_OTHER
            || (matches!(status, StatusCode::MOVED_PERMANENTLY | StatusCode::FOUND)
                && next.method() == Method::POST)
        {
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
        request = next;
    }
}

/// Where a redirect response sends the request: its `Location` resolved against the request's
/// URL, when the status is a redirect and the target is `http:` or `https:`.
fn redirect_target(response: &reqwest::Response) -> Option<Url> {
    if !matches!(response.status().as_u16(), 301 | 302 | 303 | 307 | 308) {
        return None;
    }
    let location = response.headers().get(header::LOCATION)?.to_str().ok()?;
    let to = response.url().join(location).ok()?;
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
}
