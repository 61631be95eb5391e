//! Replays every fuzz corpus (`fuzz/seeds/<target>`: minimized from `cargo fuzz run <target>`,
//! plus every crash a target ever found) through that target's property check, on the stable
//! toolchain. A target is one line here, one file in `fuzz/fuzz_targets/` with its `[[bin]]` in
//! `fuzz/Cargo.toml` (`cargo fuzz add` writes both), and one seeds folder; the last test keeps the
//! three lists equal.
#![cfg(unix)] // fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows

use std::path::Path;

/// `target: property check,` — one test per target.
macro_rules! targets {
    ($($name:ident: $check:path,)*) => {
        $(#[test]
        fn $name() {
            replay(stringify!($name), $check);
        })*
        const TARGETS: &[&str] = &[$(stringify!($name)),*];
    };
}

targets! {
    sse: mcp_native_core::framing::sse::check_chunking,
    jsonl: mcp_native_core::framing::jsonl::check_chunking,
    jsonrpc: mcp_native_core::jsonrpc::check_message,
    config: mcp_native_core::config::fuzz_check,
}

fn fuzz_dir() -> &'static Path {
    Path::new(concat!(env!("CARGO_MANIFEST_DIR"), "/../../fuzz"))
}

fn replay(target: &str, check: fn(&[u8])) {
    let dir = fuzz_dir().join("seeds").join(target);
    let mut seeds: Vec<_> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("readable entry").path())
        .collect();
    seeds.sort();
    assert!(!seeds.is_empty(), "{} holds seeds", dir.display());
    for seed in &seeds {
        let data = std::fs::read(seed).expect("readable seed");
        if std::panic::catch_unwind(|| check(&data)).is_err() {
            panic!("{target}: seed {} fails its property check", seed.display());
        }
    }
}

#[test]
fn every_target_has_a_check_and_seeds() {
    let manifest = std::fs::read_to_string(fuzz_dir().join("Cargo.toml")).expect("fuzz/Cargo.toml");
    let mut bins: Vec<&str> = manifest
        .split("[[bin]]")
        .skip(1)
        .filter_map(|bin| bin.lines().find_map(|l| l.trim().strip_prefix("name = ")))
        .map(|name| name.trim_matches('"'))
        .collect();
    let mut seeds: Vec<String> = std::fs::read_dir(fuzz_dir().join("seeds"))
        .expect("fuzz/seeds")
        .map(|e| {
            e.expect("readable entry")
                .file_name()
                .into_string()
                .expect("UTF-8 name")
        })
        .collect();
    let mut listed = TARGETS.to_vec();
    bins.sort_unstable();
    seeds.sort_unstable();
    listed.sort_unstable();
    assert_eq!(bins, listed, "fuzz/Cargo.toml [[bin]]s vs the targets here");
    assert_eq!(seeds, listed, "fuzz/seeds folders vs the targets here");
}
