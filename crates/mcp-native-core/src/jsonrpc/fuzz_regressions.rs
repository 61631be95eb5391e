use super::*;

/// Found by `cargo fuzz run jsonrpc` on its first input: `sniff_id` took the id of any
/// message, so an oversized server→client request (whose id is the server's, `0`, `1`, …)
/// failed the pending request of ours that had the same number.
#[test]
fn a_server_request_is_not_an_answer() {
    check_message(b"");
    // (The server's ids are its own; here one that looks like ours on the wire.)
    let request =
        br#"{"jsonrpc":"2.0","id":10000000001,"method":"sampling/createMessage","params":{"#;
    for cut in 0..=request.len() {
        assert_eq!(sniff_id(&request[..cut]), None, "cut at {cut}");
    }
    let sdk_order =
        br#"{"method":"elicitation/create","params":{},"jsonrpc":"2.0","id":"10000000001"}"#;
    assert_eq!(sniff_id(sdk_order), None);
    let answer = br#"{"jsonrpc":"2.0","id":"10000000001","result":{"#;
    assert_eq!(
        sniff_id(answer),
        Some(1),
        "the same id in an answer is ours"
    );
}

/// Found by `cargo fuzz run jsonrpc` in 5,968 runs: a message with a duplicate key was
/// dropped as malformed (serde's derive refuses duplicates), where `JSON.parse` — the
/// reference — takes the last one.
#[test]
fn the_last_of_duplicate_keys_wins() {
    check_message(
        br#"{"json2":"2.0","id":"1","requltsonrpc":"2.0","id":"1","reqult":{"tools":[]}}"#,
    );
    match classify(br#"{"id":"1","result":1,"id":"2","result":{"a":2},"method":null}"#) {
        Incoming::Response {
            id,
            outcome: Ok(Some(r)),
        } => assert_eq!((id.get(), r.get()), ("\"2\"", "{\"a\":2}")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        classify(br#"{"id":"1","method":"a","id":null}"#),
        Incoming::Notification { .. }
    ));
}

/// Found by `cargo fuzz run jsonrpc` in 53,549 runs: `"params": null` (and `"result": null`)
/// were read as missing, so JavaScript got `undefined` where `JSON.parse` gives `null`.
#[test]
fn null_is_a_value() {
    check_message(b"null\t\r");
    match classify(br#"{"id":"1","result":null}"#) {
        Incoming::Response {
            outcome: Ok(Some(r)),
            ..
        } => assert_eq!(r.get(), "null"),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        classify(br#"{"method":"n","params":null}"#),
        Incoming::Notification { params: Some(p), .. } if p.get() == "null"
    ));
    assert!(matches!(
        classify(br#"{"id":"1","result":{},"error":null}"#),
        Incoming::Response {
            outcome: Ok(Some(_)),
            ..
        }
    ));
}

/// Found by a hand-written seed of the `jsonrpc` target (not by the fuzzer in 660,000 runs):
/// an id written with escapes (`"\u0031"`, the string `1` to `JSON.parse`) did not match.
#[test]
fn escaped_ids_match() {
    check_message(br#"{"jsonrpc":"2.0","id":"\u0031\u0032","result":{}}"#);
    let id = RawValue::from_string(r#""1000000001\u0032""#.into()).unwrap();
    assert_eq!(our_id(&id), Some(12));
    let id = RawValue::from_string(r#""\u0031\u0032""#.into()).unwrap();
    assert_eq!(
        our_id(&id),
        Some(12),
        "request 12 as a number id, echoed as a string"
    );
    let id = RawValue::from_string(r#""\u0030\u0031""#.into()).unwrap();
    assert_eq!(our_id(&id), None, "01 is not one of ours");
}

/// Found by `cargo fuzz run jsonrpc` after 2.5 million runs: with duplicate `method` keys,
/// one that was not a string made the message malformed even when the last one, the one
/// `JSON.parse` keeps, was a string.
#[test]
fn only_the_last_method_counts() {
    check_message(br#"{"[[[dt":{},"method":"0","r":{},"metho[[[[[[[]][[[[[[[[[[[[[[[[[[[[[[[[[[[[[[lt":{},"method":{},"method":"x"}"#);
    assert!(matches!(
        classify(br#"{"method":5,"method":"x"}"#),
        Incoming::Notification { method, .. } if method == "x"
    ));
    assert!(matches!(
        classify(br#"{"method":"x","method":5}"#),
        Incoming::Malformed
    ));
}
