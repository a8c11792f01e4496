//! Tencent Cloud wire facts shared by the client and the emulator: what both services share here
//! (version, envelope, error codes), each service's own facts in `cvm.rs` / `cbs.rs`. Sources: the official Python SDK
//! (tencentcloud-sdk-python-cvm 3.1.178 / -cbs 3.1.175: `models.py`, `errorcodes.py`) and
//! https://www.tencentcloud.com/document/product/213/33281 (common error shape).

pub mod billing;
pub mod cbs;
pub mod cfs;
pub mod cvm;
pub mod monitor;
pub mod vpc;

use serde::{Deserialize, Serialize};

/// `X-TC-Version` of both CVM and CBS.
pub const VERSION: &str = "2017-03-12";
/// Services in the TC3 credential scope (also the host prefix: `cvm.tencentcloudapi.com`).
pub const CVM: &str = "cvm";
pub const CBS: &str = "cbs";
/// VPC (also 2017-03-12: tccli 3.1.189.1 `tccli/services/vpc/v20170312`): the networks of `network = "auto"`.
pub const VPC: &str = "vpc";
/// CFS, the shared file systems of a cluster (issue 14): its own version (tccli 3.1.189.1
/// `tccli/services/cfs/v20190719/api.json` metadata.apiVersion) and host `cfs.tencentcloudapi.com`.
pub const CFS: &str = "cfs";
pub const CFS_VERSION: &str = "2019-07-19";
/// Billing (issue 15): its own version and host `billing.tencentcloudapi.com` (tccli 3.1.189.1
/// `tccli/services/billing/v20180709/api.json` metadata.apiVersion).
pub const BILLING: &str = "billing";
pub const BILLING_VERSION: &str = "2018-07-09";
/// Cloud Monitor (issue 15): its own version and host `monitor.tencentcloudapi.com` (tccli 3.1.189.1
/// `tccli/services/monitor/v20180724/api.json` metadata.apiVersion).
pub const MONITOR: &str = "monitor";
pub const MONITOR_VERSION: &str = "2018-07-24";
/// Most a request's `X-TC-Timestamp` may be off the server clock.
pub const MAX_SKEW_SECS: i64 = 300;
/// Longest accepted `ClientToken`.
pub const CLIENT_TOKEN_MAX: usize = 64;

/// The API host of a service: `cvm.tencentcloudapi.com` (the region travels in `X-TC-Region`).
pub fn endpoint(service: &str) -> String {
    format!("{service}.tencentcloudapi.com")
}

/// `X-TC-Version` of `service`: CFS has its own, the others share [`VERSION`].
pub fn version(service: &str) -> &'static str {
    if service == CFS {
        CFS_VERSION
    } else if service == MONITOR {
        MONITOR_VERSION
    } else if service == BILLING {
        BILLING_VERSION
    } else {
        VERSION
    }
}

/// The operations gpuctl uses, by service (each service's own facts live in its file).
pub use billing::BILLING_ACTIONS;
pub use cbs::CBS_ACTIONS;
pub use cfs::CFS_ACTIONS;
pub use cvm::{charge, is_hpc_type, states, CVM_ACTIONS};
pub use monitor::MONITOR_ACTIONS;
pub use vpc::VPC_ACTIONS;

/// `{"Response":{"Error":{"Code","Message"},"RequestId"}}`, always with HTTP 200.
#[derive(Clone, Debug, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "PascalCase")]
pub struct ErrorBody {
    pub code: String,
    pub message: String,
}

/// Error codes (each cloud's own spelling; the classifier on the client side keys on these).
pub mod codes {
    // Auth (common error codes).
    pub const AUTH_INVALID_AUTHORIZATION: &str = "AuthFailure.InvalidAuthorization";
    pub const AUTH_SIGNATURE_FAILURE: &str = "AuthFailure.SignatureFailure";
    pub const AUTH_SIGNATURE_EXPIRE: &str = "AuthFailure.SignatureExpire";
    pub const AUTH_SECRET_ID_NOT_FOUND: &str = "AuthFailure.SecretIdNotFound";
    // Request shape (common).
    pub const INVALID_ACTION: &str = "InvalidAction";
    pub const NO_SUCH_VERSION: &str = "NoSuchVersion";
    pub const UNSUPPORTED_REGION: &str = "UnsupportedRegion";
    pub const MISSING_PARAMETER: &str = "MissingParameter";
    pub const UNKNOWN_PARAMETER: &str = "UnknownParameter";
    pub const INVALID_PARAMETER: &str = "InvalidParameter";
    pub const INVALID_PARAMETER_VALUE: &str = "InvalidParameterValue";
    pub const INVALID_FILTER: &str = "InvalidFilter";
    pub const DRY_RUN_OPERATION: &str = "DryRunOperation";
    pub const INTERNAL_ERROR: &str = "InternalError";
    // Throttling: the codes the SDK's own retryer retries (tencentcloud/common/retry.py).
    pub const REQUEST_LIMIT_EXCEEDED: &str = "RequestLimitExceeded";
    // CVM.
    pub const INVALID_CLIENT_TOKEN_TOO_LONG: &str = "InvalidClientToken.TooLong";
    pub const INVALID_INSTANCE_ID_MALFORMED: &str = "InvalidInstanceId.Malformed";
    pub const INVALID_INSTANCE_ID_NOT_FOUND: &str = "InvalidInstanceId.NotFound";
    pub const INVALID_IMAGE_ID_MALFORMED: &str = "InvalidImageId.Malformed";
    pub const INVALID_IMAGE_ID_NOT_FOUND: &str = "InvalidImageId.NotFound";
    pub const INVALID_ZONE_MISMATCH_REGION: &str = "InvalidZone.MismatchRegion";
    pub const INSTANCE_TYPE_NOT_FOUND: &str = "InvalidParameterValue.InstanceTypeNotFound";
    pub const INVALID_TIME_FORMAT: &str = "InvalidParameterValue.InvalidTimeFormat";
    pub const VALUE_RANGE: &str = "InvalidParameterValue.Range";
    pub const INSUFFICIENT_PRICE: &str = "InvalidParameterValue.InsufficientPrice";
    /// tencentcloud-sdk-python-cvm 3.1.178 tencentcloud/cvm/v20170312/errorcodes.py: 公网IP已售罄.
    pub const EIP_INSUFFICIENT: &str = "ResourcesSoldOut.EipInsufficient";
    /// Same file: 表示参数组合不正确.
    pub const INVALID_PARAMETER_COMBINATION: &str = "InvalidParameterCombination";
    pub const ZONE_SOLD_OUT_FOR_SPECIFIED_INSTANCE: &str =
        "ResourceInsufficient.ZoneSoldOutForSpecifiedInstance";
    pub const INSTANCE_STATE_TERMINATING: &str = "UnsupportedOperation.InstanceStateTerminating";
    // CVM key pairs (tencentcloud-sdk-python-cvm 3.1.178, `tencentcloud/cvm/v20170312/errorcodes.py`).
    pub const INVALID_KEY_PAIR_ID_MALFORMED: &str = "InvalidKeyPairId.Malformed";
    pub const INVALID_KEY_PAIR_ID_NOT_FOUND: &str = "InvalidKeyPairId.NotFound";
    pub const INVALID_KEY_PAIR_NAME_DUPLICATE: &str = "InvalidKeyPairName.Duplicate";
    pub const INVALID_KEY_PAIR_NAME_EMPTY: &str = "InvalidKeyPairNameEmpty";
    pub const INVALID_KEY_PAIR_NAME_ILLEGAL_CHAR: &str = "InvalidKeyPairNameIncludeIllegalChar";
    pub const INVALID_KEY_PAIR_NAME_TOO_LONG: &str = "InvalidKeyPairNameTooLong";
    pub const INVALID_PROJECT_ID_NOT_FOUND: &str = "InvalidProjectId.NotFound";
    pub const INVALID_PUBLIC_KEY_DUPLICATE: &str = "InvalidPublicKey.Duplicate";
    pub const INVALID_PUBLIC_KEY_MALFORMED: &str = "InvalidPublicKey.Malformed";
    // VPC (tencentcloud-sdk-python 3.1.195 `tencentcloud/vpc/v20170312/errorcodes.py`).
    /// 资源被占用: a VPC that still has subnets, a subnet with instances, a group in use.
    pub const RESOURCE_IN_USE: &str = "ResourceInUse";
    /// 资源不存在.
    pub const RESOURCE_NOT_FOUND: &str = "ResourceNotFound";
    /// 指定CIDR存在重叠.
    pub const CIDR_CONFLICT: &str = "InvalidParameterValue.CidrConflict";
    /// 子网CIDR冲突.
    pub const SUBNET_CONFLICT: &str = "InvalidParameterValue.SubnetConflict";
    /// 子网CIDR不合法.
    pub const SUBNET_RANGE: &str = "InvalidParameterValue.SubnetRange";
    /// 入参格式不合法.
    pub const MALFORMED: &str = "InvalidParameterValue.Malformed";
    /// 超过配额限制.
    pub const LIMIT_EXCEEDED: &str = "LimitExceeded";
    /// 无效的安全组,安全组实例ID不存在.
    pub const SECURITY_GROUP_NOT_FOUND: &str = "InvalidSecurityGroupID.NotFound";
    /// 无效的安全组,安全组实例ID不合法.
    pub const SECURITY_GROUP_MALFORMED: &str = "InvalidSecurityGroupID.Malformed";
    /// 入参重复.
    pub const DUPLICATE: &str = "InvalidParameterValue.Duplicate";
    // CBS.
    pub const INVALID_DISK_ID_NOT_FOUND: &str = "InvalidDiskId.NotFound";
    /// 云硬盘已挂载至其他云服务器上 (cbs errorcodes.py): TerminateDisks of an attached disk.
    pub const DISK_ATTACHED: &str = "ResourceUnavailable.Attached";
    /// 指定的EIP不存在 (vpc errorcodes.py).
    pub const INVALID_ADDRESS_ID_NOT_FOUND: &str = "InvalidAddressId.NotFound";
    /// 该地址状态不支持此操作 (vpc errorcodes.py): ReleaseAddresses of an address that is not UNBIND.
    pub const ADDRESS_STATUS_NOT_PERMIT: &str = "UnsupportedOperation.AddressStatusNotPermit";
    pub const DISK_NOT_SUPPORT_SNAPSHOT: &str = "InvalidDisk.NotSupportSnapshot";
    pub const INVALID_SNAPSHOT_ID_NOT_FOUND: &str = "InvalidSnapshotId.NotFound";
    pub const SNAPSHOT_NOT_SUPPORTED: &str = "InvalidSnapshot.NotSupported";
    pub const INVALID_POLICY_ID_NOT_FOUND: &str = "InvalidAutoSnapshotPolicyId.NotFound";
    /// CBS's code for a ClientToken problem; CVM documents no dedicated code for a token reused with
    /// other parameters, so the emulator answers this one there too *(unverified for CVM)*.
    pub const INVALID_CLIENT_TOKEN: &str = "InvalidParameter.InvalidClientToken";
    // CVM HPC clusters (tencentcloud-sdk-python-cvm 3.1.178 `tencentcloud/cvm/v20170312/errorcodes.py`).
    /// 高性能计算实例需指定对应的高性能计算集群.
    pub const HPC_REQUIRED: &str = "InvalidParameterValue.InstanceTypeRequiredHpcCluster";
    /// 实例类型不可加入高性能计算集群.
    pub const HPC_NOT_SUPPORTED: &str = "InvalidParameterValue.InstanceTypeNotSupportHpcCluster";
    /// 您的高性能计算集群已经绑定其他可用区，不能购买当前可用区机器.
    pub const HPC_ZONE_MISMATCH: &str = "InvalidParameterValue.HpcClusterIdZoneIdNotMatch";
    /// 非CDC场景不支持HpcClusterBusinessId.
    pub const HPC_BUSINESS_ID_NOT_SUPPORTED: &str = "InvalidParameterValue.HpcClusterBusinessIdNotSupported";
    /// 高性能计算集群不存在.
    pub const HPC_NOT_FOUND: &str = "ResourceNotFound.HpcCluster";
    /// 高性能计算集群使用中.
    pub const HPC_IN_USE: &str = "ResourceInUse.HpcCluster";
    // CFS (tencentcloud-sdk-python-cfs 3.1.178 `tencentcloud/cfs/v20190719/errorcodes.py`).
    /// 用于保证请求幂等性的字符串长度超过限制（不能超过64字节）.
    pub const CFS_CLIENT_TOKEN_TOO_LONG: &str = "InvalidParameterValue.ClientTokenLimitExceeded";
    /// 用于保证请求幂等性的字符串错误.
    pub const CFS_INVALID_CLIENT_TOKEN: &str = "InvalidParameterValue.InvalidClientToken";
    /// 资源正在创建中.
    pub const CFS_CLIENT_TOKEN_IN_USE: &str = "FailedOperation.ClientTokenInUse";
    /// 用户自定义名称过长（超过64字节).
    pub const CFS_FS_NAME_TOO_LONG: &str = "InvalidParameterValue.FsNameLimitExceeded";
    /// 无效的网络类型.
    pub const CFS_INVALID_NET_INTERFACE: &str = "InvalidParameterValue.InvalidNetInterface";
    /// 协议参数错误.
    pub const CFS_INVALID_PROTOCOL: &str = "InvalidParameterValue.InvalidProtocol";
    /// 存储类型参数错误.
    pub const CFS_INVALID_STORAGE_TYPE: &str = "InvalidParameterValue.InvalidStorageType";
    /// 权限组ID无效.
    pub const CFS_INVALID_PGROUP_ID: &str = "InvalidParameterValue.InvalidPgroupId";
    /// 权限组不存在.
    pub const CFS_PGROUP_NOT_FOUND: &str = "ResourceNotFound.PgroupNotFound";
    /// 无效的VPCID.
    pub const CFS_INVALID_VPC_ID: &str = "InvalidParameterValue.InvalidVpcId";
    /// 无效的子网ID.
    pub const CFS_INVALID_SUBNET_ID: &str = "InvalidParameterValue.InvalidSubnetId";
    /// VPC参数错误.
    pub const CFS_INVALID_VPC_PARAMETER: &str = "InvalidParameterValue.InvalidVpcParameter";
    /// VPCID和UNVPCID不能同时为空.
    pub const CFS_MISSING_VPC_ID: &str = "InvalidParameterValue.MissingVpcidOrUnvpcid";
    /// SUBNETID和UNSUBNETID不能同时为空.
    pub const CFS_MISSING_SUBNET_ID: &str = "InvalidParameterValue.MissingSubnetidOrUnsubnetid";
    /// 无效的可用区.
    pub const CFS_INVALID_ZONE: &str = "InvalidParameterValue.InvalidZoneId";
    /// 无效的容量值.
    pub const CFS_INVALID_TURBO_CAPACITY: &str = "InvalidParameterValue.InvalidTurboCapacity";
    /// 标签键重复.
    pub const CFS_DUPLICATED_TAG_KEY: &str = "InvalidParameterValue.DuplicatedTagKey";
    /// FileSystemId无效.
    pub const CFS_INVALID_FILE_SYSTEM_ID: &str = "InvalidParameterValue.InvalidFileSystemId";
    /// 无效的文件系统状态.
    pub const CFS_INVALID_FS_STATUS: &str = "InvalidParameterValue.InvalidFsStatus";
    /// 该文件系统不存在.
    pub const CFS_FILE_SYSTEM_NOT_FOUND: &str = "ResourceNotFound.FileSystemNotFound";
    /// 文件系统数量达到上限.
    pub const CFS_FILE_SYSTEM_LIMIT: &str = "ResourceInsufficient.FileSystemLimitExceeded";
}
