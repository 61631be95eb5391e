//! Helpers shared by the integration tests (each test file is its own crate and uses a part).
#![allow(dead_code)]

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use mcp_native_core::runtime::group_alive;
use mcp_native_core::transport::{Event, EventSink};
use serde_json::Value;

/// Starts `node <args>` (a fixture server that prints `{"port":N}` on its first line) and returns
/// the child with its port. The fixture keeps stdin open to die with its parent.
pub fn spawn_with_port(args: &[&str]) -> (Child, u64) {
    let mut child = Command::new("node")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap_or_else(|e| panic!("node {args:?} starts: {e}"));
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let port = serde_json::from_str::<Value>(&line).unwrap()["port"]
        .as_u64()
        .unwrap();
    (child, port)
}

/// Live processes whose command line holds `text`.
pub fn processes_with(text: &str) -> Vec<i32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(pid) = entry.file_name().to_string_lossy().parse::<i32>() else {
            continue;
        };
        let Ok(cmdline) = std::fs::read(format!("/proc/{pid}/cmdline")) else {
            continue;
        };
        if String::from_utf8_lossy(&cmdline).contains(text) && group_alive(pid) {
            found.push(pid);
        }
    }
    found
}

/// Every event of a transport to a channel; with `Some(n)`, answers of `n` bytes and more come
/// raw ([`EventSink::raw_answers_from`]).
pub struct ChannelSink(
    pub tokio::sync::mpsc::UnboundedSender<Event>,
    pub Option<usize>,
);

impl EventSink for ChannelSink {
    fn emit_all(&self, events: Vec<Event>) {
        for event in events {
            let _ = self.0.send(event);
        }
    }

    fn raw_answers_from(&self) -> Option<usize> {
        self.1
    }
}
