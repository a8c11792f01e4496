//! Reading a TOML document with positions: every value we take keeps its `file:line:column`, every key
//! we did not ask for is an error with the closest allowed name. The parser in `parse.rs` is written
//! against this small API so that no value can be read without its position.

use std::ops::Range;

use toml_edit::{Item, TableLike, Value};

use super::{Loc, SpecError};

/// Collects errors instead of stopping at the first: a user fixing a spec wants every problem at once.
pub(crate) struct Reader<'s> {
    file: &'s str,
    /// Byte offsets where each line starts, for offset → line:column.
    line_starts: Vec<usize>,
    src: &'s str,
    pub errors: Vec<SpecError>,
}

impl<'s> Reader<'s> {
    pub fn new(file: &'s str, src: &'s str) -> Self {
        let mut line_starts = vec![0];
        line_starts.extend(src.match_indices('\n').map(|(i, _)| i + 1));
        Reader { file, line_starts, src, errors: Vec::new() }
    }

    pub fn file(&self) -> &str {
        self.file
    }

    pub fn loc(&self, span: Option<Range<usize>>) -> Loc {
        let offset = span.map(|s| s.start).unwrap_or(0).min(self.src.len());
        let line = self.line_starts.partition_point(|&s| s <= offset);
        let start = self.line_starts[line - 1];
        // Columns count characters, as editors do, not bytes (a Chinese comment before a value).
        let column = self.src[start..offset].chars().count() + 1;
        Loc { line, column }
    }

    pub fn error(&mut self, span: Option<Range<usize>>, message: impl Into<String>) {
        let loc = self.loc(span);
        self.error_at(loc, message);
    }

    pub fn error_at(&mut self, loc: Loc, message: impl Into<String>) {
        self.errors.push(SpecError {
            file: self.file.to_string(),
            line: loc.line,
            column: loc.column,
            message: message.into(),
        });
    }
}

/// A value with where it was written.
#[derive(Debug, Clone, PartialEq)]
pub struct Spanned<T> {
    pub value: T,
    pub loc: Loc,
}

impl<T> std::ops::Deref for Spanned<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

/// One table of the spec, its unknown keys already reported.
pub(crate) struct Table<'a> {
    table: &'a dyn TableLike,
    /// How the table is named in messages, e.g. `[[pool]] "train"` or `[budget]`.
    pub what: String,
    pub span: Option<Range<usize>>,
}

pub(crate) fn type_name(item: &Item) -> &'static str {
    match item {
        Item::None => "nothing",
        Item::Table(_) | Item::Value(Value::InlineTable(_)) => "a table",
        Item::ArrayOfTables(_) | Item::Value(Value::Array(_)) => "an array",
        Item::Value(Value::String(_)) => "a string",
        Item::Value(Value::Integer(_)) => "an integer",
        Item::Value(Value::Float(_)) => "a number",
        Item::Value(Value::Boolean(_)) => "a boolean",
        Item::Value(Value::Datetime(_)) => "a date-time",
    }
}

impl<'a> Table<'a> {
    /// Opens `item` as a table allowing only `allowed` keys; anything else is reported with a suggestion.
    pub fn open(
        r: &mut Reader<'_>,
        item: &'a Item,
        what: impl Into<String>,
        allowed: &[&str],
    ) -> Option<Self> {
        let what = what.into();
        let table: &'a dyn TableLike = match item.as_table_like() {
            Some(t) => t,
            None => {
                r.error(item.span(), format!("{what} must be a table, found {}", type_name(item)));
                return None;
            }
        };
        Some(Node { table, span: item.span() }.open(r, what, allowed))
    }

    fn reject_unknown(&self, r: &mut Reader<'_>, allowed: &[&str]) {
        for (key, _) in self.table.iter() {
            if allowed.contains(&key) {
                continue;
            }
            let span = self.key_span(key);
            let near = gpuctl_core::suggest(key, allowed.iter().copied());
            let hint = if near.is_empty() {
                format!("; allowed keys: {}", allowed.join(", "))
            } else {
                gpuctl_core::suggest::did_you_mean(&near)
            };
            // A hostile key can be 1 MiB long or hold terminal escapes: show a short, escaped prefix.
            let mut shown: String = key.chars().take(60).flat_map(char::escape_debug).collect();
            if key.chars().count() > 60 {
                shown.push('…');
            }
            r.error(span, format!("unknown key `{shown}` in {}{hint}", self.what));
        }
    }

    pub fn key_span(&self, key: &str) -> Option<Range<usize>> {
        self.table
            .get_key_value(key)
            .and_then(|(k, v)| k.span().or_else(|| v.span()))
            .or_else(|| self.span.clone())
    }

    pub fn loc(&self, r: &Reader<'_>) -> Loc {
        r.loc(self.span.clone())
    }

    pub fn get(&self, key: &str) -> Option<&'a Item> {
        self.table.get(key).filter(|i| !i.is_none())
    }

    /// Where a value sits: the value itself when it has a span, else its key.
    pub fn value_span(&self, key: &str) -> Option<Range<usize>> {
        self.get(key).and_then(|i| i.span()).or_else(|| self.key_span(key))
    }

    pub fn missing(&self, r: &mut Reader<'_>, key: &str, hint: &str) {
        r.error(self.span.clone(), format!("{} is missing `{key}`{hint}", self.what));
    }

    fn wrong_type(&self, r: &mut Reader<'_>, key: &str, want: &str, item: &Item) {
        r.error(
            self.value_span(key),
            format!("`{key}` in {} must be {want}, found {}", self.what, type_name(item)),
        );
    }

    /// Reads `key` with `extract`, reporting "must be {want}" when the value has another type.
    fn typed<T>(
        &self,
        r: &mut Reader<'_>,
        key: &str,
        want: &str,
        extract: impl Fn(&Item) -> Option<T>,
    ) -> Option<Spanned<T>> {
        let item = self.get(key)?;
        match extract(item) {
            Some(value) => Some(Spanned { value, loc: r.loc(self.value_span(key)) }),
            None => {
                self.wrong_type(r, key, want, item);
                None
            }
        }
    }

    pub fn str(&self, r: &mut Reader<'_>, key: &str) -> Option<Spanned<String>> {
        self.typed(r, key, "a string", |i| i.as_str().map(str::to_string))
    }

    pub fn bool(&self, r: &mut Reader<'_>, key: &str) -> Option<Spanned<bool>> {
        self.typed(r, key, "true or false", Item::as_bool)
    }

    pub fn int(&self, r: &mut Reader<'_>, key: &str) -> Option<Spanned<i64>> {
        self.typed(r, key, "an integer", Item::as_integer)
    }

    /// A number where `1` and `1.0` mean the same (prices, hours).
    pub fn number(&self, r: &mut Reader<'_>, key: &str) -> Option<Spanned<f64>> {
        let item = self.get(key)?;
        let n = item.as_float().or_else(|| item.as_integer().map(|i| i as f64));
        match n {
            Some(n) if n.is_finite() => Some(Spanned { value: n, loc: r.loc(self.value_span(key)) }),
            Some(_) => {
                r.error(self.value_span(key), format!("`{key}` in {} must be a finite number", self.what));
                None
            }
            None => {
                self.wrong_type(r, key, "a number", item);
                None
            }
        }
    }

    /// An array of strings, e.g. security group ids.
    pub fn strings(&self, r: &mut Reader<'_>, key: &str) -> Option<Vec<Spanned<String>>> {
        let item = self.get(key)?;
        let Some(array) = item.as_array() else {
            self.wrong_type(r, key, "an array of strings", item);
            return None;
        };
        let mut out = Vec::new();
        for v in array.iter() {
            match v.as_str() {
                Some(s) => out.push(Spanned { value: s.to_string(), loc: r.loc(v.span()) }),
                None => r.error(v.span(), format!("`{key}` in {} must hold only strings", self.what)),
            }
        }
        Some(out)
    }

    /// `[[key]]` entries, or an inline array of tables (`key = [{…}, {…}]`), each with its span.
    pub fn tables(&self, r: &mut Reader<'_>, key: &str) -> Vec<Node<'a>> {
        let Some(item) = self.get(key) else { return Vec::new() };
        match item {
            Item::ArrayOfTables(a) => {
                a.iter().map(|t| Node { table: t as &dyn TableLike, span: t.span() }).collect()
            }
            Item::Value(Value::Array(a)) => {
                let mut out = Vec::new();
                for v in a.iter() {
                    match v {
                        Value::InlineTable(t) => {
                            out.push(Node { table: t as &dyn TableLike, span: t.span() })
                        }
                        _ => r.error(v.span(), format!("`{key}` in {} must hold only tables", self.what)),
                    }
                }
                out
            }
            other => {
                self.wrong_type(r, key, &format!("a list of tables (`[[{key}]]`)"), other);
                Vec::new()
            }
        }
    }
}

/// A table found inside an array, not yet checked for unknown keys.
pub(crate) struct Node<'a> {
    pub table: &'a dyn TableLike,
    pub span: Option<Range<usize>>,
}

impl<'a> Node<'a> {
    pub fn open(self, r: &mut Reader<'_>, what: impl Into<String>, allowed: &[&str]) -> Table<'a> {
        let span = self.span.or_else(|| self.table.iter().next().and_then(|(_, v)| v.span()));
        let t = Table { table: self.table, what: what.into(), span };
        t.reject_unknown(r, allowed);
        t
    }
}
