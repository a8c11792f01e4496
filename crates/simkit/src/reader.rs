//! Reading an operation's parameters out of the JSON every emulator works on (a JSON body as sent,
//! or flattened names unflattened by [`crate::params::unflatten`]), with typed getters that answer
//! in the calling cloud's own error type.
//!
//! simkit knows no cloud's error format: each emulator implements [`ParamErrors`] for its error type
//! (Tencent `MissingParameter`/`InvalidParameterValue`, ECS `MissingParameter`/`InvalidParameter`,
//! JD `INVALID_ARGUMENT`), and the getters only decide *which* of those a field deserves.

use std::marker::PhantomData;

use serde_json::Value;

use crate::params::{as_bool, as_i64, as_string};

/// How a cloud words a bad parameter. `name` is the field as the caller wrote it (a dotted path
/// such as `Placement.Zone` for nested fields).
pub trait ParamErrors: Sized {
    /// Whether an empty string counts as "not given" for numbers (ECS reads `Period=` as unset).
    const EMPTY_IS_UNSET: bool = false;

    /// A required parameter is absent (or empty).
    fn missing(name: &str) -> Self;

    /// A parameter is present but is not `want` ("an integer", "a list of strings"); `got` is what
    /// arrived.
    fn invalid(name: &str, want: &str, got: &Value) -> Self;

    /// A number outside what the API allows (`max` None: no upper bound).
    fn out_of_range(name: &str, got: i64, min: i64, max: Option<i64>) -> Self {
        let want = match max {
            Some(max) => format!("between {min} and {max}"),
            None => format!("at least {min}"),
        };
        Self::invalid(name, &want, &Value::from(got))
    }
}

/// One call's parameters (or a nested struct of them), read with the cloud's errors `E`.
pub struct Params<'a, E> {
    v: &'a Value,
    errors: PhantomData<fn() -> E>,
}

impl<E> Clone for Params<'_, E> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<E> Copy for Params<'_, E> {}

static NULL: Value = Value::Null;

impl<'a, E: ParamErrors> Params<'a, E> {
    pub fn new(v: &'a Value) -> Self {
        Self { v, errors: PhantomData }
    }

    /// The JSON underneath (for a ClientToken fingerprint, or a shape no getter covers).
    pub fn value(&self) -> &'a Value {
        self.v
    }

    /// The value at a dotted path (`Placement.Zone`); JSON `null` counts as absent, as the SDKs
    /// send unset optional fields as null.
    pub fn get(&self, path: &str) -> Option<&'a Value> {
        let mut cur = self.v;
        for seg in path.split('.') {
            cur = cur.get(seg)?;
        }
        (!cur.is_null()).then_some(cur)
    }

    /// A nested struct (`SystemDisk` of `SystemDisk.Category`); absent → an empty one.
    pub fn child(&self, path: &str) -> Params<'a, E> {
        Params::new(self.get(path).unwrap_or(&NULL))
    }

    // --- lenient reads: a value of the wrong shape reads as absent ------------------------------

    /// A scalar as text, empty or not (ECS's ModifyInstanceAutoReleaseTime: empty cancels).
    pub fn raw_text(&self, path: &str) -> Option<String> {
        self.get(path).and_then(as_string)
    }

    /// A non-empty scalar as text.
    pub fn text(&self, path: &str) -> Option<String> {
        self.raw_text(path).filter(|s| !s.is_empty())
    }

    /// [`text`](Self::text), or the cloud's missing-parameter error.
    pub fn required(&self, path: &str) -> Result<String, E> {
        self.text(path).ok_or_else(|| E::missing(path))
    }

    /// A repeated list: an array's scalars, or one scalar as a list of one; absent → empty.
    pub fn list(&self, path: &str) -> Vec<String> {
        match self.get(path) {
            Some(Value::Array(items)) => items.iter().filter_map(as_string).collect(),
            Some(v) => as_string(v).into_iter().collect(),
            None => Vec::new(),
        }
    }

    /// The structs of a repeated struct (`DataDisk.N.*`); anything but an array → none.
    pub fn items(&self, path: &str) -> Vec<Params<'a, E>> {
        match self.get(path) {
            Some(Value::Array(items)) => items.iter().map(Params::new).collect(),
            _ => Vec::new(),
        }
    }

    // --- strict reads: a value of the wrong shape is the cloud's invalid-parameter error --------

    /// A scalar as text (empty included); a list or struct is invalid.
    pub fn opt_str(&self, path: &str) -> Result<Option<String>, E> {
        match self.get(path) {
            None => Ok(None),
            Some(x) => as_string(x).map(Some).ok_or_else(|| E::invalid(path, "a string", x)),
        }
    }

    /// A non-empty scalar; absent or empty is missing, a list or struct invalid.
    pub fn req_str(&self, path: &str) -> Result<String, E> {
        self.opt_str(path)?.filter(|s| !s.is_empty()).ok_or_else(|| E::missing(path))
    }

    /// An integer, or a string holding one.
    pub fn opt_i64(&self, path: &str) -> Result<Option<i64>, E> {
        match self.get(path) {
            None => Ok(None),
            Some(Value::String(s)) if E::EMPTY_IS_UNSET && s.is_empty() => Ok(None),
            Some(x) => as_i64(x).map(Some).ok_or_else(|| E::invalid(path, "an integer", x)),
        }
    }

    /// A number, or a string holding one.
    pub fn opt_f64(&self, path: &str) -> Result<Option<f64>, E> {
        match self.get(path) {
            None => Ok(None),
            Some(Value::Number(n)) => Ok(n.as_f64()),
            Some(x @ Value::String(s)) => {
                s.trim().parse().map(Some).map_err(|_| E::invalid(path, "a number", x))
            }
            Some(x) => Err(E::invalid(path, "a number", x)),
        }
    }

    /// A boolean or one of its spellings (`true`/`True`/`1`, see [`as_bool`]).
    pub fn opt_bool(&self, path: &str) -> Result<Option<bool>, E> {
        match self.get(path) {
            None => Ok(None),
            Some(x) => as_bool(x).map(Some).ok_or_else(|| E::invalid(path, "a boolean", x)),
        }
    }

    /// An array of scalars; absent → empty, anything else invalid.
    pub fn str_list(&self, path: &str) -> Result<Vec<String>, E> {
        match self.get(path) {
            None => Ok(Vec::new()),
            Some(x @ Value::Array(items)) => items
                .iter()
                .map(|i| as_string(i).ok_or_else(|| E::invalid(path, "a list of strings", x)))
                .collect(),
            Some(x) => Err(E::invalid(path, "a list of strings", x)),
        }
    }

    /// An array of structs; absent → empty, anything else invalid.
    pub fn obj_list(&self, path: &str) -> Result<Vec<Params<'a, E>>, E> {
        match self.get(path) {
            None => Ok(Vec::new()),
            Some(Value::Array(items)) if items.iter().all(Value::is_object) => {
                Ok(items.iter().map(Params::new).collect())
            }
            Some(x) => Err(E::invalid(path, "a list of objects", x)),
        }
    }

    // --- paging -----------------------------------------------------------------------------------

    /// Offset/limit paging (Tencent's `Offset`/`Limit`): an offset below 0 or a limit outside
    /// `1..=max_limit` is out of range, not clamped.
    pub fn offset_limit(
        &self,
        (offset_name, limit_name): (&str, &str),
        default_limit: i64,
        max_limit: i64,
    ) -> Result<crate::page::Window, E> {
        let offset = self.opt_i64(offset_name)?.unwrap_or(0);
        let limit = self.opt_i64(limit_name)?.unwrap_or(default_limit);
        if offset < 0 {
            return Err(E::out_of_range(offset_name, offset, 0, None));
        }
        if !(1..=max_limit).contains(&limit) {
            return Err(E::out_of_range(limit_name, limit, 1, Some(max_limit)));
        }
        Ok(crate::page::Window::offset_limit(offset as usize, limit as usize))
    }

    /// Page number/size paging (ECS `PageNumber`/`PageSize`, JD `pageNumber`/`pageSize`): a page
    /// number below 1 reads as 1 and the size is clamped into `sizes`, as both clouds do.
    pub fn page_number(
        &self,
        (number_name, size_name): (&str, &str),
        default_size: i64,
        sizes: std::ops::RangeInclusive<i64>,
    ) -> Result<crate::page::Window, E> {
        let number = self.opt_i64(number_name)?.unwrap_or(1).max(1);
        let size = self.opt_i64(size_name)?.unwrap_or(default_size).clamp(*sizes.start(), *sizes.end());
        Ok(crate::page::Window::number_size(number as usize, size as usize))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A stand-in cloud that says which getter failed how.
    #[derive(Debug, PartialEq)]
    enum E {
        Missing(String),
        Invalid(String, String),
        Range(String, i64),
    }

    impl ParamErrors for E {
        fn missing(name: &str) -> Self {
            E::Missing(name.into())
        }
        fn invalid(name: &str, want: &str, _got: &Value) -> Self {
            E::Invalid(name.into(), want.into())
        }
        fn out_of_range(name: &str, got: i64, _min: i64, _max: Option<i64>) -> Self {
            E::Range(name.into(), got)
        }
    }

    /// The same cloud, reading `""` as unset.
    #[derive(Debug, PartialEq)]
    struct Lax;

    impl ParamErrors for Lax {
        const EMPTY_IS_UNSET: bool = true;
        fn missing(_: &str) -> Self {
            Lax
        }
        fn invalid(_: &str, _: &str, _: &Value) -> Self {
            Lax
        }
    }

    #[test]
    fn strict_getters_name_the_field_and_what_it_should_be() {
        let v = json!({"A": {"B": "x", "N": "7", "F": 1.5}, "L": ["a", 2], "O": [{"K": "v"}], "Z": null, "E": ""});
        let p = Params::<E>::new(&v);
        assert_eq!(p.req_str("A.B"), Ok("x".into()));
        assert_eq!(p.req_str("Z"), Err(E::Missing("Z".into())), "null is absent");
        assert_eq!(p.req_str("E"), Err(E::Missing("E".into())), "empty is missing");
        assert_eq!(p.req_str("A"), Err(E::Invalid("A".into(), "a string".into())));
        assert_eq!(p.opt_i64("A.N"), Ok(Some(7)));
        assert_eq!(p.opt_i64("A.B"), Err(E::Invalid("A.B".into(), "an integer".into())));
        assert_eq!(p.opt_i64("E"), Err(E::Invalid("E".into(), "an integer".into())));
        assert_eq!(p.opt_f64("A.F"), Ok(Some(1.5)));
        assert_eq!(p.opt_bool("A.B"), Err(E::Invalid("A.B".into(), "a boolean".into())));
        assert_eq!(p.str_list("L"), Ok(vec!["a".into(), "2".into()]));
        assert_eq!(p.str_list("A"), Err(E::Invalid("A".into(), "a list of strings".into())));
        assert_eq!(p.str_list("Nope"), Ok(vec![]));
        let objs = p.obj_list("O").unwrap();
        assert_eq!(objs[0].req_str("K"), Ok("v".into()));
        assert!(p.obj_list("L").is_err());
        assert_eq!(Params::<Lax>::new(&v).opt_i64("E"), Ok(None), "a cloud may read empty as unset");
    }

    #[test]
    fn lenient_getters_read_wrong_shapes_as_absent() {
        let v = json!({"S": "one", "L": ["a", "b"], "D": [{"Size": "40"}], "E": "", "Obj": {"x": 1}});
        let p = Params::<E>::new(&v);
        assert_eq!(p.text("S"), Some("one".into()));
        assert_eq!(p.text("Obj"), None);
        assert_eq!(p.text("E"), None);
        assert_eq!(p.raw_text("E"), Some(String::new()));
        assert_eq!(p.required("Obj"), Err(E::Missing("Obj".into())));
        assert_eq!(p.list("L"), vec!["a", "b"]);
        assert_eq!(p.list("S"), vec!["one"], "a single value is a list of one");
        assert_eq!(p.items("D")[0].opt_i64("Size"), Ok(Some(40)));
        assert!(p.items("S").is_empty());
        assert_eq!(p.child("Nope").text("x"), None);
    }

    #[test]
    fn paging_checks_or_clamps_as_each_cloud_does() {
        let v = json!({"Offset": "5", "Limit": 2, "PageNumber": 0, "PageSize": 500});
        let p = Params::<E>::new(&v);
        let w = p.offset_limit(("Offset", "Limit"), 20, 100).unwrap();
        assert_eq!(w.apply(0..10), (10, vec![5, 6]));
        let bad = json!({"Limit": 101});
        assert_eq!(
            Params::<E>::new(&bad).offset_limit(("Offset", "Limit"), 20, 100),
            Err(E::Range("Limit".into(), 101))
        );
        let neg = json!({"Offset": -1});
        assert_eq!(
            Params::<E>::new(&neg).offset_limit(("Offset", "Limit"), 20, 100),
            Err(E::Range("Offset".into(), -1))
        );
        let w = p.page_number(("PageNumber", "PageSize"), 10, 1..=100).unwrap();
        assert_eq!((w.number(), w.size()), (1, 100), "page 0 reads as 1, the size is capped");
        assert_eq!(Params::<E>::new(&json!({})).page_number(("n", "s"), 20, 10..=100).unwrap().size(), 20);
    }
}
