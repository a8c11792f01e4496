//! NAS (API 2017-06-26, RPC style): the shared file system of a cluster (issue 14), as both sides name
//! it. NAS has its own host and no `RegionId` parameter in any request model gpuctl sends: the region
//! travels in the host (alibabacloud_nas20170626 3.7.5 `models/_create_file_system_request.py`,
//! `_describe_file_systems_request.py`, `_create_mount_target_request.py`,
//! `_describe_mount_targets_request.py`, `_delete_mount_target_request.py`,
//! `_delete_file_system_request.py`: none has `RegionId`).

/// `x-acs-version` of the NAS API (alibabacloud_nas20170626 3.7.5 `client.py`: `version = '2017-06-26'`).
pub const NAS_API_VERSION: &str = "2017-06-26";

pub const CREATE_FILE_SYSTEM: &str = "CreateFileSystem";
pub const DESCRIBE_FILE_SYSTEMS: &str = "DescribeFileSystems";
pub const DELETE_FILE_SYSTEM: &str = "DeleteFileSystem";
pub const CREATE_MOUNT_TARGET: &str = "CreateMountTarget";
pub const DESCRIBE_MOUNT_TARGETS: &str = "DescribeMountTargets";
pub const DELETE_MOUNT_TARGET: &str = "DeleteMountTarget";

/// DescribeFileSystems and DescribeMountTargets page by `PageNumber`/`PageSize`: "Valid values: 1 to
/// 100. Default value: 10." (`_describe_file_systems_request.py`, `_describe_mount_targets_request.py`).
pub const PAGE_MAX: u32 = 100;

/// `FileSystemType` "standard: General-purpose NAS file system. This is the default value."
pub const FS_TYPE_STANDARD: &str = "standard";
/// `StorageType` of a standard file system: "valid values are Performance, Capacity, Premium, and
/// Agentic" (`_create_file_system_request.py`).
pub const STANDARD_STORAGE_TYPES: [&str; 4] = ["Performance", "Capacity", "Premium", "Agentic"];
/// The default permission group of a VPC mount target (`_create_mount_target_request.py`
/// `AccessGroupName`: "Default permission group: DEFAULT_VPC_GROUP_NAME").
pub const DEFAULT_ACCESS_GROUP: &str = "DEFAULT_VPC_GROUP_NAME";
/// `NetworkType`: "Set the value to **Vpc**".
pub const NETWORK_VPC: &str = "Vpc";

/// File system `Status`: `Pending` (being created, started, stopped or deleted), `Running`
/// (mountable), `Stopped`; mount target `Status`: `Pending`, `Active` (mountable), `Inactive`
/// (https://help.aliyun.com/zh/nas/nas-statuses, read 2026-12-04; docs/research/clusters.md §2).
pub const FS_PENDING: &str = "Pending";
pub const FS_RUNNING: &str = "Running";
pub const FS_STOPPED: &str = "Stopped";
pub const MOUNT_PENDING: &str = "Pending";
pub const MOUNT_ACTIVE: &str = "Active";

/// NAS's error codes, in its spelling (NAS error centre,
/// https://help.aliyun.com/zh/nas/developer-reference/api-nas-2017-06-26-errorcodes and
/// https://www.alibabacloud.com/help/doc-detail/62603.htm, read 2026-12-04; which action answers
/// which is *unverified*).
pub mod codes {
    pub const INVALID_STORAGE_TYPE: &str = "InvalidParameter.StorageType";
    pub const MISSING_VPC_ID: &str = "MissingParameter.VpcId";
    pub const MISSING_VSWITCH_ID: &str = "MissingParameter.VSwitchId";
    pub const ACCESS_GROUP_NOT_FOUND: &str = "InvalidAccessGroup.NotFound";
    pub const INCORRECT_STATUS: &str = "Instance.IncorrectStatus";
    /// *unverified*: an unknown FileSystemId / MountTargetDomain (the error centre's `.NotFound`
    /// spelling for NAS resources was not reached for these two).
    pub const FILE_SYSTEM_NOT_FOUND: &str = "InvalidFileSystem.NotFound";
    pub const MOUNT_TARGET_NOT_FOUND: &str = "InvalidMountTarget.NotFound";
}

/// The NAS API's regional host (alibabacloud_nas20170626 3.7.5 `client.py`: `_endpoint_rule =
/// 'regional'`, product `nas`; its endpoint map names only finance, government and internal regions,
/// none of which gpuctl sells in).
pub fn nas_host(region: &str) -> String {
    format!("nas.{region}.aliyuncs.com")
}
