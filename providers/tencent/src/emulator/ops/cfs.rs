//! CFS operations (issue 14): CreateCfsFileSystem, DescribeCfsFileSystems, DescribeMountTargets,
//! DeleteCfsFileSystem. Parameters, fields and states: tccli 3.1.189.1
//! `tccli/services/cfs/v20190719/api.json`; error codes tencentcloud-sdk-python-cfs 3.1.178
//! `tencentcloud/cfs/v20190719/errorcodes.py`, tied to each action by the Go SDK's per-action lists
//! (TencentCloud/tencentcloud-sdk-go @ 144f6c8d39e4 `tencentcloud/cfs/v20190719/client.go`), as
//! docs/research/clusters.md §2 gathers them.
//!
//! A file system is made with its one mount target, in the subnet it names (v20190719 has no
//! CreateMountTarget): both are `creating`, then `available` a boot time later (the mount target half a
//! boot time after its file system). The emulator models the default permission group and VPC
//! networks only.

use std::net::Ipv4Addr;

use gpuctl_simkit::idem::defining;
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use crate::api::cfs::{
    CLIENT_TOKEN_HOURS, DEFAULT_PGROUP, FS_NAME_MAX, NET_INTERFACES, PROTOCOLS, STORAGE_TYPES,
};
use crate::api::{codes, CLIENT_TOKEN_MAX};
use crate::emulator::error::{Result, TcError};
use crate::emulator::p::{filters, P};
use crate::emulator::state::{cbs_time, State};
use crate::emulator::{Call, PROVIDER};

#[derive(Clone, Debug)]
pub(crate) struct CfsFileSystem {
    pub id: String,
    pub region: String,
    pub zone: String,
    pub name: String,
    pub protocol: String,
    pub storage_type: String,
    pub vpc_id: String,
    pub subnet_id: String,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
    pub ready_at: Timestamp,
    pub mount_id: String,
    pub mount_ip: String,
    pub mount_ready_at: Timestamp,
    /// Set by DeleteCfsFileSystem: `deleting` for a boot time, then gone with its mount target.
    pub deleting_since: Option<Timestamp>,
    /// CreateCfsFileSystem's `ClientToken`, answered as `CreationToken` (the name when there is none).
    pub token: Option<String>,
    /// `SizeByte` ("文件系统已使用容量"): 0 for one gpuctl made (nothing writes to it here), what a
    /// test planted otherwise.
    pub used_bytes: i64,
}

impl CfsFileSystem {
    /// `deleting` once deleted, else `available` from `ready_at` on and `creating` before.
    fn life(&self, now: Timestamp, ready_at: Timestamp) -> &'static str {
        match self.deleting_since {
            Some(_) => "deleting",
            None if now >= ready_at => "available",
            None => "creating",
        }
    }

    /// FileSystemInfo.LifeCycleState (creating, available; deleting from the filter list).
    pub fn state(&self, now: Timestamp) -> &'static str {
        self.life(now, self.ready_at)
    }

    /// MountInfo.LifeCycleState: "creating：创建中；available：运行中；deleting：删除中".
    fn mount_state(&self, now: Timestamp) -> &'static str {
        self.life(now, self.mount_ready_at)
    }
}

/// A ClientToken as CreateCfsFileSystem remembers it: the request's defining parameters, the file
/// system it made, and when ("用于保证请求幂等性的字符串失效时间为2小时").
#[derive(Clone, Debug)]
pub(crate) struct CfsToken {
    pub params: Value,
    pub fs_id: String,
    pub at: Timestamp,
}

fn err(code: &'static str, msg: impl Into<String>) -> TcError {
    TcError::new(code, msg)
}

/// `value` of `field` when it is one of `allowed` (the enums CreateCfsFileSystemRequest lists), else
/// `code`, the action's own code for that parameter.
fn one_of(value: String, field: &str, allowed: &[&str], code: &'static str) -> Result<String> {
    if allowed.contains(&value.as_str()) {
        return Ok(value);
    }
    Err(err(code, format!("{field} `{value}` is not one of {}.", allowed.join(", "))))
}

/// The `ClientToken` rules: at most 64 characters (`ClientTokenLimitExceeded`, "不能超过64字节") and
/// ASCII ("最大值不超过64个ASCII字符"; anything else `InvalidClientToken`).
fn client_token(v: &P) -> Result<Option<String>> {
    let Some(t) = v.opt_str("ClientToken")?.filter(|t| !t.is_empty()) else { return Ok(None) };
    if t.len() > CLIENT_TOKEN_MAX {
        return Err(err(
            codes::CFS_CLIENT_TOKEN_TOO_LONG,
            format!("ClientToken is {} bytes; at most {CLIENT_TOKEN_MAX} are accepted.", t.len()),
        ));
    }
    if !t.is_ascii() {
        return Err(err(codes::CFS_INVALID_CLIENT_TOKEN, "ClientToken must be ASCII."));
    }
    Ok(Some(t))
}

/// The network the mount target goes in: "若网络类型选择的是VPC，该字段为必填" (VpcId, SubnetId). A VPC
/// or subnet this emulator made must exist and belong together; the account's default network
/// (`vpc-default0` / `subnet-default0`) is there when the zone has one.
fn network(
    state: &State,
    call: &Call,
    v: &P,
    zone: &str,
) -> Result<(String, String, Option<gpuctl_simkit::Cidr>)> {
    let vpc = v.opt_str("VpcId")?.filter(|s| !s.is_empty());
    let subnet = v.opt_str("SubnetId")?.filter(|s| !s.is_empty());
    let Some(vpc) = vpc else {
        return Err(err(codes::CFS_MISSING_VPC_ID, "NetInterface VPC needs VpcId."));
    };
    let Some(subnet) = subnet else {
        return Err(err(codes::CFS_MISSING_SUBNET_ID, "NetInterface VPC needs SubnetId."));
    };
    if call.ctx.has_default_network(PROVIDER, zone) && vpc == "vpc-default0" {
        if subnet != "subnet-default0" {
            return Err(err(codes::CFS_INVALID_SUBNET_ID, format!("The subnet `{subnet}` does not exist.")));
        }
        return Ok((vpc, subnet, None));
    }
    if !state.vpcs.iter().any(|x| x.region == call.region && x.id == vpc) {
        return Err(err(codes::CFS_INVALID_VPC_ID, format!("The VPC `{vpc}` does not exist.")));
    }
    let Some(s) = state.subnets.iter().find(|s| s.region == call.region && s.id == subnet) else {
        return Err(err(codes::CFS_INVALID_SUBNET_ID, format!("The subnet `{subnet}` does not exist.")));
    };
    // VPC参数错误 (InvalidVpcParameter) for a subnet of another VPC *(inferred: the code is the action's,
    // the case is ours)*.
    if s.vpc_id != vpc {
        return Err(err(
            codes::CFS_INVALID_VPC_PARAMETER,
            format!("The subnet `{subnet}` is not in VPC `{vpc}`."),
        ));
    }
    Ok((vpc, subnet, Some(s.cidr)))
}

/// The mount target's address: `MountIP` ("指定IP地址，仅VPC网络支持；若不填写、将在该子网下随机分配 IP")
/// inside the subnet (`InvalidMountTargetIp`, 错误的挂载点IP), else the next free one.
fn mount_ip(state: &State, v: &P, cidr: Option<gpuctl_simkit::Cidr>) -> Result<String> {
    let n = state.file_systems.len() as u32;
    let Some(asked) = v.opt_str("MountIP")? else {
        return Ok(match cidr {
            // In the upper half of the subnet: instances take addresses from the bottom.
            Some(c) => {
                let half = (c.size().min(1 << 16) as u32 / 2).max(2);
                Ipv4Addr::from(c.base.wrapping_add(half + n % (half - 1))).to_string()
            }
            None => format!("10.0.250.{}", n % 250 + 2),
        });
    };
    let inside = asked.parse::<Ipv4Addr>().ok().is_some_and(|ip| {
        cidr.is_none_or(|c| c.contains(&gpuctl_simkit::Cidr { base: u32::from(ip), len: 32 }))
    });
    if !inside || state.file_systems.iter().any(|f| f.mount_ip == asked && f.deleting_since.is_none()) {
        return Err(err(
            "InvalidParameterValue.InvalidMountTargetIp",
            format!("MountIP `{asked}` is not a free address of the subnet."),
        ));
    }
    Ok(asked)
}

/// ResourceTags: `TagKey` and `TagValue` both required (the schema), "标签键不能为空" (InvalidTagKey),
/// "标签值为空或字符无效" (InvalidTagValue), "标签键重复" (DuplicatedTagKey).
fn resource_tags(v: &P) -> Result<Vec<(String, String)>> {
    let mut out: Vec<(String, String)> = Vec::new();
    for t in v.obj_list("ResourceTags")? {
        let (key, value) = (t.req_str("TagKey")?, t.req_str("TagValue")?);
        if key.is_empty() {
            return Err(err("InvalidParameterValue.InvalidTagKey", "A TagKey is empty."));
        }
        if value.is_empty() {
            return Err(err(
                "InvalidParameterValue.InvalidTagValue",
                format!("The value of tag `{key}` is empty."),
            ));
        }
        if out.iter().any(|(k, _)| *k == key) {
            return Err(err(codes::CFS_DUPLICATED_TAG_KEY, format!("The tag key `{key}` is given twice.")));
        }
        out.push((key, value));
    }
    Ok(out)
}

/// Turbo types need `Capacity`: "Turbo标准型起售20TiB，即20480 GiB，扩容步长10TiB，即10240 GiB。Turbo性能型起售
/// 10TiB，即10240 GiB，扩容步长10TiB" (InvalidTurboCapacity, 无效的容量值). The others ignore it.
fn turbo_capacity(v: &P, storage_type: &str) -> Result<()> {
    let least = match storage_type {
        "TB" => 20480,
        "TP" => 10240,
        _ => return Ok(()),
    };
    match v.opt_i64("Capacity")? {
        Some(c) if c >= least && c % 10240 == 0 => Ok(()),
        other => Err(err(
            codes::CFS_INVALID_TURBO_CAPACITY,
            format!("StorageType {storage_type} needs Capacity from {least} GiB in steps of 10240, not {other:?}."),
        )),
    }
}

fn fs_json(f: &CfsFileSystem, now: Timestamp) -> Value {
    json!({
        "CreationTime": cbs_time(f.created),
        "CreationToken": f.token.clone().unwrap_or_else(|| f.name.clone()),
        "FileSystemId": f.id,
        "LifeCycleState": f.state(now),
        "SizeByte": f.used_bytes,
        "SizeLimit": 1_000_000,
        "Zone": f.zone,
        "Protocol": f.protocol,
        "StorageType": f.storage_type,
        "PGroup": { "PGroupId": DEFAULT_PGROUP, "Name": "默认权限组" },
        "FsName": f.name,
        "Encrypted": false,
        "Tags": f.tags.iter().map(|(k, v)| json!({ "TagKey": k, "TagValue": v })).collect::<Vec<_>>(),
    })
}

/// What CreateCfsFileSystem answers (CreateCfsFileSystemResponse).
fn created_json(f: &CfsFileSystem, now: Timestamp) -> Value {
    let full = fs_json(f, now);
    json!({
        "CreationTime": full["CreationTime"], "CreationToken": full["CreationToken"], "FileSystemId": f.id,
        "LifeCycleState": full["LifeCycleState"], "SizeByte": 0, "FsName": f.name, "Encrypted": false,
    })
}

pub(crate) fn create_cfs_file_system(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let now = call.ctx.now();
    let token = client_token(&v)?;
    // The same token within 2 hours answers the file system it made; with other parameters it is
    // `InvalidClientToken` *(inferred: 用于保证请求幂等性的字符串错误 is the action's only code for a bad token)*.
    let params = defining(v.value(), &["ClientToken"]);
    let key = token.as_ref().map(|t| format!("{}:{t}", call.account));
    let valid = SignedDuration::from_hours(CLIENT_TOKEN_HOURS);
    if let Some(seen) = key.as_ref().and_then(|k| state.cfs_tokens.get(k)) {
        if seen.at.checked_add(valid).is_ok_and(|until| now < until) {
            if seen.params != params {
                return Err(err(
                    codes::CFS_INVALID_CLIENT_TOKEN,
                    "ClientToken was already used with different parameters.",
                ));
            }
            if let Some(f) = state.file_systems.iter().find(|f| f.id == seen.fs_id) {
                return Ok(created_json(f, now));
            }
        }
    }
    let zone = v.req_str("Zone")?;
    // 无效的可用区 (InvalidZoneId): a zone the region does not have.
    if !call.ctx.offers(PROVIDER).any(|o| o.region == call.region && o.zones.contains(&zone)) {
        return Err(err(
            codes::CFS_INVALID_ZONE,
            format!("The zone `{zone}` is not a zone of `{}`.", call.region),
        ));
    }
    let net =
        one_of(v.req_str("NetInterface")?, "NetInterface", NET_INTERFACES, codes::CFS_INVALID_NET_INTERFACE)?;
    let protocol = one_of(
        v.opt_str("Protocol")?.unwrap_or_else(|| "NFS".into()),
        "Protocol",
        PROTOCOLS,
        codes::CFS_INVALID_PROTOCOL,
    )?;
    let storage_type = one_of(
        v.opt_str("StorageType")?.unwrap_or_else(|| "SD".into()),
        "StorageType",
        STORAGE_TYPES,
        codes::CFS_INVALID_STORAGE_TYPE,
    )?;
    // "NFS： 通用标准型（含增强型）、通用性能型（含增强型）支持创建此协议的实例 … CIFS： 仅部分可用区的通用标准型、吞吐型
    // 支持此协议 … TURBO： Turbo标准型/Turbo性能型" (Protocol).
    let fits = match protocol.as_str() {
        "NFS" => ["SD", "HP", "THP"].contains(&storage_type.as_str()),
        "CIFS" => ["SD", "THP"].contains(&storage_type.as_str()),
        _ => ["TB", "TP"].contains(&storage_type.as_str()),
    };
    if !fits {
        return Err(err(
            codes::CFS_INVALID_PROTOCOL,
            format!("Protocol {protocol} is not offered for StorageType {storage_type}."),
        ));
    }
    // "通用标准型/性能型（含增强型）、吞吐型请选择VPC; Turbo标准型/性能型可选VPC或CCN" (NetInterface). CCN is not modelled.
    if net != "VPC" {
        return Err(err(
            codes::CFS_INVALID_NET_INTERFACE,
            format!("NetInterface {net}: the local cloud makes file systems in a VPC only."),
        ));
    }
    // PGroupId: "pgroupbasic 为【默认权限组】"; the emulator has no other group, so another `pgroup-…` id is
    // 权限组不存在 and anything else 权限组ID无效.
    let pgroup = v.req_str("PGroupId")?;
    if pgroup != DEFAULT_PGROUP {
        let code = if pgroup.starts_with("pgroup-") {
            codes::CFS_PGROUP_NOT_FOUND
        } else {
            codes::CFS_INVALID_PGROUP_ID
        };
        return Err(err(code, format!("The permission group `{pgroup}` does not exist.")));
    }
    turbo_capacity(&v, &storage_type)?;
    let (vpc_id, subnet_id, cidr) = network(state, call, &v, &zone)?;
    let name = v.opt_str("FsName")?.unwrap_or_default();
    if name.len() > FS_NAME_MAX {
        return Err(err(
            codes::CFS_FS_NAME_TOO_LONG,
            format!("FsName is {} bytes; at most {FS_NAME_MAX} are accepted.", name.len()),
        ));
    }
    let tags = resource_tags(&v)?;
    let mount_ip = mount_ip(state, &v, cidr)?;
    let boot = call.ctx.boot_time();
    let ready_at = now.checked_add(boot).unwrap_or(now);
    let f = CfsFileSystem {
        id: call.ctx.new_id("cfs-", 8),
        region: call.region.clone(),
        zone,
        name,
        protocol,
        storage_type,
        vpc_id,
        subnet_id,
        tags,
        created: now,
        ready_at,
        mount_id: call.ctx.new_id("mount-", 8),
        mount_ip,
        mount_ready_at: ready_at.checked_add(boot / 2).unwrap_or(ready_at),
        deleting_since: None,
        token: token.clone(),
        used_bytes: 0,
    };
    if let Some(k) = key {
        state.cfs_tokens.insert(k, CfsToken { params, fs_id: f.id.clone(), at: now });
    }
    let out = created_json(&f, now);
    state.file_systems.push(f);
    Ok(out)
}

/// A `FileSystemId` as CFS writes them (`cfs-` and letters/digits), else 无效 (InvalidFileSystemId).
fn check_id(id: &str) -> Result<()> {
    let ok = id
        .strip_prefix("cfs-")
        .is_some_and(|t| !t.is_empty() && t.bytes().all(|b| b.is_ascii_alphanumeric()));
    if ok {
        return Ok(());
    }
    Err(err(codes::CFS_INVALID_FILE_SYSTEM_ID, format!("The FileSystemId `{id}` is malformed.")))
}

pub(crate) fn describe_cfs_file_systems(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    // Offset "默认0", Limit "默认10"; no maximum is stated *(the emulator takes up to 100, CVM's bound)*.
    let window = v.offset_limit(("Offset", "Limit"), 10, 100)?;
    let id = v.opt_str("FileSystemId")?;
    if let Some(id) = &id {
        check_id(id)?;
    }
    let vpc = v.opt_str("VpcId")?;
    let subnet = v.opt_str("SubnetId")?;
    // CreationToken: "用户自定义名称".
    let creation_token = v.opt_str("CreationToken")?;
    let fs = filters(
        &v,
        &[
            "Protocol",
            "StorageType",
            "LifeCycleState",
            "Zone",
            "IpAddress",
            "PGroupId",
            "PGroupName",
            "Scenario",
        ],
    )?;
    // `Tags` ("标签"): a file system holding every tag given *(unverified: all or any is not documented)*.
    let mut tags = Vec::new();
    for t in v.obj_list("Tags")? {
        tags.push((t.req_str("TagKey")?, t.req_str("TagValue")?));
    }
    let now = call.ctx.now();
    let found: Vec<&CfsFileSystem> = state
        .file_systems
        .iter()
        .filter(|f| f.region == call.region && id.as_ref().is_none_or(|i| *i == f.id))
        .filter(|f| {
            vpc.as_ref().is_none_or(|x| *x == f.vpc_id) && subnet.as_ref().is_none_or(|x| *x == f.subnet_id)
        })
        .filter(|f| creation_token.as_ref().is_none_or(|t| Some(t) == f.token.as_ref() || *t == f.name))
        .filter(|f| tags.iter().all(|t| f.tags.contains(t)))
        .filter(|f| {
            fs.iter().all(|(n, vs)| {
                let any = |x: &str| vs.iter().any(|v| v == x);
                match n.as_str() {
                    "Protocol" => any(&f.protocol),
                    "StorageType" => any(&f.storage_type),
                    "LifeCycleState" => any(f.state(now)),
                    "Zone" => any(&f.zone),
                    "IpAddress" => any(&f.mount_ip),
                    "PGroupId" => any(DEFAULT_PGROUP),
                    "PGroupName" => any("默认权限组"),
                    _ => false,
                }
            })
        })
        .collect();
    let (total, shown) = window.apply(found);
    Ok(json!({
        "TotalCount": total,
        "FileSystems": shown.into_iter().map(|f| fs_json(f, now)).collect::<Vec<_>>(),
    }))
}

fn find<'a>(state: &'a State, call: &Call, id: &str) -> Result<&'a CfsFileSystem> {
    check_id(id)?;
    state.file_systems.iter().find(|f| f.region == call.region && f.id == id).ok_or_else(|| {
        err(codes::CFS_FILE_SYSTEM_NOT_FOUND, format!("The file system `{id}` does not exist."))
    })
}

pub(crate) fn describe_mount_targets(state: &State, call: &Call) -> Result<Value> {
    let f = find(state, call, &call.p().req_str("FileSystemId")?)?;
    let now = call.ctx.now();
    let subnet_name =
        state.subnets.iter().find(|s| s.id == f.subnet_id).map(|s| s.name.clone()).unwrap_or_default();
    let vpc_name = state.vpcs.iter().find(|x| x.id == f.vpc_id).map(|x| x.name.clone()).unwrap_or_default();
    Ok(json!({
        "NumberOfMountTargets": 1,
        "MountTargets": [{
            "FileSystemId": f.id, "MountTargetId": f.mount_id, "IpAddress": f.mount_ip,
            "FSID": f.id.trim_start_matches("cfs-"), "LifeCycleState": f.mount_state(now),
            "NetworkInterface": "vpc", "VpcId": f.vpc_id, "VpcName": vpc_name, "SubnetId": f.subnet_id,
            "SubnetName": subnet_name,
        }],
    }))
}

pub(crate) fn delete_cfs_file_system(state: &mut State, call: &Call) -> Result<Value> {
    let id = call.p().req_str("FileSystemId")?;
    let now = call.ctx.now();
    let f = find(state, call, &id)?;
    // 无效的文件系统状态 (InvalidFsStatus) while it is still being made *(inferred: the code is in
    // DeleteCfsFileSystem's list; which states it covers is not documented)*.
    // A second delete of one already going changes nothing.
    match f.state(now) {
        "creating" => {
            Err(err(codes::CFS_INVALID_FS_STATUS, format!("The file system `{id}` is still being created.")))
        }
        _ => {
            if let Some(f) = state.file_systems.iter_mut().find(|f| f.id == id && f.deleting_since.is_none())
            {
                f.deleting_since = Some(now);
            }
            Ok(json!({}))
        }
    }
}

/// A planted file system (the admin API's `POST /_sim/plant`): in the zone's default network, with
/// `size_gb` of data stored, available at once.
pub(crate) fn plant(
    state: &mut State,
    p: &gpuctl_simkit::Plant,
    zone: &str,
    created: Timestamp,
    ctx: &gpuctl_simkit::SimCtx,
) -> std::result::Result<String, String> {
    let id = ctx.new_id("cfs-", 8);
    state.file_systems.push(CfsFileSystem {
        id: id.clone(),
        region: p.region.clone(),
        zone: zone.to_string(),
        name: p.name.clone().unwrap_or_default(),
        protocol: "NFS".into(),
        storage_type: p.class.clone().unwrap_or_else(|| "SD".into()),
        vpc_id: String::new(),
        subnet_id: String::new(),
        tags: p.tag_pairs(),
        created,
        ready_at: created,
        mount_id: ctx.new_id("mount-", 8),
        mount_ip: String::new(),
        mount_ready_at: created,
        deleting_since: None,
        token: None,
        used_bytes: p.size_or(10) << 30,
    });
    Ok(id)
}
