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
];

/// Instance states (`Instance.InstanceState`).
pub mod states {
    pub const PENDING: &str = "PENDING";
    pub const RUNNING: &str = "RUNNING";
    pub const SHUTDOWN: &str = "SHUTDOWN";
    pub const TERMINATING: &str = "TERMINATING";
}

/// `InstanceChargeType` values.
pub mod charge {
    pub const POSTPAID_BY_HOUR: &str = "POSTPAID_BY_HOUR";
    pub const PREPAID: &str = "PREPAID";
    pub const SPOTPAID: &str = "SPOTPAID";
}
