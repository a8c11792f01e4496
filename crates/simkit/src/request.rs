//! The plain request and response an emulator sees: no HTTP library types, so emulators stay
//! testable without a server and the server can change without touching them.

use std::net::SocketAddr;

use bytes::Bytes;

/// One HTTP request as received. Header names are lower-case; values are kept as sent.
#[derive(Clone, Debug, Default)]
pub struct SimRequest {
    /// Upper-case method: "GET", "POST", ...
    pub method: String,
    /// The path exactly as sent, without the query ("/", "/v1/regions/cn-north-1/instances").
    pub path: String,
    /// The query string exactly as sent (no leading '?'), not decoded: signatures cover it raw.
    pub raw_query: String,
    /// (lower-case name, value) in arrival order; repeated names appear repeatedly.
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
    pub peer: Option<SocketAddr>,
}

impl SimRequest {
    /// A request with no headers or body; tests build on it with [`with_header`](Self::with_header).
    pub fn new(method: &str, path_and_query: &str) -> Self {
        let (path, raw_query) = match path_and_query.split_once('?') {
            Some((p, q)) => (p.to_string(), q.to_string()),
            None => (path_and_query.to_string(), String::new()),
        };
        Self { method: method.to_ascii_uppercase(), path, raw_query, ..Self::default() }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    pub fn with_body(mut self, body: impl Into<Bytes>) -> Self {
        self.body = body.into();
        self
    }

    /// The first value of a header, by case-insensitive name.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(n, _)| n.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// The query's (name, value) pairs, form-decoded (`+` is a space), in order.
    pub fn query_pairs(&self) -> Vec<(String, String)> {
        crate::params::form_decode(&self.raw_query)
    }

    /// Query pairs plus, for an `application/x-www-form-urlencoded` body, the body's pairs — how
    /// RPC-style APIs (Alibaba, Tencent GET/form) carry their parameters.
    pub fn form_params(&self) -> Vec<(String, String)> {
        let mut pairs = self.query_pairs();
        let form_body = self
            .header("content-type")
            .is_some_and(|ct| ct.to_ascii_lowercase().starts_with("application/x-www-form-urlencoded"));
        if form_body && !self.body.is_empty() {
            pairs.extend(crate::params::form_decode(&String::from_utf8_lossy(&self.body)));
        }
        pairs
    }

    /// The body parsed as JSON; an empty body is an empty object.
    pub fn json_body(&self) -> Result<serde_json::Value, serde_json::Error> {
        if self.body.iter().all(|b| b.is_ascii_whitespace()) {
            return Ok(serde_json::Value::Object(Default::default()));
        }
        serde_json::from_slice(&self.body)
    }
}

/// One HTTP response. The server adds `Content-Length`; emulators set the cloud's other headers.
#[derive(Clone, Debug)]
pub struct SimResponse {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Bytes,
}

impl SimResponse {
    /// A JSON answer with `Content-Type: application/json`.
    pub fn json(status: u16, value: &serde_json::Value) -> Self {
        let body = serde_json::to_vec(value).expect("a serde_json::Value always serialises");
        Self { status, headers: vec![("content-type".into(), "application/json".into())], body: body.into() }
    }

    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_ascii_lowercase(), value.to_string()));
        self
    }

    /// A plain-text answer (the metadata services answer in text).
    pub fn text(status: u16, text: &str) -> Self {
        Self {
            status,
            headers: vec![("content-type".into(), "text/plain".into())],
            body: text.as_bytes().to_vec().into(),
        }
    }

    /// The body parsed back as JSON (for tests).
    pub fn json_body(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}
