//! Where each source is found and which wins (SPEC 7.2–7.6).

use super::*;

#[test]
fn native_project_file_and_its_precedence() {
    let d = Dirs::new("native");
    let project = d.write(".omp/mcp.json", &servers(json!({"a": {"command": "x"}})));
    let l = d.load();
    assert_eq!(l.configs["a"], json!({"type": "stdio", "command": "x"}));
    assert_eq!(
        l.sources["a"],
        json!({"provider": "native", "providerName": "OMP", "path": path_text(&project), "level": "project"})
    );
    assert!(l.warnings.is_empty(), "{:?}", l.warnings);

    d.write(
        "~/.omp/agent/mcp.json",
        &servers(json!({"a": {"command": "user"}, "u": {"command": "u"}})),
    );
    d.write(
        ".omp/.mcp.json",
        &servers(json!({"a": {"command": "dot"}, "dot": {"command": "d"}})),
    );
    let l = d.load();
    assert_eq!(names(&l), ["a", "dot", "u"]);
    assert_eq!(
        l.configs["a"]["command"], "x",
        "project wins, mcp.json over .mcp.json"
    );
    assert_eq!(source_of(&l, "u").2, "user");
}

#[test]
fn the_omp_user_directory_follows_the_writer() {
    let d = Dirs::new("agentdir");
    d.write(
        "~/.omp/agent/mcp.json",
        &servers(json!({"default": {"command": "x"}})),
    );
    d.write(
        "~/.pi/agent/mcp.json",
        &servers(json!({"config-dir": {"command": "x"}})),
    );
    let custom = d.root.join("agent");
    std::fs::create_dir_all(&custom).unwrap();
    std::fs::write(
        custom.join(".mcp.json"),
        servers(json!({"agent-dir": {"command": "x"}})),
    )
    .unwrap();
    assert_eq!(names(&d.load()), ["default"]);
    let l = d.load_with(&[("PI_CONFIG_DIR", ".pi")], LoadOptions::default());
    assert_eq!(names(&l), ["config-dir"]);
    let l = d.load_with(
        &[
            ("PI_CONFIG_DIR", ".pi"),
            ("PI_CODING_AGENT_DIR", &path_text(&custom)),
        ],
        LoadOptions::default(),
    );
    assert_eq!(names(&l), ["agent-dir"]);
    assert_eq!(
        source_of(&l, "agent-dir").1,
        path_text(&custom.join(".mcp.json"))
    );
}

#[test]
fn mcp_json_is_last_and_mcp_json_beats_dot_mcp_json() {
    let d = Dirs::new("mcpjson");
    let dot = d.write(
        ".mcp.json",
        &servers(json!({"a": {"command": "dot"}, "b": {"command": "dot"}})),
    );
    let l = d.load();
    assert_eq!(
        source_of(&l, "a"),
        ("mcp-json".into(), path_text(&dot), "project".into())
    );
    assert_eq!(l.sources["a"]["providerName"], "MCP Config");
    d.write("mcp.json", &servers(json!({"b": {"command": "plain"}})));
    d.write(
        ".omp/mcp.json",
        &servers(json!({"a": {"command": "native"}})),
    );
    let l = d.load();
    assert_eq!(l.configs["a"]["command"], "native");
    assert_eq!(l.configs["b"]["command"], "plain");
}

#[test]
fn claude_user_beats_project_and_empty_files_fall_through() {
    let d = Dirs::new("claude");
    d.write(
        "~/.claude.json",
        &servers(json!({"a": {"command": "user"}})),
    );
    d.write(
        ".claude/.mcp.json",
        &servers(json!({"a": {"command": "project"}, "p": {"command": "p"}})),
    );
    let l = d.load();
    assert_eq!(l.configs["a"]["command"], "user");
    assert_eq!(source_of(&l, "p").2, "project");

    d.write("~/.claude.json", &servers(json!({})));
    d.write(
        "~/.claude/mcp.json",
        &servers(json!({"b": {"command": "b"}})),
    );
    let l = d.load();
    assert!(l.configs.contains_key("b"));
    assert_eq!(l.configs["a"]["command"], "project");

    // Unparsable: a warning, and the next file is tried.
    d.write("~/.claude.json", "{ nope");
    let l = d.load();
    assert!(l.configs.contains_key("b"));
    assert!(
        l.warnings
            .iter()
            .any(|w| w.starts_with("[Claude Code] Invalid JSON in ")),
        "{:?}",
        l.warnings
    );

    // `.claude/.mcp.json` with servers: `.claude/mcp.json` is not read.
    d.write(
        ".claude/mcp.json",
        &servers(json!({"alt": {"command": "x"}})),
    );
    assert!(!d.load().configs.contains_key("alt"));
}

#[test]
fn claude_local_scope_comes_first_and_counts_for_claude_json() {
    let d = Dirs::new("local");
    let claude_json = json!({
        "mcpServers": {"a": {"command": "user"}, "u": {"command": "u"}},
        "projects": {
            path_text(&d.cwd): {"mcpServers": {"a": {"command": "local"}, "l": {"command": "l"}}},
            "/elsewhere": {"mcpServers": {"other": {"command": "x"}}},
        },
    });
    let path = d.write("~/.claude.json", &claude_json.to_string());
    d.write(
        "~/.claude/mcp.json",
        &servers(json!({"never": {"command": "x"}})),
    );
    d.write(
        ".claude/.mcp.json",
        &servers(json!({"a": {"command": "project"}, "l": {"command": "project"}})),
    );
    let l = d.load();
    assert_eq!(names(&l), ["a", "l", "u"]);
    assert_eq!(l.configs["a"]["command"], "local");
    assert_eq!(
        source_of(&l, "a"),
        ("claude".into(), path_text(&path), "project".into())
    );
    assert_eq!(source_of(&l, "u").2, "user");

    // Only local servers in ~/.claude.json: it still yields, ~/.claude/mcp.json stays unread.
    let local_only =
        json!({"projects": {path_text(&d.cwd): {"mcpServers": {"l": {"command": "l"}}}}});
    d.write("~/.claude.json", &local_only.to_string());
    assert!(!d.load().configs.contains_key("never"));

    // Local servers are project-level: `enableProjectConfig: false` drops them.
    let options = LoadOptions {
        enable_project_config: false,
        ..LoadOptions::default()
    };
    assert!(!d.load_with(&[], options).configs.contains_key("l"));
}

#[cfg(unix)] // a symlink
#[test]
fn claude_local_scope_matches_the_real_path_too() {
    let d = Dirs::new("realpath");
    let link = d.root.join("link");
    std::os::unix::fs::symlink(&d.cwd, &link).unwrap();
    let real = std::fs::canonicalize(&d.cwd).unwrap();
    let doc = json!({"projects": {path_text(&real): {"mcpServers": {"l": {"command": "l"}}}}});
    d.write("~/.claude.json", &doc.to_string());
    let l = load_all(&link, &d.home, &EnvVars::new(), &LoadOptions::default());
    assert!(l.configs.contains_key("l"), "{:?}", l.warnings);
}

#[test]
fn provider_priorities() {
    let d = Dirs::new("prio");
    d.write(
        "~/.claude.json",
        &servers(json!({"a": {"command": "claude"}})),
    );
    d.write(
        ".cursor/mcp.json",
        &servers(json!({"a": {"command": "cursor"}, "b": {"command": "cursor"}})),
    );
    d.write(
        "~/.codeium/windsurf/mcp_config.json",
        &servers(json!({"b": {"command": "windsurf"}, "c": {"command": "windsurf"}})),
    );
    d.write(
        ".vscode/mcp.json",
        &json!({"servers": {"c": {"command": "vscode"}, "d": {"command": "vscode"}}}).to_string(),
    );
    d.write(".mcp.json", &servers(json!({"d": {"command": "mcp-json"}})));
    let l = d.load();
    assert_eq!(names(&l), ["a", "b", "c", "d"]);
    let cmd = |n: &str| l.configs[n]["command"].as_str().unwrap().to_owned();
    assert_eq!(
        [cmd("a"), cmd("b"), cmd("c"), cmd("d")],
        ["claude", "cursor", "windsurf", "vscode"]
    );
}

#[test]
fn codex_reads_its_variables_and_expands_nothing() {
    let d = Dirs::new("codex");
    d.write(
        "~/.codex/config.toml",
        "[mcp_servers.a]\nurl = \"https://h\"\nbearer_token_env_var = \"T\"\n\n[mcp_servers.s]\ncommand = \"${X}\"\nenv_vars = [\"P\", \"UNSET\"]\ncwd = \"/w\"\nenabled = false\ntype = \"sse\"\n[mcp_servers.s.env]\nP = \"0\"\nQ = \"q\"\n",
    );
    d.write(".codex/config.toml", "[mcp_servers.a]\ncommand = \"project\"\n[mcp_servers.h]\nurl = \"https://h2\"\nhttp_headers = { X-A = \"1\" }\nenv_http_headers = { X-B = \"B\", X-C = \"UNSET\" }\n");
    let l = d.load_with(
        &[("T", "tok"), ("P", "1"), ("B", "b")],
        LoadOptions::default(),
    );
    assert_eq!(
        l.configs["a"],
        json!({"type": "http", "url": "https://h", "headers": {"Authorization": "Bearer tok"}})
    );
    assert_eq!(
        l.configs["s"],
        json!({"type": "stdio", "command": "${X}", "env": {"P": "1", "Q": "q"}, "cwd": "/w"})
    );
    assert_eq!(l.configs["h"]["headers"], json!({"X-A": "1", "X-B": "b"}));
    assert_eq!(source_of(&l, "h").2, "project");

    // An empty bearer variable adds nothing.
    let l = d.load_with(&[("T", "")], LoadOptions::default());
    assert_eq!(l.configs["a"], json!({"type": "http", "url": "https://h"}));

    d.write(
        ".codex/config.toml",
        "[mcp_servers.z]\ntoken = \"sk-secret\nurl = 1\n",
    );
    let l = d.load();
    let warning = l
        .warnings
        .iter()
        .find(|w| w.contains("TOML"))
        .expect("a TOML warning");
    assert!(
        warning.starts_with("[OpenAI Codex] Failed to parse TOML config "),
        "{warning}"
    );
    assert!(
        warning.contains("line 2") && !warning.contains("sk-secret"),
        "{warning}"
    );
}

#[test]
fn vscode_jsonc_both_keys_and_checked_fields() {
    let d = Dirs::new("vscode");
    d.write(
        ".vscode/mcp.json",
        r#"{
  // VS Code's own format
  "servers": {
    "top": { "type": "HTTP", "url": "https://h", },
    "typed": { "command": 7, "args": "x", "env": [1], "url": "https://t", "transport": "sse" },
    "bad": null,
  },
  "mcp": { "servers": { "v": { "url": "https://v", "transport": "sse" }, "top": { "command": "shadowed" } } },
}"#,
    );
    let l = d.load();
    assert_eq!(names(&l), ["top", "typed", "v"]);
    assert_eq!(
        l.configs["top"],
        json!({"type": "http", "url": "https://h"})
    );
    assert_eq!(
        l.configs["typed"],
        json!({"type": "sse", "url": "https://t"})
    );
    assert_eq!(l.configs["v"], json!({"type": "sse", "url": "https://v"}));
    let path = path_text(&d.cwd.join(".vscode/mcp.json"));
    assert_eq!(
        l.warnings,
        [format!(
            "[VS Code] Invalid config for server \"bad\" in {path}"
        )]
    );

    d.write(".vscode/mcp.json", "");
    assert_eq!(
        d.load().warnings,
        [format!("[VS Code] Failed to read {path}")]
    );
    std::fs::remove_file(d.cwd.join(".vscode/mcp.json")).unwrap();
    assert!(d.load().warnings.is_empty(), "a missing file is no warning");
}

#[test]
fn gemini_http_url_and_windsurf_server_url() {
    let d = Dirs::new("remote");
    d.write(
        "~/.gemini/settings.json",
        &servers(json!({
            "g": {"httpUrl": "https://g", "command": "ignored"},
            "s": {"url": "https://s", "type": "sse", "timeout": 5, "cwd": 3},
            "t": {"command": "x", "cwd": "/w", "type": "ws"},
        })),
    );
    d.write(
        ".windsurf/mcp_config.json",
        &servers(json!({"w": {"serverUrl": "https://w"}, "both": {"url": "https://u", "serverUrl": "https://x"}, "bad": 3})),
    );
    let l = d.load();
    assert_eq!(l.configs["g"], json!({"type": "http", "url": "https://g"}));
    assert_eq!(l.configs["s"], json!({"type": "sse", "url": "https://s"}));
    assert_eq!(
        l.configs["t"],
        json!({"type": "stdio", "command": "x", "cwd": "/w"})
    );
    assert_eq!(l.configs["w"], json!({"type": "http", "url": "https://w"}));
    assert_eq!(l.configs["both"]["url"], "https://u");
    let path = path_text(&d.cwd.join(".windsurf/mcp_config.json"));
    assert_eq!(
        l.warnings,
        [format!(
            "[Windsurf] Invalid server config for \"bad\" in {path}"
        )]
    );
}

#[test]
fn transports_compare_case_insensitively_and_unknown_types_stay() {
    let d = Dirs::new("types");
    d.write("~/.claude.json", &servers(json!({"a": {"type": "HTTP", "url": "https://h"}, "w": {"type": "ws", "url": "wss://h"}, "s": {"type": "Stdio", "command": "x"}})));
    d.write(".cursor/mcp.json", &servers(json!({"c": {"type": "SSE", "url": "https://c"}, "cw": {"type": "ws", "url": "https://c"}})));
    let l = d.load();
    assert_eq!(l.configs["a"], json!({"type": "http", "url": "https://h"}));
    assert_eq!(l.configs["w"], json!({"type": "ws", "url": "wss://h"}));
    assert_eq!(l.configs["s"], json!({"type": "stdio", "command": "x"}));
    assert_eq!(l.configs["c"], json!({"type": "sse", "url": "https://c"}));
    // Cursor sets a transport only for the three names; the url then makes it http.
    assert_eq!(l.configs["cw"], json!({"type": "http", "url": "https://c"}));
    assert_eq!(
        crate::config::validate("w", &l.configs["w"]),
        ["Server \"w\": unknown server type \"ws\""]
    );
}
