//! The client side of Tencent Cloud: gpuctl-cloud's [`Cloud`] over CVM (instances, prices) and CBS
//! (disks, snapshots), JSON POSTs signed with TC3, and the classifier that maps Tencent's error codes
//! (always HTTP 200, the error in the body) to the engine's seven kinds.

use std::collections::BTreeMap;

use base64::Engine as _;
use gpuctl_cloud::cloud::{
    BoxFuture, Cloud, CloudError, CreateRequest, Created, DiskInfo, DiskKind, ErrorKind, Filter, Instance,
    InstanceState, Quote, SnapshotState,
};
use gpuctl_cloud::http::{Endpoint, Http};
use gpuctl_cloud::{BillingMode, Disk, DiskCategory, NetworkIds, Provider};
use gpuctl_sign::{Algorithm, Credentials, SignableRequest, SigningParams};
use serde_json::{json, Value};

use crate::api::{codes, endpoint, CBS, CVM, VERSION};

/// A Tencent Cloud account: its keys, and where CVM/CBS are reached (an override serves both).
pub struct Client {
    creds: Credentials,
    endpoint: Option<Endpoint>,
    http: Http,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("tencent::Client")
            .field("secret_id", &self.creds.access_key_id)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
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

fn s(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    }
}

fn opt(v: &Value) -> Option<String> {
    Some(s(v)).filter(|x| !x.is_empty())
}

impl Client {
    pub fn new(creds: Credentials, endpoint: Option<Endpoint>, http: Http) -> Client {
        Client { creds, endpoint, http }
    }

    /// Signs and sends one action; returns `Response` minus its `RequestId`, or the classified error.
    async fn call(
        &self,
        service: &str,
        region: &str,
        action: &str,
        body: Value,
    ) -> Result<(Value, Option<String>), CloudError> {
        let ep = self.endpoint.clone().unwrap_or_else(|| Endpoint::https(endpoint(service)));
        let req = SignableRequest {
            method: "POST".into(),
            scheme: ep.scheme.clone(),
            host: ep.host.clone(),
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
            version: VERSION.into(),
        };
        let err = |kind, code: &str, message: String, request_id| CloudError {
            provider: Provider::Tencent,
            action: action.into(),
            kind,
            code: code.into(),
            message,
            request_id,
            retry_after: None,
        };
        let signed = gpuctl_sign::sign(&req, &self.creds, &sp)
            .map_err(|e| err(ErrorKind::Auth, "sign", e.to_string(), None))?;
        let resp = self
            .http
            .send(Provider::Tencent, action, "POST", &signed.url, &signed.headers, signed.body)
            .await?;
        if resp.status >= 500 || resp.status == 429 {
            let kind = if resp.status == 429 { ErrorKind::Throttled } else { ErrorKind::Transient };
            // A gateway may answer 5xx in CVM's own error shape: keep its code and request id when it does.
            let v: Value = serde_json::from_slice(&resp.body).unwrap_or_default();
            let r = &v["Response"];
            if let Some(code) = r["Error"]["Code"].as_str() {
                return Err(err(kind, code, s(&r["Error"]["Message"]), opt(&r["RequestId"])));
            }
            return Err(err(
                kind,
                &format!("HTTP{}", resp.status),
                String::from_utf8_lossy(&resp.body).chars().take(300).collect(),
                None,
            ));
        }
        let v: Value = serde_json::from_slice(&resp.body).map_err(|e| {
            err(
                ErrorKind::Transient,
                "bad-response",
                format!("HTTP {} with a body that is not JSON: {e}", resp.status),
                None,
            )
        })?;
        let r = &v["Response"];
        let request_id = opt(&r["RequestId"]);
        if let Some(e) = r.get("Error") {
            let code = s(&e["Code"]);
            return Err(err(classify(&code), &code, s(&e["Message"]), request_id));
        }
        Ok((r.clone(), request_id))
    }
}

/// RunInstances / InquiryPriceRunInstances body for one instance.
fn run_body(r: &CreateRequest) -> Value {
    let mut b = json!({
        "Placement": { "Zone": r.zone },
        "InstanceType": r.instance_type,
        "ImageId": r.image_id,
        "InstanceCount": 1,
        "InstanceName": r.name,
        "SystemDisk": { "DiskType": disk_type(r.system_disk.category), "DiskSize": r.system_disk.size_gb },
    });
    let (charge, months) = match r.billing {
        BillingMode::Hourly => ("POSTPAID_BY_HOUR", None),
        BillingMode::Spot => ("SPOTPAID", None),
        // Tencent sells months only; the spec refuses weekly for Tencent before it gets here.
        BillingMode::Weekly | BillingMode::Monthly => ("PREPAID", Some(r.term)),
        BillingMode::Year1 => ("PREPAID", Some(12)),
        BillingMode::Year3 => ("PREPAID", Some(36)),
    };
    b["InstanceChargeType"] = json!(charge);
    if let Some(m) = months {
        b["InstanceChargePrepaid"] = json!({ "Period": m, "RenewFlag": "NOTIFY_AND_MANUAL_RENEW" });
    }
    if r.billing == BillingMode::Spot {
        let mut spot = json!({ "SpotInstanceType": "one-time" });
        if let Some(max) = r.spot_max_price {
            spot["MaxPrice"] = json!(format!("{max}"));
        }
        b["InstanceMarketOptions"] = json!({ "MarketType": "spot", "SpotOptions": spot });
    }
    if !r.data_disks.is_empty() {
        b["DataDisks"] = r
            .data_disks
            .iter()
            .map(|d| {
                let mut x = json!({ "DiskType": disk_type(d.category), "DiskSize": d.size_gb, "DeleteWithInstance": true });
                if let Some(snap) = &d.snapshot_id {
                    x["SnapshotId"] = json!(snap);
                }
                x
            })
            .collect();
    }
    if let Some(net) = &r.network {
        b["VirtualPrivateCloud"] = json!({ "VpcId": net.vpc, "SubnetId": net.subnet });
        b["SecurityGroupIds"] = json!(net.security_groups);
    }
    if let Some(k) = &r.login_key {
        b["LoginSettings"] = json!({ "KeyIds": [k] });
    }
    if let Some(t) = r.auto_release_at {
        b["ActionTimer"] = json!({ "TimerAction": "TerminateInstances", "ActionTime": t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string() });
    }
    if !r.tags.is_empty() {
        let tags: Vec<Value> = r.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect();
        b["TagSpecification"] = json!([{ "ResourceType": "instance", "Tags": tags }]);
    }
    if let Some(u) = &r.user_data {
        b["UserData"] = json!(base64::engine::general_purpose::STANDARD.encode(u));
    }
    b
}

/// One DescribeInstances page (100, the most CVM gives) of what `filter` selects. CVM takes `InstanceIds`
/// or `Filters`, never both; `tag-key` matches a key whatever its value, `tag:<key>` a key and value.
fn describe_body(filter: &Filter, offset: usize) -> Value {
    let mut body = json!({ "Offset": offset, "Limit": 100 });
    match filter {
        Filter::Ids(ids) => body["InstanceIds"] = json!(ids),
        Filter::Tag { key, value } => {
            body["Filters"] = json!([{ "Name": format!("tag:{key}"), "Values": [value] }])
        }
        Filter::TagKey(key) => body["Filters"] = json!([{ "Name": "tag-key", "Values": [key] }]),
    }
    body
}

fn state_of(st: &str) -> InstanceState {
    match st {
        "PENDING" | "STARTING" | "REBOOTING" => InstanceState::Pending,
        "RUNNING" => InstanceState::Running,
        "STOPPING" => InstanceState::Stopping,
        "STOPPED" => InstanceState::Stopped,
        "TERMINATING" => InstanceState::Terminating,
        // 停止待销毁: a terminated prepaid (or arrears-stopped) instance in the recycle bin. CVM lists it
        // until the bin empties, days later, but it bills no more and gpuctl can do nothing further to
        // it: for a release that is done, so waiting for it to vanish would only run into the timeout.
        "SHUTDOWN" => InstanceState::Terminated,
        "LAUNCH_FAILED" => InstanceState::Failed,
        other => InstanceState::Other(other.into()),
    }
}

fn disk_of(d: &Value) -> Option<DiskInfo> {
    let id = opt(&d["DiskId"])?;
    Some(DiskInfo {
        disk_id: id,
        disk: Disk {
            category: category_back(&s(&d["DiskType"])),
            size_gb: d["DiskSize"].as_u64().unwrap_or(0) as u32,
            snapshot_id: None,
        },
    })
}

fn instance_of(i: &Value, region: &str) -> Instance {
    let first = |v: &Value| v.as_array().and_then(|a| a.first()).and_then(opt);
    let tags: BTreeMap<String, String> = i["Tags"]
        .as_array()
        .map(|a| a.iter().map(|t| (s(&t["Key"]), s(&t["Value"]))).collect())
        .unwrap_or_default();
    let billing = match s(&i["InstanceChargeType"]).as_str() {
        "POSTPAID_BY_HOUR" => Some(BillingMode::Hourly),
        "SPOTPAID" => Some(BillingMode::Spot),
        "PREPAID" => Some(BillingMode::Monthly),
        _ => None,
    };
    let vpc = &i["VirtualPrivateCloud"];
    Instance {
        instance_id: s(&i["InstanceId"]),
        name: opt(&i["InstanceName"]),
        region: region.into(),
        zone: s(&i["Placement"]["Zone"]),
        instance_type: s(&i["InstanceType"]),
        state: state_of(&s(&i["InstanceState"])),
        billing,
        image_id: opt(&i["ImageId"]),
        system_disk: disk_of(&i["SystemDisk"]),
        data_disks: i["DataDisks"]
            .as_array()
            .map(|a| a.iter().filter_map(disk_of).collect())
            .unwrap_or_default(),
        network: opt(&vpc["SubnetId"]).map(|subnet| NetworkIds {
            vpc: s(&vpc["VpcId"]),
            subnet,
            security_groups: i["SecurityGroupIds"]
                .as_array()
                .map(|a| a.iter().map(s).collect())
                .unwrap_or_default(),
        }),
        login_key: first(&i["LoginSettings"]["KeyIds"]),
        public_ip: first(&i["PublicIpAddresses"]),
        private_ip: first(&i["PrivateIpAddresses"]),
        auto_release_at: None,
        // CVM's `CreatedTime` is ISO 8601 in UTC (`2020-09-22T00:00:00Z`).
        launched_at: opt(&i["CreatedTime"])
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.to_string()),
        tags,
    }
}

impl Cloud for Client {
    fn provider(&self) -> Provider {
        Provider::Tencent
    }

    fn create<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Created, CloudError>> {
        Box::pin(async move {
            let mut body = run_body(req);
            body["ClientToken"] = json!(req.client_token);
            if req.dry_run {
                body["DryRun"] = json!(true);
            }
            match self.call(CVM, &req.region, "RunInstances", body).await {
                Ok((r, request_id)) => {
                    let id = r["InstanceIdSet"].get(0).map(s).unwrap_or_default();
                    if id.is_empty() {
                        return Err(CloudError {
                            provider: Provider::Tencent,
                            action: "RunInstances".into(),
                            kind: ErrorKind::Transient,
                            code: "no-instance-id".into(),
                            message: "RunInstances answered without an instance id".into(),
                            request_id,
                            retry_after: None,
                        });
                    }
                    Ok(Created { instance_id: id, request_id })
                }
                Err(e) if req.dry_run && e.code == codes::DRY_RUN_OPERATION => {
                    Ok(Created { instance_id: String::new(), request_id: e.request_id })
                }
                Err(e) => Err(e),
            }
        })
    }

    fn describe<'a>(
        &'a self,
        region: &'a str,
        filter: &'a Filter,
    ) -> BoxFuture<'a, Result<Vec<Instance>, CloudError>> {
        Box::pin(async move {
            let mut out = Vec::new();
            let mut offset = 0;
            loop {
                let (r, _) =
                    self.call(CVM, region, "DescribeInstances", describe_body(filter, offset)).await?;
                let items = r["InstanceSet"].as_array().cloned().unwrap_or_default();
                out.extend(items.iter().map(|i| instance_of(i, region)));
                offset += items.len();
                if items.is_empty() || offset as u64 >= r["TotalCount"].as_u64().unwrap_or(0) {
                    break;
                }
            }
            Ok(out)
        })
    }

    fn disks<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(DiskKind, DiskInfo)>, CloudError>> {
        Box::pin(async move {
            let body =
                json!({ "Filters": [{ "Name": "instance-id", "Values": [instance_id] }], "Limit": 100 });
            let (r, _) = self.call(CBS, region, "DescribeDisks", body).await?;
            let mut out: Vec<(DiskKind, DiskInfo)> = r["DiskSet"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|d| {
                            let kind = if s(&d["DiskUsage"]) == "SYSTEM_DISK" {
                                DiskKind::System
                            } else {
                                DiskKind::Data
                            };
                            disk_of(d).map(|info| (kind, info))
                        })
                        .collect()
                })
                .unwrap_or_default();
            out.sort_by_key(|(k, d)| (*k != DiskKind::System, d.disk_id.clone()));
            Ok(out)
        })
    }

    fn terminate<'a>(
        &'a self,
        region: &'a str,
        instance_ids: &'a [String],
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(async move {
            // An instance already terminating (an earlier run was interrupted after its terminate) is
            // what was asked for. CVM refuses the whole batch for it, so the rest are asked one by one.
            const ALREADY: &str = "UnsupportedOperation.InstanceStateTerminating";
            for chunk in instance_ids.chunks(100) {
                match self.call(CVM, region, "TerminateInstances", json!({ "InstanceIds": chunk })).await {
                    Err(e) if e.code == ALREADY && chunk.len() > 1 => {
                        for id in chunk {
                            match self
                                .call(CVM, region, "TerminateInstances", json!({ "InstanceIds": [id] }))
                                .await
                            {
                                Err(e) if e.code != ALREADY => return Err(e),
                                _ => {}
                            }
                        }
                    }
                    Err(e) if e.code != ALREADY => return Err(e),
                    _ => {}
                }
            }
            Ok(())
        })
    }

    fn snapshot<'a>(
        &'a self,
        region: &'a str,
        disk_id: &'a str,
        name: &'a str,
        _client_token: &'a str,
    ) -> BoxFuture<'a, Result<String, CloudError>> {
        Box::pin(async move {
            // CBS CreateSnapshot takes no client token: a snapshot already made under this (unique) name is adopted.
            let filters = json!({ "Filters": [{ "Name": "snapshot-name", "Values": [name] }, { "Name": "disk-id", "Values": [disk_id] }] });
            let (found, _) = self.call(CBS, region, "DescribeSnapshots", filters).await?;
            if let Some(id) =
                found["SnapshotSet"].as_array().and_then(|a| a.first()).and_then(|x| opt(&x["SnapshotId"]))
            {
                return Ok(id);
            }
            let (r, _) = self
                .call(CBS, region, "CreateSnapshot", json!({ "DiskId": disk_id, "SnapshotName": name }))
                .await?;
            Ok(s(&r["SnapshotId"]))
        })
    }

    fn snapshot_state<'a>(
        &'a self,
        region: &'a str,
        snapshot_id: &'a str,
    ) -> BoxFuture<'a, Result<SnapshotState, CloudError>> {
        Box::pin(async move {
            let (r, request_id) =
                self.call(CBS, region, "DescribeSnapshots", json!({ "SnapshotIds": [snapshot_id] })).await?;
            match r["SnapshotSet"].get(0).map(|x| s(&x["SnapshotState"])).as_deref() {
                Some("NORMAL") => Ok(SnapshotState::Available),
                Some("CREATING") | Some("COPYING_FROM_REMOTE") | Some("CHECKING_COPIED") => {
                    Ok(SnapshotState::Creating)
                }
                Some(_) => Ok(SnapshotState::Failed),
                None => Err(CloudError {
                    provider: Provider::Tencent,
                    action: "DescribeSnapshots".into(),
                    kind: ErrorKind::NotFound,
                    code: codes::INVALID_SNAPSHOT_ID_NOT_FOUND.into(),
                    message: format!("snapshot {snapshot_id} is not listed"),
                    request_id,
                    retry_after: None,
                }),
            }
        })
    }

    fn quote<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Quote, CloudError>> {
        Box::pin(async move {
            let (r, request_id) =
                self.call(CVM, &req.region, "InquiryPriceRunInstances", run_body(req)).await?;
            let p = &r["Price"]["InstancePrice"];
            let cny = if req.billing.is_per_hour() {
                p["UnitPriceDiscount"].as_f64()
            } else {
                p["DiscountPrice"].as_f64()
            };
            Ok(Quote { cny: cny.unwrap_or(0.0), per_hour: req.billing.is_per_hour(), request_id })
        })
    }

    fn in_stock<'a>(
        &'a self,
        region: &'a str,
        zone: &'a str,
        instance_type: &'a str,
    ) -> BoxFuture<'a, Result<Option<(bool, Option<String>)>, CloudError>> {
        Box::pin(async move {
            let body = json!({ "Filters": [{ "Name": "zone", "Values": [zone] }, { "Name": "instance-type", "Values": [instance_type] }] });
            let (r, request_id) = self.call(CVM, region, "DescribeZoneInstanceConfigInfos", body).await?;
            // One entry per charge type; on sale if any of them sells.
            let sells = r["InstanceTypeQuotaSet"]
                .as_array()
                .is_some_and(|set| set.iter().any(|q| q["Status"] == "SELL"));
            Ok(Some((sells, request_id)))
        })
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
        ] {
            assert_eq!(classify(code), kind, "{code}");
        }
    }

    #[test]
    fn describe_filters_on_the_wire() {
        let check = |f: Filter, offset, want: Value| assert_eq!(describe_body(&f, offset), want, "{f:?}");
        check(
            Filter::Ids(vec!["ins-1".into(), "ins-2".into()]),
            0,
            json!({ "Offset": 0, "Limit": 100, "InstanceIds": ["ins-1", "ins-2"] }),
        );
        check(
            Filter::Tag { key: "gpuctl-token".into(), value: "t1".into() },
            0,
            json!({ "Offset": 0, "Limit": 100, "Filters": [{ "Name": "tag:gpuctl-token", "Values": ["t1"] }] }),
        );
        check(
            Filter::TagKey("gpuctl-deployment".into()),
            200,
            json!({ "Offset": 200, "Limit": 100, "Filters": [{ "Name": "tag-key", "Values": ["gpuctl-deployment"] }] }),
        );
    }

    #[test]
    fn states_map_to_the_engines_words() {
        for (cvm, want) in [
            ("PENDING", InstanceState::Pending),
            ("RUNNING", InstanceState::Running),
            ("STOPPED", InstanceState::Stopped),
            ("TERMINATING", InstanceState::Terminating),
            ("SHUTDOWN", InstanceState::Terminated),
            ("LAUNCH_FAILED", InstanceState::Failed),
            ("ISOLATED", InstanceState::Other("ISOLATED".into())),
        ] {
            assert_eq!(state_of(cvm), want, "{cvm}");
        }
    }

    #[test]
    fn launch_time_is_read_from_created_time() {
        let i = instance_of(
            &json!({ "InstanceId": "ins-1", "CreatedTime": "2026-11-30T08:00:00Z" }),
            "ap-guangzhou",
        );
        assert_eq!(i.launched_at.as_deref(), Some("2026-11-30T08:00:00Z"));
        assert_eq!(instance_of(&json!({ "InstanceId": "ins-1" }), "ap-guangzhou").launched_at, None);
    }
}
