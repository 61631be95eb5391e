use bytes::Bytes;
use serde_json::Value;

use super::{Step, Text, split_long_strings};
use crate::jsonrpc::properties::rebuild_split;

const TAG: &str = "5eed";

/// What JS does with a split (see [`rebuild_split`]).
fn rebuild(line: &str, min_len: usize) -> Option<Value> {
    let split = split_long_strings(
        &Bytes::copy_from_slice(line.as_bytes()),
        min_len,
        1 << 20,
        TAG,
    )?;
    Some(rebuild_split(&split, TAG).expect("the skeleton parses"))
}

/// `line` splits, and rebuilt it is what a plain parse gives.
fn same(line: &str, min_len: usize) -> usize {
    let split = split_long_strings(
        &Bytes::copy_from_slice(line.as_bytes()),
        min_len,
        1 << 20,
        TAG,
    )
    .unwrap_or_else(|| panic!("not split: {line}"));
    let expected: Value = serde_json::from_str(line).expect("valid JSON");
    assert_eq!(rebuild(line, min_len), Some(expected), "{line}");
    split.strings.len()
}

#[test]
fn a_long_ascii_string_is_cut_out_without_copying_from_a_line_with_its_own_buffer() {
    for len in [100, 1 << 20] {
        let text = "x".repeat(len);
        let line = format!(
            r#"{{"jsonrpc":"2.0","id":"3","result":{{"content":[{{"type":"text","text":"{text}"}}]}}}}"#
        );
        let bytes = Bytes::from(line.clone());
        let split = split_long_strings(&bytes, 64, 1 << 20, TAG).expect("split");
        assert_eq!(split.strings.len(), 1);
        let s = &split.strings[0];
        assert_eq!(
            s.path,
            [
                Step::Key("result".into()),
                Step::Key("content".into()),
                Step::Index(0),
                Step::Key("text".into())
            ]
        );
        let Text::Latin1(latin1) = &s.text else {
            panic!("not Latin-1: {:?}", s.text)
        };
        assert_eq!(&latin1[..], text.as_bytes());
        // The very bytes of a line of 1 MiB or more (a buffer of its own); a copy below.
        let at = line.find(&text).unwrap();
        assert_eq!(
            latin1.as_ptr() == bytes[at..].as_ptr(),
            len >= 1 << 20,
            "{len}"
        );
        assert_eq!(
            std::str::from_utf8(&split.skeleton).unwrap(),
            r#"{"jsonrpc":"2.0","id":"3","result":{"content":[{"type":"text","text":"\u00005eed:0"}]}}"#
        );
        same(&line, 64);
    }
}

#[test]
fn escapes_up_to_latin1_are_decoded() {
    let text = r#"line one\nline \"two\"\t\\ \/ \b\f\r caf\u00e9 \u00FF \u0000 end"#.repeat(3);
    let line = format!(r#"{{"id":1,"result":{{"text":"{text}"}}}}"#);
    assert_eq!(same(&line, 16), 1);
    let split = split_long_strings(&Bytes::from(line), 16, 1 << 20, TAG).unwrap();
    let Text::Latin1(latin1) = &split.strings[0].text else {
        panic!("not Latin-1")
    };
    assert!(latin1.contains(&0xe9));
    assert!(latin1.contains(&0));
}

#[test]
fn other_text_is_decoded_to_utf16() {
    let long = "u".repeat(40);
    for (text, expected) in [
        (format!("{long}\\u2603"), format!("{long}\u{2603}")),
        (
            format!("{long}\\ud83d\\ude00 and \\uD83D\\uDE00"),
            format!("{long}\u{1f600} and \u{1f600}"),
        ),
        (
            format!("{long}snow \u{2603}, raw \u{1f600}, \\\"quoted\\\" \u{e9}"),
            format!("{long}snow \u{2603}, raw \u{1f600}, \"quoted\" \u{e9}"),
        ),
        // Raw UTF-8 below U+0100 stays Latin-1.
        (format!("{long}caf\u{e9}"), format!("{long}caf\u{e9}")),
    ] {
        let line = format!(r#"{{"id":1,"result":{{"text":"{text}"}}}}"#);
        assert_eq!(same(&line, 16), 1, "{line}");
        let split = split_long_strings(&Bytes::from(line), 16, 1 << 20, TAG).unwrap();
        match &split.strings[0].text {
            Text::Latin1(bytes) => {
                assert!(expected.chars().all(|c| u32::from(c) < 0x100));
                let got: String = bytes.iter().map(|&b| char::from(b)).collect();
                assert_eq!(got, expected);
            }
            Text::Utf16(units) => {
                assert!(expected.chars().any(|c| u32::from(c) >= 0x100));
                assert_eq!(String::from_utf16(units).unwrap(), expected);
            }
        }
    }
}

#[test]
fn what_is_not_certain_stays_for_json_parse() {
    let long = "y".repeat(40);
    for text in [
        format!("{long}\\ud83d"), // a lone high surrogate (JSON.parse keeps it)
        format!("{long}\\ude00"), // a lone low one
        format!("{long}\\ud83d\\u0041"), // a high one followed by no low one
        format!("{long}\\ud83dx"), // nor by an escape
        format!("{long}\u{1}"),   // a raw control character: JSON.parse rejects it
        format!("{long}\\x41"),   // a bad escape
        format!("{long}\\u00G1"), // bad hex
        format!("{long}\\u00"),   // cut short
    ] {
        let line = format!(r#"{{"id":1,"result":{{"text":"{text}"}}}}"#);
        assert!(
            split_long_strings(&Bytes::from(line.clone()), 16, 1 << 20, TAG).is_none(),
            "{line}"
        );
    }
    // A short string is left; so is a long key.
    let line = format!(r#"{{"id":1,"result":{{"short":"abc","{long}":1}}}}"#);
    assert!(split_long_strings(&Bytes::from(line), 16, 1 << 20, TAG).is_none());
    // Bytes that are not UTF-8 (JS reads them as U+FFFD, with the whole answer).
    let mut line = format!(r#"{{"id":1,"result":{{"text":"{long}"#).into_bytes();
    line.extend_from_slice(b"\xff\xfe\"}}");
    assert!(split_long_strings(&Bytes::from(line), 16, 1 << 20, TAG).is_none());
}

#[test]
fn uncertain_and_long_strings_mix() {
    let long = "z".repeat(50);
    let line = format!(
        r#"{{"id":1,"result":{{"a":"{long}\u00e9","b":"{long}é","c":["{long}",{{"d":"{long}"}}],"e":"{long}\u2603"}}}}"#
    );
    assert_eq!(same(&line, 32), 5);
}

#[test]
fn paths_follow_nesting_arrays_and_escaped_keys() {
    let long = "q".repeat(40);
    let line = format!(
        concat!(
            r#" {{ "id" : 1 , "result" : [ 1 , true , null , -2.5e3 , [ ] , {{ }} , "s" , "#,
            r#"[ "{long}" , {{ "k\"ey\u00e9" : "{long}" , "ké" : [ [ "{long}" ] ] }} ] ] }} "#
        ),
        long = long
    );
    let split = split_long_strings(&Bytes::from(line.clone()), 32, 1 << 20, TAG).unwrap();
    let paths: Vec<_> = split.strings.iter().map(|s| s.path.clone()).collect();
    let key = |k: &str| Step::Key(k.into());
    assert_eq!(
        paths,
        [
            vec![key("result"), Step::Index(7), Step::Index(0)],
            vec![key("result"), Step::Index(7), Step::Index(1), key("k\"eyé")],
            vec![
                key("result"),
                Step::Index(7),
                Step::Index(1),
                key("ké"),
                Step::Index(0),
                Step::Index(0)
            ],
        ]
    );
    same(&line, 32);
}

#[test]
fn a_duplicate_key_keeps_json_parse_semantics() {
    let long = "d".repeat(40);
    // The later value wins, whether it is long or not.
    for line in [
        format!(r#"{{"id":1,"result":{{"t":"{long}","t":"short"}}}}"#),
        format!(r#"{{"id":1,"result":{{"t":"short","t":"{long}"}}}}"#),
        format!(r#"{{"id":1,"result":{{"t":"{long}","t":"{long}x"}}}}"#),
        format!(r#"{{"id":1,"result":{{"t":"{long}","t":"\u0000{TAG}:1"}}}}"#),
        format!(r#"{{"id":1,"result":{{"t":"{long}","t":"\u0000{TAG}:0"}}}}"#),
    ] {
        let expected: Value = serde_json::from_str(&line).unwrap();
        let rebuilt = rebuild(&line, 32).expect("split");
        // The one forged placeholder that can match: the server would have to know the tag.
        if line.ends_with(&format!("{TAG}:0\"}}}}")) {
            assert_eq!(rebuilt["result"]["t"], Value::String(long.clone()));
        } else {
            assert_eq!(rebuilt, expected, "{line}");
        }
    }
}

#[test]
fn structure_it_cannot_follow_is_not_split() {
    let long = "w".repeat(40);
    for line in [
        format!(r#"{{"id":1,"result":"{long}"}} trailing"#),
        format!(r#"{{"id":1,"result":["{long}"}}"#),
        format!(r#"{{"id":1,"result":{{"a":"{long}"]]"#),
        format!(r#"{{"id":1,"result":{{"a" "{long}"}}}}"#),
        format!(r#"{{"id":1,"result":{{"a":"{long}""#),
        format!(r#"{{"id":1,"result":{{"a":"{long}"#),
        format!(r#"{{"id":1,"result":{{a:"{long}"}}}}"#),
        format!(r#"{{"id":1,"result":{{"a":,"b":"{long}"}}}}"#),
        format!(r#""{long}""#),
        String::new(),
    ] {
        assert!(
            split_long_strings(&Bytes::from(line.clone()), 16, 1 << 20, TAG).is_none(),
            "{line}"
        );
    }
}

#[test]
fn deep_or_long_keyed_strings_stay_so_that_paths_stay_small() {
    let long = "p".repeat(40);
    let nest = |depth: usize, key: &str| {
        let mut line = String::from(r#"{"id":1,"result":"#);
        for _ in 0..depth - 1 {
            line.push_str(&format!(r#"{{"{key}":"#));
        }
        line.push_str(&format!(r#"["{long}","{long}"]"#));
        line.push_str(&"}".repeat(depth));
        line
    };
    // result + 30 objects + the array: 32 deep, cut; one more, left.
    assert_eq!(same(&nest(31, "k"), 16), 2);
    let deep = nest(32, "k");
    assert!(split_long_strings(&Bytes::from(deep), 16, 1 << 20, TAG).is_none());
    // Keys of 1,024 bytes in all, cut; one more, left.
    let key = "k".repeat(1018 / 2);
    assert_eq!(same(&nest(3, &key), 16), 2);
    let key = "k".repeat(1020 / 2);
    assert!(split_long_strings(&Bytes::from(nest(3, &key)), 16, 1 << 20, TAG).is_none());
}

#[test]
fn a_message_mostly_of_small_values_is_left_whole() {
    let long = "v".repeat(100);
    let small = r#"{"a":1,"b":"two"},"#.repeat(20);
    let line = format!(r#"{{"id":1,"result":[{small}"{long}"]}}"#);
    let bytes = Bytes::from(line.clone());
    assert!(split_long_strings(&bytes, 64, 200, TAG).is_none());
    assert!(split_long_strings(&bytes, 64, 1000, TAG).is_some());
    same(&line, 64);
}

/// Random JSON texts with long strings of every kind, in random layouts: a split, rebuilt, is
/// always what a plain parse gives, and whatever is not valid JSON is never split.
#[test]
fn random_messages_rebuild_to_what_a_parse_gives() {
    let mut rng = 0x2545_f491_4f6c_dd1d_u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let pieces = [
        "a",
        "\\n",
        "\\\"",
        "\\u00e9",
        "\\u2603",
        "é",
        "\u{2603}",
        "\\\\",
        " ",
        "\\/",
        "Z",
        "\\ud83d\\ude00",
    ];
    let mut split_count = 0;
    for _ in 0..3000 {
        let mut text = String::new();
        gen_value(&mut text, &mut next, &pieces, 0);
        let ws = if next(2) == 0 { " " } else { "" };
        let line = format!("{{{ws}\"id\"{ws}:{ws}1{ws},\"result\":{text}}}");
        let parsed: Result<Value, _> = serde_json::from_str(&line);
        match (
            split_long_strings(&Bytes::from(line.clone()), 24, 1 << 20, TAG),
            parsed,
        ) {
            (Some(_), Ok(expected)) => {
                split_count += 1;
                assert_eq!(rebuild(&line, 24), Some(expected), "{line}");
            }
            (Some(split), Err(_)) => {
                // Splitting an invalid text is harmless only if the skeleton stays invalid.
                assert!(
                    serde_json::from_slice::<Value>(&split.skeleton).is_err(),
                    "{line}"
                );
            }
            (None, _) => {}
        }
    }
    assert!(split_count > 500, "only {split_count} of 3000 split");
}

fn gen_value(out: &mut String, next: &mut impl FnMut(u64) -> u64, pieces: &[&str], depth: u32) {
    match next(if depth > 3 { 3 } else { 6 }) {
        0 => out.push_str(["1", "-0.5", "true", "null", "\"s\""][next(5) as usize]),
        1 | 2 => {
            out.push('"');
            let plain = next(2) == 0;
            for _ in 0..next(40) {
                out.push_str(if plain {
                    "x"
                } else {
                    pieces[next(pieces.len() as u64) as usize]
                });
            }
            match next(50) {
                0 => out.push('\u{1}'),       // invalid JSON
                1 => out.push_str("\\ud800"), // a lone surrogate: JSON.parse keeps it
                _ => {}
            }
            out.push('"');
        }
        3 | 4 => {
            out.push('{');
            for i in 0..next(4) {
                if i > 0 {
                    out.push(',');
                }
                let key = ["k", "k", "\\u006b", "é", "__proto__", "a b"][next(6) as usize];
                out.push_str(&format!("\"{key}\":"));
                gen_value(out, next, pieces, depth + 1);
            }
            out.push('}');
        }
        _ => {
            out.push('[');
            for i in 0..next(4) {
                if i > 0 {
                    out.push_str(if next(3) == 0 { " , " } else { "," });
                }
                gen_value(out, next, pieces, depth + 1);
            }
            out.push(']');
        }
    }
}
