//! The property check behind `fuzz/fuzz_targets/config.rs` (and the replay of its corpus in
//! `tests/config_corpus.rs`): arbitrary bytes as the text of every config file at once, so each
//! provider reads them in its own format — strict JSON, JSONC (VS Code), TOML (Codex), the Claude
//! shape with `projects` (the fake project directory is `/p`) — through parsing, mapping,
//! `${VAR}` expansion, merging, conversion and Exa filtering.

use std::path::{Path, PathBuf};

use serde_json::Value;

use super::expand::expand_str;
use super::format::{FileText, Files, parse_json, parse_jsonc};
use super::merge::{LoadOptions, load_with};
use super::{EnvVars, exa, validate};

/// Every path has the same text.
struct Same(String);

impl Files for Same {
    fn read(&self, _path: &Path) -> FileText {
        FileText::Text(self.0.clone())
    }
    fn real_path(&self, _path: &Path) -> Option<PathBuf> {
        None
    }
}

/// Panics if a property fails for `data`: discovery never panics, is deterministic, and gives
/// only object configs with a string `type`, a source for each and none without; with Exa
/// filtering no Exa server is left; the validators and Exa helpers take every config; expansion
/// is a no-op without `${`; and JSONC parses every strict JSON document to the same value.
#[doc(hidden)]
pub fn fuzz_check(data: &[u8]) {
    let text = String::from_utf8_lossy(data).into_owned();
    let env: EnvVars = [("FOO", "bar"), ("EMPTY", ""), ("T", "tok"), ("P", "1")]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect();
    // The options vary with the length (the first byte of a config file is almost always `{`).
    let flags = data.len();
    let options = LoadOptions {
        enable_project_config: flags & 1 == 0,
        filter_exa: flags & 2 == 0,
        disabled_providers: Vec::new(),
    };
    let files = Same(text.clone());
    let load = || load_with(&files, Path::new("/p"), Path::new("/h"), &env, &options);
    let first = load();
    let second = load();
    let json = |l: &super::Loaded| serde_json::to_string(l).expect("results serialize");
    assert_eq!(json(&first), json(&second), "discovery is deterministic");

    for (name, config) in &first.configs {
        let kind = config.get("type").and_then(Value::as_str);
        assert!(config.is_object() && kind.is_some(), "{name}: {config}");
        assert!(first.sources.contains_key(name), "{name} has a source");
        if options.filter_exa {
            assert!(!exa::is_exa_server(name, config), "{name} is not Exa");
        }
        let _ = validate(name, config);
        let _ = exa::extract_exa_api_key(config);
    }
    assert_eq!(
        first.sources.len(),
        first.configs.len(),
        "a source per config"
    );
    if !options.filter_exa {
        assert!(first.exa_api_keys.is_empty());
    }

    if !text.contains("${") {
        assert_eq!(expand_str(&text, &env), text.as_str());
    }
    if let Ok(strict) = parse_json(&text) {
        assert_eq!(
            parse_jsonc(&text).ok(),
            Some(strict),
            "JSONC accepts JSON as is"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_check_holds_for_hand_picked_inputs() {
        for input in [
            &b""[..],
            b"{}",
            b"null",
            b"{\"mcpServers\":{\"a\":{\"command\":\"x\",\"type\":\"HTTP\"},\"b\":null,\"c\":7}}",
            b"{\"projects\":{\"/p\":{\"mcpServers\":{\"l\":{\"command\":\"${FOO}\"}}}}}",
            b"[mcp_servers.a]\nurl = \"https://h\"\nbearer_token_env_var = \"T\"\n",
            b"{\"servers\":{\"v\":{\"url\":\"https://h\",\"type\":\"sse\",},},}",
            b"\xff\xfe{\"mcpServers\":{\"exa\":{\"url\":\"https://mcp.exa.ai/?exaApiKey=K\"}}}",
        ] {
            fuzz_check(input);
        }
    }
}
