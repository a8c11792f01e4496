//! Billing's DescribeBillDetail over what the emulator ran: hourly lines at the quoted price after the
//! settlement lag, the discount knob, the definition's refusals (month format, 18 months back, cross-month
//! BeginTime/EndTime, Limit over 300), paging, and the client's round trip over HTTP with exact sums.

use gpuctl_cloud::cost::{Amount, BillQuery};
use gpuctl_simkit::knobs::Discount;
use gpuctl_simkit::{Emulator, Knobs, SimCtx};
use jiff::{SignedDuration, Timestamp};
use serde_json::{json, Value};

use super::{call, code, run, setup, signed, Tencent};

fn bill(emu: &Tencent, ctx: &SimCtx, body: Value) -> Value {
    let mut req = signed("billing", "DescribeBillDetail", &body);
    for h in req.headers.iter_mut().filter(|(k, _)| k == "x-tc-version") {
        h.1 = "2018-07-09".into();
    }
    assert!(emu.claims(&req));
    emu.tick(ctx);
    let resp = emu.handle(&req, ctx);
    assert_eq!(resp.status, 200);
    resp.json_body()["Response"].clone()
}

/// The month (UTC+8) `t` is in, as `yyyy-mm`.
fn month_of(t: Timestamp) -> String {
    gpuctl_simkit::bill::Month::of(t).text()
}

/// One pay-as-you-go instance started on an hour boundary at least 30 h before its month ends, run
/// for 10 h and terminated; the clock is then `after` past the termination.
fn ran_ten_hours(knobs: Knobs, after: SignedDuration) -> (Tencent, SimCtx, String, Timestamp) {
    let (emu, ctx) = setup(knobs);
    // To the next hour that leaves the run inside one month.
    let now = ctx.now().as_second();
    ctx.clock().advance(SignedDuration::from_secs(3600 - now.rem_euclid(3600)));
    let m = gpuctl_simkit::bill::Month::of(ctx.now());
    if m.end().duration_since(ctx.now()) < SignedDuration::from_hours(30) {
        ctx.clock().set_at_least(m.end());
    }
    let t0 = ctx.now();
    let r = call(&emu, &ctx, "RunInstances", run(json!({"InstanceChargeType": "POSTPAID_BY_HOUR"})));
    let id = r["InstanceIdSet"][0].as_str().expect("an instance").to_string();
    ctx.clock().advance(SignedDuration::from_hours(10));
    let t = call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [id]}));
    assert!(t.get("Error").is_none(), "{t}");
    ctx.clock().advance(after);
    (emu, ctx, id, t0)
}

/// What a line should cost at `per_hour` for the seconds its FeeBeginTime–FeeEndTime span says,
/// rounded half up to eight decimals: worked out here, apart from the emulator's ledger.
fn expected(d: &Value, per_hour_units: i128) -> Amount {
    let t = |f: &str| gpuctl_simkit::bill::parse_china_text(d[f].as_str().unwrap()).unwrap();
    let secs = t("FeeEndTime").duration_since(t("FeeBeginTime")).as_secs() as i128;
    Amount((per_hour_units * secs + 1800) / 3600)
}

fn details(r: &Value) -> Vec<Value> {
    r["DetailSet"].as_array().unwrap().clone()
}

fn sum(r: &Value, field: &str) -> Amount {
    r["DetailSet"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|d| d["ComponentSet"].as_array().unwrap().iter())
        .map(|c| Amount::parse(c[field].as_str().unwrap()).unwrap())
        .sum()
}

#[test]
fn lines_bill_each_hour_run_at_the_quoted_price_once_the_lag_has_passed() {
    let knobs = Knobs { bill_lag_seconds: 3600, ..Knobs::default() };
    // Half an hour after termination: the last hour ended less than the lag ago and is not settled yet.
    let (emu, ctx, id, t0) = ran_ten_hours(knobs, SignedDuration::from_mins(30));
    let month = month_of(t0);
    let r = bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month}));
    let before = r["Total"].as_u64().unwrap();
    assert!((9..=10).contains(&before), "{r}");
    let d = &r["DetailSet"][1];
    assert_eq!(d["ResourceId"], id.as_str());
    assert_eq!(d["ActionTypeName"], "按量计费小时结");
    assert_eq!(d["PayModeName"], "按量计费");
    assert_eq!(d["ComponentSet"][0]["Cost"], "8.68000000", "a whole hour at the offer's ¥8.68: {d}");
    // Past the lag every hour is there: the first and last partial, ten hours in all, each line the
    // price × the seconds its span says.
    ctx.clock().advance(SignedDuration::from_hours(1));
    let r = bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month}));
    assert!(r["Total"].as_u64().unwrap() > before);
    let mut secs = 0;
    for d in details(&r) {
        assert_eq!(
            Amount::parse(d["ComponentSet"][0]["Cost"].as_str().unwrap()).unwrap(),
            expected(&d, 868_000_000),
            "{d}"
        );
        let t = |f: &str| gpuctl_simkit::bill::parse_china_text(d[f].as_str().unwrap()).unwrap();
        secs += t("FeeEndTime").duration_since(t("FeeBeginTime")).as_secs();
    }
    assert!((35_999..=36_001).contains(&secs), "ten hours billed: {secs} s");
    assert_eq!(sum(&r, "Cost"), sum(&r, "RealCost"), "no discount without the knob");
    // Filters: the resource, the pay mode.
    let r =
        bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month, "ResourceId": "ins-other000"}));
    assert_eq!(r["Total"], 0);
    let r = bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month, "PayMode": "prePay"}));
    assert_eq!(r["Total"], 0);
    // Pages: an offset past all but one line answers that one.
    let total =
        bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month}))["Total"].as_u64().unwrap();
    let r = bill(&emu, &ctx, json!({"Offset": total - 1, "Limit": 3, "Month": month}));
    assert_eq!(details(&r).len(), 1);
    assert!(r["Context"].is_string());
}

#[test]
fn the_discount_knob_bills_less_than_list() {
    let knobs = Knobs {
        bill_lag_seconds: 0,
        discounts: vec![Discount {
            provider: Some(gpuctl_simkit::Provider::Tencent),
            instance_type: None,
            percent: 15.0,
        }],
        ..Knobs::default()
    };
    let (emu, ctx, _, t0) = ran_ten_hours(knobs, SignedDuration::from_mins(1));
    let r = bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month_of(t0)}));
    for d in details(&r) {
        let c = &d["ComponentSet"][0];
        let list = Amount::parse(c["Cost"].as_str().unwrap()).unwrap();
        let real = Amount::parse(c["RealCost"].as_str().unwrap()).unwrap();
        // 85 % of list, rounded half up to eight decimals.
        assert_eq!(real, Amount((list.0 * 85 + 50) / 100), "{c}");
    }
    let whole =
        details(&r).into_iter().find(|d| d["ComponentSet"][0]["Cost"] == "8.68000000").expect("a whole hour");
    // 8.68 × 0.85 = 7.378 for a whole hour.
    assert_eq!(whole["ComponentSet"][0]["RealCost"], "7.37800000");
    assert!(sum(&r, "RealCost") < sum(&r, "Cost"));
}

#[test]
fn months_the_definition_forbids_are_refused() {
    let (emu, ctx) = setup(Knobs::default());
    let now = ctx.now();
    for (body, want) in [
        (json!({"Offset": 0, "Limit": 300, "Month": "2026/01"}), "InvalidParameterValue"),
        (json!({"Offset": 0, "Limit": 300}), "MissingParameter"),
        (json!({"Offset": 0, "Limit": 300, "BeginTime": "2026-01-01 00:00:00"}), "MissingParameter"),
        (
            json!({"Offset": 0, "Limit": 300, "BeginTime": "2026-01-31 00:00:00", "EndTime": "2026-02-01 00:00:00"}),
            "InvalidParameterValue",
        ),
        (json!({"Offset": 0, "Limit": 301, "Month": month_of(now)}), "InvalidParameterValue.Range"),
        (json!({"Limit": 300, "Month": month_of(now)}), "MissingParameter"),
        (
            json!({"Offset": 0, "Limit": 300, "Month": month_of(now), "PayMode": "monthly"}),
            "InvalidParameterValue",
        ),
    ] {
        let r = bill(&emu, &ctx, body.clone());
        assert!(code(&r).starts_with(want), "{body} → {r}");
    }
    // 18 months back is refused, 17 is answered.
    let old = now - SignedDuration::from_hours(24 * 31 * 18 + 24 * 3);
    let r = bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month_of(old)}));
    assert_eq!(code(&r), "InvalidParameterValue", "{r}");
    let recent = now - SignedDuration::from_hours(24 * 30 * 16);
    let r = bill(&emu, &ctx, json!({"Offset": 0, "Limit": 300, "Month": month_of(recent)}));
    assert_eq!(r["Total"], 0, "{r}");
    // BeginTime/EndTime in one month answer the whole month.
    let r = bill(
        &emu,
        &ctx,
        json!({"Offset": 0, "Limit": 300, "BeginTime": "2026-12-02 00:00:00", "EndTime": "2026-12-09 00:00:00"}),
    );
    assert!(r.get("Error").is_none(), "{r}");
}

#[test]
fn the_client_reads_every_page_and_sums_exactly() {
    let knobs = Knobs { bill_lag_seconds: 60, ..Knobs::default() };
    let (emu, ctx) = setup(knobs);
    // Two instances through more than 300 settled hours: two pages and more.
    let now = ctx.now().as_second();
    ctx.clock().advance(SignedDuration::from_secs(3600 - now.rem_euclid(3600)));
    let m = gpuctl_simkit::bill::Month::of(ctx.now());
    ctx.clock().set_at_least(m.end() + SignedDuration::from_mins(20));
    let _ = now;
    let a = call(&emu, &ctx, "RunInstances", run(json!({"InstanceCount": 2})));
    let ids: Vec<String> =
        a["InstanceIdSet"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().into()).collect();
    ctx.clock().advance(SignedDuration::from_hours(200));
    let month = month_of(ctx.now());
    let (emu, ctx) = (std::sync::Arc::new(emu), std::sync::Arc::new(ctx));
    let cloud = super::tencent_client(&super::serve(emu.clone(), ctx.clone()));
    let q = BillQuery { month: month.clone(), region: "ap-guangzhou".into(), resource_ids: vec![] };
    let lines = super::block_on(cloud.bill_lines(&q)).expect("DescribeBillDetail answers");
    // Each instance: 200 lines (a partial first hour, then whole ones; the 201st is in its lag), each
    // the price × its span's seconds, and the client's sum of them exact.
    assert_eq!(lines.len(), 2 * 200, "{}", lines.len());
    for id in &ids {
        let mine: Vec<_> = lines.iter().filter(|l| &l.resource_id == id).collect();
        let want: Amount = mine
            .iter()
            .map(|l| {
                let secs = l.end.unwrap().duration_since(l.start.unwrap()).as_secs() as i128;
                Amount((868_000_000 * secs + 1800) / 3600)
            })
            .sum();
        let got: Amount = mine.iter().map(|l| Amount::parse(&l.billed_cny).unwrap()).sum();
        assert_eq!(got, want, "{id}");
        assert!(got > Amount::parse("1727.32").unwrap(), "more than 199 whole hours");
    }
    let one = BillQuery { resource_ids: vec![ids[0].clone()], ..q.clone() };
    assert_eq!(super::block_on(cloud.bill_lines(&one)).unwrap().len(), 200);
    let bad = BillQuery { month: "2026-13".into(), ..q };
    let e = super::block_on(cloud.bill_lines(&bad)).unwrap_err();
    assert_eq!(e.code, "InvalidParameterValue", "{e:?}");
    assert!(e.request_id.is_some());
}
