//! Replays the SSE fuzz corpus (`fuzz/seeds/sse`, minimized from `cargo fuzz run sse`, plus
//! every crash it ever found) through the decoder's property check, on the stable toolchain.

#[test]
fn sse_fuzz_corpus_replays_clean() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/sse");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).expect("fuzz/seeds/sse exists") {
        let data = std::fs::read(entry.expect("readable entry").path()).expect("readable seed");
        mcp_native::framing::sse::check_chunking(&data);
        count += 1;
    }
    assert!(count > 50, "the corpus is there ({count} seeds)");
}
