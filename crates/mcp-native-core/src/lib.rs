//! mcp-native-core: the client side of the Model Context Protocol in Rust — the protocol, the
//! transports and the orchestration of many servers. It has no Node.js in it: the addon
//! `mcp-native` (the workspace root) is a thin napi binding over this crate.
//!
//! Crate map (one line per module; the layers only talk to the layer below):
//! - [`error`]: the one error enum; its `Display` strings are the exact JS `error.message`s.
//! - [`jsonrpc`]: wire types — outgoing frames, incoming message classification, ids, id sniffing.
//! - [`framing`]: bytes → messages without I/O: [`framing::jsonl`] (newline-delimited JSON, stdio)
//!   and [`framing::sse`] (the bounded event-stream decoder, HTTP).
//! - [`transport`]: I/O and lifecycle — events and the pending-request table they share,
//!   [`transport::stdio`] (child process) and [`transport::http`] (Streamable HTTP, legacy SSE).
//! - [`config`]: discovery of every configured server (SPEC 7), validation, Exa detection, tool
//!   names, `!command` values.
//! - [`net`]: the one HTTP client setup (proxies from the environment, `NODE_EXTRA_CA_CERTS`).
//! - [`oauth`]: OAuth — shared pieces (PKCE, loopback callback listener, bounded requests) and
//!   the reference's discovery and login flow (SPEC 8.6, 8.7).
//! - [`runtime`]: the crate's own tokio runtime and the registry of live child process groups.
//! - [`sync`]: the one place where lock poisoning is decided ([`sync::Locked`]).
//! - [`cache`]: the tool cache's SQLite store (the agent's `cache` table, expiry, upserts).
//! - [`files`]: config-file reads that tell "absent" apart, atomic writes, private directories,
//!   and the config writer's cross-process lock (`files::lock`).

#![warn(missing_docs)]

pub mod cache;
pub mod client;
pub mod config;
pub mod error;
pub mod files;
pub mod framing;
pub mod jsonrpc;
pub mod manager;
pub mod net;
pub mod oauth;
pub mod runtime;
pub mod sync;
pub mod transport;

#[cfg(windows)]
pub mod windows;

// Unix: a server is a process group (its own session on Linux) ended with POSIX signals, its
// pipes driven as raw non-blocking descriptors; Linux adds the parent-death signal and the
// `/proc` zombie check, with a portable path beside them for macOS and the BSDs. Windows: a
// server is a Job Object (`windows.rs`), its pipes are tokio's, written and read by its owner
// task only (`transport/stdio`), and secret files get owner-only ACLs.
#[cfg(not(any(unix, windows)))]
compile_error!("mcp-native-core supports Unix (Linux, macOS) and Windows");
