//! `WWW-Authenticate` parsing (SPEC 10.1 step 1; RFC 9110 §11.6.1, RFC 6750 §3): the header
//! may hold several challenges (`Basic realm="x", Bearer error="insufficient_scope", ...`); the
//! `Bearer` one (scheme case-insensitive) is selected. Its parameters are `name=value` pairs,
//! comma-separated, names case-insensitive, in any order; a value is a token or a quoted string
//! whose commas are part of the value and whose `\`-escapes are undone. Malformed input never
//! fails: what can be read is read.

/// The parameters of a `Bearer` challenge the OAuth client uses.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct BearerChallenge {
    /// `resource_metadata`: the protected-resource metadata URL (RFC 9728 §5.1).
    pub resource_metadata: Option<String>,
    /// `scope`, split on spaces; `None` when absent or empty.
    pub scope: Option<Vec<String>>,
    /// `error` (`invalid_token`, `insufficient_scope`, ...).
    pub error: Option<String>,
}

/// One challenge: its scheme as sent and its parameters (names lower-cased, in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Challenge {
    /// The auth scheme, as sent.
    pub scheme: String,
    /// The `name=value` parameters; a token68 (as in `Basic abc==`) is skipped.
    pub params: Vec<(String, String)>,
}

impl Challenge {
    /// The first value of parameter `name` (lower-case).
    pub fn param(&self, name: &str) -> Option<&str> {
        self.params
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// The `Bearer` challenge of a `WWW-Authenticate` value (several header lines joined with `, `
/// are one value), if there is one.
pub fn bearer(header: &str) -> Option<BearerChallenge> {
    let challenge = parse(header)
        .into_iter()
        .find(|c| c.scheme.eq_ignore_ascii_case("bearer"))?;
    let scope = challenge
        .param("scope")
        .map(|s| {
            s.split_ascii_whitespace()
                .map(str::to_owned)
                .collect::<Vec<_>>()
        })
        .filter(|s| !s.is_empty());
    Some(BearerChallenge {
        resource_metadata: challenge
            .param("resource_metadata")
            .map(str::to_owned)
            .filter(|s| !s.is_empty()),
        scope,
        error: challenge.param("error").map(str::to_owned),
    })
}

/// Every challenge of a `WWW-Authenticate` value, in order.
pub fn parse(header: &str) -> Vec<Challenge> {
    let mut p = Parser {
        s: header.as_bytes(),
        i: 0,
    };
    let mut out = Vec::new();
    loop {
        p.skip(|b| b == b',' || is_ws(b));
        if p.done() {
            return out;
        }
        let scheme = p.word();
        if scheme.is_empty() {
            p.i += 1; // a stray character: skip it
            continue;
        }
        let mut challenge = Challenge {
            scheme,
            params: Vec::new(),
        };
        p.params(&mut challenge.params);
        out.push(challenge);
    }
}

struct Parser<'a> {
    s: &'a [u8],
    i: usize,
}

fn is_ws(b: u8) -> bool {
    b == b' ' || b == b'\t'
}

/// RFC 9110 `tchar`, plus `/` so that a token68 reads as one word.
fn is_word(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~/".contains(&b)
}

impl Parser<'_> {
    fn done(&self) -> bool {
        self.i >= self.s.len()
    }

    fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn skip(&mut self, f: impl Fn(u8) -> bool) {
        while self.peek().is_some_and(&f) {
            self.i += 1;
        }
    }

    fn word(&mut self) -> String {
        let start = self.i;
        self.skip(is_word);
        String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
    }

    /// The parameters of one challenge; stops before the next challenge's scheme.
    fn params(&mut self, params: &mut Vec<(String, String)>) {
        let mut first = true;
        loop {
            let before = self.i;
            self.skip(|b| b == b',' || is_ws(b));
            let after_comma = self.s[before..self.i].contains(&b',');
            if self.done() {
                return;
            }
            let start = self.i;
            let name = self.word();
            if name.is_empty() {
                // Not a parameter (a stray quote or `=`): skip one character.
                self.i += 1;
                continue;
            }
            self.skip(is_ws);
            let is_param = self.peek() == Some(b'=') && !self.token68_padding();
            if !is_param {
                if first && !after_comma {
                    // A token68 (`Basic YWxh...==`): skip it and its padding.
                    self.skip(|b| b == b'=');
                    first = false;
                    continue;
                }
                self.i = start; // the next challenge's scheme
                return;
            }
            first = false;
            self.i += 1; // '='
            self.skip(is_ws);
            let value = if self.peek() == Some(b'"') {
                self.quoted()
            } else {
                // Lenient: an unquoted value runs to the next comma or space (URLs sent
                // unquoted keep their `:` and `/`).
                let start = self.i;
                self.skip(|b| b != b',' && !is_ws(b));
                String::from_utf8_lossy(&self.s[start..self.i]).into_owned()
            };
            params.push((name.to_ascii_lowercase(), value));
        }
    }

    /// At `=`: whether it is a token68's padding (`==`, or `=` then the end or a comma) rather
    /// than a parameter's `=`.
    fn token68_padding(&self) -> bool {
        let mut j = self.i;
        let mut count = 0;
        while self.s.get(j) == Some(&b'=') {
            j += 1;
            count += 1;
        }
        while self.s.get(j).is_some_and(|&b| is_ws(b)) {
            j += 1;
        }
        count > 1 || matches!(self.s.get(j), None | Some(b','))
    }

    /// A quoted string at the cursor, `\`-escapes undone; an unterminated one runs to the end.
    fn quoted(&mut self) -> String {
        self.i += 1; // opening quote
        let mut out = Vec::new();
        while let Some(b) = self.peek() {
            self.i += 1;
            match b {
                b'"' => break,
                b'\\' => {
                    if let Some(next) = self.peek() {
                        out.push(next);
                        self.i += 1;
                    }
                }
                _ => out.push(b),
            }
        }
        String::from_utf8_lossy(&out).into_owned()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scopes(list: &[&str]) -> Option<Vec<String>> {
        Some(list.iter().map(|s| s.to_string()).collect())
    }

    #[test]
    fn error_first_last_or_absent() {
        let first = bearer(
            r#"Bearer error="insufficient_scope", scope="mcp:basic mcp:write", resource_metadata="http://h/.well-known/oauth-protected-resource/mcp""#,
        )
        .unwrap();
        assert_eq!(first.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(first.scope, scopes(&["mcp:basic", "mcp:write"]));
        assert_eq!(
            first.resource_metadata.as_deref(),
            Some("http://h/.well-known/oauth-protected-resource/mcp")
        );
        let last =
            bearer(r#"Bearer scope="mcp:admin", resource_metadata="http://h/x", error="insufficient_scope""#)
                .unwrap();
        assert_eq!(last.error.as_deref(), Some("insufficient_scope"));
        assert_eq!(last.scope, scopes(&["mcp:admin"]));
        let absent = bearer(r#"Bearer resource_metadata="http://h/x""#).unwrap();
        assert_eq!(absent.error, None);
        assert_eq!(absent.scope, None);
        assert_eq!(bearer("Bearer").unwrap(), BearerChallenge::default());
    }

    #[test]
    fn quoted_strings_with_commas_and_escapes() {
        let c =
            bearer(r#"Bearer realm="a, b", error_description="say \"no\", then \\ go", scope="x""#)
                .unwrap();
        assert_eq!(c.scope, scopes(&["x"]));
        let all = parse(r#"Bearer realm="a, b", error_description="say \"no\", then \\ go""#);
        assert_eq!(all.len(), 1);
        assert_eq!(all[0].param("realm"), Some("a, b"));
        assert_eq!(
            all[0].param("error_description"),
            Some(r#"say "no", then \ go"#)
        );
    }

    #[test]
    fn names_and_schemes_are_case_insensitive() {
        let c =
            bearer(r#"bEaReR Error="invalid_token", SCOPE="a  b", Resource_Metadata=http://h/m"#)
                .unwrap();
        assert_eq!(c.error.as_deref(), Some("invalid_token"));
        assert_eq!(c.scope, scopes(&["a", "b"]));
        assert_eq!(c.resource_metadata.as_deref(), Some("http://h/m"));
    }

    #[test]
    fn several_challenges_and_token68() {
        let header = r#"Basic YWxhZGRpbjpvcGVuc2VzYW1l==, Newauth realm="apps", type=1, title="Login to \"apps\"", Bearer scope="s1 s2", error=insufficient_scope"#;
        let all = parse(header);
        let schemes: Vec<_> = all.iter().map(|c| c.scheme.as_str()).collect();
        assert_eq!(schemes, ["Basic", "Newauth", "Bearer"]);
        assert!(all[0].params.is_empty());
        assert_eq!(all[1].param("type"), Some("1"));
        assert_eq!(all[1].param("title"), Some(r#"Login to "apps""#));
        let c = bearer(header).unwrap();
        assert_eq!(c.scope, scopes(&["s1", "s2"]));
        assert_eq!(c.error.as_deref(), Some("insufficient_scope"));
        assert!(bearer(r#"Basic realm="x""#).is_none());
        assert!(bearer("").is_none());
    }

    #[test]
    fn duplicates_keep_the_first_and_junk_is_survived() {
        let c = bearer(r#"Bearer error="a", error="b", scope="""#).unwrap();
        assert_eq!(c.error.as_deref(), Some("a"));
        assert_eq!(c.scope, None);
        let c = bearer(r#"Bearer ,, = "x", scope="unterminated"#).unwrap();
        assert_eq!(c.scope, scopes(&["unterminated"]));
        assert!(parse("\"\",,==").iter().all(|c| c.params.is_empty()));
    }
}
