//! CVM: creating, describing and terminating instances, their prices and their stock (API 2017-03-12,
//! tencentcloud-sdk-python-cvm 3.1.178 `models.py`).

use std::collections::BTreeMap;

use base64::Engine as _;
use gpuctl_cloud::cloud::{
    CloudError, CreateRequest, Created, Filter, ImageInfo, Instance, InstanceState, KeyPair, Quote,
    SnapshotState, Stock,
};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::{Images, Instances, KeyPairs, Prices};
use gpuctl_cloud::{BillingMode, NetworkIds, Provider, PublicIpBilling};
use serde_json::{json, Value};

use super::{cbs::disk_of, disk_type, Client};
use crate::api::{codes, CVM};

/// RunInstances / InquiryPriceRunInstances body for one instance.
pub(super) fn run_body(r: &CreateRequest) -> Value {
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
    if let Some(ip) = &r.public_ip {
        // tccli 3.1.189.1 services/cvm/v20170312/api.json objects.InternetAccessible.InternetChargeType:
        // TRAFFIC_POSTPAID_BY_HOUR (流量按小时后付费) or BANDWIDTH_POSTPAID_BY_HOUR (带宽按小时后付费);
        // the hourly modes, so the address bills only while the instance lives. PublicIpAssigned is added by `create` only:
        // the definition says it is an input of RunInstances alone, and this body also prices.
        let charge = match ip.billing {
            PublicIpBilling::Traffic => "TRAFFIC_POSTPAID_BY_HOUR",
            PublicIpBilling::Bandwidth => "BANDWIDTH_POSTPAID_BY_HOUR",
        };
        b["InternetAccessible"] =
            json!({ "InternetChargeType": charge, "InternetMaxBandwidthOut": ip.bandwidth_mbps });
    }
    // A cluster node of an HCC type joins its HPC cluster: "若创建的实例为高性能计算实例，需指定实例放置的集群，
    // 否则不可指定" (tccli 3.1.189.1 services/cvm/v20170312/api.json RunInstancesRequest.HpcClusterId; the
    // same field is in InquiryPriceRunInstancesRequest).
    if let Some(hpc) = &r.placement {
        b["HpcClusterId"] = json!(hpc);
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
    // The node agent's instance role (issue 15): tccli 3.1.189.1 cvm api.json
    // RunInstancesRequest.CamRoleName ("实例绑定的角色名称").
    if let Some(role) = &r.instance_role {
        b["CamRoleName"] = json!(role);
    }
    b
}

/// One DescribeInstances page (100, the most CVM gives) of what `filter` selects. CVM takes `InstanceIds`
/// or `Filters`, never both; `tag-key` matches a key whatever its value, `tag:<key>` a key and value.
pub(super) fn describe_body(filter: &Filter, offset: usize) -> Value {
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

pub(super) fn state_of(st: &str) -> InstanceState {
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

pub(super) fn instance_of(i: &Field, region: &str) -> Instance {
    let first = |f: Field| f.at(0).opt_text();
    let tags: BTreeMap<String, String> =
        i.get("Tags").items().iter().map(|t| (t.get("Key").text(), t.get("Value").text())).collect();
    let billing = match i.get("InstanceChargeType").text().as_str() {
        "POSTPAID_BY_HOUR" => Some(BillingMode::Hourly),
        "SPOTPAID" => Some(BillingMode::Spot),
        "PREPAID" => Some(BillingMode::Monthly),
        _ => None,
    };
    let vpc = i.get("VirtualPrivateCloud");
    Instance {
        instance_id: i.get("InstanceId").text(),
        name: i.get("InstanceName").opt_text(),
        region: region.into(),
        zone: i.get("Placement").get("Zone").text(),
        instance_type: i.get("InstanceType").text(),
        state: state_of(&i.get("InstanceState").text()),
        billing,
        image_id: i.get("ImageId").opt_text(),
        system_disk: disk_of(&i.get("SystemDisk")),
        data_disks: i.get("DataDisks").items().iter().filter_map(disk_of).collect(),
        network: vpc.get("SubnetId").opt_text().map(|subnet| NetworkIds {
            vpc: vpc.get("VpcId").text(),
            subnet,
            security_groups: i.get("SecurityGroupIds").items().iter().map(Field::text).collect(),
        }),
        login_key: first(i.get("LoginSettings").get("KeyIds")),
        public_ip: first(i.get("PublicIpAddresses")),
        private_ip: first(i.get("PrivateIpAddresses")),
        auto_release_at: None,
        // CVM's `CreatedTime` is ISO 8601 in UTC (`2020-09-22T00:00:00Z`).
        launched_at: i
            .get("CreatedTime")
            .opt_text()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.to_string()),
        // A PREPAID term's end, ISO 8601 UTC; null otherwise (tccli 3.1.189.1
        // services/cvm/v20170312/api.json objects.Instance.ExpiredTime).
        expires_at: i
            .get("ExpiredTime")
            .opt_text()
            .and_then(|t| t.parse::<jiff::Timestamp>().ok())
            .map(|t| t.to_string()),
        tags,
        // No reclaim sign in tccli 3.1.189.1 objects.Instance: the termination time is only in the
        // instance's metadata service (spot/termination-time).
        reclaim_notice: false,
    }
}

impl Instances for Client {
    const PROVIDER: Provider = Provider::Tencent;

    async fn create(&self, req: &CreateRequest) -> Result<Created, CloudError> {
        let mut body = run_body(req);
        body["ClientToken"] = json!(req.client_token);
        if req.public_ip.is_some() {
            body["InternetAccessible"]["PublicIpAssigned"] = json!(true);
        }
        if req.dry_run {
            body["DryRun"] = json!(true);
        }
        match self.call(CVM, &req.region, "RunInstances", body).await {
            Ok(a) => a.created(Provider::Tencent, "RunInstances", a.get("InstanceIdSet").at(0)),
            Err(e) => e.dry_run_passed(req.dry_run, codes::DRY_RUN_OPERATION),
        }
    }

    async fn describe(&self, region: &str, filter: &Filter) -> Result<Vec<Instance>, CloudError> {
        page::all(Style::Offset, |at| async move {
            let a = self.call(CVM, region, "DescribeInstances", describe_body(filter, at.number())).await?;
            let items = a.get("InstanceSet").items().iter().map(|i| instance_of(i, region)).collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }

    async fn terminate(&self, region: &str, instance_ids: &[String]) -> Result<(), CloudError> {
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
    }
}

impl Prices for Client {
    async fn quote(&self, req: &CreateRequest) -> Result<Quote, CloudError> {
        let a = self.call(CVM, &req.region, "InquiryPriceRunInstances", run_body(req)).await?;
        let p = a.get("Price").get("InstancePrice");
        let cny = if req.billing.is_per_hour() {
            p.get("UnitPriceDiscount").f64()
        } else {
            p.get("DiscountPrice").f64()
        };
        Ok(Quote { cny: cny.unwrap_or(0.0), per_hour: req.billing.is_per_hour(), request_id: a.request_id })
    }

    async fn in_stock(&self, region: &str, zone: &str, instance_type: &str) -> Result<Stock, CloudError> {
        let body = json!({ "Filters": [{ "Name": "zone", "Values": [zone] }, { "Name": "instance-type", "Values": [instance_type] }] });
        let a = self.call(CVM, region, "DescribeZoneInstanceConfigInfos", body).await?;
        // One entry per charge type; on sale if any of them sells.
        let sells = a.get("InstanceTypeQuotaSet").items().iter().any(|q| q.get("Status").value() == "SELL");
        Ok(Some((sells, a.request_id)))
    }
}

/// CVM's key pairs (tccli 3.1.189.1 `tccli/services/cvm/v20170312/api.json`: ImportKeyPairRequest,
/// DescribeKeyPairsRequest). RunInstances names a key by its `skey-…` id.
impl KeyPairs for Client {
    async fn find_key_pair(&self, region: &str, name: &str) -> Result<Option<KeyPair>, CloudError> {
        // The `key-name` filter; the exact name is checked here too, so a filter that also matched
        // similar names could not hand back another key.
        let body = json!({ "Filters": [{ "Name": "key-name", "Values": [name] }], "Limit": 100 });
        let a = self.call(CVM, region, "DescribeKeyPairs", body).await?;
        Ok(a.get("KeyPairSet")
            .items()
            .iter()
            .find(|k| k.get("KeyName").text() == name)
            .and_then(|k| k.get("KeyId").opt_text().map(|id| KeyPair { id, name: name.to_owned() })))
    }

    async fn import_key_pair(
        &self,
        region: &str,
        name: &str,
        public_key: &str,
    ) -> Result<KeyPair, CloudError> {
        // ProjectId is required: "如果是默认项目，直接填0就可以" (ImportKeyPairRequest.ProjectId).
        let body = json!({ "KeyName": name, "ProjectId": 0, "PublicKey": public_key });
        let a = self.call(CVM, region, "ImportKeyPair", body).await?;
        match a.get("KeyId").text_required() {
            Ok(id) => Ok(KeyPair { id, name: name.to_owned() }),
            Err(missing) => Err(CloudError::bad_response(
                Provider::Tencent,
                "ImportKeyPair",
                format!("ImportKeyPair answered without a key id ({missing})"),
            )
            .with_request_id(a.request_id)),
        }
    }
}

/// CVM's public images (tccli 3.1.189.1 `cvm/v20170312/api.json` DescribeImagesRequest: the
/// `image-type` filter `PUBLIC_IMAGE` "公共镜像 (腾讯云官方镜像)"; `Limit` "最大值为100"; `Offset`).
impl Images for Client {
    async fn public_images(&self, region: &str) -> Result<Vec<ImageInfo>, CloudError> {
        page::all(Style::Offset, |at| async move {
            let body = json!({
                "Filters": [{ "Name": "image-type", "Values": ["PUBLIC_IMAGE"] }],
                "Offset": at.number(),
                "Limit": 100,
            });
            let a = self.call(CVM, region, "DescribeImages", body).await?;
            let items = a
                .get("ImageSet")
                .items()
                .iter()
                // A public image being synced or retired cannot boot an instance.
                .filter(|i| i.get("ImageState").value() == "NORMAL")
                .map(|i| {
                    ImageInfo::new(
                        i.get("ImageId").text(),
                        i.get("ImageName").text(),
                        i.get("Platform").text(),
                        i.get("OsName").text(),
                        i.get("CreatedTime").opt_text(),
                    )
                })
                .collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }

    /// CreateImage of the instance's system disk (tccli 3.1.189.1 `cvm/v20170312/api.json`
    /// CreateImageRequest: `InstanceId`, `ImageName` "镜像名称", `TagSpecification` with
    /// ResourceType `image`; no ClientToken, so `find_image` runs before it).
    async fn create_image(
        &self,
        region: &str,
        instance_id: &str,
        name: &str,
        client_token: &str,
    ) -> Result<String, CloudError> {
        let body = json!({
            "InstanceId": instance_id,
            "ImageName": name,
            "ImageDescription": "gpuctl: the environment of a validated instance, for its clones",
            "TagSpecification": [{ "ResourceType": "image", "Tags": [{ "Key": "gpuctl-token", "Value": client_token }] }],
        });
        let a = self.call(CVM, region, "CreateImage", body).await?;
        a.get("ImageId").text_required().map_err(|missing| {
            CloudError::bad_response(
                Provider::Tencent,
                "CreateImage",
                format!("CreateImage answered without an id ({missing})"),
            )
            .with_request_id(a.request_id.clone())
        })
    }

    /// The account's image named exactly `name`: the `image-name` filter "支持模糊查询", so the
    /// answer is matched again here.
    async fn find_image(&self, region: &str, name: &str) -> Result<Option<String>, CloudError> {
        let body = json!({
            "Filters": [
                { "Name": "image-type", "Values": ["PRIVATE_IMAGE"] },
                { "Name": "image-name", "Values": [name] },
            ],
            "Offset": 0,
            "Limit": 100,
        });
        let a = self.call(CVM, region, "DescribeImages", body).await?;
        Ok(a.get("ImageSet")
            .items()
            .iter()
            .find(|i| i.get("ImageName").value() == name)
            .and_then(|i| i.get("ImageId").opt_text()))
    }

    /// Image.ImageState: "CREATING-创建中, NORMAL-正常, CREATEFAILED-创建失败, USING-使用中, SYNCING-同步中,
    /// IMPORTING-导入中, IMPORTFAILED-导入失败" (tccli 3.1.189.1 `cvm/v20170312/api.json`).
    async fn image_state(&self, region: &str, image_id: &str) -> Result<SnapshotState, CloudError> {
        let a = self.call(CVM, region, "DescribeImages", json!({ "ImageIds": [image_id] })).await?;
        let listed = a.listed(
            Provider::Tencent,
            "DescribeImages",
            codes::INVALID_IMAGE_ID_NOT_FOUND,
            format!("image {image_id}"),
            a.get("ImageSet").at(0),
        )?;
        match listed.get("ImageState").text().as_str() {
            "NORMAL" | "USING" => Ok(SnapshotState::Available),
            "CREATING" | "SYNCING" | "IMPORTING" => Ok(SnapshotState::Creating),
            _ => Ok(SnapshotState::Failed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        let v = json!({ "InstanceId": "ins-1", "CreatedTime": "2026-11-30T08:00:00Z" });
        let i = instance_of(&Field::root("", &v), "ap-guangzhou");
        assert_eq!(i.launched_at.as_deref(), Some("2026-11-30T08:00:00Z"));
        let v = json!({ "InstanceId": "ins-1" });
        assert_eq!(instance_of(&Field::root("", &v), "ap-guangzhou").launched_at, None);
    }
}
