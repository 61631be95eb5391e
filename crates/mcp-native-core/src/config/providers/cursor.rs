//! `cursor` (Cursor): `mcpServers` of `~/.cursor/mcp.json`, then of `<cwd>/.cursor/mcp.json`
//! (the user file wins). The whole `mcpServers` object is `${VAR}`-expanded; values are copied
//! unchecked, but `type` sets the transport only when it names `stdio`, `sse` or `http`.

use std::path::Path;

use serde_json::Value;

use super::{
    Context, Found, Provider, checked_transport, copy_unchecked, invalid_entry, json_format,
};
use crate::config::expand::expand_deep;
use crate::config::server::{Level, Server};

pub(super) const PROVIDER: Provider = Provider {
    id: "cursor",
    name: "Cursor",
    priority: 50,
    load,
};

fn bad_key(path: &Path) -> String {
    format!("{}: missing or invalid 'mcpServers' key", path.display())
}

fn load(ctx: &Context, found: &mut Found) {
    let invalid = |path: &Path, reason: &str| format!("{} ({reason})", bad_key(path));
    let format = json_format(None, &invalid);
    let files = [
        (ctx.home.join(".cursor").join("mcp.json"), Level::User),
        (ctx.cwd.join(".cursor").join("mcp.json"), Level::Project),
    ];
    for (path, level) in files {
        let Some(doc) = found.load(ctx, &path, &format) else {
            continue;
        };
        found.note_disabled(&doc, level);
        let Some(Value::Object(servers)) = doc.get("mcpServers") else {
            found.warn(bad_key(&path));
            continue;
        };
        let mut servers = Value::Object(servers.clone());
        expand_deep(&mut servers, ctx.env);
        let Value::Object(servers) = servers else {
            continue;
        };
        for (name, obj) in found.entries(&servers, |n| invalid_entry(n, &path)) {
            let mut server = Server::new(name, PROVIDER.source(&path, level));
            copy_unchecked(obj, &mut server);
            server.transport = checked_transport(obj.get("type"));
            found.items.push(server);
        }
    }
}
