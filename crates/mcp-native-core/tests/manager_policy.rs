//! The Rust manager as the agent ships it today (18.3.4, SPEC 11.4, `ManagerOptions::default()`):
//! the startup window that leaves uncached servers to finish in the background, the startup
//! barriers, the reconnect ladder, the crash-storm breaker, the quiet retries of a lost remote
//! server, and the connection status events in the agent's order — all on tokio's paused clock
//! against the in-memory servers of the kit, so that every time asserted is exact. Tests named
//! after an agent CHANGELOG entry are SPEC 11.5's.
#![cfg(unix)]
// the kit's fixture helpers; the policy itself is platform-free
// The kit is shared with `manager.rs`: what this file leaves unused of it is that file's.
#![allow(dead_code, unused_imports)]

mod common;
use common::processes_with;

include!("kit/manager.rs");

use mcp_native_core::manager::{BREAKER_MESSAGE, ReconnectSchedule, StartupStatus};

fn connecting(servers: &[&str]) -> ConnectionEvent {
    ConnectionEvent::Connecting {
        servers: strings(servers),
    }
}

fn connected(server: &str) -> ConnectionEvent {
    ConnectionEvent::Connected {
        server: server.into(),
    }
}

fn reconnecting_event(server: &str) -> ConnectionEvent {
    ConnectionEvent::Reconnecting {
        server: server.into(),
    }
}

fn failed(server: &str, error: &str) -> ConnectionEvent {
    ConnectionEvent::Failed {
        server: server.into(),
        error: error.into(),
    }
}

/// Waits (bounded) until `event` was told `n` times.
async fn until_nth(host: &Host, event: ConnectionEvent, n: usize) {
    let mut seq = host.shared.seq.subscribe();
    within(async {
        loop {
            if host.events().iter().filter(|e| **e == event).count() >= n {
                return;
            }
            seq.changed().await.unwrap();
        }
    })
    .await;
}

/// The `failed` events told so far.
fn failures(host: &Host) -> Vec<ConnectionEvent> {
    host.events()
        .into_iter()
        .filter(|e| matches!(e, ConnectionEvent::Failed { .. }))
        .collect()
}

fn offsets(list: &[u64]) -> Vec<Duration> {
    list.iter().map(|n| ms(*n)).collect()
}

/// When `server`'s connections after its first were asked for, as offsets from `t0`.
fn retries(server: &MemServer, t0: Instant) -> Vec<Duration> {
    server.attempts_since(t0)[1..].to_vec()
}

/// A server connected under the default (18.3.4) options.
async fn connected_manager(host: &Arc<Host>, server: &Arc<MemServer>, remote: bool) -> Manager {
    host.add(server);
    let m = manager(host, ManagerOptions::default());
    let entry = if remote {
        server.remote_entry()
    } else {
        server.entry()
    };
    let report = within(m.connect_servers(vec![entry])).await;
    assert_eq!(report.gate.connected, strings(&[&server.name]));
    m
}

/// Server `s` connected (remote or stdio), then refusing new connections, then its connection
/// dropped at `t0`.
async fn dropped_and_refused(remote: bool) -> (Arc<Host>, Arc<MemServer>, Manager, Instant) {
    let host = Host::new();
    let s = MemServer::new("s", &["t1"]);
    let m = connected_manager(&host, &s, remote).await;
    s.refuse.store(true, Ordering::Relaxed);
    let t0 = Instant::now();
    s.conn(0).die();
    (host, s, m, t0)
}

// --- the startup window -------------------------------------------------------------------------

/// 15.10.7 (one unresponsive server blocked startup), 17.1.0 (tools finishing after the window
/// are added), 18.3.0 (print mode's `waitForStartup` reports slow servers).
#[tokio::test(start_paused = true)]
async fn startup_is_not_blocked_by_an_uncached_unresponsive_server() {
    let host = Host::new();
    let fast = MemServer::new("fast", &["f1"]);
    let slow = MemServer::slow("slow", &["s1", "s2"], ms(4000));
    host.add(&fast);
    host.add(&slow);
    let m = manager(&host, ManagerOptions::default());
    let t0 = Instant::now();
    let report = within(m.connect_servers(vec![fast.entry(), slow.entry()])).await;
    assert_eq!(t0.elapsed(), STARTUP_GATE);
    assert_eq!(
        report.gate,
        GateReport {
            connected: strings(&["fast"]),
            deferred: vec![],
            pending: strings(&["slow"]),
            errors: vec![],
        }
    );
    assert_eq!(m.status("slow"), ServerStatus::Connecting);
    assert_eq!(m.pending_servers(), strings(&["slow"]));

    let st = within(m.wait_for_startup(Some(ms(1000)))).await;
    assert_eq!(t0.elapsed(), ms(1250));
    assert_eq!(
        st,
        StartupStatus {
            connected: strings(&["fast"]),
            pending: strings(&["slow"]),
            failed: vec![],
        }
    );

    // It finishes in the background: its tools go to the owner, `connected` is told.
    let st = within(m.wait_for_startup(None)).await;
    assert_eq!(t0.elapsed(), ms(4000));
    assert_eq!(st.connected, strings(&["fast", "slow"]));
    assert_eq!(st.pending, Vec::<String>::new());
    assert_eq!(
        host.of("slow")[3..],
        [
            CacheGet("slow".into()),
            tools("slow", &["s1", "s2"]),
            cache_set("slow", &["s1", "s2"]),
            connected_log("slow", 2),
            status("slow", ServerStatus::Connected),
        ]
    );
    assert_eq!(
        host.events(),
        [
            connecting(&["fast", "slow"]),
            connected("fast"),
            connected("slow")
        ]
    );
}

/// 18.3.4 `startupTimeoutMs: 0`: no window, every server awaited.
#[tokio::test(start_paused = true)]
async fn a_window_of_none_waits_for_every_server() {
    let host = Host::new();
    let slow = MemServer::slow("slow", &["s1"], ms(4000));
    host.add(&slow);
    let m = manager(&host, ManagerOptions::default());
    let t0 = Instant::now();
    let started = m.start(vec![slow.entry()]).started;
    let gate = within(m.gate_within(&started, None)).await;
    assert_eq!(t0.elapsed(), ms(4000));
    assert_eq!(gate.connected, strings(&["slow"]));
    assert_eq!(gate.pending, Vec::<String>::new());
}

#[tokio::test(start_paused = true)]
async fn wait_for_pending_returns_once_the_background_starts_settled() {
    let host = Host::new();
    let slow = MemServer::slow("slow", &["s1"], ms(4000));
    let broken = MemServer::failing("broken", ms(2000));
    host.add(&slow);
    host.add(&broken);
    let m = manager(&host, ManagerOptions::default());
    let t0 = Instant::now();
    within(m.connect_servers(vec![slow.entry(), broken.entry()])).await;
    within(m.wait_for_pending()).await;
    assert_eq!(t0.elapsed(), ms(4000));
    assert_eq!(m.connected_servers(), strings(&["slow"]));
    assert_eq!(
        within(m.wait_for_startup(Some(ms(1)))).await.failed,
        vec![("broken".to_owned(), "initialize refused".to_owned())]
    );
}

/// Validation failures are announced with the others, then failed; the startup status keeps
/// them.
#[tokio::test(start_paused = true)]
async fn validation_failures_are_announced_then_failed() {
    let host = Host::new();
    let good = MemServer::new("good", &["g1"]);
    host.add(&good);
    let m = manager(&host, ManagerOptions::default());
    let report =
        within(m.connect_servers(vec![entry("bad", json!({ "type": "http" })), good.entry()]))
            .await;
    let message = "Server \"bad\": http server requires \"url\" field";
    assert_eq!(
        report.start.errors,
        vec![("bad".to_owned(), message.to_owned())]
    );
    assert_eq!(
        host.events(),
        [
            connecting(&["bad", "good"]),
            failed("bad", message),
            connected("good")
        ]
    );
    let st = within(m.wait_for_startup(Some(ms(10)))).await;
    assert_eq!(st.connected, strings(&["good"]));
    assert_eq!(st.failed, vec![("bad".to_owned(), message.to_owned())]);
    // A failed start keeps its config for a later reconnect (`getServerConfig`).
    assert!(m.known_config("good").is_some());
    assert!(m.known_config("bad").is_none());
}

/// 18.1.5: a transient startup handshake timeout leads to a reconnect.
#[tokio::test(start_paused = true)]
async fn a_start_that_times_out_in_its_handshake_is_reconnected() {
    let host = Host::new();
    let s = MemServer::slow("s", &["t1"], ms(60_000));
    s.fast_from.store(1, Ordering::Relaxed);
    host.add(&s);
    let m = manager(&host, ManagerOptions::default());
    let t0 = Instant::now();
    let report = within(m.connect_servers(vec![s.entry()])).await;
    assert_eq!(report.gate.pending, strings(&["s"]));
    let call = Some(report.start.call);
    // Waiting for the start gets its error, as 18.3.4's `waitForConnection` does…
    let timeout = "Connection to MCP server \"s\" timed out after 5000ms";
    let err = within(m.wait_for("s")).await.unwrap_err();
    assert_eq!(err.to_string(), timeout);
    // …and the reconnect follows at once.
    until_nth(&host, connected("s"), 1).await;
    assert_eq!(t0.elapsed(), ms(5000));
    assert_eq!(within(m.wait_for("s")).await.unwrap().name(), "s");
    assert_eq!(
        host.events(),
        [
            connecting(&["s"]),
            failed("s", timeout),
            reconnecting_event("s"),
            connected("s")
        ]
    );
    // All of them the call's: its own listener hears the retry through (18.3.4 forwards the
    // retry's outcome to the call's `onStatus`).
    assert!(host.event_calls().iter().all(|(_, c)| *c == call));
    assert_eq!(s.connections(), 2);
    let st = within(m.wait_for_startup(None)).await;
    assert_eq!(st.connected, strings(&["s"]));
    assert_eq!(st.failed, vec![]);
}

// --- reconnects ---------------------------------------------------------------------------------

#[tokio::test(start_paused = true)]
async fn a_dropped_server_reconnects_at_once_and_keeps_its_tools() {
    let host = Host::new();
    let s = MemServer::new("s", &["t1"]);
    let m = connected_manager(&host, &s, false).await;
    let mark = host.mark();
    let t0 = Instant::now();
    s.set_tools(&["t1", "t2"]);
    s.conn(0).die();
    until_nth(&host, connected("s"), 2).await;
    assert_eq!(t0.elapsed(), Duration::ZERO);
    assert_eq!(
        host.since(mark),
        [
            Log(
                "s".into(),
                LogLevel::Debug,
                "MCP transport lost, triggering reconnect".into()
            ),
            status("s", ServerStatus::Connecting),
            Starting("s".into()),
            Opened("s".into(), 1),
            tools("s", &["t1", "t2"]),
            cache_set("s", &["t1", "t2"]),
            connected_log("s", 2),
            status("s", ServerStatus::Connected),
        ]
    );
    // A drop's reconnect is no call's.
    assert_eq!(
        host.event_calls()[2..],
        [(reconnecting_event("s"), None), (connected("s"), None)]
    );
    assert_eq!(s.connections(), 2);
    assert_eq!(m.status("s"), ServerStatus::Connected);
}

#[tokio::test(start_paused = true)]
async fn a_reconnect_climbs_the_ladder_then_fails_and_keeps_the_tools() {
    let (host, s, m, t0) = dropped_and_refused(false).await;
    host.until(|calls| {
        calls.contains(&Status(
            "s".into(),
            ServerStatus::Disconnected,
            Some("s refused".into()),
        ))
    })
    .await;
    assert_eq!(t0.elapsed(), ms(7500));
    assert_eq!(retries(&s, t0), offsets(&[0, 500, 1500, 3500, 7500]));
    assert_eq!(failures(&host), [failed("s", "s refused")]);
    // The tools stay with the owner; the config stays for a later reconnect.
    assert!(!host.calls().contains(&Removed("s".into())));
    assert_eq!(m.status("s"), ServerStatus::Disconnected);
    assert!(m.known_config("s").is_some());
    // A stdio server stops at the ladder.
    tokio::time::sleep(Duration::from_secs(600)).await;
    assert_eq!(retries(&s, t0).len(), 5);
    // A manual reconnect brings it back; begun at the call: the server reads `connecting` before
    // the outcome is awaited (18.3.4's reconnectServer marks it at once).
    s.refuse.store(false, Ordering::Relaxed);
    let reconnecting = m.begin_reconnect("s", true);
    assert_eq!(m.status("s"), ServerStatus::Connecting);
    let client = within(reconnecting).await;
    assert!(client.is_some());
    assert_eq!(m.status("s"), ServerStatus::Connected);
    assert_eq!(host.events().last(), Some(&connected("s")));
}

/// 15.7.5: a server that connects and exits again and again is not restarted forever.
#[tokio::test(start_paused = true)]
async fn the_reconnect_storm_breaker_stops_reconnects_and_a_manual_reconnect_resets_it() {
    let host = Host::new();
    let s = MemServer::new("s", &["t1"]);
    let m = connected_manager(&host, &s, false).await;
    for i in 0..5 {
        s.conn(i).die();
        until_nth(&host, connected("s"), i + 2).await;
    }
    s.conn(5).die();
    until_nth(&host, failed("s", BREAKER_MESSAGE), 1).await;
    assert_eq!(s.connections(), 6);
    assert_eq!(m.status("s"), ServerStatus::Disconnected);
    assert!(!host.calls().contains(&Removed("s".into())));
    assert!(host.calls().contains(&Log(
        "s".into(),
        LogLevel::Error,
        "MCP server crashed too many times; suspending automatic reconnects".into()
    )));
    // Automatic reconnects stay suspended within the window…
    assert!(within(m.reconnect("s", false)).await.is_none());
    assert_eq!(s.connections(), 6);
    // …and a manual one starts it over.
    assert!(within(m.reconnect("s", true)).await.is_some());
    assert_eq!(s.connections(), 7);
    assert_eq!(m.status("s"), ServerStatus::Connected);
}

/// The breaker's window slides: crashes older than 30 s no longer count.
#[tokio::test(start_paused = true)]
async fn the_breaker_window_slides() {
    let host = Host::new();
    let s = MemServer::new("s", &["t1"]);
    let _m = connected_manager(&host, &s, false).await;
    for i in 0..10 {
        if i == 5 {
            tokio::time::sleep(Duration::from_secs(30)).await;
        }
        s.conn(i).die();
        until_nth(&host, connected("s"), i + 2).await;
    }
    assert_eq!(failures(&host), []);
    assert_eq!(s.connections(), 11);
}

/// 18.2.1: an idle remote server that drops comes back on its own schedule.
#[tokio::test(start_paused = true)]
async fn an_idle_remote_server_that_drops_comes_back_on_its_schedule() {
    let (host, s, m, t0) = dropped_and_refused(true).await;
    // The ladder fails (7.5 s); quiet attempts follow after 15 s, then 30 s, then 60 s.
    tokio::time::sleep_until(t0 + Duration::from_secs(60)).await;
    assert_eq!(
        retries(&s, t0),
        offsets(&[0, 500, 1500, 3500, 7500, 22_500, 52_500])
    );
    // The quiet attempts report nothing: one `failed`, the ladder's.
    assert_eq!(failures(&host), [failed("s", "s refused")]);
    s.refuse.store(false, Ordering::Relaxed);
    // The next one, 60 s after the last, finds it back.
    tokio::time::sleep_until(t0 + ms(112_000)).await;
    assert_eq!(m.status("s"), ServerStatus::Disconnected);
    until_nth(&host, connected("s"), 2).await;
    assert_eq!(t0.elapsed(), ms(112_500));
    assert_eq!(m.status("s"), ServerStatus::Connected);
    // Back: the schedule ends.
    tokio::time::sleep(Duration::from_secs(3600)).await;
    assert_eq!(retries(&s, t0).len(), 8);
}

/// The quiet retries' wait doubles up to the ceiling; a disconnect ends them.
#[tokio::test(start_paused = true)]
async fn the_quiet_retries_are_capped_and_end_with_a_disconnect() {
    let host = Host::new();
    let s = MemServer::new("s", &["t1"]);
    host.add(&s);
    let options = ManagerOptions {
        reconnect: Some(ReconnectSchedule {
            ladder: vec![],
            retry_base: ms(100),
            retry_max: ms(250),
            ..ReconnectSchedule::default()
        }),
        ..ManagerOptions::default()
    };
    let m = manager(&host, options);
    within(m.connect_servers(vec![s.remote_entry()])).await;
    s.refuse.store(true, Ordering::Relaxed);
    let t0 = Instant::now();
    s.conn(0).die();
    tokio::time::sleep(ms(1000)).await;
    assert_eq!(retries(&s, t0), offsets(&[0, 100, 300, 550, 800]));
    within(m.disconnect("s")).await;
    assert!(host.calls().contains(&Removed("s".into())));
    tokio::time::sleep(ms(5000)).await;
    assert_eq!(retries(&s, t0).len(), 5);
    assert_eq!(m.status("s"), ServerStatus::Disconnected);
}

#[tokio::test(start_paused = true)]
async fn a_disconnect_during_the_ladder_stops_it_and_withdraws_the_tools() {
    let (host, s, m, t0) = dropped_and_refused(false).await;
    tokio::time::sleep(ms(600)).await;
    assert_eq!(m.status("s"), ServerStatus::Connecting);
    within(m.disconnect("s")).await;
    assert_eq!(
        host.of("s")[host.of("s").len() - 2..],
        [Removed("s".into()), status("s", ServerStatus::Disconnected)]
    );
    tokio::time::sleep(Duration::from_secs(60)).await;
    assert_eq!(retries(&s, t0), offsets(&[0, 500]));
    assert_eq!(failures(&host), []);
    assert_eq!(m.status("s"), ServerStatus::Disconnected);
    assert!(m.known_config("s").is_none());
    assert!(m.server_names().is_empty());
}

#[tokio::test(start_paused = true)]
async fn concurrent_reconnects_share_one_and_waiters_wait_for_it() {
    let (host, s, m, t0) = dropped_and_refused(false).await;
    let (a, b, waited) = {
        let (m1, m2, m3) = (m.clone(), m.clone(), m.clone());
        let a = tokio::spawn(async move { m1.reconnect("s", false).await });
        let b = tokio::spawn(async move { m2.reconnect("s", false).await });
        let waited = tokio::spawn(async move { m3.wait_for("s").await });
        tokio::time::sleep(ms(1000)).await;
        s.refuse.store(false, Ordering::Relaxed);
        (a, b, waited)
    };
    let (a, b, waited) = (
        within(a).await.unwrap(),
        within(b).await.unwrap(),
        within(waited).await.unwrap(),
    );
    assert_eq!(t0.elapsed(), ms(1500));
    assert!(a.is_some() && b.is_some());
    assert_eq!(waited.unwrap().generation(), 1);
    assert_eq!(retries(&s, t0), offsets(&[0, 500, 1500]));
    assert_eq!(s.connections(), 2);
    // One reconnect, told once.
    assert_eq!(
        host.events()[2..],
        [reconnecting_event("s"), connected("s")]
    );
}

/// The 12.7 profile keeps its own behaviour: no manager reconnect, the gate awaits.
#[tokio::test(start_paused = true)]
async fn the_12_7_profile_neither_reconnects_nor_leaves_servers_in_the_background() {
    let host = Host::new();
    let slow = MemServer::slow("slow", &["s1"], ms(4000));
    host.add(&slow);
    let m = manager(&host, ManagerOptions::compat_12_7());
    let t0 = Instant::now();
    let report = within(m.connect_servers(vec![slow.entry()])).await;
    assert_eq!(t0.elapsed(), ms(4000));
    assert_eq!(report.gate.connected, strings(&["slow"]));
    slow.conn(0).die();
    host.until_call(Removed("slow".into())).await;
    assert!(within(m.reconnect("slow", true)).await.is_none());
    assert_eq!(slow.connections(), 1);
}

/// 15.7.5 with real processes: a stdio server that answers the handshake and exits, again and
/// again (the agent's issue #1592, a fork storm). Six processes in all, then the breaker; none
/// is left running.
#[tokio::test]
async fn a_fixture_that_exits_after_every_handshake_is_stopped_by_the_breaker() {
    let host = Host::new();
    let m = manager(
        &host,
        ManagerOptions {
            gate: WAIT,
            ..ManagerOptions::default()
        },
    );
    let mk = marker("storm");
    let report =
        within(m.connect_servers(vec![entry("storm", fixture(&[&mk, "--exit-after-ms=200"]))]))
            .await;
    assert_eq!(report.gate.connected, strings(&["storm"]));
    until_nth(&host, failed("storm", BREAKER_MESSAGE), 1).await;
    assert_eq!(
        host.events()
            .iter()
            .filter(|e| **e == connected("storm"))
            .count(),
        6
    );
    assert_eq!(
        host.events()
            .iter()
            .filter(|e| **e == reconnecting_event("storm"))
            .count(),
        6
    );
    assert_eq!(m.status("storm"), ServerStatus::Disconnected);
    // The last one exits by itself (and the breaker closed its client): none is left.
    within(async {
        while !processes_with(&mk).is_empty() {
            tokio::time::sleep(ms(20)).await;
        }
    })
    .await;
    within(m.disconnect_all()).await;
    assert!(host.calls().contains(&Removed("storm".into())));
}

// --- the host's own config check (the agent's injected validateServerConfig) -------------------

/// `start_with`: the host's problems refuse a config with its words; a config it passes still
/// meets the package's check; a connected server is not checked again.
#[tokio::test(start_paused = true)]
async fn start_with_refuses_what_the_hosts_check_refuses() {
    let host = Host::new();
    let ok = MemServer::new("ok", &["o"]);
    let vetoed = MemServer::new("vetoed", &["v"]);
    host.add(&ok);
    host.add(&vetoed);
    let m = manager(&host, ManagerOptions::default());
    let mut checked = Vec::new();
    let report = m.start_with(
        vec![
            ok.entry(),
            vetoed.entry(),
            entry("broken", json!({ "type": "http" })),
        ],
        |name, _| {
            checked.push(name.to_owned());
            if name == "vetoed" {
                vec!["not allowed".into(), "twice".into()]
            } else {
                Vec::new()
            }
        },
    );
    assert_eq!(checked, strings(&["ok", "vetoed", "broken"]));
    assert_eq!(report.started, strings(&["ok"]));
    assert_eq!(
        report.errors,
        vec![
            ("vetoed".to_owned(), "not allowed; twice".to_owned()),
            (
                "broken".to_owned(),
                "Server \"broken\": http server requires \"url\" field".to_owned()
            ),
        ]
    );
    within(m.gate(&report.started)).await;
    let mut again = Vec::new();
    let report = m.start_with(vec![ok.entry()], |name, _| {
        again.push(name.to_owned());
        Vec::new()
    });
    assert!(again.is_empty());
    assert_eq!(report.connected, strings(&["ok"]));
}
