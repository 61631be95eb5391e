//! Exa servers (SPEC 7.6): the agent has Exa search built in, so discovery removes Exa MCP
//! servers and hands their API keys to it instead. The reference's rules, exactly: the regexes
//! `/mcp\.exa\.ai/i` and `/exaApiKey=([^&\s]+)/i`, and its exact comparisons of `type` (configs
//! from discovery already carry lower-case types).

use serde_json::{Map, Value};

use super::js::{is_space, truthy};

const EXA_HOST: &str = "mcp.exa.ai";
const KEY_PARAM: &str = "exaApiKey=";

/// `/mcp\.exa\.ai/i.test(s)`.
fn names_exa_host(s: &str) -> bool {
    find_ignore_ascii_case(s, EXA_HOST, 0).is_some()
}

/// The byte offset of the first ASCII-case-insensitive occurrence of `needle` in `s` at or after
/// `from`. (A JavaScript `/i` regex without the `u` flag folds only ASCII letters here: no
/// non-ASCII character folds to an ASCII one.)
fn find_ignore_ascii_case(s: &str, needle: &str, from: usize) -> Option<usize> {
    let (h, n) = (s.as_bytes(), needle.as_bytes());
    (from..=h.len().checked_sub(n.len())?).find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
}

/// Group 1 of `/exaApiKey=([^&\s]+)/i` in `s`: the first occurrence followed by at least one
/// character that is neither `&` nor JavaScript whitespace.
fn key_in(s: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(at) = find_ignore_ascii_case(s, KEY_PARAM, from) {
        let rest = &s[at + KEY_PARAM.len()..];
        let end = rest
            .find(|c: char| c == '&' || is_space(c))
            .unwrap_or(rest.len());
        if end > 0 {
            return Some(&rest[..end]);
        }
        from = at + 1;
    }
    None
}

fn type_of(config: &Value) -> Option<&Value> {
    config.get("type").filter(|t| !t.is_null())
}

fn is_remote(config: &Value) -> bool {
    matches!(
        type_of(config).and_then(Value::as_str),
        Some("http" | "sse")
    )
}

fn is_stdio(config: &Value) -> bool {
    match type_of(config) {
        None => true,
        Some(t) => t.as_str() == Some("stdio"),
    }
}

fn string_args(config: &Value) -> impl Iterator<Item = &str> {
    let args = config.get("args").and_then(Value::as_array);
    args.into_iter().flatten().filter_map(Value::as_str)
}

/// `isExaMCPServer(name, config)`: named `exa` (any case), or an http/sse server whose url names
/// `mcp.exa.ai`, or a stdio server (or one without a type) with an arg that names it.
pub fn is_exa_server(name: &str, config: &Value) -> bool {
    if name.to_lowercase() == "exa" {
        return true;
    }
    if is_remote(config) {
        return config
            .get("url")
            .and_then(Value::as_str)
            .is_some_and(names_exa_host);
    }
    is_stdio(config) && string_args(config).any(names_exa_host)
}

/// `extractExaApiKey(config)`: the `exaApiKey=` of the url (http/sse), or of the first arg that
/// has one (stdio or no type), or a truthy `env.EXA_API_KEY`.
pub fn extract_exa_api_key(config: &Value) -> Option<String> {
    let from_config = if is_remote(config) {
        config.get("url").and_then(Value::as_str).and_then(key_in)
    } else if is_stdio(config) {
        string_args(config).find_map(key_in)
    } else {
        None
    };
    if let Some(key) = from_config {
        return Some(key.to_owned());
    }
    let env_key = config.get("env").and_then(|e| e.get("EXA_API_KEY"));
    env_key
        .filter(|k| truthy(Some(k)))
        .and_then(Value::as_str)
        .map(str::to_owned)
}

/// What [`filter_exa_servers`] returns.
#[derive(Debug, Default, PartialEq)]
pub struct ExaFiltered {
    /// The configs without the Exa servers.
    pub configs: Map<String, Value>,
    /// Their sources, likewise.
    pub sources: Map<String, Value>,
    /// One key per Exa server that has one, in iteration order, duplicates kept.
    pub exa_api_keys: Vec<String>,
}

/// `filterExaMCPServers(configs, sources)`: every Exa server removed (with or without a key), its
/// key collected; sources kept for the remaining names only.
pub fn filter_exa_servers(
    configs: Map<String, Value>,
    sources: &Map<String, Value>,
) -> ExaFiltered {
    let mut out = ExaFiltered::default();
    for (name, config) in configs {
        if is_exa_server(&name, &config) {
            out.exa_api_keys.extend(extract_exa_api_key(&config));
            continue;
        }
        if let Some(source) = sources.get(&name) {
            out.sources.insert(name.clone(), source.clone());
        }
        out.configs.insert(name, config);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn recognised_by_name_url_or_args() {
        assert!(is_exa_server("EXA", &json!({"command": "x"})));
        assert!(!is_exa_server("exa2", &json!({"command": "x"})));
        assert!(is_exa_server(
            "s",
            &json!({"type": "http", "url": "https://MCP.Exa.AI/mcp"})
        ));
        assert!(is_exa_server(
            "s",
            &json!({"type": "sse", "url": "https://mcp.exa.ai"})
        ));
        // A url counts only on http/sse; args only on stdio or no type.
        assert!(!is_exa_server(
            "s",
            &json!({"command": "x", "url": "https://mcp.exa.ai"})
        ));
        assert!(!is_exa_server(
            "s",
            &json!({"type": "http", "url": "https://h", "args": ["mcp.exa.ai"]})
        ));
        assert!(is_exa_server(
            "s",
            &json!({"args": ["mcp-remote", "https://MCP.EXA.AI/x"]})
        ));
        assert!(is_exa_server(
            "s",
            &json!({"type": "stdio", "args": ["mcp.exa.ai"]})
        ));
        assert!(!is_exa_server(
            "s",
            &json!({"type": "ws", "args": ["mcp.exa.ai"]})
        ));
        assert!(!is_exa_server("s", &json!({"args": ["mcpXexa.ai"]})));
    }

    #[test]
    fn the_first_key_wins() {
        let key = |c: Value| extract_exa_api_key(&c);
        assert_eq!(
            key(json!({"type": "http", "url": "https://mcp.exa.ai/mcp?exaApiKey=K1&x"})).as_deref(),
            Some("K1")
        );
        assert_eq!(
            key(json!({"type": "http", "url": "https://h?EXAAPIKEY=a b"})).as_deref(),
            Some("a")
        );
        assert_eq!(
            key(json!({"type": "http", "url": "https://h?exaApiKey=&exaApiKey=k2"})).as_deref(),
            Some("k2")
        );
        assert_eq!(
            key(json!({"type": "http", "url": "x?exaApiKey=k#frag"})).as_deref(),
            Some("k#frag")
        );
        assert_eq!(
            key(json!({"type": "http", "url": "x?exaApiKey=k\u{feff}y"})).as_deref(),
            Some("k")
        );
        assert_eq!(
            key(json!({"type": "http", "url": "x?exaApiKey=k\u{85}y"})).as_deref(),
            Some("k\u{85}y")
        );
        assert_eq!(
            key(json!({"args": ["a", "u?exaApiKey=A1", "u?exaApiKey=A2"], "env": {"EXA_API_KEY": "E"}})).as_deref(),
            Some("A1")
        );
        assert_eq!(
            key(json!({"args": ["mcp-remote"], "env": {"EXA_API_KEY": "K2"}})).as_deref(),
            Some("K2")
        );
        assert_eq!(
            key(json!({"type": "http", "url": "https://h", "env": {"EXA_API_KEY": "E"}}))
                .as_deref(),
            Some("E")
        );
        assert_eq!(
            key(json!({"type": "ws", "args": ["exaApiKey=x"], "env": {"EXA_API_KEY": ""}})),
            None
        );
        assert_eq!(key(json!({"command": "x"})), None);
    }

    #[test]
    fn filtering_keeps_order_and_duplicate_keys() {
        let configs = json!({
            "a": {"command": "a"},
            "exa": {"type": "http", "url": "https://mcp.exa.ai/mcp?exaApiKey=K"},
            "b": {"command": "b"},
            "exa-2": {"args": ["https://mcp.exa.ai/x?exaApiKey=K"]},
            "exa-3": {"args": ["https://mcp.exa.ai/x"]},
        });
        let sources = json!({"a": {"path": "/a"}, "exa": {"path": "/e"}, "zzz": {"path": "/z"}});
        let out = filter_exa_servers(
            configs.as_object().unwrap().clone(),
            sources.as_object().unwrap(),
        );
        assert_eq!(out.configs.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(out.sources.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(out.exa_api_keys, ["K", "K"]);
    }
}
