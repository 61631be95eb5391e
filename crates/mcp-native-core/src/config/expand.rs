//! `${VAR}` / `${VAR:-default}` expansion (SPEC 7.5), against an environment passed in (the JS
//! side hands over `process.env`; nothing here reads `std::env`).
//!
//! The rule is the reference's regex `/\$\{([^}:]+)(?::-([^}]*))?\}/g` applied in one
//! left-to-right pass: a match becomes the variable's value if it is defined (empty included),
//! else the default of the `:-` form (possibly empty), else stays as written. `$NAME` and
//! `${NAME:default}` are never expanded, and a substituted value is not expanded again.

use std::borrow::Cow;

use serde_json::Value;

use super::EnvVars;

/// `s` with every `${NAME}` / `${NAME:-default}` replaced.
pub fn expand_str<'a>(s: &'a str, env: &EnvVars) -> Cow<'a, str> {
    if !s.contains("${") {
        return Cow::Borrowed(s);
    }
    let b = s.as_bytes();
    let mut out = String::with_capacity(s.len());
    // `copied`: everything before it is in `out`. `i`: where the next match is looked for.
    let (mut copied, mut i) = (0, 0);
    while let Some(at) = s[i..].find("${").map(|p| p + i) {
        match match_at(s, at) {
            Some(m) => {
                out.push_str(&s[copied..at]);
                match (env.get(m.name), m.default) {
                    (Some(value), _) => out.push_str(value),
                    (None, Some(default)) => out.push_str(default),
                    (None, None) => out.push_str(&s[at..m.end]),
                }
                copied = m.end;
                i = m.end;
            }
            // No match starting at this `$`: the next attempt starts one byte later (a `{`).
            None => i = at + 1,
        }
        if i >= b.len() {
            break;
        }
    }
    out.push_str(&s[copied..]);
    Cow::Owned(out)
}

struct Match<'a> {
    name: &'a str,
    default: Option<&'a str>,
    /// Byte offset just past the closing `}`.
    end: usize,
}

/// The match of the pattern at `at` (where `${` starts), if any. `}` and `:` are ASCII, so byte
/// scanning never splits a UTF-8 character.
fn match_at(s: &str, at: usize) -> Option<Match<'_>> {
    let b = s.as_bytes();
    let start = at + 2;
    let mut j = start;
    while j < b.len() && b[j] != b'}' && b[j] != b':' {
        j += 1;
    }
    if j == start || j >= b.len() {
        return None;
    }
    let name = &s[start..j];
    if b[j] == b'}' {
        return Some(Match {
            name,
            default: None,
            end: j + 1,
        });
    }
    // b[j] == ':' — only `:-default}` continues the match.
    if b.get(j + 1) != Some(&b'-') {
        return None;
    }
    let from = j + 2;
    let close = s[from..].find('}')? + from;
    Some(Match {
        name,
        default: Some(&s[from..close]),
        end: close + 1,
    })
}

/// Expands every string nested in `v` (object keys are left alone).
pub fn expand_deep(v: &mut Value, env: &EnvVars) {
    match v {
        Value::String(s) => {
            if let Cow::Owned(expanded) = expand_str(s, env) {
                *s = expanded;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|item| expand_deep(item, env)),
        Value::Object(map) => map.values_mut().for_each(|item| expand_deep(item, env)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn env(pairs: &[(&str, &str)]) -> EnvVars {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    #[test]
    fn the_acceptance_cases() {
        let e = env(&[("FOO", "bar")]);
        let mut v = json!(["${FOO}", "${NOPE}", "${NOPE:-d}", "$FOO"]);
        expand_deep(&mut v, &e);
        assert_eq!(v, json!(["bar", "${NOPE}", "d", "$FOO"]));
        let empty = env(&[("FOO", "")]);
        assert_eq!(expand_str("${FOO:-d}", &empty), "");
    }

    #[test]
    fn forms_that_are_not_expanded_and_edge_matches() {
        let e = env(&[("A", "1"), ("B", "${A}"), ("a${B", "weird")]);
        let cases = [
            ("${A:default}", "${A:default}"),
            ("${A:-x}", "1"),
            ("${Z:-}", ""),
            ("${Z:-a:b}", "a:b"),
            ("${}", "${}"),
            ("${", "${"),
            ("${A", "${A"),
            ("${Z:-x", "${Z:-x"),
            ("x${A}y${A}z", "x1y1z"),
            ("${B}", "${A}"),
            ("${Z:-${A}}", "${A}"),
            ("$${A}", "$1"),
            ("${a${B}", "weird"),
            ("${${A}}", "${${A}}"),
            ("é${A}ü", "é1ü"),
            ("${:-x}", "${:-x}"),
        ];
        for (input, want) in cases {
            assert_eq!(expand_str(input, &e), want, "{input}");
        }
    }

    #[test]
    fn deep_expansion_leaves_keys_and_other_values() {
        let e = env(&[("K", "v")]);
        let mut v = json!({"${K}": {"a": ["${K}", 1, null, true], "b": "${K}"}});
        expand_deep(&mut v, &e);
        assert_eq!(v, json!({"${K}": {"a": ["v", 1, null, true], "b": "v"}}));
    }
}
