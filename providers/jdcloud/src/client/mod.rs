//! The client side of JD Cloud: gpuctl-cloud's `Cloud` (its service traits) over the VM (`vm.rs`), Disk (`disk.rs`),
//! Billing (`billing.rs`), renewal (`renewal.rs`) and VPC (`vpc.rs`, `network = "auto"`) APIs (`/v1/regions/{region}/…` paths, JSON bodies for POST,
//! `filters.N.name/values.M` queries for GET), signed with JDCLOUD3 as JD's current SDK does, and the
//! classifier for JD's HTTP status words.
//!
//! JD's createInstances has no release time: the client sets it right after the create with
//! modifyInstanceReleaseTime, and reports a failure there as transient so the engine retries the
//! (idempotent) create and the release time is set before the instance counts as created. Should
//! every retry fail there, the engine records the instance it finds by token and sets the time itself.

mod bill;
mod billing;
mod cluster;
mod disk;
mod leftover;
mod monitor;
mod renewal;
mod vm;
mod vpc;

use gpuctl_cloud::cloud::{CloudError, ErrorKind};
use gpuctl_cloud::http::{Endpoint, Http, Response};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::send::{Answer, Dialect, Envelope};
use gpuctl_cloud::{Account, Provider};
use gpuctl_sign::{Algorithm, Credentials, SignableRequest, SigningParams};
use serde::Deserialize as _;
use serde_json::Value;

use crate::api::ErrorBody;

/// A JD Cloud account: its keys, and where the APIs are reached (an override serves vm, disk and billing).
#[derive(Debug)]
pub struct Client {
    account: Account,
}

/// Maps JD's HTTP status and status word to what the engine does about it. JD has no sold-out code:
/// the local cloud (and, by the docs, JD) answers FAILED_PRECONDITION with "sold out" in the message.
pub fn classify(http: u16, status: &str, message: &str) -> ErrorKind {
    match status {
        "RATE_LIMIT" => ErrorKind::Throttled,
        "QUOTA_EXCEEDED" => ErrorKind::Quota,
        "UNAUTHENTICATED" | "HTTP_FORBIDDEN" | "PERMISSION_DENIED" => ErrorKind::Auth,
        "NOT_FOUND" => ErrorKind::NotFound,
        "INTERNAL" | "UNKNOWN" | "UNAVAILABLE" | "SOURCE_UNAVAILABLE" | "ABORTED" => ErrorKind::Transient,
        "FAILED_PRECONDITION"
            if message.contains("sold out")
                || message.contains("售罄")
                || message.contains("insufficient") =>
        {
            ErrorKind::StockOut
        }
        _ if http == 429 => ErrorKind::Throttled,
        _ if http >= 500 => ErrorKind::Transient,
        _ => ErrorKind::Invalid,
    }
}

/// JD's answers: `{requestId, result}` under 200; `{requestId, error{code,status,message}}` otherwise.
struct Wire;

impl Dialect for Wire {
    const PROVIDER: Provider = Provider::JdCloud;

    /// The status word is the code gpuctl reports (JD's `error.code` only repeats the HTTP status).
    fn error(&self, body: &Value) -> Option<Envelope> {
        let b = ErrorBody::deserialize(body).ok()?;
        Some(Envelope { code: b.error.status, message: b.error.message, request_id: Some(b.request_id) })
    }

    fn kind(&self, resp: &Response, code: &str, message: &str) -> ErrorKind {
        classify(resp.status, code, message)
    }

    fn answer(&self, mut body: Value) -> Answer {
        let request_id = Field::root("", &body).get("requestId").opt_text();
        let result = body.get_mut("result").map(Value::take).unwrap_or_default();
        Answer { root: "result", body: result, request_id }
    }
}

/// GET query pairs for JD filters: `filters.1.name=…&filters.1.values.1=…` (1-based, as the SDK builds them).
fn filter_query(filters: &[(&str, Vec<String>)]) -> Vec<(String, String)> {
    let mut q = Vec::new();
    for (i, (name, values)) in filters.iter().enumerate() {
        q.push((format!("filters.{}.name", i + 1), name.to_string()));
        for (j, v) in values.iter().enumerate() {
            q.push((format!("filters.{}.values.{}", i + 1, j + 1), v.clone()));
        }
    }
    q
}

/// One call: the service (the scope and the host), the method and the path under
/// `/{version}/regions/{region}/` (v1 for vm, disk and billing; the renewal service is v2).
struct Call<'a> {
    service: &'a str,
    version: &'a str,
    action: &'a str,
    method: &'a str,
    path: &'a str,
}

impl Client {
    pub fn new(creds: Credentials, endpoint: Option<Endpoint>, http: Http) -> Client {
        Client { account: Account::new(creds, endpoint, http) }
    }

    /// Signs and sends one call; answers `result` and the request id, or the classified error.
    async fn call(
        &self,
        call: Call<'_>,
        region: &str,
        query: Vec<(String, String)>,
        body: Option<Value>,
    ) -> Result<Answer, CloudError> {
        let Call { service, version, action, method, path } = call;
        let ep = self.account.endpoint_or(|| format!("{service}.jdcloud-api.com"));
        let req = SignableRequest {
            method: method.into(),
            scheme: ep.scheme,
            host: ep.host,
            path: format!("/{version}/regions/{region}/{path}"),
            query,
            headers: vec![("Content-Type".into(), "application/json".into())],
            body: body.map(|b| b.to_string().into_bytes()).unwrap_or_default(),
        };
        let sp = SigningParams {
            algorithm: Algorithm::JdCloud3,
            time: jiff::Timestamp::now().as_second(),
            nonce: uuid::Uuid::new_v4().to_string(),
            region: region.into(),
            service: service.into(),
            action: String::new(),
            version: String::new(),
        };
        self.account.send(&Wire, action, &req, &sp).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifier_maps_jd_statuses() {
        for (http, status, message, kind) in [
            (429, "RATE_LIMIT", "", ErrorKind::Throttled),
            (429, "QUOTA_EXCEEDED", "", ErrorKind::Quota),
            (401, "UNAUTHENTICATED", "", ErrorKind::Auth),
            (404, "NOT_FOUND", "", ErrorKind::NotFound),
            (503, "UNAVAILABLE", "", ErrorKind::Transient),
            (500, "INTERNAL", "", ErrorKind::Transient),
            (
                400,
                "FAILED_PRECONDITION",
                "instanceType g.n2.xlarge is sold out in cn-north-1a",
                ErrorKind::StockOut,
            ),
            (
                400,
                "FAILED_PRECONDITION",
                "instance i-1 is pending; wait until it is running",
                ErrorKind::Invalid,
            ),
            (400, "INVALID_ARGUMENT", "", ErrorKind::Invalid),
        ] {
            assert_eq!(classify(http, status, message), kind, "{status} {message}");
        }
    }

    #[test]
    fn filters_are_one_based() {
        let q = filter_query(&[("instanceId", vec!["i-a".into(), "i-b".into()])]);
        assert_eq!(
            q,
            [
                ("filters.1.name".into(), "instanceId".into()),
                ("filters.1.values.1".into(), "i-a".into()),
                ("filters.1.values.2".into(), "i-b".into())
            ] as [(String, String); 3]
        );
    }

    #[test]
    fn answers_and_errors() {
        let resp = |status, body: &str| Response { status, headers: vec![], body: body.as_bytes().to_vec() };
        let a = gpuctl_cloud::send::read(
            &Wire,
            "describeInstances",
            &resp(200, r#"{"requestId":"r-1","result":{"totalCount":0}}"#),
        )
        .unwrap();
        assert_eq!((a.get("totalCount").path(), a.request_id.as_deref()), ("result.totalCount", Some("r-1")));
        let body = r#"{"requestId":"r-2","error":{"code":400,"status":"FAILED_PRECONDITION","message":"g.n2.xlarge is sold out"}}"#;
        let e = gpuctl_cloud::send::read(&Wire, "createInstances", &resp(400, body)).unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str(), e.request_id.as_deref()),
            (ErrorKind::StockOut, "FAILED_PRECONDITION", Some("r-2"))
        );
        let e = gpuctl_cloud::send::read(&Wire, "createInstances", &resp(502, "bad gateway")).unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Transient, "HTTP502"));
    }
}
