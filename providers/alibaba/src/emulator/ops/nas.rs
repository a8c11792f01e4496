//! NAS (API 2017-06-26, issue 14): CreateFileSystem, DescribeFileSystems, DeleteFileSystem,
//! CreateMountTarget, DescribeMountTargets, DeleteMountTarget, for `standard` (General-purpose) NFS
//! file systems. Parameter names and rules are alibabacloud_nas20170626 3.7.5's request models
//! (`alibabacloud_nas20170626/models/_<action>_request.py`); statuses and error codes are those
//! docs/research/clusters.md §2 collects (see `crate::api::nas`).
//!
//! NAS takes no `RegionId`: the region is the host's (`nas.<region>.aliyuncs.com`). Behind the local
//! cloud's one address the host names no region, so a request's region is the host's when it names
//! one, else the `ZoneId`'s, else (a listing) every region's, else (a create without a zone) the
//! first region the local cloud sells in.

use serde_json::{json, Value};

use super::{tags_match, token_check, token_remember, Answer, Call};
use crate::api::nas::{
    codes as nas, DEFAULT_ACCESS_GROUP, FS_RUNNING, FS_TYPE_STANDARD, NETWORK_VPC, PAGE_MAX,
    STANDARD_STORAGE_TYPES,
};
use crate::api::{codes, format_time};
use crate::emulator::error::EcsError;
use crate::emulator::params::EcsParams;
use crate::emulator::state::{EcsState, FileSystem, MountTarget, Timings};
use crate::emulator::PROVIDER;

const CREATE: &str = "CreateFileSystem";

/// The zones of every region the local cloud sells in, as (region, zone).
fn zones(c: &Call) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> =
        c.ctx.offers(PROVIDER).flat_map(|o| o.zones.iter().map(|z| (o.region.clone(), z.clone()))).collect();
    out.sort();
    out.dedup();
    out
}

fn invalid(name: &str, why: &str) -> EcsError {
    EcsError::new(
        400,
        codes::INVALID_PARAMETER,
        format!("The specified parameter \"{name}\" is not valid: {why}."),
    )
}

fn fs_not_found(id: &str) -> EcsError {
    EcsError::new(
        404,
        nas::FILE_SYSTEM_NOT_FOUND,
        format!("The specified file system \"{id}\" does not exist."),
    )
}

/// The file system `id` of the account, where the host's region (if it names one) holds it.
fn file_system<'a>(
    st: &'a EcsState,
    host_region: Option<&str>,
    id: &str,
) -> Result<&'a FileSystem, EcsError> {
    st.file_systems
        .get(id)
        .filter(|f| host_region.is_none_or(|r| r == f.region))
        .ok_or_else(|| fs_not_found(id))
}

/// `Description`: "2 to 128 characters in length. It must start with a letter and cannot start with
/// `http://` or `https://`. It can contain digits, colons (:), underscores (_), and hyphens (-)"
/// (`_create_file_system_request.py`). No code is documented for a bad one: the generic 400
/// `InvalidParameter`.
fn description_ok(d: &str) -> bool {
    let n = d.chars().count();
    (2..=128).contains(&n)
        && d.chars().next().is_some_and(|c| c.is_alphabetic())
        && !d.starts_with("http://")
        && !d.starts_with("https://")
        && d.chars().all(|c| c.is_alphanumeric() || matches!(c, ':' | '_' | '-'))
}

pub fn create_file_system(c: &Call, st: &mut EcsState, host_region: Option<&str>) -> Answer {
    // "FileSystemType ... standard: General-purpose NAS file system. This is the default value." The
    // local cloud makes standard file systems only; the other types need a capacity, a VPC and
    // more that gpuctl never sends.
    let fs_type = c.p.text("FileSystemType").unwrap_or_else(|| FS_TYPE_STANDARD.into());
    if fs_type != FS_TYPE_STANDARD {
        return Err(invalid("FileSystemType", "the local cloud makes `standard` file systems only"));
    }
    // `ProtocolType` and `StorageType` are required (the schema answers MissingParameter first);
    // standard: ProtocolType "valid values are NFS and SMB"; StorageType "valid values are
    // Performance, Capacity, Premium, and Agentic", else 400 `InvalidParameter.StorageType` (the NAS
    // error centre: "StorageType must be Performance or Capacity").
    let protocol = c.p.required("ProtocolType")?;
    if !["NFS", "SMB"].contains(&protocol.as_str()) {
        return Err(invalid("ProtocolType", "a standard file system takes NFS or SMB"));
    }
    let storage = c.p.required("StorageType")?;
    if !STANDARD_STORAGE_TYPES.contains(&storage.as_str()) {
        return Err(EcsError::new(
            400,
            nas::INVALID_STORAGE_TYPE,
            format!(
                "The specified StorageType \"{storage}\" is not valid for a standard file system: {}.",
                STANDARD_STORAGE_TYPES.join(", ")
            ),
        ));
    }
    let description = c.p.text("Description").unwrap_or_default();
    if !description.is_empty() && !description_ok(&description) {
        return Err(invalid(
            "Description",
            "2 to 128 characters, starting with a letter; letters, digits, `:`, `_` and `-`",
        ));
    }
    // `Tag`: "Array length: 1 to 20. If the array contains multiple tag objects, the tag keys must be
    // unique." No code is documented: the generic 400 `InvalidParameter`.
    let tags = c.p.tags("Tag");
    let mut keys: Vec<&str> = tags.iter().map(|(k, _)| k.as_str()).collect();
    keys.sort_unstable();
    keys.dedup();
    if tags.len() > 20 || keys.len() != tags.len() {
        return Err(invalid("Tag", "at most 20 tags, each key once"));
    }
    // `ZoneId` "optional ... By default, a zone that meets the conditional requirements is randomly
    // selected": the local cloud takes the region's first zone.
    let all = zones(c);
    let (region, zone) = match c.p.text("ZoneId") {
        Some(z) => all
            .into_iter()
            .find(|(r, zone)| *zone == z && host_region.is_none_or(|h| h == r))
            .ok_or_else(|| {
                EcsError::new(
                    404,
                    codes::ZONE_NOT_FOUND,
                    format!("The specified ZoneId \"{z}\" does not exist."),
                )
            })?,
        None => all.into_iter().find(|(r, _)| host_region.is_none_or(|h| h == r)).ok_or_else(|| {
            EcsError::new(404, codes::REGION_NOT_FOUND, "The local cloud sells NAS in no such region.")
        })?,
    };
    // `ClientToken` "ensure the idempotence of the request"; `DryRun` "true: performs a dry run
    // without creating the instance" and answers with an empty FileSystemId (research §2).
    if let Some(replay) = token_check(st, CREATE, c)? {
        return Ok(replay);
    }
    if c.p.opt_bool("DryRun")?.unwrap_or(false) {
        return Ok(json!({ "FileSystemId": "" }));
    }
    let id = c.ctx.new_id("", 10);
    st.file_systems.insert(
        id.clone(),
        FileSystem {
            id: id.clone(),
            region,
            zone,
            fs_type,
            protocol_type: protocol,
            storage_type: storage,
            description,
            tags,
            created: c.now,
            deleted: None,
            mount_targets: Vec::new(),
            metered_bytes: 0,
        },
    );
    let answer = json!({ "FileSystemId": id });
    token_remember(st, CREATE, c, &answer);
    Ok(answer)
}

/// A mount target as DescribeMountTargets lists it (`AccessGroup`, `IPVersion`:
/// `_describe_mount_targets_response_body.py`) or as DescribeFileSystems nests it (`AccessGroupName`:
/// `_describe_file_systems_response_body.py`).
fn mount_target_json(m: &MountTarget, now: jiff::Timestamp, t: &Timings, nested: bool) -> Value {
    let mut v = json!({
        "MountTargetDomain": m.domain,
        "DualStackMountTargetDomain": "",
        "Status": m.status(now, t),
        "NetworkType": NETWORK_VPC,
        "VpcId": m.vpc_id,
        "VswId": m.vswitch_id,
        "Tags": { "Tag": [] },
        "ClientMasterNodes": { "ClientMasterNode": [] },
    });
    if nested {
        v["AccessGroupName"] = json!(m.access_group);
    } else {
        v["AccessGroup"] = json!(m.access_group);
        v["IPVersion"] = json!("IPv4");
    }
    v
}

/// A file system as DescribeFileSystems shows it (`_describe_file_systems_response_body.py`).
pub(crate) fn file_system_json(f: &FileSystem, now: jiff::Timestamp, t: &Timings) -> Value {
    json!({
        "FileSystemId": f.id,
        "Description": f.description,
        "Status": f.status(now, t),
        "RegionId": f.region,
        "ZoneId": f.zone,
        "FileSystemType": f.fs_type,
        "ProtocolType": f.protocol_type,
        "StorageType": f.storage_type,
        "ChargeType": "PayAsYouGo",
        "CreateTime": format_time(f.created),
        "MeteredSize": f.metered_bytes,
        "Capacity": 0,
        "EncryptType": 0,
        "MountTargets": { "MountTarget": f.mount_targets.iter().map(|m| mount_target_json(m, now, t, true)).collect::<Vec<_>>() },
        "Tags": { "Tag": f.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>() },
    })
}

/// All optional: `FileSystemId`, `FileSystemType` ("all (default) ... separate them with commas"),
/// `VpcId`, `Tag`, `PageNumber` (default 1), `PageSize` ("Valid values: 1 to 100. Default value: 10"):
/// `_describe_file_systems_request.py`. A `FileSystemId` the account does not hold lists nothing.
pub fn describe_file_systems(c: &Call, st: &EcsState, host_region: Option<&str>) -> Answer {
    let id = c.p.text("FileSystemId");
    let types = c.p.text("FileSystemType").unwrap_or_else(|| "all".into());
    let types: Vec<&str> = types.split(',').map(str::trim).collect();
    let vpc = c.p.text("VpcId");
    let tags = c.p.tags("Tag");
    let w = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=i64::from(PAGE_MAX))?;
    let matching = st
        .file_systems
        .values()
        .filter(|f| host_region.is_none_or(|r| r == f.region))
        .filter(|f| id.as_ref().is_none_or(|i| *i == f.id))
        .filter(|f| types.contains(&"all") || types.contains(&f.fs_type.as_str()))
        .filter(|f| vpc.as_ref().is_none_or(|v| f.mount_targets.iter().any(|m| m.vpc_id == *v)))
        .filter(|f| tags_match(&f.tags, &tags));
    let (total, page) = w.apply(matching);
    Ok(json!({
        "FileSystems": { "FileSystem": page.iter().map(|f| file_system_json(f, c.now, &c.timings)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": w.number(),
        "PageSize": w.size(),
    }))
}

/// `FileSystemId` is required (the schema). A file system that still has mount targets is refused:
/// whether NAS does so, and with which code, is *unverified* (research §2; the ENS NAS API's
/// `Nas.Mount.Tatget.Entity.Not.Null` points the same way), so the NAS error centre's 403
/// `Instance.IncorrectStatus` is answered. The file system is then `Pending` for a while and gone.
pub fn delete_file_system(c: &Call, st: &mut EcsState, host_region: Option<&str>) -> Answer {
    let id = c.p.required("FileSystemId")?;
    let f = file_system(st, host_region, &id)?;
    if !f.mount_targets.is_empty() {
        return Err(EcsError::new(
            403,
            nas::INCORRECT_STATUS,
            format!(
                "The file system {id} still has {} mount target(s): delete them first.",
                f.mount_targets.len()
            ),
        ));
    }
    if let Some(f) = st.file_systems.get_mut(&id) {
        f.deleted.get_or_insert(c.now);
    }
    Ok(json!({}))
}

/// `FileSystemId` and `NetworkType` are required (the schema); `NetworkType` "Set the value to
/// **Vpc**"; `VpcId` and `VSwitchId` "required ... when the network type is VPC" (400
/// `MissingParameter.VpcId` / `MissingParameter.VSwitchId`, the NAS error centre); `AccessGroupName`
/// "required if the file system is a General-purpose NAS file system" (no code documented: 400
/// `MissingParameter`), and a group the account does not have is 404 `InvalidAccessGroup.NotFound`
/// (the local cloud has the default group only: "Default permission group: DEFAULT_VPC_GROUP_NAME");
/// a file system not `Running` yet is 403 `Instance.IncorrectStatus` (*unverified* pairing, research
/// §6). The vSwitch must be one the account holds, in the VPC named (the VPC API's codes). The mount
/// target starts `Pending` and is `Active` a little later (`Timings::mount_target`). CreateMountTarget
/// takes no ClientToken.
pub fn create_mount_target(c: &Call, st: &mut EcsState, host_region: Option<&str>) -> Answer {
    let id = c.p.required("FileSystemId")?;
    let network = c.p.required("NetworkType")?;
    if network != NETWORK_VPC {
        return Err(invalid("NetworkType", "set the value to Vpc"));
    }
    let vpc = c.p.text("VpcId").ok_or_else(|| {
        EcsError::new(
            400,
            nas::MISSING_VPC_ID,
            "The input parameter \"VpcId\" that is mandatory for a VPC mount target is not supplied.",
        )
    })?;
    let vsw = c.p.text("VSwitchId").ok_or_else(|| {
        EcsError::new(
            400,
            nas::MISSING_VSWITCH_ID,
            "The input parameter \"VSwitchId\" that is mandatory for a VPC mount target is not supplied.",
        )
    })?;
    let f = file_system(st, host_region, &id)?;
    let group = c.p.text("AccessGroupName").ok_or_else(|| {
        EcsError::new(400, codes::MISSING_PARAMETER, "The input parameter \"AccessGroupName\" that is mandatory for a General-purpose NAS file system is not supplied.")
    })?;
    if group != DEFAULT_ACCESS_GROUP {
        return Err(EcsError::new(
            404,
            nas::ACCESS_GROUP_NOT_FOUND,
            format!("The specified access group \"{group}\" does not exist."),
        ));
    }
    if f.status(c.now, &c.timings) != FS_RUNNING {
        return Err(EcsError::new(
            403,
            nas::INCORRECT_STATUS,
            format!("The file system {id} is not Running yet."),
        ));
    }
    let Some(v) = super::vpc::vswitches(c.ctx, st, &f.region).into_iter().find(|v| v.id == vsw) else {
        return Err(EcsError::new(
            404,
            "InvalidVSwitchId.NotFound",
            format!("The specified vSwitch \"{vsw}\" does not exist."),
        ));
    };
    if v.vpc_id != vpc {
        return Err(EcsError::new(
            400,
            "InvalidParameter.Mismatch",
            format!("The vSwitch {vsw} is not in VPC {vpc}."),
        ));
    }
    let domain = format!("{id}-{}.{}.nas.aliyuncs.com", c.ctx.new_id("", 5), f.region);
    let m = MountTarget {
        domain: domain.clone(),
        vpc_id: vpc,
        vswitch_id: vsw,
        access_group: group,
        created: c.now,
    };
    if let Some(f) = st.file_systems.get_mut(&id) {
        f.mount_targets.push(m);
    }
    Ok(json!({ "MountTargetDomain": domain, "MountTargetExtra": { "DualStackMountTargetDomain": "" } }))
}

/// `FileSystemId` is required (the schema); `MountTargetDomain` filters; `PageSize` "Valid values:
/// 1 to 100. Default value: 10" (`_describe_mount_targets_request.py`).
pub fn describe_mount_targets(c: &Call, st: &EcsState, host_region: Option<&str>) -> Answer {
    let id = c.p.required("FileSystemId")?;
    let f = file_system(st, host_region, &id)?;
    let domain = c.p.text("MountTargetDomain");
    let w = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=i64::from(PAGE_MAX))?;
    let (total, page) =
        w.apply(f.mount_targets.iter().filter(|m| domain.as_ref().is_none_or(|d| *d == m.domain)));
    Ok(json!({
        "MountTargets": { "MountTarget": page.iter().map(|m| mount_target_json(m, c.now, &c.timings, false)).collect::<Vec<_>>() },
        "TotalCount": total,
        "PageNumber": w.number(),
        "PageSize": w.size(),
    }))
}

/// `FileSystemId` and `MountTargetDomain` are required (the schema); "After you delete a mount
/// target, the mount target cannot be restored." An unknown domain: 404
/// `InvalidMountTarget.NotFound` (*unverified* spelling).
pub fn delete_mount_target(c: &Call, st: &mut EcsState, host_region: Option<&str>) -> Answer {
    let id = c.p.required("FileSystemId")?;
    let domain = c.p.required("MountTargetDomain")?;
    file_system(st, host_region, &id)?;
    let f = st.file_systems.get_mut(&id).ok_or_else(|| fs_not_found(&id))?;
    let before = f.mount_targets.len();
    f.mount_targets.retain(|m| m.domain != domain);
    if f.mount_targets.len() == before {
        return Err(EcsError::new(
            404,
            nas::MOUNT_TARGET_NOT_FOUND,
            format!("The specified mount target \"{domain}\" does not exist."),
        ));
    }
    Ok(json!({}))
}
