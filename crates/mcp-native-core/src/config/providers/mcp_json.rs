//! `mcp-json` (MCP Config): the standalone `<cwd>/mcp.json` and `<cwd>/.mcp.json` (project level,
//! `mcp.json` first). Only `command`, `args`, `env`, `url`, `headers` (and `cwd`, SPEC 7.10) are
//! `${VAR}`-expanded, after mapping; `enabled` must be a boolean and `timeout` a number.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Context, Found, Provider, copy_unchecked, invalid_entry, json_format, present};
use crate::config::expand::expand_deep;
use crate::config::js::truthy;
use crate::config::server::{Level, Server, transport_name};

pub(super) const PROVIDER: Provider = Provider {
    id: "mcp-json",
    name: "MCP Config",
    priority: 5,
    load,
};

fn failed(path: &Path) -> String {
    format!("Failed to parse JSON in {}", path.display())
}

fn load(ctx: &Context, found: &mut Found) {
    let invalid = |path: &Path, reason: &str| format!("{}: {reason}", failed(path));
    let format = json_format(Some(&failed), &invalid);
    for name in ["mcp.json", ".mcp.json"] {
        let path = ctx.cwd.join(name);
        let Some(doc) = found.load(ctx, &path, &format) else {
            continue;
        };
        // The reference's `tryParseJson` result is tested for truthiness: `null`, `false`, `0`
        // and `""` count as unparsable.
        if !truthy(Some(&doc)) {
            found.warn(failed(&path));
            continue;
        }
        found.note_disabled(&doc, Level::Project);
        let Some(servers) = found.servers_of(&doc, "mcpServers", &path) else {
            continue;
        };
        for (name, obj) in found.entries(&servers, |n| invalid_entry(n, &path)) {
            let mut server = Server::new(name, PROVIDER.source(&path, Level::Project));
            copy_unchecked(obj, &mut server);
            server.auth = present(obj, "auth");
            server.transport = obj.get("type").and_then(transport_name);
            server.enabled = checked(name, obj, "enabled", &path, found, |v| v.as_bool());
            server.timeout = checked(name, obj, "timeout", &path, found, |v| {
                v.as_f64().filter(|f| f.is_finite() && *f > 0.0)
            });
            for field in [
                &mut server.command,
                &mut server.args,
                &mut server.env,
                &mut server.cwd,
                &mut server.url,
                &mut server.headers,
            ] {
                if let Some(value) = field.as_mut().filter(|v| truthy(Some(v))) {
                    expand_deep(value, ctx.env);
                }
            }
            found.items.push(server);
        }
    }
}

/// `obj[key]` through `accept`; a present value it refuses (`null` included) is warned about.
fn checked<T>(
    name: &str,
    obj: &Map<String, Value>,
    key: &str,
    path: &Path,
    found: &mut Found,
    accept: impl Fn(&Value) -> Option<T>,
) -> Option<T> {
    let value = obj.get(key)?;
    let accepted = accept(value);
    if accepted.is_none() {
        found.warn(format!(
            "MCP server has invalid '{key}' value, ignoring (server \"{name}\", value {value}, {})",
            path.display()
        ));
    }
    accepted
}
