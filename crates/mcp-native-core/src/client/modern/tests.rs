use super::call::with_inputs;
use super::*;

#[test]
fn modern_error_codes_from_json_rpc_and_http_bodies() {
    let rpc = Error::rpc(
        RawValue::from_string(
            r#"{"code":-32022,"message":"x","data":{"supported":["2026-07-28"]}}"#.into(),
        )
        .unwrap()
        .as_ref(),
    );
    assert_eq!(rpc_code(&rpc).map(|c| c.0), Some(-32022));
    let http = Error::Http {
        status: 400,
        message: r#"HTTP 400: {"jsonrpc":"2.0","id":1,"error":{"code":-32020,"message":"Missing MCP-Protocol-Version header"}} [WWW-Authenticate: x]"#.into(),
        session_expired: false,
    };
    assert!(is_modern_error(&http));
    let legacy = Error::Http {
        status: 400,
        message: r#"HTTP 400: {"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#.into(),
        session_expired: false,
    };
    assert!(!is_modern_error(&legacy));
    assert_eq!(
        rpc_code(&Error::Http {
            status: 400,
            message: "HTTP 400: ".into(),
            session_expired: false
        }),
        None
    );
}

#[test]
fn input_responses_and_request_state_only_as_the_server_sent_them() {
    let with = with_inputs(
        Some(r#"{"name":"t","requestState":null}"#),
        &json!({"a":1}),
        Some(&json!("s1")),
    )
    .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&with).unwrap(),
        json!({"name":"t","inputResponses":{"a":1},"requestState":"s1"})
    );
    let without = with_inputs(Some(r#"{"name":"t"}"#), &json!({}), None).unwrap();
    assert!(!without.contains("requestState"));
}

#[test]
fn discover_results_read_as_an_initialize_result() {
    let raw = RawValue::from_string(r#"{"supportedVersions":["2026-07-28"],"capabilities":{"tools":{}},"_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#.into()).unwrap();
    let init: Value = serde_json::from_str(init_from_discover("2026-07-28", &raw).get()).unwrap();
    assert_eq!(init["serverInfo"]["name"], "s");
    assert_eq!(init["protocolVersion"], "2026-07-28");
    assert_eq!(init["capabilities"], json!({"tools":{}}));
}
