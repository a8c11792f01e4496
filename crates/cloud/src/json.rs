//! Reading a cloud's JSON answer field by field. A [`Field`] is a value together with the path it was
//! read at (`Response.InstanceSet[0].InstanceId`), so a field that is missing or of the wrong type names
//! itself in the error instead of turning into a silent default far from where it was read.
//!
//! Two kinds of readers: the lenient ones (`text`, `opt_text`, `u64`, `items`) read what the clouds leave
//! out when it does not apply (an instance without a public IP, a disk without a source snapshot) as
//! empty; the `_required` ones are for what an answer cannot lack (the id of what was created).

use std::fmt;

use serde_json::Value;

static NULL: Value = Value::Null;

/// One value in an answer, and where it sits.
#[derive(Debug, Clone)]
pub struct Field<'a> {
    value: &'a Value,
    path: String,
}

/// A field an answer should have had, by its path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldError {
    pub path: String,
    /// What was there instead: `missing`, or the JSON type found (`a number`, …).
    pub found: &'static str,
}

impl fmt::Display for FieldError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.found == "missing" {
            write!(f, "`{}` is missing", self.path)
        } else {
            write!(f, "`{}` is {}, not a string", self.path, self.found)
        }
    }
}

impl std::error::Error for FieldError {}

fn type_name(v: &Value) -> &'static str {
    match v {
        Value::Null => "missing",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl<'a> Field<'a> {
    /// The top of an answer, named as the cloud names it (`Response` for Tencent, `result` for JD).
    pub fn root(name: &str, value: &'a Value) -> Field<'a> {
        Field { value, path: name.into() }
    }

    /// An object member; a missing member (or a non-object) reads as null at the longer path.
    pub fn get(&self, key: &str) -> Field<'a> {
        let path = if self.path.is_empty() { key.to_string() } else { format!("{}.{key}", self.path) };
        Field { value: self.value.get(key).unwrap_or(&NULL), path }
    }

    /// An array element; out of range (or a non-array) reads as null.
    pub fn at(&self, index: usize) -> Field<'a> {
        Field { value: self.value.get(index).unwrap_or(&NULL), path: format!("{}[{index}]", self.path) }
    }

    pub fn path(&self) -> &str {
        &self.path
    }

    pub fn value(&self) -> &'a Value {
        self.value
    }

    /// A string as it is; a number or boolean in its JSON spelling (clouds are loose about ids); missing
    /// or null as empty.
    pub fn text(&self) -> String {
        match self.value {
            Value::String(s) => s.clone(),
            Value::Null => String::new(),
            other => other.to_string(),
        }
    }

    /// [`text`](Self::text), with empty as `None`.
    pub fn opt_text(&self) -> Option<String> {
        Some(self.text()).filter(|x| !x.is_empty())
    }

    /// A non-empty string or number, or an error naming this field's path.
    pub fn text_required(&self) -> Result<String, FieldError> {
        match self.value {
            Value::String(s) if !s.is_empty() => Ok(s.clone()),
            Value::Number(n) => Ok(n.to_string()),
            Value::String(_) => Err(FieldError { path: self.path.clone(), found: "missing" }),
            other => Err(FieldError { path: self.path.clone(), found: type_name(other) }),
        }
    }

    pub fn u64(&self) -> Option<u64> {
        self.value.as_u64()
    }

    pub fn f64(&self) -> Option<f64> {
        self.value.as_f64()
    }

    /// The elements of an array, each with its index in the path; anything else reads as none.
    pub fn items(&self) -> Vec<Field<'a>> {
        match self.value {
            Value::Array(a) => a
                .iter()
                .enumerate()
                .map(|(i, value)| Field { value, path: format!("{}[{i}]", self.path) })
                .collect(),
            _ => Vec::new(),
        }
    }

    /// The non-empty texts of an array (lists of ids and addresses).
    pub fn texts(&self) -> Vec<String> {
        self.items().iter().filter_map(Field::opt_text).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn paths_name_the_field() {
        let v = json!({ "InstanceSet": [{ "InstanceId": "ins-1", "Cpu": 8, "Flag": true }] });
        let r = Field::root("Response", &v);
        let i = r.get("InstanceSet").at(0);
        assert_eq!(i.get("InstanceId").path(), "Response.InstanceSet[0].InstanceId");
        assert_eq!(i.get("InstanceId").text_required().unwrap(), "ins-1");
        assert_eq!(i.get("Cpu").text_required().unwrap(), "8");
        let e = r.get("InstanceSet").at(1).get("InstanceId").text_required().unwrap_err();
        assert_eq!(e.to_string(), "`Response.InstanceSet[1].InstanceId` is missing");
        let e = i.get("Flag").text_required().unwrap_err();
        assert_eq!(e.to_string(), "`Response.InstanceSet[0].Flag` is a boolean, not a string");
        let e = i.text_required().unwrap_err();
        assert_eq!(e.to_string(), "`Response.InstanceSet[0]` is an object, not a string");
        let v = json!({ "Id": "" });
        assert_eq!(Field::root("", &v).get("Id").text_required().unwrap_err().to_string(), "`Id` is missing");
    }

    #[test]
    fn lenient_readers_default_to_empty() {
        let v = json!({ "a": null, "n": 3, "s": "x", "list": ["p", "", 7], "obj": {} });
        let r = Field::root("r", &v);
        assert_eq!(r.get("a").text(), "");
        assert_eq!(r.get("nope").get("deeper").at(3).text(), "");
        assert_eq!(r.get("n").text(), "3");
        assert_eq!(r.get("s").opt_text().as_deref(), Some("x"));
        assert_eq!(r.get("a").opt_text(), None);
        assert_eq!(r.get("list").texts(), ["p", "7"]);
        assert_eq!(r.get("list").items()[2].path(), "r.list[2]");
        assert!(r.get("obj").items().is_empty());
        assert_eq!(r.get("n").u64(), Some(3));
        assert_eq!(r.get("s").u64(), None);
    }
}
