//! Client identity (SPEC 10.1 step 4), in priority order: pre-registered credentials bound to
//! the issuer; a client ID metadata document URL where the authorization server supports it;
//! a dynamic registration (RFC 7591) — the stored one for this issuer and redirect URI, or a
//! new one; otherwise [`AuthError::NeedsClientCredentials`]. Identities are bound to one issuer:
//! a registration with one authorization server is never offered to another (SPEC 10.1 step 10).

use serde::Serialize;

use super::http::{OAuthHttp, describe, json_object, string};
use super::metadata::AsMetadata;
use super::state::{self, ClientRecord, ClientSource, client_key, prereg_key};
use super::{AuthError, OAuthConfig};
use crate::oauth::request::{Redirects, post_json};

/// The auth method a registration asks for: `none` when listed (or nothing is listed), else
/// `client_secret_basic`, else `client_secret_post`; with none of those listed,
/// `client_secret_basic`, the RFC 8414 default.
pub fn dcr_auth_method(supported: Option<&[String]>) -> &'static str {
    let Some(list) = supported else {
        return "none";
    };
    let listed = |m: &str| list.iter().any(|s| s == m);
    ["none", "client_secret_basic", "client_secret_post"]
        .into_iter()
        .find(|m| listed(m))
        .unwrap_or("client_secret_basic")
}

/// The RFC 7591 request (SPEC 10.1 step 4.3).
#[derive(Serialize)]
struct RegistrationRequest<'a> {
    client_name: &'a str,
    redirect_uris: [&'a str; 1],
    grant_types: &'a [&'a str],
    response_types: [&'a str; 1],
    token_endpoint_auth_method: &'a str,
    application_type: &'a str,
}

/// The identity to use with the authorization server of `metadata`.
pub(crate) async fn resolve(
    config: &OAuthConfig,
    http: &OAuthHttp,
    metadata: &AsMetadata,
) -> Result<ClientRecord, AuthError> {
    let issuer = metadata.issuer.as_str();
    let store = config.store.as_ref();
    if let Some(record) = pre_registered(config, issuer).await? {
        return Ok(record);
    }
    if let Some(url) = &config.client_metadata_url
        && metadata.client_id_metadata_document_supported
    {
        return Ok(cimd(url));
    }
    let key = client_key(issuer, &config.redirect_uri);
    if let Some(stored) = state::load::<ClientRecord>(store, &key).await?
        && stored.source == ClientSource::Dcr
        && !stored.secret_expired(state::now())
    {
        return Ok(stored);
    }
    let Some(endpoint) = &metadata.registration_endpoint else {
        return Err(AuthError::NeedsClientCredentials {
            issuer: issuer.to_string(),
        });
    };
    let record = register(config, http, endpoint, metadata).await?;
    state::save(store, &key, &record).await?;
    Ok(record)
}

/// The identity `client_id` has with `issuer`, if it is still configured or registered (a
/// refresh must use the client its tokens were issued to). Never registers.
pub(crate) async fn find(
    config: &OAuthConfig,
    issuer: &str,
    client_id: &str,
) -> Result<Option<ClientRecord>, AuthError> {
    if let Some(p) = pre_registered(config, issuer).await?
        && p.client_id == client_id
    {
        return Ok(Some(p));
    }
    if config.client_metadata_url.as_deref() == Some(client_id) {
        return Ok(Some(cimd(client_id)));
    }
    let key = client_key(issuer, &config.redirect_uri);
    Ok(state::load::<ClientRecord>(config.store.as_ref(), &key)
        .await?
        .filter(|c| c.client_id == client_id))
}

/// Pre-registered credentials for `issuer`: one configured for it, else one configured without
/// an issuer that is not yet bound to another (it is bound to this one now).
async fn pre_registered(
    config: &OAuthConfig,
    issuer: &str,
) -> Result<Option<ClientRecord>, AuthError> {
    let record = |p: &super::PreRegistered| ClientRecord {
        client_id: p.client_id.clone(),
        client_secret: p.client_secret.clone().filter(|s| !s.is_empty()),
        client_secret_expires_at: None,
        token_endpoint_auth_method: p.token_endpoint_auth_method.clone(),
        registration_access_token: None,
        registration_client_uri: None,
        source: ClientSource::Preregistered,
    };
    if let Some(p) = config
        .pre_registered
        .iter()
        .find(|p| p.issuer.as_deref() == Some(issuer))
    {
        return Ok(Some(record(p)));
    }
    let store = config.store.as_ref();
    for p in config.pre_registered.iter().filter(|p| p.issuer.is_none()) {
        let key = prereg_key(&p.client_id);
        match state::load::<String>(store, &key).await? {
            Some(bound) if bound != issuer => continue,
            Some(_) => {}
            None => state::save(store, &key, &issuer).await?,
        }
        return Ok(Some(record(p)));
    }
    Ok(None)
}

/// A client ID metadata document URL as the identity: public, auth method `none`.
fn cimd(url: &str) -> ClientRecord {
    ClientRecord {
        client_id: url.to_string(),
        client_secret: None,
        client_secret_expires_at: None,
        token_endpoint_auth_method: Some("none".into()),
        registration_access_token: None,
        registration_client_uri: None,
        source: ClientSource::Cimd,
    }
}

/// Registers with `endpoint`; the stored values are the response's (RFC 7591 §3.2.1).
async fn register(
    config: &OAuthConfig,
    http: &OAuthHttp,
    endpoint: &str,
    metadata: &AsMetadata,
) -> Result<ClientRecord, AuthError> {
    let grant_types: &[&str] = if config.want_refresh_tokens {
        &["authorization_code", "refresh_token"]
    } else {
        &["authorization_code"]
    };
    let method = dcr_auth_method(metadata.token_endpoint_auth_methods_supported.as_deref());
    let body = serde_json::to_string(&RegistrationRequest {
        client_name: &config.client_name,
        redirect_uris: [&config.redirect_uri],
        grant_types,
        response_types: ["code"],
        token_endpoint_auth_method: method,
        application_type: config.application_type.as_str(),
    })
    .map_err(|e| AuthError::Registration(e.to_string()))?;
    let reply = post_json(endpoint, body, Redirects::Never, http.timeout)
        .await
        .map_err(|e| AuthError::Registration(format!("POST {endpoint}: {}", describe(&e))))?;
    if !matches!(reply.status, 200 | 201) {
        let code = reply
            .json()
            .and_then(|v| v.get("error")?.as_str().map(super::error::error_code));
        return Err(AuthError::Registration(match code {
            Some(code) => format!("POST {endpoint}: HTTP {}: {code}", reply.status),
            None => format!("POST {endpoint}: HTTP {}", reply.status),
        }));
    }
    let map = json_object(&reply)
        .map_err(|e| AuthError::Registration(format!("POST {endpoint}: {e}")))?;
    let client_id = string(&map, "client_id")
        .filter(|id| !id.is_empty())
        .ok_or_else(|| {
            AuthError::Registration(format!("POST {endpoint}: the response has no client_id"))
        })?;
    Ok(ClientRecord {
        client_id,
        client_secret: string(&map, "client_secret").filter(|s| !s.is_empty()),
        client_secret_expires_at: map.get("client_secret_expires_at").and_then(|v| v.as_u64()),
        token_endpoint_auth_method: string(&map, "token_endpoint_auth_method"),
        registration_access_token: string(&map, "registration_access_token"),
        registration_client_uri: string(&map, "registration_client_uri"),
        source: ClientSource::Dcr,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn list(items: &[&str]) -> Vec<String> {
        items.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn registration_auth_method() {
        assert_eq!(dcr_auth_method(None), "none");
        assert_eq!(dcr_auth_method(Some(&list(&["none"]))), "none");
        assert_eq!(
            dcr_auth_method(Some(&list(&["client_secret_post", "none"]))),
            "none"
        );
        assert_eq!(
            dcr_auth_method(Some(&list(&["client_secret_post", "client_secret_basic"]))),
            "client_secret_basic"
        );
        assert_eq!(
            dcr_auth_method(Some(&list(&["client_secret_post"]))),
            "client_secret_post"
        );
        assert_eq!(
            dcr_auth_method(Some(&list(&["private_key_jwt"]))),
            "client_secret_basic"
        );
    }
}
