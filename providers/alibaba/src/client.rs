//! The client side of ECS: gpuctl-cloud's [`Cloud`] over ECS's RPC-style API, signed with ACS3
//! (every parameter in the query of a POST with an empty body, as the official SDK sends it), and the
//! classifier that maps ECS's error codes to the engine's seven kinds.

use std::collections::BTreeMap;

use base64::Engine as _;
use gpuctl_cloud::cloud::{
    BoxFuture, Cloud, CloudError, CreateRequest, Created, DiskInfo, DiskKind, ErrorKind, Filter, Instance,
    InstanceState, Quote, SnapshotState,
};
use gpuctl_cloud::http::{Endpoint, Http, Response};
use gpuctl_cloud::{BillingMode, Disk, DiskCategory, NetworkIds, Provider};
use gpuctl_sign::{Algorithm, Credentials, SignableRequest, SigningParams};
use serde_json::Value;

use crate::api::{codes, ErrorBody, API_VERSION};

/// An ECS account: its keys, and where ECS is reached (an override sends every region there).
pub struct Client {
    creds: Credentials,
    endpoint: Option<Endpoint>,
    http: Http,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("alibaba::Client")
            .field("access_key_id", &self.creds.access_key_id)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
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

fn category(c: DiskCategory) -> &'static str {
    match c {
        DiskCategory::Ssd => "cloud_essd",
        DiskCategory::Premium => "cloud_efficiency",
    }
}

fn category_back(s: &str) -> DiskCategory {
    match s {
        "cloud_efficiency" | "cloud" => DiskCategory::Premium,
        _ => DiskCategory::Ssd,
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
        Client { creds, endpoint, http }
    }

    /// Signs and sends one action; returns the JSON answer or the classified error.
    async fn call(
        &self,
        region: &str,
        action: &str,
        params: Vec<(String, String)>,
    ) -> Result<Value, CloudError> {
        let endpoint = self.endpoint.clone().unwrap_or_else(|| Endpoint::https(host_for(region)));
        let mut query = vec![("RegionId".to_string(), region.to_string())];
        query.extend(params);
        let req = SignableRequest {
            method: "POST".into(),
            scheme: endpoint.scheme.clone(),
            host: endpoint.host.clone(),
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
            version: API_VERSION.into(),
        };
        let signed = gpuctl_sign::sign(&req, &self.creds, &sp).map_err(|e| CloudError {
            provider: Provider::Alibaba,
            action: action.into(),
            kind: ErrorKind::Auth,
            code: "sign".into(),
            message: e.to_string(),
            request_id: None,
            retry_after: None,
        })?;
        let resp = self
            .http
            .send(Provider::Alibaba, action, "POST", &signed.url, &signed.headers, signed.body)
            .await?;
        answer(action, resp)
    }
}

fn answer(action: &str, resp: Response) -> Result<Value, CloudError> {
    let retry_after = resp
        .header("x-acs-retry-after")
        .and_then(|v| v.parse::<u64>().ok())
        .map(std::time::Duration::from_millis);
    if resp.status == 200 {
        return serde_json::from_slice(&resp.body).map_err(|e| CloudError {
            provider: Provider::Alibaba,
            action: action.into(),
            kind: ErrorKind::Transient,
            code: "bad-response".into(),
            message: format!("ECS answered 200 with a body that is not JSON: {e}"),
            request_id: None,
            retry_after: None,
        });
    }
    let (code, message, request_id) = match serde_json::from_slice::<ErrorBody>(&resp.body) {
        Ok(b) => (b.code, b.message, Some(b.request_id)),
        Err(_) => (
            format!("HTTP{}", resp.status),
            String::from_utf8_lossy(&resp.body).chars().take(300).collect(),
            None,
        ),
    };
    let mut kind = classify(resp.status, &code);
    if retry_after.is_some() && kind == ErrorKind::Invalid {
        // The SDK turns a 4xx carrying x-acs-retry-after into a throttling error.
        kind = ErrorKind::Throttled;
    }
    Err(CloudError {
        provider: Provider::Alibaba,
        action: action.into(),
        kind,
        code,
        message,
        request_id,
        retry_after,
    })
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

fn kv(k: impl Into<String>, v: impl ToString) -> (String, String) {
    (k.into(), v.to_string())
}

/// RunInstances parameters for one instance.
fn run_params(r: &CreateRequest) -> Vec<(String, String)> {
    let mut p = vec![
        kv("ZoneId", &r.zone),
        kv("InstanceType", &r.instance_type),
        kv("ImageId", &r.image_id),
        kv("InstanceName", &r.name),
        kv("ClientToken", &r.client_token),
        kv("Amount", 1),
        kv("SystemDisk.Category", category(r.system_disk.category)),
        kv("SystemDisk.Size", r.system_disk.size_gb),
    ];
    match r.billing {
        BillingMode::Hourly => p.push(kv("InstanceChargeType", "PostPaid")),
        BillingMode::Spot => {
            p.push(kv("InstanceChargeType", "PostPaid"));
            match r.spot_max_price {
                Some(max) => p.extend([
                    kv("SpotStrategy", "SpotWithPriceLimit"),
                    kv("SpotPriceLimit", format!("{max:.3}")),
                ]),
                None => p.push(kv("SpotStrategy", "SpotAsPriceGo")),
            }
        }
        BillingMode::Weekly => {
            p.extend([kv("InstanceChargeType", "PrePaid"), kv("PeriodUnit", "Week"), kv("Period", r.term)])
        }
        BillingMode::Monthly => {
            p.extend([kv("InstanceChargeType", "PrePaid"), kv("PeriodUnit", "Month"), kv("Period", r.term)])
        }
        BillingMode::Year1 => {
            p.extend([kv("InstanceChargeType", "PrePaid"), kv("PeriodUnit", "Month"), kv("Period", 12)])
        }
        BillingMode::Year3 => {
            p.extend([kv("InstanceChargeType", "PrePaid"), kv("PeriodUnit", "Month"), kv("Period", 36)])
        }
    }
    for (i, d) in r.data_disks.iter().enumerate() {
        let n = i + 1;
        p.push(kv(format!("DataDisk.{n}.Category"), category(d.category)));
        p.push(kv(format!("DataDisk.{n}.Size"), d.size_gb));
        if let Some(snap) = &d.snapshot_id {
            p.push(kv(format!("DataDisk.{n}.SnapshotId"), snap));
        }
    }
    if let Some(net) = &r.network {
        p.push(kv("VSwitchId", &net.subnet));
        for (i, g) in net.security_groups.iter().enumerate() {
            p.push(kv(format!("SecurityGroupIds.{}", i + 1), g));
        }
    }
    if let Some(k) = &r.login_key {
        p.push(kv("KeyPairName", k));
    }
    if let Some(t) = r.auto_release_at {
        // ECS takes whole minutes' precision at most; seconds are rounded down anyway.
        p.push(kv("AutoReleaseTime", t.strftime("%Y-%m-%dT%H:%M:%SZ")));
    }
    for (i, (k, v)) in r.tags.iter().enumerate() {
        p.push(kv(format!("Tag.{}.Key", i + 1), k));
        p.push(kv(format!("Tag.{}.Value", i + 1), v));
    }
    if let Some(u) = &r.user_data {
        p.push(kv("UserData", base64::engine::general_purpose::STANDARD.encode(u)));
    }
    if r.dry_run {
        p.push(kv("DryRun", "true"));
    }
    p
}

/// One DescribeInstances page (100, the most ECS gives) of what `filter` selects. `Tag.N.Key` without a
/// `Tag.N.Value` matches the key whatever its value (the SDK's DescribeInstancesRequestTag). ECS's docs
/// say a tag filter answers for at most 1,000 instances (beyond that, ListTagResources).
fn describe_params(filter: &Filter, page: usize) -> Vec<(String, String)> {
    let mut p = vec![kv("PageSize", 100), kv("PageNumber", page)];
    match filter {
        Filter::Ids(ids) => p.push(kv("InstanceIds", serde_json::to_string(ids).unwrap_or_default())),
        Filter::Tag { key, value } => p.extend([kv("Tag.1.Key", key), kv("Tag.1.Value", value)]),
        Filter::TagKey(key) => p.push(kv("Tag.1.Key", key)),
    }
    p
}

fn state_of(status: &str) -> InstanceState {
    match status {
        "Pending" | "Starting" => InstanceState::Pending,
        "Running" => InstanceState::Running,
        "Stopping" => InstanceState::Stopping,
        "Stopped" => InstanceState::Stopped,
        other => InstanceState::Other(other.into()),
    }
}

fn billing_of(i: &Value) -> Option<BillingMode> {
    match (s(&i["InstanceChargeType"]).as_str(), s(&i["SpotStrategy"]).as_str()) {
        ("PostPaid", "SpotWithPriceLimit" | "SpotAsPriceGo") => Some(BillingMode::Spot),
        ("PostPaid", _) => Some(BillingMode::Hourly),
        // ECS does not say the term in DescribeInstances; monthly is the neutral guess a clone shows for review.
        ("PrePaid", _) => Some(BillingMode::Monthly),
        _ => None,
    }
}

fn instance_of(i: &Value) -> Instance {
    let list = |v: &Value| {
        v.as_array()
            .map(|a| a.iter().map(s).filter(|x| !x.is_empty()).collect::<Vec<_>>())
            .unwrap_or_default()
    };
    let vsw = s(&i["VpcAttributes"]["VSwitchId"]);
    let groups = list(&i["SecurityGroupIds"]["SecurityGroupId"]);
    let tags: BTreeMap<String, String> = i["Tags"]["Tag"]
        .as_array()
        .map(|a| a.iter().map(|t| (s(&t["TagKey"]), s(&t["TagValue"]))).collect())
        .unwrap_or_default();
    Instance {
        instance_id: s(&i["InstanceId"]),
        name: opt(&i["InstanceName"]),
        region: s(&i["RegionId"]),
        zone: s(&i["ZoneId"]),
        instance_type: s(&i["InstanceType"]),
        state: state_of(&s(&i["Status"])),
        billing: billing_of(i),
        image_id: opt(&i["ImageId"]),
        system_disk: None,
        data_disks: vec![],
        network: (!vsw.is_empty()).then(|| NetworkIds {
            vpc: s(&i["VpcAttributes"]["VpcId"]),
            subnet: vsw,
            security_groups: groups,
        }),
        login_key: opt(&i["KeyPairName"]),
        public_ip: list(&i["PublicIpAddress"]["IpAddress"])
            .into_iter()
            .next()
            .or_else(|| opt(&i["EipAddress"]["IpAddress"])),
        private_ip: list(&i["VpcAttributes"]["PrivateIpAddress"]["IpAddress"]).into_iter().next(),
        auto_release_at: opt(&i["AutoReleaseTime"]),
        // ECS writes `CreationTime` in UTC to the minute (`2026-11-30T08:00Z`).
        launched_at: opt(&i["CreationTime"]).and_then(|t| crate::api::parse_time(&t)).map(|t| t.to_string()),
        tags,
    }
}

impl Cloud for Client {
    fn provider(&self) -> Provider {
        Provider::Alibaba
    }

    fn create<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Created, CloudError>> {
        Box::pin(async move {
            match self.call(&req.region, "RunInstances", run_params(req)).await {
                Ok(v) => {
                    let id = v["InstanceIdSets"]["InstanceIdSet"].get(0).map(s).unwrap_or_default();
                    if id.is_empty() {
                        return Err(CloudError {
                            provider: Provider::Alibaba,
                            action: "RunInstances".into(),
                            kind: ErrorKind::Transient,
                            code: "no-instance-id".into(),
                            message: "RunInstances answered without an instance id".into(),
                            request_id: opt(&v["RequestId"]),
                            retry_after: None,
                        });
                    }
                    Ok(Created { instance_id: id, request_id: opt(&v["RequestId"]) })
                }
                // A dry run that would have succeeded answers with this "error".
                Err(e) if req.dry_run && e.code == codes::DRY_RUN => {
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
            for page in 1.. {
                let v = self.call(region, "DescribeInstances", describe_params(filter, page)).await?;
                let items = v["Instances"]["Instance"].as_array().cloned().unwrap_or_default();
                let n = items.len();
                out.extend(items.iter().map(instance_of));
                let total = v["TotalCount"].as_u64().unwrap_or(0) as usize;
                if n == 0 || out.len() >= total {
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
            let v = self
                .call(region, "DescribeDisks", vec![kv("InstanceId", instance_id), kv("PageSize", 100)])
                .await?;
            let mut out: Vec<(DiskKind, DiskInfo)> = v["Disks"]["Disk"]
                .as_array()
                .map(|a| {
                    a.iter()
                        .map(|d| {
                            let kind =
                                if s(&d["Type"]) == "system" { DiskKind::System } else { DiskKind::Data };
                            let disk = Disk {
                                category: category_back(&s(&d["Category"])),
                                size_gb: d["Size"].as_u64().unwrap_or(0) as u32,
                                snapshot_id: opt(&d["SourceSnapshotId"]),
                            };
                            (kind, DiskInfo { disk_id: s(&d["DiskId"]), disk })
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
            for chunk in instance_ids.chunks(100) {
                let mut p = vec![kv("Force", "true"), kv("TerminateSubscription", "true")];
                p.extend(chunk.iter().enumerate().map(|(i, id)| kv(format!("InstanceId.{}", i + 1), id)));
                self.call(region, "DeleteInstances", p).await?;
            }
            Ok(())
        })
    }

    fn snapshot<'a>(
        &'a self,
        region: &'a str,
        disk_id: &'a str,
        name: &'a str,
        client_token: &'a str,
    ) -> BoxFuture<'a, Result<String, CloudError>> {
        Box::pin(async move {
            let v = self
                .call(
                    region,
                    "CreateSnapshot",
                    vec![kv("DiskId", disk_id), kv("SnapshotName", name), kv("ClientToken", client_token)],
                )
                .await?;
            Ok(s(&v["SnapshotId"]))
        })
    }

    fn snapshot_state<'a>(
        &'a self,
        region: &'a str,
        snapshot_id: &'a str,
    ) -> BoxFuture<'a, Result<SnapshotState, CloudError>> {
        Box::pin(async move {
            let ids = serde_json::to_string(&[snapshot_id]).unwrap_or_default();
            let v = self.call(region, "DescribeSnapshots", vec![kv("SnapshotIds", ids)]).await?;
            let status = v["Snapshots"]["Snapshot"].get(0).map(|x| s(&x["Status"]));
            match status.as_deref() {
                Some("accomplished") => Ok(SnapshotState::Available),
                Some("failed") => Ok(SnapshotState::Failed),
                Some(_) => Ok(SnapshotState::Creating),
                None => Err(CloudError {
                    provider: Provider::Alibaba,
                    action: "DescribeSnapshots".into(),
                    kind: ErrorKind::NotFound,
                    code: codes::SNAPSHOT_NOT_FOUND.into(),
                    message: format!("snapshot {snapshot_id} is not listed"),
                    request_id: opt(&v["RequestId"]),
                    retry_after: None,
                }),
            }
        })
    }

    fn quote<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Quote, CloudError>> {
        Box::pin(async move {
            let (unit, period) = match req.billing {
                BillingMode::Hourly | BillingMode::Spot => ("Hour", 1),
                BillingMode::Weekly => ("Week", req.term),
                BillingMode::Monthly => ("Month", req.term),
                BillingMode::Year1 => ("Year", 1),
                BillingMode::Year3 => ("Year", 3),
            };
            let mut p = vec![
                kv("ResourceType", "instance"),
                kv("InstanceType", &req.instance_type),
                kv("PriceUnit", unit),
                kv("Period", period),
                kv("ZoneId", &req.zone),
            ];
            p.push(kv("SystemDisk.Category", category(req.system_disk.category)));
            if req.billing == BillingMode::Spot {
                p.push(kv(
                    "SpotStrategy",
                    if req.spot_max_price.is_some() { "SpotWithPriceLimit" } else { "SpotAsPriceGo" },
                ));
            }
            let v = self.call(&req.region, "DescribePrice", p).await?;
            let price = &v["PriceInfo"]["Price"];
            Ok(Quote {
                cny: price["TradePrice"].as_f64().unwrap_or(0.0),
                per_hour: req.billing.is_per_hour(),
                request_id: opt(&v["RequestId"]),
            })
        })
    }

    fn in_stock<'a>(
        &'a self,
        region: &'a str,
        zone: &'a str,
        instance_type: &'a str,
    ) -> BoxFuture<'a, Result<Option<(bool, Option<String>)>, CloudError>> {
        Box::pin(async move {
            let p = vec![
                kv("DestinationResource", "InstanceType"),
                kv("ZoneId", zone),
                kv("InstanceType", instance_type),
            ];
            let v = self.call(region, "DescribeAvailableResource", p).await?;
            let zones = v["AvailableZones"]["AvailableZone"].as_array().cloned().unwrap_or_default();
            let sells = zones
                .iter()
                .flat_map(|z| {
                    z["AvailableResources"]["AvailableResource"].as_array().cloned().unwrap_or_default()
                })
                .flat_map(|r| {
                    r["SupportedResources"]["SupportedResource"].as_array().cloned().unwrap_or_default()
                })
                .any(|s| s["Value"] == instance_type && s["Status"] == "Available");
            Ok(Some((sells, opt(&v["RequestId"]))))
        })
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
    fn describe_filters_on_the_wire() {
        let check = |f: Filter, page, want: &[(&str, &str)]| {
            let want: Vec<(String, String)> = want.iter().map(|(k, v)| kv(*k, v)).collect();
            assert_eq!(describe_params(&f, page), want, "{f:?}");
        };
        check(
            Filter::Ids(vec!["i-1".into(), "i-2".into()]),
            1,
            &[("PageSize", "100"), ("PageNumber", "1"), ("InstanceIds", r#"["i-1","i-2"]"#)],
        );
        check(
            Filter::Tag { key: "gpuctl-token".into(), value: "t1".into() },
            1,
            &[("PageSize", "100"), ("PageNumber", "1"), ("Tag.1.Key", "gpuctl-token"), ("Tag.1.Value", "t1")],
        );
        check(
            Filter::TagKey("gpuctl-deployment".into()),
            3,
            &[("PageSize", "100"), ("PageNumber", "3"), ("Tag.1.Key", "gpuctl-deployment")],
        );
    }

    #[test]
    fn launch_time_is_read_from_creation_time() {
        let i = instance_of(&serde_json::json!({ "InstanceId": "i-1", "CreationTime": "2026-11-30T08:00Z" }));
        assert_eq!(i.launched_at.as_deref(), Some("2026-11-30T08:00:00Z"));
        assert_eq!(
            instance_of(&serde_json::json!({ "InstanceId": "i-1", "CreationTime": "yesterday" })).launched_at,
            None
        );
    }
}
