//! The client side of ECS: gpuctl-cloud's `Cloud` (its three service traits) over ECS's RPC-style API (`ecs.rs`), signed with
//! ACS3 (every parameter in the query of a POST with an empty body, as the official SDK sends it), and
//! the classifier that maps ECS's error codes to the engine's seven kinds.

mod bill;
mod cluster;
mod ecs;
mod leftover;
mod monitor;
#[cfg(test)]
mod roundtrip;
mod vpc;

use std::time::Duration;

use gpuctl_cloud::cloud::{CloudError, ErrorKind};
use gpuctl_cloud::http::{Endpoint, Http, Response};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::send::{Answer, Dialect, Envelope};
use gpuctl_cloud::{Account, Provider};
use gpuctl_sign::{Algorithm, Credentials, SignableRequest, SigningParams};
use serde::Deserialize as _;
use serde_json::Value;

use crate::api::bss::{BSS_API_VERSION, BSS_HOST};
use crate::api::cms::{cms_host, CMS_API_VERSION};
use crate::api::nas::{nas_host, NAS_API_VERSION};
use crate::api::vpc::{vpc_host, VPC_API_VERSION};
use crate::api::{codes, ErrorBody, API_VERSION};

/// An ECS account: its keys, and where ECS is reached (an override sends every region there).
#[derive(Debug)]
pub struct Client {
    account: Account,
    /// Each zone's default network as looked up once this run (`vpc.rs`), by (region, zone).
    defaults: vpc::Defaults,
}

/// The Alibaba products the client calls: each has its own host and API version.
#[derive(Clone, Copy)]
enum Product {
    Ecs,
    Vpc,
    Nas,
    /// CloudMonitor (issue 15).
    Cms,
    /// BSS OpenAPI, the account's bill (issue 15).
    Bss,
}

/// Maps an ECS error code (and HTTP status) to what the engine does about it.
pub fn classify(status: u16, code: &str) -> ErrorKind {
    match code {
        c if c.starts_with("Throttling") => ErrorKind::Throttled,
        codes::INTERNAL_ERROR | codes::SERVICE_UNAVAILABLE | "IdempotenceProcessing" | "UnknownError" => {
            ErrorKind::Transient
        }
        codes::NO_STOCK
        | "Zone.NotOnSale"
        | "OperationDenied.ZoneNotAllowed"
        | "InvalidResourceType.NotSupported"
        | codes::BAD_INSTANCE_TYPE => ErrorKind::StockOut,
        c if c.starts_with("QuotaExceed") || c.starts_with("QuotaExceeded") => ErrorKind::Quota,
        codes::INVALID_ACCESS_KEY_ID
        | codes::SIGNATURE_MISMATCH
        | codes::TIMESTAMP_EXPIRED
        | codes::NONCE_USED
        | "IncompleteSignature"
        | "MissingSignature" => ErrorKind::Auth,
        c if c.starts_with("Forbidden") || c.starts_with("InvalidAccessKeyId") => ErrorKind::Auth,
        c if c.ends_with(".NotFound") && c != "InvalidAction.NotFound" => ErrorKind::NotFound,
        _ if status == 429 => ErrorKind::Throttled,
        _ if status >= 500 => ErrorKind::Transient,
        _ => ErrorKind::Invalid,
    }
}

/// ECS's answers: the result at the top with its `RequestId` under 200; an error as
/// `{RequestId, HostId, Code, Message, Recommend}` under a 4xx/5xx, perhaps with `x-acs-retry-after`.
struct Wire;

impl Dialect for Wire {
    const PROVIDER: Provider = Provider::Alibaba;

    fn error(&self, body: &Value) -> Option<Envelope> {
        let b = ErrorBody::deserialize(body).ok()?;
        Some(Envelope { code: b.code, message: b.message, request_id: Some(b.request_id) })
    }

    fn kind(&self, resp: &Response, code: &str, _message: &str) -> ErrorKind {
        match classify(resp.status, code) {
            // The SDK turns a 4xx carrying x-acs-retry-after into a throttling error.
            ErrorKind::Invalid if self.retry_after(resp).is_some() => ErrorKind::Throttled,
            kind => kind,
        }
    }

    fn answer(&self, body: Value) -> Answer {
        Answer { root: "", request_id: Field::root("", &body).get("RequestId").opt_text(), body }
    }

    /// `x-acs-retry-after`, in milliseconds.
    fn retry_after(&self, resp: &Response) -> Option<Duration> {
        resp.header("x-acs-retry-after").and_then(|v| v.parse::<u64>().ok()).map(Duration::from_millis)
    }

    fn not_json(&self, status: u16, e: &serde_json::Error) -> String {
        format!("ECS answered {status} with a body that is not JSON: {e}")
    }
}

/// ECS's regional host (the SDK's endpoint rule; cn-hangzhou is spelled with a dash).
fn host_for(region: &str) -> String {
    match region {
        "cn-hangzhou" => "ecs-cn-hangzhou.aliyuncs.com".into(),
        r => format!("ecs.{r}.aliyuncs.com"),
    }
}

impl Client {
    pub fn new(creds: Credentials, endpoint: Option<Endpoint>, http: Http) -> Client {
        Client { account: Account::new(creds, endpoint, http), defaults: vpc::Defaults::default() }
    }

    /// Signs and sends one action with its `RegionId`; answers the JSON body and its `RequestId`, or
    /// the classified error.
    async fn call(
        &self,
        region: &str,
        action: &str,
        params: Vec<(String, String)>,
    ) -> Result<Answer, CloudError> {
        self.call_at(region, action, params, true).await
    }

    /// Signs and sends one VPC action (its own host and API version) with its `RegionId`.
    async fn call_vpc(
        &self,
        region: &str,
        action: &str,
        params: Vec<(String, String)>,
    ) -> Result<Answer, CloudError> {
        self.send(Product::Vpc, region, action, params, true).await
    }

    /// Signs and sends one NAS action (its own host, `nas.<region>.aliyuncs.com`, and API version). No
    /// NAS request model has a `RegionId`: the host says the region.
    async fn call_nas(
        &self,
        region: &str,
        action: &str,
        params: Vec<(String, String)>,
    ) -> Result<Answer, CloudError> {
        self.send(Product::Nas, region, action, params, false).await
    }

    /// Signs and sends one CloudMonitor action (its own host, `metrics.<region>.aliyuncs.com`, and API
    /// version) with its `RegionId` (the request model has one).
    async fn call_cms(
        &self,
        region: &str,
        action: &str,
        params: Vec<(String, String)>,
    ) -> Result<Answer, CloudError> {
        self.send(Product::Cms, region, action, params, true).await
    }

    /// Signs and sends one BSS OpenAPI action (host `business.aliyuncs.com`, version 2017-12-14). The
    /// bill is the account's: no BSS request model gpuctl sends has a `RegionId`.
    async fn call_bss(&self, action: &str, params: Vec<(String, String)>) -> Result<Answer, CloudError> {
        self.send(Product::Bss, "", action, params, false).await
    }

    /// Sends one action to `region`'s host, with a `RegionId` parameter only where the action's
    /// request model has one.
    async fn call_at(
        &self,
        region: &str,
        action: &str,
        params: Vec<(String, String)>,
        with_region_id: bool,
    ) -> Result<Answer, CloudError> {
        self.send(Product::Ecs, region, action, params, with_region_id).await
    }

    async fn send(
        &self,
        product: Product,
        region: &str,
        action: &str,
        params: Vec<(String, String)>,
        with_region_id: bool,
    ) -> Result<Answer, CloudError> {
        let (host, version) = match product {
            Product::Ecs => (host_for(region), API_VERSION),
            Product::Vpc => (vpc_host(region), VPC_API_VERSION),
            Product::Nas => (nas_host(region), NAS_API_VERSION),
            Product::Cms => (cms_host(region), CMS_API_VERSION),
            Product::Bss => (BSS_HOST.to_string(), BSS_API_VERSION),
        };
        let endpoint = self.account.endpoint_or(|| host);
        let mut query = Vec::with_capacity(params.len() + 1);
        if with_region_id {
            query.push(("RegionId".to_string(), region.to_string()));
        }
        query.extend(params);
        let req = SignableRequest {
            method: "POST".into(),
            scheme: endpoint.scheme,
            host: endpoint.host,
            path: "/".into(),
            query,
            headers: vec![],
            body: vec![],
        };
        let sp = SigningParams {
            algorithm: Algorithm::Acs3,
            time: jiff::Timestamp::now().as_second(),
            nonce: uuid::Uuid::new_v4().to_string(),
            region: String::new(),
            service: String::new(),
            action: action.into(),
            version: version.into(),
        };
        self.account.send(&Wire, action, &req, &sp).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifier_maps_ecs_codes() {
        for (status, code, kind) in [
            (400, "Throttling.User", ErrorKind::Throttled),
            (429, "Throttling", ErrorKind::Throttled),
            (403, "OperationDenied.NoStock", ErrorKind::StockOut),
            (400, "Zone.NotOnSale", ErrorKind::StockOut),
            (403, "QuotaExceed.PostPaidInstance", ErrorKind::Quota),
            (404, "InvalidAccessKeyId.NotFound", ErrorKind::Auth),
            (400, "SignatureDoesNotMatch", ErrorKind::Auth),
            (404, "InvalidInstanceId.NotFound", ErrorKind::NotFound),
            (500, "InternalError", ErrorKind::Transient),
            (503, "ServiceUnavailable", ErrorKind::Transient),
            (400, "IdempotentParameterMismatch", ErrorKind::Invalid),
            (400, "InvalidAction.NotFound", ErrorKind::Invalid),
            (502, "Whatever", ErrorKind::Transient),
        ] {
            assert_eq!(classify(status, code), kind, "{code}");
        }
    }

    #[test]
    fn errors_carry_the_body_and_the_retry_hint() {
        let resp = |status, headers: &[(&str, &str)], body: &str| Response {
            status,
            headers: headers.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
            body: body.as_bytes().to_vec(),
        };
        let body = r#"{"RequestId":"r-1","HostId":"ecs.aliyuncs.com","Code":"IdempotentParameterMismatch","Message":"m"}"#;
        let e = gpuctl_cloud::send::read(&Wire, "RunInstances", &resp(400, &[], body)).unwrap_err();
        assert_eq!((e.kind, e.request_id.as_deref(), e.retry_after), (ErrorKind::Invalid, Some("r-1"), None));
        let e = gpuctl_cloud::send::read(
            &Wire,
            "RunInstances",
            &resp(400, &[("x-acs-retry-after", "1500")], body),
        )
        .unwrap_err();
        assert_eq!((e.kind, e.retry_after), (ErrorKind::Throttled, Some(Duration::from_millis(1500))));
        // A 200 is the result, whatever fields it has.
        let a = gpuctl_cloud::send::read(&Wire, "DescribePrice", &resp(200, &[], body)).unwrap();
        assert_eq!(a.request_id.as_deref(), Some("r-1"));
        let e = gpuctl_cloud::send::read(&Wire, "DescribePrice", &resp(200, &[], "<html>")).unwrap_err();
        assert!(e.message.starts_with("ECS answered 200 with a body that is not JSON"), "{}", e.message);
    }
}
