//! A quick look at a large message, without parsing it: is it the answer to one of our requests
//! (not an error), so that its consumer can parse the message itself, once (the binding hands such
//! answers to JavaScript as they came, for one `JSON.parse` of the whole message).

use super::our_id_text;

/// The id of the request that `line` answers (with a result, or none: `undefined` to
/// JavaScript), found by a scan of the message's top level that tracks strings and nesting but
/// checks no tokens (values are skipped at memory speed, not validated). `Some(id)` only when
/// `line` is one object — `{` its first byte, its closing `}` the last, JSON white space around
/// them aside — whose last `id` is one of ours ([`super::our_id`]), with no `error` key and no
/// `method` key but `null`: then, if `JSON.parse` of the same text succeeds, it reads the same
/// answer as [`super::classify`] does (`Response { id, outcome: Ok(result) }`). Anything else,
/// or any doubt (an escaped key), is `None`: the message goes the usual way.
pub fn skim_answer(line: &[u8]) -> Option<u64> {
    let start = skip_ws(line, 0);
    let end = line.len() - line.iter().rev().take_while(|b| is_ws(**b)).count();
    let line = &line[start..end.max(start)];
    if line.first() != Some(&b'{') {
        return None;
    }
    let mut id: Option<&[u8]> = None;
    let mut i = skip_ws(line, 1);
    if line.get(i) == Some(&b'}') {
        return None; // `{}`
    }
    loop {
        if line.get(i) != Some(&b'"') {
            return None;
        }
        let key_end = string_end(line, i)?;
        let key = &line[i + 1..key_end];
        if key.contains(&b'\\') {
            return None;
        }
        i = skip_ws(line, key_end + 1);
        if line.get(i) != Some(&b':') {
            return None;
        }
        let start = skip_ws(line, i + 1);
        i = value_end(line, start)?;
        let value = &line[start..i];
        match key {
            b"id" => id = Some(value),
            b"error" => return None,
            b"method" if value != b"null" => return None,
            _ => {}
        }
        i = skip_ws(line, i);
        match line.get(i)? {
            b',' => i = skip_ws(line, i + 1),
            b'}' if i + 1 == line.len() => break,
            _ => return None,
        }
    }
    our_id_text(std::str::from_utf8(id?).ok()?)
}

/// JSON's white space (not form feed or vertical tab, which `trim_ascii` also strips).
fn is_ws(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

fn skip_ws(line: &[u8], mut i: usize) -> usize {
    while i < line.len() && is_ws(line[i]) {
        i += 1;
    }
    i
}

/// The index of the closing quote of the string that opens at `start`.
fn string_end(line: &[u8], start: usize) -> Option<usize> {
    let mut i = start + 1;
    loop {
        i += memchr::memchr2(b'"', b'\\', &line[i.min(line.len())..])?;
        if line[i] == b'"' {
            return Some(i);
        }
        i += 2; // an escape: the next byte is never the end
    }
}

/// The end (exclusive) of the value that starts at `start`.
fn value_end(line: &[u8], start: usize) -> Option<usize> {
    match line.get(start)? {
        b'"' => Some(string_end(line, start)? + 1),
        b'{' | b'[' => {
            let mut depth = 0usize;
            let mut i = start;
            loop {
                i += line[i..]
                    .iter()
                    .position(|b| matches!(b, b'"' | b'{' | b'}' | b'[' | b']'))?;
                match line[i] {
                    b'"' => {
                        i = string_end(line, i)? + 1;
                        continue;
                    }
                    b'{' | b'[' => depth += 1,
                    _ => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(i + 1);
                        }
                    }
                }
                i += 1;
            }
        }
        _ => {
            let len = line[start..]
                .iter()
                .position(|b| matches!(b, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))?;
            (len > 0).then_some(start + len)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::skim_answer;

    #[test]
    fn answers_with_a_result_are_found() {
        let ok = [
            (
                r#"{"jsonrpc":"2.0","id":"10000000007","result":{"content":[{"type":"text","text":"a\"}b"}]}}"#,
                7,
            ),
            (
                r#"{"result":[1,{"id":3},"]"],"id":10000000007,"jsonrpc":"2.0"}"#,
                7,
            ),
            (
                r#"{ "id" : 1 , "id" : "10000000012" , "result" : null , "method" : null }"#,
                12,
            ),
            (r#"{"id":10000000005e0}"#, 5),
            // JSON white space around the object, as JSON.parse allows it.
            (" \t\r\n{\"id\":\"10000000007\",\"result\":{}} \n", 7),
        ];
        for (line, id) in ok {
            assert_eq!(skim_answer(line.as_bytes()), Some(id), "{line}");
        }
    }

    #[test]
    fn anything_else_goes_the_usual_way() {
        let other = [
            r#"{"jsonrpc":"2.0","id":"10000000007","error":{"code":1,"message":"x"}}"#,
            r#"{"jsonrpc":"2.0","id":"10000000007","method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"id":"10000000007"}}"#,
            "{\"id\":\"10000000007\",\"result\":{}}\u{c}",
            "\u{b}{\"id\":\"10000000007\",\"result\":{}}",
            " ",
            r#"{"id":"10000000007","result":{}}x"#,
            r#"{"id":"10000000007","result":{}"#,
            r#"{"id":"10000000007","result":"#,
            r#"{"i\u0064":"10000000007","result":{}}"#,
            r#"{"id":"x10000000007","result":{}}"#,
            r#"{"id":null,"result":{}}"#,
            r#"{"id":"10000000007","result":"unterminated}"#,
            r#"{}"#,
            r#"[{"id":"10000000007","result":{}}]"#,
            "\u{feff}{\"id\":\"10000000007\",\"result\":{}}",
            "",
        ];
        for line in other {
            assert_eq!(skim_answer(line.as_bytes()), None, "{line}");
        }
    }
}
