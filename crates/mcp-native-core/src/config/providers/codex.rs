//! `codex` (OpenAI Codex): `~/.codex/config.toml`, then `<cwd>/.codex/config.toml` (the user
//! file wins), TOML tables `[mcp_servers.<name>]`. No `${VAR}` expansion; instead `env_vars`,
//! `env_http_headers` and `bearer_token_env_var` take values from the process environment.
//! The transport follows from `url` (http) or `command` (stdio); `type`, `enabled` and the
//! timeouts are not read.

use serde_json::{Map, Value};

use super::{Context, FileFormat, Found, Provider, invalid_entry, present};
use crate::config::format::parse_toml;
use crate::config::js::truthy;
use crate::config::server::{Level, Server};

pub(super) const PROVIDER: Provider = Provider {
    id: "codex",
    name: "OpenAI Codex",
    priority: 70,
    load,
};

fn load(ctx: &Context, found: &mut Found) {
    let invalid = |path: &std::path::Path, reason: &str| {
        format!("Failed to parse TOML config {}: {reason}", path.display())
    };
    let format = FileFormat {
        parse: parse_toml,
        if_empty: None,
        if_invalid: &invalid,
    };
    let files = [
        (ctx.home.join(".codex").join("config.toml"), Level::User),
        (ctx.cwd.join(".codex").join("config.toml"), Level::Project),
    ];
    for (path, level) in files {
        let Some(doc) = found.load(ctx, &path, &format) else {
            continue;
        };
        found.note_disabled(&doc, level);
        let Some(servers) = found.servers_of(&doc, "mcp_servers", &path) else {
            continue;
        };
        for (name, obj) in found.entries(&servers, |n| invalid_entry(n, &path)) {
            let mut server = Server::new(name, PROVIDER.source(&path, level));
            server.command = present(obj, "command");
            server.args = present(obj, "args");
            server.url = present(obj, "url");
            server.cwd = present(obj, "cwd");
            server.env = non_empty(env(obj, ctx));
            server.headers = non_empty(headers(obj, ctx));
            server.transport = if truthy(server.url.as_ref()) {
                Some("http".into())
            } else if truthy(server.command.as_ref()) {
                Some("stdio".into())
            } else {
                None
            };
            found.items.push(server);
        }
    }
}

/// `{...env}`, then each `env_vars` name that is set in the process environment.
fn env(obj: &Map<String, Value>, ctx: &Context) -> Map<String, Value> {
    let mut env = table(obj, "env");
    let names = obj.get("env_vars").and_then(Value::as_array);
    for name in names.into_iter().flatten().filter_map(Value::as_str) {
        if let Some(value) = ctx.env.get(name) {
            env.insert(name.to_owned(), Value::String(value.clone()));
        }
    }
    env
}

/// `{...http_headers}`, then each `env_http_headers` header whose variable is set, then
/// `Authorization: Bearer <token>` when `bearer_token_env_var` names a non-empty variable.
fn headers(obj: &Map<String, Value>, ctx: &Context) -> Map<String, Value> {
    let mut headers = table(obj, "http_headers");
    for (header, var) in &table(obj, "env_http_headers") {
        if let Some(value) = var.as_str().and_then(|v| ctx.env.get(v)) {
            headers.insert(header.clone(), Value::String(value.clone()));
        }
    }
    let token = obj
        .get("bearer_token_env_var")
        .and_then(Value::as_str)
        .and_then(|v| ctx.env.get(v))
        .filter(|t| !t.is_empty());
    if let Some(token) = token {
        headers.insert(
            "Authorization".into(),
            Value::String(format!("Bearer {token}")),
        );
    }
    headers
}

fn table(obj: &Map<String, Value>, key: &str) -> Map<String, Value> {
    obj.get(key)
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn non_empty(map: Map<String, Value>) -> Option<Value> {
    (!map.is_empty()).then_some(Value::Object(map))
}
