//! The Rust manager's 12.7 profile (SPEC 6, `ManagerOptions::compat_12_7`; the agent as it ships
//! today is `manager_policy.rs`'s) without Node, case by case as `__test__/manager.test.mjs` covers it
//! through the binding: against the fixture server as real child processes (every wait bounded),
//! and — where timing is the point (the startup gate, the `list_changed` debounce, reconnects,
//! a disconnect in the middle of a start) — against in-memory servers on tokio's paused clock,
//! so that every time asserted is exact. A recording host stands in for the binding's.
//!
//! How in-memory servers reach the manager: the manager only takes JSON configs (stdio, http),
//! so the recording host's client sink swaps a server's config for its in-memory transport when
//! the client announces its connect (`ClientEvent::Status(Connecting)`: emitted after the manager
//! set the config from the JSON, before the client reads it to open the connection). The JSON
//! config names a command that does not exist: a missed swap fails with `spawn … ENOENT`.
#![cfg(unix)]
// fixture servers, process groups and /proc: crates/mcp-native-core/tests/windows_batch.rs and the JS suite under wine cover Windows
// The kit is shared with `manager_policy.rs`: what this file leaves unused of it is that file's.
#![allow(dead_code)]

mod common;
use common::processes_with;

include!("kit/manager.rs");

// --- 1. connect_servers against fixture processes ----------------------------------------------

#[tokio::test]
async fn connect_servers_validates_starts_and_reports_every_server() {
    let host = Host::new();
    let m = manager(&host, real_options());
    let report = within(m.connect_servers(vec![
        entry("fast", fixture(&[])),
        entry(
            "ws",
            json!({ "type": "ws", "command": "x", "url": "ws://127.0.0.1:1" }),
        ),
        entry("broken", json!({ "command": BROKEN })),
        entry("nocmd", json!({ "args": ["x"] })),
        entry("plain", fixture(&["--no-tools-cap"])),
        entry("sse", json!({ "type": "sse" })),
        entry(
            "both",
            json!({ "command": "x", "url": "http://127.0.0.1:1/mcp" }),
        ),
        entry("nourl", json!({ "type": "http" })),
        entry("fast2", fixture(&[])),
    ]))
    .await;
    let refused = |name: &str, message: &str| (name.to_owned(), message.to_owned());
    assert_eq!(
        report.start,
        StartReport {
            started: strings(&["fast", "broken", "plain", "fast2"]),
            connected: vec![],
            errors: vec![
                refused(
                    "ws",
                    r#"Server "ws": both "command" and "url" are set - server should be either stdio (command) OR http/sse (url), not both; Server "ws": unknown server type "ws""#
                ),
                refused(
                    "nocmd",
                    r#"Server "nocmd": stdio server requires "command" field"#
                ),
                refused("sse", r#"Server "sse": sse server requires "url" field"#),
                refused(
                    "both",
                    r#"Server "both": both "command" and "url" are set - server should be either stdio (command) OR http/sse (url), not both"#
                ),
                refused(
                    "nourl",
                    r#"Server "nourl": http server requires "url" field"#
                ),
            ],
            ..StartReport::default()
        }
    );
    assert_eq!(
        report.gate,
        GateReport {
            connected: strings(&["fast", "plain", "fast2"]),
            deferred: vec![],
            pending: vec![],
            errors: vec![("broken".into(), Error::Io(ENOENT.into()))],
        }
    );
    assert_eq!(m.server_names(), strings(&["fast", "plain", "fast2"]));
    assert_eq!(m.connected_servers(), strings(&["fast", "plain", "fast2"]));
    assert_eq!(m.pending_servers(), Vec::<String>::new());
    for (name, expected) in [
        ("fast", ServerStatus::Connected),
        ("plain", ServerStatus::Connected),
        ("broken", ServerStatus::Disconnected),
        ("ws", ServerStatus::Disconnected),
    ] {
        assert_eq!(m.status(name), expected, "{name}");
    }
    // Refused configs never started.
    for name in ["ws", "nocmd", "sse", "both", "nourl"] {
        assert_eq!(host.of(name), vec![], "{name}");
    }
    assert_eq!(
        host.of("fast"),
        vec![
            Starting("fast".into()),
            status("fast", ServerStatus::Connecting),
            Opened("fast".into(), 1),
            tools("fast", &FIXTURE_TOOLS),
            cache_set("fast", &FIXTURE_TOOLS),
            connected_log("fast", 6),
            status("fast", ServerStatus::Connected),
        ]
    );
    // No tools capability: connected, no tools (none asked for), an empty cache entry.
    assert_eq!(
        host.of("plain"),
        vec![
            Starting("plain".into()),
            status("plain", ServerStatus::Connecting),
            Opened("plain".into(), 1),
            tools("plain", &[]),
            cache_set("plain", &[]),
            connected_log("plain", 0),
            status("plain", ServerStatus::Connected),
        ]
    );
    let plain = m.client("plain").unwrap();
    let requests: Value = within(plain.request("requests", &json!({}))).await.unwrap();
    let methods: Vec<&str> = requests["requests"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|r| r["method"].as_str())
        .collect();
    assert_eq!(methods, ["initialize", "requests"]);
    // The failed spawn: reported, logged, withdrawn, disconnected with its error.
    assert_eq!(
        host.of("broken"),
        vec![
            Starting("broken".into()),
            status("broken", ServerStatus::Connecting),
            Log(
                "broken".into(),
                LogLevel::Error,
                "MCP tool load failed".into()
            ),
            Removed("broken".into()),
            Status(
                "broken".into(),
                ServerStatus::Disconnected,
                Some(ENOENT.into())
            ),
        ]
    );
    within(m.disconnect_all()).await;
    assert_eq!(m.server_names(), Vec::<String>::new());
}

// --- 2. the startup gate, on the paused clock ---------------------------------------------------

#[tokio::test(start_paused = true)]
async fn the_gate_lets_cached_tools_stand_in_for_a_slow_server() {
    let host = Host::new();
    let fast = MemServer::new("fast", &["f1", "f2"]);
    let slow = MemServer::slow("slow", &["live1", "live2", "live3"], ms(1000));
    host.add(&fast);
    host.add(&slow);
    host.cache("slow", &["cached"]);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let t0 = Instant::now();
    let report = within(m.connect_servers(vec![fast.entry(), slow.entry()])).await;
    assert_eq!(t0.elapsed(), STARTUP_GATE);
    assert_eq!(
        report.gate,
        GateReport {
            connected: strings(&["fast"]),
            deferred: strings(&["slow"]),
            pending: vec![],
            errors: vec![],
        }
    );
    assert_eq!(
        host.of("slow"),
        vec![
            Starting("slow".into()),
            status("slow", ServerStatus::Connecting),
            Opened("slow".into(), 1),
            CacheGet("slow".into()),
            StandIn("slow".into(), strings(&["cached"])),
        ]
    );
    // The fast one was done before the gate: its cache entry is never read.
    assert!(!host.calls().contains(&CacheGet("fast".into())));
    assert_eq!(m.status("slow"), ServerStatus::Connecting);
    assert_eq!(m.pending_servers(), strings(&["slow"]));
    assert_eq!(m.connected_servers(), strings(&["fast"]));
    assert!(m.client("slow").is_none());
    assert!(m.any_client("slow").is_some());

    let client = within(m.wait_for("slow")).await.unwrap();
    assert_eq!(t0.elapsed(), ms(1000));
    assert_eq!(client.name(), "slow");
    let live = ["live1", "live2", "live3"];
    assert_eq!(
        host.of("slow")[5..],
        [
            tools("slow", &live),
            cache_set("slow", &live),
            connected_log("slow", 3),
            status("slow", ServerStatus::Connected),
        ]
    );
    assert_eq!(m.status("slow"), ServerStatus::Connected);
    assert_eq!(m.connected_servers(), strings(&["fast", "slow"]));
}

#[tokio::test(start_paused = true)]
async fn the_gate_awaits_a_slow_server_without_a_cache_entry() {
    let host = Host::new();
    let fast = MemServer::new("fast", &["f1"]);
    let slow = MemServer::slow("slow", &["s1"], ms(1000));
    host.add(&fast);
    host.add(&slow);
    host.cache("fast", &["stale"]);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let t0 = Instant::now();
    let report = within(m.connect_servers(vec![fast.entry(), slow.entry()])).await;
    assert_eq!(t0.elapsed(), ms(1000));
    assert_eq!(
        report.gate,
        GateReport {
            connected: strings(&["fast", "slow"]),
            deferred: vec![],
            pending: vec![],
            errors: vec![],
        }
    );
    assert_eq!(
        host.of("slow"),
        vec![
            Starting("slow".into()),
            status("slow", ServerStatus::Connecting),
            Opened("slow".into(), 1),
            CacheGet("slow".into()),
            tools("slow", &["s1"]),
            cache_set("slow", &["s1"]),
            connected_log("slow", 1),
            status("slow", ServerStatus::Connected),
        ]
    );
    assert_eq!(m.status("slow"), ServerStatus::Connected);
}

#[tokio::test(start_paused = true)]
async fn the_gate_awaits_a_slow_server_whose_stand_in_is_refused() {
    let host = Host::new();
    let slow = MemServer::slow("slow", &["s1"], ms(1000));
    host.add(&slow);
    host.cache("slow", &["cached"]);
    host.shared.refuse_stand_in.store(true, Ordering::Relaxed);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let t0 = Instant::now();
    let report = within(m.connect_servers(vec![slow.entry()])).await;
    assert_eq!(t0.elapsed(), ms(1000));
    assert_eq!(
        report.gate,
        GateReport {
            connected: strings(&["slow"]),
            deferred: vec![],
            pending: vec![],
            errors: vec![],
        }
    );
    assert_eq!(
        host.of("slow")[3..],
        [
            CacheGet("slow".into()),
            StandIn("slow".into(), strings(&["cached"])),
            tools("slow", &["s1"]),
            cache_set("slow", &["s1"]),
            connected_log("slow", 1),
            status("slow", ServerStatus::Connected),
        ]
    );
}

#[tokio::test(start_paused = true)]
async fn a_deferred_server_that_fails_later_is_withdrawn() {
    let host = Host::new();
    let late = MemServer::failing("late", ms(1000));
    host.add(&late);
    host.cache("late", &["cached"]);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let t0 = Instant::now();
    let report = within(m.connect_servers(vec![late.entry()])).await;
    assert_eq!(t0.elapsed(), STARTUP_GATE);
    assert_eq!(report.gate.deferred, strings(&["late"]));
    // Waiting for it gets the start's own error, when it comes.
    let err = within(m.wait_for("late")).await.unwrap_err();
    assert_eq!(t0.elapsed(), ms(1000));
    assert_eq!(err.to_string(), "initialize refused");
    assert_eq!(
        host.of("late")[4..],
        [
            StandIn("late".into(), strings(&["cached"])),
            Log(
                "late".into(),
                LogLevel::Error,
                "MCP tool load failed".into()
            ),
            Removed("late".into()),
            Status(
                "late".into(),
                ServerStatus::Disconnected,
                Some("initialize refused".into())
            ),
        ]
    );
    assert_eq!(m.status("late"), ServerStatus::Disconnected);
    assert_eq!(m.server_names(), Vec::<String>::new());
    assert!(!late.conn(0).is_open());
}

// --- 3. tools per server ------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn tools_are_handed_over_per_server_and_removal_is_exact() {
    let host = Host::new();
    let a = MemServer::new("a", &["a1", "a2"]);
    let b = MemServer::new("b", &["b1"]);
    let c = MemServer::new("c", &["c1", "c2", "c3"]);
    let d = MemServer::new("d", &["d1"]);
    for s in [&a, &b, &c, &d] {
        host.add(s);
    }
    let m = manager(&host, ManagerOptions::compat_12_7());
    let first = within(m.connect_servers(vec![a.entry(), b.entry()])).await;
    assert_eq!(first.gate.connected, strings(&["a", "b"]));
    let second = within(m.connect_servers(vec![c.entry()])).await;
    assert_eq!(second.gate.connected, strings(&["c"]));
    let expected: BTreeMap<String, Vec<Vec<String>>> = [
        ("a", vec![strings(&["a1", "a2"])]),
        ("b", vec![strings(&["b1"])]),
        ("c", vec![strings(&["c1", "c2", "c3"])]),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_owned(), v))
    .collect();
    assert_eq!(host.tools_by_server(), expected);
    // Each server's tools come with that server's own client.
    for (server, client) in host.shared.tool_clients.lock().unwrap().iter() {
        assert_eq!(server, client);
    }
    assert_eq!(m.connected_servers(), strings(&["a", "b", "c"]));

    let mark = host.mark();
    within(m.disconnect("b")).await;
    assert_eq!(
        host.since(mark),
        [Removed("b".into()), status("b", ServerStatus::Disconnected)]
    );
    assert!(!b.conn(0).is_open());
    assert!(a.conn(0).is_open() && c.conn(0).is_open());
    assert_eq!(m.connected_servers(), strings(&["a", "c"]));
    assert_eq!(m.status("b"), ServerStatus::Disconnected);
    assert!(m.client("b").is_none());
    assert_eq!(m.status("a"), ServerStatus::Connected);

    // A connected server is reported, not started again.
    let mark = host.mark();
    let again = within(m.connect_servers(vec![a.entry(), d.entry()])).await;
    assert_eq!(
        again.start,
        StartReport {
            started: strings(&["d"]),
            connected: strings(&["a"]),
            errors: vec![],
            ..StartReport::default()
        }
    );
    assert_eq!(again.gate.connected, strings(&["d"]));
    assert_eq!(a.connections(), 1);
    assert_eq!(a.count("initialize"), 1);
    assert!(host.since(mark).iter().all(|c| c.server() == "d"));
    assert_eq!(m.connected_servers(), strings(&["a", "c", "d"]));
}

#[tokio::test]
async fn fixture_servers_are_tracked_per_name_and_not_restarted() {
    let host = Host::new();
    let m = manager(&host, real_options());
    let (mk_fast, mk_a, mk_ab) = (marker("fast-srv"), marker("first"), marker("second"));
    let first = within(m.connect_servers(vec![
        entry("Fast-Srv", fixture(&[&mk_fast])),
        entry("a", fixture(&[&mk_a])),
    ]))
    .await;
    assert_eq!(first.gate.connected, strings(&["Fast-Srv", "a"]));
    let second = within(m.connect_servers(vec![entry("a_b", fixture(&[&mk_ab]))])).await;
    assert_eq!(second.gate.connected, strings(&["a_b"]));
    let six = vec![strings(&FIXTURE_TOOLS)];
    let expected: BTreeMap<String, Vec<Vec<String>>> = ["Fast-Srv", "a", "a_b"]
        .into_iter()
        .map(|k| (k.to_owned(), six.clone()))
        .collect();
    assert_eq!(host.tools_by_server(), expected);
    let pid = pid_of(&m.client("a_b").unwrap()).await;

    let mark = host.mark();
    within(m.disconnect("Fast-Srv")).await;
    assert_eq!(
        host.since(mark),
        [
            Removed("Fast-Srv".into()),
            status("Fast-Srv", ServerStatus::Disconnected)
        ]
    );
    // Closed and reaped before disconnect returns; the others live on.
    assert_eq!(processes_with(&mk_fast), Vec::<i32>::new());
    assert_eq!(processes_with(&mk_a).len(), 1);
    assert_eq!(processes_with(&mk_ab).len(), 1);
    assert_eq!(m.connected_servers(), strings(&["a", "a_b"]));

    let mark = host.mark();
    let again = within(m.connect_servers(vec![entry("a_b", fixture(&[&mk_ab]))])).await;
    assert_eq!(
        again.start,
        StartReport {
            started: vec![],
            connected: strings(&["a_b"]),
            errors: vec![],
            ..StartReport::default()
        }
    );
    assert_eq!(again.gate, GateReport::default());
    assert_eq!(host.since(mark), vec![]);
    assert_eq!(pid_of(&m.client("a_b").unwrap()).await, pid);
    assert_eq!(processes_with(&mk_ab).len(), 1);

    within(m.disconnect_all()).await;
    assert_eq!(processes_with(&mk_a), Vec::<i32>::new());
    assert_eq!(processes_with(&mk_ab), Vec::<i32>::new());
    assert_eq!(m.server_names(), Vec::<String>::new());
}

// --- 4. refresh -------------------------------------------------------------------------------

#[tokio::test]
async fn refresh_lists_again_errors_propagate_and_refresh_all_logs_them() {
    let host = Host::new();
    // `set-tools` also announces list_changed: a debounce longer than the test keeps that
    // refresh out of the way (the debounce is its own test).
    let m = manager(
        &host,
        ManagerOptions {
            refresh_debounce: Duration::from_secs(3600),
            ..real_options()
        },
    );
    let report =
        within(m.connect_servers(vec![entry("r", fixture(&[])), entry("s", fixture(&[]))])).await;
    assert_eq!(report.gate.connected, strings(&["r", "s"]));
    let (r, s) = (m.client("r").unwrap(), m.client("s").unwrap());
    let _: Value = within(r.request("set-tools", &json!({ "names": ["fresh"] })))
        .await
        .unwrap();
    let mark = host.mark();
    within(m.refresh("r")).await.unwrap();
    assert_eq!(
        host.since(mark),
        [tools("r", &["fresh"]), cache_set("r", &["fresh"])]
    );

    // An error propagates; the host hears nothing.
    let _: Value = within(r.request("fail-tools-list", &json!({})))
        .await
        .unwrap();
    let mark = host.mark();
    let err = within(m.refresh("r")).await.unwrap_err();
    assert_eq!(err.to_string(), "MCP error -32000: list failed");
    assert_eq!(host.since(mark), vec![]);

    // refresh_all: r's failure is logged, s is refreshed all the same.
    let _: Value = within(s.request("set-tools", &json!({ "names": ["s1", "s2"] })))
        .await
        .unwrap();
    let mark = host.mark();
    within(m.refresh_all()).await;
    let mut after = host.since(mark);
    after.sort_by(|x, y| x.server().cmp(y.server()));
    assert_eq!(
        after,
        [
            Log(
                "r".into(),
                LogLevel::Error,
                r#"MCP server "r": refreshing tools failed: MCP error -32000: list failed"#.into()
            ),
            tools("s", &["s1", "s2"]),
            cache_set("s", &["s1", "s2"]),
        ]
    );
    // Both stay connected.
    assert_eq!(m.connected_servers(), strings(&["r", "s"]));
    within(m.disconnect_all()).await;
}

// --- 5. the list_changed debounce -------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn list_changed_is_debounced_per_server() {
    let host = Host::new();
    let s = MemServer::new("s", &["t1"]);
    let quiet = MemServer::new("quiet", &["q1"]);
    host.add(&s);
    host.add(&quiet);
    let m = manager(&host, ManagerOptions::compat_12_7());
    within(m.connect_servers(vec![s.entry(), quiet.entry()])).await;
    assert_eq!(s.count("tools/list"), 1);
    let conn = s.conn(0);
    let t0 = Instant::now();
    // A burst: three notifications 100 ms apart → one refresh, a window after the last.
    s.set_tools(&["t1", "t2"]);
    conn.list_changed();
    tokio::time::sleep(ms(100)).await;
    conn.list_changed();
    tokio::time::sleep(ms(100)).await;
    conn.list_changed();
    tokio::time::sleep_until(t0 + ms(200) + LIST_CHANGED_DEBOUNCE - ms(1)).await;
    assert_eq!(s.count("tools/list"), 1);
    tokio::time::sleep(ms(2)).await;
    assert_eq!(s.count("tools/list"), 2);
    assert_eq!(s.times("tools/list")[1] - t0, ms(500));
    assert_eq!(
        host.tools_by_server()["s"],
        [strings(&["t1"]), strings(&["t1", "t2"])]
    );
    assert_eq!(host.of("s").last(), Some(&cache_set("s", &["t1", "t2"])));

    // Two notifications further apart than the window → two refreshes.
    let t1 = t0 + ms(1000);
    tokio::time::sleep_until(t1).await;
    s.set_tools(&["t3"]);
    conn.list_changed();
    tokio::time::sleep_until(t1 + ms(400)).await;
    conn.list_changed();
    tokio::time::sleep_until(t1 + ms(2000)).await;
    let times: Vec<Duration> = s.times("tools/list")[2..].iter().map(|t| *t - t1).collect();
    assert_eq!(times, [ms(300), ms(700)]);
    assert_eq!(host.tools_by_server()["s"].len(), 4);
    // The other server was left alone.
    assert_eq!(quiet.count("tools/list"), 1);
    assert_eq!(host.tools_by_server()["quiet"].len(), 1);
}

// --- 6. disconnect while connecting -----------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn disconnect_while_connecting_closes_the_late_connection() {
    let host = Host::new();
    let slow = MemServer::slow("slow", &["t"], ms(1000));
    host.add(&slow);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let t0 = Instant::now();
    let pending = tokio::spawn({
        let (m, e) = (m.clone(), slow.entry());
        async move { m.connect_servers(vec![e]).await }
    });
    tokio::time::sleep(ms(100)).await;
    assert_eq!(m.status("slow"), ServerStatus::Connecting);
    assert_eq!(m.pending_servers(), strings(&["slow"]));
    assert_eq!(slow.count("initialize"), 1);
    // Starting already: a second start skips it (neither connected nor refused, nothing opened).
    assert_eq!(m.start(vec![slow.entry()]), StartReport::default());
    assert_eq!(slow.connections(), 1);

    within(m.disconnect("slow")).await;
    assert!(!slow.conn(0).is_open());
    let report = within(pending).await.unwrap();
    // The gate returned as soon as the start ended, not at the gate or the late answer.
    assert_eq!(t0.elapsed(), ms(100));
    assert_eq!(report.gate.connected, Vec::<String>::new());
    assert_eq!(report.gate.deferred, Vec::<String>::new());
    // Past the time the server would have answered: nothing more happens.
    tokio::time::sleep(ms(2000)).await;
    assert_eq!(
        host.of("slow"),
        vec![
            Starting("slow".into()),
            status("slow", ServerStatus::Connecting),
            Opened("slow".into(), 1),
            Removed("slow".into()),
            status("slow", ServerStatus::Disconnected),
        ]
    );
    assert_eq!(slow.connections(), 1);
    assert_eq!(slow.count("tools/list"), 0);
    assert_eq!(m.status("slow"), ServerStatus::Disconnected);
    assert!(m.client("slow").is_none());
    assert_eq!(m.server_names(), Vec::<String>::new());
    let err = within(m.wait_for("slow")).await.unwrap_err();
    assert_eq!(err.to_string(), "MCP server not connected: slow");
}

/// The gate reports what failed; a server its owner disconnected did not fail.
#[tokio::test(start_paused = true)]
async fn a_server_disconnected_while_connecting_is_not_reported_as_failed() {
    let host = Host::new();
    let slow = MemServer::slow("slow", &["t"], ms(1000));
    host.add(&slow);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let pending = tokio::spawn({
        let (m, e) = (m.clone(), slow.entry());
        async move { m.connect_servers(vec![e]).await }
    });
    tokio::time::sleep(ms(100)).await;
    within(m.disconnect("slow")).await;
    let report = within(pending).await.unwrap();
    assert_eq!(report.gate, GateReport::default());
}

/// Disconnected while its owner still prepares the config (the start ends after the gate): the
/// gate neither reports it failed nor asks the cache about a server it no longer holds (it asks
/// with a `null` config today).
#[tokio::test(start_paused = true)]
async fn the_gate_forgets_a_server_disconnected_while_its_config_is_prepared() {
    let host = Host::new();
    *host.shared.prepare_delay.lock().unwrap() = Some(ms(500));
    let s = MemServer::new("s", &["t"]);
    host.add(&s);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let pending = tokio::spawn({
        let (m, e) = (m.clone(), s.entry());
        async move { m.connect_servers(vec![e]).await }
    });
    tokio::time::sleep(ms(100)).await;
    within(m.disconnect("s")).await;
    let report = within(pending).await.unwrap();
    assert!(
        !host.calls().contains(&CacheGet("s".into())),
        "{:?}",
        host.of("s")
    );
    assert_eq!(report.gate, GateReport::default());
}

#[tokio::test]
async fn disconnect_while_connecting_ends_the_child_process() {
    let host = Host::new();
    let m = manager(&host, real_options());
    let mk = marker("slow");
    let config = fixture(&["--init-delay-ms=5000", &mk]);
    let pending = tokio::spawn({
        let (m, config) = (m.clone(), config.clone());
        async move { m.connect_servers(vec![entry("slow", config)]).await }
    });
    host.until_call(Opened("slow".into(), 1)).await;
    assert_eq!(m.status("slow"), ServerStatus::Connecting);
    assert_eq!(processes_with(&mk).len(), 1);
    // Starting already: skipped, nothing spawned.
    assert_eq!(m.start(vec![entry("slow", config)]), StartReport::default());
    assert_eq!(processes_with(&mk).len(), 1);
    within(m.disconnect("slow")).await;
    assert_eq!(processes_with(&mk), Vec::<i32>::new());
    let report = within(pending).await.unwrap();
    assert_eq!(report.gate.connected, Vec::<String>::new());
    assert_eq!(m.status("slow"), ServerStatus::Disconnected);
    assert!(m.any_client("slow").is_none());
    assert!(!host.of("slow").iter().any(|c| matches!(c, Tools(..))));
    let err = within(m.wait_for("slow")).await.unwrap_err();
    assert_eq!(err.to_string(), "MCP server not connected: slow");
}

#[tokio::test(start_paused = true)]
async fn disconnect_while_the_owner_prepares_the_config_opens_nothing() {
    let host = Host::new();
    *host.shared.prepare_delay.lock().unwrap() = Some(ms(500));
    let s = MemServer::new("s", &["t"]);
    host.add(&s);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let pending = tokio::spawn({
        let (m, e) = (m.clone(), s.entry());
        async move { m.connect_servers(vec![e]).await }
    });
    tokio::time::sleep(ms(100)).await;
    assert_eq!(m.status("s"), ServerStatus::Connecting);
    within(m.disconnect("s")).await;
    let report = within(pending).await.unwrap();
    assert_eq!(report.gate.connected, Vec::<String>::new());
    tokio::time::sleep(ms(2000)).await;
    assert_eq!(s.connections(), 0);
    // (The gate's cache_get for it is the subject of the ignored test above.)
    let calls: Vec<Call> = host
        .of("s")
        .into_iter()
        .filter(|c| !matches!(c, CacheGet(_)))
        .collect();
    assert_eq!(
        calls,
        vec![
            Starting("s".into()),
            status("s", ServerStatus::Connecting),
            Removed("s".into()),
            status("s", ServerStatus::Disconnected),
        ]
    );
    assert_eq!(m.status("s"), ServerStatus::Disconnected);
}

/// The host is still taking the tools (`ManagerHost::tools` pending) when its owner disconnects
/// the server: the manager must not report it connected (nor cache its tools) afterwards.
#[tokio::test(start_paused = true)]

async fn disconnect_while_the_host_takes_the_tools_leaves_it_disconnected() {
    let host = Host::new();
    let s = MemServer::new("s", &["t"]);
    host.add(&s);
    let (release, hold) = oneshot::channel();
    host.shared
        .hold_tools
        .lock()
        .unwrap()
        .insert("s".into(), hold);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let pending = tokio::spawn({
        let (m, e) = (m.clone(), s.entry());
        async move { m.connect_servers(vec![e]).await }
    });
    host.until_call(tools("s", &["t"])).await;
    within(m.disconnect("s")).await;
    assert!(!s.conn(0).is_open());
    release.send(()).unwrap();
    let report = within(pending).await.unwrap();
    assert_eq!(report.gate.connected, Vec::<String>::new());
    tokio::time::sleep(ms(1000)).await;
    assert_eq!(m.status("s"), ServerStatus::Disconnected);
    assert_eq!(
        host.statuses("s").last(),
        Some(&ServerStatus::Disconnected),
        "{:?}",
        host.of("s")
    );
    assert!(
        !host.calls().contains(&cache_set("s", &["t"])),
        "{:?}",
        host.of("s")
    );
}

// --- 7. reconnect -----------------------------------------------------------------------------

fn reconnecting(max_attempts: u32) -> ManagerOptions {
    ManagerOptions {
        client: ClientOptions {
            reconnect: Some(ReconnectPolicy {
                max_attempts,
                initial_delay: ms(100),
                max_delay: ms(1000),
            }),
            ..ClientOptions::default()
        },
        ..ManagerOptions::compat_12_7()
    }
}

#[tokio::test(start_paused = true)]
async fn a_dropped_server_reconnects_and_its_tools_are_refreshed() {
    let host = Host::new();
    let k = MemServer::new("k", &["k1"]);
    host.add(&k);
    let m = manager(&host, reconnecting(3));
    within(m.connect_servers(vec![k.entry()])).await;
    let client = m.client("k").unwrap();
    k.set_tools(&["k1", "k2"]);
    let mark = host.mark();
    let t0 = Instant::now();
    k.conn(0).die();
    assert_eq!(m.status("k"), ServerStatus::Connecting);
    assert_eq!(host.since(mark), [status("k", ServerStatus::Connecting)]);
    assert!(m.client("k").is_some());
    host.until_call(cache_set("k", &["k1", "k2"])).await;
    assert_eq!(t0.elapsed(), ms(100));
    assert_eq!(
        host.since(mark),
        [
            status("k", ServerStatus::Connecting),
            Opened("k".into(), 2),
            status("k", ServerStatus::Connected),
            tools("k", &["k1", "k2"]),
            cache_set("k", &["k1", "k2"]),
        ]
    );
    assert_eq!(m.status("k"), ServerStatus::Connected);
    assert_eq!(m.connected_servers(), strings(&["k"]));
    assert_eq!(k.connections(), 2);
    assert_eq!(k.count("tools/list"), 2);
    assert!(k.conn(1).is_open());
    // The same client, on its second connection.
    assert_eq!(client.generation(), 2);
    assert_eq!(m.client("k").unwrap().generation(), 2);
}

#[tokio::test(start_paused = true)]
async fn a_dropped_server_without_reconnect_is_removed() {
    let host = Host::new();
    let k = MemServer::new("k", &["k1"]);
    let other = MemServer::new("other", &["o1"]);
    host.add(&k);
    host.add(&other);
    let m = manager(&host, ManagerOptions::compat_12_7());
    within(m.connect_servers(vec![k.entry(), other.entry()])).await;
    let mark = host.mark();
    k.conn(0).die();
    let after = host.since(mark);
    assert_eq!(after.len(), 2, "{after:?}");
    assert_eq!(after[0], Removed("k".into()));
    assert!(
        matches!(&after[1], Status(s, ServerStatus::Disconnected, _) if s == "k"),
        "{after:?}"
    );
    assert_eq!(m.status("k"), ServerStatus::Disconnected);
    assert_eq!(m.server_names(), strings(&["other"]));
    assert!(m.client("k").is_none());
    let err = within(m.wait_for("k")).await.unwrap_err();
    assert_eq!(err.to_string(), "MCP server not connected: k");
    // No retry loop.
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(k.connections(), 1);
    assert_eq!(host.since(mark).len(), 2);
    assert_eq!(m.status("other"), ServerStatus::Connected);
}

#[tokio::test(start_paused = true)]
async fn a_reconnect_that_gives_up_removes_the_server() {
    let host = Host::new();
    let k = MemServer::new("k", &["k1"]);
    host.add(&k);
    let m = manager(&host, reconnecting(3));
    within(m.connect_servers(vec![k.entry()])).await;
    k.refuse.store(true, Ordering::Relaxed);
    let mark = host.mark();
    let t0 = Instant::now();
    k.conn(0).die();
    // `Removed` comes first, then the status: wait for the last of them.
    host.until_status("k", ServerStatus::Disconnected).await;
    // Attempts at 100, 100 + 200, 300 + 400.
    assert_eq!(t0.elapsed(), ms(700));
    assert_eq!(
        host.since(mark),
        [
            status("k", ServerStatus::Connecting),
            Removed("k".into()),
            Status(
                "k".into(),
                ServerStatus::Disconnected,
                Some("k refused".into())
            ),
        ]
    );
    assert_eq!(m.status("k"), ServerStatus::Disconnected);
    assert_eq!(m.server_names(), Vec::<String>::new());
    assert_eq!(k.connections(), 1);
}

#[tokio::test]
async fn a_crashed_fixture_comes_back_with_reconnect_and_is_removed_without() {
    let options = ManagerOptions {
        client: ClientOptions {
            reconnect: Some(ReconnectPolicy {
                max_attempts: 3,
                initial_delay: ms(50),
                max_delay: ms(200),
            }),
            ..ClientOptions::default()
        },
        ..real_options()
    };
    let host = Host::new();
    let m = manager(&host, options);
    within(m.connect_servers(vec![entry("k", fixture(&[]))])).await;
    let client = m.client("k").unwrap();
    let pid = pid_of(&client).await;
    let crash = within(client.request::<Value>("crash", &json!({ "code": 1 })))
        .await
        .unwrap_err();
    assert_eq!(crash.to_string(), "Transport closed");
    host.until(|calls| calls.iter().filter(|c| matches!(c, Tools(..))).count() == 2)
        .await;
    assert_eq!(
        host.statuses("k"),
        [
            ServerStatus::Connecting,
            ServerStatus::Connected,
            ServerStatus::Connecting,
            ServerStatus::Connected
        ]
    );
    assert_eq!(
        host.tools_by_server()["k"],
        [strings(&FIXTURE_TOOLS), strings(&FIXTURE_TOOLS)]
    );
    assert_ne!(pid_of(&m.client("k").unwrap()).await, pid);
    within(m.disconnect_all()).await;

    let host = Host::new();
    let m = manager(&host, real_options());
    let mk = marker("crash");
    within(m.connect_servers(vec![entry("k", fixture(&[&mk]))])).await;
    let client = m.client("k").unwrap();
    let _ = within(client.request::<Value>("crash", &json!({ "code": 1 }))).await;
    // `Removed` comes first, then the status: wait for the last of them.
    host.until_status("k", ServerStatus::Disconnected).await;
    assert!(host.calls().contains(&Removed("k".into())));
    assert_eq!(
        host.statuses("k"),
        [
            ServerStatus::Connecting,
            ServerStatus::Connected,
            ServerStatus::Disconnected
        ]
    );
    assert_eq!(m.status("k"), ServerStatus::Disconnected);
    assert_eq!(m.server_names(), Vec::<String>::new());
    assert_eq!(processes_with(&mk), Vec::<i32>::new());
}

// --- 8. wait_for ------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn wait_for_is_immediate_waits_for_a_start_or_fails() {
    let host = Host::new();
    let fast = MemServer::new("fast", &["f"]);
    let late = MemServer::slow("late", &["l"], ms(500));
    let bad = MemServer::failing("bad", ms(300));
    for s in [&fast, &late, &bad] {
        host.add(s);
    }
    let m = manager(&host, ManagerOptions::compat_12_7());
    let err = within(m.wait_for("nobody")).await.unwrap_err();
    assert_eq!(err.to_string(), "MCP server not connected: nobody");
    assert_eq!(m.status("nobody"), ServerStatus::Disconnected);

    within(m.connect_servers(vec![fast.entry()])).await;
    let t0 = Instant::now();
    let client = within(m.wait_for("fast")).await.unwrap();
    assert_eq!(t0.elapsed(), Duration::ZERO);
    assert_eq!(client.name(), "fast");

    let started = m.start(vec![late.entry(), bad.entry()]);
    assert_eq!(started.started, strings(&["late", "bad"]));
    let timed = |name: &'static str| {
        let m = m.clone();
        async move {
            let outcome = m.wait_for(name).await;
            (outcome, t0.elapsed())
        }
    };
    let ((l, l_at), (b, b_at)) = within(futures::future::join(timed("late"), timed("bad"))).await;
    assert_eq!(l.unwrap().name(), "late");
    assert_eq!(l_at, ms(500));
    assert_eq!(b.unwrap_err().to_string(), "initialize refused");
    assert_eq!(b_at, ms(300));
    assert!(m.client("late").is_some());
    let err = within(m.wait_for("bad")).await.unwrap_err();
    assert_eq!(err.to_string(), "MCP server not connected: bad");
}

// --- the gate's report of servers that settled before it looked -------------------------------

/// `start` then `gate` (the binding calls them separately, with JavaScript in between): servers
/// that settled before `gate` ran must still be reported.
#[tokio::test(start_paused = true)]

async fn gate_reports_servers_that_settled_before_it_looked() {
    let host = Host::new();
    let fast = MemServer::new("fast", &["f"]);
    host.add(&fast);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let start = m.start(vec![
        fast.entry(),
        entry("broken", json!({ "command": BROKEN })),
    ]);
    assert_eq!(start.started, strings(&["fast", "broken"]));
    host.until(|c| {
        c.contains(&Removed("broken".into()))
            && c.contains(&status("fast", ServerStatus::Connected))
    })
    .await;
    let gate = within(m.gate(&start.started)).await;
    assert_eq!(
        gate,
        GateReport {
            connected: strings(&["fast"]),
            deferred: vec![],
            pending: vec![],
            errors: vec![("broken".into(), Error::Io(ENOENT.into()))],
        }
    );
}

/// The same through `connect_servers` on a multi-thread runtime: a start that fails on a worker
/// while `start` is still starting the next server is gone before the gate looks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]

async fn connect_servers_on_a_multi_thread_runtime_reports_an_early_failure() {
    let host = Host::new();
    let last = MemServer::new("last", &["l"]);
    host.add(&last);
    // Starting `last` (inside `start`) waits until `broken` has failed on a worker.
    *host.shared.block_starting.lock().unwrap() = Some(("last".into(), "broken".into()));
    let m = manager(&host, ManagerOptions::compat_12_7());
    let report = within(m.connect_servers(vec![
        entry("broken", json!({ "command": BROKEN })),
        last.entry(),
    ]))
    .await;
    assert_eq!(report.start.started, strings(&["broken", "last"]));
    assert_eq!(report.gate.connected, strings(&["last"]));
    let errors: Vec<(String, String)> = report
        .gate
        .errors
        .iter()
        .map(|(n, e)| (n.clone(), e.to_string()))
        .collect();
    assert_eq!(errors, vec![("broken".to_owned(), ENOENT.to_owned())]);
}
