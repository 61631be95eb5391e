//! What a refusal calls for (SPEC 10.1 steps 8 and 9), decided without I/O from the refusal
//! the transport reports and the tokens held:
//!
//! - **401.** A token other than the one refused is held (another request authorized
//!   meanwhile): retry with it. A 401 on a token issued or adopted for this very request (any
//!   earlier round) is a hard failure. Otherwise: rediscover (PRM is re-fetched, an AS change is
//!   a migration), then refresh if possible, else authorize.
//! - **403.** Only a `Bearer` challenge with `error="insufficient_scope"` is acted on; any other
//!   403 is reported as it is. A newer token than the refused one: retry. Challenged scopes
//!   that were all requested already (or none named): no step-up can help. Past the step-up
//!   limit: stop. Otherwise step up to the union of requested and challenged scopes.

use super::AuthError;
use super::authorize::{already_requested, union_scopes};
use super::challenge::{self, BearerChallenge};
use super::state::TokenRecord;
use crate::transport::AuthRefusal;

/// The `error` of a step-up challenge.
pub const INSUFFICIENT_SCOPE: &str = "insufficient_scope";

/// What to do about a refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Decision {
    /// A newer token is held than the refused one: send the request again with it.
    Retry,
    /// Rediscover, then refresh or authorize, then retry.
    Reauthorize(BearerChallenge),
    /// Authorize again for these scopes, then retry.
    StepUp(Vec<String>),
    /// Not an authorization matter: report the refusal as it is.
    Report,
    /// Give up with this error.
    Fail(AuthError),
}

/// Decides about `refusal` given the tokens held now.
pub(crate) fn decide(
    refusal: &AuthRefusal,
    held: Option<&TokenRecord>,
    max_step_ups: u8,
) -> Decision {
    let bearer = refusal
        .www_authenticate
        .as_deref()
        .and_then(challenge::bearer)
        .unwrap_or_default();
    let newer_held =
        held.is_some_and(|t| refusal.sent_authorization.as_deref() != Some(&t.header()));
    match refusal.status {
        401 if newer_held => Decision::Retry,
        401 if refusal.retries > 0 => Decision::Fail(AuthError::TokenRejected),
        401 => Decision::Reauthorize(bearer),
        403 if bearer.error.as_deref() != Some(INSUFFICIENT_SCOPE) => Decision::Report,
        403 if newer_held => Decision::Retry,
        403 => {
            let challenged = bearer.scope.unwrap_or_default();
            let requested = held.map(|t| t.requested_scopes.as_slice()).unwrap_or(&[]);
            if challenged.is_empty()
                || already_requested(requested, &challenged)
                || refusal.step_ups >= u32::from(max_step_ups)
            {
                Decision::Fail(AuthError::InsufficientScope { scopes: challenged })
            } else {
                Decision::StepUp(union_scopes(requested, &challenged))
            }
        }
        _ => Decision::Report,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn held(access: &str, requested: &[&str]) -> TokenRecord {
        TokenRecord {
            access_token: access.into(),
            expires_at: None,
            refresh_token: None,
            granted_scopes: vec![],
            requested_scopes: requested.iter().map(|s| s.to_string()).collect(),
            issuer: "i".into(),
            resource: None,
            client_id: "c".into(),
        }
    }

    fn refusal(
        status: u16,
        header: &str,
        sent: Option<&str>,
        retries: u32,
        step_ups: u32,
    ) -> AuthRefusal {
        AuthRefusal {
            status,
            www_authenticate: Some(header.into()),
            protocol_version: None,
            sent_authorization: sent.map(|t| format!("Bearer {t}")),
            retries,
            step_ups,
        }
    }

    #[test]
    fn unauthorized() {
        let t = held("A", &[]);
        let scope = BearerChallenge {
            scope: Some(vec!["s".into()]),
            ..Default::default()
        };
        // Nothing held yet: authorize (with the challenge).
        assert_eq!(
            decide(&refusal(401, r#"Bearer scope="s""#, None, 0, 0), None, 2),
            Decision::Reauthorize(scope)
        );
        // The held token was refused: rediscover, refresh or authorize.
        assert!(matches!(
            decide(&refusal(401, "Bearer", Some("A"), 0, 0), Some(&t), 2),
            Decision::Reauthorize(_)
        ));
        // A newer token is held: retry with it (whatever the round).
        assert_eq!(
            decide(&refusal(401, "", Some("old"), 0, 0), Some(&t), 2),
            Decision::Retry
        );
        assert_eq!(
            decide(&refusal(401, "", None, 1, 0), Some(&t), 2),
            Decision::Retry
        );
        // A 401 on the token issued for this request: hard failure.
        assert_eq!(
            decide(&refusal(401, "Bearer", Some("A"), 1, 0), Some(&t), 2),
            Decision::Fail(AuthError::TokenRejected)
        );
    }

    #[test]
    fn step_up_and_its_limits() {
        let t = held("A", &["mcp:basic"]);
        let write = r#"Bearer error="insufficient_scope", scope="mcp:write""#;
        assert_eq!(
            decide(&refusal(403, write, Some("A"), 1, 0), Some(&t), 2),
            Decision::StepUp(vec!["mcp:basic".into(), "mcp:write".into()])
        );
        // error last, different case of the scheme.
        let last = r#"bearer scope="mcp:write", error="insufficient_scope""#;
        assert!(matches!(
            decide(&refusal(403, last, Some("A"), 1, 1), Some(&t), 2),
            Decision::StepUp(_)
        ));
        // Limit reached.
        assert_eq!(
            decide(&refusal(403, write, Some("A"), 3, 2), Some(&t), 2),
            Decision::Fail(AuthError::InsufficientScope {
                scopes: vec!["mcp:write".into()]
            })
        );
        // No progress possible: already requested, or no scope named.
        let basic = r#"Bearer error="insufficient_scope", scope="mcp:basic""#;
        assert!(matches!(
            decide(&refusal(403, basic, Some("A"), 0, 0), Some(&t), 2),
            Decision::Fail(AuthError::InsufficientScope { .. })
        ));
        assert!(matches!(
            decide(
                &refusal(403, r#"Bearer error="insufficient_scope""#, Some("A"), 0, 0),
                Some(&t),
                2
            ),
            Decision::Fail(AuthError::InsufficientScope { .. })
        ));
        // A newer token: retry.
        assert_eq!(
            decide(&refusal(403, write, Some("old"), 0, 0), Some(&t), 2),
            Decision::Retry
        );
    }

    #[test]
    fn other_refusals_are_reported() {
        let t = held("A", &[]);
        assert_eq!(
            decide(
                &refusal(403, r#"Bearer error="invalid_token""#, Some("A"), 0, 0),
                Some(&t),
                2
            ),
            Decision::Report
        );
        assert_eq!(
            decide(&refusal(403, "", Some("A"), 0, 0), Some(&t), 2),
            Decision::Report
        );
        assert_eq!(
            decide(
                &refusal(403, r#"Basic error="insufficient_scope""#, Some("A"), 0, 0),
                Some(&t),
                2
            ),
            Decision::Report
        );
        assert_eq!(
            decide(&refusal(500, "", Some("A"), 0, 0), Some(&t), 2),
            Decision::Report
        );
    }
}
