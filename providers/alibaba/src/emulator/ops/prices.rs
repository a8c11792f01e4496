//! ECS prices and stock: DescribePrice, DescribeAvailableResource, and the catalog price of a
//! launch (RunInstances' TradePrice uses the same one).

use gpuctl_simkit::money::round_cents;
use gpuctl_simkit::{Offer, ParamErrors};
use serde_json::{json, Value};

use super::{offer_for, region, sold_out, Answer, Call};
use crate::api::codes;
use crate::emulator::error::EcsError;
use crate::emulator::PROVIDER;

/// The catalogued price of `amount` instances for the chosen billing, or None when the catalog has
/// no price for that mode.
pub(crate) fn price_for(
    offer: &Offer,
    charge: &str,
    spot: &str,
    term: &Option<(u32, String)>,
) -> Option<f64> {
    let p = &offer.prices;
    match (charge, term) {
        ("PrePaid", Some((n, unit))) if unit == "Week" => p.weekly.map(|w| w * f64::from(*n)),
        ("PrePaid", Some((n, _))) => match n {
            12 => p.yearly,
            36 => p.three_year,
            n => p.monthly.map(|m| m * f64::from(*n)),
        },
        _ if spot != "NoSpot" => p.spot_hourly,
        _ => p.hourly,
    }
}

pub fn describe_price(c: &Call) -> Answer {
    let region = region(c)?;
    let resource = c.p.text("ResourceType").unwrap_or_else(|| "instance".into());
    if resource != "instance" {
        return Err(EcsError::new(
            400,
            "InvalidResourceType.NotSupported",
            format!("The local cloud prices ResourceType=instance only, not \"{resource}\"."),
        ));
    }
    let instance_type = c.p.required("InstanceType")?;
    let offer = offer_for(c, &region, &instance_type)?;
    let unit = c.p.text("PriceUnit").unwrap_or_else(|| "Hour".into());
    let period = c.p.opt_i64("Period")?.unwrap_or(1).max(1) as u32;
    let spot = c.p.text("SpotStrategy").unwrap_or_else(|| "NoSpot".into());
    let price = match unit.as_str() {
        "Hour" => price_for(offer, "PostPaid", &spot, &None),
        "Week" => price_for(offer, "PrePaid", &spot, &Some((period, "Week".into()))),
        "Month" => price_for(offer, "PrePaid", &spot, &Some((period, "Month".into()))),
        "Year" => price_for(offer, "PrePaid", &spot, &Some((period * 12, "Month".into()))),
        other => return Err(EcsError::invalid("PriceUnit", "a supported value", &json!(other))),
    };
    let price = price.ok_or_else(|| {
        EcsError::new(
            400,
            codes::PRICE_NOT_FOUND,
            format!(
                "The catalog has no {unit} price for {instance_type} in {region} (source: {}, as of {}).",
                offer.source, offer.as_of
            ),
        )
    })?;
    let price = round_cents(price);
    Ok(json!({
        "PriceInfo": {
            "Price": {
                "OriginalPrice": price,
                "DiscountPrice": 0.0,
                "TradePrice": price,
                "Currency": "CNY",
                "DetailInfos": { "DetailInfo": [
                    { "Resource": "instanceType", "OriginalPrice": price, "DiscountPrice": 0.0, "TradePrice": price, "SubRules": { "Rule": [] } }
                ] },
            },
            "Rules": { "Rule": [] },
        },
    }))
}

pub fn describe_available_resource(c: &Call) -> Answer {
    let region = region(c)?;
    let destination = c.p.required("DestinationResource")?;
    let zone_filter = c.p.text("ZoneId");
    let type_filter = c.p.text("InstanceType");
    let offers: Vec<&Offer> = c
        .ctx
        .offers(PROVIDER)
        .filter(|o| o.region == region && type_filter.as_ref().is_none_or(|t| *t == o.instance_type))
        .collect();
    let mut zones: Vec<String> = offers.iter().flat_map(|o| o.zones.iter().cloned()).collect();
    zones.sort();
    zones.dedup();
    let stock = |with: bool| if with { ("Available", "WithStock") } else { ("SoldOut", "WithoutStock") };
    let mut out = Vec::new();
    for zone in zones.iter().filter(|z| zone_filter.as_ref().is_none_or(|f| f == *z)) {
        let here: Vec<(&Offer, bool)> = offers
            .iter()
            .filter(|o| o.zones.contains(zone))
            .map(|o| (*o, !sold_out(c.ctx, o, zone)))
            .collect();
        let any = here.iter().any(|(_, s)| *s);
        let (zstatus, zcat) = stock(any);
        let supported: Vec<Value> = match destination.as_str() {
            "Zone" => vec![json!({"Value": zone, "Status": zstatus, "StatusCategory": zcat})],
            "InstanceType" => here
                .iter()
                .map(|(o, s)| {
                    let (st, cat) = stock(*s);
                    json!({"Value": o.instance_type, "Status": st, "StatusCategory": cat})
                })
                .collect(),
            other => {
                return Err(EcsError::new(
                    400,
                    "InvalidDestinationResource.ValueNotSupported",
                    format!(
                        "The local cloud answers DestinationResource Zone or InstanceType, not \"{other}\"."
                    ),
                ))
            }
        };
        out.push(json!({
            "RegionId": region,
            "ZoneId": zone,
            "Status": zstatus,
            "StatusCategory": zcat,
            "AvailableResources": { "AvailableResource": [
                { "Type": destination, "SupportedResources": { "SupportedResource": supported } }
            ] },
        }));
    }
    Ok(json!({ "AvailableZones": { "AvailableZone": out } }))
}
