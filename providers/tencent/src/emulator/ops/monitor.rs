//! Cloud Monitor's `GetMonitorData` (monitor 2018-07-24) for the one metric the local cloud models, GPU
//! utilization of CVM instances (`QCE/CVM` `GpuUtil`, issue 15), answered from the emulator's
//! [`GpuBook`](gpuctl_simkit::GpuBook): what `POST /_sim/gpu_usage` set, while the instance ran.
//! Definitions: tccli 3.1.189.1 `tccli/services/monitor/v20180724/api.json` (`GetMonitorDataRequest`,
//! `GetMonitorDataResponse`, `DataPoint`); error codes from tencentcloud-sdk-python-monitor 3.1.189
//! `tencentcloud/monitor/v20180724/errorcodes.py`.

use jiff::tz::TimeZone;
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use crate::api::codes;
use crate::api::monitor::{
    DEFAULT_PERIOD, DIMENSION_INSTANCE, MAX_INSTANCES, MAX_POINTS, METRIC_GPU_UTIL, NAMESPACE_CVM, PERIODS,
};
use crate::emulator::error::{Result, TcError};
use crate::emulator::state::State;
use crate::emulator::Call;

/// 请求受限，查询实例数受到限制或者触发限频等限制操作 (errorcodes.py LIMITEXCEEDED_LIMITEDACCESS).
const LIMITED_ACCESS: &str = "LimitExceeded.LimitedAccess";

/// The response's time form, as the definition's example writes it: `2019-03-24T10:50:00+08:00`.
fn iso8(t: Timestamp) -> String {
    t.to_zoned(TimeZone::fixed(jiff::tz::offset(8))).strftime("%Y-%m-%dT%H:%M:%S%:z").to_string()
}

fn time(call: &Call, name: &str) -> Result<Option<Timestamp>> {
    let Some(text) = call.p().opt_str(name)? else { return Ok(None) };
    text.parse::<Timestamp>().map(Some).map_err(|_| {
        TcError::new(
            codes::INVALID_TIME_FORMAT,
            format!("The parameter `{name}` must be an ISO 8601 time such as 2018-09-22T19:51:23+08:00, not `{text}`."),
        )
    })
}

pub(crate) fn get_monitor_data(state: &State, call: &Call) -> Result<Value> {
    let p = call.p();
    let namespace = p.req_str("Namespace")?;
    let metric = p.req_str("MetricName")?;
    // The local cloud models one namespace and one metric; the real one has many (assumption: an
    // unknown pair is InvalidParameterValue — no definition names the code).
    if namespace != NAMESPACE_CVM {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!(
                "The namespace `{namespace}` is not served by the local cloud; it serves {NAMESPACE_CVM}."
            ),
        ));
    }
    if metric != METRIC_GPU_UTIL {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!("The metric `{metric}` is not served by the local cloud in {NAMESPACE_CVM}; it serves {METRIC_GPU_UTIL}."),
        ));
    }
    let instances = p.obj_list("Instances")?;
    if instances.is_empty() {
        return Err(TcError::new(
            codes::MISSING_PARAMETER,
            "The request is missing a required parameter `Instances`.",
        ));
    }
    if instances.len() > MAX_INSTANCES {
        return Err(TcError::new(
            LIMITED_ACCESS,
            format!("A request may ask for at most {MAX_INSTANCES} instances, not {}.", instances.len()),
        ));
    }
    let mut ids = Vec::new();
    for inst in &instances {
        let dims = inst.obj_list("Dimensions")?;
        let id = match dims.as_slice() {
            [d] if d.req_str("Name")? == DIMENSION_INSTANCE => d.req_str("Value")?,
            _ => {
                return Err(TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    format!("Each of `Instances` must have the one dimension `{DIMENSION_INSTANCE}` in {NAMESPACE_CVM}."),
                ))
            }
        };
        ids.push(id);
    }
    let period = match p.opt_i64("Period")? {
        None => DEFAULT_PERIOD,
        Some(n) => match PERIODS.iter().find(|&&x| i64::from(x) == n) {
            Some(&x) => x,
            None => {
                return Err(TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    format!(
                        "The period {n} is not offered for {METRIC_GPU_UTIL}; offered: {PERIODS:?} seconds."
                    ),
                ))
            }
        },
    };
    let now = call.ctx.now();
    let end = time(call, "EndTime")?.unwrap_or(now);
    // Assumption: no definition gives StartTime's default; one period before EndTime.
    let start = time(call, "StartTime")?
        .unwrap_or_else(|| end.checked_sub(SignedDuration::from_secs(i64::from(period))).unwrap_or(end));
    if end < start {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            "EndTime不能小于StartTime: EndTime is before StartTime.",
        ));
    }
    let p64 = i64::from(period);
    let first = start.as_second().div_euclid(p64) * p64;
    let buckets = ((end.as_second() - first) / p64 + 1) as usize;
    if buckets.saturating_mul(ids.len()) > MAX_POINTS {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!(
                "The request covers {} data points; a request may cover at most {MAX_POINTS} (instances × periods).",
                buckets.saturating_mul(ids.len())
            ),
        ));
    }
    let step = SignedDuration::from_secs(p64);
    let points: Vec<Value> = ids
        .iter()
        .map(|id| {
            // Data only from this region's instances (the book knows when each ran).
            let samples = if state.instances.iter().any(|i| &i.id == id && i.region == call.region) {
                state.gpu.samples(id, start, end, now, step)
            } else {
                Vec::new()
            };
            let ts: Vec<f64> = samples.iter().map(|s| s.at.as_second() as f64).collect();
            let vs: Vec<f64> = samples.iter().map(|s| round3(s.percent)).collect();
            let mut d = json!({
                "Dimensions": [{"Name": DIMENSION_INSTANCE, "Value": id}],
                "Timestamps": ts, "Values": vs,
            });
            // SpecifyStatistics (avg=1, max=2, min=4): a period's max and min of a step function are
            // the average's only when the period held one value; the model keeps averages, so all three
            // report it (assumption).
            if let Ok(Some(bits)) = p.opt_i64("SpecifyStatistics") {
                for (bit, key) in [(1, "AvgValues"), (2, "MaxValues"), (4, "MinValues")] {
                    if bits & bit != 0 {
                        d[key] = d["Values"].clone();
                    }
                }
            }
            d
        })
        .collect();
    let aligned = Timestamp::from_second(first).unwrap_or(start);
    Ok(json!({
        "Period": period,
        "MetricName": metric,
        "DataPoints": points,
        "StartTime": iso8(aligned),
        "EndTime": iso8(end),
        "Msg": "",
    }))
}

/// Three decimals, as the definition's examples show values (`2.566`).
fn round3(x: f64) -> f64 {
    (x * 1000.0).round() / 1000.0
}
