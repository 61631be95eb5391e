//! Fuzzes the JSON-RPC classifier, id matching, id sniffing, truthiness and frame builders against
//! a `serde_json::Value` reference (`mcp_native_core::jsonrpc::check_message`).
//! Run: `npm run fuzz`, or `RUSTC_BOOTSTRAP=1 cargo fuzz run jsonrpc` here.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    mcp_native_core::jsonrpc::check_message(data);
});
