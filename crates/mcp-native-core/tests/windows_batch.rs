//! Windows only (run under wine here: `node scripts/wine-tests.mjs`): the command line a `.cmd`
//! server is started with, read back from the started `cmd.exe` itself, for each BatBadBut case
//! (CVE-2024-24576). The transport hands the batch file's full path and the arguments to Rust's
//! `Command`, whose escaping for cmd.exe is the fix for that CVE; these are the strings it must
//! produce. Whether cmd.exe then hands every argument on intact is `__test__/windows.test.mjs`
//! (wine's cmd.exe is a reimplementation that differs: see there).
#![cfg(windows)]

use std::ffi::c_void;
use std::sync::Arc;

use mcp_native_core::transport::stdio::{StdioConfig, StdioTransport};
use mcp_native_core::transport::{Event, EventSink};

struct Ignore;
impl EventSink for Ignore {
    fn emit_all(&self, _events: Vec<Event>) {}
}

#[link(name = "kernel32")]
unsafe extern "system" {
    fn OpenProcess(access: u32, inherit: i32, pid: u32) -> *mut c_void;
    fn ReadProcessMemory(
        process: *mut c_void,
        address: *const c_void,
        buffer: *mut c_void,
        size: usize,
        read: *mut usize,
    ) -> i32;
    fn CloseHandle(handle: *mut c_void) -> i32;
}

#[link(name = "ntdll")]
unsafe extern "system" {
    fn NtQueryInformationProcess(
        process: *mut c_void,
        class: u32,
        info: *mut c_void,
        len: u32,
        returned: *mut u32,
    ) -> i32;
}

/// Reads `T` at `address` of `process`.
fn read<T: Copy + Default>(process: *mut c_void, address: u64) -> T {
    let mut value = T::default();
    // SAFETY: reads size_of::<T>() bytes into `value`, a plain-data T.
    let ok = unsafe {
        ReadProcessMemory(
            process,
            address as *const c_void,
            (&mut value as *mut T).cast(),
            std::mem::size_of::<T>(),
            std::ptr::null_mut(),
        )
    };
    assert_ne!(ok, 0, "ReadProcessMemory at {address:#x}");
    value
}

/// The command line process `pid` was started with: its PEB's process parameters (x64 offsets).
fn command_line_of(pid: u32) -> String {
    const PROCESS_QUERY_INFORMATION: u32 = 0x0400;
    const PROCESS_VM_READ: u32 = 0x0010;
    // SAFETY: plain calls; the handle is closed below.
    let process = unsafe { OpenProcess(PROCESS_QUERY_INFORMATION | PROCESS_VM_READ, 0, pid) };
    assert!(!process.is_null(), "OpenProcess {pid}");
    // PROCESS_BASIC_INFORMATION: ExitStatus, PebBaseAddress, …
    let mut basic = [0u64; 6];
    // SAFETY: class 0 (ProcessBasicInformation) into a 48-byte buffer.
    let status = unsafe {
        NtQueryInformationProcess(
            process,
            0,
            basic.as_mut_ptr().cast(),
            48,
            std::ptr::null_mut(),
        )
    };
    assert_eq!(status, 0, "NtQueryInformationProcess");
    let params: u64 = read(process, basic[1] + 0x20); // PEB.ProcessParameters
    let length: u16 = read(process, params + 0x70); // .CommandLine.Length (bytes)
    let buffer: u64 = read(process, params + 0x78); // .CommandLine.Buffer
    let mut text = vec![0u16; length as usize / 2];
    // SAFETY: reads `length` bytes into `text`.
    let ok = unsafe {
        ReadProcessMemory(
            process,
            buffer as *const c_void,
            text.as_mut_ptr().cast(),
            length as usize,
            std::ptr::null_mut(),
        )
    };
    assert_ne!(ok, 0, "ReadProcessMemory of the command line");
    // SAFETY: a handle we opened.
    unsafe { CloseHandle(process) };
    String::from_utf16_lossy(&text)
}

#[test]
fn each_batbadbut_case_gets_the_command_line_of_rusts_batch_escaping() {
    let dir = std::env::temp_dir().join(format!("mcp-native-bat-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("args.cmd");
    // Waits for input on stdin (which the transport holds open): the test reads its command
    // line meanwhile.
    std::fs::write(&script, "@pause >nul\r\n").unwrap();
    let script_text = script.to_str().unwrap().to_owned();
    let cases: &[(&str, &str)] = &[
        ("plain-arg_1.txt", "plain-arg_1.txt"),
        ("two words", "\"two words\""),
        ("%PATH%", "\"%%cd:~,%PATH%%cd:~,%\""),
        ("%%", "\"%%cd:~,%%%cd:~,%\""),
        ("a\"b", "\"a\"\"b\""),
        ("c^d", "\"c^d\""),
        ("e&echo INJECTED", "\"e&echo INJECTED\""),
        ("f|g", "\"f|g\""),
        ("h<i", "\"h<i\""),
        ("j>k", "\"j>k\""),
        ("tail\\", "\"tail\\\\\""),
        ("", "\"\""),
        ("!x!", "\"!x!\""),
    ];
    for (arg, quoted) in cases {
        let mut config = StdioConfig::new(&script_text, &[arg]);
        config.cwd = Some(dir.to_str().unwrap().to_owned());
        config.kill_grace_ms = 100;
        let transport = StdioTransport::spawn(&config, Arc::new(Ignore), 10_000).unwrap();
        let line = command_line_of(transport.pid().unwrap());
        assert_eq!(
            line,
            format!("cmd.exe /e:ON /v:OFF /d /c \"\"{script_text}\" {quoted}\""),
            "{arg:?}"
        );
        drop(transport);
    }
    // A line break could cut the command short: refused before anything starts.
    let config = StdioConfig::new(&script_text, &["a\nb"]);
    let refused = StdioTransport::spawn(&config, Arc::new(Ignore), 10_000)
        .err()
        .unwrap();
    assert!(refused.to_string().starts_with("spawn "), "{refused}");
    let _ = std::fs::remove_dir_all(&dir);
}
