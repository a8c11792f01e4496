//! A cluster's placement and shared file system (issue 14): Tencent HPC clusters (cvm 2017-03-12) and
//! CFS (cfs 2019-07-19). Parameters and fields: tccli 3.1.189.1 `tccli/services/cvm/v20170312/api.json`
//! (CreateHpcClusterRequest, DescribeHpcClustersRequest, DeleteHpcClustersRequest, HpcClusterInfo) and
//! `tccli/services/cfs/v20190719/api.json` (CreateCfsFileSystemRequest, DescribeCfsFileSystemsRequest,
//! DescribeMountTargetsRequest, DeleteCfsFileSystemRequest, FileSystemInfo, MountInfo).
//!
//! CreateHpcCluster takes no ClientToken, so the engine finds a cluster by name and zone before each
//! create. CreateCfsFileSystem takes one (valid 2 hours) and makes the mount target with the file
//! system: there is no CreateMountTarget, so [`Clusters::mount_target`] only describes it.

use std::collections::BTreeMap;

use gpuctl_cloud::cloud::{
    CloudError, ErrorKind, FileSystem, FsSpec, FsState, FsTier, MountTarget, PlacementKind, PlacementSpec,
};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::Clusters;
use gpuctl_cloud::{BillingMode, Provider};
use serde_json::{json, Value};

use super::Client;
use crate::api::cfs::DEFAULT_PGROUP;
use crate::api::{is_hpc_type, CFS, CVM};

/// Tencent's one placement is the HPC cluster; any other kind is gpuctl's mistake, refused before a call.
fn hpc_only(kind: PlacementKind, action: &str) -> Result<(), CloudError> {
    if kind == PlacementKind::HpcCluster {
        return Ok(());
    }
    Err(CloudError::unsupported(
        Provider::Tencent,
        action,
        format!(
            "Tencent offers no {}; its placement is {}",
            kind.describe(),
            PlacementKind::HpcCluster.describe()
        ),
    ))
}

/// DescribeHpcClusters' page: `Limit` "默认值20，范围限制为[1-100]".
const HPC_PAGE: usize = 100;

pub(crate) fn create_hpc_body(spec: &PlacementSpec) -> Value {
    let mut b = json!({ "Zone": spec.zone, "Name": spec.name, "Remark": "gpuctl cluster placement" });
    if !spec.tags.is_empty() {
        // TagSpecification.ResourceType: "高性能计算集群为“hpc”".
        let tags: Vec<Value> = spec.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect();
        b["TagSpecification"] = json!([{ "ResourceType": "hpc", "Tags": tags }]);
    }
    b
}

/// StorageType: "SD： 通用标准型 … HP： 通用性能型" (CreateCfsFileSystemRequest.StorageType).
fn storage_type(tier: FsTier) -> &'static str {
    match tier {
        FsTier::Capacity => "SD",
        FsTier::Performance => "HP",
    }
}

pub(crate) fn create_fs_body(spec: &FsSpec) -> Value {
    json!({
        "Zone": spec.zone,
        // 通用标准型/性能型 use VPC (NetInterface); the default group lets every address of the VPC read
        // and write (PGroupId: "pgroupbasic 为【默认权限组】").
        "NetInterface": "VPC",
        "PGroupId": DEFAULT_PGROUP,
        "Protocol": "NFS",
        "StorageType": storage_type(spec.tier),
        "VpcId": spec.vpc,
        "SubnetId": spec.subnet,
        "FsName": spec.name,
        "ResourceTags": tag_infos(&spec.tags),
        "ClientToken": spec.client_token,
    })
}

/// `[{TagKey, TagValue}]` (objects.TagInfo).
fn tag_infos(tags: &BTreeMap<String, String>) -> Vec<Value> {
    tags.iter().map(|(k, v)| json!({ "TagKey": k, "TagValue": v })).collect()
}

/// One DescribeCfsFileSystems page of the zone's file systems holding `spec`'s tags. `Limit` is the
/// documented default ("默认10"); no maximum is stated, so gpuctl asks for no more and pages.
pub(crate) fn find_fs_body(spec: &FsSpec, offset: usize) -> Value {
    let mut b = json!({
        "Offset": offset,
        "Limit": 10,
        "Filters": [{ "Name": "Zone", "Values": [spec.zone] }],
    });
    if !spec.tags.is_empty() {
        b["Tags"] = json!(tag_infos(&spec.tags));
    }
    b
}

/// FileSystemInfo.LifeCycleState: "creating:创建中 mounting:挂载中 create_failed:创建失败 available:可使用
/// unserviced:停服中 upgrading:升级中", and the filter list adds deleting, delete_failed, expanding.
fn fs_state(s: &str) -> FsState {
    match s {
        "creating" | "mounting" => FsState::Creating,
        "available" => FsState::Available,
        "create_failed" => FsState::Failed,
        "deleting" => FsState::Deleting,
        other => FsState::Other(other.into()),
    }
}

fn fs_of(f: &Field) -> FileSystem {
    FileSystem {
        id: f.get("FileSystemId").text(),
        name: f.get("FsName").text(),
        zone: f.get("Zone").opt_text(),
        state: fs_state(&f.get("LifeCycleState").text()),
        tags: f
            .get("Tags")
            .items()
            .iter()
            .map(|t| (t.get("TagKey").text(), t.get("TagValue").text()))
            .collect(),
    }
}

/// The answer's id at `id`, or a transient `bad-response` (the engine asks again, and finds what was made).
fn id_at(a: &gpuctl_cloud::send::Answer, action: &str, id: Field) -> Result<String, CloudError> {
    id.text_required().map_err(|missing| {
        CloudError::bad_response(
            Provider::Tencent,
            action,
            format!("{action} answered without an id ({missing})"),
        )
        .with_request_id(a.request_id.clone())
    })
}

impl Client {
    /// Every DescribeCfsFileSystems item `body(offset)` selects, page by page.
    async fn file_systems(
        &self,
        region: &str,
        body: impl Fn(usize) -> Value + Sync,
    ) -> Result<Vec<FileSystem>, CloudError> {
        let body = &body;
        page::all(Style::Offset, |at| async move {
            let a = self.call(CFS, region, "DescribeCfsFileSystems", body(at.number())).await?;
            let items = a.get("FileSystems").items().iter().map(fs_of).collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }

    /// Every file system of the region (DescribeCfsFileSystems with no filter, paged as above), each
    /// read by `of` (the leftover listing, `leftover.rs`, reads sizes and classes `fs_of` does not).
    pub(super) async fn file_systems_as<T: Send>(
        &self,
        region: &str,
        of: fn(&Field, &str) -> T,
    ) -> Result<Vec<T>, CloudError> {
        page::all(Style::Offset, |at| async move {
            let body = json!({ "Offset": at.number(), "Limit": 10 });
            let a = self.call(CFS, region, "DescribeCfsFileSystems", body).await?;
            let items = a.get("FileSystems").items().iter().map(|f| of(f, region)).collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }
}

impl Clusters for Client {
    const CLUSTER_PROVIDER: Provider = Provider::Tencent;

    async fn placement_kind(
        &self,
        _region: &str,
        instance_type: &str,
        _billing: BillingMode,
    ) -> Result<Option<PlacementKind>, CloudError> {
        Ok(is_hpc_type(instance_type).then_some(PlacementKind::HpcCluster))
    }

    async fn find_placement(&self, spec: &PlacementSpec) -> Result<Option<String>, CloudError> {
        hpc_only(spec.kind, "DescribeHpcClusters")?;
        let body = |offset: usize| json!({ "Name": spec.name, "Zone": spec.zone, "Offset": offset, "Limit": HPC_PAGE });
        let all = page::all(Style::Offset, |at| async move {
            let a = self.call(CVM, &spec.region, "DescribeHpcClusters", body(at.number())).await?;
            let items: Vec<(String, String, String)> = a
                .get("HpcClusterSet")
                .items()
                .iter()
                .map(|c| (c.get("HpcClusterId").text(), c.get("Name").text(), c.get("Zone").text()))
                .collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await?;
        // Whether `Name` matches exactly or in part is not documented: only an exact match in the zone counts.
        Ok(all
            .into_iter()
            .find(|(id, name, zone)| !id.is_empty() && *name == spec.name && *zone == spec.zone)
            .map(|c| c.0))
    }

    async fn create_placement(&self, spec: &PlacementSpec) -> Result<String, CloudError> {
        hpc_only(spec.kind, "CreateHpcCluster")?;
        let a = self.call(CVM, &spec.region, "CreateHpcCluster", create_hpc_body(spec)).await?;
        id_at(&a, "CreateHpcCluster", a.get("HpcClusterSet").at(0).get("HpcClusterId"))
    }

    async fn delete_placement(&self, region: &str, kind: PlacementKind, id: &str) -> Result<(), CloudError> {
        hpc_only(kind, "DeleteHpcClusters")?;
        // `ResourceNotFound.HpcCluster` is NotFound and `ResourceInUse.HpcCluster` transient (the classifier).
        self.call(CVM, region, "DeleteHpcClusters", json!({ "HpcClusterIds": [id] })).await.map(|_| ())
    }

    async fn find_file_system(&self, spec: &FsSpec) -> Result<Option<FileSystem>, CloudError> {
        let all = self.file_systems(&spec.region, |offset| find_fs_body(spec, offset)).await?;
        // Whether `Tags` matches all or any of the tags is not documented: the answer is checked here.
        Ok(all.into_iter().find(|f| {
            f.name == spec.name
                && f.zone.as_deref().is_none_or(|z| z == spec.zone)
                && f.state != FsState::Deleting
                && spec.tags.iter().all(|(k, v)| f.tags.get(k) == Some(v))
        }))
    }

    async fn create_file_system(&self, spec: &FsSpec) -> Result<String, CloudError> {
        let a = self.call(CFS, &spec.region, "CreateCfsFileSystem", create_fs_body(spec)).await?;
        id_at(&a, "CreateCfsFileSystem", a.get("FileSystemId"))
    }

    async fn file_system(&self, region: &str, id: &str) -> Result<Option<FileSystem>, CloudError> {
        match self.file_systems(region, |offset| json!({ "FileSystemId": id, "Offset": offset })).await {
            Ok(all) => Ok(all.into_iter().find(|f| f.id == id)),
            // Whether a gone id is listed as nothing or refused is not documented: both mean gone.
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    async fn mount_target(&self, spec: &FsSpec, fs_id: &str) -> Result<MountTarget, CloudError> {
        let a =
            self.call(CFS, &spec.region, "DescribeMountTargets", json!({ "FileSystemId": fs_id })).await?;
        let targets = a.get("MountTargets").items();
        let Some(t) = targets.iter().find(|t| t.get("SubnetId").text() == spec.subnet) else {
            if targets.is_empty() {
                // Made with the file system, and not listed yet while it is being made.
                return Ok(MountTarget {
                    id: String::new(),
                    address: String::new(),
                    path: "/".into(),
                    ready: false,
                });
            }
            return Err(CloudError::new(
                Provider::Tencent,
                "DescribeMountTargets",
                ErrorKind::Invalid,
                "gpuctl-no-mount-target",
                format!(
                    "file system {fs_id} has no mount target in subnet {}, and CFS 2019-07-19 cannot add one (there is no CreateMountTarget)",
                    spec.subnet
                ),
            )
            .with_request_id(a.request_id.clone()));
        };
        Ok(MountTarget {
            id: t.get("MountTargetId").text(),
            address: t.get("IpAddress").text(),
            // NFSv4 mounts the root; `FSID` is the root of NFSv3 paths only.
            path: "/".into(),
            // MountInfo.LifeCycleState: "creating：创建中；available：运行中；deleting：删除中；create_failed： 创建失败".
            ready: t.get("LifeCycleState").text() == "available",
        })
    }

    async fn delete_file_system(&self, region: &str, id: &str) -> Result<(), CloudError> {
        // `ResourceNotFound.FileSystemNotFound` is NotFound (the classifier). DeleteCfsFileSystem's doc asks
        // for DeleteMountTarget first, an action v20190719 does not have: the mount target goes with it.
        self.call(CFS, region, "DeleteCfsFileSystem", json!({ "FileSystemId": id })).await.map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fs_spec(tier: FsTier) -> FsSpec {
        FsSpec {
            region: "ap-guangzhou".into(),
            zone: "ap-guangzhou-3".into(),
            name: "dep-train".into(),
            tier,
            vpc: "vpc-1".into(),
            subnet: "subnet-1".into(),
            tags: [("gpuctl-deployment".to_string(), "dep".to_string())].into(),
            client_token: "tok".into(),
        }
    }

    #[test]
    fn file_systems_are_made_in_the_subnet_with_their_tier() {
        assert_eq!(
            create_fs_body(&fs_spec(FsTier::Performance)),
            json!({
                "Zone": "ap-guangzhou-3", "NetInterface": "VPC", "PGroupId": "pgroupbasic", "Protocol": "NFS",
                "StorageType": "HP", "VpcId": "vpc-1", "SubnetId": "subnet-1", "FsName": "dep-train",
                "ResourceTags": [{ "TagKey": "gpuctl-deployment", "TagValue": "dep" }], "ClientToken": "tok",
            })
        );
        assert_eq!(create_fs_body(&fs_spec(FsTier::Capacity))["StorageType"], "SD");
    }

    #[test]
    fn only_hcc_types_take_an_hpc_cluster() {
        for (t, want) in [
            ("HCCPNV4h.32XLARGE512", true),
            ("HCCG5v.24XLARGE384", true),
            ("GT4.41XLARGE948", false),
            ("GN7.2XLARGE32", false),
            ("BMGN7.28XLARGE384", false),
        ] {
            assert_eq!(is_hpc_type(t), want, "{t}");
        }
    }

    #[test]
    fn states_map_to_the_engines_words() {
        for (s, want) in [
            ("creating", FsState::Creating),
            ("mounting", FsState::Creating),
            ("available", FsState::Available),
            ("create_failed", FsState::Failed),
            ("deleting", FsState::Deleting),
            ("upgrading", FsState::Other("upgrading".into())),
        ] {
            assert_eq!(fs_state(s), want, "{s}");
        }
    }
}
