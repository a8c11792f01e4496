//! GPU utilization from 云监控's `describeMetricData` (monitor v2, jdcloud_sdk 1.6.354
//! `services/monitor/apis/DescribeMetricDataRequest.py`; issue 15): one call per VM, metric
//! `vm.gpu.util.gpu` of serviceCode `vm`, the GPUs averaged (`aggrType=avg`) and each point the average
//! of its interval (`downSampleType=avg`). JD picks the points' spacing itself; the answer's own spacing
//! is reported. The metric exists only where the JCS-Agent (≥ 3.0.989) runs in the VM; without it the
//! answer has no points.

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{GpuUsage, UsagePoint, UsageQuery};
use gpuctl_cloud::services::Usage;

use super::{Call, Client};
use crate::api::monitor::{format_time, METRIC_GPU_UTIL, SERVICE_CODE_VM, VERSION};

impl Usage for Client {
    async fn gpu_usage(&self, q: &UsageQuery) -> Result<Vec<GpuUsage>, CloudError> {
        let path = format!("metrics/{METRIC_GPU_UTIL}/metricData");
        let mut out = Vec::with_capacity(q.instance_ids.len());
        for id in &q.instance_ids {
            let query = vec![
                ("resourceId".to_string(), id.clone()),
                ("serviceCode".to_string(), SERVICE_CODE_VM.to_string()),
                ("startTime".to_string(), format_time(q.start)),
                ("endTime".to_string(), format_time(q.end)),
                ("aggrType".to_string(), "avg".to_string()),
                ("downSampleType".to_string(), "avg".to_string()),
            ];
            let call = Call {
                service: "monitor",
                version: VERSION,
                action: "describeMetricData",
                method: "GET",
                path: &path,
            };
            let a = self.call(call, &q.region, query, None).await?;
            // Without groupBy there is one series (the GPUs aggregated); should JD answer one per GPU,
            // each timestamp's values are averaged here.
            let mut by_time: std::collections::BTreeMap<i64, (f64, u32)> = Default::default();
            for series in a.get("metricDatas").items() {
                for p in series.get("data").items() {
                    let (Some(ms), Some(v)) = (p.get("timestamp").f64(), p.get("value").f64()) else {
                        continue;
                    };
                    let e = by_time.entry(ms as i64).or_insert((0.0, 0));
                    e.0 += v;
                    e.1 += 1;
                }
            }
            let points: Vec<UsagePoint> = by_time
                .iter()
                .filter_map(|(ms, (sum, n))| {
                    Some(UsagePoint {
                        at: jiff::Timestamp::from_millisecond(*ms).ok()?,
                        percent: sum / f64::from(*n),
                    })
                })
                .collect();
            let period_s = match points.as_slice() {
                [a, b, ..] => b.at.duration_since(a.at).as_secs().max(1) as u32,
                _ => q.period_s,
            };
            out.push(GpuUsage {
                instance_id: id.clone(),
                metric: format!("{SERVICE_CODE_VM} {METRIC_GPU_UTIL}"),
                period_s,
                points,
            });
        }
        Ok(out)
    }
}
