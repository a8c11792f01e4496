//! Owns every percent-encoding and decoding rule the schemes use, named after the Python call
//! the official SDKs make, because "matches `quote(v, safe='~')`" is the property that matters.

use percent_encoding::{percent_decode_str, utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};

/// RFC 3986 unreserved characters stay; everything else is `%XX` (upper-case hex, UTF-8 bytes).
/// Python: `urllib.parse.quote(v, safe='~')` (3.7+ also keeps `-._~`).
const RFC3986: &AsciiSet = &NON_ALPHANUMERIC.remove(b'-').remove(b'.').remove(b'_').remove(b'~');
/// `quote(v, safe='/~')`: RFC 3986 but `/` stays (JD's canonical URI).
const RFC3986_PATH: &AsciiSet = &RFC3986.remove(b'/');
/// `quote(v)` with its default `safe='/'` (JDCLOUD2's canonical URI).
const PY_QUOTE_DEFAULT: &AsciiSet = &RFC3986.remove(b'/');
/// Characters that cannot appear raw in a URL path; `%` stays so already-encoded paths pass through.
const URL_PATH: &AsciiSet = &percent_encoding::CONTROLS
    .add(b' ')
    .add(b'"')
    .add(b'#')
    .add(b'<')
    .add(b'>')
    .add(b'?')
    .add(b'`')
    .add(b'{')
    .add(b'}')
    .add(b'^')
    .add(b'|')
    .add(b'\\')
    .add(b'[')
    .add(b']');

/// `quote(v, safe='~')`.
pub fn rfc3986(v: &str) -> String {
    utf8_percent_encode(v, RFC3986).to_string()
}

/// `quote(v, safe='/~')`.
pub fn rfc3986_path(v: &str) -> String {
    utf8_percent_encode(v, RFC3986_PATH).to_string()
}

/// `quote(v)` (safe `/`).
pub fn py_quote(v: &str) -> String {
    utf8_percent_encode(v, PY_QUOTE_DEFAULT).to_string()
}

/// `quote_plus(v, safe='')` as used by `urlencode`: like `rfc3986` but space becomes `+`.
/// A literal `%20` in the input cannot be confused: its `%` is itself encoded to `%25`.
pub fn form(v: &str) -> String {
    rfc3986(v).replace("%20", "+")
}

/// Make a path safe to put in a URL without touching what is already encoded.
pub fn url_path(v: &str) -> String {
    utf8_percent_encode(v, URL_PATH).to_string()
}

/// `unquote_plus`: `+` is a space, bad escapes are kept literally, invalid UTF-8 becomes U+FFFD.
pub fn unquote_plus(v: &str) -> String {
    let spaced = v.replace('+', " ");
    percent_decode_str(&spaced).decode_utf8_lossy().into_owned()
}

/// Split a raw query string into decoded `(key, value)` pairs, order kept (form rules: `+` is a
/// space). A part without `=` has an empty value; empty parts are skipped.
pub fn parse_query(raw: &str) -> Vec<(String, String)> {
    raw.split('&')
        .filter(|part| !part.is_empty())
        .map(|part| match part.split_once('=') {
            Some((k, v)) => (unquote_plus(k), unquote_plus(v)),
            None => (unquote_plus(part), String::new()),
        })
        .collect()
}

/// Join pairs into a query string with an encoder for keys and values.
pub fn join_query(pairs: &[(String, String)], enc: fn(&str) -> String) -> String {
    let mut out = String::new();
    for (i, (k, v)) in pairs.iter().enumerate() {
        if i > 0 {
            out.push('&');
        }
        out.push_str(&enc(k));
        out.push('=');
        out.push_str(&enc(v));
    }
    out
}

/// Python's `str.strip()` whitespace (Rust's set plus the ASCII separators 0x1C..=0x1F).
pub fn py_strip(v: &str) -> &str {
    v.trim_matches(|c: char| c.is_whitespace() || ('\u{1c}'..='\u{1f}').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(f: fn(&str) -> String, input: &str, expected: &str) {
        assert_eq!(f(input), expected, "input {input:?}");
    }

    #[test]
    fn encoders_match_python() {
        check(rfc3986, "a b*~+/=中", "a%20b%2A~%2B%2F%3D%E4%B8%AD");
        check(rfc3986_path, "/a b/~:", "/a%20b/~%3A");
        check(py_quote, "/a b/~:", "/a%20b/~%3A");
        check(form, "a b%20*~", "a+b%2520%2A~");
        check(url_path, "/v1/a b?%2F", "/v1/a%20b%3F%2F");
        check(unquote_plus, "a+b%20c%2%zz%E4%B8%AD", "a b c%2%zz中");
    }

    #[test]
    fn parse_query_keeps_order_and_repeats() {
        assert_eq!(
            parse_query("b=2&a=1&a=%20x&flag&&c=+"),
            vec![
                ("b".into(), "2".into()),
                ("a".into(), "1".into()),
                ("a".into(), " x".into()),
                ("flag".into(), "".into()),
                ("c".into(), " ".into()),
            ]
        );
    }
}
