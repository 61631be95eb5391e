//! Windows system calls: a Job Object per server (its process tree ends with the job, and the job
//! ends with the host), whether the host has a console to share, and owner-only ACLs for the
//! files that hold secrets (the OAuth store, written config).

use std::ffi::c_void;
use std::io;
use std::os::windows::ffi::OsStrExt;
use std::os::windows::io::{AsRawHandle, FromRawHandle, OwnedHandle, RawHandle};
use std::path::Path;

use windows_sys::Win32::Foundation::{ERROR_SUCCESS, GENERIC_ALL, HANDLE, LocalFree};
use windows_sys::Win32::Security::Authorization::{
    EXPLICIT_ACCESS_W, NO_MULTIPLE_TRUSTEE, SE_FILE_OBJECT, SET_ACCESS, SetEntriesInAclW,
    SetNamedSecurityInfoW, TRUSTEE_IS_SID, TRUSTEE_IS_USER, TRUSTEE_W,
};
use windows_sys::Win32::Security::{
    ACL, DACL_SECURITY_INFORMATION, GetTokenInformation, NO_INHERITANCE,
    PROTECTED_DACL_SECURITY_INFORMATION, SUB_CONTAINERS_AND_OBJECTS_INHERIT, TOKEN_QUERY,
    TOKEN_USER, TokenUser,
};
use windows_sys::Win32::System::Console::GetConsoleWindow;
use windows_sys::Win32::System::JobObjects::{
    AssignProcessToJobObject, CreateJobObjectW, JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
    JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, JOBOBJECT_EXTENDED_LIMIT_INFORMATION,
    JobObjectBasicAccountingInformation, JobObjectExtendedLimitInformation,
    QueryInformationJobObject, SetInformationJobObject, TerminateJobObject,
};
use windows_sys::Win32::System::Threading::{GetCurrentProcess, OpenProcessToken};

/// A Job Object with `JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE`: every process in it is terminated when
/// its last handle closes — when the server's owner lets it go, or when the host process ends in
/// any way (the system closes its handles), crash and `TerminateProcess` included. Processes a
/// member starts join the job too.
#[derive(Debug)]
pub struct Job(OwnedHandle);

impl Job {
    /// A new, empty job that kills its processes when closed.
    pub fn new() -> io::Result<Job> {
        // SAFETY: no security attributes, no name; a null result is an error.
        let handle = unsafe { CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
        if handle.is_null() {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a handle just returned to us, owned from here on.
        let job = Job(unsafe { OwnedHandle::from_raw_handle(handle as RawHandle) });
        let info = limits();
        // SAFETY: the job handle is open; the pointer and size describe `info`.
        let ok = unsafe {
            SetInformationJobObject(
                job.raw(),
                JobObjectExtendedLimitInformation,
                (&info as *const JOBOBJECT_EXTENDED_LIMIT_INFORMATION).cast::<c_void>(),
                std::mem::size_of::<JOBOBJECT_EXTENDED_LIMIT_INFORMATION>() as u32,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(job)
    }

    fn raw(&self) -> HANDLE {
        self.0.as_raw_handle() as HANDLE
    }

    /// Puts `process` (a process handle with PROCESS_SET_QUOTA and PROCESS_TERMINATE, as
    /// `CreateProcess` returns) in the job.
    pub fn assign(&self, process: RawHandle) -> io::Result<()> {
        // SAFETY: both handles are open for the duration of the call.
        if unsafe { AssignProcessToJobObject(self.raw(), process as HANDLE) } == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Terminates every process in the job (exit code 1). False when the call failed.
    pub fn terminate(&self) -> bool {
        // SAFETY: the job handle is open.
        unsafe { TerminateJobObject(self.raw(), 1) != 0 }
    }

    /// How many processes of the job are running (`None` when the query failed).
    pub fn active_processes(&self) -> Option<u32> {
        // SAFETY: plain data; zeroed is a valid value.
        let mut info: JOBOBJECT_BASIC_ACCOUNTING_INFORMATION = unsafe { std::mem::zeroed() };
        // SAFETY: the job handle is open; the pointer and size describe `info`.
        let ok = unsafe {
            QueryInformationJobObject(
                self.raw(),
                JobObjectBasicAccountingInformation,
                (&mut info as *mut JOBOBJECT_BASIC_ACCOUNTING_INFORMATION).cast::<c_void>(),
                std::mem::size_of::<JOBOBJECT_BASIC_ACCOUNTING_INFORMATION>() as u32,
                std::ptr::null_mut(),
            )
        };
        (ok != 0).then_some(info.ActiveProcesses)
    }
}

/// The limits every server's job gets: kill its processes when the job's last handle closes.
fn limits() -> JOBOBJECT_EXTENDED_LIMIT_INFORMATION {
    // SAFETY: a zeroed JOBOBJECT_EXTENDED_LIMIT_INFORMATION is a valid value (plain data).
    let mut info: JOBOBJECT_EXTENDED_LIMIT_INFORMATION = unsafe { std::mem::zeroed() };
    info.BasicLimitInformation.LimitFlags = JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE;
    info
}

/// Whether the host has a console a server can share (the agent's `hostHasInheritableConsole`):
/// a console window, or a terminal on one of its standard streams (ConPTY terminals can give a
/// null console window).
pub fn host_has_console() -> bool {
    use std::io::IsTerminal;
    // SAFETY: no arguments; returns a window handle or null.
    let window = unsafe { GetConsoleWindow() };
    !window.is_null()
        || io::stdin().is_terminal()
        || io::stdout().is_terminal()
        || io::stderr().is_terminal()
}

/// The current user's SID, as the bytes of its TOKEN_USER (the SID points into them).
struct UserSid(Vec<u64>);

impl UserSid {
    fn current() -> io::Result<UserSid> {
        let mut token: HANDLE = std::ptr::null_mut();
        // SAFETY: the pseudo-handle of this process; `token` receives a handle we own.
        if unsafe { OpenProcessToken(GetCurrentProcess(), TOKEN_QUERY, &mut token) } == 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a handle just returned to us.
        let token = unsafe { OwnedHandle::from_raw_handle(token as RawHandle) };
        let mut len = 0u32;
        // SAFETY: a size query (null buffer of length 0) fails with the size needed in `len`.
        unsafe {
            GetTokenInformation(
                token.as_raw_handle() as HANDLE,
                TokenUser,
                std::ptr::null_mut(),
                0,
                &mut len,
            )
        };
        // u64 elements: aligned for TOKEN_USER.
        let mut buf = vec![0u64; (len as usize).div_ceil(8).max(1)];
        // SAFETY: `buf` holds at least `len` writable bytes.
        let ok = unsafe {
            GetTokenInformation(
                token.as_raw_handle() as HANDLE,
                TokenUser,
                buf.as_mut_ptr().cast::<c_void>(),
                len,
                &mut len,
            )
        };
        if ok == 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(UserSid(buf))
    }

    fn sid(&self) -> *mut c_void {
        // SAFETY: the buffer holds a TOKEN_USER written by GetTokenInformation.
        unsafe { (*(self.0.as_ptr() as *const TOKEN_USER)).User.Sid }
    }
}

/// The access list `owner_only` gives: one entry, the current user, full control; for a folder,
/// inherited by what it contains.
pub(crate) fn owner_only_entry(sid: *mut c_void, folder: bool) -> EXPLICIT_ACCESS_W {
    EXPLICIT_ACCESS_W {
        grfAccessPermissions: GENERIC_ALL,
        grfAccessMode: SET_ACCESS,
        grfInheritance: if folder {
            SUB_CONTAINERS_AND_OBJECTS_INHERIT
        } else {
            NO_INHERITANCE
        },
        Trustee: TRUSTEE_W {
            pMultipleTrustee: std::ptr::null_mut(),
            MultipleTrusteeOperation: NO_MULTIPLE_TRUSTEE,
            TrusteeForm: TRUSTEE_IS_SID,
            TrusteeType: TRUSTEE_IS_USER,
            ptstrName: sid.cast::<u16>(),
        },
    }
}

/// What `owner_only` sets: the DACL, protected (no entries inherited from the parent folder).
pub(crate) const OWNER_ONLY_INFO: u32 =
    DACL_SECURITY_INFORMATION | PROTECTED_DACL_SECURITY_INFORMATION;

/// Makes `path` readable and writable by the current user only (the Windows counterpart of mode
/// 0600 / 0700): its access list becomes one entry for the user, and inherits nothing.
pub fn owner_only(path: &Path, folder: bool) -> io::Result<()> {
    let user = UserSid::current()?;
    let entry = owner_only_entry(user.sid(), folder);
    let mut acl: *mut ACL = std::ptr::null_mut();
    // SAFETY: one entry, no old ACL; `acl` receives a LocalAlloc'ed ACL, freed below.
    let err = unsafe { SetEntriesInAclW(1, &entry, std::ptr::null(), &mut acl) };
    if err != ERROR_SUCCESS {
        return Err(io::Error::from_raw_os_error(err as i32));
    }
    let wide: Vec<u16> = path
        .as_os_str()
        .encode_wide()
        .chain(std::iter::once(0))
        .collect();
    // SAFETY: a NUL-terminated path; owner and group unchanged (null); `acl` is valid.
    let err = unsafe {
        SetNamedSecurityInfoW(
            wide.as_ptr(),
            SE_FILE_OBJECT,
            OWNER_ONLY_INFO,
            std::ptr::null_mut(),
            std::ptr::null_mut(),
            acl,
            std::ptr::null(),
        )
    };
    // SAFETY: allocated by SetEntriesInAclW with LocalAlloc.
    unsafe { LocalFree(acl.cast::<c_void>()) };
    if err != ERROR_SUCCESS {
        return Err(io::Error::from_raw_os_error(err as i32));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Wine does not report a job's limits back (its query answers zeros), but it does end a
    /// job's processes when the job closes: the flag is checked as set, the effect as seen.
    #[test]
    fn a_job_kills_its_processes_when_its_last_handle_closes() {
        use std::os::windows::io::AsRawHandle;
        use windows_sys::Win32::System::Threading::WaitForSingleObject;
        assert_eq!(
            limits().BasicLimitInformation.LimitFlags,
            JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE
        );
        let job = Job::new().unwrap();
        assert_eq!(job.active_processes(), Some(0));
        // Waits for input that never comes (its stdin stays open).
        let mut child = std::process::Command::new("cmd.exe")
            .args(["/d", "/c", "pause"])
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap();
        job.assign(child.as_raw_handle()).unwrap();
        drop(job);
        // SAFETY: the child's process handle, open while `child` lives.
        let waited = unsafe { WaitForSingleObject(child.as_raw_handle() as HANDLE, 10_000) };
        assert_eq!(
            waited, 0,
            "the process outlived its job (WAIT_OBJECT_0 expected)"
        );
        assert!(child.try_wait().unwrap().is_some());
    }

    #[test]
    fn the_owner_only_entry_is_the_user_with_full_control() {
        let user = UserSid::current().unwrap();
        let file = owner_only_entry(user.sid(), false);
        assert_eq!(file.grfAccessPermissions, GENERIC_ALL);
        assert_eq!(file.grfAccessMode, SET_ACCESS);
        assert_eq!(file.grfInheritance, NO_INHERITANCE);
        assert_eq!(file.Trustee.TrusteeForm, TRUSTEE_IS_SID);
        assert_eq!(file.Trustee.ptstrName.cast::<c_void>(), user.sid());
        let folder = owner_only_entry(user.sid(), true);
        assert_eq!(folder.grfInheritance, SUB_CONTAINERS_AND_OBJECTS_INHERIT);
        assert_ne!(OWNER_ONLY_INFO & PROTECTED_DACL_SECURITY_INFORMATION, 0);
    }
}
