//! Replays the config-discovery fuzz corpus (`fuzz/seeds/config`: hand-written files of every
//! provider, minimized from `cargo fuzz run config`, plus every crash it ever found) through the
//! discovery property check, on the stable toolchain.

#[test]
fn config_fuzz_corpus_replays_clean() {
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/fuzz/seeds/config");
    let mut count = 0;
    for entry in std::fs::read_dir(dir).expect("fuzz/seeds/config exists") {
        let data = std::fs::read(entry.expect("readable entry").path()).expect("readable seed");
        mcp_native::config::fuzz_check(&data);
        count += 1;
    }
    assert!(count >= 12, "the corpus is there ({count} seeds)");
}
