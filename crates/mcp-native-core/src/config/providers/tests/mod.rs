//! Discovery rules (SPEC 7.2–7.7, 7.10) against real files in temporary directories.

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::config::{EnvVars, LoadOptions, Loaded, load_all};

/// A temporary home and project directory, removed on drop.
struct Dirs {
    root: PathBuf,
    home: PathBuf,
    cwd: PathBuf,
}

impl Dirs {
    fn new(tag: &str) -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let n = N.fetch_add(1, Ordering::Relaxed);
        let root =
            std::env::temp_dir().join(format!("mcp-native-disc-{tag}-{}-{n}", std::process::id()));
        let (home, cwd) = (root.join("home"), root.join("project"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&cwd).unwrap();
        Self { root, home, cwd }
    }

    /// Writes `text` at `rel` under the home (`~/…`) or project directory.
    fn write(&self, rel: &str, text: &str) -> PathBuf {
        let path = match rel.strip_prefix("~/") {
            Some(r) => self.home.join(r),
            None => self.cwd.join(rel),
        };
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, text).unwrap();
        path
    }

    fn load(&self) -> Loaded {
        self.load_with(&[], LoadOptions::default())
    }

    fn load_with(&self, env: &[(&str, &str)], options: LoadOptions) -> Loaded {
        let env: EnvVars = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        load_all(&self.cwd, &self.home, &env, &options)
    }
}

impl Drop for Dirs {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

fn servers(entries: Value) -> String {
    json!({ "mcpServers": entries }).to_string()
}

fn names(l: &Loaded) -> Vec<&str> {
    l.configs.keys().map(String::as_str).collect()
}

fn source_of(l: &Loaded, name: &str) -> (String, String, String) {
    let s = &l.sources[name];
    let text = |k: &str| s[k].as_str().unwrap().to_owned();
    (text("provider"), text("path"), text("level"))
}

fn path_text(p: &Path) -> String {
    p.to_string_lossy().into_owned()
}

mod rules;
mod sources;
