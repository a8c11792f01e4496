//! JD billing `queryBillDetail` (issue 15): the bill's lines in one region, made from what this
//! emulator ran (`JdState::bills`; `gpuctl_simkit::bill` has the settlement rules and which are
//! assumptions), one line per instance and settled hour (or one per prepaid order), in the
//! unverified response shape `crate::api::bill` describes. Parameters: jdcloud_sdk 1.6.354
//! `services/billing/apis/QueryBillDetailRequest.py`. The definition names no error codes: refusals
//! use JD's status word `INVALID_ARGUMENT` (400), as this emulator's other operations do.

use gpuctl_simkit::bill::{china, Charge, Line, Month, Usage};
use jiff::Timestamp;
use serde_json::{json, Value};

use super::{get, int, invalid, text, Answer, Call};
use crate::api::bill::{
    AMOUNT_DECIMALS, BY_CONFIGURATION, MONTHLY_YEARLY, PAGE_MAX, RESOURCE_IDS_MAX, TIME_FORMAT,
};
use crate::emulator::state::JdState;
use crate::emulator::PROVIDER;

/// An instance starts billing at its creation at the catalog's price for its charge mode (the one
/// `calculateTotalPrice` quotes): hourly, or a prepaid term's total once. No price: nothing billed.
pub(crate) fn open(st: &mut JdState, c: &Call, id: &str) {
    let Some(i) = st.instances.get(id) else { return };
    if i.failed {
        return;
    }
    let Some(offer) = c.ctx.offer(PROVIDER, &i.region, &i.instance_type) else { return };
    let p = &offer.prices;
    let charge = match (i.charge_mode.as_str(), i.charge_term) {
        ("prepaid_by_duration", Some(term)) => {
            let days = term.as_hours() / 24;
            let total = match days {
                d if d == 365 * 3 => p.three_year,
                d if d % 365 == 0 => p.yearly.map(|y| y * (d / 365) as f64),
                d => p.monthly.map(|m| m * (d / 30) as f64),
            };
            let Some(total) = total else { return };
            Charge::Upfront { list_total: total, until: c.now.checked_add(term).unwrap_or(c.now) }
        }
        _ => match p.hourly {
            Some(h) => Charge::Hourly { list_per_hour: h },
            None => return,
        },
    };
    let usage = Usage {
        resource_id: i.id.clone(),
        product: "vm".into(),
        region: i.region.clone(),
        zone: i.az.clone(),
        instance_type: i.instance_type.clone(),
        pay_mode: i.charge_mode.clone(),
        charge,
        start: c.now,
        end: None,
    };
    st.bills.open(usage);
}

fn time(c: &Call, name: &str) -> Result<Timestamp, crate::emulator::error::JdError> {
    let t = text(c.p, name).ok_or_else(|| invalid(format!("{name} is required")))?;
    jiff::civil::DateTime::strptime(TIME_FORMAT, &t)
        .ok()
        .and_then(|d| d.to_zoned(china()).ok())
        .map(|z| z.timestamp())
        .ok_or_else(|| invalid(format!("{name} {t} is not in the format yyyy-MM-dd HH:mm:ss")))
}

pub fn query_bill_detail(c: &Call, st: &JdState) -> Answer {
    let (start, end) = (time(c, "startTime")?, time(c, "endTime")?);
    // "账期开始时间,不支持跨月查询": both ends in one month (UTC+8).
    let month = Month::of(start);
    if Month::of(end) != month {
        return Err(invalid("startTime and endTime must be in the same month: a query cannot cross months"));
    }
    if end < start {
        return Err(invalid("endTime must not be before startTime"));
    }
    let index = int(c.p, "pageIndex")?.unwrap_or(1);
    if index < 1 {
        return Err(invalid(format!("pageIndex {index} must be at least 1")));
    }
    // *Assumption:* the default page size is 10, as the billing package's Pagination model says.
    let size = int(c.p, "pageSize")?.unwrap_or(10);
    if !(1..=PAGE_MAX as i64).contains(&size) {
        return Err(invalid(format!("pageSize {size} must be between 1 and {PAGE_MAX}")));
    }
    let ids: Option<Vec<String>> = match get(c.p, "resourceIds") {
        None | Some(Value::Null) => None,
        Some(Value::Array(a)) => Some(a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()),
        Some(_) => return Err(invalid("resourceIds must be a list of resource ids")),
    };
    if ids.as_ref().is_some_and(|i| i.len() > RESOURCE_IDS_MAX) {
        return Err(invalid(format!("resourceIds lists more than {RESOURCE_IDS_MAX} resources")));
    }
    let billing_type = int(c.p, "billingType")?;
    let lines = st.bills.lines(month, c.now, &c.ctx.knobs(), PROVIDER, AMOUNT_DECIMALS);
    let picked: Vec<&Line> = lines
        .iter()
        .filter(|l| {
            let u = &st.bills.usages[l.usage];
            // The bill of this region; the lines whose period meets [startTime, endTime].
            u.region == c.region
                && l.period_end > start
                && l.period_start <= end
                && ids.as_ref().is_none_or(|i| i.contains(&u.resource_id))
                && billing_type.is_none_or(|b| b == billing_type_of(u))
        })
        .collect();
    let total = picked.len();
    let skip = ((index - 1) as usize).saturating_mul(size as usize);
    let page: Vec<Value> = picked
        .into_iter()
        .skip(skip)
        .take(size as usize)
        .map(|l| summary(&st.bills.usages[l.usage], l))
        .collect();
    Ok(json!({
        "result": page,
        "pagination": {
            "currPageNo": index,
            "pageSize": size,
            "numberRecords": total,
            "numberPages": total.div_ceil(size as usize),
            "startIndex": skip,
        },
    }))
}

fn billing_type_of(u: &Usage) -> i64 {
    if matches!(u.charge, Charge::Upfront { .. }) {
        MONTHLY_YEARLY
    } else {
        BY_CONFIGURATION
    }
}

fn summary(u: &Usage, l: &Line) -> Value {
    let at = |t: Timestamp| t.to_zoned(china()).strftime(TIME_FORMAT).to_string();
    let upfront = matches!(u.charge, Charge::Upfront { .. });
    json!({
        "appCode": "vm",
        "appCodeName": "云主机",
        "serviceCode": u.product,
        "serviceCodeName": "云主机",
        "billingType": billing_type_of(u),
        "billingTypeName": if upfront { "包年包月" } else { "按配置" },
        "resourceId": u.resource_id,
        "resourceName": "",
        "region": u.region,
        "az": u.zone,
        "actionTypeName": if upfront { "新购" } else { "按量费用" },
        "formula": u.instance_type,
        "startTime": at(l.used_start),
        "endTime": at(l.used_end),
        "billTime": at(l.settled_at),
        "totalFee": l.list.as_f64(),
        "discountFee": gpuctl_simkit::bill::Amount(l.list.0 - l.billed.0).as_f64(),
        "realTotalFee": l.billed.as_f64(),
        "cashPayFee": l.billed.as_f64(),
        "cashCouponPayFee": 0.0,
        "balancePayFee": 0.0,
        "arrearFee": 0.0,
    })
}
