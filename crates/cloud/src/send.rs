//! The signed send every client makes: sign the request, send it, and read the answer into either the
//! cloud's parsed JSON and its request id, or a [`CloudError`] with the cloud's code, message and request
//! id, classified once. The steps and gpuctl's own fallbacks (`sign`, `bad-response`, `HTTP<status>`
//! with the start of the body) are the same for every cloud; a cloud plugs in only its own facts as a
//! [`Dialect`]: which HTTP statuses alone mean failure, how its error envelope looks, where its result
//! and request id sit, and its classifier.

use std::time::Duration;

use gpuctl_sign::{SignableRequest, SigningParams};
use serde_json::Value;

use crate::account::Account;
use crate::cloud::{CloudError, Created, ErrorKind};
use crate::http::Response;
use crate::json::Field;
use crate::provider::Provider;

/// A cloud's error as its envelope writes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Envelope {
    pub code: String,
    pub message: String,
    pub request_id: Option<String>,
}

/// A successful answer: the part of the body the client reads, and the call's request id.
#[derive(Debug, Clone, PartialEq)]
pub struct Answer {
    /// The name of `body` in the cloud's answer, the start of every path read from it (`Response`
    /// for Tencent, `result` for JD, empty where the body is the answer itself).
    pub root: &'static str,
    pub body: Value,
    pub request_id: Option<String>,
}

impl Answer {
    /// The body, to be read field by field.
    pub fn root(&self) -> Field<'_> {
        Field::root(self.root, &self.body)
    }

    /// One member of the body.
    pub fn get(&self, key: &str) -> Field<'_> {
        self.root().get(key)
    }

    /// What a create made: the instance id at `id`, or `no-instance-id` naming where it should have been.
    pub fn created(&self, provider: Provider, action: &str, id: Field) -> Result<Created, CloudError> {
        match id.text_required() {
            Ok(instance_id) => Ok(Created { instance_id, request_id: self.request_id.clone() }),
            Err(missing) => Err(CloudError::missing_id(provider, action, &missing, self.request_id.clone())),
        }
    }

    /// The one item a describe by id listed, or `not_listed` with the cloud's own not-found `code`.
    pub fn listed<'a>(
        &self,
        provider: Provider,
        action: &str,
        code: &str,
        what: String,
        item: Field<'a>,
    ) -> Result<Field<'a>, CloudError> {
        if item.value().is_null() {
            return Err(CloudError::not_listed(provider, action, code, what, self.request_id.clone()));
        }
        Ok(item)
    }
}

/// What one cloud's answers look like. Implemented by each provider crate's client.
pub trait Dialect: Sync {
    const PROVIDER: Provider;

    /// Whether the cloud also answers errors under a status that is not a failure (in the body of a 200).
    const ERRORS_IN_SUCCESS: bool = false;

    /// Whether this status alone says the call failed (the body, if it is the cloud's envelope, then
    /// says how); by default anything but 200.
    fn failed_status(&self, status: u16) -> bool {
        status != 200
    }

    /// The error this body reports, if it is an error in the cloud's envelope.
    fn error(&self, body: &Value) -> Option<Envelope>;

    /// What the engine does about a failure: the cloud's classifier over its code, message and the
    /// response's status and headers. `code` is `HTTP<status>` when the body was not an envelope.
    fn kind(&self, resp: &Response, code: &str, message: &str) -> ErrorKind;

    /// The part of a successful body the client reads, and the request id.
    fn answer(&self, body: Value) -> Answer;

    /// How long the cloud asked us to wait, from the response's headers.
    fn retry_after(&self, _resp: &Response) -> Option<Duration> {
        None
    }

    /// The message for a body that should have been JSON and was not.
    fn not_json(&self, status: u16, e: &serde_json::Error) -> String {
        format!("HTTP {status} with a body that is not JSON: {e}")
    }
}

impl Account {
    /// Signs `req` with this account's keys and `params`, sends it, and reads the answer in `dialect`.
    pub async fn send<D: Dialect>(
        &self,
        dialect: &D,
        action: &str,
        req: &SignableRequest,
        params: &SigningParams,
    ) -> Result<Answer, CloudError> {
        let signed = gpuctl_sign::sign(req, &self.creds, params)
            .map_err(|e| CloudError::sign(D::PROVIDER, action, &e))?;
        let resp = self
            .http
            .send(D::PROVIDER, action, &req.method, &signed.url, &signed.headers, signed.body)
            .await?;
        read(dialect, action, &resp)
    }
}

/// Reads one response (apart from sending, so it is tested without a network).
pub fn read<D: Dialect>(dialect: &D, action: &str, resp: &Response) -> Result<Answer, CloudError> {
    let json = serde_json::from_slice::<Value>(&resp.body);
    let fail = |e: Envelope| {
        let kind = dialect.kind(resp, &e.code, &e.message);
        Err(CloudError::new(D::PROVIDER, action, kind, e.code, e.message)
            .with_request_id(e.request_id)
            .with_retry_after(dialect.retry_after(resp)))
    };
    if dialect.failed_status(resp.status) {
        return fail(json.ok().and_then(|v| dialect.error(&v)).unwrap_or_else(|| Envelope {
            // Not the cloud's envelope (a gateway's page): the status and the start of what came.
            code: format!("HTTP{}", resp.status),
            message: String::from_utf8_lossy(&resp.body).chars().take(300).collect(),
            request_id: None,
        }));
    }
    let v =
        json.map_err(|e| CloudError::bad_response(D::PROVIDER, action, dialect.not_json(resp.status, &e)))?;
    match D::ERRORS_IN_SUCCESS.then(|| dialect.error(&v)).flatten() {
        Some(e) => fail(e),
        None => Ok(dialect.answer(v)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A made-up cloud: errors as `{"err":{"c","m"},"rid"}`, HTTP ≥ 400 fails, `Retry-After` in seconds.
    struct Toy;

    impl Dialect for Toy {
        const PROVIDER: Provider = Provider::JdCloud;
        const ERRORS_IN_SUCCESS: bool = true;
        fn failed_status(&self, status: u16) -> bool {
            status >= 400
        }
        fn error(&self, body: &Value) -> Option<Envelope> {
            let e = Field::root("", body).get("err");
            e.value().is_object().then(|| Envelope {
                code: e.get("c").text(),
                message: e.get("m").text(),
                request_id: Field::root("", body).get("rid").opt_text(),
            })
        }
        fn kind(&self, resp: &Response, code: &str, _message: &str) -> ErrorKind {
            match code {
                "SLOW" => ErrorKind::Throttled,
                _ if resp.status >= 500 => ErrorKind::Transient,
                _ => ErrorKind::Invalid,
            }
        }
        fn answer(&self, body: Value) -> Answer {
            Answer {
                root: "out",
                request_id: Field::root("", &body).get("rid").opt_text(),
                body: body["out"].clone(),
            }
        }
        fn retry_after(&self, resp: &Response) -> Option<Duration> {
            resp.header("retry-after")?.parse().ok().map(Duration::from_secs)
        }
    }

    fn resp(status: u16, headers: &[(&str, &str)], body: &str) -> Response {
        Response {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: body.as_bytes().to_vec(),
        }
    }

    #[test]
    fn created_and_listed_read_what_must_be_there() {
        let a = read(&Toy, "make", &resp(200, &[], r#"{"out":{"ids":["i-1"],"set":[]},"rid":"r"}"#)).unwrap();
        let made = a.created(Provider::JdCloud, "make", a.get("ids").at(0)).unwrap();
        assert_eq!((made.instance_id.as_str(), made.request_id.as_deref()), ("i-1", Some("r")));
        let e = a.created(Provider::JdCloud, "make", a.get("ids").at(1)).unwrap_err();
        assert_eq!((e.code.as_str(), e.request_id.as_deref()), ("no-instance-id", Some("r")));
        assert!(e.message.ends_with("(`out.ids[1]` is missing)"), "{}", e.message);
        let e = a
            .listed(Provider::JdCloud, "list", "NOT_FOUND", "snapshot s".into(), a.get("set").at(0))
            .unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str(), e.message.as_str()),
            (ErrorKind::NotFound, "NOT_FOUND", "snapshot s is not listed")
        );
        assert_eq!(
            a.listed(Provider::JdCloud, "l", "c", "x".into(), a.get("ids").at(0)).unwrap().text(),
            "i-1"
        );
    }

    #[test]
    fn success_is_the_result_and_request_id() {
        let a = read(&Toy, "list", &resp(200, &[], r#"{"out":{"n":1},"rid":"r-1"}"#)).unwrap();
        assert_eq!(a, Answer { root: "out", body: json!({ "n": 1 }), request_id: Some("r-1".into()) });
        assert_eq!(a.get("n").path(), "out.n");
    }

    #[test]
    fn the_envelope_gives_code_message_request_id_and_the_classifier_the_kind() {
        let e = read(
            &Toy,
            "list",
            &resp(429, &[("Retry-After", "3")], r#"{"err":{"c":"SLOW","m":"wait"},"rid":"r-2"}"#),
        )
        .unwrap_err();
        assert_eq!(
            e,
            CloudError::new(Provider::JdCloud, "list", ErrorKind::Throttled, "SLOW", "wait")
                .with_request_id(Some("r-2".into()))
                .with_retry_after(Some(Duration::from_secs(3)))
        );
        // An error envelope under a status that is not a failure by itself (clouds that answer 200).
        let e = read(&Toy, "list", &resp(200, &[], r#"{"err":{"c":"BAD","m":"no"}}"#)).unwrap_err();
        assert_eq!((e.kind, e.code.as_str(), e.request_id), (ErrorKind::Invalid, "BAD", None));
    }

    #[test]
    fn a_failure_without_the_envelope_keeps_the_status_and_the_start_of_the_body() {
        let page = format!("<html>{}</html>", "x".repeat(400));
        let e = read(&Toy, "list", &resp(502, &[], &page)).unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Transient, "HTTP502"));
        assert_eq!(e.message.chars().count(), 300);
        assert!(e.message.starts_with("<html>xxx"));
    }

    #[test]
    fn a_success_status_with_a_body_that_is_not_json_is_transient() {
        let e = read(&Toy, "list", &resp(200, &[], "oops")).unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Transient, "bad-response"));
        assert!(e.message.starts_with("HTTP 200 with a body that is not JSON: "), "{}", e.message);
    }

    #[test]
    fn a_request_that_cannot_be_signed_is_an_auth_error_without_the_secret() {
        let creds = gpuctl_sign::Credentials::new("", "s3cr3t");
        let account = Account::new(creds, None, crate::http::Http::new(Duration::from_secs(1)).unwrap());
        let req = SignableRequest {
            method: "POST".into(),
            scheme: "https".into(),
            host: "example.invalid".into(),
            path: "/".into(),
            query: vec![],
            headers: vec![],
            body: vec![],
        };
        let params = SigningParams {
            algorithm: gpuctl_sign::Algorithm::Tc3,
            time: 1,
            nonce: String::new(),
            region: "r".into(),
            service: "cvm".into(),
            action: "A".into(),
            version: "v".into(),
        };
        let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
        let e = rt.block_on(account.send(&Toy, "A", &req, &params)).unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Auth, "sign"));
        assert!(!e.to_string().contains("s3cr3t"));
    }
}
