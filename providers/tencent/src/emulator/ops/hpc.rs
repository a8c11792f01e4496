//! CVM's HPC clusters (issue 14): CreateHpcCluster, DescribeHpcClusters, DeleteHpcClusters, and the
//! check RunInstances makes of `HpcClusterId`. Parameters and fields: tccli 3.1.189.1
//! `tccli/services/cvm/v20170312/api.json` (CreateHpcClusterRequest, DescribeHpcClustersRequest,
//! DeleteHpcClustersRequest, HpcClusterInfo, RunInstancesRequest.HpcClusterId); error codes
//! tencentcloud-sdk-python-cvm 3.1.178 `tencentcloud/cvm/v20170312/errorcodes.py`, tied to each action by
//! the Go SDK's per-action lists (TencentCloud/tencentcloud-sdk-go @ 144f6c8d39e4
//! `tencentcloud/cvm/v20170312/client.go`), as docs/research/clusters.md §1 gathers them.

use jiff::Timestamp;
use serde_json::{json, Value};

use crate::api::{codes, is_hpc_type};
use crate::emulator::error::{Result, TcError};
use crate::emulator::ops::vpc::tag_filter;
use crate::emulator::p::{filters, P};
use crate::emulator::state::{cvm_time, Instance, State};
use crate::emulator::{Call, PROVIDER};

/// `Name`: "长度限制[1-60]"; `Remark`: "长度[1-256]" (CreateHpcClusterRequest).
const NAME_MAX: usize = 60;
const REMARK_MAX: usize = 256;
/// `HpcClusterType`: "当前有三个取值：分别是CDC/CHC/STANDARD，其中STANDARD是默认的标准模式".
const TYPES: &[&str] = &["CDC", "CHC", "STANDARD"];
/// HpcClusterInfo.CvmQuotaTotal and HpcClusterNetMode as examples.json's CreateHpcCluster answers them.
const CVM_QUOTA_TOTAL: usize = 50;
const NET_MODE: i64 = 30;

#[derive(Clone, Debug)]
pub(crate) struct HpcCluster {
    pub id: String,
    pub region: String,
    pub zone: String,
    pub name: String,
    pub remark: String,
    pub cluster_type: String,
    pub business_id: Option<String>,
    pub tags: Vec<(String, String)>,
    pub created: Timestamp,
}

fn err(code: &'static str, msg: impl Into<String>) -> TcError {
    TcError::new(code, msg)
}

/// The instances a cluster holds: every one placed in it that has not left. A terminated PREPAID
/// instance waiting in the recycle bin (SHUTDOWN) is counted out *(unverified: no definition says
/// whether the bin keeps an instance's HPC cluster; counted in, a monthly HCC cluster could never be
/// deleted here, as this emulator's bin never empties)*.
fn members<'a>(state: &'a State, id: &'a str) -> impl Iterator<Item = &'a Instance> + 'a {
    state.instances.iter().filter(move |i| i.hpc_cluster_id.as_deref() == Some(id) && !i.shutdown)
}

/// A zone of the call's region, else `InvalidZone.MismatchRegion` (CreateHpcCluster's and
/// DescribeHpcClusters' lists: "指定的`zone`不存在").
fn zone_of_region(call: &Call, zone: &str) -> Result<()> {
    if call.ctx.offers(PROVIDER).any(|o| o.region == call.region && o.zones.iter().any(|z| z == zone)) {
        return Ok(());
    }
    Err(err(
        codes::INVALID_ZONE_MISMATCH_REGION,
        format!("The zone `{zone}` does not belong to region `{}`.", call.region),
    ))
}

/// A length rule the definition states in words: `InvalidParameterValue`, the code CreateHpcCluster's
/// list gives for its parameters.
fn length(v: &P, field: &str, max: usize) -> Result<Option<String>> {
    let Some(s) = v.opt_str(field)? else { return Ok(None) };
    let n = s.chars().count();
    if n == 0 || n > max {
        return Err(err(
            codes::INVALID_PARAMETER_VALUE,
            format!("{field} must be 1 to {max} characters, not {n}."),
        ));
    }
    Ok(Some(s))
}

fn cluster_json(state: &State, c: &HpcCluster) -> Value {
    let ids: Vec<&str> = members(state, &c.id).map(|i| i.id.as_str()).collect();
    json!({
        "HpcClusterId": c.id, "Name": c.name, "Remark": c.remark, "CvmQuotaTotal": CVM_QUOTA_TOTAL,
        "Zone": c.zone, "CurrentNum": ids.len(), "CreateTime": cvm_time(c.created), "InstanceIds": ids,
        "HpcClusterType": c.cluster_type, "HpcClusterBusinessId": c.business_id, "HpcClusterNetMode": NET_MODE,
        "Tags": c.tags.iter().map(|(k, v)| json!({ "Key": k, "Value": v })).collect::<Vec<_>>(),
    })
}

pub(crate) fn create_hpc_cluster(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let zone = v.req_str("Zone")?;
    let name = v.req_str("Name")?;
    length(&v, "Name", NAME_MAX)?;
    let remark = length(&v, "Remark", REMARK_MAX)?.unwrap_or_default();
    let cluster_type = v.opt_str("HpcClusterType")?.unwrap_or_else(|| "STANDARD".into());
    if !TYPES.contains(&cluster_type.as_str()) {
        return Err(err(
            codes::INVALID_PARAMETER_VALUE,
            format!("HpcClusterType `{cluster_type}` is not one of {}.", TYPES.join(", ")),
        ));
    }
    // HpcClusterBusinessId: "当前只支持CDC场景类型"; the code: "非CDC场景不支持HpcClusterBusinessId".
    let business_id = v.opt_str("HpcClusterBusinessId")?;
    if business_id.is_some() && cluster_type != "CDC" {
        return Err(err(
            codes::HPC_BUSINESS_ID_NOT_SUPPORTED,
            "HpcClusterBusinessId is supported only with HpcClusterType CDC.",
        ));
    }
    zone_of_region(call, &zone)?;
    // TagSpecification.ResourceType: "高性能计算集群为“hpc”"; tags for another resource type are not this one's.
    let mut tags = Vec::new();
    for spec in v.obj_list("TagSpecification")? {
        if spec.opt_str("ResourceType")?.as_deref() != Some("hpc") {
            continue;
        }
        for t in spec.obj_list("Tags")? {
            tags.push((t.req_str("Key")?, t.opt_str("Value")?.unwrap_or_default()));
        }
    }
    let c = HpcCluster {
        id: call.ctx.new_id("hpc-", 8),
        region: call.region.clone(),
        zone,
        name,
        remark,
        cluster_type,
        business_id,
        tags,
        created: call.ctx.now(),
    };
    let out = cluster_json(state, &c);
    state.hpc_clusters.push(c);
    Ok(json!({ "HpcClusterSet": [out] }))
}

pub(crate) fn describe_hpc_clusters(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    // Limit: "默认值20，范围限制为[1-100]"; HpcClusterIds: "批量上限为100，默认配合Limit传参数，不能超过Limit值".
    let limit = v.opt_i64("Limit")?.unwrap_or(20);
    let window = v.offset_limit(("Offset", "Limit"), 20, 100)?;
    let ids = v.str_list("HpcClusterIds")?;
    if ids.len() as i64 > limit {
        return Err(err(
            codes::INVALID_PARAMETER_VALUE,
            format!("HpcClusterIds names {} clusters, more than Limit {limit}.", ids.len()),
        ));
    }
    let name = v.opt_str("Name")?;
    let zone = v.opt_str("Zone")?;
    if let Some(z) = &zone {
        zone_of_region(call, z)?;
    }
    let cluster_type = v.opt_str("HpcClusterType")?;
    let business_id = v.opt_str("HpcClusterBusinessId")?;
    let instance_type = v.opt_str("InstanceType")?;
    let fs = filters(&v, &["tag-key", "tag-value", "tag:"])?;
    let found: Vec<&HpcCluster> = state
        .hpc_clusters
        .iter()
        .filter(|c| c.region == call.region && (ids.is_empty() || ids.contains(&c.id)))
        // Whether `Name` matches exactly or in part is not documented: exactly, here.
        .filter(|c| name.as_ref().is_none_or(|n| *n == c.name) && zone.as_ref().is_none_or(|z| *z == c.zone))
        .filter(|c| cluster_type.as_ref().is_none_or(|t| *t == c.cluster_type))
        .filter(|c| business_id.is_none() || business_id == c.business_id)
        .filter(|c| {
            instance_type.as_ref().is_none_or(|t| members(state, &c.id).any(|i| i.instance_type == *t))
        })
        .filter(|c| {
            fs.iter().all(|(n, vs)| match n.as_str() {
                "tag-value" => c.tags.iter().any(|(_, val)| vs.contains(val)),
                other => tag_filter(other, vs, &c.tags).unwrap_or(false),
            })
        })
        .collect();
    let (total, shown) = window.apply(found);
    Ok(json!({
        "TotalCount": total,
        "HpcClusterSet": shown.into_iter().map(|c| cluster_json(state, c)).collect::<Vec<_>>(),
    }))
}

pub(crate) fn delete_hpc_clusters(state: &mut State, call: &Call) -> Result<Value> {
    let ids = call.p().str_list("HpcClusterIds")?;
    if ids.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `HpcClusterIds`.",
        ));
    }
    // All or none: every id must exist (ResourceNotFound.HpcCluster) and be empty — "当高性能计算集群为空,
    // 即集群内没有任何设备时候, 可以删除该集群" (ResourceInUse.HpcCluster otherwise; instances still
    // terminating are still in it).
    for id in &ids {
        if !state.hpc_clusters.iter().any(|c| c.region == call.region && c.id == *id) {
            return Err(err(codes::HPC_NOT_FOUND, format!("The HPC cluster `{id}` does not exist.")));
        }
        if let Some(i) = members(state, id).next() {
            return Err(err(
                codes::HPC_IN_USE,
                format!("The HPC cluster `{id}` still holds instance `{}`.", i.id),
            ));
        }
    }
    state.hpc_clusters.retain(|c| !(c.region == call.region && ids.contains(&c.id)));
    Ok(json!({}))
}

/// RunInstances' `HpcClusterId`, checked against the type and zone: "若创建的实例为高性能计算实例，需指定
/// 实例放置的集群，否则不可指定" (RunInstancesRequest.HpcClusterId). An HCC type without one is
/// `InstanceTypeRequiredHpcCluster`, another type with one `InstanceTypeNotSupportHpcCluster`, an unknown
/// id `ResourceNotFound.HpcCluster`, a cluster of another zone `HpcClusterIdZoneIdNotMatch` (all four in
/// the Go SDK's RunInstances list). Which types are HCC is inferred ([`is_hpc_type`]).
pub(crate) fn check_launch(
    state: &State,
    call: &Call,
    instance_type: &str,
    zone: &str,
) -> Result<Option<String>> {
    let id = call.p().opt_str("HpcClusterId")?.filter(|s| !s.is_empty());
    let Some(id) = id else {
        if is_hpc_type(instance_type) {
            return Err(err(
                codes::HPC_REQUIRED,
                format!("`{instance_type}` is a high-performance computing type: name its HpcClusterId."),
            ));
        }
        return Ok(None);
    };
    if !is_hpc_type(instance_type) {
        return Err(err(codes::HPC_NOT_SUPPORTED, format!("`{instance_type}` cannot join an HPC cluster.")));
    }
    let Some(c) = state.hpc_clusters.iter().find(|c| c.region == call.region && c.id == id) else {
        return Err(err(codes::HPC_NOT_FOUND, format!("The HPC cluster `{id}` does not exist.")));
    };
    if c.zone != zone {
        return Err(err(
            codes::HPC_ZONE_MISMATCH,
            format!("The HPC cluster `{id}` is in `{}`, not `{zone}`.", c.zone),
        ));
    }
    Ok(Some(id))
}
