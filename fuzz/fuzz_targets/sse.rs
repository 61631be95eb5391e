//! Fuzzes the SSE decoder: any bytes, cut anywhere, decode the same and stay bounded.
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run sse` (cargo-fuzz wants nightly features; the stable
//! toolchain allows them with RUSTC_BOOTSTRAP). The seeds in `fuzz/seeds/sse` are replayed by
//! `cargo test` (tests/sse_corpus.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcp_native_core::framing::sse::check_chunking(data);
});
