//! VPC (API 2016-04-28) and the ECS security-group listing: what an instance's network is made of, as
//! both sides name it. Sources: alibabacloud_vpc20160428 7.2.2 `models/_describe_vswitches_request.py`
//! (`RegionId`, `ZoneId`, `IsDefault`, `VpcId`, `PageNumber`, `PageSize` "Maximum value: **50**") and
//! `models/_describe_vswitches_response_body.py` (`VSwitches.VSwitch[]`: `VSwitchId`, `VpcId`, `ZoneId`,
//! `IsDefault`, `Status`, ...); alibabacloud_ecs20140526 7.11.8
//! `models/_describe_security_groups_request.py` (`VpcId`, `NetworkType`, `MaxResults` "Maximum value:
//! 100", `NextToken`) and `_describe_security_groups_response_body.py` (`SecurityGroups.SecurityGroup[]`).

/// `x-acs-version` of the VPC API (alibabacloud_vpc20160428 7.2.2 `client.py`: `version = '2016-04-28'`).
pub const VPC_API_VERSION: &str = "2016-04-28";

pub const DESCRIBE_VSWITCHES: &str = "DescribeVSwitches";
pub const DESCRIBE_SECURITY_GROUPS: &str = "DescribeSecurityGroups";

/// DescribeVSwitches pages by `PageNumber`/`PageSize` only, at most 50 a page.
pub const VSWITCH_PAGE_MAX: u32 = 50;

/// A vSwitch ready for instances (`Status`: `Pending` or `Available`).
pub const VSWITCH_AVAILABLE: &str = "Available";

/// The VPC API's regional host (alibabacloud_vpc20160428 7.2.2 `client.py`: `_endpoint_rule =
/// 'regional'`, product `vpc`: `vpc.<region>.aliyuncs.com`; its endpoint map sends cn-hangzhou, of
/// the regions gpuctl sells in, to `vpc.aliyuncs.com`).
pub fn vpc_host(region: &str) -> String {
    match region {
        "cn-hangzhou" => "vpc.aliyuncs.com".into(),
        r => format!("vpc.{r}.aliyuncs.com"),
    }
}
