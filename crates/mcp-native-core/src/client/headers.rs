//! The request headers of the 2026-07-28 revision over Streamable HTTP (SPEC 9.1): `Mcp-Method`,
//! `Mcp-Name`, and the `Mcp-Param-{X}` headers that mirror tool arguments annotated with
//! `x-mcp-header` (SEP-2243) — which annotations are valid (a tool with an invalid one is left
//! out of `tools/list`), where each one reads its argument, and how a value is written.

use base64::Engine;
use serde_json::{Map, Value};

/// One `x-mcp-header` annotation of a tool: the header `Mcp-Param-{name}` carries the argument
/// at `path` (a chain of `properties` keys from the schema root).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The annotation's value (the header name's suffix), as written.
    pub name: String,
    /// The property keys from the root to the annotated property.
    pub path: Vec<String>,
}

/// RFC 9110 `tchar`.
fn is_tchar(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

/// Whether `schema` allows only `string`, `integer` or `boolean` values (a `type` array may add
/// `null`); a schema without `type` is taken as its values come (SPEC 9.5 leaves it open).
fn primitive_type(schema: &Map<String, Value>) -> bool {
    let allowed = |t: &Value| matches!(t.as_str(), Some("string" | "integer" | "boolean"));
    match schema.get("type") {
        None => true,
        Some(Value::Array(types)) => {
            types.iter().any(allowed)
                && types
                    .iter()
                    .all(|t| allowed(t) || t.as_str() == Some("null"))
        }
        Some(t) => allowed(t),
    }
}

/// Counts every `x-mcp-header` key anywhere in `value`.
fn count_annotations(value: &Value) -> usize {
    match value {
        Value::Object(map) => {
            usize::from(map.contains_key("x-mcp-header"))
                + map.values().map(count_annotations).sum::<usize>()
        }
        Value::Array(items) => items.iter().map(count_annotations).sum(),
        _ => 0,
    }
}

/// The `x-mcp-header` annotations of a tool's `inputSchema`, or why the tool is invalid (SPEC
/// 9.1: empty, not a token, duplicated case-insensitively, on a property that is not a string,
/// integer or boolean, or not reachable from the root through `properties` alone).
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    collect(input_schema, &mut Vec::new(), &mut found)?;
    if count_annotations(input_schema) != found.len() {
        return Err("an x-mcp-header annotation is not reachable through properties".into());
    }
    let mut seen: Vec<String> = Vec::new();
    for h in &found {
        let lower = h.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!("x-mcp-header \"{}\" is used twice", h.name));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn collect(
    schema: &Value,
    path: &mut Vec<String>,
    out: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    let Some(Value::Object(props)) = schema.get("properties") else {
        return Ok(());
    };
    for (key, prop) in props {
        path.push(key.clone());
        if let Value::Object(p) = prop
            && let Some(annotation) = p.get("x-mcp-header")
        {
            let name = annotation
                .as_str()
                .ok_or_else(|| format!("x-mcp-header of \"{key}\" is not a string"))?;
            if name.is_empty() {
                return Err(format!("x-mcp-header of \"{key}\" is empty"));
            }
            if !name.bytes().all(is_tchar) {
                return Err(format!("x-mcp-header \"{name}\" is not a header token"));
            }
            if !primitive_type(p) {
                return Err(format!(
                    "x-mcp-header \"{name}\" is on a property that is not a string, integer or boolean"
                ));
            }
            out.push(ParamHeader {
                name: name.to_owned(),
                path: path.clone(),
            });
        }
        collect(prop, path, out)?;
        path.pop();
    }
    Ok(())
}

/// Whether `value` can be sent as it is in a header (SPEC 9.1): printable ASCII with interior
/// spaces only, not shaped like the Base64 sentinel.
fn header_safe(value: &str) -> bool {
    let printable = value.bytes().all(|b| (0x20..0x7f).contains(&b));
    let padded = value.starts_with(' ') || value.ends_with(' ');
    let sentinel = value.starts_with("=?base64?") && value.ends_with("?=");
    printable && !padded && !sentinel
}

/// A header value: as it is when header-safe, else `=?base64?{Base64 of the UTF-8}?=`.
pub fn encode_value(value: &str) -> String {
    if header_safe(value) {
        value.to_owned()
    } else {
        let b64 = base64::engine::general_purpose::STANDARD.encode(value.as_bytes());
        format!("=?base64?{b64}?=")
    }
}

/// The text of an argument for its header: strings as they are, integers in decimal, booleans
/// as `true`/`false`; `None` (no header) for an absent or `null` value, objects and arrays.
fn argument_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => Some(match n.as_f64() {
            Some(f) if f.fract() == 0.0 && f.abs() < 9.007_199_254_740_992e15 => {
                format!("{}", f as i64)
            }
            _ => n.to_string(),
        }),
        _ => None,
    }
}

/// The `Mcp-Param-*` headers of one `tools/call`: each annotated argument that is present.
pub fn param_values(annotations: &[ParamHeader], arguments: &Value) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for h in annotations {
        let mut at = arguments;
        let mut present = true;
        for key in &h.path {
            match at.get(key) {
                Some(v) => at = v,
                None => {
                    present = false;
                    break;
                }
            }
        }
        if let Some(text) = present.then(|| argument_text(at)).flatten() {
            out.push((format!("Mcp-Param-{}", h.name), encode_value(&text)));
        }
    }
    out
}

/// `Mcp-Method` and, for `tools/call` and `prompts/get` (`name`) or `resources/read` (`uri`),
/// `Mcp-Name`.
pub fn standard_headers(method: &str, params: &Map<String, Value>) -> Vec<(String, String)> {
    let mut out = vec![("Mcp-Method".to_owned(), method.to_owned())];
    let key = match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    };
    if let Some(name) = key.and_then(|k| params.get(k)).and_then(Value::as_str) {
        out.push(("Mcp-Name".to_owned(), encode_value(name)));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema(props: Value) -> Value {
        json!({ "type": "object", "properties": props })
    }

    #[test]
    fn valid_annotations_and_their_paths() {
        let s = schema(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "opts": { "type": "object", "properties": { "debug": { "type": "boolean", "x-mcp-header": "Debug" } } },
            "n": { "type": ["integer", "null"], "x-mcp-header": "Priority" },
            "plain": { "type": "number" }
        }));
        let h = param_headers(&s).unwrap();
        assert_eq!(
            h,
            vec![
                ParamHeader {
                    name: "Region".into(),
                    path: vec!["region".into()]
                },
                ParamHeader {
                    name: "Debug".into(),
                    path: vec!["opts".into(), "debug".into()]
                },
                ParamHeader {
                    name: "Priority".into(),
                    path: vec!["n".into()]
                },
            ]
        );
    }

    #[test]
    fn every_invalid_annotation_of_the_suite_is_refused() {
        let bad = [
            json!({ "a": { "type": "string", "x-mcp-header": "" } }),
            json!({ "a": { "type": "object", "x-mcp-header": "A" } }),
            json!({ "a": { "type": "array", "x-mcp-header": "A" } }),
            json!({ "a": { "type": "null", "x-mcp-header": "A" } }),
            json!({ "a": { "type": "number", "x-mcp-header": "A" } }),
            json!({ "a": { "type": "string", "x-mcp-header": "Dup" }, "b": { "type": "string", "x-mcp-header": "Dup" } }),
            json!({ "a": { "type": "string", "x-mcp-header": "Dup" }, "b": { "type": "string", "x-mcp-header": "dUP" } }),
            json!({ "a": { "type": "string", "x-mcp-header": "has space" } }),
            json!({ "a": { "type": "string", "x-mcp-header": "has:colon" } }),
            json!({ "a": { "type": "string", "x-mcp-header": "Ünïcode" } }),
            json!({ "a": { "type": "string", "x-mcp-header": "tab\there" } }),
            json!({ "a": { "type": "array", "items": { "type": "string", "x-mcp-header": "Deep" } } }),
        ];
        for props in bad {
            assert!(param_headers(&schema(props.clone())).is_err(), "{props}");
        }
    }

    #[test]
    fn values_are_encoded_as_the_suite_expects() {
        let h = param_headers(&schema(json!({
            "region": { "type": "string", "x-mcp-header": "Region" },
            "priority": { "type": "integer", "x-mcp-header": "Priority" },
            "verbose": { "type": "boolean", "x-mcp-header": "Verbose" },
            "empty": { "type": "string", "x-mcp-header": "EmptyVal" },
            "method": { "type": "string", "x-mcp-header": "Method" },
            "space": { "type": "string", "x-mcp-header": "InternalSpace" },
            "na": { "type": "string", "x-mcp-header": "NonAscii" },
            "ws": { "type": "string", "x-mcp-header": "LeadingSpace" },
            "tab": { "type": "string", "x-mcp-header": "Tab" },
            "gone": { "type": "string", "x-mcp-header": "Gone" },
            "nul": { "type": "string", "x-mcp-header": "Null" }
        })))
        .unwrap();
        let args = json!({
            "region": "us-west1", "priority": 42, "verbose": false, "empty": "", "method": "test-method",
            "space": "us west 1", "na": "Hello, 世界", "ws": " x", "tab": "a\tb", "nul": null
        });
        let got: Vec<(String, String)> = param_values(&h, &args);
        let b64 = |s: &str| {
            format!(
                "=?base64?{}?=",
                base64::engine::general_purpose::STANDARD.encode(s)
            )
        };
        assert_eq!(
            got,
            vec![
                ("Mcp-Param-Region".into(), "us-west1".into()),
                ("Mcp-Param-Priority".into(), "42".into()),
                ("Mcp-Param-Verbose".into(), "false".into()),
                ("Mcp-Param-EmptyVal".into(), String::new()),
                ("Mcp-Param-Method".into(), "test-method".into()),
                ("Mcp-Param-InternalSpace".into(), "us west 1".into()),
                ("Mcp-Param-NonAscii".into(), b64("Hello, 世界")),
                ("Mcp-Param-LeadingSpace".into(), b64(" x")),
                ("Mcp-Param-Tab".into(), b64("a\tb")),
            ]
        );
    }

    #[test]
    fn standard_headers_name_the_method_and_the_target() {
        let p = |v: Value| v.as_object().unwrap().clone();
        assert_eq!(
            standard_headers("tools/call", &p(json!({ "name": "my-hyphenated-tool" }))),
            vec![
                ("Mcp-Method".into(), "tools/call".into()),
                ("Mcp-Name".into(), "my-hyphenated-tool".into())
            ]
        );
        assert_eq!(
            standard_headers(
                "resources/read",
                &p(json!({ "uri": "file:///path/to/file%20name.txt" }))
            )[1]
            .1,
            "file:///path/to/file%20name.txt"
        );
        assert_eq!(standard_headers("tools/list", &p(json!({}))).len(), 1);
    }
}
