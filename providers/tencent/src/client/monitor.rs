//! GPU utilization from Cloud Monitor's `GetMonitorData` (monitor 2018-07-24, tccli 3.1.189.1
//! `tccli/services/monitor/v20180724/api.json`; issue 15): namespace `QCE/CVM`, metric `GpuUtil`
//! (its spelling is unverified: `crate::api::monitor::METRIC_GPU_UTIL`), one `InstanceId` dimension per
//! instance, at most 50 instances and 7200 points per request. The metric exists only where the CVM
//! monitoring agent and the GPU driver run on the instance; without them the answer has no points.

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{GpuUsage, UsagePoint, UsageQuery};
use gpuctl_cloud::services::Usage;
use jiff::tz::TimeZone;
use serde_json::json;

use super::Client;
use crate::api::monitor::{
    DIMENSION_INSTANCE, MAX_INSTANCES, MAX_POINTS, METRIC_GPU_UTIL, NAMESPACE_CVM, PERIODS,
};
use crate::api::MONITOR;

/// `2018-09-22T19:51:23+08:00`, the form the definition's examples use (`datetime_iso`).
fn iso8(t: jiff::Timestamp) -> String {
    t.to_zoned(TimeZone::fixed(jiff::tz::offset(8))).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

impl Usage for Client {
    async fn gpu_usage(&self, q: &UsageQuery) -> Result<Vec<GpuUsage>, CloudError> {
        let period = q.period_among(PERIODS);
        // Both limits at once: at most 50 instances, and instances × periods ≤ 7200.
        let per_call =
            (MAX_POINTS as u64 / q.periods_touched(period).max(1)).clamp(1, MAX_INSTANCES as u64) as usize;
        let mut out = Vec::new();
        for ids in q.instance_ids.chunks(per_call) {
            let body = json!({
                "Namespace": NAMESPACE_CVM,
                "MetricName": METRIC_GPU_UTIL,
                "Instances": ids.iter().map(|id| json!({"Dimensions": [{"Name": DIMENSION_INSTANCE, "Value": id}]})).collect::<Vec<_>>(),
                "Period": period,
                "StartTime": iso8(q.start),
                "EndTime": iso8(q.end),
            });
            let a = self.call(MONITOR, &q.region, "GetMonitorData", body).await?;
            let answered = a.get("DataPoints").items();
            for id in ids {
                // DataPoints name their instance by its dimension; one the cloud left out has no data.
                let dp = answered.iter().find(|d| {
                    d.get("Dimensions")
                        .items()
                        .iter()
                        .any(|x| x.get("Name").text() == DIMENSION_INSTANCE && x.get("Value").text() == *id)
                });
                let points = dp
                    .map(|d| {
                        let ts = d.get("Timestamps").items();
                        let vs = d.get("Values").items();
                        ts.iter()
                            .zip(vs.iter())
                            .filter_map(|(t, v)| {
                                let at = jiff::Timestamp::from_second(t.f64()? as i64).ok()?;
                                Some(UsagePoint { at, percent: v.f64()? })
                            })
                            .collect()
                    })
                    .unwrap_or_default();
                out.push(GpuUsage {
                    instance_id: id.clone(),
                    metric: format!("{NAMESPACE_CVM} {METRIC_GPU_UTIL}"),
                    period_s: period,
                    points,
                });
            }
        }
        Ok(out)
    }
}
