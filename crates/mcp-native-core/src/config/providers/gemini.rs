//! `gemini` (Gemini CLI): `mcpServers` of `~/.gemini/settings.json`, then of
//! `<cwd>/.gemini/settings.json` (the user file wins). The whole `mcpServers` object is
//! `${VAR}`-expanded; field types are checked; `httpUrl` (Gemini's Streamable HTTP endpoint) is
//! an `http` server with that url and takes precedence over `url` and `command`, as in Gemini CLI
//! (SPEC 7.10).

use serde_json::Value;

use super::{
    Context, Found, Provider, checked_transport, copy_checked, invalid_entry, invalid_json,
    json_format, non_empty_string,
};
use crate::config::expand::expand_deep;
use crate::config::server::{Level, Server};

pub(super) const PROVIDER: Provider = Provider {
    id: "gemini",
    name: "Gemini CLI",
    priority: 60,
    load,
};

fn load(ctx: &Context, found: &mut Found) {
    let format = json_format(None, &invalid_json);
    let files = [
        (ctx.home.join(".gemini").join("settings.json"), Level::User),
        (
            ctx.cwd.join(".gemini").join("settings.json"),
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
        let mut servers = Value::Object(servers);
        expand_deep(&mut servers, ctx.env);
        let Value::Object(servers) = servers else {
            continue;
        };
        for (name, obj) in found.entries(&servers, |n| invalid_entry(n, &path)) {
            let mut server = Server::new(name, PROVIDER.source(&path, level));
            copy_checked(obj, &mut server);
            server.transport = checked_transport(obj.get("type"));
            if let Some(http_url) = non_empty_string(obj, "httpUrl") {
                server.url = Some(http_url);
                server.transport = Some("http".into());
            }
            found.items.push(server);
        }
    }
}
