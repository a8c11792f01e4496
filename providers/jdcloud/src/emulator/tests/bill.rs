//! queryBillDetail against what the emulator ran: one line per settled hour at the catalog's price,
//! the discount knob, the deletion ending the bill, pages from 1, and the definition's refusals.

use gpuctl_simkit::bill::{china, Month};
use gpuctl_simkit::knobs::Discount;
use gpuctl_simkit::Knobs;
use jiff::SignedDuration;
use serde_json::json;

use super::*;

fn knobs() -> Knobs {
    Knobs {
        boot_seconds: 10,
        bill_lag_seconds: 3600,
        discounts: vec![Discount {
            provider: Some(gpuctl_simkit::Provider::JdCloud),
            instance_type: None,
            percent: 10.0,
        }],
        ..Knobs::default()
    }
}

fn text(t: jiff::Timestamp) -> String {
    t.to_zoned(china()).strftime("%Y-%m-%d %H:%M:%S").to_string()
}

#[test]
fn settled_hours_are_lines_and_deletion_ends_them() {
    let (jd, ctx) = (JdCloud::new(), ctx_with(knobs()));
    let m = Month::of(ctx.now()).next();
    ctx.clock().set_at_least(m.start() + SignedDuration::from_hours(24));
    let id = create(&jd, &ctx, json!({})).unwrap().remove(0);
    ctx.clock().advance(SignedDuration::from_hours(3));
    call(&jd, &ctx, "DELETE", &format!("instances/{id}"), json!({})).unwrap();
    ctx.clock().advance(SignedDuration::from_hours(5));
    let window = json!({ "startTime": text(m.start()), "endTime": text(m.end() - SignedDuration::from_secs(1)),
        "pageIndex": 1, "pageSize": 2 });
    let v = call(&jd, &ctx, "POST", "billDetail:list", window.clone()).unwrap();
    assert_eq!(v["pagination"]["numberRecords"], 3, "{v}");
    let lines = v["result"].as_array().unwrap();
    assert_eq!(lines.len(), 2);
    assert_eq!(lines[0]["resourceId"], id.as_str());
    assert_eq!(lines[0]["totalFee"], 12.5);
    // 10 % off ¥12.50 is ¥11.25, at the cent.
    assert_eq!(lines[0]["realTotalFee"], 11.25);
    let mut next = window.clone();
    next["pageIndex"] = json!(2);
    let v = call(&jd, &ctx, "POST", "billDetail:list", next).unwrap();
    assert_eq!(v["result"].as_array().unwrap().len(), 1, "three hours, then nothing: {v}");
    let mut other = window;
    other["resourceIds"] = json!(["i-other"]);
    let v = call(&jd, &ctx, "POST", "billDetail:list", other).unwrap();
    assert_eq!(v["pagination"]["numberRecords"], 0);
}

#[test]
fn the_definitions_refusals() {
    let (jd, ctx) = (JdCloud::new(), ctx_with(knobs()));
    let m = Month::of(ctx.now());
    let (a, b) = (text(m.start()), text(m.end()));
    let many: Vec<String> = (0..501).map(|n| format!("i-{n}")).collect();
    for body in [
        json!({ "endTime": a }),
        json!({ "startTime": a }),
        json!({ "startTime": "2026/12/01", "endTime": a }),
        json!({ "startTime": a, "endTime": b }),
        json!({ "startTime": a, "endTime": a, "pageSize": 1001 }),
        json!({ "startTime": a, "endTime": a, "pageSize": 0 }),
        json!({ "startTime": a, "endTime": a, "pageIndex": 0 }),
        json!({ "startTime": a, "endTime": a, "resourceIds": many }),
    ] {
        let e = call(&jd, &ctx, "POST", "billDetail:list", body.clone()).unwrap_err();
        assert_eq!(e.status, "INVALID_ARGUMENT", "{body}: {e:?}");
    }
}
