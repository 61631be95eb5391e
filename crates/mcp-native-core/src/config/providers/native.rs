//! `native` (OMP): the agent's own files — `<cwd>/.omp/mcp.json`, `<cwd>/.omp/.mcp.json`,
//! `<agent dir>/mcp.json`, `<agent dir>/.mcp.json`, all read and joined in that order (project
//! before user, `mcp.json` before `.mcp.json`). The whole `mcpServers` object is `${VAR}`-expanded
//! before mapping; `enabled` and `timeout` also accept strings.

use std::path::Path;

use serde_json::{Map, Value};

use super::{
    Context, Found, Provider, copy_unchecked, invalid_entry, invalid_json, json_format, present,
};
use crate::config::expand::expand_deep;
use crate::config::js::{number_from_string, number_text, type_of};
use crate::config::server::{Level, Server, transport_name};

pub(super) const PROVIDER: Provider = Provider {
    id: "native",
    name: "OMP",
    priority: 100,
    load,
};

fn load(ctx: &Context, found: &mut Found) {
    let omp = ctx.cwd.join(".omp");
    let files = [
        (omp.join("mcp.json"), Level::Project),
        (omp.join(".mcp.json"), Level::Project),
        (ctx.agent_dir.join("mcp.json"), Level::User),
        (ctx.agent_dir.join(".mcp.json"), Level::User),
    ];
    let format = json_format(None, &invalid_json);
    for (path, level) in files {
        let Some(doc) = found.load(ctx, &path, &format) else {
            continue;
        };
        found.note_disabled(&doc, level);
        let Some(servers) = found.servers_of(&doc, "mcpServers", &path) else {
            continue;
        };
        let mut servers = Value::Object(servers);
        expand_deep(&mut servers, ctx.env);
        let Value::Object(servers) = servers else {
            continue;
        };
        for (name, obj) in found.entries(&servers, |n| invalid_entry(n, &path)) {
            let mut server = Server::new(name, PROVIDER.source(&path, level));
            copy_unchecked(obj, &mut server);
            server.auth = present(obj, "auth");
            server.transport = obj.get("type").and_then(transport_name);
            server.enabled = enabled(name, obj, &path, found);
            server.timeout = timeout(name, obj, &path, found);
            found.items.push(server);
        }
    }
}

/// A boolean, or `"true"`/`"1"`/`"false"`/`"0"` in any case; anything else is ignored with a
/// warning (`null` silently).
fn enabled(name: &str, obj: &Map<String, Value>, path: &Path, found: &mut Found) -> Option<bool> {
    let warning = match obj.get("enabled")? {
        Value::Null => return None,
        Value::Bool(b) => return Some(*b),
        Value::String(s) => match s.to_lowercase().as_str() {
            "true" | "1" => return Some(true),
            "false" | "0" => return Some(false),
            _ => format!("invalid enabled value \"{s}\""),
        },
        other => format!("invalid enabled type {}", type_of(other)),
    };
    found.warn(format!(
        "MCP server \"{name}\": {warning}, ignoring ({})",
        path.display()
    ));
    None
}

/// A finite number > 0, or a string whose `Number()` is one; anything else (`null` included) is
/// ignored with a warning.
fn timeout(name: &str, obj: &Map<String, Value>, path: &Path, found: &mut Found) -> Option<f64> {
    let warning = match obj.get("timeout")? {
        Value::Number(n) => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            if f.is_finite() && f > 0.0 {
                return Some(f);
            }
            format!("invalid timeout {}", number_text(f))
        }
        Value::String(s) => {
            let f = number_from_string(s);
            if f.is_finite() && f > 0.0 {
                return Some(f);
            }
            format!("invalid timeout \"{s}\"")
        }
        other => format!("invalid timeout type {}", type_of(other)),
    };
    found.warn(format!(
        "MCP server \"{name}\": {warning}, ignoring ({})",
        path.display()
    ));
    None
}
