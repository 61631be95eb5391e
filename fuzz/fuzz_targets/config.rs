//! Fuzzes config discovery: any bytes as the text of every config file at once (JSON, JSONC,
//! TOML, the Claude shape), through parsing, mapping, `${VAR}` expansion, merging, conversion and
//! Exa filtering — never a panic, the same result twice, every config an object with a string
//! `type` (`mcp_native_core::config::fuzz_check`).
//! Run: `RUSTC_BOOTSTRAP=1 cargo fuzz run config fuzz/seeds/config` (cargo-fuzz wants nightly
//! features; the stable toolchain allows them with RUSTC_BOOTSTRAP). The seeds in
//! `fuzz/seeds/config` are replayed by `cargo test` (tests/config_corpus.rs).
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcp_native_core::config::fuzz_check(data);
});
