//! CFS's own wire facts (tccli 3.1.189.1 `tccli/services/cfs/v20190719/api.json`): the operations
//! gpuctl uses for a cluster's shared file system (issue 14). There is no CreateMountTarget or
//! DeleteMountTarget in v20190719: the mount target is made with the file system.

/// The CFS operations gpuctl uses.
pub const CFS_ACTIONS: &[&str] =
    &["CreateCfsFileSystem", "DescribeCfsFileSystems", "DescribeMountTargets", "DeleteCfsFileSystem"];

/// The default permission group: "pgroupbasic 为【默认权限组】，【默认权限组】允许所有IP地址访问及读写权限"
/// (CreateCfsFileSystemRequest.PGroupId).
pub const DEFAULT_PGROUP: &str = "pgroupbasic";

/// `StorageType` values: "SD： 通用标准型 … HP： 通用性能型 … TB： Turbo标准型 … TP： Turbo性能型 … THP： 吞吐型"
/// (CreateCfsFileSystemRequest.StorageType, default SD).
pub const STORAGE_TYPES: &[&str] = &["SD", "HP", "TB", "TP", "THP"];
/// `Protocol` values: NFS, CIFS, TURBO, default NFS (CreateCfsFileSystemRequest.Protocol).
pub const PROTOCOLS: &[&str] = &["NFS", "CIFS", "TURBO"];
/// `NetInterface` values: VPC, CCN (CreateCfsFileSystemRequest.NetInterface).
pub const NET_INTERFACES: &[&str] = &["VPC", "CCN"];

/// Longest `FsName`: "用户自定义名称过长（超过64字节)" (tencentcloud-sdk-python-cfs 3.1.178
/// `tencentcloud/cfs/v20190719/errorcodes.py` INVALIDPARAMETERVALUE_FSNAMELIMITEXCEEDED).
pub const FS_NAME_MAX: usize = 64;
/// How long a CreateCfsFileSystem `ClientToken` holds: "用于保证请求幂等性的字符串失效时间为2小时"
/// (CreateCfsFileSystemRequest.ClientToken).
pub const CLIENT_TOKEN_HOURS: i64 = 2;
