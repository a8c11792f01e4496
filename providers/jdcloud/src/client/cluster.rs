//! A cluster's placement and shared file system (issue 14): JD Cloud 云文件服务 (zfs); JD vm has no low-latency placement.
//!
//! - **Placement.** `placement_kind` keeps the trait's default, `None`: JD `vm` offers no low-latency
//!   placement. `InstanceSpec` (jdcloud_sdk 1.6.354 `services/vm/models/InstanceSpec.py`) has no
//!   placement-group, low-latency or HPC-cluster field; its only grouping field, `agId` (高可用组), is
//!   a spread group for high availability (`services/ag/apis/CreateAgRequest.py`), the opposite of
//!   what a cluster wants. A JD cluster is one az and one subnet (docs/research/clusters.md §1 JD).
//! - **File systems** (jdcloud_sdk 1.6.354 `services/zfs/apis/*Request.py`, host
//!   `zfs.jdcloud-api.com`, API v1). createFileSystem takes no az, subnet or tags, but requires a
//!   `description` and a `clientToken` of digits and letters; the file system is found again by its
//!   (mapped) name. Its one mount target (createMountTarget: `vpcId`, `subnetId`, `clientToken`) is
//!   what the nodes mount: at most one per file system (JD's limits page, Restrictions.md).
//! - **The export is `/cfs`**: "挂载目标的目录为10.0.0.30:/cfs" (JD's mount guide, zhangkai263/cn @
//!   10414b92 `documentation/Storage-and-CDN/Cloud-File-Service/Operation-Guide/Mount-File-System.md`),
//!   not the `/` of Tencent and Alibaba.

use gpuctl_cloud::cloud::{CloudError, ErrorKind, FileSystem, FsSpec, FsState, FsTier, MountTarget};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::Clusters;
use gpuctl_cloud::Provider;
use serde_json::json;

use super::{filter_query, Call, Client};

fn zfs<'a>(action: &'a str, method: &'a str, path: &'a str) -> Call<'a> {
    Call { service: "zfs", version: crate::api::API_VERSION, action, method, path }
}

/// The path nodes mount (see the module's notes).
pub(crate) const EXPORT: &str = "/cfs";

/// FNV-1a, 64 bits: a short, stable digest for names and tokens that must be shortened (stable across
/// builds and platforms, unlike `std`'s hasher).
fn digest(s: &str) -> String {
    let h =
        s.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3));
    format!("{h:016x}")
}

/// The file system name gpuctl sends for `name`: FileSystem.py `name` "不可为空，只支持中文、数字、大小写
/// 字母、英文下划线“_”及中划线“-”，且不能超过32字符". A name that complies goes as it is; any other is
/// mapped deterministically (other characters become `-`, and a name that changed or is too long is
/// cut to 23 characters plus `-` and 8 hex digits of a digest of the whole name), so that
/// find_file_system looks for what create_file_system made.
pub(crate) fn fs_name(name: &str) -> String {
    let allowed = |c: char| c.is_ascii_alphanumeric() || c == '_' || c == '-' || is_chinese(c);
    if !name.is_empty() && name.chars().count() <= 32 && name.chars().all(allowed) {
        return name.to_string();
    }
    let kept: String = name.chars().map(|c| if allowed(c) { c } else { '-' }).take(23).collect();
    format!("{kept}-{}", &digest(name)[..8])
}

/// CJK Unified Ideographs (and extension A): what JD's "中文" is taken to mean.
fn is_chinese(c: char) -> bool {
    matches!(c, '\u{4e00}'..='\u{9fff}' | '\u{3400}'..='\u{4dbf}')
}

/// The `clientToken` gpuctl sends for `token`: "幂等性参数(只支持数字、大小写字母，且不能超过64字符)"
/// (CreateFileSystemParameters, CreateMountTargetParameters). A token that complies goes as it is;
/// any other (gpuctl's own are `gpuctl-` + hex) becomes its digits and letters, cut to 48, plus 16 hex
/// digits of a digest of the whole token: the same token always maps to the same one.
pub(crate) fn jd_token(token: &str) -> String {
    if !token.is_empty() && token.len() <= 64 && token.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return token.to_string();
    }
    let kept: String = token.chars().filter(char::is_ascii_alphanumeric).take(48).collect();
    format!("{kept}{}", digest(token))
}

/// `fileSystemType`: "文件系统类型(通用型:gp1,容量型:std1),默认为通用型".
fn fs_type(tier: FsTier) -> &'static str {
    match tier {
        FsTier::Performance => "gp1",
        FsTier::Capacity => "std1",
    }
}

/// FileSystem.py `status`: "创建中:creating、可用:available、使用中:in-use、删除中:deleting"; in use is
/// available (it is mounted or has its mount target).
fn state_of(status: &str) -> FsState {
    match status {
        "creating" => FsState::Creating,
        "available" | "in-use" => FsState::Available,
        "deleting" => FsState::Deleting,
        other => FsState::Other(other.to_string()),
    }
}

fn fs_of(f: &Field) -> FileSystem {
    FileSystem {
        id: f.get("fileSystemId").text(),
        name: f.get("name").text(),
        zone: f.get("az").opt_text(),
        state: state_of(&f.get("status").text()),
        tags: f.get("tags").items().iter().map(|t| (t.get("key").text(), t.get("value").text())).collect(),
    }
}

/// "分页大小，默认为20，取值范围：[10,100]" (DescribeFileSystemsParameters / DescribeMountTargetsParameters).
fn paged(mut q: Vec<(String, String)>, number: usize) -> Vec<(String, String)> {
    q.extend([("pageNumber".to_string(), number.to_string()), ("pageSize".to_string(), "100".to_string())]);
    q
}

/// The description gpuctl gives a file system (required by createFileSystem; "不能超过256字符").
fn fs_description(spec: &FsSpec) -> String {
    let tags: Vec<String> = spec.tags.iter().map(|(k, v)| format!("{k}={v}")).collect();
    let d = format!("gpuctl shared file system {} ({})", spec.name, tags.join(", "));
    d.chars().take(256).collect()
}

impl Client {
    /// Every file system describeFileSystems lists for `filters`.
    async fn file_systems(
        &self,
        region: &str,
        filters: &[(&str, Vec<String>)],
    ) -> Result<Vec<FileSystem>, CloudError> {
        self.file_systems_as(region, filters, |f, _| fs_of(f)).await
    }

    /// The same listing, each item read by `of` (the leftover listing, `leftover.rs`, reads the sizes
    /// and types `fs_of` does not).
    pub(super) async fn file_systems_as<T: Send>(
        &self,
        region: &str,
        filters: &[(&str, Vec<String>)],
        of: fn(&Field, &str) -> T,
    ) -> Result<Vec<T>, CloudError> {
        page::all(Style::PageNumber, |at| async move {
            let q = paged(filter_query(filters), at.number());
            let a = self.call(zfs("describeFileSystems", "GET", "fileSystems"), region, q, None).await?;
            let items = a.get("fileSystems").items().iter().map(|f| of(f, region)).collect();
            Ok(Page::counted(items, a.get("totalCount").u64().unwrap_or(0)))
        })
        .await
    }

    /// Every mount target of `fs_id`: (id, subnet, vpc, address).
    async fn mount_targets(&self, region: &str, fs_id: &str) -> Result<Vec<Listed>, CloudError> {
        page::all(Style::PageNumber, |at| async move {
            let q = paged(filter_query(&[("fileSystemId", vec![fs_id.to_string()])]), at.number());
            let a = self.call(zfs("describeMountTargets", "GET", "mountTargets"), region, q, None).await?;
            let items = a
                .get("mountTargets")
                .items()
                .iter()
                .filter(|m| m.get("fileSystemId").text() == fs_id)
                .map(|m| Listed {
                    id: m.get("mountTargetId").text(),
                    subnet: m.get("subnetId").text(),
                    vpc: m.get("vpcId").text(),
                    // MountTarget.py: `ipAddress` "ipv4地址", `dnsName` "dns名称".
                    address: m.get("ipAddress").opt_text().or_else(|| m.get("dnsName").opt_text()),
                })
                .collect();
            Ok(Page::counted(items, a.get("totalCount").u64().unwrap_or(0)))
        })
        .await
    }
}

/// One mount target as describeMountTargets lists it.
struct Listed {
    id: String,
    subnet: String,
    vpc: String,
    address: Option<String>,
}

impl Listed {
    /// JD lists no mount-target states (MountTarget.py `status`, values not given): one that is listed
    /// with an address is mountable.
    fn target(self) -> MountTarget {
        MountTarget {
            id: self.id,
            ready: self.address.is_some(),
            address: self.address.unwrap_or_default(),
            path: EXPORT.to_string(),
        }
    }
}

fn no_id(action: &str, missing: impl std::fmt::Display, request_id: Option<String>) -> CloudError {
    CloudError::bad_response(
        Provider::JdCloud,
        action,
        format!("{action} answered without an id ({missing})"),
    )
    .with_request_id(request_id)
}

impl Clusters for Client {
    const CLUSTER_PROVIDER: Provider = Provider::JdCloud;

    async fn find_file_system(&self, spec: &FsSpec) -> Result<Option<FileSystem>, CloudError> {
        // The `name` filter is "模糊匹配，支持单个" (a substring match): the exact name is picked here.
        let want = fs_name(&spec.name);
        let listed = self.file_systems(&spec.region, &[("name", vec![want.clone()])]).await?;
        Ok(listed.into_iter().find(|f| f.name == want && f.state != FsState::Deleting))
    }

    async fn create_file_system(&self, spec: &FsSpec) -> Result<String, CloudError> {
        let body = json!({
            "regionId": spec.region,
            "name": fs_name(&spec.name),
            "description": fs_description(spec),
            "clientToken": jd_token(&spec.client_token),
            "fileSystemType": fs_type(spec.tier),
        });
        let a = self
            .call(zfs("createFileSystem", "POST", "fileSystems"), &spec.region, vec![], Some(body))
            .await?;
        a.get("fileSystemId").text_required().map_err(|m| no_id("createFileSystem", m, a.request_id.clone()))
    }

    async fn file_system(&self, region: &str, id: &str) -> Result<Option<FileSystem>, CloudError> {
        let path = format!("fileSystems/{id}");
        match self.call(zfs("describeFileSystem", "GET", &path), region, vec![], None).await {
            Ok(a) => Ok(Some(fs_of(&a.get("fileSystem")))),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn mount_target(&self, spec: &FsSpec, fs_id: &str) -> Result<MountTarget, CloudError> {
        let (mine, others): (Vec<Listed>, Vec<Listed>) =
            self.mount_targets(&spec.region, fs_id).await?.into_iter().partition(|m| m.subnet == spec.subnet);
        if let Some(m) = mine.into_iter().next() {
            return Ok(m.target());
        }
        if let Some(other) = others.first() {
            // JD's limits page: one mount target per file system. The other cluster's target is not
            // gpuctl's to delete here.
            return Err(CloudError::new(
                Provider::JdCloud,
                "createMountTarget",
                ErrorKind::Invalid,
                "gpuctl-one-mount-target",
                format!(
                    "file system {fs_id} already has mount target {} in subnet {} of {}; JD allows one mount \
                     target per file system, so it cannot also be mounted from subnet {} (delete that mount \
                     target, or use another file system)",
                    other.id, other.subnet, other.vpc, spec.subnet
                ),
            ));
        }
        let body = json!({
            "regionId": spec.region,
            "fileSystemId": fs_id,
            "subnetId": spec.subnet,
            "vpcId": spec.vpc,
            // One token per file system and subnet, distinct from the file system's own.
            "clientToken": jd_token(&format!("{}-mount-{fs_id}-{}", spec.client_token, spec.subnet)),
        });
        let a = self
            .call(zfs("createMountTarget", "POST", "mountTargets"), &spec.region, vec![], Some(body))
            .await?;
        let id = a
            .get("mountTargetId")
            .text_required()
            .map_err(|m| no_id("createMountTarget", m, a.request_id.clone()))?;
        // The create answers only the id: the address comes with the next call's listing.
        Ok(MountTarget { id, address: String::new(), path: EXPORT.to_string(), ready: false })
    }

    async fn delete_file_system(&self, region: &str, id: &str) -> Result<(), CloudError> {
        for m in self.mount_targets(region, id).await? {
            let path = format!("mountTargets/{}", m.id);
            match self.call(zfs("deleteMountTarget", "DELETE", &path), region, vec![], None).await {
                Ok(_) => {}
                Err(e) if e.kind == ErrorKind::NotFound => {}
                Err(e) => return Err(e),
            }
        }
        let path = format!("fileSystems/{id}");
        self.call(zfs("deleteFileSystem", "DELETE", &path), region, vec![], None).await.map(drop)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_tokens_are_mapped_into_jds_rules_the_same_way_every_time() {
        for ok in ["gpuctl-train", "训练_fs-1", &"x".repeat(32)] {
            assert_eq!(fs_name(ok), ok);
        }
        for bad in ["gpuctl.e2e.train-pool.shared-file-system", "a b", "", &"x".repeat(33), "a.b", "a-b"] {
            let n = fs_name(bad);
            assert_eq!(n, fs_name(bad));
            assert!(!n.is_empty() && n.chars().count() <= 32, "{bad:?} → {n:?}");
            assert!(
                n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-' || is_chinese(c)),
                "{n}"
            );
        }
        // Names that differ only where JD refuses a character stay apart.
        assert_ne!(fs_name("a.b"), fs_name("a b"));
        assert_ne!(fs_name("a.b"), fs_name("a-b"));
        for ok in ["abc123", &"t".repeat(64)] {
            assert_eq!(jd_token(ok), ok);
        }
        let engine = "gpuctl-0123456789abcdef0123456789abcdef01234567";
        for bad in [engine, "", &"t".repeat(65), "a-b"] {
            let t = jd_token(bad);
            assert_eq!(t, jd_token(bad));
            assert!(
                !t.is_empty() && t.len() <= 64 && t.bytes().all(|b| b.is_ascii_alphanumeric()),
                "{bad:?} → {t}"
            );
        }
        assert!(jd_token(engine).starts_with("gpuctl0123456789abcdef"));
        assert_ne!(jd_token("a-b"), jd_token("ab"));
        assert_ne!(jd_token("a-b"), jd_token("a_b"));
    }

    #[test]
    fn tiers_states_and_the_export() {
        assert_eq!((fs_type(FsTier::Performance), fs_type(FsTier::Capacity)), ("gp1", "std1"));
        for (s, want) in [
            ("creating", FsState::Creating),
            ("available", FsState::Available),
            ("in-use", FsState::Available),
            ("deleting", FsState::Deleting),
            ("error", FsState::Other("error".into())),
        ] {
            assert_eq!(state_of(s), want);
        }
        let listed = Listed { id: "mt".into(), subnet: "s".into(), vpc: "v".into(), address: None };
        assert_eq!((listed.target().ready, EXPORT), (false, "/cfs"));
        let spec = FsSpec {
            region: "cn-north-1".into(),
            zone: "cn-north-1a".into(),
            name: "n".repeat(300),
            tier: FsTier::Capacity,
            vpc: "v".into(),
            subnet: "s".into(),
            tags: Default::default(),
            client_token: "t".into(),
        };
        assert_eq!(fs_description(&spec).chars().count(), 256);
    }
}
