//! The only module that imports napi: thin convert → delegate → convert. Events cross to
//! JavaScript in batches of JSON text ([`sink`]); errors cross as JSON descriptors that `index.js`
//! turns into `Error` objects ([`errors`]).

mod errors;
mod sink;
mod stdio;

use napi_derive::napi;

/// Terminates every server process group this addon started (SIGTERM, a short grace, SIGKILL).
/// `index.js` calls it when the host process exits.
#[napi]
pub fn kill_all_children() {
    crate::runtime::kill_all_children();
}
