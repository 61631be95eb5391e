//! `claude` (Claude Code). User level: the first of `~/.claude.json`, `~/.claude/mcp.json` that
//! yields at least one server; then project level: the first of `<cwd>/.claude/.mcp.json`,
//! `<cwd>/.claude/mcp.json` that does. `~/.claude.json` also holds Claude Code's default ("local")
//! scope, `projects[<cwd>].mcpServers`: read at level `project`, first (local beats user beats
//! project, as Claude Code ranks its scopes), and counted for `~/.claude.json` (SPEC 7.10).
//! Each `mcpServers` object is `${VAR}`-expanded whole; `enabled`, `timeout` and `auth` are
//! not read. A file that does not parse is warned about and the next one is tried.

use std::path::Path;

use serde_json::{Map, Value};

use super::{Context, Found, Provider, copy_unchecked, invalid_entry, invalid_json, json_format};
use crate::config::expand::expand_deep;
use crate::config::server::{Level, Server, transport_name};

pub(super) const PROVIDER: Provider = Provider {
    id: "claude",
    name: "Claude Code",
    priority: 80,
    load,
};

fn load(ctx: &Context, found: &mut Found) {
    let format = json_format(None, &invalid_json);
    let user = [
        ctx.home.join(".claude.json"),
        ctx.home.join(".claude").join("mcp.json"),
    ];
    for (i, path) in user.iter().enumerate() {
        let Some(doc) = found.load(ctx, path, &format) else {
            continue;
        };
        found.note_disabled(&doc, Level::User);
        let mut items = if i == 0 {
            local_scope(ctx, &doc, path, found)
        } else {
            Vec::new()
        };
        if let Some(servers) = found.servers_of(&doc, "mcpServers", path) {
            items.extend(servers_of_file(ctx, servers, path, Level::User, found));
        }
        if !items.is_empty() {
            found.items.extend(items);
            break;
        }
    }
    let project_dir = ctx.cwd.join(".claude");
    for path in [project_dir.join(".mcp.json"), project_dir.join("mcp.json")] {
        let Some(doc) = found.load(ctx, &path, &format) else {
            continue;
        };
        found.note_disabled(&doc, Level::Project);
        let Some(servers) = found.servers_of(&doc, "mcpServers", &path) else {
            continue;
        };
        let items = servers_of_file(ctx, servers, &path, Level::Project, found);
        if !items.is_empty() {
            found.items.extend(items);
            break;
        }
    }
}

/// The servers of `projects[<cwd>]` in `~/.claude.json`. Claude Code keys projects by the
/// absolute working directory it ran in; when no key equals the resolved `cwd`, the key of its
/// real path (symlinks resolved) is tried, since that is what a shell's `pwd -P` gives.
fn local_scope(ctx: &Context, doc: &Value, path: &Path, found: &mut Found) -> Vec<Server> {
    let Some(projects) = doc.get("projects").and_then(Value::as_object) else {
        return Vec::new();
    };
    let by_key = |dir: &Path| projects.get(dir.to_string_lossy().as_ref());
    let project = by_key(&ctx.cwd).or_else(|| {
        let real = ctx.files.real_path(&ctx.cwd)?;
        (real != ctx.cwd).then(|| by_key(&real)).flatten()
    });
    let Some(project) = project else {
        return Vec::new();
    };
    match found.servers_of(project, "mcpServers", path) {
        Some(servers) => servers_of_file(ctx, servers, path, Level::Project, found),
        None => Vec::new(),
    }
}

fn servers_of_file(
    ctx: &Context,
    servers: Map<String, Value>,
    path: &Path,
    level: Level,
    found: &mut Found,
) -> Vec<Server> {
    let mut servers = Value::Object(servers);
    expand_deep(&mut servers, ctx.env);
    let Value::Object(servers) = servers else {
        return Vec::new();
    };
    found
        .entries(&servers, |n| invalid_entry(n, path))
        .into_iter()
        .map(|(name, obj)| {
            let mut server = Server::new(name, PROVIDER.source(path, level));
            copy_unchecked(obj, &mut server);
            server.transport = obj.get("type").and_then(transport_name);
            server
        })
        .collect()
}
