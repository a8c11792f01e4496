//! VM: creating, describing and deleting instances, their release time and the stock of instance
//! types (jdcloud_sdk `services/vm`, API v1).

use std::collections::BTreeMap;

use base64::Engine as _;
use gpuctl_cloud::cloud::{
    CloudError, CreateRequest, Created, DiskInfo, ErrorKind, Filter, ImageInfo, Instance, InstanceState,
    KeyPair, SnapshotState,
};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::{Images, Instances, KeyPairs};
use gpuctl_cloud::{BillingMode, Disk, DiskCategory, NetworkIds, Provider, PublicIpBilling};
use serde_json::{json, Value};

use super::{filter_query, Call, Client};
use crate::api::format_release_time;

pub(super) fn vm<'a>(action: &'a str, method: &'a str, path: &'a str) -> Call<'a> {
    Call { service: "vm", version: crate::api::API_VERSION, action, method, path }
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
            let (unit, n) = crate::api::charge_term(r.term);
            json!({ "chargeMode": "prepaid_by_duration", "chargeUnit": unit, "chargeDuration": n })
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
    if let Some(ip) = &r.public_ip {
        // jdcloud_sdk 1.6.354 services/vm/models/InstanceSpec.py `elasticIp` (主网卡主IP关联的弹性公网IP配置)
        // is a services/vpc/models/ElasticIpSpec.py: bandwidthMbps [1-1000] by configuration, [1-200] by
        // traffic; provider `bgp` (the standard BGP line: 1.6.93's docstring names it for cn-north-1,
        // cn-south-1, cn-east-1, cn-east-2, every region gpuctl sells); and a
        // charge.ChargeSpec: postpaid_by_usage (按用量, per GB) or postpaid_by_duration (按配置, per
        // Mbps·hour). Postpaid whatever the instance's billing, so the address never outlives its
        // instance on a prepaid term; `terminate` deletes it with the instance.
        let mode = match ip.billing {
            PublicIpBilling::Traffic => "postpaid_by_usage",
            PublicIpBilling::Bandwidth => "postpaid_by_duration",
        };
        spec["elasticIp"] = json!({
            "bandwidthMbps": ip.bandwidth_mbps,
            "provider": "bgp",
            "chargeSpec": { "chargeMode": mode },
        });
    }
    if !r.tags.is_empty() {
        spec["userTags"] = r.tags.iter().map(|(k, v)| json!({ "key": k, "value": v })).collect();
    }
    // JD runs a boot script only from `userdata` under `launch-script`, base64-encoded (jdcloud_sdk 1.6.x
    // services/vm/models/InstanceSpec.py `userdata`, Userdata.py); `metadata` is only readable through the
    // metadata service and never run. The spec parser has already refused what JD would not run.
    if let Some(u) = &r.user_data {
        spec["userdata"] =
            json!([{ "key": "launch-script", "value": base64::engine::general_purpose::STANDARD.encode(u) }]);
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

fn disk_of(att: &Field) -> Option<DiskInfo> {
    let d = att.get("cloudDisk");
    Some(DiskInfo {
        disk_id: d.get("diskId").opt_text()?,
        disk: Disk {
            category: category_back(&d.get("diskType").text()),
            size_gb: d.get("diskSizeGB").u64().unwrap_or(0) as u32,
            snapshot_id: d.get("snapshotId").opt_text(),
        },
    })
}

pub(super) fn instance_of(i: &Field, region: &str) -> Instance {
    let tags: BTreeMap<String, String> =
        i.get("tags").items().iter().map(|t| (t.get("key").text(), t.get("value").text())).collect();
    let billing = match i.get("charge").get("chargeMode").text().as_str() {
        "postpaid_by_duration" | "postpaid_by_usage" => Some(BillingMode::Hourly),
        "prepaid_by_duration" => Some(BillingMode::Monthly),
        _ => None,
    };
    let nic = i.get("primaryNetworkInterface").get("networkInterface");
    Instance {
        instance_id: i.get("instanceId").text(),
        name: i.get("instanceName").opt_text(),
        region: region.into(),
        zone: i.get("az").text(),
        instance_type: i.get("instanceType").text(),
        state: state_of(&i.get("status").text()),
        billing,
        image_id: i.get("imageId").opt_text(),
        system_disk: disk_of(&i.get("systemDisk")),
        data_disks: i.get("dataDisks").items().iter().filter_map(disk_of).collect(),
        network: i.get("subnetId").opt_text().map(|subnet| NetworkIds {
            vpc: i.get("vpcId").text(),
            subnet,
            security_groups: nic
                .get("securityGroups")
                .items()
                .iter()
                .map(|g| g.get("groupId").opt_text().unwrap_or_else(|| g.text()))
                .collect(),
        }),
        login_key: i.get("keyNames").at(0).opt_text(),
        public_ip: i.get("elasticIpAddress").opt_text(),
        private_ip: i.get("privateIpAddress").opt_text(),
        auto_release_at: i.get("autoReleaseTime").opt_text(),
        // `launchTime` is RFC 3339 with Beijing's offset (`2026-11-30T16:00:00+08:00`).
        launched_at: i
            .get("launchTime")
            .opt_text()
            .and_then(|t| crate::api::parse_offset_time(&t))
            .map(|t| t.to_string()),
        // A prepaid term's end, `YYYY-MM-DDTHH:mm:ssZ` in UTC, empty for pay-as-you-go (jdcloud_sdk
        // 1.6.354 services/charge/models/Charge.py `chargeExpiredTime`).
        expires_at: i
            .get("charge")
            .get("chargeExpiredTime")
            .opt_text()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.to_string()),
        tags,
        // `Instance.spotStatus` (jdcloud_sdk 1.6.354 vm/models/Instance.py) documents no values, so no
        // sign is read from it; a reclaimed JD instance is known once it is gone.
        reclaim_notice: false,
    }
}

/// Whether describeInstanceTypes says the type is in stock in the zone, with the request id.
pub(super) async fn stock(
    c: &Client,
    region: &str,
    zone: &str,
    instance_type: &str,
) -> Result<(bool, Option<String>), CloudError> {
    let q =
        filter_query(&[("instanceTypes", vec![instance_type.to_string()]), ("az", vec![zone.to_string()])]);
    let a = c.call(vm("describeInstanceTypes", "GET", "instanceTypes"), region, q, None).await?;
    let sells = a
        .get("instanceTypes")
        .at(0)
        .get("state")
        .items()
        .iter()
        .any(|x| x.get("inStock").value() == &json!(true));
    Ok((sells, a.request_id))
}

impl Instances for Client {
    const PROVIDER: Provider = Provider::JdCloud;

    async fn create(&self, req: &CreateRequest) -> Result<Created, CloudError> {
        // No instance role in JD's createInstances (jdcloud_sdk 1.6.354 services/vm/models/InstanceSpec.py):
        // the spec parser refuses `idle` on JD; refused here too rather than dropped.
        if req.instance_role.is_some() {
            return Err(CloudError::unsupported(
                Provider::JdCloud,
                "createInstances",
                "JD Cloud has no instance role to give the node agent credentials",
            ));
        }
        if req.dry_run {
            // createInstances has no dry run: ask for the stock of this type in this zone instead.
            let (in_stock, request_id) = stock(self, &req.region, &req.zone, &req.instance_type).await?;
            if !in_stock {
                return Err(CloudError::new(
                    Provider::JdCloud,
                    "describeInstanceTypes",
                    ErrorKind::StockOut,
                    "inStock=false",
                    format!("{} is sold out in {}", req.instance_type, req.zone),
                )
                .with_request_id(request_id));
            }
            return Ok(Created { instance_id: String::new(), request_id });
        }
        let body = json!({ "regionId": req.region, "instanceSpec": instance_spec(req), "maxCount": 1, "clientToken": req.client_token });
        let a =
            self.call(vm("createInstances", "POST", "instances"), &req.region, vec![], Some(body)).await?;
        let Created { instance_id: id, request_id } =
            a.created(Provider::JdCloud, "createInstances", a.get("instanceIds").at(0))?;
        if let Some(t) = req.auto_release_at {
            if let Err(e) = self.set_auto_release(&req.region, &id, t).await {
                // The instance exists; only its release time is missing. Transient, so the engine retries the
                // idempotent create (same token, same instance) and this call again, never marking it failed;
                // when those retries run out, the engine finds the instance by its token tag, records it, and
                // sets the release time itself (`Cloud::set_auto_release`).
                return Err(CloudError::new(
                    Provider::JdCloud,
                    "createInstances",
                    ErrorKind::Transient,
                    e.code,
                    format!("instance {id} was created but its release time was not set: {}", e.message),
                )
                .with_request_id(e.request_id));
            }
        }
        Ok(Created { instance_id: id, request_id })
    }

    async fn set_auto_release(
        &self,
        region: &str,
        instance_id: &str,
        at: jiff::Timestamp,
    ) -> Result<(), CloudError> {
        let body = json!({ "regionId": region, "instanceIds": [instance_id], "autoReleaseTime": format_release_time(at) });
        let call = vm("modifyInstanceReleaseTime", "POST", "instances:modifyInstanceReleaseTime");
        self.call(call, region, vec![], Some(body)).await.map(drop)
    }

    async fn describe(&self, region: &str, filter: &Filter) -> Result<Vec<Instance>, CloudError> {
        page::all(Style::PageNumber, |at| async move {
            let q = describe_query(filter, at.number());
            let a = self.call(vm("describeInstances", "GET", "instances"), region, q, None).await?;
            let items = a.get("instances").items().iter().map(|i| instance_of(i, region)).collect();
            Ok(Page::counted(items, a.get("totalCount").u64().unwrap_or(0)))
        })
        .await
    }

    async fn renewal_off(&self, region: &str, instance_id: &str) -> Result<(), CloudError> {
        self.set_renewal_off(region, instance_id).await
    }

    async fn terminate(&self, region: &str, instance_ids: &[String]) -> Result<(), CloudError> {
        // JD deletes one instance per call. An elastic IP bound to the instance stays (and bills) unless
        // asked for: jdcloud_sdk 1.6.354 services/vm/apis/DeleteInstanceRequest.py "云主机中绑定的弹性公网IP
        // 可以选择是否随云主机一起删除", `deletePrimaryNetworkInterfaceAllElasticIp` "默认为否". gpuctl's
        // instances carry the one gpuctl asked for in createInstances, so it goes with them.
        let release_ip =
            || vec![("deletePrimaryNetworkInterfaceAllElasticIp".to_string(), "true".to_string())];
        for id in instance_ids {
            let path = format!("instances/{id}");
            self.call(vm("deleteInstance", "DELETE", &path), region, release_ip(), None).await?;
        }
        Ok(())
    }
}

/// vm's key pairs, named by `keyName` (jdcloud_sdk 1.6.354 `jdcloud_sdk/services/vm/apis/
/// ImportKeypairRequest.py`, `DescribeKeypairsRequest.py`): createInstances' `keyNames` takes the
/// name, so the name is the id.
impl KeyPairs for Client {
    async fn find_key_pair(&self, region: &str, name: &str) -> Result<Option<KeyPair>, CloudError> {
        // The `keyNames` filter matches exactly ("精确匹配").
        let q = filter_query(&[("keyNames", vec![name.to_owned()])]);
        let a = self.call(vm("describeKeypairs", "GET", "keypairs"), region, q, None).await?;
        let listed = a.get("keypairs").items().iter().any(|k| k.get("keyName").text() == name);
        Ok(listed.then(|| KeyPair::named(name)))
    }

    async fn import_key_pair(
        &self,
        region: &str,
        name: &str,
        public_key: &str,
    ) -> Result<KeyPair, CloudError> {
        let body = json!({ "keyName": name, "publicKey": public_key });
        self.call(vm("importKeypair", "POST", "keypairs:import"), region, vec![], Some(body)).await?;
        Ok(KeyPair::named(name))
    }
}

/// vm's official images (jdcloud_sdk 1.6.354 `jdcloud_sdk/services/vm/apis/DescribeImagesRequest.py`:
/// `imageSource` `public` "官方镜像", `pageSize` "取值范围[10, 100]"). JD says the OS in `platform` and
/// `osVersion` (`services/vm/models/Image.py`); only `ready` images boot.
impl Images for Client {
    async fn public_images(&self, region: &str) -> Result<Vec<ImageInfo>, CloudError> {
        page::all(Style::PageNumber, |at| async move {
            let q = vec![
                ("imageSource".to_string(), "public".to_string()),
                ("pageNumber".to_string(), at.number().to_string()),
                ("pageSize".to_string(), "100".to_string()),
            ];
            let a = self.call(vm("describeImages", "GET", "images"), region, q, None).await?;
            let items = a
                .get("images")
                .items()
                .iter()
                .filter(|i| i.get("status").value() == "ready")
                .map(|i| {
                    let platform = i.get("platform").text();
                    let os = format!("{platform} {}", i.get("osVersion").text());
                    ImageInfo::new(
                        i.get("imageId").text(),
                        i.get("name").text(),
                        platform,
                        os,
                        i.get("createTime").opt_text(),
                    )
                })
                .collect();
            Ok(Page::counted(items, a.get("totalCount").u64().unwrap_or(0)))
        })
        .await
    }

    /// createImage (jdcloud_sdk 1.6.354 `services/vm/apis/CreateImageRequest.py`:
    /// `POST /regions/{regionId}/instances/{instanceId}:createImage`, `name` and `description`; no
    /// clientToken and no tags, so `find_image` by its unique name runs before it).
    async fn create_image(
        &self,
        region: &str,
        instance_id: &str,
        name: &str,
        _client_token: &str,
    ) -> Result<String, CloudError> {
        let path = format!("instances/{instance_id}:createImage");
        let body = json!({
            "regionId": region, "instanceId": instance_id, "name": name,
            "description": "gpuctl: the environment of a validated instance, for its clones",
        });
        let a = self.call(vm("createImage", "POST", &path), region, vec![], Some(body)).await?;
        a.get("imageId").text_required().map_err(|missing| {
            CloudError::bad_response(
                Provider::JdCloud,
                "createImage",
                format!("createImage answered without an id ({missing})"),
            )
            .with_request_id(a.request_id.clone())
        })
    }

    /// The account's own image named exactly `name` (`imageSource` `private`; `imageName` "根据镜像名称模糊查询").
    async fn find_image(&self, region: &str, name: &str) -> Result<Option<String>, CloudError> {
        let q = vec![
            ("imageSource".to_string(), "private".to_string()),
            ("imageName".to_string(), name.to_string()),
            ("pageNumber".to_string(), "1".to_string()),
            ("pageSize".to_string(), "100".to_string()),
        ];
        let a = self.call(vm("describeImages", "GET", "images"), region, q, None).await?;
        Ok(a.get("images")
            .items()
            .iter()
            .find(|i| i.get("name").value() == name)
            .and_then(|i| i.get("imageId").opt_text()))
    }

    /// `status` (services/vm/models/Image.py, "参考镜像状态"): `ready` boots; `error` and `deleting`
    /// never will; anything else is still being made.
    async fn image_state(&self, region: &str, image_id: &str) -> Result<SnapshotState, CloudError> {
        let q = vec![("ids.1".to_string(), image_id.to_string())];
        let a = self.call(vm("describeImages", "GET", "images"), region, q, None).await?;
        let listed = a.listed(
            Provider::JdCloud,
            "describeImages",
            "NOT_FOUND",
            format!("image {image_id}"),
            a.get("images").at(0),
        )?;
        match listed.get("status").text().as_str() {
            "ready" => Ok(SnapshotState::Available),
            "error" | "deleting" => Ok(SnapshotState::Failed),
            _ => Ok(SnapshotState::Creating),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
    fn boot_script_is_a_launch_script_and_long_terms_go_as_years() {
        let mut r = CreateRequest {
            client_token: "t".into(),
            name: "d-p-0".into(),
            region: "cn-north-1".into(),
            zone: "cn-north-1a".into(),
            instance_type: "g.n2.xlarge".into(),
            billing: BillingMode::Monthly,
            term: 1,
            spot_max_price: None,
            image_id: "img-1".into(),
            system_disk: Disk { category: DiskCategory::Ssd, size_gb: 100, snapshot_id: None },
            data_disks: vec![],
            network: None,
            placement: None,
            login_key: None,
            public_ip: None,
            auto_release_at: None,
            tags: BTreeMap::new(),
            user_data: Some("#!/bin/bash\necho hi\n".into()),
            instance_role: None,
            dry_run: false,
        };
        for (term, unit, n) in
            [(1, "month", 1), (9, "month", 9), (12, "year", 1), (24, "year", 2), (36, "year", 3)]
        {
            r.term = term;
            let s = instance_spec(&r);
            assert_eq!(
                (s["charge"]["chargeUnit"].as_str(), s["charge"]["chargeDuration"].as_u64()),
                (Some(unit), Some(n)),
                "{term}"
            );
        }
        let s = instance_spec(&r);
        assert_eq!(
            s["userdata"],
            json!([{ "key": "launch-script", "value": "IyEvYmluL2Jhc2gKZWNobyBoaQo=" }])
        );
        assert!(s.get("metadata").is_none(), "metadata is never run");
        assert!(s.get("elasticIp").is_none(), "public_ip = false asks for no elastic IP");
        for (billing, mode) in [
            (PublicIpBilling::Traffic, "postpaid_by_usage"),
            (PublicIpBilling::Bandwidth, "postpaid_by_duration"),
        ] {
            r.public_ip = Some(gpuctl_cloud::PublicIp { bandwidth_mbps: 20, billing });
            assert_eq!(
                instance_spec(&r)["elasticIp"],
                json!({ "bandwidthMbps": 20, "provider": "bgp", "chargeSpec": { "chargeMode": mode } }),
                "a prepaid instance's address is postpaid too"
            );
        }
    }

    #[test]
    fn launch_time_is_read_in_utc() {
        let v = json!({ "instanceId": "i-1", "launchTime": "2026-11-30T16:00:00+08:00" });
        let i = instance_of(&Field::root("", &v), "cn-north-1");
        assert_eq!(i.launched_at.as_deref(), Some("2026-11-30T08:00:00Z"));
    }
}
