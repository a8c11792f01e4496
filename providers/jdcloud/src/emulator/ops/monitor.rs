//! 云监控 `describeMetricData` (monitor v2, jdcloud_sdk 1.6.354
//! `services/monitor/apis/DescribeMetricDataRequest.py`: `GET /regions/{regionId}/metrics/{metric}/metricData`)
//! for the one metric the local cloud models, a VM's GPU core utilization (`vm.gpu.util.gpu`,
//! serviceCode `vm`, issue 15), answered from the emulator's [`GpuBook`](gpuctl_simkit::GpuBook): what
//! `POST /_sim/gpu_usage` set, while the VM ran. JD reports it per GPU (tag `gpu_index`); the book
//! holds one utilization per instance, which every GPU of it reports.
//!
//! Rules from the request class's doc text: times are `2016-12-11T00:00:00+0800`; startTime not later
//! than now and not earlier than 30 days ago; endTime defaults to now, a later one becomes now, and not
//! earlier than 30 days ago; timeInterval (1h default) sets startTime when it is absent; both times are
//! aligned down to 10 s ("查询起止时间统一向下对齐10s"). Bad values are 400 `INVALID_ARGUMENT`, JD's code
//! for every bad parameter.

use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::{invalid, text, Answer, Call};
use crate::api::monitor::{
    downsample, METRIC_GPU_UTIL, SERVICE_CODE_VM, TAG_GPU_INDEX, TIME_FORMAT, TIME_INTERVALS, WINDOW_DAYS,
};
use crate::emulator::state::JdState;

fn time(c: &Call, name: &str) -> Result<Option<Timestamp>, crate::emulator::JdError> {
    let Some(t) = text(c.p, name) else { return Ok(None) };
    jiff::fmt::strtime::parse(TIME_FORMAT, t.trim())
        .and_then(|p| p.to_timestamp())
        .map(Some)
        .map_err(|_| invalid(format!("{name} \"{t}\" is not in the format 2016-12-11T00:00:00+0800")))
}

/// Down to a multiple of 10 s.
fn align10(t: Timestamp) -> Timestamp {
    Timestamp::from_second(t.as_second().div_euclid(10) * 10).unwrap_or(t)
}

pub fn describe_metric_data(c: &Call, st: &JdState) -> Answer {
    let metric = c.id.clone().unwrap_or_default();
    let resource = super::required(c.p, "resourceId")?;
    if let Some(sc) = text(c.p, "serviceCode") {
        if sc != SERVICE_CODE_VM {
            return Err(invalid(format!("serviceCode {sc}: the local cloud serves only {SERVICE_CODE_VM}")));
        }
    }
    // The local cloud models one metric (assumption: JD's answer to another is not documented).
    if metric != METRIC_GPU_UTIL {
        return Err(invalid(format!("metric {metric}: the local cloud serves only {METRIC_GPU_UTIL}")));
    }
    let now = c.now;
    let oldest = now - SignedDuration::from_hours(24 * WINDOW_DAYS);
    let end = match time(c, "endTime")? {
        None => now,
        Some(e) if e < oldest => return Err(invalid("endTime must not be earlier than 30 days ago")),
        // "如果晚于, 会被默认设成当前时间".
        Some(e) => e.min(now),
    };
    let start = match time(c, "startTime")? {
        Some(s) if s > now => return Err(invalid("startTime must not be later than now")),
        Some(s) if s < oldest => return Err(invalid("startTime must not be earlier than 30 days ago")),
        Some(s) => s,
        None => {
            let interval = text(c.p, "timeInterval").unwrap_or_else(|| "1h".into());
            let Some((_, secs)) = TIME_INTERVALS.iter().find(|(n, _)| *n == interval) else {
                return Err(invalid(format!(
                    "timeInterval {interval} is not one of 1h, 6h, 12h, 1d, 3d, 7d, 14d"
                )));
            };
            end - SignedDuration::from_secs(*secs)
        }
    };
    let (start, end) = (align10(start), align10(end));
    if start > end {
        return Err(invalid("startTime must not be later than endTime"));
    }
    let step = SignedDuration::from_secs(downsample(end.duration_since(start).as_secs()));
    let Some(inst) = st.instances.get(&resource).filter(|i| i.region == c.region) else {
        return Ok(json!({ "metricDatas": [] }));
    };
    // A VM whose prepaid term ended is stopped: no data from then on.
    let until = inst.charge_expires.filter(|e| *e <= now).unwrap_or(now);
    let data: Vec<Value> = st
        .gpu
        .samples(&resource, start, end, until, step)
        .iter()
        .map(|s| json!({ "timestamp": s.at.as_millisecond(), "value": (s.percent * 100.0).round() / 100.0 }))
        .collect();
    let gpus =
        c.ctx.offer(crate::emulator::PROVIDER, &inst.region, &inst.instance_type).map_or(1, |o| o.gpu_count);
    let metric_info = json!({
        "serviceCode": SERVICE_CODE_VM, "metricNameCH": "GPU核心使用率", "metricNameEN": "GPU Core Usage",
    });
    let grouped = text(c.p, "groupBy").is_some_and(|g| g == "true");
    let series: Vec<Value> = if grouped {
        (0..gpus.max(1))
            .map(|i| json!({ "metric": metric_info, "data": data, "tags": { TAG_GPU_INDEX: i.to_string() } }))
            .collect()
    } else {
        // Without groupBy the GPUs are aggregated (aggrType, default avg): all report the same here.
        vec![json!({ "metric": metric_info, "data": data, "tags": Value::Null })]
    };
    Ok(json!({ "metricDatas": series }))
}
