//! OAuth for MCP servers. Pieces any OAuth flow of the package reuses — [`pkce`] (verifier,
//! challenge, `state`), [`callback`] (the loopback redirect listener), [`request`] (requests with
//! a deadline and a bounded body, form and JSON bodies encoded as JavaScript encodes them) and
//! the HTTP client of [`crate::net`] — and the reference's own behaviour built on them:
//! [`discovery`] (SPEC 8.6 `discoverOAuthEndpoints`) and [`flow`] (SPEC 8.7 `MCPOAuthFlow`).
//! The spec-complete OAuth client of SPEC section 10, [`client`], shares the pieces, not the two
//! flows: their requests differ.

pub mod callback;
pub mod client;
pub mod discovery;
pub mod flow;
pub mod pkce;
pub mod request;
