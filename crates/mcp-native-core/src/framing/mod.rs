//! Bytes → messages, without I/O. `jsonl` splits newline-delimited JSON for the stdio transport;
//! `sse` decodes Server-Sent Events for the HTTP transport.

pub mod jsonl;
pub mod sse;
