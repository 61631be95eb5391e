//! `vscode` (VS Code): `<cwd>/.vscode/mcp.json`, JSONC (comments, trailing commas). Servers come
//! from the top-level `servers` (the file's real format), then from `mcp.servers` (the settings
//! format the reference read) (SPEC 7.10). Each server object is `${VAR}`-expanded; field types
//! are checked; the transport comes from `type` or `transport` when one names `stdio`, `http` or
//! `sse`.

use std::path::Path;

use serde_json::Value;

use super::{
    Context, FileFormat, Found, Provider, checked_transport, copy_checked, invalid_entry,
    invalid_json,
};
use crate::config::expand::expand_deep;
use crate::config::format::parse_jsonc;
use crate::config::server::{Level, Server};

pub(super) const PROVIDER: Provider = Provider {
    id: "vscode",
    name: "VS Code",
    priority: 20,
    load,
};

fn load(ctx: &Context, found: &mut Found) {
    let path = ctx.cwd.join(".vscode").join("mcp.json");
    let failed = |path: &Path| format!("Failed to read {}", path.display());
    let format = FileFormat {
        parse: parse_jsonc,
        if_empty: Some(&failed),
        if_invalid: &invalid_json,
    };
    let Some(doc) = found.load(ctx, &path, &format) else {
        return;
    };
    found.note_disabled(&doc, Level::Project);
    let top = found.servers_of(&doc, "servers", &path);
    let nested = match doc.get("mcp") {
        Some(mcp) => found.servers_of(mcp, "servers", &path),
        None => None,
    };
    for servers in [top, nested].into_iter().flatten() {
        for (name, obj) in found.entries(&servers, |n| invalid_entry(n, &path)) {
            let mut obj = Value::Object(obj.clone());
            expand_deep(&mut obj, ctx.env);
            let Value::Object(obj) = obj else {
                continue;
            };
            let mut server = Server::new(name, PROVIDER.source(&path, Level::Project));
            copy_checked(&obj, &mut server);
            server.transport = checked_transport(obj.get("type"))
                .or_else(|| checked_transport(obj.get("transport")));
            found.items.push(server);
        }
    }
}
