//! The one HTTP client setup of the package: every `reqwest::Client` it builds (the HTTP
//! transport, OAuth discovery, the OAuth flow) starts from [`client_builder`], so that HTTP
//! servers get what the agent gets from Bun's `fetch`:
//!
//! - **Proxies from the environment.** `HTTPS_PROXY`/`https_proxy` for `https:` URLs,
//!   `HTTP_PROXY`/`http_proxy` for `http:` URLs, `ALL_PROXY`/`all_proxy` for both when the
//!   scheme's own is unset, and `NO_PROXY`/`no_proxy` (comma-separated hosts, domains with their
//!   subdomains, IPs, CIDR ranges, `*`) to bypass them; the upper-case name wins when both are
//!   set. An `https:` target goes through an HTTP proxy with `CONNECT`; an `http:` target is sent
//!   to it as an absolute-URI request; `user:pass@` in the proxy URL becomes `Proxy-Authorization`.
//!   reqwest reads these variables itself each time a client is built (its "system" proxy
//!   matcher, which on Linux is the environment only; under CGI, where `REQUEST_METHOD` is set,
//!   it ignores them, the httpoxy rule) — this module relies on that and the tests pin it down.
//! - **Extra CA certificates** from the PEM file named by `NODE_EXTRA_CA_CERTS`, trusted in
//!   addition to the system's roots (never instead of them), as Node and Bun do. Like Node, the
//!   file is read once per process (the first time a client is built), and a file that cannot
//!   be read or holds no certificate is ignored.

use std::sync::OnceLock;

/// The environment variable naming a PEM file of extra trusted CA certificates.
pub const EXTRA_CA_CERTS_VAR: &str = "NODE_EXTRA_CA_CERTS";

/// Largest `NODE_EXTRA_CA_CERTS` file read: 16 MiB (a full system bundle is about 200 KiB). A
/// larger file is ignored like an unreadable one.
pub const MAX_CA_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// A `reqwest::ClientBuilder` with the package's proxy and CA rules (see the module doc).
/// Callers add their own settings (timeouts, redirect policy) and build.
pub fn client_builder() -> reqwest::ClientBuilder {
    let builder = reqwest::Client::builder();
    match extra_roots() {
        [] => builder,
        certs => builder.tls_certs_merge(certs.iter().cloned()),
    }
}

/// The certificates of `NODE_EXTRA_CA_CERTS`, read once per process.
fn extra_roots() -> &'static [reqwest::Certificate] {
    static ROOTS: OnceLock<Vec<reqwest::Certificate>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        std::env::var_os(EXTRA_CA_CERTS_VAR)
            .filter(|path| !path.is_empty())
            .and_then(|path| load_pem_file(std::path::Path::new(&path)))
            .unwrap_or_default()
    })
}

/// The certificates of a PEM file; `None` when it cannot be read, is too large, or holds none.
pub fn load_pem_file(path: &std::path::Path) -> Option<Vec<reqwest::Certificate>> {
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
pub fn parse_pem_bundle(pem: &[u8]) -> Option<Vec<reqwest::Certificate>> {
    reqwest::Certificate::from_pem_bundle(pem)
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
    fn the_builder_builds_with_the_process_environment() {
        // Whatever NODE_EXTRA_CA_CERTS and the proxy variables hold here, a client results.
        assert!(client_builder().build().is_ok());
    }
}
