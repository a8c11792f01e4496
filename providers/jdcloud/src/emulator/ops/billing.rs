//! JD billing: calculateTotalPrice (jdcloud_sdk billing model OrderPrice), priced from the catalog.

use gpuctl_simkit::money::round_cents;
use serde_json::{json, Value};

use super::{get, int, invalid, text, Answer, Call};
use crate::api::status;
use crate::emulator::error::JdError;
use crate::emulator::PROVIDER;

/// billing calculateTotalPrice for new vm purchases (`cmd` 1). Each order names its instance type as
/// a `formula` billing item (`{"key":"g.n2.xlarge","value":1}`); `billingType` 1 (by configuration)
/// is priced per hour, 3 (subscription) per `timeSpan` × `timeUnit` (3 month, 4 year, 5 week).
/// Prices come from the catalog, whose source and date are named in `remark`. `totalPrice` is the
/// list price and `discountedTotalPrice` what is charged (jdcloud_sdk 1.6.354
/// services/billing/models/OrderPrice.py); they differ only by a configured `discounts` knob.
pub fn calculate_total_price(c: &Call) -> Answer {
    let cmd = int(c.p, "cmd")?.ok_or_else(|| invalid("cmd is required"))?;
    if cmd != 1 {
        return Err(JdError::new(
            status::NOT_IMPLEMENTED,
            format!("the local cloud prices new purchases (cmd 1) only, not cmd {cmd}"),
        ));
    }
    let packages = int(c.p, "packageCount")?.unwrap_or(1).max(1) as f64;
    let orders = match get(c.p, "orderList") {
        Some(Value::Array(a)) if !a.is_empty() => a.clone(),
        _ => return Err(invalid("orderList is required")),
    };
    let mut details = Vec::new();
    let mut total = 0.0;
    let mut total_discounted = 0.0;
    let mut sources = Vec::new();
    for o in &orders {
        let service = text(o, "serviceCode").unwrap_or_default();
        if service != "vm" {
            return Err(JdError::new(
                status::NOT_IMPLEMENTED,
                format!("the local cloud prices serviceCode vm only, not {service:?}"),
            ));
        }
        let region = text(o, "region").unwrap_or_else(|| c.region.clone());
        let (offer, quantity) = vm_item(c, o, &region)?;
        let itype = offer.instance_type.clone();
        let billing = int(o, "billingType")?.unwrap_or(1);
        let span = int(o, "timeSpan")?.unwrap_or(1).max(1) as f64;
        let unit = int(o, "timeUnit")?.unwrap_or(0);
        let p = &offer.prices;
        let unit_price = match (billing, unit) {
            (1, _) => p.hourly,
            (3, 3) => p.monthly.map(|m| m * span),
            (3, 4) if span == 3.0 => p.three_year,
            (3, 4) => p.yearly.map(|y| y * span),
            (3, 5) => p.weekly.map(|w| w * span),
            _ => return Err(invalid(format!("billingType {billing} with timeUnit {unit} is not priced by the local cloud"))),
        }
        .ok_or_else(|| {
            JdError::new(
                status::FAILED_PRECONDITION,
                format!("the catalog has no price for {itype} with billingType {billing}/timeUnit {unit} (source: {}, as of {})", offer.source, offer.as_of),
            )
        })?;
        let count = int(o, "count")?.unwrap_or(1).max(1) as f64;
        let price = unit_price * quantity * count * packages;
        let discounted = price * factor(c, &itype);
        total += price;
        total_discounted += discounted;
        sources.push(format!("{itype}: {} as of {}", offer.source, offer.as_of));
        details.push(json!({
            "price": price, "priceScale4": price, "discount": price - discounted, "discountedPrice": round_cents(discounted),
            "afterFavorablePrice": discounted, "erasePrice": discounted - round_cents(discounted), "originalPrice": price,
            "serviceCode": "vm", "region": region, "az": text(o, "az"), "billingType": billing,
            "timeSpan": span as i64, "timeUnit": unit, "formula": get(o, "formula"),
        }));
    }
    Ok(json!({
        "totalPrice": round_cents(total),
        "totalPriceScale4": (total * 10000.0).round() / 10000.0,
        "discountedTotalPrice": round_cents(total_discounted),
        "totalDiscount": round_cents(total - total_discounted),
        "list": details,
        "totalOriginalPrice": round_cents(total),
        "favorableInfos": [],
        "remark": format!("catalog prices in CNY{}; {}", if total_discounted < total { ", discounted by the sim's configured discount" } else { "" }, sources.join("; ")),
    }))
}

/// The fraction of the list price this account pays for `itype` (the `discounts` knob; 1.0 without).
fn factor(c: &Call, itype: &str) -> f64 {
    c.ctx.knobs().price_factor(PROVIDER, itype)
}

/// The vm billing item of one order and its quantity. A Formula is `key` (the billing item's alias),
/// `value` (the quantity, a number: 用量) and `number` (how many; jdcloud_sdk 1.6.354
/// services/billing/models/Formula.py); a vm order's item is its instance type. A value that is not a
/// number is refused, as JD's typed model would.
fn vm_item<'c>(c: &'c Call, o: &Value, region: &str) -> Result<(&'c gpuctl_simkit::Offer, f64), JdError> {
    let Some(Value::Array(formula)) = get(o, "formula") else {
        return Err(invalid(
            "orderList[].formula is required for a new purchase: [{\"key\":<instance type>,\"value\":1}]",
        ));
    };
    for f in formula {
        let key = text(f, "key").unwrap_or_default();
        let value = match get(f, "value") {
            None => 1.0,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
            Some(other) => {
                return Err(invalid(format!(
                    "orderList[].formula[].value must be a number (a quantity), got {other}"
                )))
            }
        };
        let number = match get(f, "number") {
            None => 1.0,
            Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
            Some(other) => {
                return Err(invalid(format!("orderList[].formula[].number must be a number, got {other}")))
            }
        };
        if !(value > 0.0 && number > 0.0) {
            return Err(invalid(format!("orderList[].formula[] {key}: value and number must be positive")));
        }
        if let Some(offer) = c.ctx.offer(PROVIDER, region, &key) {
            return Ok((offer, value * number));
        }
    }
    Err(invalid(format!("orderList[].formula names no instance type sold in {region}")))
}
