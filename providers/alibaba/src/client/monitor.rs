//! GPU utilization from CloudMonitor's `DescribeMetricList` (cms 2019-01-01, alibabacloud-cms20190101
//! 4.0.10 `models/_describe_metric_list_request.py`; issue 15): namespace `acs_ecs_dashboard`, metric
//! `instance_gpu_gpu_usedutilization` (both unverified: `crate::api::cms`), the instances as a JSON list
//! of `{"instanceId": …}` (at most 50 a request), times as millisecond timestamps, pages by `NextToken`.
//! The metric exists only where the CloudMonitor agent (with its GPU plugin) runs on the instance;
//! without it the answer has no points.

use std::collections::BTreeMap;

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{GpuUsage, UsagePoint, UsageQuery};
use gpuctl_cloud::services::Usage;
use gpuctl_cloud::Provider;
use serde_json::{json, Value};

use super::Client;
use crate::api::cms::{
    DESCRIBE_METRIC_LIST, DIMENSION_INSTANCE, MAX_INSTANCES, MAX_LENGTH, METRIC_GPU_UTIL, NAMESPACE_ECS,
    PERIODS,
};

/// Pages are bounded: 31 days at 15 s for 50 instances is under 9 million points, 6,200 pages of 1,440.
const MAX_PAGES: usize = 10_000;

impl Usage for Client {
    async fn gpu_usage(&self, q: &UsageQuery) -> Result<Vec<GpuUsage>, CloudError> {
        let period = q.period_among(PERIODS);
        let mut found: BTreeMap<String, Vec<UsagePoint>> = BTreeMap::new();
        for ids in q.instance_ids.chunks(MAX_INSTANCES) {
            let dims = Value::Array(ids.iter().map(|id| json!({ DIMENSION_INSTANCE: id })).collect());
            let mut token: Option<String> = None;
            for page in 0.. {
                if page == MAX_PAGES {
                    return Err(CloudError::bad_response(
                        Provider::Alibaba,
                        DESCRIBE_METRIC_LIST,
                        format!("DescribeMetricList gave more than {MAX_PAGES} pages; stopped reading"),
                    ));
                }
                let mut params = vec![
                    ("Namespace".to_string(), NAMESPACE_ECS.to_string()),
                    ("MetricName".to_string(), METRIC_GPU_UTIL.to_string()),
                    ("Dimensions".to_string(), dims.to_string()),
                    ("Period".to_string(), period.to_string()),
                    ("StartTime".to_string(), q.start.as_millisecond().to_string()),
                    ("EndTime".to_string(), q.end.as_millisecond().to_string()),
                    ("Length".to_string(), MAX_LENGTH.to_string()),
                ];
                if let Some(t) = &token {
                    params.push(("NextToken".to_string(), t.clone()));
                }
                let a = self.call_cms(&q.region, DESCRIBE_METRIC_LIST, params).await?;
                // `Datapoints` is a JSON list inside a string (the response model types it `str`).
                let text = a.get("Datapoints").text();
                let points: Vec<Value> = if text.trim().is_empty() {
                    Vec::new()
                } else {
                    serde_json::from_str(&text).map_err(|e| {
                        CloudError::bad_response(
                            Provider::Alibaba,
                            DESCRIBE_METRIC_LIST,
                            format!("Datapoints is not a JSON list: {e}"),
                        )
                        .with_request_id(a.request_id.clone())
                    })?
                };
                for p in &points {
                    let (Some(id), Some(ms), Some(avg)) = (
                        p.get(DIMENSION_INSTANCE).and_then(Value::as_str),
                        p.get("timestamp").and_then(Value::as_i64),
                        p.get("Average").and_then(Value::as_f64),
                    ) else {
                        continue;
                    };
                    let Ok(at) = jiff::Timestamp::from_millisecond(ms) else { continue };
                    found.entry(id.to_string()).or_default().push(UsagePoint { at, percent: avg });
                }
                token = a.get("NextToken").opt_text().filter(|t| !t.is_empty());
                if token.is_none() {
                    break;
                }
            }
        }
        Ok(q.instance_ids
            .iter()
            .map(|id| {
                let mut points = found.remove(id).unwrap_or_default();
                points.sort_by_key(|p| p.at);
                GpuUsage {
                    instance_id: id.clone(),
                    metric: format!("{NAMESPACE_ECS} {METRIC_GPU_UTIL}"),
                    period_s: period,
                    points,
                }
            })
            .collect())
    }
}
