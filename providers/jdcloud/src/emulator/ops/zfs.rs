//! JD 云文件服务 (`zfs`, host `zfs.jdcloud-api.com`, API v1) for a cluster's shared file system
//! (issue 14): createFileSystem / describeFileSystems / describeFileSystem / deleteFileSystem and
//! createMountTarget / describeMountTargets / deleteMountTarget. Parameters follow jdcloud_sdk 1.6.354
//! `jdcloud_sdk/services/zfs/apis/*Request.py`, the listed fields `services/zfs/models/{FileSystem,
//! MountTarget,SizeByte,Tag}.py`; the result fields (`fileSystemId`, `fileSystems`+`totalCount`,
//! `fileSystem`, `mountTargetId`, `mountTargets`+`totalCount`) the `*Result` structs of
//! jdcloud-api/jdcloud-sdk-go `services/zfs/apis/*.go` (the Python SDK has no response classes).
//!
//! The limits are JD's product page (zhangkai263/cn @ 2d2b0af4
//! `documentation/Storage-and-CDN/Cloud-File-Service/Introduction/Restrictions.md`, summarised in
//! docs/research/clusters.md §2 JD): at most 5 file systems in 华北-北京, 1 mount target per file
//! system. The SDK states no error codes for any of this: the refusals use JD's common status words
//! (crate::api::status) and say *unverified* where the word is a guess.

use gpuctl_simkit::SimCtx;
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::vpc::{description, group_at, id_of, name, next_address, tags_pass, within};
use super::{filter, invalid, not_found, page, required, text, token_check, token_remember, Answer, Call};
use crate::api::{format_time, status};
use crate::emulator::error::JdError;
use crate::emulator::state::JdState;
use crate::emulator::PROVIDER;

/// How long a new file system shows `creating`, and a deleted one `deleting`, on the sim clock
/// (*unverified*: JD states no durations; FileSystem.py lists the states 创建中:creating、可用:available、
/// 使用中:in-use、删除中:deleting).
pub const FS_CREATE_TAKES: SignedDuration = SignedDuration::from_secs(5);
pub const FS_DELETE_TAKES: SignedDuration = SignedDuration::from_secs(5);

/// "华北-北京 … 5" file systems per region, raised by ticket (Restrictions.md @ 2d2b0af4); the local
/// cloud applies it to every region.
pub const FS_PER_REGION: usize = 5;

/// "1 mount target … per file system" (Restrictions.md @ 2d2b0af4).
pub const MOUNT_TARGETS_PER_FS: usize = 1;

#[derive(Clone, Debug)]
pub struct FileSystem {
    pub id: String,
    pub region: String,
    /// JD picks it: createFileSystem takes no az (CreateFileSystemParameters), FileSystem.py `az`
    /// "文件系统所属的可用区" reports it.
    pub az: String,
    pub name: String,
    pub description: String,
    /// `gp1` 通用型 or `std1` 容量型.
    pub fs_type: String,
    pub created: Timestamp,
    /// When deleteFileSystem was asked: `deleting` until [`FS_DELETE_TAKES`] later, then gone.
    pub deleting: Option<Timestamp>,
    /// A planted file system's tags (createFileSystem takes none).
    pub tags: Vec<(String, String)>,
    /// SizeByte.py "最近一次统计的文件系统的使用量": 0 for one gpuctl made, what a test planted otherwise.
    pub used_bytes: i64,
}

#[derive(Clone, Debug)]
pub struct MountTarget {
    pub id: String,
    pub region: String,
    pub fs_id: String,
    pub subnet_id: String,
    pub vpc_id: String,
    pub security_group_id: Option<String>,
    /// MountTarget.py `ipAddress` "ipv4地址": the address of its network interface in the subnet.
    pub ip: String,
    pub created: Timestamp,
}

impl FileSystem {
    /// FileSystem.py `status`: "创建中:creating、可用:available、使用中:in-use、删除中:deleting". That a
    /// file system with a mount target shows `in-use` is *unverified* (JD does not say what 使用中 means).
    pub fn status(&self, st: &JdState, now: Timestamp) -> &'static str {
        if self.deleting.is_some() {
            "deleting"
        } else if now.duration_since(self.created) < FS_CREATE_TAKES {
            "creating"
        } else if st.mount_targets.values().any(|m| m.fs_id == self.id) {
            "in-use"
        } else {
            "available"
        }
    }
}

/// `clientToken`: "幂等性参数(只支持数字、大小写字母，且不能超过64字符)" — required by both creates
/// (CreateFileSystemParameters and CreateMountTargetParameters take it in their constructors).
fn client_token(p: &Value) -> Result<String, JdError> {
    let t = required(p, "clientToken")?;
    if t.is_empty() || t.len() > 64 || !t.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return Err(invalid(format!(
            "clientToken {t:?} must be 1-64 digits and letters (幂等性参数(只支持数字、大小写字母，且不能超过64字符))"
        )));
    }
    Ok(t)
}

/// The az JD would put a new file system in: the region's first zone the local cloud sells.
fn az_of(ctx: &SimCtx, region: &str) -> String {
    ctx.offers(PROVIDER)
        .filter(|o| o.region == region)
        .flat_map(|o| o.zones.iter().cloned())
        .min()
        .unwrap_or_else(|| format!("{region}a"))
}

fn fs_at<'s>(st: &'s JdState, c: &Call, id: &str) -> Result<&'s FileSystem, JdError> {
    st.file_systems.get(id).filter(|f| f.region == c.region).ok_or_else(|| not_found("fileSystem", id))
}

// ------------------------------------------------------------------------------------ file systems

pub fn create_file_system(c: &Call, st: &mut JdState) -> Answer {
    // FileSystem.py `name`: "不可为空，只支持中文、数字、大小写字母、英文下划线“_”及中划线“-”，且不能超过32字符"
    // (the same rule as the vpc names).
    let fs_name = name(c.p, "name")?;
    // `description` is a constructor argument (required); FileSystem.py: "不能超过256字符".
    required(c.p, "description")?;
    let fs_description = description(c.p)?;
    client_token(c.p)?;
    // "文件系统类型(通用型:gp1,容量型:std1),默认为通用型" (CreateFileSystemParameters.fileSystemType).
    let fs_type = text(c.p, "fileSystemType").unwrap_or_else(|| "gp1".into());
    if fs_type != "gp1" && fs_type != "std1" {
        return Err(invalid(format!("fileSystemType {fs_type} is not gp1 (通用型) or std1 (容量型)")));
    }
    if let Some(replay) = token_check(st, "createFileSystem", c)? {
        return Ok(replay);
    }
    let held = st.file_systems.values().filter(|f| f.region == c.region).count();
    if held >= FS_PER_REGION {
        // *unverified* word: the limits page names the quota, not the answer past it.
        return Err(JdError::new(
            status::QUOTA_EXCEEDED,
            format!(
                "region {} already holds {held} file systems; the quota is {FS_PER_REGION} (raise it by ticket)",
                c.region
            ),
        ));
    }
    let fs = FileSystem {
        id: c.ctx.new_id("fs-", 10),
        region: c.region.clone(),
        az: az_of(c.ctx, &c.region),
        name: fs_name,
        description: fs_description,
        fs_type,
        created: c.now,
        deleting: None,
        tags: Vec::new(),
        used_bytes: 0,
    };
    let result = json!({ "fileSystemId": fs.id });
    st.file_systems.insert(fs.id.clone(), fs);
    token_remember(st, "createFileSystem", c, &result);
    Ok(result)
}

fn fs_json(f: &FileSystem, st: &JdState, now: Timestamp) -> Value {
    json!({
        "fileSystemId": f.id,
        "name": f.name,
        "description": f.description,
        "numberOfMountTargets": st.mount_targets.values().filter(|m| m.fs_id == f.id).count(),
        // SizeByte.py: "最近一次统计的文件系统的使用量" — the local cloud stores no data.
        "sizeByte": { "timestamp": now.as_millisecond(), "value": f.used_bytes },
        "status": f.status(st, now),
        "fileSystemType": f.fs_type,
        "az": f.az,
        "createTime": format_time(f.created),
        // JD documents no form of the name; the address to mount is the mount target's ipAddress.
        "dnsName": null,
        // createFileSystem takes no tags: only a planted one has some.
        "tags": f.tags.iter().map(|(k, v)| json!({ "key": k, "value": v })).collect::<Vec<_>>(),
    })
}

pub fn describe_file_systems(c: &Call, st: &JdState) -> Answer {
    // filters: "fileSystemId - 文件系统ID，精确匹配，支持多个 / name - 文件系统名称，模糊匹配，支持单个 /
    // status - 文件系统状态，精确匹配，支持多个" (DescribeFileSystemsParameters.filters).
    let ids = filter(c.p, "fileSystemId");
    let statuses = filter(c.p, "status");
    let names = filter(c.p, "name").unwrap_or_default();
    if names.len() > 1 {
        // *unverified* word for more than the one value the definition allows.
        return Err(invalid(format!("filter name takes one value (支持单个), got {}", names.len())));
    }
    let pg = page(c.p)?;
    let found: Vec<&FileSystem> = st
        .file_systems
        .values()
        .filter(|f| f.region == c.region && within(&ids, &f.id) && within(&statuses, f.status(st, c.now)))
        .filter(|f| names.iter().all(|n| f.name.contains(n.as_str())) && tags_pass(c.p, &[]))
        .collect();
    let (total, items) = pg.apply(found);
    Ok(json!({
        "fileSystems": items.iter().map(|f| fs_json(f, st, c.now)).collect::<Vec<_>>(),
        "totalCount": total,
    }))
}

pub fn describe_file_system(c: &Call, st: &JdState) -> Answer {
    let f = fs_at(st, c, &id_of(c))?;
    Ok(json!({ "fileSystem": fs_json(f, st, c.now) }))
}

/// "删除一个文件系统，一旦删除，该文件系统将不存在" (DeleteFileSystemRequest.py): `deleting`, then gone.
pub fn delete_file_system(c: &Call, st: &mut JdState) -> Answer {
    let id = id_of(c);
    fs_at(st, c, &id)?;
    let targets: Vec<&str> =
        st.mount_targets.values().filter(|m| m.fs_id == id).map(|m| m.id.as_str()).collect();
    if !targets.is_empty() {
        // *unverified*: JD does not say whether a file system with a mount target can be deleted;
        // the local cloud asks for deleteMountTarget first, as Alibaba NAS does.
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("fileSystem {id} still has mount target(s) {}; delete them first", targets.join(", ")),
        ));
    }
    if let Some(f) = st.file_systems.get_mut(&id) {
        // A second delete while it is going is answered as the first (*unverified*).
        f.deleting.get_or_insert(c.now);
    }
    Ok(json!({}))
}

// ----------------------------------------------------------------------------------- mount targets

pub fn create_mount_target(c: &Call, st: &mut JdState) -> Answer {
    // CreateMountTargetParameters(regionId, fileSystemId, subnetId, vpcId, clientToken); securityGroupId optional.
    let fs_id = required(c.p, "fileSystemId")?;
    let subnet_id = required(c.p, "subnetId")?;
    let vpc_id = required(c.p, "vpcId")?;
    client_token(c.p)?;
    let group = text(c.p, "securityGroupId");
    if let Some(replay) = token_check(st, "createMountTarget", c)? {
        return Ok(replay);
    }
    let fs = fs_at(st, c, &fs_id)?;
    let fs_status = fs.status(st, c.now);
    if fs_status == "creating" || fs_status == "deleting" {
        // *unverified* word: a file system is given mount targets once it is available.
        return Err(JdError::new(
            status::FAILED_PRECONDITION,
            format!("fileSystem {fs_id} is {fs_status}; wait until it is available"),
        ));
    }
    let az = fs.az.clone();
    let held: Vec<&MountTarget> = st.mount_targets.values().filter(|m| m.fs_id == fs_id).collect();
    if held.len() >= MOUNT_TARGETS_PER_FS {
        // *unverified* word; the limit is the limits page's.
        return Err(JdError::new(
            status::QUOTA_EXCEEDED,
            format!(
                "fileSystem {fs_id} already has mount target {} in subnet {}; a file system has at most \
                 {MOUNT_TARGETS_PER_FS} mount target",
                held[0].id, held[0].subnet_id
            ),
        ));
    }
    let ip = match st.subnets.get(&subnet_id).filter(|s| s.region == c.region) {
        Some(s) => {
            if s.vpc_id != vpc_id {
                // *unverified* word.
                return Err(invalid(format!("subnet {subnet_id} is in vpc {}, not in {vpc_id}", s.vpc_id)));
            }
            if let Some(g) = &group {
                let g = group_at(st, c, g)?;
                if g.vpc_id != vpc_id {
                    return Err(invalid(format!(
                        "networkSecurityGroup {} is in vpc {}, not in {vpc_id}",
                        g.id, g.vpc_id
                    )));
                }
            }
            next_address(st, &subnet_id, &[]).ok_or_else(|| {
                // *unverified* word, as createInstances' full subnet.
                JdError::new(
                    status::QUOTA_EXCEEDED,
                    format!("subnet {subnet_id} has no private address left for a mount target"),
                )
            })?
        }
        // A subnet this emulator did not make is the user's own, except in an empty account (as
        // createInstances takes them: ops/vpc.rs check_launch).
        None if c.ctx.has_default_network(PROVIDER, &az) => {
            format!("10.0.254.{}", st.mount_targets.len() % 250 + 2)
        }
        // *unverified* word for an unknown subnet.
        None => return Err(not_found("subnet", &subnet_id)),
    };
    let mt = MountTarget {
        id: c.ctx.new_id("fsmt-", 10),
        region: c.region.clone(),
        fs_id,
        subnet_id,
        vpc_id,
        security_group_id: group,
        ip,
        created: c.now,
    };
    let result = json!({ "mountTargetId": mt.id });
    st.mount_targets.insert(mt.id.clone(), mt);
    token_remember(st, "createMountTarget", c, &result);
    Ok(result)
}

fn mount_target_json(m: &MountTarget) -> Value {
    json!({
        "fileSystemId": m.fs_id,
        "ipAddress": m.ip,
        // MountTarget.py lists no status values: `available` is the local cloud's word (*unverified*).
        "status": "available",
        "mountTargetId": m.id,
        "subnetId": m.subnet_id,
        "vpcId": m.vpc_id,
        "securityGroupId": m.security_group_id,
        "createTime": format_time(m.created),
        "dnsName": null,
    })
}

pub fn describe_mount_targets(c: &Call, st: &JdState) -> Answer {
    // filters: "fileSystemId - 文件系统ID，精确匹配，支持多个 / mountTargetId - 挂载目标ID，精确匹配，支持多个".
    let fs_ids = filter(c.p, "fileSystemId");
    let ids = filter(c.p, "mountTargetId");
    let pg = page(c.p)?;
    let found: Vec<&MountTarget> = st
        .mount_targets
        .values()
        .filter(|m| m.region == c.region && within(&fs_ids, &m.fs_id) && within(&ids, &m.id))
        .collect();
    let (total, items) = pg.apply(found);
    Ok(
        json!({ "mountTargets": items.iter().map(|m| mount_target_json(m)).collect::<Vec<_>>(), "totalCount": total }),
    )
}

/// "删除挂载目标的同时会删除相关的网络接口" (DeleteMountTargetRequest.py): its address is free again.
pub fn delete_mount_target(c: &Call, st: &mut JdState) -> Answer {
    let id = id_of(c);
    st.mount_targets
        .get(&id)
        .filter(|m| m.region == c.region)
        .ok_or_else(|| not_found("mountTarget", &id))?;
    st.mount_targets.remove(&id);
    Ok(json!({}))
}

/// `/_sim/state` view: every file system that exists (and bills), with its mount targets.
pub fn state_view(st: &JdState, now: Timestamp) -> Value {
    json!(st
        .file_systems
        .values()
        .map(|f| {
            let mut v = fs_json(f, st, now);
            v["id"] = json!(f.id);
            v["region"] = json!(f.region);
            v["mountTargets"] = json!(st
                .mount_targets
                .values()
                .filter(|m| m.fs_id == f.id)
                .map(mount_target_json)
                .collect::<Vec<_>>());
            v
        })
        .collect::<Vec<_>>())
}
