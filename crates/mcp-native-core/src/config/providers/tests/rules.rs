//! Values, validation, expansion and bad input (SPEC 7.7, 7.10).

use super::*;

#[test]
fn native_enabled_and_timeout_values() {
    let d = Dirs::new("values");
    let path = d.write(
        ".omp/mcp.json",
        &servers(json!({
            "off": {"command": "x", "enabled": "FALSE"},
            "yes": {"command": "x", "enabled": "yes"},
            "env-off": {"command": "x", "enabled": "${E:-false}"},
            "one": {"command": "x", "enabled": "1", "timeout": "5000"},
            "zero": {"command": "x", "timeout": 0},
            "abc": {"command": "x", "timeout": "abc"},
            "typed": {"command": "x", "enabled": 3, "timeout": true},
        })),
    );
    let l = d.load();
    assert_eq!(names(&l), ["yes", "one", "zero", "abc", "typed"]);
    assert_eq!(
        l.configs["one"],
        json!({"type": "stdio", "command": "x", "enabled": true, "timeout": 5000})
    );
    assert!(l.configs["zero"].get("timeout").is_none());
    assert!(l.configs["abc"].get("timeout").is_none());
    let p = path_text(&path);
    assert_eq!(
        l.warnings,
        [
            format!("[OMP] MCP server \"yes\": invalid enabled value \"yes\", ignoring ({p})"),
            format!("[OMP] MCP server \"zero\": invalid timeout 0, ignoring ({p})"),
            format!("[OMP] MCP server \"abc\": invalid timeout \"abc\", ignoring ({p})"),
            format!("[OMP] MCP server \"typed\": invalid enabled type number, ignoring ({p})"),
            format!("[OMP] MCP server \"typed\": invalid timeout type boolean, ignoring ({p})"),
        ]
    );

    let path = d.write(
        ".mcp.json",
        &servers(json!({"m": {"command": "x", "timeout": "5000", "enabled": null}})),
    );
    let l = d.load();
    assert!(l.configs["m"].get("timeout").is_none());
    let p = path_text(&path);
    assert!(l.warnings.contains(&format!(
        "[MCP Config] MCP server has invalid 'timeout' value, ignoring (server \"m\", value \"5000\", {p})"
    )));
    assert!(l.warnings.contains(&format!(
        "[MCP Config] MCP server has invalid 'enabled' value, ignoring (server \"m\", value null, {p})"
    )));
}

#[test]
fn enabled_false_only_from_native_and_mcp_json_and_it_hides_lower_priorities() {
    let d = Dirs::new("enabled");
    d.write("~/.claude.json", &servers(json!({"a": {"command": "claude"}, "b": {"command": "claude"}, "c": {"command": "c", "enabled": false}})));
    d.write(
        ".omp/mcp.json",
        &servers(json!({"a": {"command": "x", "enabled": false}, "b": {"enabled": false}})),
    );
    let l = d.load();
    assert_eq!(names(&l), ["c"], "{:?}", l.warnings);
    assert!(
        l.warnings.is_empty(),
        "a switched-off stub is no warning: {:?}",
        l.warnings
    );

    d.write(".omp/mcp.json", &servers(json!({"a": {}})));
    let l = d.load();
    assert!(!l.configs.contains_key("a"));
    let p = path_text(&d.cwd.join(".omp/mcp.json"));
    assert_eq!(
        l.warnings,
        [format!(
            "[OMP] Invalid item at {p}: Must have command or url"
        )]
    );
}

#[test]
fn validation_runs_on_winners_with_the_exact_texts() {
    let d = Dirs::new("validate");
    let p = d.write(
        ".omp/mcp.json",
        &servers(json!({
            "": {"command": "x"},
            "s": {"type": "stdio", "url": "https://h"},
            "h": {"type": "SSE", "command": "x"},
            "o": {"type": "ws", "command": "x"},
        })),
    );
    d.write(".mcp.json", &servers(json!({"s": {"command": "fallback"}})));
    let l = d.load();
    assert_eq!(names(&l), ["o"], "the shadowed `s` does not come back");
    let p = path_text(&p);
    assert_eq!(
        l.warnings,
        [
            format!("[OMP] Invalid item at {p}: Missing server name"),
            format!("[OMP] Invalid item at {p}: stdio transport requires command field"),
            format!("[OMP] Invalid item at {p}: http/sse transport requires url field"),
        ]
    );
}

#[test]
fn project_config_off_drops_project_winners_after_precedence() {
    let d = Dirs::new("project-off");
    d.write(
        "~/.omp/agent/mcp.json",
        &servers(json!({"a": {"command": "user"}, "b": {"command": "user"}})),
    );
    d.write(
        ".omp/mcp.json",
        &servers(json!({"a": {"command": "project"}})),
    );
    let options = LoadOptions {
        enable_project_config: false,
        ..LoadOptions::default()
    };
    let l = d.load_with(&[], options);
    assert_eq!(names(&l), ["b"]);
}

#[test]
fn expansion_scopes() {
    let d = Dirs::new("expand");
    d.write(".omp/mcp.json", &servers(json!({"n": {"command": "${FOO}", "args": ["${FOO}", "${NOPE}", "${NOPE:-d}", "$FOO"], "auth": {"credentialId": "${FOO}"}}})));
    d.write(".mcp.json", &servers(json!({"m": {"command": "${FOO}", "cwd": "${FOO}", "auth": {"credentialId": "${FOO}"}, "type": "${NOPE:-stdio}"}})));
    d.write(
        ".windsurf/mcp_config.json",
        &servers(json!({"w": {"command": "${FOO}", "env": {"${FOO}": "${FOO}"}}})),
    );
    let l = d.load_with(&[("FOO", "bar")], LoadOptions::default());
    assert_eq!(
        l.configs["n"]["args"],
        json!(["bar", "${NOPE}", "d", "$FOO"])
    );
    assert_eq!(l.configs["n"]["auth"], json!({"credentialId": "bar"}));
    // mcp-json: command/args/env/url/headers/cwd only; `type` and `auth` stay as written.
    assert_eq!(l.configs["m"]["cwd"], "bar");
    assert_eq!(l.configs["m"]["type"], "${NOPE:-stdio}");
    assert_eq!(l.configs["m"]["auth"], json!({"credentialId": "${FOO}"}));
    assert_eq!(l.configs["w"]["env"], json!({"${FOO}": "bar"}));
}

#[test]
fn bad_entries_are_skipped_alone() {
    let d = Dirs::new("entries");
    let p = d.write(
        ".omp/mcp.json",
        &servers(json!({"a": {"command": "x"}, "n": null, "s": "str", "arr": [1]})),
    );
    d.write(
        ".mcp.json",
        &servers(json!({"n": {"command": "from-mcp-json"}})),
    );
    let l = d.load();
    assert_eq!(names(&l), ["a", "n"]);
    assert_eq!(l.configs["n"]["command"], "from-mcp-json");
    let p = path_text(&p);
    assert_eq!(
        l.warnings,
        [
            format!("[OMP] Invalid config for server \"n\" in {p}"),
            format!("[OMP] Invalid config for server \"s\" in {p}"),
            format!("[OMP] Invalid config for server \"arr\" in {p}"),
        ]
    );
}

#[test]
fn bad_files_are_warnings() {
    let d = Dirs::new("files");
    let gemini = d.write("~/.gemini/settings.json", "{");
    let cursor = d.write(".cursor/mcp.json", "{\"other\": 1}");
    let mcp = d.write(".mcp.json", "null");
    let omp = d.write(".omp/mcp.json", "{\"mcpServers\": [1]}");
    d.write("~/.omp/agent/mcp.json", "");
    let l = d.load();
    let w = |p: &PathBuf| path_text(p);
    assert_eq!(
        l.warnings,
        [
            format!("[OMP] {}: invalid 'mcpServers' key", w(&omp)),
            format!(
                "[Gemini CLI] Invalid JSON in {}: EOF while parsing an object at line 1 column 1",
                w(&gemini)
            ),
            format!(
                "[Cursor] {}: missing or invalid 'mcpServers' key",
                w(&cursor)
            ),
            format!("[MCP Config] Failed to parse JSON in {}", w(&mcp)),
        ]
    );
    assert!(l.configs.is_empty());
}

#[test]
fn disabled_servers_and_disabled_providers() {
    let d = Dirs::new("disabled");
    d.write("~/.claude.json", &json!({"mcpServers": {"a": {"command": "x"}, "b": {"command": "x"}}, "disabledServers": ["a"]}).to_string());
    d.write(
        ".omp/mcp.json",
        &json!({"mcpServers": {"c": {"command": "x"}}, "disabledServers": ["b"]}).to_string(),
    );
    let l = d.load();
    assert_eq!(names(&l), ["c"]);
    // A project file's list is not applied when project files are off.
    let options = LoadOptions {
        enable_project_config: false,
        ..LoadOptions::default()
    };
    assert_eq!(names(&d.load_with(&[], options)), ["b"]);

    let options = LoadOptions {
        disabled_providers: vec!["claude".into(), "unknown".into()],
        ..LoadOptions::default()
    };
    assert_eq!(names(&d.load_with(&[], options)), ["c"]);
    let options = LoadOptions {
        disabled_providers: vec!["native".into()],
        ..LoadOptions::default()
    };
    assert_eq!(
        names(&d.load_with(&[], options)),
        ["b"],
        "claude's own list still hides a"
    );
}

#[test]
fn exa_servers_are_filtered_with_their_keys() {
    let d = Dirs::new("exa");
    d.write(
        ".omp/mcp.json",
        &servers(json!({
            "exa": {"url": "https://mcp.exa.ai/mcp?exaApiKey=K1&x"},
            "remote": {"command": "npx", "args": ["mcp-remote", "https://MCP.EXA.AI/x"], "env": {"EXA_API_KEY": "K2"}},
            "keep": {"command": "x"},
        })),
    );
    let l = d.load();
    assert_eq!(names(&l), ["keep"]);
    assert_eq!(l.sources.keys().collect::<Vec<_>>(), ["keep"]);
    assert_eq!(l.exa_api_keys, ["K1", "K2"]);
    let options = LoadOptions {
        filter_exa: false,
        ..LoadOptions::default()
    };
    let l = d.load_with(&[], options);
    assert_eq!(names(&l), ["exa", "remote", "keep"]);
    assert!(l.exa_api_keys.is_empty());
}

#[test]
fn every_call_reads_afresh() {
    let d = Dirs::new("fresh");
    d.write(".omp/mcp.json", &servers(json!({"a": {"command": "one"}})));
    assert_eq!(d.load().configs["a"]["command"], "one");
    d.write(".omp/mcp.json", &servers(json!({"a": {"command": "two"}})));
    assert_eq!(d.load().configs["a"]["command"], "two");
}

#[test]
fn providers_are_sorted_by_priority() {
    let p: Vec<_> = super::super::PROVIDERS
        .iter()
        .map(|p| (p.id, p.priority))
        .collect();
    assert_eq!(
        p,
        [
            ("native", 100),
            ("claude", 80),
            ("codex", 70),
            ("gemini", 60),
            ("cursor", 50),
            ("windsurf", 50),
            ("vscode", 20),
            ("mcp-json", 5),
        ]
    );
}
