use super::*;

fn params(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

#[test]
fn set_replaces_the_first_and_drops_the_rest() {
    let mut p = params(&[("a", "1"), ("state", "x"), ("b", "2"), ("state", "y")]);
    set(&mut p, "state", "s");
    assert_eq!(p, params(&[("a", "1"), ("state", "s"), ("b", "2")]));
    set(&mut p, "c", "3");
    assert_eq!(p.last().unwrap(), &("c".to_string(), "3".to_string()));
}

fn request(query: &str) -> CallbackRequest {
    CallbackRequest {
        url: url::Url::parse(&format!("http://localhost:1/callback?{query}")).unwrap(),
    }
}

#[test]
fn the_callback_verdicts() {
    let judge = judge("abc".into());
    let message = |q: &str| match judge(&request(q)) {
        Ok(code) => format!("ok {code}"),
        Err(e) => e.to_string(),
    };
    assert_eq!(message("code=c&state=abc"), "ok c");
    assert_eq!(
        message("error=access_denied&error_description=User+said+no&code=c"),
        "Authorization failed: User said no"
    );
    assert_eq!(
        message("error=access_denied"),
        "Authorization failed: access_denied"
    );
    assert_eq!(message("state=abc"), "Missing authorization code");
    assert_eq!(message("code=&state=abc"), "Missing authorization code");
    assert_eq!(
        message("code=c&state=x"),
        "State mismatch - possible CSRF attack"
    );
    assert_eq!(message("code=c"), "State mismatch - possible CSRF attack");
}

fn config(authorization_url: &str) -> FlowConfig {
    FlowConfig {
        authorization_url: authorization_url.into(),
        token_url: "http://127.0.0.1:9/token".into(),
        ..FlowConfig::default()
    }
}

#[tokio::test]
async fn the_authorization_url() {
    let mut c = config("http://127.0.0.1:9/authorize?client_id=pre&scope=keep%20me&state=old#frag");
    c.scopes = Some("ignored".into());
    let flow = Flow::start(c, 0).await.unwrap();
    assert_eq!(flow.client_id().as_deref(), Some("pre"));
    let url = url::Url::parse(&flow.authorization_url().unwrap()).unwrap();
    let pairs: Vec<(String, String)> = url.query_pairs().into_owned().collect();
    let names: Vec<&str> = pairs.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(
        names,
        [
            "client_id",
            "scope",
            "state",
            "response_type",
            "redirect_uri",
            "code_challenge",
            "code_challenge_method"
        ]
    );
    assert_eq!(query_value(&url, "scope").as_deref(), Some("keep me"));
    assert_eq!(
        query_value(&url, "redirect_uri"),
        Some(format!("http://localhost:{}/callback", flow.port()))
    );
    assert_eq!(query_value(&url, "state").unwrap().len(), 32);
    assert_eq!(
        query_value(&url, "code_challenge"),
        Some(crate::oauth::pkce::challenge_for(&flow.pkce.verifier))
    );
    assert_eq!(url.fragment(), Some("frag"));
    assert!(url.as_str().contains("scope=keep+me"));
    flow.stop().await;
}

#[tokio::test]
async fn client_ids_and_bad_urls() {
    let mut c = config("not a url");
    c.client_id = Some("  id  ".into());
    let flow = Flow::start(c, 0).await.unwrap();
    assert_eq!(flow.client_id().as_deref(), Some("id"));
    assert_eq!(
        flow.authorization_url().unwrap_err().to_string(),
        "Invalid config: \"authorizationUrl\" must be a valid URL"
    );
    let flow = Flow::start(config("http://127.0.0.1:9/a"), 0)
        .await
        .unwrap();
    assert_eq!(flow.client_id(), None);
}

#[tokio::test]
async fn pasted_codes() {
    let flow = Flow::start(config("http://127.0.0.1:9/a"), 0)
        .await
        .unwrap();
    let other = Some("0".repeat(32));
    assert_eq!(
        flow.supply_code("c".into(), other).unwrap_err().to_string(),
        "State mismatch - possible CSRF attack"
    );
    assert_eq!(
        flow.supply_code(String::new(), None)
            .unwrap_err()
            .to_string(),
        "Missing authorization code"
    );
    // Without a state, or with ours (or an empty one), the code is taken.
    flow.supply_code("c1".into(), None).unwrap();
    flow.supply_code("c2".into(), Some(String::new())).unwrap();
    flow.supply_code("c3".into(), Some(flow.state.clone()))
        .unwrap();
    assert_eq!(lock(&flow.code).as_deref(), Some("c3"));
    let mut secret = config("x");
    secret.client_secret = Some("hush".into());
    assert!(!format!("{secret:?}").contains("hush"));
    flow.stop().await;
}

#[tokio::test]
async fn a_busy_preferred_port_falls_back() {
    let first = Flow::start(config("http://127.0.0.1:9/a"), 0)
        .await
        .unwrap();
    assert!(!first.fell_back());
    let second = Flow::start(config("http://127.0.0.1:9/a"), first.port())
        .await
        .unwrap();
    assert!(second.fell_back());
    assert_ne!(second.port(), first.port());
}
