//! The client side of JD Cloud: gpuctl-cloud's [`Cloud`] over the VM, Disk and Billing APIs
//! (`/v1/regions/{region}/…` paths, JSON bodies for POST, `filters.N.name/values.M` queries for GET),
//! signed with JDCLOUD3 as JD's current SDK does, and the classifier for JD's HTTP status words.
//!
//! JD's createInstances has no release time: the client sets it right after the create with
//! modifyInstanceReleaseTime, and reports a failure there as transient so the engine retries the
//! (idempotent) create and the release time is set before the instance counts as created. Should
//! every retry fail there, the engine records the instance it finds by token and sets the time itself.

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

use crate::api::{format_release_time, ErrorBody, API_VERSION};

/// A JD Cloud account: its keys, and where the APIs are reached (an override serves vm, disk and billing).
pub struct Client {
    creds: Credentials,
    endpoint: Option<Endpoint>,
    http: Http,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("jdcloud::Client")
            .field("access_key", &self.creds.access_key_id)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
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

fn disk_type(c: DiskCategory) -> &'static str {
    match c {
        DiskCategory::Ssd => "ssd.gp1",
        DiskCategory::Premium => "hdd.std1",
    }
}

fn category_back(s: &str) -> DiskCategory {
    if s.starts_with("hdd") {
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

/// One describeInstances page (100, the most JD gives) of what `filter` selects. A `tags.N` TagFilter
/// with a key and no `values` matches the key whatever its value (`values` is optional in the SDK's
/// vm/models/TagFilter.py).
fn describe_query(filter: &Filter, page: usize) -> Vec<(String, String)> {
    let mut q = match filter {
        Filter::Ids(ids) => filter_query(&[("instanceId", ids.clone())]),
        Filter::Tag { key, value } => {
            vec![("tags.1.key".into(), key.clone()), ("tags.1.values.1".into(), value.clone())]
        }
        Filter::TagKey(key) => vec![("tags.1.key".into(), key.clone())],
    };
    q.push(("pageNumber".into(), page.to_string()));
    q.push(("pageSize".into(), "100".into()));
    q
}

impl Client {
    pub fn new(creds: Credentials, endpoint: Option<Endpoint>, http: Http) -> Client {
        Client { creds, endpoint, http }
    }

    /// Signs and sends one call; returns `result` and the request id, or the classified error.
    async fn call(
        &self,
        service: &str,
        region: &str,
        action: &str,
        method: &str,
        path: &str,
        query: Vec<(String, String)>,
        body: Option<Value>,
    ) -> Result<(Value, Option<String>), CloudError> {
        let ep =
            self.endpoint.clone().unwrap_or_else(|| Endpoint::https(format!("{service}.jdcloud-api.com")));
        let req = SignableRequest {
            method: method.into(),
            scheme: ep.scheme.clone(),
            host: ep.host.clone(),
            path: format!("/{API_VERSION}/regions/{region}/{path}"),
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
        let err = |kind, code: String, message: String, request_id| CloudError {
            provider: Provider::JdCloud,
            action: action.into(),
            kind,
            code,
            message,
            request_id,
            retry_after: None,
        };
        let signed = gpuctl_sign::sign(&req, &self.creds, &sp)
            .map_err(|e| err(ErrorKind::Auth, "sign".into(), e.to_string(), None))?;
        let resp = self
            .http
            .send(Provider::JdCloud, action, method, &signed.url, &signed.headers, signed.body)
            .await?;
        if resp.status == 200 {
            let v: Value = serde_json::from_slice(&resp.body).map_err(|e| {
                err(
                    ErrorKind::Transient,
                    "bad-response".into(),
                    format!("HTTP 200 with a body that is not JSON: {e}"),
                    None,
                )
            })?;
            return Ok((v["result"].clone(), opt(&v["requestId"])));
        }
        match serde_json::from_slice::<ErrorBody>(&resp.body) {
            Ok(b) => Err(err(
                classify(resp.status, &b.error.status, &b.error.message),
                b.error.status,
                b.error.message,
                Some(b.request_id),
            )),
            Err(_) => {
                let kind = classify(resp.status, "", "");
                Err(err(
                    kind,
                    format!("HTTP{}", resp.status),
                    String::from_utf8_lossy(&resp.body).chars().take(300).collect(),
                    None,
                ))
            }
        }
    }
}

/// The `instanceSpec` of createInstances for one instance.
fn instance_spec(r: &CreateRequest) -> Value {
    let mut spec = json!({
        "az": r.zone,
        "instanceType": r.instance_type,
        "imageId": r.image_id,
        "name": r.name,
        "systemDisk": { "diskCategory": "cloud", "autoDelete": true, "cloudDiskSpec": { "diskType": disk_type(r.system_disk.category), "diskSizeGB": r.system_disk.size_gb } },
    });
    spec["charge"] = match r.billing {
        BillingMode::Hourly | BillingMode::Spot => json!({ "chargeMode": "postpaid_by_duration" }),
        BillingMode::Weekly | BillingMode::Monthly => {
            json!({ "chargeMode": "prepaid_by_duration", "chargeUnit": "month", "chargeDuration": r.term })
        }
        BillingMode::Year1 => {
            json!({ "chargeMode": "prepaid_by_duration", "chargeUnit": "year", "chargeDuration": 1 })
        }
        BillingMode::Year3 => {
            json!({ "chargeMode": "prepaid_by_duration", "chargeUnit": "year", "chargeDuration": 3 })
        }
    };
    if !r.data_disks.is_empty() {
        spec["dataDisks"] = r
            .data_disks
            .iter()
            .map(|d| {
                let mut cd = json!({ "diskType": disk_type(d.category), "diskSizeGB": d.size_gb });
                if let Some(snap) = &d.snapshot_id {
                    cd["snapshotId"] = json!(snap);
                }
                json!({ "diskCategory": "cloud", "autoDelete": true, "cloudDiskSpec": cd })
            })
            .collect();
    }
    if let Some(net) = &r.network {
        spec["primaryNetworkInterface"] =
            json!({ "networkInterface": { "subnetId": net.subnet, "securityGroups": net.security_groups } });
    }
    if let Some(k) = &r.login_key {
        spec["keyNames"] = json!([k]);
    }
    if !r.tags.is_empty() {
        spec["userTags"] = r.tags.iter().map(|(k, v)| json!({ "key": k, "value": v })).collect();
    }
    if let Some(u) = &r.user_data {
        spec["metadata"] =
            json!([{ "key": "user-data", "value": base64::engine::general_purpose::STANDARD.encode(u) }]);
    }
    spec
}

fn state_of(st: &str) -> InstanceState {
    match st {
        "pending" | "starting" | "rebooting" | "rebuilding" | "resizing" => InstanceState::Pending,
        "running" => InstanceState::Running,
        "stopping" => InstanceState::Stopping,
        "stopped" => InstanceState::Stopped,
        "deleting" => InstanceState::Terminating,
        "error" => InstanceState::Failed,
        other => InstanceState::Other(other.into()),
    }
}

fn disk_of(att: &Value) -> Option<DiskInfo> {
    let d = &att["cloudDisk"];
    Some(DiskInfo {
        disk_id: opt(&d["diskId"])?,
        disk: Disk {
            category: category_back(&s(&d["diskType"])),
            size_gb: d["diskSizeGB"].as_u64().unwrap_or(0) as u32,
            snapshot_id: opt(&d["snapshotId"]),
        },
    })
}

fn instance_of(i: &Value, region: &str) -> Instance {
    let tags: BTreeMap<String, String> = i["tags"]
        .as_array()
        .map(|a| a.iter().map(|t| (s(&t["key"]), s(&t["value"]))).collect())
        .unwrap_or_default();
    let billing = match s(&i["charge"]["chargeMode"]).as_str() {
        "postpaid_by_duration" | "postpaid_by_usage" => Some(BillingMode::Hourly),
        "prepaid_by_duration" => Some(BillingMode::Monthly),
        _ => None,
    };
    let nic = &i["primaryNetworkInterface"]["networkInterface"];
    Instance {
        instance_id: s(&i["instanceId"]),
        name: opt(&i["instanceName"]),
        region: region.into(),
        zone: s(&i["az"]),
        instance_type: s(&i["instanceType"]),
        state: state_of(&s(&i["status"])),
        billing,
        image_id: opt(&i["imageId"]),
        system_disk: disk_of(&i["systemDisk"]),
        data_disks: i["dataDisks"]
            .as_array()
            .map(|a| a.iter().filter_map(disk_of).collect())
            .unwrap_or_default(),
        network: opt(&i["subnetId"]).map(|subnet| NetworkIds {
            vpc: s(&i["vpcId"]),
            subnet,
            security_groups: nic["securityGroups"]
                .as_array()
                .map(|a| a.iter().map(|g| opt(&g["groupId"]).unwrap_or_else(|| s(g))).collect())
                .unwrap_or_default(),
        }),
        login_key: i["keyNames"].as_array().and_then(|a| a.first()).and_then(opt),
        public_ip: opt(&i["elasticIpAddress"]),
        private_ip: opt(&i["privateIpAddress"]),
        auto_release_at: opt(&i["autoReleaseTime"]),
        // `launchTime` is RFC 3339 with Beijing's offset (`2026-11-30T16:00:00+08:00`).
        launched_at: opt(&i["launchTime"])
            .and_then(|t| crate::api::parse_offset_time(&t))
            .map(|t| t.to_string()),
        tags,
    }
}

impl Cloud for Client {
    fn provider(&self) -> Provider {
        Provider::JdCloud
    }

    fn create<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Created, CloudError>> {
        Box::pin(async move {
            if req.dry_run {
                // createInstances has no dry run: ask for the stock of this type in this zone instead.
                let q = filter_query(&[
                    ("instanceTypes", vec![req.instance_type.clone()]),
                    ("az", vec![req.zone.clone()]),
                ]);
                let (r, request_id) = self
                    .call("vm", &req.region, "describeInstanceTypes", "GET", "instanceTypes", q, None)
                    .await?;
                let in_stock = r["instanceTypes"]
                    .get(0)
                    .and_then(|t| t["state"].as_array())
                    .is_some_and(|st| st.iter().any(|x| x["inStock"] == json!(true)));
                if !in_stock {
                    return Err(CloudError {
                        provider: Provider::JdCloud,
                        action: "describeInstanceTypes".into(),
                        kind: ErrorKind::StockOut,
                        code: "inStock=false".into(),
                        message: format!("{} is sold out in {}", req.instance_type, req.zone),
                        request_id,
                        retry_after: None,
                    });
                }
                return Ok(Created { instance_id: String::new(), request_id });
            }
            let body = json!({ "regionId": req.region, "instanceSpec": instance_spec(req), "maxCount": 1, "clientToken": req.client_token });
            let (r, request_id) = self
                .call("vm", &req.region, "createInstances", "POST", "instances", vec![], Some(body))
                .await?;
            let id = r["instanceIds"].get(0).map(s).unwrap_or_default();
            let transient = |code: &str, message: String, request_id| CloudError {
                provider: Provider::JdCloud,
                action: "createInstances".into(),
                kind: ErrorKind::Transient,
                code: code.into(),
                message,
                request_id,
                retry_after: None,
            };
            if id.is_empty() {
                return Err(transient(
                    "no-instance-id",
                    "createInstances answered without an instance id".into(),
                    request_id,
                ));
            }
            if let Some(t) = req.auto_release_at {
                if let Err(e) = self.set_auto_release(&req.region, &id, t).await {
                    // The instance exists; only its release time is missing. Transient, so the engine retries the
                    // idempotent create (same token, same instance) and this call again, never marking it failed;
                    // when those retries run out, the engine finds the instance by its token tag, records it, and
                    // sets the release time itself (`Cloud::set_auto_release`).
                    return Err(transient(
                        &e.code,
                        format!("instance {id} was created but its release time was not set: {}", e.message),
                        e.request_id,
                    ));
                }
            }
            Ok(Created { instance_id: id, request_id })
        })
    }

    fn set_auto_release<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
        at: jiff::Timestamp,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(async move {
            let body = json!({ "regionId": region, "instanceIds": [instance_id], "autoReleaseTime": format_release_time(at) });
            self.call(
                "vm",
                region,
                "modifyInstanceReleaseTime",
                "POST",
                "instances:modifyInstanceReleaseTime",
                vec![],
                Some(body),
            )
            .await
            .map(drop)
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
                let (r, _) = self
                    .call(
                        "vm",
                        region,
                        "describeInstances",
                        "GET",
                        "instances",
                        describe_query(filter, page),
                        None,
                    )
                    .await?;
                let items = r["instances"].as_array().cloned().unwrap_or_default();
                out.extend(items.iter().map(|i| instance_of(i, region)));
                if items.is_empty() || out.len() as u64 >= r["totalCount"].as_u64().unwrap_or(0) {
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
            let (r, _) = self
                .call(
                    "vm",
                    region,
                    "describeInstance",
                    "GET",
                    &format!("instances/{instance_id}"),
                    vec![],
                    None,
                )
                .await?;
            let inst = instance_of(&r["instance"], region);
            // A local system disk has no id and cannot be snapshotted; it is left out.
            Ok(inst
                .system_disk
                .into_iter()
                .map(|d| (DiskKind::System, d))
                .chain(inst.data_disks.into_iter().map(|d| (DiskKind::Data, d)))
                .collect())
        })
    }

    fn terminate<'a>(
        &'a self,
        region: &'a str,
        instance_ids: &'a [String],
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(async move {
            // JD deletes one instance per call.
            for id in instance_ids {
                self.call("vm", region, "deleteInstance", "DELETE", &format!("instances/{id}"), vec![], None)
                    .await?;
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
            let body = json!({ "regionId": region, "snapshotSpec": { "name": name, "diskId": disk_id, "description": "gpuctl snapshot" }, "clientToken": client_token });
            let (r, _) =
                self.call("disk", region, "createSnapshot", "POST", "snapshots", vec![], Some(body)).await?;
            Ok(s(&r["snapshotId"]))
        })
    }

    fn snapshot_state<'a>(
        &'a self,
        region: &'a str,
        snapshot_id: &'a str,
    ) -> BoxFuture<'a, Result<SnapshotState, CloudError>> {
        Box::pin(async move {
            let q = filter_query(&[("snapshotId", vec![snapshot_id.to_string()])]);
            let (r, request_id) =
                self.call("disk", region, "describeSnapshots", "GET", "snapshots", q, None).await?;
            match r["snapshots"].get(0).map(|x| s(&x["status"])).as_deref() {
                Some("available") => Ok(SnapshotState::Available),
                Some("creating") => Ok(SnapshotState::Creating),
                Some(_) => Ok(SnapshotState::Failed),
                None => Err(CloudError {
                    provider: Provider::JdCloud,
                    action: "describeSnapshots".into(),
                    kind: ErrorKind::NotFound,
                    code: "NOT_FOUND".into(),
                    message: format!("snapshot {snapshot_id} is not listed"),
                    request_id,
                    retry_after: None,
                }),
            }
        })
    }

    fn quote<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Quote, CloudError>> {
        Box::pin(async move {
            // billingType 1: by configuration (hourly); 3: subscription with timeUnit 3 month, 4 year.
            let (billing, span, unit) = match req.billing {
                BillingMode::Hourly | BillingMode::Spot => (1, 1, 0),
                BillingMode::Weekly | BillingMode::Monthly => (3, req.term, 3),
                BillingMode::Year1 => (3, 1, 4),
                BillingMode::Year3 => (3, 3, 4),
            };
            let order = json!({
                "serviceCode": "vm", "region": req.region, "az": req.zone, "billingType": billing, "timeSpan": span, "timeUnit": unit, "count": 1,
                "formula": [{ "key": "instanceType", "value": req.instance_type }],
            });
            let body = json!({ "regionId": req.region, "cmd": 1, "orderList": [order], "packageCount": 1 });
            let (r, request_id) = self
                .call(
                    "billing",
                    &req.region,
                    "calculateTotalPrice",
                    "POST",
                    "calculateTotalPrice",
                    vec![],
                    Some(body),
                )
                .await?;
            Ok(Quote {
                cny: r["totalPrice"].as_f64().unwrap_or(0.0),
                per_hour: req.billing.is_per_hour(),
                request_id,
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
            let q = filter_query(&[
                ("instanceTypes", vec![instance_type.to_string()]),
                ("az", vec![zone.to_string()]),
            ]);
            let (r, request_id) =
                self.call("vm", region, "describeInstanceTypes", "GET", "instanceTypes", q, None).await?;
            let sells = r["instanceTypes"]
                .get(0)
                .and_then(|t| t["state"].as_array())
                .is_some_and(|st| st.iter().any(|x| x["inStock"] == json!(true)));
            Ok(Some((sells, request_id)))
        })
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
    fn describe_filters_on_the_wire() {
        let check = |f: Filter, page, want: &[(&str, &str)]| {
            let want: Vec<(String, String)> =
                want.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
            assert_eq!(describe_query(&f, page), want, "{f:?}");
        };
        check(
            Filter::Ids(vec!["i-a".into()]),
            1,
            &[
                ("filters.1.name", "instanceId"),
                ("filters.1.values.1", "i-a"),
                ("pageNumber", "1"),
                ("pageSize", "100"),
            ],
        );
        check(
            Filter::Tag { key: "gpuctl-token".into(), value: "t1".into() },
            1,
            &[
                ("tags.1.key", "gpuctl-token"),
                ("tags.1.values.1", "t1"),
                ("pageNumber", "1"),
                ("pageSize", "100"),
            ],
        );
        check(
            Filter::TagKey("gpuctl-deployment".into()),
            2,
            &[("tags.1.key", "gpuctl-deployment"), ("pageNumber", "2"), ("pageSize", "100")],
        );
    }

    #[test]
    fn launch_time_is_read_in_utc() {
        let i = instance_of(
            &json!({ "instanceId": "i-1", "launchTime": "2026-11-30T16:00:00+08:00" }),
            "cn-north-1",
        );
        assert_eq!(i.launched_at.as_deref(), Some("2026-11-30T08:00:00Z"));
    }
}
