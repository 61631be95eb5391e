//! `windsurf` (Windsurf): `mcpServers` of `~/.codeium/windsurf/mcp_config.json`, then of
//! `<cwd>/.windsurf/mcp_config.json` (the user file wins). Each server object is
//! `${VAR}`-expanded; values are copied unchecked; `serverUrl` (Windsurf's remote endpoint) is
//! the url when there is no `url` (SPEC 7.10).

use serde_json::Value;

use super::{
    Context, Found, Provider, copy_unchecked, invalid_json, json_format, non_empty_string,
};
use crate::config::expand::expand_deep;
use crate::config::js::truthy;
use crate::config::server::{Level, Server, transport_name};

pub(super) const PROVIDER: Provider = Provider {
    id: "windsurf",
    name: "Windsurf",
    priority: 50,
    load,
};

fn load(ctx: &Context, found: &mut Found) {
    let format = json_format(None, &invalid_json);
    let files = [
        (
            ctx.home
                .join(".codeium")
                .join("windsurf")
                .join("mcp_config.json"),
            Level::User,
        ),
        (
            ctx.cwd.join(".windsurf").join("mcp_config.json"),
            Level::Project,
        ),
    ];
    for (path, level) in files {
        let Some(doc) = found.load(ctx, &path, &format) else {
            continue;
        };
        found.note_disabled(&doc, level);
        let Some(servers) = found.servers_of(&doc, "mcpServers", &path) else {
            continue;
        };
        let invalid = |n: &str| format!("Invalid server config for \"{n}\" in {}", path.display());
        for (name, obj) in found.entries(&servers, invalid) {
            let mut obj = Value::Object(obj.clone());
            expand_deep(&mut obj, ctx.env);
            let Value::Object(obj) = obj else {
                continue;
            };
            let mut server = Server::new(name, PROVIDER.source(&path, level));
            copy_unchecked(&obj, &mut server);
            server.transport = obj.get("type").and_then(transport_name);
            let server_url = non_empty_string(&obj, "serverUrl");
            if !truthy(server.url.as_ref())
                && let Some(url) = server_url
            {
                server.url = Some(url);
            }
            found.items.push(server);
        }
    }
}
