//! BSS OpenAPI 2017-12-14 (issue 15): `DescribeInstanceBill`, the account's bill by instance, made from
//! what this emulator ran (`EcsState::bills`; `gpuctl_simkit::bill` has the settlement rules and which
//! are assumptions). Parameters and fields: alibabacloud_bssopenapi20171214 5.1.2
//! `models/_describe_instance_bill_request.py` and `models/_describe_instance_bill_response_body.py`.
//!
//! A MONTHLY item is an instance's settled lines of the cycle summed; a DAILY item, those of one day
//! (UTC+8). Sums of lines already at the cent, so an item is exactly the sum of what it stands for.
//!
//! *Assumption:* the models name no error codes. The refusals carry ECS's generic `MissingParameter`
//! and `InvalidParameter` (400), the codes this emulator's other products use for the same kinds of
//! fault; the messages quote the definition.

use gpuctl_simkit::bill::{china, Charge, Line, Month, Usage};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::{Answer, Call};
use crate::api::bss::{
    AMOUNT_DECIMALS, CYCLES_BACK, DAILY, ITEM_ORDER, ITEM_PAYG, MONTHLY, PAGE_DEFAULT, PAGE_MAX,
    PAY_AS_YOU_GO, SERVICE_PERIOD_SECONDS, SUBSCRIPTION,
};
use crate::api::codes;
use crate::emulator::error::EcsError;
use crate::emulator::state::EcsState;
use crate::emulator::PROVIDER;

fn invalid(message: impl Into<String>) -> EcsError {
    EcsError::new(400, codes::INVALID_PARAMETER, message)
}

/// An instance starts billing at its launch, at the price the local cloud's own quote gives (the
/// hourly price, or a prepaid term's total once). No catalogued price: nothing is billed — the
/// local cloud does not invent one.
pub(crate) fn open(st: &mut EcsState, id: &str, unit_price: Option<f64>, now: Timestamp) {
    let (Some(price), Some(i)) = (unit_price, st.instances.get(id)) else { return };
    let charge = match (&i.term, i.charge_type.as_str()) {
        (Some((n, unit)), "PrePaid") => {
            // A week is 168 hours; a month is taken as 730 (as the Tencent emulator takes it).
            let hours = if unit == "Week" { 168 } else { 730 } * i64::from(*n);
            Charge::Upfront {
                list_total: price,
                until: now.checked_add(SignedDuration::from_hours(hours)).unwrap_or(now),
            }
        }
        _ => Charge::Hourly { list_per_hour: price },
    };
    let usage = Usage {
        resource_id: i.id.clone(),
        product: "ecs".into(),
        region: i.region.clone(),
        zone: i.zone.clone(),
        instance_type: i.instance_type.clone(),
        pay_mode: i.charge_type.clone(),
        charge,
        start: now,
        end: None,
    };
    st.bills.open(usage);
}

/// `BillingCycle` YYYY-MM within the last 18 cycles (this one counting as the first).
fn cycle(c: &Call) -> Result<Month, EcsError> {
    let text = c.p.required("BillingCycle")?;
    let m = Month::parse(&text).ok_or_else(|| {
        invalid(format!(
            "The specified parameter \"BillingCycle\" ({text}) is not valid: the format is YYYY-MM."
        ))
    })?;
    let back = Month::of(c.now).months_since(m);
    if back >= CYCLES_BACK {
        return Err(invalid(format!(
            "The specified parameter \"BillingCycle\" ({text}) is not valid: only the last {CYCLES_BACK} billing cycles are supported."
        )));
    }
    Ok(m)
}

/// The day a DAILY query asks for: `BillingDate` YYYY-MM-DD, required with DAILY. The definition says
/// a date in another month is not refused: "the query results are returned based on the time specified
/// by BillingCycle". *Assumption:* that is the same day of the month inside the cycle; a day the
/// cycle does not have is refused.
fn day(c: &Call, m: Month) -> Result<jiff::civil::Date, EcsError> {
    let Some(text) = c.p.text("BillingDate") else {
        return Err(EcsError::new(
            400,
            codes::MISSING_PARAMETER,
            "BillingDate is mandatory for this action when Granularity is DAILY.",
        ));
    };
    let d: jiff::civil::Date = jiff::civil::Date::strptime("%Y-%m-%d", &text).map_err(|_| {
        invalid(format!(
            "The specified parameter \"BillingDate\" ({text}) is not valid: the format is YYYY-MM-DD."
        ))
    })?;
    jiff::civil::Date::new(m.year, m.month, d.day()).map_err(|_| {
        invalid(format!(
            "The specified parameter \"BillingDate\" ({text}) is not valid: {} has no day {}.",
            m.text(),
            d.day()
        ))
    })
}

pub fn describe_instance_bill(c: &Call, st: &EcsState) -> Answer {
    let m = cycle(c)?;
    let granularity = c.p.text("Granularity").unwrap_or_else(|| MONTHLY.to_string());
    let daily = match granularity.as_str() {
        MONTHLY => None,
        DAILY => Some(day(c, m)?),
        other => {
            return Err(invalid(format!(
                "The specified parameter \"Granularity\" ({other}) is not valid: MONTHLY or DAILY."
            )))
        }
    };
    let size = match c.p.opt_i64("MaxResults")? {
        None => PAGE_DEFAULT,
        Some(n) if (1..=PAGE_MAX as i64).contains(&n) => n as usize,
        Some(n) => {
            return Err(invalid(format!(
                "The specified parameter \"MaxResults\" ({n}) is not valid: the maximum value is {PAGE_MAX}."
            )))
        }
    };
    // "The value must be empty or set to the NextToken value returned in the previous response.
    // Otherwise, an error occurs."
    let skip = match c.p.text("NextToken") {
        None => 0,
        Some(t) => t.strip_prefix(TOKEN_PREFIX).and_then(|n| n.parse::<usize>().ok()).ok_or_else(|| {
            invalid("The specified parameter \"NextToken\" is not valid: pass the NextToken of the previous answer.")
        })?,
    };
    let instance = c.p.text("InstanceID");
    let subscription = c.p.text("SubscriptionType");
    if let Some(s) = subscription.as_deref().filter(|s| *s != SUBSCRIPTION && *s != PAY_AS_YOU_GO) {
        return Err(invalid(format!(
            "The specified parameter \"SubscriptionType\" ({s}) is not valid: {SUBSCRIPTION} or {PAY_AS_YOU_GO}."
        )));
    }
    let hide_zero = c.p.opt_bool("IsHideZeroCharge")?.unwrap_or(false);
    let lines = st.bills.lines(m, c.now, &c.ctx.knobs(), PROVIDER, AMOUNT_DECIMALS);
    // One item per instance (and per day when DAILY), in the order the lines first appear.
    let mut items: Vec<(usize, Vec<&Line>)> = Vec::new();
    for l in &lines {
        let u = &st.bills.usages[l.usage];
        if daily.is_some_and(|d| l.period_start.to_zoned(china()).date() != d)
            || instance.as_ref().is_some_and(|i| *i != u.resource_id)
            || subscription.as_ref().is_some_and(|s| s != subscription_of(u))
        {
            continue;
        }
        match items.iter_mut().find(|(i, _)| *i == l.usage) {
            Some((_, ls)) => ls.push(l),
            None => items.push((l.usage, vec![l])),
        }
    }
    let rendered: Vec<Value> = items
        .iter()
        .map(|(i, ls)| item(&st.bills.usages[*i], ls, m, daily))
        .filter(|v| !hide_zero || v["PretaxGrossAmount"] != json!(0.0) || v["PretaxAmount"] != json!(0.0))
        .collect();
    let total = rendered.len();
    let page: Vec<Value> = rendered.into_iter().skip(skip).take(size).collect();
    let next = if skip + page.len() < total {
        format!("{TOKEN_PREFIX}{}", skip + page.len())
    } else {
        String::new()
    };
    Ok(json!({
        "Code": "Success",
        "Message": "Successful!",
        "Success": true,
        "Data": {
            "BillingCycle": m.text(),
            "AccountID": c.account,
            "AccountName": c.account,
            "TotalCount": total,
            "MaxResults": size,
            "NextToken": next,
            "Items": page,
        },
    }))
}

/// The local cloud's NextToken: the offset of the next item behind a prefix (opaque to a caller).
const TOKEN_PREFIX: &str = "gpuctl-sim-bill-";

fn subscription_of(u: &Usage) -> &'static str {
    if matches!(u.charge, Charge::Upfront { .. }) {
        SUBSCRIPTION
    } else {
        PAY_AS_YOU_GO
    }
}

fn item(u: &Usage, lines: &[&Line], m: Month, daily: Option<jiff::civil::Date>) -> Value {
    let list: gpuctl_simkit::bill::Amount = lines.iter().map(|l| l.list).sum();
    let billed: gpuctl_simkit::bill::Amount = lines.iter().map(|l| l.billed).sum();
    let seconds: i64 = lines.iter().map(|l| l.used_end.duration_since(l.used_start).as_secs()).sum();
    let upfront = matches!(u.charge, Charge::Upfront { .. });
    json!({
        "InstanceID": u.resource_id,
        "ProductCode": u.product,
        "ProductName": "云服务器 ECS",
        "ProductType": "",
        "PipCode": u.product,
        "BillingDate": daily.map(|d| d.to_string()).unwrap_or_default(),
        "BillingType": if upfront { "Subscription" } else { "PayAsYouGo" },
        "SubscriptionType": subscription_of(u),
        "Item": if upfront { ITEM_ORDER } else { ITEM_PAYG },
        "InstanceSpec": u.instance_type,
        "Region": u.region,
        "Zone": u.zone,
        "Currency": "CNY",
        // The model types the amounts `float`; at the cent their JSON text is the exact decimal.
        "PretaxGrossAmount": list.as_f64(),
        "InvoiceDiscount": gpuctl_simkit::bill::Amount(list.0 - billed.0).as_f64(),
        "DeductedByCoupons": 0.0,
        "AfterDiscountAmount": billed.as_f64(),
        "PretaxAmount": billed.as_f64(),
        "ServicePeriod": seconds.to_string(),
        "ServicePeriodUnit": SERVICE_PERIOD_SECONDS,
        "Tag": "",
        "NickName": "",
        "BillAccountID": "",
        "CostUnit": "未分配",
        "ResourceGroup": "",
        "BillingCycle": m.text(),
    })
}
