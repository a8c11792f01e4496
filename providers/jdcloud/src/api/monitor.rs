//! 云监控 (monitor v2) wire facts, for a VM's GPU utilization (issue 15). Sources: jdcloud_sdk 1.6.354
//! `services/monitor/apis/DescribeMetricDataRequest.py` (path, parameters, time rules) and
//! `services/monitor/models/{MetricData,DataPoint}.py` (the answer's shape).

/// The monitor API's version: `DescribeMetricDataRequest(..., version="v2")`.
pub const VERSION: &str = "v2";
/// The resource type of a VM: "资源的类型，取值vm, lb, ip, database 等" (`serviceCode`).
pub const SERVICE_CODE_VM: &str = "vm";
/// GPU core utilization of a VM, per GPU with the tag `gpu_index` ('0', '1', …): "vm.gpu.util.gpu |
/// GPU核使用率 | GPU Core Usage | %" in JD's VM metric list, "Only the machine of GPU instance type has
/// such indicator"; collected by the JCS-Agent's MonitorPlugin in the guest, version ≥ 3.0.989 (JD
/// Cloud's "Description of VM Monitoring Indicators" document, a copy in the public code index; not
/// in the SDK — docs/research/cost-control.md §1).
pub const METRIC_GPU_UTIL: &str = "vm.gpu.util.gpu";
pub const TAG_GPU_INDEX: &str = "gpu_index";
/// `startTime`/`endTime`: "格式：2016-12-11T00:00:00+0800".
pub const TIME_FORMAT: &str = "%Y-%m-%dT%H:%M:%S%z";
/// "开始时间不得早于 30 天前", "结束时间不得早于 30 天前".
pub const WINDOW_DAYS: i64 = 30;
/// `timeInterval`: "1h，6h，12h，1d，3d，7d，14d", in seconds.
pub const TIME_INTERVALS: &[(&str, i64)] = &[
    ("1h", 3600),
    ("6h", 6 * 3600),
    ("12h", 12 * 3600),
    ("1d", 86400),
    ("3d", 3 * 86400),
    ("7d", 7 * 86400),
    ("14d", 14 * 86400),
];

/// The spacing of the points JD answers for a window of `span_s` seconds. *Assumption*: the request
/// has no period parameter and no definition says how JD down-samples; one minute up to an hour, then
/// coarser so a window stays a few hundred points.
pub fn downsample(span_s: i64) -> i64 {
    match span_s {
        s if s <= 3600 => 60,
        s if s <= 6 * 3600 => 300,
        s if s <= 86400 => 1200,
        s if s <= 7 * 86400 => 3600,
        _ => 4 * 3600,
    }
}

/// The time form `startTime`/`endTime` take, in Beijing time: `2016-12-11T00:00:00+0800`.
pub fn format_time(t: jiff::Timestamp) -> String {
    t.to_zoned(super::beijing()).strftime(TIME_FORMAT).to_string()
}
