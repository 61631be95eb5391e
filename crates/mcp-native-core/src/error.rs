//! The crate's one error type. `Display` gives the exact `error.message` of SPEC.md; [`Error::code`]
//! gives the stable `code` string the binding attaches to the JS `Error`.

use std::fmt;

pub use crate::oauth::client::AuthError;

/// How a child process ended, when it ended on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// The exit code, when the process exited normally.
    pub code: Option<i32>,
    /// The name of the signal (`"SIGKILL"`), when a signal ended it.
    pub signal: Option<String>,
}

/// Every failure the core reports. Variants map one to one to JS errors.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `request`/`notify` on a transport that is not connected.
    #[error("Transport not connected")]
    NotConnected,
    /// The transport closed while the request was pending (or closed under it). When the server
    /// process ended on its own, `exit` says how and `stderr` holds the tail of its stderr.
    #[error("Transport closed")]
    Closed {
        /// How the process ended, when it ended on its own.
        exit: Option<ExitInfo>,
        /// The last bytes (at most 64 KiB) the server wrote to stderr.
        stderr: Option<String>,
    },
    /// No answer within the request's deadline.
    #[error("Request timeout after {ms}ms")]
    Timeout {
        /// The deadline that passed, in milliseconds.
        ms: u64,
    },
    /// The server answered with a JSON-RPC error. `code` and `message` are printed the way
    /// JavaScript's string conversion would print them (`undefined` when missing).
    #[error("MCP error {code_text}: {message_text}")]
    Rpc {
        /// `error.code` as JS would print it.
        code_text: String,
        /// `error.message` as JS would print it.
        message_text: String,
        /// The raw `error` member, so the binding can expose `rpcCode` and `data`.
        raw: Box<serde_json::value::RawValue>,
    },
    /// A message was larger than `maxMessageBytes`; it was discarded.
    #[error("Message exceeds maxMessageBytes ({limit} bytes)")]
    MessageTooLarge {
        /// The configured limit in bytes.
        limit: usize,
    },
    /// The server process could not be started (`spawn <command> <ERRNO>`, like Node's message).
    #[error("spawn {command} {errno}")]
    Spawn {
        /// The command as configured.
        command: String,
        /// The symbolic OS error (`ENOENT`, `EACCES`, ...).
        errno: String,
        /// The OS's own description.
        detail: String,
    },
    /// The configuration handed over from JS is unusable.
    #[error("Invalid config: {0}")]
    InvalidConfig(String),
    /// An I/O error on the transport (not a malformed message).
    #[error("{0}")]
    Io(String),
    /// A non-2xx HTTP answer: `HTTP <status>: <body>` plus auth hints.
    #[error("{message}")]
    Http {
        /// The HTTP status.
        status: u16,
        /// The full message.
        message: String,
        /// The answer said the session is gone (404, or 400 naming the session, to a request
        /// that carried a session id); the session id was cleared.
        session_expired: bool,
    },
    /// Too many bytes already wait for the server to read its stdin: the frame was not queued
    /// (see [`crate::transport::stdio::MAX_STDIN_BACKLOG`]).
    #[error("stdin backlog: {bytes} bytes wait for the server to read them (limit {limit} bytes)")]
    Backlog {
        /// Bytes waiting when the frame was refused.
        bytes: usize,
        /// The bound.
        limit: usize,
    },
    /// A notification POST got no answer in time.
    #[error("Notify timeout after {ms}ms")]
    NotifyTimeout {
        /// The deadline in milliseconds.
        ms: u64,
    },
    /// An SSE reply did not deliver the answer in time.
    #[error("SSE response timeout after {ms}ms")]
    SseTimeout {
        /// The deadline in milliseconds.
        ms: u64,
    },
    /// An SSE reply ended without the answer.
    #[error("No response received for request ID {id}")]
    NoResponse {
        /// The request's id as it was sent.
        id: u64,
    },
    /// A reply that could not be read (`Invalid JSON response: …`, `No response body`,
    /// `SSE stream ended unexpectedly`).
    #[error("{0}")]
    Parse(String),
    /// A defect in this package (a panic caught at the boundary, a broken internal contract).
    #[error("Internal error: {0}")]
    Internal(String),
    /// A file-system call failed. Printed the way Node prints its own fs errors
    /// (`ENOENT: no such file or directory, open '/x'`), and `code` is the errno name, so callers
    /// that test `error.code === "ENOENT"` keep working.
    #[error("{message}")]
    Fs {
        /// The symbolic errno (`ENOENT`, `EACCES`, ...).
        errno: String,
        /// The raw OS error number, when there is one (Node exposes it negated as `errno`).
        os_code: Option<i32>,
        /// The call that failed (`open`, `mkdir`, `rename`, ...).
        syscall: &'static str,
        /// The path it failed on.
        path: String,
        /// The second path of a two-path call (`rename`'s destination).
        dest: Option<String>,
        /// The whole message.
        message: String,
    },
    /// The tool cache's SQLite store failed (open, read or write); the text is SQLite's.
    #[error("MCP tool cache store: {0}")]
    Store(String),
    /// The whole connect (transport, handshake) did not finish within `config.timeout`.
    #[error("Connection to MCP server \"{name}\" timed out after {ms}ms")]
    ConnectTimeout {
        /// The server's name.
        name: String,
        /// The deadline in milliseconds.
        ms: u64,
    },
    /// The server answered `initialize` with a protocol revision this client does not speak.
    #[error("Unsupported protocol version: {0}")]
    UnsupportedProtocol(String),
    /// The caller gave up on the work (its `AbortSignal` fired). The JS side rejects with its own
    /// error (the signal's reason, or SPEC 8.7's `OAuth callback cancelled: …`) at once, so this
    /// message only ends the Rust side.
    #[error("Aborted")]
    Aborted,
    /// OAuth flow (SPEC 8.7): the authorization server redirected back with `error`; the text
    /// is its `error_description`, or else the `error` code.
    #[error("Authorization failed: {0}")]
    AuthorizationFailed(String),
    /// OAuth flow (SPEC 8.7): the redirect carried no `code`.
    #[error("Missing authorization code")]
    MissingAuthorizationCode,
    /// OAuth flow (SPEC 8.7): the redirect's `state` is not the one this flow sent.
    #[error("State mismatch - possible CSRF attack")]
    StateMismatch,
    /// OAuth flow (SPEC 8.7): the token endpoint refused the code, did not answer in time, or
    /// could not be reached.
    #[error("Token exchange failed: {0}")]
    TokenExchange(TokenExchangeFailure),
    /// The OAuth client of an HTTP server (SPEC 10) could not authorize; the message never holds
    /// a token, secret, code, verifier or callback URL. `code` is the [`AuthError::code`]
    /// (`MCP_OAUTH_ERROR` for most), and [`AuthError::reason`] names the kind.
    #[error("{0}")]
    OAuth(AuthError),
}

/// Why an authorization code could not be exchanged for tokens ([`Error::TokenExchange`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TokenExchangeFailure {
    /// A non-2xx answer: `<status> <body>` (the body as the server sent it).
    Status {
        /// The HTTP status.
        status: u16,
        /// The answer's body text.
        body: String,
    },
    /// No whole answer within the deadline: `timeout after <ms>ms`.
    Timeout {
        /// The deadline in milliseconds.
        ms: u64,
    },
    /// The request failed or the answer was unreadable (the cause, without the URL).
    Failed(String),
}

impl fmt::Display for TokenExchangeFailure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TokenExchangeFailure::Status { status, body } => write!(f, "{status} {body}"),
            TokenExchangeFailure::Timeout { ms } => write!(f, "timeout after {ms}ms"),
            TokenExchangeFailure::Failed(cause) => f.write_str(cause),
        }
    }
}

impl Error {
    /// The stable `code` property of the JS error. For a failed spawn it is the errno name
    /// (`ENOENT`), as on Node's own spawn errors.
    pub fn code(&self) -> &str {
        match self {
            Error::NotConnected => "MCP_NOT_CONNECTED",
            Error::Closed { .. } => "MCP_TRANSPORT_CLOSED",
            Error::Timeout { .. } | Error::ConnectTimeout { .. } => "MCP_TIMEOUT",
            Error::UnsupportedProtocol(_) => "MCP_UNSUPPORTED_PROTOCOL",
            Error::Rpc { .. } => "MCP_RPC_ERROR",
            Error::MessageTooLarge { .. } => "MCP_MESSAGE_TOO_LARGE",
            Error::Spawn { errno, .. } => errno,
            Error::InvalidConfig(_) => "MCP_INVALID_CONFIG",
            Error::Io(_) => "MCP_IO_ERROR",
            Error::Backlog { .. } => "MCP_BACKLOG",
            Error::Http {
                session_expired: true,
                ..
            } => "MCP_SESSION_EXPIRED",
            Error::Http { .. } => "MCP_HTTP_ERROR",
            Error::NotifyTimeout { .. } | Error::SseTimeout { .. } => "MCP_TIMEOUT",
            Error::NoResponse { .. } => "MCP_NO_RESPONSE",
            Error::Parse(_) => "MCP_PARSE_ERROR",
            Error::Internal(_) => "MCP_INTERNAL",
            Error::Fs { errno, .. } => errno,
            Error::Store(_) => "MCP_STORE_ERROR",
            Error::Aborted => "MCP_ABORTED",
            Error::AuthorizationFailed(_)
            | Error::MissingAuthorizationCode
            | Error::StateMismatch
            | Error::TokenExchange(TokenExchangeFailure::Failed(_)) => "MCP_OAUTH_ERROR",
            Error::TokenExchange(TokenExchangeFailure::Status { .. }) => "MCP_HTTP_ERROR",
            Error::TokenExchange(TokenExchangeFailure::Timeout { .. }) => "MCP_TIMEOUT",
            Error::OAuth(e) => e.code(),
        }
    }

    /// A plain `Transport closed` without exit details.
    pub fn closed() -> Self {
        Error::Closed {
            exit: None,
            stderr: None,
        }
    }

    /// Builds the error for a JSON-RPC `error` member.
    pub fn rpc(raw: &serde_json::value::RawValue) -> Self {
        #[derive(serde::Deserialize)]
        struct Parts {
            code: Option<serde_json::Value>,
            message: Option<serde_json::Value>,
        }
        let parts: Option<Parts> = serde_json::from_str(raw.get()).ok();
        let (code, message) = parts.map(|p| (p.code, p.message)).unwrap_or((None, None));
        Error::Rpc {
            code_text: js_string(code.as_ref()),
            message_text: js_string(message.as_ref()),
            raw: raw.to_owned(),
        }
    }

    /// The symbolic name and description of an OS error, as Node prints them.
    pub fn spawn(command: &str, err: &std::io::Error) -> Self {
        Error::Spawn {
            command: command.to_string(),
            errno: errno_name(err),
            detail: err.to_string(),
        }
    }
}

/// The text libuv (and so Node) prints for the errors a file call commonly meets; other errors
/// print the OS's own description.
fn uv_text(err: &std::io::Error) -> String {
    let text = match errno_name(err).as_str() {
        "ENOENT" => "no such file or directory",
        "EACCES" => "permission denied",
        "EPERM" => "operation not permitted",
        "ENOTDIR" => "not a directory",
        "EISDIR" => "illegal operation on a directory",
        "EEXIST" => "file already exists",
        "ENOSPC" => "no space left on device",
        "EROFS" => "read-only file system",
        "EMFILE" => "too many open files",
        "ENFILE" => "file table overflow",
        "ELOOP" => "too many symbolic links encountered",
        "ENAMETOOLONG" => "name too long",
        "EXDEV" => "cross-device link not permitted",
        "EBUSY" => "resource busy or locked",
        "EIO" => "i/o error",
        "ENOTEMPTY" => "directory not empty",
        "EINVAL" => "invalid argument",
        _ => {
            let full = err.to_string();
            let text = full.split(" (os error").next().unwrap_or(&full);
            let mut chars = text.chars();
            return match chars.next() {
                Some(first) => first.to_lowercase().chain(chars).collect(),
                None => text.to_string(),
            };
        }
    };
    text.to_string()
}

impl Error {
    /// A failed file-system call on `path` (and `dest`, for `rename`), as Node reports it.
    pub fn fs(
        syscall: &'static str,
        path: &std::path::Path,
        dest: Option<&std::path::Path>,
        err: &std::io::Error,
    ) -> Self {
        let errno = errno_name(err);
        let path = path.display().to_string();
        let dest = dest.map(|d| d.display().to_string());
        let mut message = format!("{errno}: {}, {syscall} '{path}'", uv_text(err));
        if let Some(dest) = &dest {
            message.push_str(&format!(" -> '{dest}'"));
        }
        Error::Fs {
            errno,
            os_code: err.raw_os_error(),
            syscall,
            path,
            dest,
            message,
        }
    }
}

/// `String(value)` in JavaScript, for the values JSON can hold (`undefined` when missing).
pub(crate) fn js_string(value: Option<&serde_json::Value>) -> String {
    use serde_json::Value;
    match value {
        None => "undefined".into(),
        Some(Value::Null) => "null".into(),
        Some(Value::Bool(b)) => b.to_string(),
        Some(Value::Number(n)) => js_number(n),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(items)) => items
            .iter()
            .map(|v| match v {
                Value::Null => String::new(),
                other => js_string(Some(other)),
            })
            .collect::<Vec<_>>()
            .join(","),
        Some(Value::Object(_)) => "[object Object]".into(),
    }
}

fn js_number(n: &serde_json::Number) -> String {
    if let Some(i) = n.as_i64() {
        return i.to_string();
    }
    if let Some(u) = n.as_u64() {
        return u.to_string();
    }
    let f = n.as_f64().unwrap_or(f64::NAN);
    if f.fract() == 0.0 && f.abs() < 1e21 {
        format!("{f:.0}")
    } else {
        f.to_string()
    }
}

/// The symbolic name of an OS error (`ENOENT`, `EPIPE`), as Node prints it. Windows: the name
/// libuv gives the system error (`uv_translate_sys_error`), for the errors met here.
#[cfg(windows)]
pub fn errno_name(err: &std::io::Error) -> String {
    let name = match err.raw_os_error() {
        Some(2 | 3) => "ENOENT",     // ERROR_FILE_NOT_FOUND, ERROR_PATH_NOT_FOUND
        Some(4) => "EMFILE",         // ERROR_TOO_MANY_OPEN_FILES
        Some(5) => "EPERM",          // ERROR_ACCESS_DENIED
        Some(6) => "EBADF",          // ERROR_INVALID_HANDLE
        Some(8 | 14) => "ENOMEM",    // ERROR_NOT_ENOUGH_MEMORY, ERROR_OUTOFMEMORY
        Some(17) => "EXDEV",         // ERROR_NOT_SAME_DEVICE
        Some(19) => "EROFS",         // ERROR_WRITE_PROTECT
        Some(32 | 33) => "EBUSY",    // ERROR_SHARING_VIOLATION, ERROR_LOCK_VIOLATION
        Some(80 | 183) => "EEXIST",  // ERROR_FILE_EXISTS, ERROR_ALREADY_EXISTS
        Some(87) => "EINVAL",        // ERROR_INVALID_PARAMETER
        Some(109 | 232) => "EPIPE",  // ERROR_BROKEN_PIPE, ERROR_NO_DATA (the reader closed)
        Some(112) => "ENOSPC",       // ERROR_DISK_FULL
        Some(123) => "ENOENT",       // ERROR_INVALID_NAME
        Some(145) => "ENOTEMPTY",    // ERROR_DIR_NOT_EMPTY
        Some(193) => "ENOEXEC",      // ERROR_BAD_EXE_FORMAT
        Some(206) => "ENAMETOOLONG", // ERROR_FILENAME_EXCED_RANGE
        Some(267) => "ENOTDIR",      // ERROR_DIRECTORY
        Some(10054) => "ECONNRESET", // WSAECONNRESET
        Some(code) => return format!("E{code}"),
        None if err.kind() == std::io::ErrorKind::IsADirectory => "EISDIR",
        None => return format!("{:?}", err.kind()).to_uppercase(),
    };
    name.to_string()
}

/// The symbolic name of an OS error (`ENOENT`, `EPIPE`), as Node prints it.
#[cfg(unix)]
pub fn errno_name(err: &std::io::Error) -> String {
    let name = match err.raw_os_error() {
        Some(libc::EPIPE) => "EPIPE",
        Some(libc::ECONNRESET) => "ECONNRESET",
        Some(libc::EBADF) => "EBADF",
        Some(libc::ENOENT) => "ENOENT",
        Some(libc::EACCES) => "EACCES",
        Some(libc::EPERM) => "EPERM",
        Some(libc::ENOTDIR) => "ENOTDIR",
        Some(libc::EISDIR) => "EISDIR",
        Some(libc::ENOEXEC) => "ENOEXEC",
        Some(libc::E2BIG) => "E2BIG",
        Some(libc::ENOMEM) => "ENOMEM",
        Some(libc::EMFILE) => "EMFILE",
        Some(libc::ENFILE) => "ENFILE",
        Some(libc::EAGAIN) => "EAGAIN",
        Some(libc::ELOOP) => "ELOOP",
        Some(libc::ENAMETOOLONG) => "ENAMETOOLONG",
        Some(libc::ETXTBSY) => "ETXTBSY",
        Some(libc::EINVAL) => "EINVAL",
        Some(libc::EEXIST) => "EEXIST",
        Some(libc::ENOSPC) => "ENOSPC",
        Some(libc::EROFS) => "EROFS",
        Some(libc::EXDEV) => "EXDEV",
        Some(libc::EBUSY) => "EBUSY",
        Some(libc::EIO) => "EIO",
        Some(libc::ENOTEMPTY) => "ENOTEMPTY",
        Some(libc::EDQUOT) => "EDQUOT",
        Some(code) => return format!("E{code}"),
        None => return format!("{:?}", err.kind()).to_uppercase(),
    };
    name.to_string()
}

impl fmt::Display for ExitInfo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match (&self.code, &self.signal) {
            (Some(code), _) => write!(f, "exit code {code}"),
            (None, Some(sig)) => write!(f, "signal {sig}"),
            (None, None) => write!(f, "unknown exit"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rpc(json: &str) -> String {
        let raw = serde_json::value::RawValue::from_string(json.to_string()).unwrap();
        Error::rpc(&raw).to_string()
    }

    #[test]
    fn rpc_messages_print_like_javascript() {
        assert_eq!(
            rpc(r#"{"code":-32601,"message":"Method not found"}"#),
            "MCP error -32601: Method not found"
        );
        assert_eq!(rpc(r#"{"message":"boom"}"#), "MCP error undefined: boom");
        assert_eq!(rpc(r#"{"code":1.5}"#), "MCP error 1.5: undefined");
        assert_eq!(rpc(r#""text""#), "MCP error undefined: undefined");
        assert_eq!(
            rpc(r#"{"code":"E1","message":{"a":1}}"#),
            "MCP error E1: [object Object]"
        );
    }

    #[cfg(unix)]
    #[test]
    fn fixed_messages() {
        assert_eq!(Error::NotConnected.to_string(), "Transport not connected");
        assert_eq!(Error::closed().to_string(), "Transport closed");
        assert_eq!(
            Error::Timeout { ms: 50 }.to_string(),
            "Request timeout after 50ms"
        );
        assert_eq!(
            Error::MessageTooLarge { limit: 1024 }.to_string(),
            "Message exceeds maxMessageBytes (1024 bytes)"
        );
        assert_eq!(
            Error::TokenExchange(TokenExchangeFailure::Status {
                status: 400,
                body: "{\"error\":\"invalid_grant\"}".into()
            })
            .to_string(),
            "Token exchange failed: 400 {\"error\":\"invalid_grant\"}"
        );
        assert_eq!(
            Error::TokenExchange(TokenExchangeFailure::Timeout { ms: 10000 }).to_string(),
            "Token exchange failed: timeout after 10000ms"
        );
        assert_eq!(
            Error::StateMismatch.to_string(),
            "State mismatch - possible CSRF attack"
        );
        let enoent = std::io::Error::from_raw_os_error(libc::ENOENT);
        assert_eq!(
            Error::spawn("/nonexistent/bin", &enoent).to_string(),
            "spawn /nonexistent/bin ENOENT"
        );
    }

    #[cfg(unix)]
    #[test]
    fn fs_errors_print_like_node() {
        let enoent = std::io::Error::from_raw_os_error(libc::ENOENT);
        let e = Error::fs("open", std::path::Path::new("/x/y"), None, &enoent);
        assert_eq!(
            e.to_string(),
            "ENOENT: no such file or directory, open '/x/y'"
        );
        assert_eq!(e.code(), "ENOENT");
        let exdev = std::io::Error::from_raw_os_error(libc::EXDEV);
        let e = Error::fs(
            "rename",
            std::path::Path::new("/a.tmp"),
            Some(std::path::Path::new("/b")),
            &exdev,
        );
        assert_eq!(
            e.to_string(),
            "EXDEV: cross-device link not permitted, rename '/a.tmp' -> '/b'"
        );
        // An errno without a libuv text prints the OS's description, lowercased.
        let e2big = std::io::Error::from_raw_os_error(libc::E2BIG);
        let e = Error::fs("open", std::path::Path::new("/z"), None, &e2big);
        assert_eq!(e.to_string(), "E2BIG: argument list too long, open '/z'");
        assert_eq!(
            Error::Store("disk I/O error".into()).code(),
            "MCP_STORE_ERROR"
        );
    }

    #[cfg(windows)]
    #[test]
    fn windows_errors_get_libuv_names() {
        let name = |code| errno_name(&std::io::Error::from_raw_os_error(code));
        assert_eq!(name(2), "ENOENT");
        assert_eq!(name(5), "EPERM");
        assert_eq!(name(232), "EPIPE");
        assert_eq!(name(109), "EPIPE");
        let e = Error::fs(
            "open",
            std::path::Path::new("C:\\x"),
            None,
            &std::io::Error::from_raw_os_error(3),
        );
        assert_eq!(
            e.to_string(),
            "ENOENT: no such file or directory, open 'C:\\x'"
        );
    }
}
