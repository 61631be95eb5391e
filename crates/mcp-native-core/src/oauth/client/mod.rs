//! The OAuth client of SPEC 10: authorization for Streamable HTTP servers, as the MCP
//! authorization specification (2025-03-26 … 2026-07-28) asks of a client. An [`OAuthClient`]
//! per server URL is the transport's [`AuthHook`](crate::transport::AuthHook): it gives every
//! request its bearer token (refreshing it when near expiry) and answers a 401, or a 403
//! `insufficient_scope`, with discovery, registration and authorization, after which the
//! transport sends the request again.
//!
//! Files, one concept each:
//! - `challenge.rs`: `WWW-Authenticate` parsing;
//! - `prm.rs`: protected-resource metadata discovery and `resource` validation;
//! - `metadata.rs`: authorization-server metadata discovery, `issuer` and PKCE checks, the
//!   legacy fallback endpoints;
//! - `registration.rs`: client identity (pre-registered, CIMD, dynamic registration);
//! - `authorize.rs`: scope selection, the authorization request, response validation
//!   (`state`, `iss`);
//! - `token.rs`: token requests (code, refresh) and client authentication methods;
//! - `machine.rs`: what a refusal calls for (retry, re-authorize, step up, fail);
//! - `flow.rs`: the work for one server: load, discover, migrate, refresh, authorize;
//! - `session.rs`: [`OAuthClient`], the hook;
//! - `state.rs`: the persisted records and their keys; `store.rs`: [`AuthStore`],
//!   [`MemoryStore`], [`FileStore`];
//! - `authorizer.rs`: [`Authorizer`] and the headless, loopback and manual authorizers;
//! - `config.rs`: [`OAuthConfig`]; `error.rs`: [`AuthError`]; `http.rs`: its HTTP clients.
//!
//! It shares [`pkce`](super::pkce), [`callback`](super::callback) and [`request`](super::request)
//! with the reference's simpler flow of SPEC 8.6/8.7 ([`discovery`](super::discovery),
//! [`flow`](super::flow)), which stays as it is.

mod authorize;
mod authorizer;
mod challenge;
mod config;
mod error;
mod flow;
mod http;
mod machine;
mod metadata;
mod prm;
mod registration;
mod session;
mod state;
mod store;
mod token;

pub use authorize::{OFFLINE_ACCESS, already_requested, select_scopes, union_scopes};
pub use authorizer::{
    AuthorizationPrompt, Authorizer, HeadlessAuthorizer, LoopbackAuthorizer, ManualAuthorizer,
    OpenUrl, PromptForCallback,
};
pub use challenge::{BearerChallenge, Challenge, bearer, parse as parse_www_authenticate};
pub use config::{
    ApplicationType, DEFAULT_AUTHORIZE_TIMEOUT, DEFAULT_MAX_STEP_UPS, DEFAULT_REQUEST_TIMEOUT,
    OAuthConfig, PreRegistered,
};
pub use error::{AuthError, MAX_ERROR_CODE_CHARS};
pub use metadata::{AsMetadata, candidates as metadata_candidates};
pub use prm::{ProtectedResource, WELL_KNOWN_PRM, resource_matches};
pub use registration::dcr_auth_method;
pub use session::OAuthClient;
pub use state::{
    ClientRecord, ClientSource, REFRESH_MARGIN_SECS, ServerBinding, TokenRecord, client_key,
    prereg_key, server_key, tokens_key,
};
pub use store::{AuthStore, FileStore, LOCK_TIMEOUT, MAX_FILE_BYTES, MemoryStore};
pub use token::{AuthMethod, TokenResponse, basic as basic_credentials, select_auth_method};
