//! The network an instance goes into when the spec says `network = "default"`: the zone's default
//! vSwitch (VPC DescribeVSwitches, API 2016-04-28) and a security group of its VPC (ECS
//! DescribeSecurityGroups). Every GPU family gpuctl sells on ECS is VPC-only, and RunInstances
//! requires both for a VPC instance (alibabacloud_ecs20140526 7.11.8
//! `models/_run_instances_request.py`: `v_switch_id` "If you create a VPC-type ECS instance, you must
//! specify a vSwitch ID"; `security_group_id` "If you do not specify LaunchTemplateId or
//! LaunchTemplateName ..., the security group ID is required"), so the client looks them up before
//! the create, once per zone a run, and refuses — before anything is bought — in a zone without one.

use std::collections::HashMap;

use gpuctl_cloud::cloud::{CloudError, ErrorKind};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::{NetworkIds, Provider};

use super::ecs::kv;
use super::Client;
use crate::api::vpc::{DESCRIBE_SECURITY_GROUPS, DESCRIBE_VSWITCHES, VSWITCH_AVAILABLE, VSWITCH_PAGE_MAX};

/// What each (region, zone) was found to hold: its default network, or none. Lookups are serialized
/// by the lock, so a pool's concurrent creates in one zone ask the cloud once.
pub(super) type Defaults = tokio::sync::Mutex<HashMap<(String, String), Result<NetworkIds, &'static str>>>;

/// gpuctl's own code for a zone where the account has no default network.
pub const NO_DEFAULT_NETWORK: &str = "no-default-network";

/// The refusal, naming the zone and what to write in the spec instead.
fn no_default(region: &str, zone: &str, what: &str) -> CloudError {
    CloudError::new(
        Provider::Alibaba,
        DESCRIBE_VSWITCHES,
        ErrorKind::Invalid,
        NO_DEFAULT_NETWORK,
        format!(
            "the account has {what} in zone {zone} ({region}), so `network = \"default\"` cannot place an \
             instance there; nothing was created. Set the pool's network.alibaba = {{ vpc = \"vpc-…\", \
             subnet = \"vsw-…\", security_groups = [\"sg-…\"] }} (a vSwitch in {zone}), or create a \
             default vSwitch in {zone} (VPC CreateDefaultVSwitch)"
        ),
    )
}

/// A vSwitch instances can go into: the zone's default, ready (`Status` Available).
fn usable(v: &Field, zone: &str) -> bool {
    v.get("ZoneId").value() == zone
        && v.get("IsDefault").value().as_bool() == Some(true)
        && v.get("Status").value() == VSWITCH_AVAILABLE
}

impl Client {
    /// The zone's default network: its default vSwitch, that vSwitch's VPC and a security group in it.
    /// Found once per zone and kept (a failed lookup is not kept: it is asked again next time).
    pub(super) async fn default_network(&self, region: &str, zone: &str) -> Result<NetworkIds, CloudError> {
        let mut known = self.defaults.lock().await;
        let key = (region.to_string(), zone.to_string());
        let found = match known.get(&key) {
            Some(found) => found.clone(),
            None => {
                let found = self.look_up(region, zone).await?;
                known.insert(key, found.clone());
                found
            }
        };
        found.map_err(|what| no_default(region, zone, what))
    }

    /// The zone's default network, or what it lacks.
    async fn look_up(
        &self,
        region: &str,
        zone: &str,
    ) -> Result<Result<NetworkIds, &'static str>, CloudError> {
        // DescribeVSwitches pages by PageNumber/PageSize only (alibabacloud_vpc20160428 7.2.2
        // `models/_describe_vswitches_request.py`); a zone has one default vSwitch, so one page.
        let vswitches = page::all(Style::PageNumber, |at| async move {
            let p = vec![
                kv("ZoneId", zone),
                kv("IsDefault", "true"),
                kv("PageNumber", at.number()),
                kv("PageSize", VSWITCH_PAGE_MAX),
            ];
            let a = self.call_vpc(region, DESCRIBE_VSWITCHES, p).await?;
            let items = a
                .get("VSwitches")
                .get("VSwitch")
                .items()
                .iter()
                .filter(|v| usable(v, zone))
                .map(|v| (v.get("VSwitchId").text(), v.get("VpcId").text()))
                .collect::<Vec<_>>();
            Ok(Page::counted(items, a.get("TotalCount").u64().unwrap_or(0)))
        })
        .await?;
        let Some((vswitch, vpc)) = vswitches.into_iter().find(|(id, vpc)| !id.is_empty() && !vpc.is_empty())
        else {
            return Ok(Err("no default vSwitch"));
        };
        // The default VPC's groups; a new account's default VPC holds one, the default group, and
        // the first listed is taken. MaxResults 10 is the model's least ("Maximum value: 100").
        let p = vec![kv("VpcId", &vpc), kv("NetworkType", "vpc"), kv("MaxResults", 10)];
        let a = self.call(region, DESCRIBE_SECURITY_GROUPS, p).await?;
        let group = a.get("SecurityGroups").get("SecurityGroup").at(0).get("SecurityGroupId").opt_text();
        Ok(group
            .map(|g| NetworkIds { vpc, subnet: vswitch, security_groups: vec![g] })
            .ok_or("no security group in its default vSwitch's VPC"))
    }
}
