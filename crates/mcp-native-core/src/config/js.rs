//! The JavaScript semantics the reference's rules are written in: truthiness, `typeof`,
//! `Number(string)`, `String(value)`, and the whitespace of `\s` and `trim()`.

use serde_json::{Number, Value};

/// JavaScript truthiness of an optional JSON value (`None` is `undefined`).
pub fn truthy(v: Option<&Value>) -> bool {
    match v {
        None | Some(Value::Null) | Some(Value::Bool(false)) => false,
        Some(Value::String(s)) => !s.is_empty(),
        Some(Value::Number(n)) => n.as_f64().is_some_and(|f| f != 0.0 && !f.is_nan()),
        Some(_) => true,
    }
}

/// `typeof value` (JSON `null` and arrays are `"object"`, as in JavaScript).
pub fn type_of(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Null | Value::Array(_) | Value::Object(_) => "object",
    }
}

/// The characters of JavaScript's `\s` class, which are also what `trim()` and `Number()` strip.
/// (Not Rust's `char::is_whitespace`: that has U+0085 and lacks U+FEFF.)
pub fn is_space(c: char) -> bool {
    matches!(
        c,
        '\t' | '\n' | '\u{b}' | '\u{c}' | '\r' | ' ' | '\u{a0}' | '\u{1680}' | '\u{2000}'
            ..='\u{200a}'
                | '\u{2028}'
                | '\u{2029}'
                | '\u{202f}'
                | '\u{205f}'
                | '\u{3000}'
                | '\u{feff}'
    )
}

/// `Number(s)`: `NaN` when `s` is not a numeric string.
pub fn number_from_string(s: &str) -> f64 {
    let t = s.trim_matches(is_space);
    if t.is_empty() {
        return 0.0;
    }
    let bytes = t.as_bytes();
    if bytes.len() > 2 && bytes[0] == b'0' {
        let radix = match bytes[1] {
            b'x' | b'X' => 16,
            b'o' | b'O' => 8,
            b'b' | b'B' => 2,
            _ => 0,
        };
        if radix != 0 {
            let mut value = 0.0f64;
            for c in t[2..].chars() {
                match c.to_digit(radix) {
                    Some(d) => value = value * f64::from(radix) + f64::from(d),
                    None => return f64::NAN,
                }
            }
            return value;
        }
    }
    let (sign, unsigned) = match bytes[0] {
        b'+' => (1.0, &t[1..]),
        b'-' => (-1.0, &t[1..]),
        _ => (1.0, t),
    };
    if unsigned == "Infinity" {
        return sign * f64::INFINITY;
    }
    if !is_decimal_literal(unsigned) {
        return f64::NAN;
    }
    unsigned.parse::<f64>().map_or(f64::NAN, |f| sign * f)
}

/// `StrUnsignedDecimalLiteral` without `Infinity`: digits with an optional fraction (at least
/// one digit in all) and an optional exponent.
fn is_decimal_literal(s: &str) -> bool {
    let b = s.as_bytes();
    let digits = |mut i: usize| {
        let start = i;
        while i < b.len() && b[i].is_ascii_digit() {
            i += 1;
        }
        (i, i - start)
    };
    let (mut i, int_digits) = digits(0);
    let mut frac_digits = 0;
    if i < b.len() && b[i] == b'.' {
        (i, frac_digits) = digits(i + 1);
    }
    if int_digits + frac_digits == 0 {
        return false;
    }
    if i < b.len() && (b[i] == b'e' || b[i] == b'E') {
        i += 1;
        if i < b.len() && (b[i] == b'+' || b[i] == b'-') {
            i += 1;
        }
        let exp_digits;
        (i, exp_digits) = digits(i);
        if exp_digits == 0 {
            return false;
        }
    }
    i == b.len()
}

/// `String(n)` for a number.
pub fn number_text(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if f == 0.0 {
        return "0".into();
    }
    let abs = f.abs();
    if (1e-6..1e21).contains(&abs) {
        // Rust prints the shortest round-trip digits without an exponent, as JS does here.
        return format!("{f}");
    }
    let e = format!("{f:e}");
    match e.split_once('e') {
        Some((m, exp)) if !exp.starts_with('-') => format!("{m}e+{exp}"),
        _ => e,
    }
}

/// A JSON number for `f`: an integer when `f` is integral (so `5000` stays `5000`, not `5000.0`).
pub fn number_value(f: f64) -> Value {
    if f.fract() == 0.0 && f.abs() < 9_007_199_254_740_992.0 {
        return Value::Number(Number::from(f as i64));
    }
    Number::from_f64(f).map_or(Value::Null, Value::Number)
}

/// `String(value)`: numbers as JavaScript prints them, arrays joined with `,`, objects as
/// `[object Object]`.
pub fn to_js_string(v: &Value) -> String {
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.as_f64().map_or_else(|| n.to_string(), number_text),
        Value::String(s) => s.clone(),
        Value::Array(items) => items
            .iter()
            .map(|item| match item {
                Value::Null => String::new(),
                other => to_js_string(other),
            })
            .collect::<Vec<_>>()
            .join(","),
        Value::Object(_) => "[object Object]".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn number_follows_javascript() {
        let cases: [(&str, f64); 14] = [
            ("5000", 5000.0),
            (" 12\n", 12.0),
            ("", 0.0),
            ("  ", 0.0),
            ("1e3", 1000.0),
            ("-2.5", -2.5),
            (".5", 0.5),
            ("5.", 5.0),
            ("0x10", 16.0),
            ("0b101", 5.0),
            ("0o17", 15.0),
            ("+Infinity", f64::INFINITY),
            ("-Infinity", f64::NEG_INFINITY),
            ("\u{feff}7", 7.0),
        ];
        for (s, want) in cases {
            assert_eq!(number_from_string(s), want, "Number({s:?})");
        }
        for s in [
            "abc", "1_000", "inf", "NaN", "infinity", "0x", "-0x10", "1e", ".", "1..2", "5ms",
        ] {
            assert!(number_from_string(s).is_nan(), "Number({s:?}) is NaN");
        }
    }

    #[test]
    fn printing_follows_javascript() {
        assert_eq!(number_text(0.0), "0");
        assert_eq!(number_text(-0.0), "0");
        assert_eq!(number_text(-5.0), "-5");
        assert_eq!(number_text(1.5), "1.5");
        assert_eq!(number_text(1e21), "1e+21");
        assert_eq!(number_text(1e-7), "1e-7");
        assert_eq!(number_text(f64::NAN), "NaN");
        assert_eq!(to_js_string(&json!([1, null, "a"])), "1,,a");
        assert_eq!(to_js_string(&json!({"a": 1})), "[object Object]");
        assert_eq!(to_js_string(&json!(2.0)), "2");
        assert_eq!(number_value(5000.0), json!(5000));
        assert_eq!(number_value(0.25), json!(0.25));
    }

    #[test]
    fn truthiness_and_typeof() {
        assert!(!truthy(None));
        assert!(!truthy(Some(&json!(""))));
        assert!(!truthy(Some(&json!(0))));
        assert!(!truthy(Some(&json!(0.0))));
        assert!(truthy(Some(&json!([]))));
        assert!(truthy(Some(&json!({}))));
        assert!(truthy(Some(&json!("0"))));
        assert_eq!(type_of(&json!(null)), "object");
        assert_eq!(type_of(&json!([1])), "object");
        assert_eq!(type_of(&json!(true)), "boolean");
    }
}
