//! JSONC (JSON with comments and trailing commas, as VS Code reads `.vscode/mcp.json`) turned
//! into strict JSON text for `serde_json`: comments become spaces (newlines kept, so error line
//! numbers still point into the original) and a comma followed only by whitespace and then `}` or
//! `]` becomes a space. Strings are copied untouched. Linear in the input.

/// `text` with comments and trailing commas blanked out.
pub fn to_json(text: &str) -> String {
    let without_comments = strip_comments(text);
    strip_trailing_commas(&without_comments)
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    let mut in_string = false;
    while let Some(c) = chars.next() {
        if in_string {
            out.push(c);
            match c {
                '\\' => {
                    if let Some(escaped) = chars.next() {
                        out.push(escaped);
                    }
                }
                '"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match (c, chars.peek()) {
            ('"', _) => {
                in_string = true;
                out.push(c);
            }
            ('/', Some('/')) => {
                // A line comment runs to the end of the line; the newline stays.
                for skipped in chars.by_ref() {
                    if skipped == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            ('/', Some('*')) => {
                chars.next();
                out.push_str("  ");
                let mut star = false;
                for skipped in chars.by_ref() {
                    if star && skipped == '/' {
                        out.push(' ');
                        break;
                    }
                    star = skipped == '*';
                    out.push(if skipped == '\n' { '\n' } else { ' ' });
                }
            }
            _ => out.push(c),
        }
    }
    out
}

fn strip_trailing_commas(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut in_string = false;
    let mut escaped = false;
    let mut copied = 0;
    for (i, &c) in b.iter().enumerate() {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match c {
            b'"' => in_string = true,
            b',' => {
                // Stops at the first byte that is not JSON whitespace: O(1) amortised per comma.
                let next = b[i + 1..]
                    .iter()
                    .find(|&&n| !matches!(n, b' ' | b'\t' | b'\n' | b'\r'));
                if matches!(next, Some(b'}') | Some(b']')) {
                    out.push_str(&text[copied..i]);
                    out.push(' ');
                    copied = i + 1;
                }
            }
            _ => {}
        }
    }
    out.push_str(&text[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    fn parse(text: &str) -> Value {
        serde_json::from_str(&to_json(text)).unwrap_or_else(|e| panic!("{text}: {e}"))
    }

    #[test]
    fn comments_and_trailing_commas_go_strings_stay() {
        let text = r#"{
  // the servers
  "servers": {
    "a": { "url": "https://h//x", /* inline */ "type": "http", },
    "b": { "args": ["/*", "//", "a\"//b", ], },
  },
  /* multi
     line */
}"#;
        assert_eq!(
            parse(text),
            json!({"servers": {
                "a": {"url": "https://h//x", "type": "http"},
                "b": {"args": ["/*", "//", "a\"//b"]}
            }})
        );
    }

    #[test]
    fn line_numbers_survive_and_bad_input_stays_bad() {
        let err =
            serde_json::from_str::<Value>(&to_json("// one\n/* two\n */\n{ x }")).unwrap_err();
        assert_eq!(err.line(), 4);
        assert!(serde_json::from_str::<Value>(&to_json("[1,,]")).is_err());
        assert!(serde_json::from_str::<Value>(&to_json("[,1]")).is_err());
        assert_eq!(to_json("/* unterminated"), " ".repeat(15));
        assert_eq!(parse("[1, 2 ,\n\t]"), json!([1, 2]));
        assert_eq!(parse(r#"["a\\", ]"#), json!(["a\\"]));
    }
}
