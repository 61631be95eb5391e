//! The HTTP requests of OAuth, shared by every flow: one request with a deadline over the whole
//! exchange (connect, headers and body), a bounded body, and form-encoded or JSON bodies encoded
//! the way JavaScript's `URLSearchParams` and `JSON.stringify` encode them. Flows decide what an
//! answer means; this module only carries it.

use std::time::Duration;

use reqwest::header::{ACCEPT, CONTENT_TYPE};

pub use crate::net::Redirects;

/// The deadline of one OAuth request when the caller has none: 10 s (SPEC 8.6 \[fix\]).
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// Largest body read from an OAuth endpoint: 1 MiB (metadata documents and token replies are a
/// few KiB). A longer body fails the request with [`RequestError::TooLarge`].
pub const MAX_BODY_BYTES: usize = 1024 * 1024;

/// An HTTP answer (any status). `Debug` shows the body's length only: it may hold tokens.
#[derive(Clone, PartialEq, Eq)]
pub struct Reply {
    /// The status code.
    pub status: u16,
    /// The body as text (UTF-8, invalid sequences replaced, a leading BOM dropped — as
    /// `Response.text()` reads it).
    pub body: String,
}

impl Reply {
    /// A 2xx status (`Response.ok`).
    pub fn ok(&self) -> bool {
        (200..300).contains(&self.status)
    }

    /// The body parsed as JSON, if it is JSON.
    pub fn json(&self) -> Option<serde_json::Value> {
        serde_json::from_str(&self.body).ok()
    }
}

impl std::fmt::Debug for Reply {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reply")
            .field("status", &self.status)
            .field("body_bytes", &self.body.len())
            .finish()
    }
}

/// Why no [`Reply`] came.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestError {
    /// The deadline passed first.
    Timeout,
    /// The body was longer than [`MAX_BODY_BYTES`].
    TooLarge,
    /// The request could not be sent or the answer not read (the cause, without the URL).
    Failed(String),
}

impl std::fmt::Display for RequestError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestError::Timeout => f.write_str("timeout"),
            RequestError::TooLarge => write!(f, "response exceeds {MAX_BODY_BYTES} bytes"),
            RequestError::Failed(cause) => f.write_str(cause),
        }
    }
}

/// A request to `url` on the process's client ([`crate::net::client`]).
pub fn request(
    method: reqwest::Method,
    url: &str,
) -> Result<reqwest::RequestBuilder, RequestError> {
    let client = crate::net::client().map_err(RequestError::Failed)?;
    Ok(client.request(method, url))
}

/// Sends `request` (following `redirects`) and reads the whole answer, all within `deadline`.
pub async fn send(
    request: reqwest::RequestBuilder,
    redirects: Redirects,
    deadline: Duration,
) -> Result<Reply, RequestError> {
    let exchange = async {
        let mut response = crate::net::send(request, redirects)
            .await
            .map_err(RequestError::Failed)?;
        let status = response.status().as_u16();
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(failed)? {
            if body.len() + chunk.len() > MAX_BODY_BYTES {
                return Err(RequestError::TooLarge);
            }
            body.extend_from_slice(&chunk);
        }
        Ok(Reply {
            status,
            body: text(&body),
        })
    };
    tokio::time::timeout(deadline, exchange)
        .await
        .unwrap_or(Err(RequestError::Timeout))
}

/// GET `url` with `Accept: application/json`.
pub async fn get_json(
    url: &str,
    redirects: Redirects,
    deadline: Duration,
) -> Result<Reply, RequestError> {
    let request = request(reqwest::Method::GET, url)?.header(ACCEPT, "application/json");
    send(request, redirects, deadline).await
}

/// POST `body` (JSON text) to `url` with `Content-Type` and `Accept` `application/json`.
pub async fn post_json(
    url: &str,
    body: String,
    redirects: Redirects,
    deadline: Duration,
) -> Result<Reply, RequestError> {
    let request = request(reqwest::Method::POST, url)?
        .header(CONTENT_TYPE, "application/json")
        .header(ACCEPT, "application/json")
        .body(body);
    send(request, redirects, deadline).await
}

/// POST `fields`, in order, as `application/x-www-form-urlencoded` to `url` (with
/// `Accept: application/json`, which token endpoints such as GitHub's need to answer in JSON).
pub async fn post_form(
    url: &str,
    fields: &[(&str, &str)],
    redirects: Redirects,
    deadline: Duration,
) -> Result<Reply, RequestError> {
    let request = request(reqwest::Method::POST, url)?
        .header(CONTENT_TYPE, "application/x-www-form-urlencoded")
        .header(ACCEPT, "application/json")
        .body(form_body(fields));
    send(request, redirects, deadline).await
}

/// `fields` encoded as `new URLSearchParams(fields).toString()` does (space as `+`).
pub fn form_body(fields: &[(&str, &str)]) -> String {
    url::form_urlencoded::Serializer::new(String::new())
        .extend_pairs(fields)
        .finish()
}

/// The body as `Response.text()` decodes it.
fn text(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    String::from_utf8_lossy(bytes).into_owned()
}

/// A reqwest failure as text: the error and its causes, without the URL (which may carry a
/// query the caller does not want repeated).
fn failed(error: reqwest::Error) -> RequestError {
    RequestError::Failed(crate::net::error_chain(error))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn form_bodies_encode_like_url_search_params() {
        assert_eq!(
            form_body(&[
                ("grant_type", "authorization_code"),
                ("code", "a b+c/d?&=é")
            ]),
            "grant_type=authorization_code&code=a+b%2Bc%2Fd%3F%26%3D%C3%A9"
        );
        assert_eq!(form_body(&[("k", "*-._~")]), "k=*-._%7E");
    }

    #[test]
    fn bodies_decode_like_response_text() {
        assert_eq!(text(b"\xEF\xBB\xBF{}"), "{}");
        assert_eq!(text(b"a\xFFb"), "a\u{FFFD}b");
    }

    #[test]
    fn replies() {
        let r = Reply {
            status: 201,
            body: r#"{"a":1}"#.into(),
        };
        assert!(r.ok());
        assert_eq!(r.json().unwrap()["a"], 1);
        assert!(
            !Reply {
                status: 302,
                body: String::new()
            }
            .ok()
        );
    }
}
