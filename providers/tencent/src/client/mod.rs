//! The client side of Tencent Cloud: gpuctl-cloud's `Cloud` (its service traits) over CVM (`cvm.rs`: instances, prices,
//! stock), CBS (`cbs.rs`: disks, snapshots), VPC (`vpc.rs`) and a cluster's HPC cluster and CFS file system
//! (`cluster.rs`), JSON POSTs signed with TC3, and the classifier that maps
//! Tencent's error codes (always HTTP 200, the error in the body) to the engine's seven kinds.

mod bill;
mod cbs;
mod cluster;
mod cvm;
mod leftover;
mod monitor;
mod vpc;

use gpuctl_cloud::cloud::{CloudError, ErrorKind};
use gpuctl_cloud::http::{Endpoint, Http, Response};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::send::{Answer, Dialect, Envelope};
use gpuctl_cloud::{Account, DiskCategory, Provider};
use gpuctl_sign::{Algorithm, Credentials, SignableRequest, SigningParams};
use serde_json::Value;

use crate::api::{codes, endpoint, version};

/// A Tencent Cloud account: its keys, and where CVM/CBS are reached (an override serves both).
#[derive(Debug)]
pub struct Client {
    account: Account,
}

/// Maps a Tencent error code to what the engine does about it (codes from the SDK's errorcodes.py and
/// retry.py, shared/reference/cloud-apis.md §1).
pub fn classify(code: &str) -> ErrorKind {
    match code {
        c if c.starts_with("RequestLimitExceeded") => ErrorKind::Throttled,
        codes::INTERNAL_ERROR
        | "InternalError.UnknownError"
        | "ResourceUnavailable"
        | "FailedOperation.RequestTimeout" => ErrorKind::Transient,
        c if c.starts_with("InternalError") => ErrorKind::Transient,
        // DeleteHpcClusters of a cluster whose instances are still leaving (高性能计算集群使用中), CFS's
        // create under a token whose file system is still being made (资源正在创建中), a CFS delete while the
        // file system is still being made (无效的文件系统状态): each passes once the cloud catches up.
        codes::HPC_IN_USE | codes::CFS_CLIENT_TOKEN_IN_USE | codes::CFS_INVALID_FS_STATUS => {
            ErrorKind::Transient
        }
        // 文件系统数量达到上限 / 用户创建高性能集群配额已达上限: quotas, not stock.
        codes::CFS_FILE_SYSTEM_LIMIT | "UnsupportedOperation.InsufficientClusterQuota" => ErrorKind::Quota,
        c if c.starts_with("ResourceInsufficient") || c.starts_with("ResourcesSoldOut") => {
            ErrorKind::StockOut
        }
        "ResourceUnavailable.InstanceType"
        | "InvalidParameterValue.InsufficientOffering"
        | "InvalidParameterValue.InsufficientPrice" => ErrorKind::StockOut,
        c if c.starts_with("LimitExceeded") => ErrorKind::Quota,
        c if c.starts_with("AuthFailure") || c.starts_with("UnauthorizedOperation") => ErrorKind::Auth,
        c if c.ends_with(".NotFound") || c.starts_with("ResourceNotFound") => ErrorKind::NotFound,
        _ => ErrorKind::Invalid,
    }
}

/// Tencent's answers: `{"Response":{…,"RequestId"}}`, an error as `Response.Error{Code,Message}` under
/// HTTP 200 (the common error shape, shared/reference/cloud-apis.md §1).
struct Wire;

impl Dialect for Wire {
    const PROVIDER: Provider = Provider::Tencent;
    const ERRORS_IN_SUCCESS: bool = true;

    /// CVM answers its own errors with 200; a 5xx or 429 is a gateway's (which may still use CVM's shape).
    fn failed_status(&self, status: u16) -> bool {
        status >= 500 || status == 429
    }

    fn error(&self, body: &Value) -> Option<Envelope> {
        let r = Field::root("", body).get("Response");
        let e = r.get("Error");
        (!e.value().is_null()).then(|| Envelope {
            code: e.get("Code").text(),
            message: e.get("Message").text(),
            request_id: r.get("RequestId").opt_text(),
        })
    }

    fn kind(&self, resp: &Response, code: &str, _message: &str) -> ErrorKind {
        match resp.status {
            429 => ErrorKind::Throttled,
            s if s >= 500 => ErrorKind::Transient,
            _ => classify(code),
        }
    }

    fn answer(&self, mut body: Value) -> Answer {
        let r = body.get_mut("Response").map(Value::take).unwrap_or_default();
        Answer { root: "Response", request_id: Field::root("", &r).get("RequestId").opt_text(), body: r }
    }
}

/// The wire name of a disk category, and back.
fn disk_type(c: DiskCategory) -> &'static str {
    match c {
        DiskCategory::Ssd => "CLOUD_SSD",
        DiskCategory::Premium => "CLOUD_PREMIUM",
    }
}

fn category_back(s: &str) -> DiskCategory {
    if s == "CLOUD_PREMIUM" {
        DiskCategory::Premium
    } else {
        DiskCategory::Ssd
    }
}

impl Client {
    pub fn new(creds: Credentials, endpoint: Option<Endpoint>, http: Http) -> Client {
        Client { account: Account::new(creds, endpoint, http) }
    }

    /// Signs and sends one action; answers `Response` (its `RequestId` apart), or the classified error.
    async fn call(
        &self,
        service: &str,
        region: &str,
        action: &str,
        body: Value,
    ) -> Result<Answer, CloudError> {
        let ep = self.account.endpoint_or(|| endpoint(service));
        let req = SignableRequest {
            method: "POST".into(),
            scheme: ep.scheme,
            host: ep.host,
            path: "/".into(),
            query: vec![],
            headers: vec![],
            body: body.to_string().into_bytes(),
        };
        let sp = SigningParams {
            algorithm: Algorithm::Tc3,
            time: jiff::Timestamp::now().as_second(),
            nonce: String::new(),
            region: region.into(),
            service: service.into(),
            action: action.into(),
            version: version(service).into(),
        };
        self.account.send(&Wire, action, &req, &sp).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifier_maps_tencent_codes() {
        for (code, kind) in [
            ("RequestLimitExceeded", ErrorKind::Throttled),
            ("RequestLimitExceeded.UinLimitExceeded", ErrorKind::Throttled),
            ("InternalError", ErrorKind::Transient),
            ("ResourceInsufficient.ZoneSoldOutForSpecifiedInstance", ErrorKind::StockOut),
            ("ResourcesSoldOut.SpecifiedInstanceType", ErrorKind::StockOut),
            ("InvalidParameterValue.InsufficientPrice", ErrorKind::StockOut),
            ("LimitExceeded.InstanceQuota", ErrorKind::Quota),
            ("AuthFailure.SignatureFailure", ErrorKind::Auth),
            ("InvalidInstanceId.NotFound", ErrorKind::NotFound),
            ("InvalidParameterValue.InstanceTypeNotFound", ErrorKind::Invalid),
            ("InvalidImageId.Malformed", ErrorKind::Invalid),
            ("ResourceInUse.HpcCluster", ErrorKind::Transient),
            ("ResourceNotFound.HpcCluster", ErrorKind::NotFound),
            ("ResourceNotFound.FileSystemNotFound", ErrorKind::NotFound),
            ("FailedOperation.ClientTokenInUse", ErrorKind::Transient),
            ("ResourceInsufficient.FileSystemLimitExceeded", ErrorKind::Quota),
            ("LimitExceeded.HpcClusterQuota", ErrorKind::Quota),
            ("InvalidParameterValue.InstanceTypeRequiredHpcCluster", ErrorKind::Invalid),
        ] {
            assert_eq!(classify(code), kind, "{code}");
        }
    }

    #[test]
    fn errors_come_from_the_body_and_gateway_statuses() {
        let resp = |status, body: &str| Response { status, headers: vec![], body: body.as_bytes().to_vec() };
        let err = r#"{"Response":{"Error":{"Code":"ResourcesSoldOut.SpecifiedInstanceType","Message":"sold"},"RequestId":"r-1"}}"#;
        let e = gpuctl_cloud::send::read(&Wire, "RunInstances", &resp(200, err)).unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str(), e.request_id.as_deref()),
            (ErrorKind::StockOut, "ResourcesSoldOut.SpecifiedInstanceType", Some("r-1"))
        );
        // A gateway's 503 in CVM's shape keeps the code and request id, and is transient whatever the code.
        let e = gpuctl_cloud::send::read(&Wire, "RunInstances", &resp(503, err)).unwrap_err();
        assert_eq!((e.kind, e.request_id.as_deref()), (ErrorKind::Transient, Some("r-1")));
        let e = gpuctl_cloud::send::read(&Wire, "RunInstances", &resp(429, "slow down")).unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str(), e.message.as_str()),
            (ErrorKind::Throttled, "HTTP429", "slow down")
        );
        let a = gpuctl_cloud::send::read(
            &Wire,
            "DescribeInstances",
            &resp(200, r#"{"Response":{"TotalCount":0,"RequestId":"r-2"}}"#),
        )
        .unwrap();
        assert_eq!((a.get("TotalCount").u64(), a.request_id.as_deref()), (Some(0), Some("r-2")));
    }
}
