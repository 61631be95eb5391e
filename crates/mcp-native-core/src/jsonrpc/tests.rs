use super::*;

fn raw(s: &str) -> Box<RawValue> {
    RawValue::from_string(s.to_string()).unwrap()
}

#[test]
fn frames_have_the_exact_key_order() {
    assert_eq!(
        String::from_utf8(request_frame(7, IdFormat::Number, "tools/list", None)).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/list\",\"params\":{}}\n"
    );
    assert_eq!(
        String::from_utf8(request_frame(7, IdFormat::String, "tools/list", None)).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":\"10000000007\",\"method\":\"tools/list\",\"params\":{}}\n"
    );
    assert_eq!(
        String::from_utf8(notification_frame("a\"b", Some("{\"x\":1}"))).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"a\\\"b\",\"params\":{\"x\":1}}\n"
    );
    assert_eq!(
        String::from_utf8(cancelled_frame(
            3,
            IdFormat::Number,
            "Request timeout after 5ms"
        ))
        .unwrap(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":3,\"reason\":\"Request timeout after 5ms\"}}\n"
    );
    assert_eq!(
        String::from_utf8(cancelled_frame(
            3,
            IdFormat::String,
            "Request timeout after 5ms"
        ))
        .unwrap(),
        "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":\"10000000003\",\"reason\":\"Request timeout after 5ms\"}}\n"
    );
    assert_eq!(
        String::from_utf8(reply_frame("5", Err(METHOD_NOT_FOUND))).unwrap(),
        "{\"jsonrpc\":\"2.0\",\"id\":5,\"error\":{\"code\":-32601,\"message\":\"Method not found\"}}\n"
    );
}

#[test]
fn classification() {
    assert!(matches!(classify(b"5"), Incoming::Ignored));
    assert!(matches!(classify(b"null"), Incoming::Ignored));
    assert!(matches!(classify(b"[1,2]"), Incoming::Ignored));
    assert!(matches!(classify(b"\"x\""), Incoming::Ignored));
    assert!(matches!(classify(b"not json"), Incoming::Malformed));
    assert!(matches!(classify(b"{\"id\":"), Incoming::Malformed));
    assert!(matches!(
        classify(br#"{"jsonrpc":"2.0","method":"n","id":null}"#),
        Incoming::Notification { params: None, .. }
    ));
    assert!(matches!(
        classify(br#"{"jsonrpc":"2.0","method":"ping","id":4}"#),
        Incoming::Request { .. }
    ));
    match classify(br#"{"id":"1","result":{"a":1},"error":null}"#) {
        Incoming::Response {
            outcome: Ok(Some(r)),
            ..
        } => assert_eq!(r.get(), "{\"a\":1}"),
        other => panic!("{other:?}"),
    }
    match classify(br#"{"id":"1","error":{"code":1}}"#) {
        Incoming::Response {
            outcome: Err(e), ..
        } => assert_eq!(e.get(), "{\"code\":1}"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        classify(br#"{"id":"1","error":0}"#),
        Incoming::Response {
            outcome: Ok(None),
            ..
        }
    ));
}

#[test]
fn ids_match_in_either_form() {
    // A string id (format "string"): the base plus the number; a number echo of it too.
    assert_eq!(our_id(&raw("\"10000000012\"")), Some(12));
    assert_eq!(our_id(&raw("10000000012")), Some(12));
    assert_eq!(our_id(&raw("10000000012.0")), Some(12));
    assert_eq!(our_id(&raw("1.0000000012e10")), Some(12));
    // A number id (the default): the number itself; a string echo of it too.
    assert_eq!(our_id(&raw("12")), Some(12));
    assert_eq!(our_id(&raw("12.0")), Some(12));
    assert_eq!(our_id(&raw("\"12\"")), Some(12));
    assert_eq!(our_id(&raw("9999999999")), Some(MAX_REQUEST_NUMBER));
    assert_eq!(our_id(&raw("\"010000000012\"")), None);
    assert_eq!(our_id(&raw("\"012\"")), None);
    assert_eq!(our_id(&raw("\"abc\"")), None);
    assert_eq!(our_id(&raw("-1")), None);
    // The number as it is (progress tokens).
    assert_eq!(id_number("\"12\""), Some(12));
    assert_eq!(id_number("12.0"), Some(12));
    assert_eq!(id_number("\"012\""), None);
}

#[test]
fn string_ids_on_the_wire_are_not_interned_by_v8() {
    // V8's JSON.parse interns string values of up to 10 characters (see WIRE_ID_BASE).
    for n in [1, 2, 999, MAX_REQUEST_NUMBER] {
        let frame = String::from_utf8(request_frame(n, IdFormat::String, "m", None)).unwrap();
        let wire: serde_json::Value = serde_json::from_str(&frame).unwrap();
        let id = wire["id"].as_str().unwrap();
        assert!(id.len() >= 11, "{id}");
        assert_eq!(our_id(&raw(&format!("\"{id}\""))), Some(n));
        assert_eq!(our_id(&raw(id)), Some(n), "a numeric echo");
        // The same request as a number id.
        let frame = String::from_utf8(request_frame(n, IdFormat::Number, "m", None)).unwrap();
        let wire: serde_json::Value = serde_json::from_str(&frame).unwrap();
        assert_eq!(wire["id"].as_u64(), Some(n));
    }
}

#[test]
fn the_id_format_setting_is_read_as_the_agent_reads_it() {
    assert_eq!(IdFormat::from_setting(Some("string")), IdFormat::String);
    assert_eq!(IdFormat::from_setting(Some("number")), IdFormat::Number);
    assert_eq!(IdFormat::from_setting(Some("String")), IdFormat::Number);
    assert_eq!(IdFormat::from_setting(None), IdFormat::Number);
}

#[test]
fn sniffs_the_id_of_a_truncated_message() {
    assert_eq!(
        sniff_id(br#"{"jsonrpc":"2.0","id":"10000000042","result":{"text":"xxxx"#),
        Some(42)
    );
    assert_eq!(
        sniff_id(br#"{"result":{"content":[{"id":"10000000007"}]},"id": 10000000009, "x"#),
        Some(9)
    );
    assert_eq!(sniff_id(br#"{ "id" : 10000000005 , "error" :"#), Some(5));
    assert_eq!(
        sniff_id(br#"{ "id" : 5 , "error" :"#),
        Some(5),
        "a number id"
    );
    assert_eq!(sniff_id(br#"{ "id" : "x5" , "error" :"#), None, "not ours");
    assert_eq!(
        sniff_id(br#"{ "id" : 10000000005 ,"#),
        None,
        "not known to be a response yet"
    );
    assert_eq!(
        sniff_id(br#"{"result":"has \"id\":\"10000000003\" inside"#),
        None
    );
    assert_eq!(sniff_id(br#"{"jsonrpc":"2.0","id":"10000000004"#), None);
}

#[test]
fn truthiness() {
    for falsy in ["null", "false", "0", "-0", "0.0", "\"\""] {
        assert!(!is_truthy(&raw(falsy)), "{falsy}");
    }
    for truthy in ["1", "{}", "[]", "\"0\"", "true", "-2"] {
        assert!(is_truthy(&raw(truthy)), "{truthy}");
    }
}

#[test]
fn reply_members_reads_a_reply_body_as_json_parse_does_in_one_checked_pass() {
    let members = |text: &str| {
        reply_members(text.as_bytes()).map(|m| {
            m.map(|(r, e)| {
                (
                    r.map(|v| v.get().to_string()),
                    e.map(|v| v.get().to_string()),
                )
            })
        })
    };
    // The last of duplicate keys; null is a value.
    assert_eq!(
        members(r#"{"result":1,"error":null,"result":{"a":[2]}}"#).unwrap(),
        Some((Some(r#"{"a":[2]}"#.into()), Some("null".into())))
    );
    assert_eq!(members(r#" {"id":1} "#).unwrap(), Some((None, None)));
    // Valid JSON that is not an object: no members (`result` is undefined in JS).
    assert_eq!(members("[1,2]").unwrap(), None);
    assert_eq!(members(" 5 ").unwrap(), None);
    // Text that is not JSON, anywhere in it (in an ignored member too, or after the object).
    for bad in [
        "",
        "[1,",
        "<html>",
        r#"{"result":1"#,
        r#"{"x":[1,],"result":1}"#,
        r#"{"result":1} x"#,
        r#"{"result":"\x"}"#,
        "{\"result\":\"a\u{1}b\"}",
    ] {
        assert!(members(bad).is_err(), "{bad:?}");
    }
}
