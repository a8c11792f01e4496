//! ECS (API 2014-05-26): instances, their disks and snapshots, prices and stock, as flattened query
//! parameters (alibabacloud_ecs20140526 `models.py` names them).

use std::collections::BTreeMap;

use base64::Engine as _;
use gpuctl_cloud::cloud::{
    system_disk_first, CloudError, CreateRequest, Created, DiskInfo, DiskKind, Filter, ImageInfo, Instance,
    InstanceState, KeyPair, Quote, SnapshotState, Stock,
};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::{Disks, Images, Instances, KeyPairs, Prices};
use gpuctl_cloud::{BillingMode, Disk, DiskCategory, NetworkIds, Provider, PublicIpBilling};

use super::Client;
use crate::api::codes;

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

pub(super) fn kv(k: impl Into<String>, v: impl ToString) -> (String, String) {
    (k.into(), v.to_string())
}

/// `Tag.N.Key` / `Tag.N.Value` (N from 1), as RunInstances and the network creates and Describe*
/// calls take tags.
pub(super) fn tag_params(tags: &std::collections::BTreeMap<String, String>) -> Vec<(String, String)> {
    tags.iter()
        .enumerate()
        .flat_map(|(i, (k, v))| [kv(format!("Tag.{}.Key", i + 1), k), kv(format!("Tag.{}.Value", i + 1), v)])
        .collect()
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
    if let Some(ip) = &r.public_ip {
        // alibabacloud-ecs20140526 7.11.8 models/_run_instances_request.py: InternetMaxBandwidthOut
        // "0 to 100" (above 0 the instance gets a public IP, released with it), InternetChargeType
        // PayByBandwidth or PayByTraffic.
        p.push(kv("InternetMaxBandwidthOut", ip.bandwidth_mbps));
        p.push(kv(
            "InternetChargeType",
            match ip.billing {
                PublicIpBilling::Traffic => "PayByTraffic",
                PublicIpBilling::Bandwidth => "PayByBandwidth",
            },
        ));
    }
    // alibabacloud_ecs20140526 7.11.8 `_run_instances_request.py` `DeploymentSetId`: a cluster's
    // LowLatency deployment set (issue 14).
    if let Some(set) = &r.placement {
        p.push(kv("DeploymentSetId", set));
    }
    if let Some(k) = &r.login_key {
        p.push(kv("KeyPairName", k));
    }
    if let Some(t) = r.auto_release_at {
        // ECS takes whole minutes' precision at most; seconds are rounded down anyway.
        p.push(kv("AutoReleaseTime", t.strftime("%Y-%m-%dT%H:%M:%SZ")));
    }
    p.extend(tag_params(&r.tags));
    if let Some(u) = &r.user_data {
        p.push(kv("UserData", base64::engine::general_purpose::STANDARD.encode(u)));
    }
    // The node agent's instance role (issue 15): alibabacloud-ecs20140526 7.11.8
    // models/_run_instances_request.py `ram_role_name` ("The name of the instance RAM role").
    if let Some(role) = &r.instance_role {
        p.push(kv("RamRoleName", role));
    }
    if r.dry_run {
        p.push(kv("DryRun", "true"));
    }
    p
}

/// One DescribeInstances page (100, the most ECS gives) of what `filter` selects, by `MaxResults` and
/// the previous page's `NextToken` (`PageNumber`/`PageSize` are deprecated: alibabacloud_ecs20140526
/// 7.11.8 `models/_describe_instances_request.py` `page_number`, `page_size`). `Tag.N.Key` without a
/// `Tag.N.Value` matches the key whatever its value (the SDK's DescribeInstancesRequestTag). ECS's docs
/// say a tag filter answers for at most 1,000 instances (beyond that, ListTagResources).
fn describe_params(filter: &Filter, token: Option<&str>) -> Vec<(String, String)> {
    let mut p = tokened(100, token);
    match filter {
        Filter::Ids(ids) => p.push(kv("InstanceIds", serde_json::to_string(ids).unwrap_or_default())),
        Filter::Tag { key, value } => p.extend([kv("Tag.1.Key", key), kv("Tag.1.Value", value)]),
        Filter::TagKey(key) => p.push(kv("Tag.1.Key", key)),
    }
    p
}

/// The paging parameters of a next-token listing: `MaxResults`, and `NextToken` from the second page on.
pub(super) fn tokened(max_results: u32, token: Option<&str>) -> Vec<(String, String)> {
    let mut p = vec![kv("MaxResults", max_results)];
    if let Some(t) = token {
        p.push(kv("NextToken", t));
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

fn billing_of(i: &Field) -> Option<BillingMode> {
    match (i.get("InstanceChargeType").text().as_str(), i.get("SpotStrategy").text().as_str()) {
        ("PostPaid", "SpotWithPriceLimit" | "SpotAsPriceGo") => Some(BillingMode::Spot),
        ("PostPaid", _) => Some(BillingMode::Hourly),
        // ECS does not say the term in DescribeInstances; monthly is the neutral guess a clone shows for review.
        ("PrePaid", _) => Some(BillingMode::Monthly),
        _ => None,
    }
}

fn instance_of(i: &Field) -> Instance {
    let vpc = i.get("VpcAttributes");
    let vsw = vpc.get("VSwitchId").text();
    let tags: BTreeMap<String, String> = i
        .get("Tags")
        .get("Tag")
        .items()
        .iter()
        .map(|t| (t.get("TagKey").text(), t.get("TagValue").text()))
        .collect();
    Instance {
        instance_id: i.get("InstanceId").text(),
        name: i.get("InstanceName").opt_text(),
        region: i.get("RegionId").text(),
        zone: i.get("ZoneId").text(),
        instance_type: i.get("InstanceType").text(),
        state: state_of(&i.get("Status").text()),
        billing: billing_of(i),
        image_id: i.get("ImageId").opt_text(),
        system_disk: None,
        data_disks: vec![],
        network: (!vsw.is_empty()).then(|| NetworkIds {
            vpc: vpc.get("VpcId").text(),
            subnet: vsw,
            security_groups: i.get("SecurityGroupIds").get("SecurityGroupId").texts(),
        }),
        login_key: i.get("KeyPairName").opt_text(),
        public_ip: i
            .get("PublicIpAddress")
            .get("IpAddress")
            .texts()
            .into_iter()
            .next()
            .or_else(|| i.get("EipAddress").get("IpAddress").opt_text()),
        private_ip: vpc.get("PrivateIpAddress").get("IpAddress").texts().into_iter().next(),
        auto_release_at: i.get("AutoReleaseTime").opt_text(),
        // ECS writes `CreationTime` in UTC to the minute (`2026-11-30T08:00Z`).
        launched_at: i
            .get("CreationTime")
            .opt_text()
            .and_then(|t| crate::api::parse_time(&t))
            .map(|t| t.to_string()),
        // `ExpiredTime` (UTC to the minute, as `CreationTime`) is a subscription's end; pay-as-you-go
        // instances carry a far-future placeholder there, so it is read for PrePaid only
        // (alibabacloud_ecs20140526 7.11.8, models/_describe_instances_response_body.py `expired_time`).
        expires_at: (i.get("InstanceChargeType").text() == "PrePaid")
            .then(|| i.get("ExpiredTime").opt_text())
            .flatten()
            .and_then(|t| crate::api::parse_time(&t))
            .map(|t| t.to_string()),
        tags,
        // A spot instance about to be reclaimed carries the `Recycling` lock (alibabacloud_ecs20140526
        // 7.11.8, models/_describe_instances_response_body.py `operation_locks.lock_reason[].lock_reason`;
        // the value: ECS's best practices for preemptible instances, docs/research/cost-control.md §3).
        reclaim_notice: i
            .get("OperationLocks")
            .get("LockReason")
            .items()
            .iter()
            .any(|l| l.get("LockReason").text() == "Recycling"),
    }
}

fn disk_of(d: &Field) -> (DiskKind, DiskInfo) {
    let kind = if d.get("Type").text() == "system" { DiskKind::System } else { DiskKind::Data };
    let disk = Disk {
        category: category_back(&d.get("Category").text()),
        size_gb: d.get("Size").u64().unwrap_or(0) as u32,
        snapshot_id: d.get("SourceSnapshotId").opt_text(),
    };
    (kind, DiskInfo { disk_id: d.get("DiskId").text(), disk })
}

impl Client {
    /// Converts the subscription instances among `ids` to pay-as-you-go (ModifyInstanceChargeType,
    /// `InstanceIds` a JSON array of at most 20), so that DeleteInstances may release them.
    async fn end_terms(&self, region: &str, ids: &[String]) -> Result<(), CloudError> {
        let found = self.describe(region, &Filter::Ids(ids.to_vec())).await?;
        let prepaid: Vec<String> = found
            .into_iter()
            .filter(|i| matches!(i.billing, Some(b) if b != BillingMode::Hourly && b != BillingMode::Spot))
            .map(|i| i.instance_id)
            .collect();
        for chunk in prepaid.chunks(20) {
            let p = vec![
                kv("InstanceIds", serde_json::to_string(chunk).unwrap_or_default()),
                kv("InstanceChargeType", "PostPaid"),
                kv("AutoPay", "true"),
            ];
            self.call(region, "ModifyInstanceChargeType", p).await?;
        }
        Ok(())
    }
}

impl Instances for Client {
    const PROVIDER: Provider = Provider::Alibaba;

    /// `network = "default"` (no network ids) goes into the zone's default vSwitch and a security
    /// group of its VPC (`vpc.rs`): RunInstances requires both for a VPC instance, which every GPU
    /// family is. A zone without them is refused here, before RunInstances (dry runs too).
    async fn create(&self, req: &CreateRequest) -> Result<Created, CloudError> {
        let resolved;
        let req = match &req.network {
            Some(_) => req,
            None => {
                let mut with = req.clone();
                with.network = Some(self.default_network(&req.region, &req.zone).await?);
                resolved = with;
                &resolved
            }
        };
        match self.call(&req.region, "RunInstances", run_params(req)).await {
            Ok(a) => a.created(
                Provider::Alibaba,
                "RunInstances",
                a.get("InstanceIdSets").get("InstanceIdSet").at(0),
            ),
            // A dry run that would have succeeded answers with this "error".
            Err(e) => e.dry_run_passed(req.dry_run, codes::DRY_RUN),
        }
    }

    async fn describe(&self, region: &str, filter: &Filter) -> Result<Vec<Instance>, CloudError> {
        page::all(Style::NextToken, |at| async move {
            let a = self.call(region, "DescribeInstances", describe_params(filter, at.token())).await?;
            let items = a.get("Instances").get("Instance").items().iter().map(instance_of).collect();
            Ok(Page::tokened(items, a.get("NextToken").opt_text()))
        })
        .await
    }

    /// DeleteInstances releases pay-as-you-go and *expired* subscription instances only
    /// (alibabacloud_ecs20140526 7.11.8, models/_delete_instances_request.py,
    /// `terminate_subscription`); an unexpired one is refused with `ChargeTypeViolation`. ECS's
    /// documented way out of a term early is ModifyInstanceChargeType to PostPaid (which refunds the
    /// unused part, models/_modify_instance_charge_type_request.py), so on that refusal the chunk's
    /// subscription instances are converted and the delete is sent again. Pay-as-you-go releases
    /// send exactly what they sent before: one DeleteInstances per 100 IDs.
    async fn terminate(&self, region: &str, instance_ids: &[String]) -> Result<(), CloudError> {
        for chunk in instance_ids.chunks(100) {
            let mut p = vec![kv("Force", "true"), kv("TerminateSubscription", "true")];
            p.extend(chunk.iter().enumerate().map(|(i, id)| kv(format!("InstanceId.{}", i + 1), id)));
            match self.call(region, "DeleteInstances", p.clone()).await {
                Ok(_) => {}
                Err(e) if e.code == codes::CHARGE_TYPE_VIOLATION => {
                    self.end_terms(region, chunk).await?;
                    self.call(region, "DeleteInstances", p).await?;
                }
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl Disks for Client {
    async fn disks(&self, region: &str, instance_id: &str) -> Result<Vec<(DiskKind, DiskInfo)>, CloudError> {
        // Paged by NextToken as DescribeInstances is (alibabacloud_ecs20140526 7.11.8
        // `models/_describe_disks_request.py`: PageSize is deprecated).
        let mut out = page::all(Style::NextToken, |at| async move {
            let mut p = tokened(100, at.token());
            p.push(kv("InstanceId", instance_id));
            let a = self.call(region, "DescribeDisks", p).await?;
            let items = a.get("Disks").get("Disk").items().iter().map(disk_of).collect();
            Ok(Page::tokened(items, a.get("NextToken").opt_text()))
        })
        .await?;
        system_disk_first(&mut out);
        Ok(out)
    }

    async fn snapshot(
        &self,
        region: &str,
        disk_id: &str,
        name: &str,
        client_token: &str,
    ) -> Result<String, CloudError> {
        let p = vec![kv("DiskId", disk_id), kv("SnapshotName", name), kv("ClientToken", client_token)];
        // CreateSnapshot names no region: its request model has no RegionId (alibabacloud_ecs20140526
        // 7.11.8 `models/_create_snapshot_request.py`); the disk says where, the host which region.
        let a = self.call_at(region, "CreateSnapshot", p, false).await?;
        Ok(a.get("SnapshotId").text())
    }

    async fn snapshot_state(&self, region: &str, snapshot_id: &str) -> Result<SnapshotState, CloudError> {
        let ids = serde_json::to_string(&[snapshot_id]).unwrap_or_default();
        let a = self.call(region, "DescribeSnapshots", vec![kv("SnapshotIds", ids)]).await?;
        let listed = a.listed(
            Provider::Alibaba,
            "DescribeSnapshots",
            codes::SNAPSHOT_NOT_FOUND,
            format!("snapshot {snapshot_id}"),
            a.get("Snapshots").get("Snapshot").at(0),
        )?;
        match listed.get("Status").text().as_str() {
            "accomplished" => Ok(SnapshotState::Available),
            "failed" => Ok(SnapshotState::Failed),
            _ => Ok(SnapshotState::Creating),
        }
    }
}

impl Prices for Client {
    async fn quote(&self, req: &CreateRequest) -> Result<Quote, CloudError> {
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
        let a = self.call(&req.region, "DescribePrice", p).await?;
        Ok(Quote {
            cny: a.get("PriceInfo").get("Price").get("TradePrice").f64().unwrap_or(0.0),
            per_hour: req.billing.is_per_hour(),
            request_id: a.request_id,
        })
    }

    async fn in_stock(&self, region: &str, zone: &str, instance_type: &str) -> Result<Stock, CloudError> {
        let p = vec![
            kv("DestinationResource", "InstanceType"),
            kv("ZoneId", zone),
            kv("InstanceType", instance_type),
        ];
        let a = self.call(region, "DescribeAvailableResource", p).await?;
        let sells = a
            .get("AvailableZones")
            .get("AvailableZone")
            .items()
            .iter()
            .flat_map(|z| z.get("AvailableResources").get("AvailableResource").items())
            .flat_map(|r| r.get("SupportedResources").get("SupportedResource").items())
            .any(|s| s.get("Value").value() == instance_type && s.get("Status").value() == "Available");
        Ok(Some((sells, a.request_id)))
    }
}

/// ECS key pairs, named by `KeyPairName` (alibabacloud_ecs20140526 7.11.8
/// `models/_import_key_pair_request.py`, `models/_describe_key_pairs_request.py`): RunInstances takes
/// the name, so the name is the id.
impl KeyPairs for Client {
    async fn find_key_pair(&self, region: &str, name: &str) -> Result<Option<KeyPair>, CloudError> {
        // A name without `*` is an exact match ("`SshKey`: exact match of SshKey").
        let a = self.call(region, "DescribeKeyPairs", vec![kv("KeyPairName", name)]).await?;
        let listed =
            a.get("KeyPairs").get("KeyPair").items().iter().any(|k| k.get("KeyPairName").text() == name);
        Ok(listed.then(|| KeyPair::named(name)))
    }

    async fn import_key_pair(
        &self,
        region: &str,
        name: &str,
        public_key: &str,
    ) -> Result<KeyPair, CloudError> {
        let p = vec![kv("KeyPairName", name), kv("PublicKeyBody", public_key)];
        self.call(region, "ImportKeyPair", p).await?;
        Ok(KeyPair::named(name))
    }
}

/// ECS's public images (alibabacloud_ecs20140526 7.11.8 `models/_describe_images_request.py`):
/// `ImageOwnerAlias = system` ("Images provided by Alibaba Cloud that are not published through
/// Alibaba Cloud Marketplace"), `Status` Available by default, paged by `PageNumber`/`PageSize`
/// ("Maximum value: 100"). A public image's `ImageName` is its id, so the name shown is `OSNameEn`.
impl Images for Client {
    async fn public_images(&self, region: &str) -> Result<Vec<ImageInfo>, CloudError> {
        page::all(Style::PageNumber, |at| async move {
            let p =
                vec![kv("ImageOwnerAlias", "system"), kv("PageNumber", at.number()), kv("PageSize", "100")];
            let a = self.call(region, "DescribeImages", p).await?;
            let items = a
                .get("Images")
                .get("Image")
                .items()
                .iter()
                .map(|i| {
                    let name = i.get("OSNameEn").text();
                    let (platform, created) = (i.get("Platform").text(), i.get("CreationTime").opt_text());
                    ImageInfo::new(i.get("ImageId").text(), name.clone(), platform, name, created)
                })
                .collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }

    /// CreateImage from the instance (alibabacloud_ecs20140526 7.11.8 `_create_image_request.py`:
    /// `InstanceId`, `ImageName` "2 to 128 characters ... must start with a letter", `ClientToken`,
    /// `Tag.N`): the ClientToken makes a retry answer the same image.
    async fn create_image(
        &self,
        region: &str,
        instance_id: &str,
        name: &str,
        client_token: &str,
    ) -> Result<String, CloudError> {
        let mut p = vec![
            kv("InstanceId", instance_id),
            kv("ImageName", name),
            kv("Description", "gpuctl: the environment of a validated instance, for its clones"),
            kv("ClientToken", client_token),
        ];
        p.extend(tag_params(&BTreeMap::from([("gpuctl-token".to_string(), client_token.to_string())])));
        let a = self.call(region, "CreateImage", p).await?;
        a.get("ImageId").text_required().map_err(|missing| {
            CloudError::bad_response(
                Provider::Alibaba,
                "CreateImage",
                format!("CreateImage answered without an id ({missing})"),
            )
            .with_request_id(a.request_id.clone())
        })
    }

    /// The account's image named exactly `name`, whatever its status (`Status` "Default value:
    /// Available"; `ALL` "images in all statuses"; `ImageName` is matched again here).
    async fn find_image(&self, region: &str, name: &str) -> Result<Option<String>, CloudError> {
        let p = vec![
            kv("ImageOwnerAlias", "self"),
            kv("ImageName", name),
            kv("Status", "ALL"),
            kv("PageNumber", 1),
            kv("PageSize", 100),
        ];
        let a = self.call(region, "DescribeImages", p).await?;
        Ok(a.get("Images")
            .get("Image")
            .items()
            .iter()
            .find(|i| i.get("ImageName").value() == name)
            .and_then(|i| i.get("ImageId").opt_text()))
    }

    /// `Status`: Creating, Waiting, Available, UnAvailable, CreateFailed, Deprecated.
    async fn image_state(&self, region: &str, image_id: &str) -> Result<SnapshotState, CloudError> {
        let p = vec![kv("ImageId", image_id), kv("ImageOwnerAlias", "self"), kv("Status", "ALL")];
        let a = self.call(region, "DescribeImages", p).await?;
        let listed = a.listed(
            Provider::Alibaba,
            "DescribeImages",
            "InvalidImageId.NotFound",
            format!("image {image_id}"),
            a.get("Images").get("Image").at(0),
        )?;
        match listed.get("Status").text().as_str() {
            "Available" => Ok(SnapshotState::Available),
            "Creating" | "Waiting" => Ok(SnapshotState::Creating),
            _ => Ok(SnapshotState::Failed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_filters_on_the_wire() {
        let check = |f: Filter, token, want: &[(&str, &str)]| {
            let want: Vec<(String, String)> = want.iter().map(|(k, v)| kv(*k, v)).collect();
            assert_eq!(describe_params(&f, token), want, "{f:?}");
        };
        check(
            Filter::Ids(vec!["i-1".into(), "i-2".into()]),
            None,
            &[("MaxResults", "100"), ("InstanceIds", r#"["i-1","i-2"]"#)],
        );
        check(
            Filter::Tag { key: "gpuctl-token".into(), value: "t1".into() },
            None,
            &[("MaxResults", "100"), ("Tag.1.Key", "gpuctl-token"), ("Tag.1.Value", "t1")],
        );
        check(
            Filter::TagKey("gpuctl-deployment".into()),
            Some("tok-2"),
            &[("MaxResults", "100"), ("NextToken", "tok-2"), ("Tag.1.Key", "gpuctl-deployment")],
        );
    }

    #[test]
    fn launch_time_is_read_from_creation_time() {
        let v = serde_json::json!({ "InstanceId": "i-1", "CreationTime": "2026-11-30T08:00Z" });
        let i = instance_of(&Field::root("", &v));
        assert_eq!(i.launched_at.as_deref(), Some("2026-11-30T08:00:00Z"));
        let v = serde_json::json!({ "InstanceId": "i-1", "CreationTime": "yesterday" });
        assert_eq!(instance_of(&Field::root("", &v)).launched_at, None);
    }
}
