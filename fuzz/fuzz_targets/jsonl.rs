//! Fuzzes the JSONL line decoder: any bytes, cut anywhere, give the frames of a plain reference
//! split, within a bounded buffer (`mcp_native_core::framing::jsonl::check_chunking`).
//! Run: `npm run fuzz`, or `RUSTC_BOOTSTRAP=1 cargo fuzz run jsonl` here.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcp_native_core::framing::jsonl::check_chunking(data);
});
