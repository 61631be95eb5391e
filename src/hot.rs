//! The calls JS makes once a request or once a read (`sendRequests`, `feed`) as plain N-API
//! functions over their state, without napi-rs's per-call work for a class method: the lookup of
//! `this`'s wrapped object, the class identity check and the borrow scopes that guard it. Those
//! were 35–40% of the addon's time in a sequential stdio call's `feed` (perf, 80,000 calls), run
//! cold after every wake-up. A function here holds its state (an `Arc`) and frees it when the
//! engine collects the function.
//!
//! Each call still runs inside [`guard`]: a panic becomes an `Error` with code `MCP_INTERNAL`, and
//! an error is thrown as napi-rs would throw it.

use std::ffi::c_void;
use std::ptr::null_mut;

use napi::bindgen_prelude::*;
use napi::sys;

use super::errors::guard;

/// Arguments a hot function reads (missing ones are `undefined`).
pub(super) const MAX_ARGS: usize = 2;

/// What a hot function does with its state and its arguments.
pub(super) type Body<S> = fn(&S, &Env, &[sys::napi_value; MAX_ARGS]) -> Result<sys::napi_value>;

/// The state and body of one function, owned by the function (boxed into its data pointer).
struct Hot<S> {
    state: S,
    body: Body<S>,
}

/// A JS function `name` that runs `body` over `state`.
pub(super) fn hot_function<S: 'static>(
    env: &Env,
    name: &str,
    state: S,
    body: Body<S>,
) -> Result<sys::napi_value> {
    let raw_env = env.raw();
    let data = Box::into_raw(Box::new(Hot { state, body }));
    let mut function = null_mut();
    // SAFETY: `raw_env` is the live env of this call; `name` is valid for `len` bytes; `data`
    // is a live box that `trampoline::<S>` reads as `Hot<S>`.
    let made = unsafe {
        sys::napi_create_function(
            raw_env,
            name.as_ptr().cast(),
            name.len() as isize,
            Some(trampoline::<S>),
            data.cast(),
            &mut function,
        )
    };
    if made != sys::Status::napi_ok {
        // SAFETY: no function was handed out (one half made is unreachable and never called),
        // so nothing else reads `data`.
        drop(unsafe { Box::from_raw(data) });
        return Err(Error::from_reason("could not make a function"));
    }
    // SAFETY: as above; from here the finalizer owns `data` (it runs once, when the engine
    // collects the function or the env ends: on Node always, on Bun since it runs N-API
    // finalizers at teardown, which the worker test in client.test.mjs checks).
    let attached = unsafe {
        sys::napi_add_finalizer(
            raw_env,
            function,
            data.cast(),
            Some(finalize::<S>),
            null_mut(),
            null_mut(),
        )
    };
    if attached != sys::Status::napi_ok {
        // The function exists but will never free its state: leak it rather than leave the
        // function pointing at freed memory.
        return Err(Error::from_reason("could not attach a finalizer"));
    }
    Ok(function)
}

unsafe extern "C" fn trampoline<S>(
    env: sys::napi_env,
    info: sys::napi_callback_info,
) -> sys::napi_value {
    let mut argc = MAX_ARGS;
    let mut argv = [null_mut(); MAX_ARGS];
    let mut data = null_mut();
    // SAFETY: `env` and `info` are this callback's; `argv` has room for `argc` values (N-API
    // fills the ones not passed with `undefined`).
    let status = unsafe {
        sys::napi_get_cb_info(
            env,
            info,
            &mut argc,
            argv.as_mut_ptr(),
            null_mut(),
            &mut data,
        )
    };
    if status != sys::Status::napi_ok || data.is_null() {
        // SAFETY: `env` is this callback's, on its own thread.
        unsafe {
            JsError::from(Error::from_reason("could not read the call's arguments")).throw_into(env)
        };
        return null_mut();
    }
    // SAFETY: `data` is the `Hot<S>` this function was made with (`hot_function`), alive
    // until its finalizer, which cannot run while the function is being called.
    let hot = unsafe { &*(data as *const Hot<S>) };
    let wrapped = Env::from_raw(env);
    match guard(&wrapped, || (hot.body)(&hot.state, &wrapped, &argv)) {
        Ok(value) => value,
        Err(e) => {
            // SAFETY: `env` is this callback's, on its own thread.
            unsafe { JsError::from(e).throw_into(env) };
            null_mut()
        }
    }
}

unsafe extern "C" fn finalize<S>(_env: sys::napi_env, data: *mut c_void, _hint: *mut c_void) {
    super::errors::no_unwind("a plain function's finalizer", || {
        // SAFETY: `data` is the box `hot_function` made, freed here only (the finalizer runs once).
        drop(unsafe { Box::from_raw(data as *mut Hot<S>) });
    });
}

/// Argument `value` as a number (as napi-rs reads an `f64`).
///
/// # Safety
/// `value` must be a value of the current call on `env`.
pub(super) unsafe fn number(env: &Env, value: sys::napi_value) -> Result<f64> {
    let mut n = 0.0;
    // SAFETY: the caller's.
    check_status!(
        unsafe { sys::napi_get_value_double(env.raw(), value, &mut n) },
        "expected a number"
    )?;
    Ok(n)
}

/// Argument `value` as the bytes of a `Uint8Array` (a `Buffer` is one), borrowed for the call.
///
/// # Safety
/// `value` must be a value of the current call on `env`, and the slice must not outlive that
/// call nor live while JS runs (JS could detach, transfer or resize its buffer; another thread
/// could write a view over a `SharedArrayBuffer`), as with napi-rs's `&[u8]`.
pub(super) unsafe fn bytes<'a>(env: &Env, value: sys::napi_value) -> Result<&'a [u8]> {
    let mut kind = sys::TypedarrayType::uint8_array;
    let mut len = 0usize;
    let mut ptr = null_mut();
    let mut buffer = null_mut();
    let mut offset = 0usize;
    // SAFETY: the caller's (a value that is not a typed array gives `napi_invalid_arg`).
    let status = unsafe {
        sys::napi_get_typedarray_info(
            env.raw(),
            value,
            &mut kind,
            &mut len,
            &mut ptr,
            &mut buffer,
            &mut offset,
        )
    };
    if status != sys::Status::napi_ok || kind != sys::TypedarrayType::uint8_array {
        return Err(Error::new(Status::InvalidArg, "expected a Uint8Array"));
    }
    if len == 0 || ptr.is_null() {
        return Ok(&[]);
    }
    // SAFETY: for a `Uint8Array` N-API's length is its byte count, and `ptr` its first byte (the
    // byte offset already applied); alive for the current call (the caller's contract).
    Ok(unsafe { std::slice::from_raw_parts(ptr as *const u8, len) })
}

/// Argument `value` as a string (UTF-8).
///
/// # Safety
/// `value` must be a value of the current call on `env`.
pub(super) unsafe fn string(env: &Env, value: sys::napi_value) -> Result<String> {
    // SAFETY: the caller's; napi-rs reads a `String` so.
    unsafe { String::from_napi_value(env.raw(), value) }
}

/// `value` for JS.
pub(super) fn to_js<T: ToNapiValue>(env: &Env, value: T) -> Result<sys::napi_value> {
    // SAFETY: `env` is the live env of the current call.
    unsafe { T::to_napi_value(env.raw(), value) }
}
