//! CloudMonitor (API 2019-01-01, RPC style): an instance's GPU utilization (issue 15), as both sides
//! name it. Sources: alibabacloud-cms20190101 4.0.10 (`client.py`: version `2019-01-01`, the regional
//! endpoint map `metrics.<region>.aliyuncs.com`; `models/_describe_metric_list_request.py`,
//! `models/_describe_metric_list_response_body.py`).

/// `x-acs-version` of CloudMonitor (`client.py` `describe_metric_list_with_options`: `version = '2019-01-01'`).
pub const CMS_API_VERSION: &str = "2019-01-01";
pub const DESCRIBE_METRIC_LIST: &str = "DescribeMetricList";

/// CloudMonitor's regional host: `client.py`'s `_endpoint_map` (`'cn-hangzhou': 'metrics.cn-hangzhou.aliyuncs.com'`, …).
pub fn cms_host(region: &str) -> String {
    format!("metrics.{region}.aliyuncs.com")
}

/// ECS's CloudMonitor namespace and the instance-level GPU utilization metric in it, with the
/// `instanceId` dimension. *Unverified*: the request model only points to help doc 163515 ("Metrics"),
/// not reached; the names are as third-party tooling calls them (`aliyun cms describe-metric-last
/// --namespace acs_ecs_dashboard --metric-name instance_gpu_gpu_usedutilization --dimensions
/// {"instanceId":…}`, which also says the metric needs the CloudMonitor agent's GPU plugin; Datadog's
/// Alibaba integration lists the per-GPU `gpu_gpu_usedutilization`) — docs/research/cost-control.md §1.
pub const NAMESPACE_ECS: &str = "acs_ecs_dashboard";
pub const METRIC_GPU_UTIL: &str = "instance_gpu_gpu_usedutilization";
pub const DIMENSION_INSTANCE: &str = "instanceId";

/// `Period`: "Valid values: 15, 60, 900, and 3600. Unit: seconds."
pub const PERIODS: &[u32] = &[15, 60, 900, 3600];
/// "If you do not set this parameter, the reporting period that was specified when the metric was
/// registered is used": 60 s for the ECS dashboard metrics (assumption: doc 163515 not reached).
pub const DEFAULT_PERIOD: u32 = 60;
/// `Dimensions`: "A single request can be used to query a maximum of 50 instances."
pub const MAX_INSTANCES: usize = 50;
/// `Length`: "The maximum value of `Length` in a single request is 1440."
pub const MAX_LENGTH: usize = 1440;
/// `StartTime`/`EndTime`: "The interval between `StartTime` and `EndTime` must be less than or equal to 31 days."
pub const MAX_WINDOW_DAYS: i64 = 31;
