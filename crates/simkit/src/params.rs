//! Parameter shapes the clouds use on the wire: form-encoded queries and "flattened" names
//! (`Filters.0.Values.1=x` for Tencent, `InstanceId.1=x` / `Tag.1.Key=k` for Alibaba,
//! `filters.1.values.1=x` for JD), turned into the JSON the emulators read.

use serde_json::{Map, Value};

/// Decode `a=1&b=x+y&c` into pairs; `+` is a space, `%XX` is a byte, a name without `=` has an
/// empty value. Invalid UTF-8 is replaced rather than rejected (the signature check sees raw bytes).
pub fn form_decode(raw: &str) -> Vec<(String, String)> {
    raw.split('&')
        .filter(|s| !s.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            (decode_component(k), decode_component(v))
        })
        .collect()
}

fn decode_component(s: &str) -> String {
    let spaced = s.replace('+', " ");
    percent_encoding::percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

/// Turn flattened pairs into nested JSON. A numeric path segment makes an array; elements are
/// ordered by their number, so 0-based (Tencent) and 1-based (Alibaba, JD) both work. Leaf values
/// stay strings: the emulators coerce by field, as the clouds do.
///
/// `[("Filters.0.Name","zone"),("Filters.0.Values.0","ap-1"),("Limit","10")]`
/// → `{"Filters":[{"Name":"zone","Values":["ap-1"]}],"Limit":"10"}`
pub fn unflatten(pairs: &[(String, String)]) -> Value {
    // Build with numeric keys kept as map keys first, then convert maps whose keys are all numeric.
    let mut root = Map::new();
    for (name, value) in pairs {
        let segments: Vec<&str> = name.split('.').collect();
        insert(&mut root, &segments, value);
    }
    arrays_from_numeric_maps(Value::Object(root))
}

fn insert(map: &mut Map<String, Value>, segments: &[&str], value: &str) {
    let (first, rest) = match segments.split_first() {
        Some(x) => x,
        None => return,
    };
    if rest.is_empty() {
        map.insert((*first).to_string(), Value::String(value.to_string()));
        return;
    }
    let child = map.entry((*first).to_string()).or_insert_with(|| Value::Object(Map::new()));
    if !child.is_object() {
        // `A=1` and `A.1=2` both given: the structured form wins.
        *child = Value::Object(Map::new());
    }
    if let Value::Object(child) = child {
        insert(child, rest, value);
    }
}

fn arrays_from_numeric_maps(v: Value) -> Value {
    match v {
        Value::Object(map) => {
            let numeric = !map.is_empty() && map.keys().all(|k| k.parse::<u64>().is_ok());
            if numeric {
                let mut items: Vec<(u64, Value)> = map
                    .into_iter()
                    .map(|(k, v)| (k.parse::<u64>().unwrap_or(0), arrays_from_numeric_maps(v)))
                    .collect();
                items.sort_by_key(|(i, _)| *i);
                Value::Array(items.into_iter().map(|(_, v)| v).collect())
            } else {
                Value::Object(map.into_iter().map(|(k, v)| (k, arrays_from_numeric_maps(v))).collect())
            }
        }
        other => other,
    }
}

/// RFC 3986 percent-encoding of every byte except unreserved `A-Z a-z 0-9 - _ . ~` (what the
/// clouds' canonical query strings use: space → `%20`, `*` → `%2A`).
pub fn percent_encode_rfc3986(s: &str) -> String {
    const SET: &percent_encoding::AsciiSet =
        &percent_encoding::NON_ALPHANUMERIC.remove(b'-').remove(b'_').remove(b'.').remove(b'~');
    percent_encoding::utf8_percent_encode(s, SET).to_string()
}

/// Read a JSON value the way the clouds coerce parameters: a number or a numeric string.
pub fn as_i64(v: &Value) -> Option<i64> {
    match v {
        Value::Number(n) => n.as_i64(),
        Value::String(s) => s.trim().parse().ok(),
        _ => None,
    }
}

/// A bool or its spellings: `true`/`false`, `True`/`False` (the Alibaba Python SDK), `1`/`0`.
pub fn as_bool(v: &Value) -> Option<bool> {
    match v {
        Value::Bool(b) => Some(*b),
        Value::String(s) => match s.to_ascii_lowercase().as_str() {
            "true" | "1" => Some(true),
            "false" | "0" => Some(false),
            _ => None,
        },
        Value::Number(n) => n.as_i64().map(|n| n != 0),
        _ => None,
    }
}

/// A string, or a number/bool rendered as one.
pub fn as_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(raw: &str, expected: Value) {
        assert_eq!(unflatten(&form_decode(raw)), expected, "for {raw}");
    }

    #[test]
    fn flattened_names_become_json() {
        check("Limit=10&Offset=0", json!({"Limit": "10", "Offset": "0"}));
        check(
            "Filters.0.Name=zone&Filters.0.Values.0=ap-guangzhou-3&Filters.0.Values.1=ap-guangzhou-4",
            json!({"Filters": [{"Name": "zone", "Values": ["ap-guangzhou-3", "ap-guangzhou-4"]}]}),
        );
        check("InstanceId.2=i-b&InstanceId.1=i-a", json!({"InstanceId": ["i-a", "i-b"]}));
        check("Tag.1.Key=team&Tag.1.Value=ml+ops", json!({"Tag": [{"Key": "team", "Value": "ml ops"}]}));
        check(
            "SystemDisk.Category=cloud_essd&Name=%E6%B5%8B",
            json!({"SystemDisk": {"Category": "cloud_essd"}, "Name": "测"}),
        );
        check("", json!({}));
    }

    #[test]
    fn rfc3986() {
        assert_eq!(percent_encode_rfc3986("a b*c~d/é"), "a%20b%2Ac~d%2F%C3%A9");
    }

    #[test]
    fn coercions() {
        assert_eq!(as_bool(&json!("True")), Some(true));
        assert_eq!(as_bool(&json!("false")), Some(false));
        assert_eq!(as_bool(&json!("maybe")), None);
        assert_eq!(as_i64(&json!("42")), Some(42));
        assert_eq!(as_i64(&json!(7)), Some(7));
    }
}
