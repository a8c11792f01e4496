//! What outlives instances (issue 15): ECS `DeleteDisk`, VPC's elastic IPs (`DescribeEipAddresses`,
//! `ReleaseEipAddress`) and the admin API's planting. Parameters and fields follow
//! alibabacloud_ecs20140526 7.11.8 `models/_delete_disk_request.py` and alibabacloud_vpc20160428 7.2.2
//! `models/_describe_eip_addresses_{request,response_body}.py`, `_release_eip_address_request.py`.
//!
//! gpuctl allocates no EIP on Alibaba (an instance's public IP goes with it), so an EIP here is one a
//! test planted: bound to an instance (`InUse`) or to nothing (`Available`). It outlives its instance
//! unbound, as an EIP does. *Assumption:* the status words `Available` / `InUse` are not in the
//! models' text (their "Valid values" lists are cut); they are the EIP console's words
//! (docs/research/cost-control.md §4 marks them unverified).

use gpuctl_simkit::{Plant, PlantKind, SimCtx};
use jiff::Timestamp;
use serde::Serialize;
use serde_json::{json, Value};

use super::{region, tags_json, tags_match, Answer, Call};
use crate::api::{codes, format_time};
use crate::emulator::error::EcsError;
use crate::emulator::params::EcsParams;
use crate::emulator::state::{Disk, EcsState, FileSystem, Snapshot};

/// An elastic IP (VPC `EipAddress`).
#[derive(Clone, Debug, Serialize)]
pub struct Eip {
    pub id: String,
    pub region: String,
    pub address: String,
    pub name: String,
    pub instance_id: Option<String>,
    /// `InternetChargeType`: PayByBandwidth or PayByTraffic.
    pub internet_charge_type: String,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
}

fn eip_status(e: &Eip) -> &'static str {
    if e.instance_id.is_some() {
        "InUse"
    } else {
        "Available"
    }
}

/// `PageSize`: "Maximum value: **100**. Default value: **10**"; `PageNumber` "Default value: **1**".
pub fn describe_eip_addresses(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let status = c.p.text("Status");
    let id = c.p.text("AllocationId");
    let address = c.p.text("EipAddress");
    let instance = c.p.text("AssociatedInstanceId");
    let tags = c.p.tags("Tag");
    if tags.len() > 20 {
        return Err(EcsError::new(400, codes::INVALID_PARAMETER, "At most 20 Tag.N are accepted."));
    }
    let w = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=100)?;
    let matching = st
        .eips
        .values()
        .filter(|e| e.region == region)
        .filter(|e| status.as_ref().is_none_or(|s| s == eip_status(e)))
        .filter(|e| id.as_ref().is_none_or(|i| *i == e.id))
        .filter(|e| address.as_ref().is_none_or(|a| *a == e.address))
        .filter(|e| instance.as_ref().is_none_or(|i| e.instance_id.as_ref() == Some(i)))
        .filter(|e| tags_match(&e.tags, &tags));
    let (total, page) = w.apply(matching);
    Ok(json!({
        "EipAddresses": { "EipAddress": page.iter().map(|e| json!({
            "AllocationId": e.id,
            "IpAddress": e.address,
            "Name": e.name,
            "RegionId": e.region,
            "Status": eip_status(e),
            "InstanceId": e.instance_id.clone().unwrap_or_default(),
            "InstanceType": if e.instance_id.is_some() { "EcsInstance" } else { "" },
            "InternetChargeType": e.internet_charge_type,
            "ChargeType": "PostPaid",
            "Bandwidth": "1",
            "AllocationTime": format_time(e.created),
            "Tags": { "Tag": e.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>() },
        })).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": w.number(),
        "PageSize": w.size(),
    }))
}

/// ReleaseEipAddress (`AllocationId` required). *Assumption:* the refusals are VPC's error-centre codes
/// (the models carry none): a bound EIP `IncorrectEipStatus`, an unknown one `InvalidAllocationId.NotFound`.
pub fn release_eip_address(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let id = c.p.required("AllocationId")?;
    let e = st.eips.get(&id).filter(|e| e.region == region).ok_or_else(|| {
        EcsError::new(
            404,
            codes::EIP_NOT_FOUND,
            format!("The specified AllocationId \"{id}\" does not exist."),
        )
    })?;
    if e.instance_id.is_some() {
        return Err(EcsError::new(
            400,
            codes::INCORRECT_EIP_STATUS,
            format!("The EIP {id} is {}; unassociate it before releasing it.", eip_status(e)),
        ));
    }
    if let Some(e) = st.eips.remove(&id) {
        st.addresses.release(&e.address);
    }
    Ok(json!({}))
}

/// DeleteDisk (`DiskId` required: "The ID of the disk to be released"). *Assumption:* an attached disk
/// is ECS's `IncorrectDiskStatus` (the error centre's code; the model carries none).
pub fn delete_disk(c: &Call, st: &mut EcsState) -> Answer {
    let id = c.p.required("DiskId")?;
    let d = st.disks.get(&id).ok_or_else(|| {
        EcsError::new(404, codes::DISK_NOT_FOUND, format!("The specified DiskId \"{id}\" does not exist."))
    })?;
    if d.instance_id.as_ref().is_some_and(|i| st.instances.contains_key(i)) {
        return Err(EcsError::new(
            403,
            codes::INCORRECT_DISK_STATUS,
            format!("The current status of disk {id} (In_use) does not support this operation."),
        ));
    }
    st.disks.remove(&id);
    Ok(json!({}))
}

/// Makes what the admin API's `POST /_sim/plant` asks for (see `gpuctl_simkit::plant`).
pub(crate) fn plant(st: &mut EcsState, p: &Plant, ctx: &SimCtx) -> Result<String, String> {
    if !ctx.regions(crate::emulator::PROVIDER).contains(&p.region) {
        return Err(format!("no region {} on Alibaba", p.region));
    }
    let created = p.created.unwrap_or(ctx.now());
    let attached = match &p.attached_to {
        None => None,
        Some(i) if st.instances.get(i).is_some_and(|x| x.region == p.region) => Some(i.clone()),
        Some(i) => return Err(format!("no Alibaba instance {i} in {}", p.region)),
    };
    let zone = p.zone.clone().unwrap_or_else(|| format!("{}-a", p.region));
    match p.kind {
        PlantKind::Disk => {
            let id = ctx.new_id("d-", 20);
            st.disks.insert(
                id.clone(),
                Disk {
                    id: id.clone(),
                    region: p.region.clone(),
                    zone,
                    instance_id: attached,
                    kind: "data",
                    category: p.class.clone().unwrap_or_else(|| "cloud_essd".into()),
                    size_gib: p.size_or(20),
                    device: "/dev/xvdz".into(),
                    image_id: String::new(),
                    source_snapshot_id: String::new(),
                    created,
                    delete_with_instance: false,
                    auto_snapshot_policy_id: None,
                    charge_type: "PostPaid".into(),
                    name: p.name.clone().unwrap_or_default(),
                    tags: p.tag_pairs(),
                },
            );
            Ok(id)
        }
        PlantKind::PublicIp => {
            let address = st.addresses.assign().ok_or("the address pool is exhausted")?;
            let id = ctx.new_id("eip-", 20);
            st.eips.insert(
                id.clone(),
                Eip {
                    id: id.clone(),
                    region: p.region.clone(),
                    address,
                    name: p.name.clone().unwrap_or_default(),
                    instance_id: attached,
                    internet_charge_type: p.class.clone().unwrap_or_else(|| "PayByTraffic".into()),
                    tags: p.tag_pairs(),
                    created,
                },
            );
            Ok(id)
        }
        PlantKind::Snapshot => {
            let disk = p.disk_id.as_ref().and_then(|d| st.disks.get(d));
            let id = ctx.new_id("s-", 20);
            let snap = Snapshot {
                id: id.clone(),
                region: p.region.clone(),
                name: p.name.clone().unwrap_or_default(),
                description: String::new(),
                disk_id: p.disk_id.clone().unwrap_or_else(|| ctx.new_id("d-", 20)),
                disk_size_gib: disk.map_or(p.size_or(20), |d| d.size_gib),
                disk_kind: "Data",
                created,
                retention_days: None,
                snapshot_type: "user",
                tags: p.tag_pairs(),
                used_by_images: Vec::new(),
            };
            st.snapshots.insert(id.clone(), snap);
            Ok(id)
        }
        PlantKind::FileSystem => {
            let id = ctx.new_id("", 10);
            st.file_systems.insert(
                id.clone(),
                FileSystem {
                    id: id.clone(),
                    region: p.region.clone(),
                    zone,
                    fs_type: "standard".into(),
                    protocol_type: "NFS".into(),
                    storage_type: p.class.clone().unwrap_or_else(|| "Capacity".into()),
                    description: p.name.clone().unwrap_or_default(),
                    tags: p.tag_pairs(),
                    created,
                    deleted: None,
                    mount_targets: Vec::new(),
                    metered_bytes: p.size_or(20) << 30,
                },
            );
            Ok(id)
        }
    }
}

/// The EIPs for `/_sim/state`: every one held (and billed), bound or not.
pub(crate) fn eips_json(st: &EcsState) -> Value {
    json!(st
        .eips
        .values()
        .map(|e| json!({
            "AllocationId": e.id, "RegionId": e.region, "IpAddress": e.address, "Status": eip_status(e),
            "InstanceId": e.instance_id, "Tags": tags_json(&e.tags),
        }))
        .collect::<Vec<_>>())
}
