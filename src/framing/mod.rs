//! Bytes → messages, without I/O. `jsonl` splits newline-delimited JSON for the stdio transport.

pub mod jsonl;
