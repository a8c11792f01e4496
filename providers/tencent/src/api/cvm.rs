//! CVM's own wire facts (tencentcloud-sdk-python-cvm 3.1.178 `models.py`): the operations gpuctl
//! uses, instance states and charge types.

/// The CVM operations gpuctl uses.
pub const CVM_ACTIONS: &[&str] = &[
    "RunInstances",
    "DescribeInstances",
    "DescribeInstancesStatus",
    "TerminateInstances",
    "InquiryPriceRunInstances",
    "DescribeZoneInstanceConfigInfos",
    "CreateImage",
    "DescribeImages",
    "ImportKeyPair",
    "DescribeKeyPairs",
    // A cluster's placement (issue 14): tccli 3.1.189.1 `tccli/services/cvm/v20170312/api.json`.
    "CreateHpcCluster",
    "DescribeHpcClusters",
    "DeleteHpcClusters",
    // The node agent's idle stop (issue 15): its role credentials call it, not the CLI.
    "StopInstances",
];

/// Whether `instance_type` is a high-performance computing (HCC) type: RunInstancesRequest.HpcClusterId
/// says "若创建的实例为高性能计算实例，需指定实例放置的集群，否则不可指定" (tccli 3.1.189.1
/// `tccli/services/cvm/v20170312/api.json`), but no definition lists which types those are. The rule
/// "the family (before the dot) starts with `HCC`" (HCCG5v, HCCPNV4h, HCCPNV4s, HCCPNV5*, HCCPNV6) is an
/// inference from the catalog's family names, unverified (docs/research/clusters.md §1, Tencent).
pub fn is_hpc_type(instance_type: &str) -> bool {
    instance_type.split('.').next().is_some_and(|family| family.starts_with("HCC"))
}

/// Instance states (`Instance.InstanceState`).
pub mod states {
    pub const PENDING: &str = "PENDING";
    pub const RUNNING: &str = "RUNNING";
    pub const SHUTDOWN: &str = "SHUTDOWN";
    pub const TERMINATING: &str = "TERMINATING";
    pub const STOPPING: &str = "STOPPING";
    pub const STOPPED: &str = "STOPPED";
}

/// `InstanceChargeType` values.
pub mod charge {
    pub const POSTPAID_BY_HOUR: &str = "POSTPAID_BY_HOUR";
    pub const PREPAID: &str = "PREPAID";
    pub const SPOTPAID: &str = "SPOTPAID";
}
