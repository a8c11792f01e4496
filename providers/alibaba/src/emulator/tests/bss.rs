//! BSS OpenAPI's DescribeInstanceBill against what the emulator ran: an instance's settled hours summed
//! into one MONTHLY item (list and payable after the discount knob), a day's into a DAILY one, paging
//! by NextToken, the end of billing at deletion, and the definition's refusals (signed requests through
//! `handle`, so the contract schema's refusals are the ones a caller meets).

use gpuctl_simkit::bill::Month;
use gpuctl_simkit::knobs::Discount;
use gpuctl_simkit::{Emulator, Knobs};
use jiff::SignedDuration;
use serde_json::Value;

use super::*;
use crate::api::bss::BSS_API_VERSION;

fn bss(ecs: &Ecs, ctx: &SimCtx, query: &[(&str, &str)]) -> (u16, Value) {
    let (ak, sk) = test_keys();
    let nonce = ctx.new_id("n-", 16);
    let req = signed_for(
        BSS_API_VERSION,
        gpuctl_sign::Algorithm::Acs3,
        ak,
        sk,
        "DescribeInstanceBill",
        query,
        &nonce,
        SignedDuration::ZERO,
    );
    ecs.tick(ctx);
    let r = ecs.handle(&req, ctx);
    (r.status, r.json_body())
}

fn knobs() -> Knobs {
    Knobs {
        bill_lag_seconds: 3600,
        discounts: vec![Discount {
            provider: Some(gpuctl_simkit::Provider::Alibaba),
            instance_type: None,
            percent: 20.0,
        }],
        ..Knobs::default()
    }
}

#[test]
fn a_cycle_sums_an_instances_settled_hours_into_one_item_and_deletion_ends_it() {
    let (ecs, ctx) = (Ecs::new(), ctx_with(knobs()));
    // Start on a whole hour of a month's second day, so the hours are whole.
    let m = Month::of(ctx.now()).next();
    ctx.clock().set_at_least(m.start() + SignedDuration::from_hours(24));
    let ids = run(&ecs, &ctx, &[("Amount", "2")]).unwrap();
    ctx.clock().advance(SignedDuration::from_hours(10));
    call(
        &ecs,
        &ctx,
        "DeleteInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceId.1", &ids[0]), ("Force", "true")],
    )
    .unwrap();
    ctx.clock().advance(SignedDuration::from_hours(5));
    let cycle = m.text();
    let (status, v) =
        bss(&ecs, &ctx, &[("BillingCycle", &cycle), ("Granularity", "MONTHLY"), ("MaxResults", "1")]);
    assert_eq!(status, 200, "{v}");
    assert_eq!(v["Success"], true);
    assert_eq!(v["Data"]["TotalCount"], 2, "{v}");
    let first = &v["Data"]["Items"][0];
    assert_eq!(first["InstanceID"], ids[0].as_str());
    // Ten hours of ¥9.74, 20 % off; billed from the launch to the deletion, settled an hour after each.
    // Each hour's line is at the cent (¥7.792 → ¥7.79), and the item is their sum: ¥77.90, not ¥77.92.
    assert_eq!(first["PretaxGrossAmount"], 97.4);
    assert_eq!(first["PretaxAmount"], 77.9);
    assert_eq!(first["ServicePeriod"], "36000");
    assert_eq!(first["SubscriptionType"], "PayAsYouGo");
    let token = v["Data"]["NextToken"].as_str().unwrap().to_string();
    assert!(!token.is_empty());
    let (_, v) = bss(&ecs, &ctx, &[("BillingCycle", &cycle), ("MaxResults", "1"), ("NextToken", &token)]);
    let second = &v["Data"]["Items"][0];
    assert_eq!(second["InstanceID"], ids[1].as_str());
    // Still running: fourteen hours settled (the fifteenth is in its lag).
    assert_eq!(second["ServicePeriod"], (14 * 3600).to_string());
    assert_eq!(v["Data"]["NextToken"], "");
    // One instance; a day; the cycle before has nothing.
    let (_, v) = bss(&ecs, &ctx, &[("BillingCycle", &cycle), ("InstanceID", &ids[1])]);
    assert_eq!(v["Data"]["Items"].as_array().unwrap().len(), 1);
    let day = (m.start() + SignedDuration::from_hours(30))
        .to_zoned(gpuctl_simkit::bill::china())
        .date()
        .to_string();
    let (_, v) =
        bss(&ecs, &ctx, &[("BillingCycle", &cycle), ("Granularity", "DAILY"), ("BillingDate", &day)]);
    assert_eq!(v["Data"]["Items"][0]["BillingDate"], day.as_str(), "{v}");
    let (_, v) = bss(
        &ecs,
        &ctx,
        &[("BillingCycle", &Month::of(ctx.now() - SignedDuration::from_hours(24 * 40)).text())],
    );
    assert_eq!(v["Data"]["TotalCount"], 0, "{v}");
}

#[test]
fn the_definitions_refusals() {
    let (ecs, ctx) = (Ecs::new(), ctx_with(knobs()));
    let now = Month::of(ctx.now());
    let mut old = now;
    for _ in 0..18 {
        old = Month {
            year: if old.month == 1 { old.year - 1 } else { old.year },
            month: if old.month == 1 { 12 } else { old.month - 1 },
        };
    }
    for (query, code) in [
        (vec![("Granularity", "MONTHLY")], "MissingParameter"),
        (vec![("BillingCycle", "2026/12")], "InvalidParameter"),
        (vec![("BillingCycle", old.text().as_str())], "InvalidParameter"),
        (vec![("BillingCycle", now.text().as_str()), ("Granularity", "DAILY")], "MissingParameter"),
        (
            vec![("BillingCycle", now.text().as_str()), ("Granularity", "DAILY"), ("BillingDate", "12-01")],
            "InvalidParameter",
        ),
        (vec![("BillingCycle", now.text().as_str()), ("MaxResults", "301")], "InvalidParameter"),
        (vec![("BillingCycle", now.text().as_str()), ("MaxResults", "0")], "InvalidParameter"),
        (vec![("BillingCycle", now.text().as_str()), ("Granularity", "HOURLY")], "InvalidParameter"),
        (vec![("BillingCycle", now.text().as_str()), ("NextToken", "forged")], "InvalidParameter"),
    ] {
        let (status, v) = bss(&ecs, &ctx, &query);
        assert_eq!(status, 400, "{query:?}: {v}");
        assert!(v["Code"].as_str().unwrap().starts_with(code), "{query:?}: {v}");
    }
    // The 17th cycle back is still served.
    let mut ok = now;
    for _ in 0..17 {
        ok = Month {
            year: if ok.month == 1 { ok.year - 1 } else { ok.year },
            month: if ok.month == 1 { 12 } else { ok.month - 1 },
        };
    }
    let (status, v) = bss(&ecs, &ctx, &[("BillingCycle", &ok.text())]);
    assert_eq!(status, 200, "{v}");
}
