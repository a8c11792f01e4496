//! VPC's own wire facts (tccli 3.1.189.1 `tccli/services/vpc/v20170312/api.json`): the operations
//! gpuctl uses for `network = "auto"` (issue 13).

/// The VPC operations gpuctl uses.
pub const VPC_ACTIONS: &[&str] = &[
    "CreateVpc",
    "DescribeVpcs",
    "DeleteVpc",
    "CreateSubnet",
    "DescribeSubnets",
    "DeleteSubnet",
    "CreateSecurityGroup",
    "DescribeSecurityGroups",
    "DeleteSecurityGroup",
    "CreateSecurityGroupPolicies",
    "DescribeSecurityGroupPolicies",
    // issue 15: elastic IPs bound to nothing, and their release.
    "DescribeAddresses",
    "ReleaseAddresses",
];
