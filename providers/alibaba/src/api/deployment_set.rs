//! ECS deployment sets (API 2014-05-26): the low-latency placement of a cluster's nodes (issue 14), as
//! both sides name it. Sources: alibabacloud_ecs20140526 7.11.8 `models/_create_deployment_set_request.py`,
//! `_describe_deployment_sets_request.py`, `_delete_deployment_set_request.py`,
//! `_describe_deployment_set_supported_instance_type_family_request.py` and their response bodies;
//! the deployment-set limits page https://www.alibabacloud.com/help/zh/doc-detail/91258.htm and the
//! API reference in AlibabaCloudDocs/ecs @ 322eaab82e86 (docs/research/clusters.md §1, Alibaba).

pub const CREATE_DEPLOYMENT_SET: &str = "CreateDeploymentSet";
pub const DESCRIBE_DEPLOYMENT_SETS: &str = "DescribeDeploymentSets";
pub const DELETE_DEPLOYMENT_SET: &str = "DeleteDeploymentSet";
pub const SUPPORTED_FAMILIES: &str = "DescribeDeploymentSetSupportedInstanceTypeFamily";

/// `Strategy`: `Availability` (the default), `AvailabilityGroup` or `LowLatency`.
pub const STRATEGIES: [&str; 3] = ["Availability", "AvailabilityGroup", "LowLatency"];
pub const LOW_LATENCY: &str = "LowLatency";

/// DescribeDeploymentSets `PageSize`: "Maximum value: 50".
pub const PAGE_MAX: u32 = 50;

/// "All instances must be in the same zone, at most 20 per zone" (the limits page).
pub const INSTANCES_PER_ZONE: usize = 20;

/// Error codes: RunInstances' (AlibabaCloudDocs/ecs `intl.en-US/API Reference/Instances/RunInstances.md`,
/// 2021-06-15), DeleteDeploymentSet's (`…/Deployment sets/DeleteDeploymentSet.md`, 2020-11-03) and
/// CreateDeploymentSet's (`…/Deployment sets/CreateDeploymentSet.md`, 2020-12-18).
pub mod codes {
    /// 404: RunInstances with a `DeploymentSetId` that does not exist.
    pub const NOT_FOUND: &str = "DeploymentSet.NotFound";
    /// 403: the set holds its most instances.
    pub const QUOTA_FULL: &str = "QuotaExceed.DeploymentSetInstanceQuotaFull";
    /// 403: DeleteDeploymentSet while instances remain in the set.
    pub const NOT_EMPTY: &str = "DependencyViolation.NotEmpty";
    /// 400: a `DeploymentSetName` that breaks its rules.
    pub const NAME_MALFORMED: &str = "InvalidDeploymentSetName.Malformed";
    /// 400: a `Strategy` that is none of the three.
    pub const BAD_STRATEGY: &str = "InvalidParameter.Strategy";
}

/// Whether `name` is a `DeploymentSetName` CreateDeploymentSet takes: "2 to 128 characters in length
/// ... must start with a letter or a Chinese character and cannot start with `http://` or `https://`.
/// It can contain letters, digits, colons (:), underscores (_), and hyphens (-)"
/// (`_create_deployment_set_request.py`).
pub fn name_ok(name: &str) -> bool {
    let n = name.chars().count();
    let first = name.chars().next().is_some_and(|c| c.is_alphabetic());
    (2..=128).contains(&n)
        && first
        && !name.starts_with("http://")
        && !name.starts_with("https://")
        && name.chars().all(|c| c.is_alphanumeric() || matches!(c, ':' | '_' | '-'))
}

/// The family of an ECS type as DescribeDeploymentSetSupportedInstanceTypeFamily lists it:
/// `ecs.gn7e-c16g1.4xlarge` → `ecs.gn7e`.
/// `ecs.ebmgn7e.32xlarge` (no size suffix after a dash) → `ecs.ebmgn7e`.
pub fn family_of(instance_type: &str) -> &str {
    match instance_type.split_once('-') {
        Some((family, _)) => family,
        None => instance_type.rsplit_once('.').map_or(instance_type, |(f, _)| f),
    }
}

/// `name` as a `DeploymentSetName` that [`name_ok`] accepts: other characters become `-`, a name
/// that does not start with a letter gets `gpuctl-` in front, and it is cut to 128 characters. The
/// same name is asked for by DescribeDeploymentSets, so a set made by a killed run is found again. A
/// NAS file system's `Description` has the same rule ("2 to 128 characters ... must start with a
/// letter ... can contain digits, colons (:), underscores (_), and hyphens (-)"), so it is named so too.
pub fn set_name(name: &str) -> String {
    let clean: String = name
        .chars()
        .map(|c| if c.is_alphanumeric() || matches!(c, ':' | '_' | '-') { c } else { '-' })
        .collect();
    let named = if clean.chars().next().is_some_and(|c| c.is_alphabetic()) && clean.chars().count() >= 2 {
        clean
    } else {
        format!("gpuctl-{clean}")
    };
    named.chars().take(128).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_families_as_ecs_takes_them() {
        assert_eq!(family_of("ecs.gn7e-c16g1.4xlarge"), "ecs.gn7e");
        assert_eq!(family_of("ecs.ebmgn7e.32xlarge"), "ecs.ebmgn7e");
        for (raw, want) in
            [("train-gpu", "train-gpu"), ("7b.run/pool", "gpuctl-7b-run-pool"), ("x", "gpuctl-x")]
        {
            assert_eq!(set_name(raw), want);
            assert!(name_ok(&set_name(raw)), "{raw}");
        }
        assert!(name_ok(&set_name(&"a".repeat(300))));
        assert!(!name_ok("1abc") && !name_ok("a") && !name_ok("https://x") && !name_ok("a.b"));
    }
}
