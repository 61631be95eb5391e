//! What a stdio server's command becomes on Windows (SPEC 11.6, the agent's
//! `resolveStdioSpawnCommand`): the command is resolved through PATHEXT, the working directory
//! first, then PATH; an npm shim (`<name>.cmd` written by cmd-shim whose interpreter is node) runs
//! as `node <target>`; a `.cmd`/`.bat` runs by its full path through the standard library's
//! `Command`, which starts batch files through `cmd.exe` with its own argument handling, fixed for
//! the BatBadBut class of injection (CVE-2024-24576) — there is no escaper here. The console
//! window is hidden only when the host has no console to share.
//!
//! Windows path rules written out on strings, so that the rules are tested on every platform (the
//! file system is behind [`Files`]).

/// PATHEXT when the environment has none (the agent's default).
const DEFAULT_PATHEXT: [&str; 4] = [".COM", ".EXE", ".BAT", ".CMD"];

/// What the plan needs of the file system.
pub trait Files {
    /// Whether `path` names an existing file.
    fn is_file(&self, path: &str) -> bool;
    /// The text of the file at `path`.
    fn read(&self, path: &str) -> Option<String>;
}

/// The real file system.
pub struct RealFiles;

impl Files for RealFiles {
    fn is_file(&self, path: &str) -> bool {
        std::path::Path::new(path).is_file()
    }

    fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(path).ok()
    }
}

/// How to start the server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    /// The program for `Command::new`: a resolved full path, `node` (found on PATH by the
    /// standard library), or the command as written when it could not be resolved.
    pub program: String,
    /// The arguments (for an npm shim, its target first).
    pub args: Vec<String>,
    /// `CREATE_NO_WINDOW`: the host has no console for the server to share.
    pub hide_window: bool,
}

/// The plan for `command` with `args`, started in `cwd`, with the child's environment `env`
/// (PATH and PATHEXT are read from it, names compared without case).
pub fn plan(
    command: &str,
    args: &[String],
    cwd: &str,
    env: &[(String, String)],
    files: &dyn Files,
    host_has_console: bool,
) -> Launch {
    let hide_window = !host_has_console;
    let resolved = resolve(command, cwd, env, files);
    let program = resolved.unwrap_or_else(|| command.to_owned());
    if let Some((node, target)) = npm_shim(&program, cwd, files) {
        let mut all = Vec::with_capacity(args.len() + 1);
        all.push(target);
        all.extend(args.iter().cloned());
        return Launch {
            program: node,
            args: all,
            hide_window,
        };
    }
    Launch {
        program,
        args: args.to_vec(),
        hide_window,
    }
}

/// The value of `name` in `env`, its name compared without case.
fn env_value<'a>(env: &'a [(String, String)], name: &str) -> Option<&'a str> {
    env.iter()
        .find(|(k, _)| k == name)
        .or_else(|| env.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)))
        .map(|(_, v)| v.as_str())
}

/// PATHEXT's extensions (each with its dot), or the default.
pub fn path_exts(env: &[(String, String)]) -> Vec<String> {
    let exts: Vec<String> = env_value(env, "PATHEXT")
        .unwrap_or("")
        .split(';')
        .map(str::trim)
        .filter(|e| !e.is_empty())
        .map(|e| {
            if e.starts_with('.') {
                e.to_owned()
            } else {
                format!(".{e}")
            }
        })
        .collect();
    if exts.is_empty() {
        DEFAULT_PATHEXT.iter().map(|e| (*e).to_owned()).collect()
    } else {
        exts
    }
}

fn is_sep(c: char) -> bool {
    c == '\\' || c == '/'
}

/// `path.win32.isAbsolute`: a leading separator, or a drive letter followed by one.
fn is_absolute(p: &str) -> bool {
    let b = p.as_bytes();
    match b {
        [first, ..] if is_sep(*first as char) => true,
        [drive, b':', sep, ..] => drive.is_ascii_alphabetic() && is_sep(*sep as char),
        _ => false,
    }
}

fn has_path_segment(command: &str) -> bool {
    command.contains(is_sep) || is_absolute(command)
}

/// `dir` joined with `name` by a backslash.
fn join(dir: &str, name: &str) -> String {
    let dir = dir.trim_end_matches(is_sep);
    format!("{dir}\\{name}")
}

/// `path.resolve(cwd, p)` without normalising: `p` when absolute, else `cwd\p`.
fn resolve_in(cwd: &str, p: &str) -> String {
    if is_absolute(p) {
        p.to_owned()
    } else {
        join(cwd, p)
    }
}

fn basename(p: &str) -> &str {
    p.rsplit(is_sep).next().unwrap_or(p)
}

fn dirname(p: &str) -> &str {
    match p.rfind(is_sep) {
        Some(0) => &p[..1],
        Some(i) => &p[..i],
        None => ".",
    }
}

/// The extension of the last path segment, with its dot (`""` when none; a leading dot is a
/// name, not an extension).
fn extname(p: &str) -> &str {
    let base = basename(p);
    match base.rfind('.') {
        Some(i) if i > 0 => &base[i..],
        _ => "",
    }
}

/// Whether `command` names a batch file (`.cmd`/`.bat`).
pub fn is_batch(command: &str) -> bool {
    let ext = extname(command);
    ext.eq_ignore_ascii_case(".cmd") || ext.eq_ignore_ascii_case(".bat")
}

/// The agent's `resolveWindowsCommandPath`: the full path of `command`, trying each PATHEXT
/// extension unless it already has one of them; a command with a path segment is looked up
/// against `cwd` only, a bare name in `cwd` first, then each PATH directory. `None` when nothing
/// was found and the command has no PATHEXT extension; the command itself when it has one.
pub fn resolve(
    command: &str,
    cwd: &str,
    env: &[(String, String)],
    files: &dyn Files,
) -> Option<String> {
    let exts = path_exts(env);
    let ext = extname(command);
    let has_ext = !ext.is_empty() && exts.iter().any(|e| e.eq_ignore_ascii_case(ext));
    let candidates: Vec<String> = if has_ext {
        vec![command.to_owned()]
    } else {
        exts.iter().map(|e| format!("{command}{e}")).collect()
    };
    let fallback = has_ext.then(|| command.to_owned());
    if has_path_segment(command) {
        return candidates
            .iter()
            .map(|c| resolve_in(cwd, c))
            .find(|p| files.is_file(p))
            .or(fallback);
    }
    let path = env_value(env, "PATH").unwrap_or("");
    let dirs = std::iter::once(cwd).chain(path.split(';').filter(|d| !d.is_empty()));
    for dir in dirs {
        for c in &candidates {
            let p = join(dir, c);
            if files.is_file(&p) {
                return Some(p);
            }
        }
    }
    fallback
}

/// Finds `needle` (ASCII) in `hay` without case; the byte index after it.
fn find_ci(hay: &str, needle: &str, from: usize) -> Option<usize> {
    let h = hay.as_bytes();
    let n = needle.as_bytes();
    (from..=h.len().checked_sub(n.len())?)
        .find(|&i| h[i..i + n.len()].eq_ignore_ascii_case(n))
        .map(|i| i + n.len())
}

fn skip_ws(s: &str, mut i: usize) -> usize {
    let b = s.as_bytes();
    while i < b.len() && (b[i] == b' ' || b[i] == b'\t') {
        i += 1;
    }
    i
}

/// The program of the shim's PATH fallback (`SET "_prog=node"`, not the `%dp0%\node.exe` of its
/// IF EXIST branch): the agent's `/SET\s+"_prog=([^%"][^"]*)"/i`.
fn shim_prog(content: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(after) = find_ci(content, "\"_prog=", from) {
        from = after;
        let before = &content[..after - 7];
        let trimmed = before.trim_end_matches([' ', '\t']);
        let set = trimmed.len() < before.len()
            && trimmed
                .get(trimmed.len().saturating_sub(3)..)
                .is_some_and(|t| t.eq_ignore_ascii_case("set"));
        let rest = &content[after..];
        if !set || rest.starts_with(['%', '"']) {
            continue;
        }
        if let Some(end) = rest.find('"') {
            return Some(&rest[..end]);
        }
    }
    None
}

/// The script the shim runs: the agent's `/"%_prog%"\s+"([^"]+)"\s+%\*/i`.
fn shim_target(content: &str) -> Option<&str> {
    let mut from = 0;
    while let Some(after) = find_ci(content, "\"%_prog%\"", from) {
        from = after;
        let i = skip_ws(content, after);
        if i == after || !content[i..].starts_with('"') {
            continue;
        }
        let rest = &content[i + 1..];
        let Some(end) = rest.find('"') else { continue };
        if end == 0 {
            continue;
        }
        let j = i + 1 + end + 1;
        let k = skip_ws(content, j);
        if k > j && content[k..].starts_with("%*") {
            return Some(&rest[..end]);
        }
    }
    None
}

/// `%dp0%\rest` → `shim_dir\rest` (the agent's `resolveWindowsShimPath`).
fn shim_path(value: &str, shim_dir: &str) -> Option<String> {
    let prefix = value.get(..5)?;
    if !prefix.eq_ignore_ascii_case("%dp0%") {
        return None;
    }
    let parts: Vec<&str> = value[5..].split(is_sep).filter(|p| !p.is_empty()).collect();
    if parts.is_empty() {
        return Some(shim_dir.to_owned());
    }
    Some(
        parts
            .iter()
            .fold(shim_dir.to_owned(), |dir, p| join(&dir, p)),
    )
}

/// The agent's `resolveWindowsNpmShimCommand`: a `.cmd` with a path (not `npx.cmd`) written by
/// cmd-shim whose interpreter is node runs as `node <target>` (the `node.exe` beside the shim
/// when there is one); `(node, target)`.
pub fn npm_shim(command: &str, cwd: &str, files: &dyn Files) -> Option<(String, String)> {
    if !is_batch(command) || !has_path_segment(command) {
        return None;
    }
    let path = resolve_in(cwd, command);
    let base = basename(&path);
    let name = match base.len().checked_sub(4) {
        Some(i) if base[i..].eq_ignore_ascii_case(".cmd") => &base[..i],
        _ => base,
    };
    if name.eq_ignore_ascii_case("npx") {
        return None;
    }
    let content = files.read(&path)?;
    let prog = shim_prog(&content)?;
    let prog_name = basename(prog);
    let prog_name = match prog_name.len().checked_sub(4) {
        Some(i) if prog_name[i..].eq_ignore_ascii_case(".exe") => &prog_name[..i],
        _ => prog_name,
    };
    if !prog_name.eq_ignore_ascii_case("node") {
        return None;
    }
    let dir = dirname(&path);
    let target = shim_path(shim_target(&content)?, dir)?;
    let sibling = join(dir, "node.exe");
    let node = if files.is_file(&sibling) {
        sibling
    } else {
        "node".to_owned()
    };
    Some((node, target))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    /// Files by exact (case-insensitive, as on Windows) path.
    #[derive(Default)]
    struct Fake(HashMap<String, String>);

    impl Fake {
        fn with(mut self, path: &str, text: &str) -> Self {
            self.0.insert(path.to_ascii_lowercase(), text.to_owned());
            self
        }
    }

    impl Files for Fake {
        fn is_file(&self, path: &str) -> bool {
            self.0.contains_key(&path.to_ascii_lowercase())
        }
        fn read(&self, path: &str) -> Option<String> {
            self.0.get(&path.to_ascii_lowercase()).cloned()
        }
    }

    fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect()
    }

    fn args(a: &[&str]) -> Vec<String> {
        a.iter().map(|s| (*s).to_owned()).collect()
    }

    /// cmd-shim's output for a node bin (npm 10), as installed in `node_modules\.bin`.
    const SHIM: &str = "@ECHO off\r\nGOTO start\r\n:find_dp0\r\nSET dp0=%~dp0\r\nEXIT /b\r\n:start\r\n\
SETLOCAL\r\nCALL :find_dp0\r\n\r\nIF EXIST \"%dp0%\\node.exe\" (\r\n  SET \"_prog=%dp0%\\node.exe\"\r\n\
) ELSE (\r\n  SET \"_prog=node\"\r\n  SET PATHEXT=%PATHEXT:;.JS;=;%\r\n)\r\n\r\nendLocal & goto \
#_undefined_# 2>NUL || title %COMSPEC% & \"%_prog%\"  \"%dp0%\\..\\server\\dist\\index.js\" %*\r\n";

    const PATH_ENV: &[(&str, &str)] = &[
        ("Path", "C:\\Windows\\system32;C:\\Program Files\\nodejs"),
        ("PATHEXT", ".COM;.EXE;.BAT;.CMD"),
    ];

    #[test]
    fn a_bare_name_is_found_in_the_working_directory_before_path() {
        let files = Fake::default()
            .with("C:\\proj\\server.cmd", "@echo off")
            .with("C:\\Program Files\\nodejs\\server.exe", "");
        let launch = plan(
            "server",
            &args(&["a"]),
            "C:\\proj",
            &env(PATH_ENV),
            &files,
            true,
        );
        // The extension as PATHEXT spells it (as the agent builds the candidate).
        assert_eq!(launch.program, "C:\\proj\\server.CMD");
        assert_eq!(launch.args, args(&["a"]));
        // Without the project's, PATH's, in PATHEXT order per directory.
        let files = Fake::default()
            .with("C:\\Program Files\\nodejs\\server.cmd", "")
            .with("C:\\Program Files\\nodejs\\server.exe", "");
        assert_eq!(
            resolve("server", "C:\\proj", &env(PATH_ENV), &files).as_deref(),
            Some("C:\\Program Files\\nodejs\\server.EXE")
        );
    }

    #[test]
    fn pathext_is_read_without_case_and_defaults_when_missing() {
        assert_eq!(
            path_exts(&env(&[("pathext", "com; .Py ;;")])),
            args(&[".com", ".Py"])
        );
        assert_eq!(path_exts(&[]), args(&[".COM", ".EXE", ".BAT", ".CMD"]));
        let files = Fake::default().with("C:\\tools\\x.py", "");
        let e = env(&[("PATH", "C:\\tools"), ("PATHEXT", ".PY")]);
        assert_eq!(
            resolve("x", "C:\\p", &e, &files).as_deref(),
            Some("C:\\tools\\x.PY")
        );
    }

    #[test]
    fn a_command_with_a_path_is_looked_up_against_the_working_directory_only() {
        let files = Fake::default()
            .with("C:\\proj\\bin\\run.bat", "")
            .with("C:\\Program Files\\nodejs\\bin\\run.exe", "");
        assert_eq!(
            resolve("bin\\run", "C:\\proj", &env(PATH_ENV), &files).as_deref(),
            Some("C:\\proj\\bin\\run.BAT")
        );
        assert_eq!(
            resolve("D:/x/run", "C:\\proj", &env(PATH_ENV), &files),
            None
        );
        // With a PATHEXT extension, the command stands even when no file was found.
        assert_eq!(
            resolve("D:\\x\\run.exe", "C:\\proj", &env(PATH_ENV), &files).as_deref(),
            Some("D:\\x\\run.exe")
        );
    }

    #[test]
    fn an_unresolved_bare_name_is_kept_as_written() {
        let launch = plan(
            "uvx",
            &args(&["mcp-server-time"]),
            "C:\\proj",
            &env(PATH_ENV),
            &Fake::default(),
            false,
        );
        assert_eq!(
            launch,
            Launch {
                program: "uvx".into(),
                args: args(&["mcp-server-time"]),
                hide_window: true,
            }
        );
    }

    #[test]
    fn an_npm_shim_runs_as_node_and_its_target() {
        let bin = "C:\\proj\\node_modules\\.bin";
        let files = Fake::default().with(&format!("{bin}\\my-server.cmd"), SHIM);
        let e = env(&[("PATH", bin), ("PATHEXT", ".EXE;.CMD")]);
        let launch = plan(
            "my-server",
            &args(&["--x", "a b"]),
            "C:\\proj",
            &e,
            &files,
            true,
        );
        assert_eq!(launch.program, "node");
        assert_eq!(
            launch.args,
            args(&[
                "C:\\proj\\node_modules\\.bin\\..\\server\\dist\\index.js",
                "--x",
                "a b"
            ])
        );
        assert!(!launch.hide_window);
        // With a node.exe beside the shim, that one.
        let files = files.with(&format!("{bin}\\node.exe"), "");
        let launch = plan("my-server", &[], "C:\\proj", &e, &files, true);
        assert_eq!(launch.program, format!("{bin}\\node.exe"));
    }

    #[test]
    fn npx_and_shims_of_other_interpreters_stay_batch_files() {
        let bin = "C:\\node";
        let py_shim = SHIM.replace("\"_prog=node\"", "\"_prog=python\"");
        let files = Fake::default()
            .with("C:\\node\\npx.cmd", SHIM)
            .with("C:\\node\\py-server.cmd", &py_shim)
            .with(
                "C:\\node\\plain.cmd",
                "@echo off\r\nnode %~dp0\\x.js %*\r\n",
            );
        let e = env(&[("PATH", bin)]);
        for name in ["npx", "py-server", "plain"] {
            let launch = plan(name, &args(&["%PATH%"]), "C:\\p", &e, &files, true);
            assert_eq!(launch.program, format!("C:\\node\\{name}.CMD"), "{name}");
            assert_eq!(launch.args, args(&["%PATH%"]), "{name}");
            assert!(is_batch(&launch.program));
        }
    }

    #[test]
    fn the_window_is_hidden_only_without_a_console_to_share() {
        let files = Fake::default().with("C:\\p\\s.exe", "");
        assert!(!plan("s", &[], "C:\\p", &[], &files, true).hide_window);
        assert!(plan("s", &[], "C:\\p", &[], &files, false).hide_window);
    }

    #[test]
    fn windows_path_pieces() {
        for (p, abs) in [
            ("C:\\x", true),
            ("c:/x", true),
            ("\\\\srv\\share\\x", true),
            ("\\x", true),
            ("C:x", false),
            ("x\\y", false),
            ("x", false),
        ] {
            assert_eq!(is_absolute(p), abs, "{p}");
        }
        assert_eq!(extname("C:\\a.b\\c"), "");
        assert_eq!(extname("C:\\a\\.cmd"), "");
        assert_eq!(extname("C:\\a\\b.CMD"), ".CMD");
        assert_eq!(dirname("C:\\a\\b.cmd"), "C:\\a");
        assert_eq!(join("C:\\a\\", "b"), "C:\\a\\b");
        assert_eq!(
            shim_path("%dp0%\\..\\x\\y.js", "C:\\b").as_deref(),
            Some("C:\\b\\..\\x\\y.js")
        );
        assert_eq!(shim_path("%dp0%", "C:\\b").as_deref(), Some("C:\\b"));
        assert_eq!(shim_path("C:\\x.js", "C:\\b"), None);
    }
}
