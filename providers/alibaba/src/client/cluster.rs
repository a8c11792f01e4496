//! A cluster's placement and shared file system (issue 14): ECS deployment sets (`Strategy=LowLatency`)
//! and NAS (API 2017-06-26, its own host) General-purpose NFS file systems with one mount target in the
//! cluster's vSwitch. Parameter names: alibabacloud_ecs20140526 7.11.8 and alibabacloud_nas20170626
//! 3.7.5 request models (`crate::api::deployment_set`, `crate::api::nas`).

use std::collections::BTreeMap;

use gpuctl_cloud::cloud::{
    CloudError, ErrorKind, FileSystem, FsSpec, FsState, FsTier, MountTarget, PlacementKind, PlacementSpec,
};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::send::Answer;
use gpuctl_cloud::services::Clusters;
use gpuctl_cloud::{BillingMode, Provider};

use super::ecs::{kv, tag_params};
use super::Client;
use crate::api::deployment_set::{
    codes as ds, family_of, set_name, CREATE_DEPLOYMENT_SET, DELETE_DEPLOYMENT_SET, DESCRIBE_DEPLOYMENT_SETS,
    LOW_LATENCY, PAGE_MAX as SET_PAGE_MAX, SUPPORTED_FAMILIES,
};
use crate::api::nas::{
    codes as nas, CREATE_FILE_SYSTEM, CREATE_MOUNT_TARGET, DEFAULT_ACCESS_GROUP, DELETE_FILE_SYSTEM,
    DELETE_MOUNT_TARGET, DESCRIBE_FILE_SYSTEMS, DESCRIBE_MOUNT_TARGETS, FS_PENDING, FS_RUNNING, FS_STOPPED,
    FS_TYPE_STANDARD, MOUNT_ACTIVE, NETWORK_VPC, PAGE_MAX as NAS_PAGE_MAX,
};

/// NAS `StorageType` of a standard file system for each tier (通用型 容量型 / 性能型).
fn storage_type(tier: FsTier) -> &'static str {
    match tier {
        FsTier::Capacity => "Capacity",
        FsTier::Performance => "Performance",
    }
}

/// NAS `Status`: `Pending` covers create and delete alike ("create/start/stop/delete in progress").
fn fs_state(status: &str) -> FsState {
    match status {
        FS_RUNNING => FsState::Available,
        FS_PENDING => FsState::Creating,
        FS_STOPPED => FsState::Other(status.into()),
        other => FsState::Other(other.into()),
    }
}

fn file_system_of(f: &Field) -> FileSystem {
    let tags: BTreeMap<String, String> = f
        .get("Tags")
        .get("Tag")
        .items()
        .iter()
        .map(|t| (t.get("Key").text(), t.get("Value").text()))
        .collect();
    FileSystem {
        id: f.get("FileSystemId").text(),
        name: f.get("Description").text(),
        zone: f.get("ZoneId").opt_text(),
        state: fs_state(&f.get("Status").text()),
        tags,
    }
}

fn mount_target_of(m: &Field) -> MountTarget {
    let domain = m.get("MountTargetDomain").text();
    MountTarget {
        id: domain.clone(),
        address: domain,
        path: "/".into(),
        ready: m.get("Status").value() == MOUNT_ACTIVE,
    }
}

/// An answer's id field, or the cloud's answer was not what its model says.
fn id_of(a: &Answer, action: &str, field: &str) -> Result<String, CloudError> {
    a.get(field).text_required().map_err(|missing| {
        CloudError::bad_response(
            Provider::Alibaba,
            action,
            format!("{action} answered without an id ({missing})"),
        )
        .with_request_id(a.request_id.clone())
    })
}

/// The error, now retryable: the cloud refused for a state that passes (instances still leaving a
/// set, a file system not `Running` yet).
fn passing(mut e: CloudError) -> CloudError {
    e.kind = ErrorKind::Transient;
    e
}

impl Client {
    /// Every file system the account's NAS lists in `region` for these filters, page by page
    /// (`PageSize` "Valid values: 1 to 100").
    async fn file_systems(
        &self,
        region: &str,
        filter: Vec<(String, String)>,
    ) -> Result<Vec<FileSystem>, CloudError> {
        self.file_systems_as(region, filter, |f, _| file_system_of(f)).await
    }

    /// The same listing, each item read by `of` (the leftover listing, `leftover.rs`, reads the sizes
    /// and classes `file_system_of` does not).
    pub(super) async fn file_systems_as<T: Send>(
        &self,
        region: &str,
        filter: Vec<(String, String)>,
        of: fn(&Field, &str) -> T,
    ) -> Result<Vec<T>, CloudError> {
        page::all(Style::PageNumber, |at| {
            let mut p = filter.clone();
            p.extend([kv("PageNumber", at.number()), kv("PageSize", NAS_PAGE_MAX)]);
            async move {
                let a = self.call_nas(region, DESCRIBE_FILE_SYSTEMS, p).await?;
                let items =
                    a.get("FileSystems").get("FileSystem").items().iter().map(|f| of(f, region)).collect();
                Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
            }
        })
        .await
    }

    /// Every mount target of file system `id` (`PageSize` "Valid values: 1 to 100").
    async fn mount_targets(&self, region: &str, id: &str) -> Result<Vec<(MountTarget, String)>, CloudError> {
        page::all(Style::PageNumber, |at| async move {
            let p = vec![kv("FileSystemId", id), kv("PageNumber", at.number()), kv("PageSize", NAS_PAGE_MAX)];
            let a = self.call_nas(region, DESCRIBE_MOUNT_TARGETS, p).await?;
            let items = a
                .get("MountTargets")
                .get("MountTarget")
                .items()
                .iter()
                .map(|m| (mount_target_of(m), m.get("VswId").text()))
                .collect();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await
    }
}

impl Clusters for Client {
    const CLUSTER_PROVIDER: Provider = Provider::Alibaba;

    /// A LowLatency deployment set where DescribeDeploymentSetSupportedInstanceTypeFamily
    /// (`Strategy=LowLatency`) lists the type's family, and never for spot: "Deployment sets cannot
    /// hold spot (抢占式) instances" (the deployment-set limits page, docs/research/clusters.md §1).
    async fn placement_kind(
        &self,
        region: &str,
        instance_type: &str,
        billing: BillingMode,
    ) -> Result<Option<PlacementKind>, CloudError> {
        if billing == BillingMode::Spot {
            return Ok(None);
        }
        let a = self.call(region, SUPPORTED_FAMILIES, vec![kv("Strategy", LOW_LATENCY)]).await?;
        let families = a.get("InstanceTypeFamilies").text();
        let family = family_of(instance_type);
        Ok(families.split(',').any(|f| f.trim() == family).then_some(PlacementKind::LowLatencySet))
    }

    /// The LowLatency set named like `spec` (DescribeDeploymentSets by `DeploymentSetName` and
    /// `Strategy`, `PageSize` "Maximum value: 50"; the name is matched again here).
    async fn find_placement(&self, spec: &PlacementSpec) -> Result<Option<String>, CloudError> {
        let name = set_name(&spec.name);
        let name = name.as_str();
        let found = page::all(Style::PageNumber, |at| {
            let p = vec![
                kv("DeploymentSetName", name),
                kv("Strategy", LOW_LATENCY),
                kv("PageNumber", at.number()),
                kv("PageSize", SET_PAGE_MAX),
            ];
            async move {
                let a = self.call(&spec.region, DESCRIBE_DEPLOYMENT_SETS, p).await?;
                let items = a
                    .get("DeploymentSets")
                    .get("DeploymentSet")
                    .items()
                    .iter()
                    .filter(|s| s.get("DeploymentSetName").value() == name)
                    .filter_map(|s| s.get("DeploymentSetId").opt_text())
                    .collect::<Vec<_>>();
                Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
            }
        })
        .await?;
        Ok(found.into_iter().next())
    }

    /// CreateDeploymentSet (`RegionId`, `Strategy=LowLatency`, `DeploymentSetName` "2 to 128
    /// characters ... must start with a letter": `set_name` makes gpuctl's names so, `ClientToken`).
    async fn create_placement(&self, spec: &PlacementSpec) -> Result<String, CloudError> {
        let p = vec![
            kv("Strategy", LOW_LATENCY),
            kv("DeploymentSetName", set_name(&spec.name)),
            kv("Description", format!("gpuctl: the nodes of cluster {} in {}", spec.name, spec.zone)),
            kv("ClientToken", &spec.client_token),
        ];
        let a = self.call(&spec.region, CREATE_DEPLOYMENT_SET, p).await?;
        id_of(&a, CREATE_DEPLOYMENT_SET, "DeploymentSetId")
    }

    /// DeleteDeploymentSet. `DependencyViolation.NotEmpty` (instances remain: they are still being
    /// released) is retryable; an unknown set is `NotFound` (the `.NotFound` codes).
    async fn delete_placement(&self, region: &str, _kind: PlacementKind, id: &str) -> Result<(), CloudError> {
        match self.call(region, DELETE_DEPLOYMENT_SET, vec![kv("DeploymentSetId", id)]).await {
            Ok(_) => Ok(()),
            Err(e) if e.code == ds::NOT_EMPTY => Err(passing(e)),
            Err(e) => Err(e),
        }
    }

    /// The standard file system tagged like `spec` whose `Description` is its name.
    async fn find_file_system(&self, spec: &FsSpec) -> Result<Option<FileSystem>, CloudError> {
        let name = set_name(&spec.name);
        let mut filter = vec![kv("FileSystemType", FS_TYPE_STANDARD)];
        filter.extend(tag_params(&spec.tags));
        let found = self.file_systems(&spec.region, filter).await?;
        Ok(found.into_iter().find(|f| f.name == name))
    }

    /// CreateFileSystem: standard, NFS, `StorageType` Capacity or Performance, in `spec.zone`, named by
    /// its `Description` ("2 to 128 characters ... must start with a letter"), tagged, with a
    /// `ClientToken`.
    async fn create_file_system(&self, spec: &FsSpec) -> Result<String, CloudError> {
        let mut p = vec![
            kv("FileSystemType", FS_TYPE_STANDARD),
            kv("ProtocolType", "NFS"),
            kv("StorageType", storage_type(spec.tier)),
            kv("ZoneId", &spec.zone),
            kv("Description", set_name(&spec.name)),
            kv("ClientToken", &spec.client_token),
        ];
        p.extend(tag_params(&spec.tags));
        let a = self.call_nas(&spec.region, CREATE_FILE_SYSTEM, p).await?;
        id_of(&a, CREATE_FILE_SYSTEM, "FileSystemId")
    }

    async fn file_system(&self, region: &str, id: &str) -> Result<Option<FileSystem>, CloudError> {
        match self.file_systems(region, vec![kv("FileSystemId", id)]).await {
            Ok(found) => Ok(found.into_iter().find(|f| f.id == id)),
            Err(e) if e.kind == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// The mount target in `spec.subnet`, or a new one there (CreateMountTarget: `NetworkType=Vpc`,
    /// `VpcId`, `VSwitchId`, `AccessGroupName` the default VPC group). It is ready when `Active`; a
    /// file system not `Running` yet is refused with `Instance.IncorrectStatus`, retryable.
    async fn mount_target(&self, spec: &FsSpec, fs_id: &str) -> Result<MountTarget, CloudError> {
        let held = self.mount_targets(&spec.region, fs_id).await?;
        if let Some((m, _)) = held.into_iter().find(|(_, vsw)| *vsw == spec.subnet) {
            return Ok(m);
        }
        let p = vec![
            kv("FileSystemId", fs_id),
            kv("NetworkType", NETWORK_VPC),
            kv("VpcId", &spec.vpc),
            kv("VSwitchId", &spec.subnet),
            kv("AccessGroupName", DEFAULT_ACCESS_GROUP),
        ];
        let a = match self.call_nas(&spec.region, CREATE_MOUNT_TARGET, p).await {
            Ok(a) => a,
            Err(e) if e.code == nas::INCORRECT_STATUS => return Err(passing(e)),
            Err(e) => return Err(e),
        };
        let domain = id_of(&a, CREATE_MOUNT_TARGET, "MountTargetDomain")?;
        Ok(MountTarget { id: domain.clone(), address: domain, path: "/".into(), ready: false })
    }

    /// Every mount target (DeleteMountTarget), then the file system (DeleteFileSystem).
    async fn delete_file_system(&self, region: &str, id: &str) -> Result<(), CloudError> {
        for (m, _) in self.mount_targets(region, id).await? {
            let p = vec![kv("FileSystemId", id), kv("MountTargetDomain", &m.id)];
            match self.call_nas(region, DELETE_MOUNT_TARGET, p).await {
                Ok(_) => {}
                Err(e) if e.kind == ErrorKind::NotFound && e.code == nas::MOUNT_TARGET_NOT_FOUND => {}
                Err(e) => return Err(e),
            }
        }
        self.call_nas(region, DELETE_FILE_SYSTEM, vec![kv("FileSystemId", id)]).await.map(|_| ())
    }
}
