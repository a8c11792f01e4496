//! Cloud Monitor's own wire facts (tccli 3.1.189.1 `tccli/services/monitor/v20180724/api.json`): the
//! one operation gpuctl uses, `GetMonitorData`, for an instance's GPU utilization (issue 15).

/// The Cloud Monitor operations gpuctl uses.
pub const MONITOR_ACTIONS: &[&str] = &["GetMonitorData"];

/// CVM's namespace: "命名空间，如QCE/CVM" (GetMonitorDataRequest.Namespace).
pub const NAMESPACE_CVM: &str = "QCE/CVM";
/// The dimension a CVM instance is named by: `[{"Name":"InstanceId","Value":"ins-j0hk02zo"}]`
/// (GetMonitorDataRequest.Instances).
pub const DIMENSION_INSTANCE: &str = "InstanceId";
/// GPU utilization in `QCE/CVM`: "Gpuutil | GPU utilization | Returned by the
/// nvmlDeviceGetUtilizationRates API from the NVIDIA NVML library | % | InstanceId" in Tencent's metric
/// list for CVM (tencentyun/intlcloud-documents `yehe_doc/管理工具/云监控/云产品指标/云服务器监控指标_intl_en.md`
/// at d209dde3, Basic metrics), collected only once the CVM monitoring agent is installed (same page,
/// note 1; product/1646/116009: the agent plus the GPU driver; Tencent's public images carry the
/// agent). *Unverified*: the spelling's case — the page writes `Gpuutil`, its current GPU rows
/// `GpuMemUsage`/`GpuMemUsed` (docs/research/cost-control.md §1); the API metadata names no metric.
pub const METRIC_GPU_UTIL: &str = "GpuUtil";
/// Periods the CVM metrics offer: "10s, 60s, 300s, 3600s, 86400s" (the same metric list, Statistical
/// Period column of the GPU rows).
pub const PERIODS: &[u32] = &[10, 60, 300, 3600, 86400];
/// The default period: "默认为取值为300，单位为s" (GetMonitorDataRequest.Period).
pub const DEFAULT_PERIOD: u32 = 300;
/// "单请求最多可支持批量拉取50个实例的监控数据，单请求的数据点数限制为7200个" (GetMonitorData's document).
pub const MAX_INSTANCES: usize = 50;
pub const MAX_POINTS: usize = 7200;
