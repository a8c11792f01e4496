//! CloudMonitor's `DescribeMetricList` (cms 2019-01-01) for the one metric the local cloud models, ECS
//! instances' GPU utilization (`acs_ecs_dashboard` `instance_gpu_gpu_usedutilization`, issue 15),
//! answered from the emulator's [`GpuBook`](gpuctl_simkit::GpuBook): what `POST /_sim/gpu_usage` set,
//! while the instance ran. Definitions: alibabacloud-cms20190101 4.0.10
//! `models/_describe_metric_list_request.py` and `_describe_metric_list_response_body.py`; the limits
//! are `crate::api::cms`'s. The request model names no error codes: the codes below are ECS's generic
//! ones (`InvalidParameter`, `MissingParameter`), an assumption.

use jiff::tz::TimeZone;
use jiff::{civil::DateTime, SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::{Answer, Call};
use crate::api::cms::{
    DEFAULT_PERIOD, DIMENSION_INSTANCE, MAX_INSTANCES, MAX_LENGTH, MAX_WINDOW_DAYS, METRIC_GPU_UTIL,
    NAMESPACE_ECS, PERIODS,
};
use crate::api::codes;
use crate::emulator::error::EcsError;
use crate::emulator::state::EcsState;

fn invalid(message: impl Into<String>) -> EcsError {
    EcsError::new(400, codes::INVALID_PARAMETER, message)
}

/// "UNIX timestamp: the number of milliseconds that have elapsed since 00:00:00 UTC on January 1, 1970"
/// or "Format: YYYY-MM-DD hh:mm:ss" (read as Beijing time, as the console shows it: an assumption).
fn time(c: &Call, name: &str) -> Result<Option<Timestamp>, EcsError> {
    let Some(text) = c.p.text(name) else { return Ok(None) };
    if let Ok(ms) = text.parse::<i64>() {
        return Timestamp::from_millisecond(ms)
            .map(Some)
            .map_err(|_| invalid(format!("{name} is out of range.")));
    }
    DateTime::strptime("%Y-%m-%d %H:%M:%S", &text)
        .ok()
        .and_then(|d| d.to_zoned(TimeZone::fixed(jiff::tz::offset(8))).ok())
        .map(|z| Some(z.timestamp()))
        .ok_or_else(|| {
            invalid(format!(
                "{name} \"{text}\" is neither a millisecond UNIX timestamp nor YYYY-MM-DD hh:mm:ss."
            ))
        })
}

/// `Dimensions`: one `{"instanceId": …}` object, or a JSON array of them (at most 50).
fn instance_ids(text: &str) -> Result<Vec<String>, EcsError> {
    let v: Value = serde_json::from_str(text).map_err(|e| {
        invalid(format!("Dimensions is not JSON ({e}): give {{\"instanceId\":\"i-…\"}} or a list of them."))
    })?;
    let items = match v {
        Value::Array(a) => a,
        o @ Value::Object(_) => vec![o],
        _ => return Err(invalid("Dimensions must be a JSON object or a list of objects.")),
    };
    if items.len() > MAX_INSTANCES {
        return Err(invalid(format!(
            "Dimensions names {} instances; a single request can query at most {MAX_INSTANCES}.",
            items.len()
        )));
    }
    items
        .iter()
        .map(|d| {
            d.get(DIMENSION_INSTANCE).and_then(Value::as_str).map(str::to_string).ok_or_else(|| {
                invalid(format!(
                    "Each of Dimensions must name \"{DIMENSION_INSTANCE}\" for {METRIC_GPU_UTIL}."
                ))
            })
        })
        .collect()
}

pub fn describe_metric_list(c: &Call, st: &EcsState) -> Answer {
    let namespace = c.p.required("Namespace")?;
    let metric = c.p.required("MetricName")?;
    // The local cloud models one namespace and metric; the real CloudMonitor has many.
    if namespace != NAMESPACE_ECS || metric != METRIC_GPU_UTIL {
        return Err(invalid(format!(
            "The local cloud serves only {NAMESPACE_ECS} {METRIC_GPU_UTIL}, not {namespace} {metric}."
        )));
    }
    let period = match c.p.text("Period") {
        None => DEFAULT_PERIOD,
        Some(t) => t
            .parse::<u32>()
            .ok()
            .filter(|p| PERIODS.contains(p))
            .ok_or_else(|| invalid(format!("Period {t} is not one of {PERIODS:?}.")))?,
    };
    let length = match c.p.text("Length") {
        // Assumption: no definition gives the default page size; 1000, below the 1440 maximum.
        None => 1000,
        Some(t) => t
            .parse::<usize>()
            .ok()
            .filter(|n| (1..=MAX_LENGTH).contains(n))
            .ok_or_else(|| invalid(format!("Length {t} must be between 1 and {MAX_LENGTH}.")))?,
    };
    let now = c.now;
    let end = time(c, "EndTime")?.unwrap_or(now);
    // Assumption: no definition gives StartTime's default; one hour before EndTime.
    let start = time(c, "StartTime")?.unwrap_or_else(|| end - SignedDuration::from_hours(1));
    if start >= end {
        return Err(invalid("The value of StartTime must be earlier than the value of EndTime."));
    }
    if end.duration_since(start) > SignedDuration::from_hours(24 * MAX_WINDOW_DAYS) {
        return Err(invalid(format!(
            "The interval between StartTime and EndTime must be less than or equal to {MAX_WINDOW_DAYS} days."
        )));
    }
    let ids = match c.p.text("Dimensions") {
        Some(t) => instance_ids(&t)?,
        // Without Dimensions CloudMonitor answers every instance of the account (assumption).
        None => st.instances.keys().cloned().collect(),
    };
    let region = c.p.text("RegionId");
    let step = SignedDuration::from_secs(i64::from(period));
    let mut points = Vec::new();
    for id in &ids {
        let Some(i) = st.instances.get(id).filter(|i| region.as_ref().is_none_or(|r| *r == i.region)) else {
            continue;
        };
        // No data from a stop (StopInstance(s)) on.
        let until = i.stopped_at.map_or(now, |t| t.min(now));
        // "The time range is a left-open and right-closed interval": points stamped after StartTime.
        for s in st.gpu.samples(id, start, end, until, step).into_iter().filter(|s| s.at > start) {
            let v = (s.percent * 100.0).round() / 100.0;
            points.push(json!({
                "timestamp": s.at.as_millisecond(), "userId": c.account, "instanceId": id,
                "Average": v, "Maximum": v, "Minimum": v,
            }));
        }
    }
    // NextToken: where the next page starts; absent when this page is the last ("A null value
    // indicates that all data has been retrieved").
    let from = match c.p.text("NextToken") {
        None => 0,
        Some(t) => t
            .parse::<usize>()
            .ok()
            .filter(|n| *n <= points.len())
            .ok_or_else(|| invalid(format!("NextToken {t} is not one this API gave.")))?,
    };
    let page: Vec<Value> = points.iter().skip(from).take(length).cloned().collect();
    let next = (from + page.len() < points.len()).then(|| (from + page.len()).to_string());
    let mut answer = json!({
        "Code": "200",
        "Success": true,
        "Period": period.to_string(),
        // `Datapoints` is a string holding the JSON list (the response model types it `str`).
        "Datapoints": Value::Array(page).to_string(),
    });
    if let Some(n) = next {
        answer["NextToken"] = json!(n);
    }
    Ok(answer)
}
