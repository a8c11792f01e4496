//! JD billing: calculateTotalPrice (jdcloud_sdk billing model OrderPrice), priced from the catalog.

use gpuctl_simkit::money::round_cents;
use serde_json::{json, Value};

use super::{get, int, invalid, text, Answer, Call};
use crate::api::status;
use crate::emulator::error::JdError;
use crate::emulator::PROVIDER;

/// billing calculateTotalPrice for new vm purchases (`cmd` 1). Each order names its type in
/// `formula` (`{"key":"instanceType","value":"g.n2.xlarge"}`); `billingType` 1 (by configuration)
/// is priced per hour, 3 (subscription) per `timeSpan` × `timeUnit` (3 month, 4 year, 5 week).
/// Prices come from the catalog, whose source and date are named in `remark`.
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
    let mut sources = Vec::new();
    for o in &orders {
        let service = text(o, "serviceCode").unwrap_or_default();
        if service != "vm" {
            return Err(JdError::new(
                status::NOT_IMPLEMENTED,
                format!("the local cloud prices serviceCode vm only, not {service:?}"),
            ));
        }
        let itype = match get(o, "formula") {
            Some(Value::Array(f)) => f
                .iter()
                .find(|x| text(x, "key").as_deref() == Some("instanceType"))
                .and_then(|x| text(x, "value")),
            _ => None,
        }
        .ok_or_else(|| invalid("orderList[].formula needs {\"key\":\"instanceType\",\"value\":<type>}"))?;
        let region = text(o, "region").unwrap_or_else(|| c.region.clone());
        let offer = c
            .ctx
            .offer(PROVIDER, &region, &itype)
            .ok_or_else(|| invalid(format!("instanceType {itype} is not sold in {region}")))?;
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
        let price = unit_price * count * packages;
        total += price;
        sources.push(format!("{itype}: {} as of {}", offer.source, offer.as_of));
        details.push(json!({
            "price": price, "priceScale4": price, "discount": 0.0, "discountedPrice": round_cents(price),
            "afterFavorablePrice": price, "erasePrice": price - round_cents(price), "originalPrice": price,
            "serviceCode": "vm", "region": region, "az": text(o, "az"), "billingType": billing,
            "timeSpan": span as i64, "timeUnit": unit, "formula": get(o, "formula"),
        }));
    }
    Ok(json!({
        "totalPrice": round_cents(total),
        "totalPriceScale4": (total * 10000.0).round() / 10000.0,
        "discountedTotalPrice": round_cents(total),
        "totalDiscount": 0.0,
        "list": details,
        "totalOriginalPrice": round_cents(total),
        "favorableInfos": [],
        "remark": format!("catalog prices in CNY; {}", sources.join("; ")),
    }))
}
