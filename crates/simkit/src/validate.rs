//! The wire contract, enforced (issue 12): holds one request's parameters against an action's entry
//! in `contract/schema/<cloud>.json` (what `contract/gen.py` derives from the clouds' own definitions
//! plus the curated `contract/rules.json`) and returns every violation.
//!
//! This is the Rust twin of `contract/check.py` (`unflatten`, `check_object`, `check_value`): the two
//! must give the same verdict on the same request, and `tests/planted.rs` holds them to it with the
//! fixture `contract/planted.json` that `contract/controls.py` writes. simkit stays wire-format-free:
//! the emulators decode their cloud's request (a JSON body, flattened `A.1.B` pairs, JD's path
//! parameters) and map each [`Violation`] to their cloud's own error code.

use serde_json::{Map, Value};

/// What is wrong with one parameter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A name the definition does not have (flattened or in a JSON object).
    Unknown,
    /// A required member (or one required by a sibling's value) is absent.
    Missing,
    /// The value is not of the declared type.
    WrongType,
    /// Not one of the allowed values (an enum, a not-enum, an enum chosen by a sibling, `only_when`).
    NotAllowed,
    /// Outside a range or not a multiple of the step.
    OutOfRange,
    /// A string not in the declared format.
    BadFormat,
    /// A flattened index below the cloud's first index.
    BadIndex,
    /// Deprecated by the definition: reported, but the clouds still accept it, so no emulator refuses it.
    Deprecated,
}

/// One problem: the parameter's path (`A.B`, `A[].B`; empty for the request itself), what is wrong
/// in check.py's words, and the definition it comes from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Violation {
    pub kind: Kind,
    pub path: String,
    pub what: String,
    pub source: String,
}

impl Violation {
    /// check.py's output line: `cloud action param: what (source)`.
    pub fn line(&self, cloud: &str, action: &str) -> String {
        let p = if self.path.is_empty() { "-" } else { &self.path };
        format!("{cloud} {action} {p}: {} ({})", self.what, self.source)
    }

    /// Whether an emulator refuses the request for it (everything but a deprecation).
    pub fn refuses(&self) -> bool {
        self.kind != Kind::Deprecated
    }
}

/// A request's parameters as the emulator decoded them.
pub enum Input<'a> {
    /// A JSON body (Tencent's JSON POST, JD's POST body, plus JD's path parameters).
    Json(&'a Value),
    /// Flattened name/value pairs (query or form); `base` is where array indices start (0 for
    /// Tencent, 1 for Alibaba and JD). Values are read as their declared type.
    Flat { pairs: &'a [(String, String)], base: u64 },
}

/// Validate against one action's schema entry (`{"params": …, "model": …, "source": …}`).
pub fn validate(spec: &Value, input: Input<'_>) -> Vec<Violation> {
    let mut v = Checker { source: spec_source(spec), out: Vec::new() };
    let empty = Map::new();
    let params = spec.get("params").and_then(Value::as_object).unwrap_or(&empty);
    let root = json_obj(params, spec.get("model"));
    let tree = match input {
        Input::Json(t) => t.clone(),
        Input::Flat { pairs, base } => v.unflatten(&root, pairs, base),
    };
    if let Value::Object(obj) = &tree {
        v.object(&root, obj, "", &tree);
    }
    v.out
}

/// The schema of all actions of one cloud, parsed once.
pub struct Schema {
    actions: Map<String, Value>,
}

impl Schema {
    /// Parse `contract/schema/<cloud>.json`; the text is the repo's own generated file, embedded with
    /// `include_str!`, so a parse failure is a build defect and is reported as an error string.
    pub fn parse(text: &str) -> Result<Self, String> {
        let v: Value = serde_json::from_str(text).map_err(|e| format!("schema is not JSON: {e}"))?;
        match v.get("actions") {
            Some(Value::Object(a)) => Ok(Schema { actions: a.clone() }),
            _ => Err("schema has no actions object".into()),
        }
    }

    /// One action's entry.
    pub fn action(&self, name: &str) -> Option<&Value> {
        self.actions.get(name)
    }

    /// Whether the schema defines the action (each emulator tests this for every action it serves).
    pub fn has(&self, name: &str) -> bool {
        self.actions.contains_key(name)
    }

    /// The first violation an emulator refuses the request for, if any. An action the schema does
    /// not define has nothing to hold it to (the emulators' own tests require every served action
    /// to be defined, so this only happens for an action the emulator answers `InvalidAction`).
    pub fn refusal(&self, action: &str, input: Input<'_>) -> Option<Violation> {
        let spec = self.action(action)?;
        validate(spec, input).into_iter().find(Violation::refuses)
    }
}

fn json_obj(members: &Map<String, Value>, model: Option<&Value>) -> Value {
    let mut n = Map::new();
    n.insert("type".into(), "object".into());
    n.insert("members".into(), Value::Object(members.clone()));
    if let Some(m) = model {
        n.insert("model".into(), m.clone());
    }
    Value::Object(n)
}

/// The source without the package and version (check.py: `spec["source"].split(" ", 2)[-1]`).
fn spec_source(spec: &Value) -> String {
    let s = spec.get("source").and_then(Value::as_str).unwrap_or("");
    s.splitn(3, ' ').last().unwrap_or("").to_string()
}

/// Marks a flattened string that did not read as its declared type (NUL never survives a cloud's
/// form decoding into a real value the schema types).
const NOT_TYPED: &str = "\u{0}not-typed\u{0}";

struct Checker {
    source: String,
    out: Vec<Violation>,
}

impl Checker {
    fn add(&mut self, kind: Kind, path: &str, what: String, node: Option<&Value>, model: Option<&Value>) {
        let mut src = self.source.clone();
        if let Some(m) = model.and_then(Value::as_str) {
            src = format!("{src} {m}");
        }
        if let Some(rs) = node.and_then(|n| n.get("rule_sources")).and_then(Value::as_array) {
            if !rs.is_empty() {
                src = rs.iter().map(py_str).collect::<Vec<_>>().join("; ");
            }
        }
        self.out.push(Violation { kind, path: path.to_string(), what, source: src });
    }

    /// Flattened pairs to a tree by the schema: after an array a segment is an index, else a
    /// member name; leaves are read as their declared type (check.py's `unflatten` + `coerce`).
    fn unflatten(&mut self, root: &Value, pairs: &[(String, String)], base: u64) -> Value {
        let mut tree = Value::Object(Map::new());
        let any = serde_json::json!({"type": "any"});
        'pairs: for (name, value) in pairs {
            let segs: Vec<&str> = name.split('.').collect();
            let mut node = root;
            let mut cur = &mut tree;
            let mut path = String::new();
            let mut i = 0;
            while i < segs.len() {
                let seg = segs[i];
                let mut last = i == segs.len() - 1;
                let t = node.get("type").and_then(Value::as_str).unwrap_or("any");
                let key: String;
                let child: &Value;
                if t == "array" {
                    let idx = seg.parse::<u64>().ok().filter(|_| seg.bytes().all(|b| b.is_ascii_digit()));
                    match idx {
                        Some(n) if n >= base => {}
                        _ => {
                            let what =
                                format!("flattened index {} (indices start at {base})", py_repr_str(seg));
                            self.add(Kind::BadIndex, &path, what, None, None);
                            continue 'pairs;
                        }
                    }
                    // An index key is kept with a marker so it cannot collide with a member name.
                    key = format!("\u{0}{seg:0>20}");
                    child = node.get("items").unwrap_or(&any);
                    path.push_str("[]");
                } else if let (true, Some(members)) =
                    (t == "object", node.get("members").and_then(Value::as_object))
                {
                    let p = if path.is_empty() { seg.to_string() } else { format!("{path}.{seg}") };
                    match members.get(seg) {
                        Some(m) => {
                            key = seg.to_string();
                            child = m;
                            path = p;
                        }
                        None => {
                            self.add(Kind::Unknown, &p, "unknown parameter".into(), None, node.get("model"));
                            continue 'pairs;
                        }
                    }
                } else {
                    // A scalar with a further segment, or a free-form map: the rest is one key.
                    key = segs[i..].join(".");
                    child = &any;
                    last = true;
                }
                let Value::Object(map) = cur else { continue 'pairs };
                if last {
                    // A string that is not of its type is kept marked, and reported where check.py
                    // reports it: when the tree is checked, in the tree's order.
                    let v =
                        coerce(child, value).unwrap_or_else(|| Value::String(format!("{NOT_TYPED}{value}")));
                    map.insert(key, v);
                    continue 'pairs;
                }
                let entry = map.entry(key).or_insert_with(|| Value::Object(Map::new()));
                if !entry.is_object() {
                    *entry = Value::Object(Map::new());
                }
                cur = entry;
                node = child;
                i += 1;
            }
        }
        listify(tree, root)
    }

    fn value(&mut self, node: &Value, v: &Value, path: &str, root: &Value) {
        let t = node.get("type").and_then(Value::as_str).unwrap_or("any");
        if let Some(raw) = v.as_str().and_then(|s| s.strip_prefix(NOT_TYPED)) {
            let a = if t == "integer" { "an" } else { "a" };
            let what = format!("is {}, not {a} {t}", py_repr_str(raw));
            return self.add(Kind::WrongType, path, what, Some(node), None);
        }
        let jt = json_type(v);
        let ok = t == "any" || jt == t || (t == "number" && jt == "integer");
        if !ok {
            // The value itself is left out: lines must not vary with ids, names or instance types.
            self.add(
                Kind::WrongType,
                path,
                format!("is a JSON {jt}, the definition says {t}"),
                Some(node),
                None,
            );
            return;
        }
        match v {
            Value::Object(o) if t == "object" => return self.object(node, o, path, root),
            Value::Array(items) if t == "array" => {
                let any = serde_json::json!({"type": "any"});
                let it = node.get("items").unwrap_or(&any);
                for x in items {
                    self.value(it, x, &format!("{path}[]"), root);
                }
                return;
            }
            _ => {}
        }
        if let Some(Value::Array(allowed)) = node.get("enum") {
            if !allowed.iter().any(|a| py_eq(a, v)) {
                let what = format!("is {}, allowed: {}", py_repr(v), join(allowed));
                self.add(Kind::NotAllowed, path, what, Some(node), None);
            }
        }
        if let Some(Value::Array(banned)) = node.get("not_enum") {
            if banned.iter().any(|a| py_eq(a, v)) {
                let msg = node.get("message").and_then(Value::as_str).unwrap_or("not allowed");
                self.add(Kind::NotAllowed, path, format!("is {}: {msg}", py_repr(v)), Some(node), None);
            }
        }
        if let Some(eb) = node.get("enum_by") {
            let param = eb.get("param").and_then(Value::as_str).unwrap_or("");
            let unit =
                resolve(root, param).unwrap_or_else(|| eb.get("default").cloned().unwrap_or(Value::Null));
            let allowed = eb.get("values").and_then(|m| m.get(py_str(&unit))).and_then(Value::as_array);
            if let Some(allowed) = allowed {
                if !allowed.iter().any(|a| py_eq(a, v)) {
                    let what = format!(
                        "is {} with {param}={}, allowed: {}",
                        py_repr(v),
                        py_str(&unit),
                        join(allowed)
                    );
                    self.add(Kind::NotAllowed, path, what, Some(node), None);
                }
            }
        }
        if let (Some(Value::Array(r)), Some(x)) = (node.get("range"), v.as_f64().filter(|_| v.is_number())) {
            let lo = r.first().and_then(Value::as_f64);
            let hi = r.get(1).and_then(Value::as_f64);
            if lo.is_some_and(|lo| x < lo) || hi.is_some_and(|hi| x > hi) {
                let lo_s = r.first().map(py_str).unwrap_or_default();
                let hi_s = r.get(1).filter(|h| !h.is_null()).map(py_str).unwrap_or_default();
                let what = format!("is {}, out of range [{lo_s}, {hi_s}]", py_repr(v));
                self.add(Kind::OutOfRange, path, what, Some(node), None);
            }
        }
        if let (Some(step), Some(x)) = (node.get("step"), v.as_f64().filter(|_| v.is_number())) {
            if let Some(s) = step.as_f64().filter(|s| *s != 0.0) {
                let q = x / s;
                if (q - q.round()).abs() > 1e-6 {
                    let what = format!("is {}, not a multiple of {}", py_repr(v), py_str(step));
                    self.add(Kind::OutOfRange, path, what, Some(node), None);
                }
            }
        }
        if let (Some(f), Some(s)) = (node.get("format").and_then(Value::as_str), v.as_str()) {
            if let Some((matches, words)) = format_rule(f) {
                if !matches(s) {
                    self.add(
                        Kind::BadFormat,
                        path,
                        format!("is not in the format {words}"),
                        Some(node),
                        None,
                    );
                }
            }
        }
    }

    fn object(&mut self, node: &Value, obj: &Map<String, Value>, path: &str, root: &Value) {
        let Some(members) = node.get("members").and_then(Value::as_object) else {
            return; // a free-form map or a cut-off recursive structure
        };
        let model = node.get("model");
        let prefix = if path.is_empty() { String::new() } else { format!("{path}.") };
        for (k, v) in obj {
            if v.is_null() {
                continue; // JD's SDK sends unset fields as null: absent
            }
            let p = format!("{prefix}{k}");
            let Some(m) = members.get(k) else {
                self.add(Kind::Unknown, &p, "unknown parameter".into(), None, model);
                continue;
            };
            self.value(m, v, &p, root);
            if let Some(ow) = m.get("only_when") {
                let param = ow.get("param").and_then(Value::as_str).unwrap_or("");
                let cur =
                    resolve(root, param).unwrap_or_else(|| ow.get("default").cloned().unwrap_or(Value::Null));
                let allowed = ow.get("in").and_then(Value::as_array).cloned().unwrap_or_default();
                if !allowed.iter().any(|a| py_eq(a, &cur)) {
                    let what = format!(
                        "applies only when {param} is {}, sent with {param}={}",
                        allowed.iter().map(py_str).collect::<Vec<_>>().join(" or "),
                        py_str(&cur)
                    );
                    self.add(Kind::NotAllowed, &p, what, Some(m), None);
                }
            }
            if let Some(d) = m.get("deprecated").filter(|d| truthy(d)) {
                self.add(Kind::Deprecated, &p, format!("deprecated: {}", py_str(d)), Some(m), None);
            }
        }
        for (k, m) in members {
            if obj.get(k).is_some_and(|v| !v.is_null()) {
                continue;
            }
            let p = format!("{prefix}{k}");
            if m.get("required").is_some_and(truthy) {
                self.add(Kind::Missing, &p, "required parameter missing".into(), Some(m), model);
            }
            if let Some(rw) = m.get("required_when") {
                let param = rw.get("param").and_then(Value::as_str).unwrap_or("");
                let equals = rw.get("equals").cloned().unwrap_or(Value::Null);
                if resolve(root, param).is_some_and(|v| py_eq(&v, &equals)) {
                    let what = format!("required when {param}={}, missing", py_str(&equals));
                    self.add(Kind::Missing, &p, what, Some(m), None);
                }
            }
        }
    }
}

/// A flattened string read as the node's type; `None` when it is not one.
fn coerce(node: &Value, v: &str) -> Option<Value> {
    match node.get("type").and_then(Value::as_str).unwrap_or("any") {
        "integer" => {
            let digits = v.strip_prefix('-').unwrap_or(v);
            if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            v.parse::<i64>().ok().map(Value::from).or_else(|| v.parse::<f64>().ok().map(Value::from))
        }
        "number" => py_float(v).map(Value::from),
        "boolean" => match v.to_ascii_lowercase().as_str() {
            "true" => Some(Value::Bool(true)),
            "false" => Some(Value::Bool(false)),
            _ => None,
        },
        _ => Some(Value::String(v.to_string())),
    }
}

/// Python's `float(str)` for the strings a client sends (surrounding blanks allowed).
fn py_float(v: &str) -> Option<f64> {
    let t = v.trim();
    let lower = t.to_ascii_lowercase();
    let body = lower.trim_start_matches(['+', '-']);
    if matches!(body, "inf" | "infinity" | "nan") {
        return t.parse::<f64>().ok().or(Some(f64::NAN));
    }
    if t.is_empty() || !t.bytes().all(|b| b.is_ascii_digit() || b"+-.eE_".contains(&b)) {
        return None;
    }
    t.replace('_', "").parse::<f64>().ok()
}

/// Index-keyed maps under array nodes become arrays, in index order.
fn listify(tree: Value, node: &Value) -> Value {
    let Value::Object(map) = tree else { return tree };
    let any = serde_json::json!({"type": "any"});
    if node.get("type").and_then(Value::as_str) == Some("array") {
        let items = node.get("items").unwrap_or(&any);
        let mut idx: Vec<(String, Value)> = map.into_iter().filter(|(k, _)| k.starts_with('\u{0}')).collect();
        idx.sort_by(|a, b| a.0.cmp(&b.0));
        return Value::Array(idx.into_iter().map(|(_, v)| listify(v, items)).collect());
    }
    let members = node.get("members").and_then(Value::as_object);
    Value::Object(
        map.into_iter()
            .map(|(k, v)| {
                let child = members.and_then(|m| m.get(&k)).unwrap_or(&any);
                let v = listify(v, child);
                (k, v)
            })
            .collect(),
    )
}

/// A sibling's value by its dotted path from the root, trailing blanks stripped (check.py `resolve`).
fn resolve(root: &Value, dotted: &str) -> Option<Value> {
    let mut v = root;
    for part in dotted.split('.') {
        v = v.as_object()?.get(part)?;
    }
    if v.is_null() {
        return None;
    }
    Some(match v {
        Value::String(s) => Value::String(s.trim_end().to_string()),
        other => other.clone(),
    })
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null => false,
        Value::Bool(b) => *b,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        Value::Array(a) => !a.is_empty(),
        Value::Object(o) => !o.is_empty(),
    }
}

/// Python's `==` on JSON values: numbers compare by value (`1 == 1.0`).
fn py_eq(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => x.as_f64() == y.as_f64(),
        _ => a == b,
    }
}

/// Python's `str()` of a JSON value.
fn py_str(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "None".into(),
        Value::Bool(true) => "True".into(),
        Value::Bool(false) => "False".into(),
        other => py_repr(other),
    }
}

/// Python's `repr()` of a JSON value (strings quoted the way Python quotes them).
fn py_repr(v: &Value) -> String {
    match v {
        Value::String(s) => py_repr_str(s),
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(0.0);
            if f.fract() == 0.0 && f.abs() < 1e16 {
                format!("{f:.1}")
            } else {
                format!("{f}")
            }
        }
        Value::Number(n) => n.to_string(),
        Value::Bool(_) | Value::Null => py_str(v),
        Value::Array(a) => format!("[{}]", a.iter().map(py_repr).collect::<Vec<_>>().join(", ")),
        Value::Object(o) => {
            let items: Vec<String> =
                o.iter().map(|(k, v)| format!("{}: {}", py_repr_str(k), py_repr(v))).collect();
            format!("{{{}}}", items.join(", "))
        }
    }
}

fn py_repr_str(s: &str) -> String {
    let q = if s.contains('\'') && !s.contains('"') { '"' } else { '\'' };
    let mut out = String::from(q);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == q => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 || c as u32 == 0x7f => out.push_str(&format!("\\x{:02x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push(q);
    out
}

fn join(vals: &[Value]) -> String {
    vals.iter().map(py_str).collect::<Vec<_>>().join(", ")
}

type Matcher = fn(&str) -> bool;

/// check.py's FORMATS: the matcher and the words its message uses.
fn format_rule(name: &str) -> Option<(Matcher, &'static str)> {
    match name {
        "iso8601-utc" => Some((iso8601_utc, "YYYY-MM-DDThh:mm:ssZ (UTC)")),
        "iso8601" => Some((iso8601, "ISO 8601")),
        "datetime" => Some((datetime, "YYYY-MM-DD hh:mm:ss")),
        _ => None,
    }
}

/// Consume `n` ASCII digits.
fn digits(s: &str, n: usize) -> Option<&str> {
    let head = s.get(..n)?;
    head.bytes().all(|b| b.is_ascii_digit()).then(|| &s[n..])
}

fn lit(s: &str, c: char) -> Option<&str> {
    s.strip_prefix(c)
}

/// `YYYY-MM-DD` then `sep` then `hh:mm`.
fn date_hm(s: &str, sep: char) -> Option<&str> {
    let s = lit(digits(s, 4)?, '-')?;
    let s = lit(digits(s, 2)?, '-')?;
    let s = lit(digits(s, 2)?, sep)?;
    let s = lit(digits(s, 2)?, ':')?;
    digits(s, 2)
}

/// `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2})?Z$`
fn iso8601_utc(s: &str) -> bool {
    let Some(rest) = date_hm(s, 'T') else { return false };
    let rest = lit(rest, ':').and_then(|r| digits(r, 2)).unwrap_or(rest);
    rest == "Z"
}

/// `^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:?\d{2})$`
fn iso8601(s: &str) -> bool {
    let Some(mut rest) = date_hm(s, 'T').and_then(|r| lit(r, ':')).and_then(|r| digits(r, 2)) else {
        return false;
    };
    if let Some(frac) = rest.strip_prefix('.') {
        let n = frac.bytes().take_while(u8::is_ascii_digit).count();
        if n == 0 {
            return false;
        }
        rest = &frac[n..];
    }
    if rest == "Z" {
        return true;
    }
    let Some(off) = rest.strip_prefix(['+', '-']).and_then(|r| digits(r, 2)) else { return false };
    let off = off.strip_prefix(':').unwrap_or(off);
    digits(off, 2) == Some("")
}

/// `^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$`
fn datetime(s: &str) -> bool {
    date_hm(s, ' ').and_then(|r| lit(r, ':')).and_then(|r| digits(r, 2)) == Some("")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_match_check_py_patterns() {
        assert!(iso8601_utc("2026-12-01T10:00:00Z") && iso8601_utc("2026-12-01T10:00Z"));
        assert!(!iso8601_utc("2026-12-01T10:00:00+08:00") && !iso8601_utc("2026-12-01 10:00:00"));
        assert!(iso8601("2026-12-01T10:00:00.5+0800") && iso8601("2026-12-01T10:00:00Z"));
        assert!(!iso8601("2026-12-01T10:00Z"));
        assert!(datetime("2026-12-01 10:00:00") && !datetime("2026-12-01T10:00:00"));
    }

    #[test]
    fn flattened_values_are_read_as_their_declared_type() {
        let spec = serde_json::json!({"source": "p 1 x.py", "model": "M", "params": {
            "N": {"type": "integer", "required": true, "range": [1, 10]},
            "L": {"type": "array", "items": {"type": "object", "model": "I",
                  "members": {"K": {"type": "string", "required": true}}}}}});
        let pairs = vec![("N".to_string(), "11".to_string()), ("L.1.Z".to_string(), "x".to_string())];
        let got: Vec<String> = validate(&spec, Input::Flat { pairs: &pairs, base: 1 })
            .iter()
            .map(|v| v.line("c", "A"))
            .collect();
        assert_eq!(
            got,
            [
                "c A L[].Z: unknown parameter (x.py I)",
                "c A L[].K: required parameter missing (x.py I)",
                "c A N: is 11, out of range [1, 10] (x.py)",
            ]
        );
        let pairs = vec![("N".to_string(), "one".to_string()), ("L.0.K".to_string(), "x".to_string())];
        let got: Vec<Kind> =
            validate(&spec, Input::Flat { pairs: &pairs, base: 1 }).into_iter().map(|v| v.kind).collect();
        assert_eq!(got, [Kind::BadIndex, Kind::WrongType]);
    }
}
