//! ECS emulator behaviour: state machine, idempotency, DryRun, auto-release, deletion rules,
//! stock-outs, throttling and fault answers, snapshot policies and catalogued prices.
//! Operations are called through `dispatch` (what `handle` runs after the signature check); the
//! signed path is covered by the SDK conformance suite in tests/conformance.

use gpuctl_simkit::{Knobs, Offer, Prices, SimConfig, SimCtx, SimRequest, StockOut};
use jiff::SignedDuration;
use serde_json::Value;

use super::*;

/// The metadata service, spot reclaims and role credentials (issue 15).
mod metadata;

/// BSS OpenAPI's DescribeInstanceBill (issue 15).
mod bss;
/// CloudMonitor's DescribeMetricList (issue 15).
mod monitor;

const TYPE: &str = "ecs.gn7i-c8g1.2xlarge";

/// One catalogued offer (figures from shared/reference/catalog-facts.md, Alibaba rows).
fn offers() -> Vec<Offer> {
    vec![Offer {
        provider: gpuctl_simkit::Provider::Alibaba,
        region: "cn-hangzhou".into(),
        zones: vec!["cn-hangzhou-i".into(), "cn-hangzhou-j".into()],
        // The API's spelling, as the local cloud's offers carry it (crates/sim/src/offers.rs).
        instance_type: TYPE.into(),
        family: "ecs.gn7i".into(),
        gpu_model: "NVIDIA A10".into(),
        gpu_count: 1,
        gpu_memory_gib: 24.0,
        vcpu: 8,
        memory_gib: 30.0,
        // The spot figure is a test value (catalog-facts.md has no gn7i spot quote).
        prices: Prices {
            hourly: Some(9.74),
            monthly: Some(4675.66),
            spot_hourly: Some(1.95),
            ..Prices::default()
        },
        source: "DescribePrice quote (catalog-facts.md §3)".into(),
        as_of: "2026-09-24".into(),
    }]
}

fn ctx_with(knobs: Knobs) -> SimCtx {
    SimCtx::new(SimConfig { seed: 7, knobs, ..SimConfig::default() }, offers())
}

fn ctx() -> SimCtx {
    ctx_with(Knobs::default())
}

/// Run one action with flattened parameters, ticking first as the server does.
fn call(ecs: &Ecs, ctx: &SimCtx, action: &str, pairs: &[(&str, &str)]) -> Result<Value, EcsError> {
    ecs.tick(ctx);
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ecs.dispatch("test-account", action, &unflatten(&pairs), ctx)
}

fn err_code<T: std::fmt::Debug>(r: Result<T, EcsError>) -> (u16, String) {
    let e = r.expect_err("expected an error");
    (e.status, e.code)
}

fn run(ecs: &Ecs, ctx: &SimCtx, extra: &[(&str, &str)]) -> Result<Vec<String>, EcsError> {
    let mut p = vec![
        ("RegionId", "cn-hangzhou"),
        ("InstanceType", TYPE),
        ("ImageId", "ubuntu_22_04_x64_20G_alibase_20240926.vhd"),
    ];
    p.extend_from_slice(extra);
    let v = call(ecs, ctx, "RunInstances", &p)?;
    Ok(v["InstanceIdSets"]["InstanceIdSet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i.as_str().unwrap().to_string())
        .collect())
}

fn status(ecs: &Ecs, ctx: &SimCtx, id: &str) -> String {
    let v = call(ecs, ctx, "DescribeInstanceStatus", &[("RegionId", "cn-hangzhou"), ("InstanceId.1", id)])
        .unwrap();
    v["InstanceStatuses"]["InstanceStatus"][0]["Status"].as_str().unwrap_or("gone").to_string()
}

#[test]
fn instances_go_pending_starting_running_on_the_sim_clock() {
    let (ecs, ctx) = (Ecs::new(), ctx_with(Knobs { boot_seconds: 10, ..Knobs::default() }));
    let ids = run(&ecs, &ctx, &[("Amount", "2")]).unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(status(&ecs, &ctx, &ids[0]), "Pending");
    ctx.clock().advance(SignedDuration::from_secs(5));
    assert_eq!(status(&ecs, &ctx, &ids[0]), "Starting");
    ctx.clock().advance(SignedDuration::from_secs(6));
    assert_eq!(status(&ecs, &ctx, &ids[1]), "Running");
    let v = call(
        &ecs,
        &ctx,
        "DescribeInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceIds", &format!("[\"{}\"]", ids[1]))],
    )
    .unwrap();
    let inst = &v["Instances"]["Instance"][0];
    assert_eq!(v["TotalCount"], 1);
    assert_eq!(inst["InstanceId"], ids[1].as_str());
    assert_eq!(
        (inst["Cpu"].as_i64(), inst["Memory"].as_i64(), inst["GPUAmount"].as_i64()),
        (Some(8), Some(30 * 1024), Some(1))
    );
    assert_eq!(
        (inst["InstanceType"].as_str(), inst["InstanceTypeFamily"].as_str()),
        (Some(TYPE), Some("ecs.gn7i"))
    );
}

#[test]
fn client_token_replays_the_same_instances_and_refuses_changed_parameters() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let first = run(&ecs, &ctx, &[("ClientToken", "deploy-a-0"), ("Amount", "2")]).unwrap();
    let again = run(&ecs, &ctx, &[("ClientToken", "deploy-a-0"), ("Amount", "2")]).unwrap();
    assert_eq!(first, again);
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("ClientToken", "deploy-a-0"), ("Amount", "3")])),
        (400, codes::IDEMPOTENT_MISMATCH.into())
    );
    assert_eq!(lock(&ecs.state).instances.len(), 2, "replays and mismatches create nothing");
    let other = run(&ecs, &ctx, &[("ClientToken", "deploy-a-1"), ("Amount", "2")]).unwrap();
    assert_ne!(first, other);
    // Tokens belong to an account: another account may use the same token for something else.
    let p: Vec<(String, String)> = [
        ("RegionId", "cn-hangzhou"),
        ("InstanceType", TYPE),
        ("ImageId", "ubuntu_22_04_x64_20G_alibase_20240926.vhd"),
        ("ClientToken", "deploy-a-0"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let theirs = ecs.dispatch("another-account", "RunInstances", &unflatten(&p), &ctx).unwrap();
    assert_eq!(theirs["InstanceIdSets"]["InstanceIdSet"].as_array().map(Vec::len), Some(1));
}

#[test]
fn dry_run_validates_without_creating() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    assert_eq!(err_code(run(&ecs, &ctx, &[("DryRun", "True")])), (400, codes::DRY_RUN.into()));
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("DryRun", "true"), ("ZoneId", "cn-hangzhou-z")])),
        (400, codes::BAD_INSTANCE_TYPE.into())
    );
    assert!(lock(&ecs.state).instances.is_empty());
}

#[test]
fn bad_run_parameters_get_ecs_errors() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let check = |extra: &[(&str, &str)], want: &str| {
        assert_eq!(err_code(run(&ecs, &ctx, extra)).1, want, "{extra:?}")
    };
    check(&[("InstanceType", "ecs.nope")], codes::BAD_INSTANCE_TYPE);
    check(
        &[("InstanceChargeType", "PrePaid"), ("Period", "5"), ("PeriodUnit", "Week")],
        codes::INVALID_PERIOD,
    );
    check(&[("InstanceChargeType", "PrePaid")], codes::MISSING_PARAMETER);
    check(&[("AutoReleaseTime", "tomorrow")], codes::AUTO_RELEASE_MALFORMED);
    check(&[("SpotStrategy", "SpotWithPriceLimit")], codes::MISSING_PARAMETER);
    check(&[("Amount", "0")], "InvalidAmount.ValueNotSupported");
    check(
        &[("SpotStrategy", "SpotWithPriceLimit"), ("SpotPriceLimit", "1.5")],
        "InvalidSpotPriceLimit.LowerThanPublicPrice",
    );
    check(
        &[("SpotStrategy", "SpotAsPriceGo"), ("InstanceChargeType", "PrePaid"), ("Period", "1")],
        codes::INVALID_PARAMETER,
    );
    let spot = run(&ecs, &ctx, &[("SpotStrategy", "SpotWithPriceLimit"), ("SpotPriceLimit", "2.5")]).unwrap();
    let v = call(
        &ecs,
        &ctx,
        "DescribeInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceIds", &format!("[\"{}\"]", spot[0]))],
    )
    .unwrap();
    assert_eq!(
        (
            v["Instances"]["Instance"][0]["SpotStrategy"].as_str(),
            v["Instances"]["Instance"][0]["SpotPriceLimit"].as_f64()
        ),
        (Some("SpotWithPriceLimit"), Some(2.5))
    );
    let soon = (ctx.now() + SignedDuration::from_mins(10)).strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    check(&[("AutoReleaseTime", &soon)], codes::AUTO_RELEASE_OUT_OF_RANGE);
    let e = call(&ecs, &ctx, "RunInstances", &[("RegionId", "cn-hangzhou")]).unwrap_err();
    assert!(e.message.contains("\"InstanceType\""), "{}", e.message);
    assert_eq!(
        err_code(call(&ecs, &ctx, "RunInstances", &[("RegionId", "mars-1")])),
        (404, codes::REGION_NOT_FOUND.into())
    );
    assert_eq!(err_code(call(&ecs, &ctx, "StopEverything", &[])), (404, codes::ACTION_NOT_FOUND.into()));
}

#[test]
fn weekly_prepaid_needs_a_catalogued_weekly_price_to_quote() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    // The week term itself is accepted; the catalog has no weekly price, so no TradePrice is made up.
    let v = call(
        &ecs,
        &ctx,
        "RunInstances",
        &[
            ("RegionId", "cn-hangzhou"),
            ("InstanceType", TYPE),
            ("ImageId", "ubuntu_22_04_x64_20G_alibase_20240926.vhd"),
            ("InstanceChargeType", "PrePaid"),
            ("Period", "1"),
            ("PeriodUnit", "Week"),
        ],
    )
    .unwrap();
    assert!(v.get("TradePrice").is_none());
    assert!(v["OrderId"].as_str().is_some_and(|o| !o.is_empty()));
    let q = |unit: &str| {
        call(
            &ecs,
            &ctx,
            "DescribePrice",
            &[("RegionId", "cn-hangzhou"), ("InstanceType", TYPE), ("PriceUnit", unit), ("Period", "2")],
        )
    };
    assert_eq!(q("Hour").unwrap()["PriceInfo"]["Price"]["TradePrice"], 9.74);
    assert_eq!(q("Month").unwrap()["PriceInfo"]["Price"]["TradePrice"], 9351.32);
    let e = q("Week").unwrap_err();
    assert_eq!(e.code, codes::PRICE_NOT_FOUND);
    assert!(e.message.contains("2026-09-24"), "the error names the catalog's date: {}", e.message);
    let pay = run(&ecs, &ctx, &[("Amount", "3")]);
    assert!(pay.is_ok());
}

#[test]
fn auto_release_deletes_the_instance_and_its_disks_when_due() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let at = (ctx.now() + SignedDuration::from_mins(45)).strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let ids = run(
        &ecs,
        &ctx,
        &[("AutoReleaseTime", &at), ("DataDisk.1.Size", "100"), ("DataDisk.1.Category", "cloud_essd")],
    )
    .unwrap();
    let disks =
        call(&ecs, &ctx, "DescribeDisks", &[("RegionId", "cn-hangzhou"), ("InstanceId", &ids[0])]).unwrap();
    assert_eq!(disks["TotalCount"], 2);
    ctx.clock().advance(SignedDuration::from_mins(44));
    assert_eq!(status(&ecs, &ctx, &ids[0]), "Running");
    ctx.clock().advance(SignedDuration::from_mins(2));
    assert_eq!(status(&ecs, &ctx, &ids[0]), "gone");
    assert!(lock(&ecs.state).disks.is_empty(), "disks that delete with the instance are gone too");
}

#[test]
fn modify_auto_release_sets_and_cancels() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let ids = run(&ecs, &ctx, &[]).unwrap();
    let at = (ctx.now() + SignedDuration::from_hours(2)).strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    call(
        &ecs,
        &ctx,
        "ModifyInstanceAutoReleaseTime",
        &[("RegionId", "cn-hangzhou"), ("InstanceId", &ids[0]), ("AutoReleaseTime", &at)],
    )
    .unwrap();
    call(
        &ecs,
        &ctx,
        "ModifyInstanceAutoReleaseTime",
        &[("RegionId", "cn-hangzhou"), ("InstanceId", &ids[0]), ("AutoReleaseTime", "")],
    )
    .unwrap();
    ctx.clock().advance(SignedDuration::from_hours(3));
    assert_eq!(status(&ecs, &ctx, &ids[0]), "Running", "cancelled release must not fire");
    assert_eq!(
        err_code(call(
            &ecs,
            &ctx,
            "ModifyInstanceAutoReleaseTime",
            &[("InstanceId", "i-missing"), ("AutoReleaseTime", "")]
        )),
        (404, codes::INSTANCE_NOT_FOUND.into())
    );
}

#[test]
fn delete_needs_stopped_or_force() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let ids = run(&ecs, &ctx, &[("Amount", "2")]).unwrap();
    ctx.clock().advance(SignedDuration::from_secs(30));
    let del = |force: &str, id: &str| {
        call(
            &ecs,
            &ctx,
            "DeleteInstances",
            &[("RegionId", "cn-hangzhou"), ("InstanceId.1", id), ("Force", force)],
        )
    };
    assert_eq!(err_code(del("False", &ids[0])), (403, codes::INCORRECT_STATUS.into()));
    assert_eq!(err_code(del("True", "i-nope")), (404, codes::INSTANCE_NOT_FOUND.into()));
    del("True", &ids[0]).unwrap();
    // Stopped instances go without Force.
    call(&ecs, &ctx, "StopInstance", &[("InstanceId", &ids[1])]).unwrap();
    assert_eq!(status(&ecs, &ctx, &ids[1]), "Stopping");
    assert_eq!(
        err_code(call(&ecs, &ctx, "DeleteInstance", &[("InstanceId", &ids[1])])),
        (403, codes::INCORRECT_STATUS.into())
    );
    assert_eq!(
        err_code(call(
            &ecs,
            &ctx,
            "StopInstances",
            &[("RegionId", "cn-hangzhou"), ("InstanceId.1", &ids[1])]
        ))
        .1,
        codes::INCORRECT_STATUS
    );
    ctx.clock().advance(SignedDuration::from_secs(3));
    assert_eq!(status(&ecs, &ctx, &ids[1]), "Stopped");
    call(&ecs, &ctx, "DeleteInstance", &[("InstanceId", &ids[1])]).unwrap();
    assert!(lock(&ecs.state).instances.is_empty());
}

#[test]
fn stock_outs_answer_no_stock_and_show_in_available_resource() {
    let knobs = Knobs {
        stock_outs: vec![StockOut {
            provider: Some(gpuctl_simkit::Provider::Alibaba),
            instance_type: Some(TYPE.into()),
            zone: Some("cn-hangzhou-i".into()),
            available: None,
        }],
        ..Knobs::default()
    };
    let (ecs, ctx) = (Ecs::new(), ctx_with(knobs));
    assert_eq!(err_code(run(&ecs, &ctx, &[("ZoneId", "cn-hangzhou-i")])), (403, codes::NO_STOCK.into()));
    let ids = run(&ecs, &ctx, &[]).unwrap();
    let v = call(&ecs, &ctx, "DescribeInstances", &[("RegionId", "cn-hangzhou")]).unwrap();
    assert_eq!(
        v["Instances"]["Instance"][0]["ZoneId"], "cn-hangzhou-j",
        "no zone given: a zone with stock is chosen ({ids:?})"
    );
    let v = call(
        &ecs,
        &ctx,
        "DescribeAvailableResource",
        &[("RegionId", "cn-hangzhou"), ("DestinationResource", "InstanceType")],
    )
    .unwrap();
    let zones = v["AvailableZones"]["AvailableZone"].as_array().unwrap();
    let cat = |z: usize| {
        zones[z]["AvailableResources"]["AvailableResource"][0]["SupportedResources"]["SupportedResource"][0]
            ["StatusCategory"]
            .clone()
    };
    assert_eq!((zones[0]["ZoneId"].as_str(), cat(0)), (Some("cn-hangzhou-i"), "WithoutStock".into()));
    assert_eq!((zones[1]["ZoneId"].as_str(), cat(1)), (Some("cn-hangzhou-j"), "WithStock".into()));
}

#[test]
fn throttling_and_server_errors_use_ecs_error_shape() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let req = SimRequest::new("POST", "/?RegionId=cn-hangzhou")
        .with_header("x-acs-action", "RunInstances")
        .with_header("host", "127.0.0.1:9");
    let r = ecs.throttled(&req, &ctx);
    let body = r.json_body();
    assert_eq!((r.status, body["Code"].as_str()), (400, Some(codes::THROTTLED)));
    assert!(r.headers.iter().any(|(k, v)| k == "x-acs-retry-after" && v == "1000"));
    for key in ["RequestId", "HostId", "Code", "Message", "Recommend"] {
        assert!(body[key].is_string(), "{key} missing in {body}");
    }
    let r = ecs.server_error(&req, &ctx, 503);
    assert_eq!((r.status, r.json_body()["Code"].as_str()), (503, Some(codes::SERVICE_UNAVAILABLE)));
    let r = ecs.server_error(&req, &ctx, 500);
    assert_eq!((r.status, r.json_body()["Code"].as_str()), (500, Some(codes::INTERNAL_ERROR)));
}

#[test]
fn unsigned_requests_are_refused_before_anything_happens() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let req = SimRequest::new(
        "POST",
        &format!(
            "/?RegionId=cn-hangzhou&InstanceType={TYPE}&ImageId=ubuntu_22_04_x64_20G_alibase_20240926.vhd"
        ),
    )
    .with_header("x-acs-action", "RunInstances");
    assert!(ecs.claims(&req));
    assert_eq!(ecs.action(&req), "RunInstances");
    let r = ecs.handle(&req, &ctx);
    assert_eq!((r.status, r.json_body()["Code"].as_str()), (400, Some("MissingSignature")));
    assert!(lock(&ecs.state).instances.is_empty());
    assert!(!ecs.claims(&SimRequest::new("GET", "/v1/regions/cn-north-1/instances")));
}

#[test]
fn snapshots_images_and_policies() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let ids = run(&ecs, &ctx, &[]).unwrap();
    let disks = call(
        &ecs,
        &ctx,
        "DescribeDisks",
        &[("RegionId", "cn-hangzhou"), ("InstanceId", &ids[0]), ("DiskType", "system")],
    )
    .unwrap();
    let disk = disks["Disks"]["Disk"][0]["DiskId"].as_str().unwrap().to_string();
    // Still booting: ECS refuses to snapshot.
    assert_eq!(err_code(call(&ecs, &ctx, "CreateSnapshot", &[("DiskId", &disk)])).1, codes::INCORRECT_STATUS);
    ctx.clock().advance(SignedDuration::from_secs(10));
    let s1 = call(&ecs, &ctx, "CreateSnapshot", &[("DiskId", &disk), ("ClientToken", "snap-1")]).unwrap();
    let s1_again =
        call(&ecs, &ctx, "CreateSnapshot", &[("DiskId", &disk), ("ClientToken", "snap-1")]).unwrap();
    assert_eq!(s1, s1_again);
    let sid = s1["SnapshotId"].as_str().unwrap().to_string();
    let list = call(
        &ecs,
        &ctx,
        "DescribeSnapshots",
        &[("RegionId", "cn-hangzhou"), ("SnapshotIds", &format!("[\"{sid}\"]"))],
    )
    .unwrap();
    assert_eq!(list["Snapshots"]["Snapshot"][0]["Status"], "progressing");
    ctx.clock().advance(SignedDuration::from_secs(10));
    let list =
        call(&ecs, &ctx, "DescribeSnapshots", &[("RegionId", "cn-hangzhou"), ("DiskId", &disk)]).unwrap();
    assert_eq!(list["Snapshots"]["Snapshot"][0]["Status"], "accomplished");

    let img = call(
        &ecs,
        &ctx,
        "CreateImage",
        &[("RegionId", "cn-hangzhou"), ("SnapshotId", &sid), ("ImageName", "golden")],
    )
    .unwrap();
    assert!(img["ImageId"].as_str().unwrap().starts_with("m-"));
    assert_eq!(
        err_code(call(&ecs, &ctx, "DeleteSnapshot", &[("SnapshotId", &sid)])),
        (403, codes::SNAPSHOT_USED_BY_IMAGE.into())
    );
    call(&ecs, &ctx, "DeleteSnapshot", &[("SnapshotId", &sid), ("Force", "True")]).unwrap();
    assert_eq!(
        err_code(call(&ecs, &ctx, "DeleteSnapshot", &[("SnapshotId", &sid)])),
        (404, codes::SNAPSHOT_NOT_FOUND.into())
    );

    // A policy at every hour of every day, keeping snapshots 1 day.
    let all_hours = format!("[{}]", (0..24).map(|h| format!("\"{h}\"")).collect::<Vec<_>>().join(","));
    let pol = call(
        &ecs,
        &ctx,
        "CreateAutoSnapshotPolicy",
        &[
            ("regionId", "cn-hangzhou"),
            ("timePoints", &all_hours),
            ("repeatWeekdays", "[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\"]"),
            ("retentionDays", "1"),
            ("autoSnapshotPolicyName", "hourly"),
        ],
    )
    .unwrap();
    let pid = pol["AutoSnapshotPolicyId"].as_str().unwrap().to_string();
    call(
        &ecs,
        &ctx,
        "ApplyAutoSnapshotPolicy",
        &[("regionId", "cn-hangzhou"), ("autoSnapshotPolicyId", &pid), ("diskIds", &format!("[\"{disk}\"]"))],
    )
    .unwrap();
    let autos = |ecs: &Ecs| lock(&ecs.state).snapshots.values().filter(|s| s.snapshot_type == "auto").count();
    ctx.clock().advance(SignedDuration::from_hours(5));
    let after_5h = {
        ecs.tick(&ctx);
        autos(&ecs)
    };
    assert!((4..=5).contains(&after_5h), "one per hour slot, got {after_5h}");
    ctx.clock().advance(SignedDuration::from_hours(48));
    ecs.tick(&ctx);
    assert_eq!(autos(&ecs), 24, "retention keeps one day of hourly snapshots");
    assert_eq!(
        err_code(call(
            &ecs,
            &ctx,
            "CreateAutoSnapshotPolicy",
            &[
                ("regionId", "cn-hangzhou"),
                ("timePoints", "[\"25\"]"),
                ("repeatWeekdays", "[\"1\"]"),
                ("retentionDays", "1")
            ]
        ))
        .1,
        "InvalidTimePoints.Malformed"
    );
    let state = ecs.state(&ctx);
    assert_eq!(state["images"].as_array().map(Vec::len), Some(1));
    ecs.reset();
    assert_eq!(ecs.state(&ctx)["instances"].as_array().map(Vec::len), Some(0));
}

/// Sign like the SDKs do (through gpuctl-sign) and build the request the server would hand over.
/// Signing time is the wall clock (the sim judges skew against it, as SDKs sign with the machine's
/// time); `age` backdates it.
fn signed(
    alg: gpuctl_sign::Algorithm,
    ak: &str,
    sk: &str,
    action: &str,
    query: &[(&str, &str)],
    nonce: &str,
    age: SignedDuration,
) -> SimRequest {
    signed_for(crate::api::API_VERSION, alg, ak, sk, action, query, nonce, age)
}

#[allow(clippy::too_many_arguments)]
fn signed_for(
    version: &str,
    alg: gpuctl_sign::Algorithm,
    ak: &str,
    sk: &str,
    action: &str,
    query: &[(&str, &str)],
    nonce: &str,
    age: SignedDuration,
) -> SimRequest {
    let req = gpuctl_sign::SignableRequest {
        method: "POST".into(),
        scheme: "http".into(),
        host: "127.0.0.1:9".into(),
        path: "/".into(),
        query: query.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect(),
        ..Default::default()
    };
    let params = gpuctl_sign::SigningParams {
        algorithm: alg,
        time: (jiff::Timestamp::now() - age).as_second(),
        nonce: nonce.into(),
        region: String::new(),
        service: String::new(),
        action: action.into(),
        version: version.into(),
    };
    let s = gpuctl_sign::sign(&req, &gpuctl_sign::Credentials::new(ak, sk), &params).unwrap();
    let mut out = SimRequest::new("POST", "/").with_body(s.body.clone());
    out.raw_query = s.raw_query.clone();
    out.headers = s.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
    out
}

/// The sim's documented Alibaba test key pair (access key, secret).
fn test_keys() -> (&'static str, &'static str) {
    let (_, ak, sk) = gpuctl_simkit::creds::TEST_KEY_PAIRS
        .iter()
        .find(|(p, _, _)| *p == gpuctl_simkit::Provider::Alibaba)
        .copied()
        .expect("simkit documents an Alibaba test pair");
    (ak, sk)
}

#[test]
fn signed_requests_pass_in_v3_and_rpc_mode_and_auth_failures_use_ecs_codes() {
    use gpuctl_sign::Algorithm::{Acs3, AlibabaRpcV2};
    let (ecs, ctx) = (Ecs::new(), ctx());
    let (ak, sk) = test_keys();
    let q = [
        ("RegionId", "cn-hangzhou"),
        ("InstanceType", TYPE),
        ("ImageId", "ubuntu_22_04_x64_20G_alibase_20240926.vhd"),
        // Required by the schema's rule (every GPU family is VPC-only): the request must be valid
        // for the signing modes to be what the test sees.
        ("VSwitchId", "vsw-1"),
        ("Tag.1.Key", "team"),
        ("Tag.1.Value", "ml ops*"),
    ];
    for (alg, nonce) in [(Acs3, "n-v3"), (AlibabaRpcV2, "n-rpc")] {
        let req = signed(alg, ak, sk, "RunInstances", &q, nonce, SignedDuration::ZERO);
        assert!(ecs.claims(&req), "{alg:?}");
        assert_eq!(ecs.action(&req), "RunInstances");
        let r = ecs.handle(&req, &ctx);
        assert_eq!(r.status, 200, "{alg:?}: {}", r.json_body());
        assert!(r.json_body()["RequestId"].is_string());
    }
    let check = |req: SimRequest, want: (u16, &str)| {
        let r = ecs.handle(&req, &ctx);
        assert_eq!(
            (r.status, r.json_body()["Code"].as_str().unwrap_or("").to_string()),
            (want.0, want.1.to_string())
        );
    };
    check(signed(Acs3, ak, sk, "RunInstances", &q, "n-v3", SignedDuration::ZERO), (400, codes::NONCE_USED));
    check(
        signed(Acs3, ak, "wrong", "RunInstances", &q, "n-1", SignedDuration::ZERO),
        (400, codes::SIGNATURE_MISMATCH),
    );
    check(
        signed(AlibabaRpcV2, "LTAInobody", sk, "RunInstances", &q, "n-2", SignedDuration::ZERO),
        (404, codes::INVALID_ACCESS_KEY_ID),
    );
    let mut tampered = signed(Acs3, ak, sk, "RunInstances", &q, "n-3", SignedDuration::ZERO);
    tampered.raw_query = tampered.raw_query.replace("cn-hangzhou", "cn-shanghai");
    check(tampered, (400, codes::SIGNATURE_MISMATCH));
    check(
        signed(Acs3, ak, sk, "RunInstances", &q, "n-4", SignedDuration::from_mins(16)),
        (400, codes::TIMESTAMP_EXPIRED),
    );
    check(
        signed_for("2013-01-10", Acs3, ak, sk, "RunInstances", &q, "n-6", SignedDuration::ZERO),
        (400, "InvalidVersion"),
    );
    check(
        signed_for("2013-01-10", AlibabaRpcV2, ak, sk, "RunInstances", &q, "n-7", SignedDuration::ZERO),
        (400, "InvalidVersion"),
    );
    assert_eq!(lock(&ecs.state).instances.len(), 2, "only the two good calls created instances");
}

#[test]
fn a_clock_jump_replays_policy_runs_before_the_release() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let release = ctx.now() + SignedDuration::from_mins(150);
    let at = release.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
    let ids = run(&ecs, &ctx, &[("AutoReleaseTime", &at)]).unwrap();
    let disk = lock(&ecs.state)
        .disks
        .values()
        .find(|d| d.instance_id.as_deref() == Some(ids[0].as_str()))
        .unwrap()
        .id
        .clone();
    let all_hours = format!("[{}]", (0..24).map(|h| format!("\"{h}\"")).collect::<Vec<_>>().join(","));
    let pol = call(
        &ecs,
        &ctx,
        "CreateAutoSnapshotPolicy",
        &[
            ("regionId", "cn-hangzhou"),
            ("timePoints", &all_hours),
            ("repeatWeekdays", "[\"1\",\"2\",\"3\",\"4\",\"5\",\"6\",\"7\"]"),
            ("retentionDays", "-1"),
        ],
    )
    .unwrap();
    let pid = pol["AutoSnapshotPolicyId"].as_str().unwrap().to_string();
    call(
        &ecs,
        &ctx,
        "ApplyAutoSnapshotPolicy",
        &[("regionId", "cn-hangzhou"), ("autoSnapshotPolicyId", &pid), ("diskIds", &format!("[\"{disk}\"]"))],
    )
    .unwrap();
    ctx.clock().advance(SignedDuration::from_hours(10));
    ecs.tick(&ctx);
    let st = lock(&ecs.state);
    assert!(st.instances.is_empty());
    let autos: Vec<_> = st.snapshots.values().filter(|s| s.disk_id == disk).collect();
    assert!((2..=3).contains(&autos.len()), "the hourly runs in the 2.5 h before release: {}", autos.len());
    assert!(autos.iter().all(|s| s.created <= release));
}

#[test]
fn describe_instances_pages_and_filters_by_tag_and_name() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    run(
        &ecs,
        &ctx,
        &[("Amount", "3"), ("InstanceName", "train-a"), ("Tag.1.Key", "team"), ("Tag.1.Value", "ml")],
    )
    .unwrap();
    run(&ecs, &ctx, &[("Amount", "2"), ("InstanceName", "serve-b")]).unwrap();
    let q = |extra: &[(&str, &str)]| {
        let mut p = vec![("RegionId", "cn-hangzhou")];
        p.extend_from_slice(extra);
        let v = call(&ecs, &ctx, "DescribeInstances", &p).unwrap();
        (v["TotalCount"].as_u64().unwrap(), v["Instances"]["Instance"].as_array().unwrap().len())
    };
    assert_eq!(q(&[]), (5, 5));
    assert_eq!(q(&[("PageSize", "2"), ("PageNumber", "3")]), (5, 1));
    assert_eq!(q(&[("Tag.1.Key", "team"), ("Tag.1.Value", "ml")]), (3, 3));
    assert_eq!(q(&[("Tag.1.Key", "team"), ("Tag.1.Value", "ops")]), (0, 0));
    assert_eq!(q(&[("InstanceName", "serve-*")]), (2, 2));
    assert_eq!(q(&[("Status", "Running")]), (0, 0));
    assert_eq!(
        err_code(call(
            &ecs,
            &ctx,
            "DescribeInstances",
            &[("RegionId", "cn-hangzhou"), ("InstanceIds", "i-a,i-b")]
        ))
        .1,
        "InvalidInstanceIds.Malformed"
    );
}

#[test]
fn describe_by_tag_key_alone_matches_any_value() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    run(&ecs, &ctx, &[("Amount", "2"), ("Tag.1.Key", "gpuctl-deployment"), ("Tag.1.Value", "a")]).unwrap();
    run(&ecs, &ctx, &[("Tag.1.Key", "gpuctl-deployment"), ("Tag.1.Value", "b")]).unwrap();
    run(&ecs, &ctx, &[("Tag.1.Key", "team"), ("Tag.1.Value", "gpuctl-deployment")]).unwrap();
    run(&ecs, &ctx, &[]).unwrap();
    let q = |extra: &[(&str, &str)]| {
        let mut p = vec![("RegionId", "cn-hangzhou")];
        p.extend_from_slice(extra);
        let v = call(&ecs, &ctx, "DescribeInstances", &p).unwrap();
        let values: Vec<String> = v["Instances"]["Instance"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["Tags"]["Tag"][0]["TagValue"].as_str().unwrap_or("").to_string())
            .collect();
        (v["TotalCount"].as_u64().unwrap(), values)
    };
    let (total, mut values) = q(&[("Tag.1.Key", "gpuctl-deployment")]);
    values.sort();
    assert_eq!(
        (total, values),
        (3, vec!["a".to_string(), "a".into(), "b".into()]),
        "the key with any value, never a value equal to the key"
    );
    assert_eq!(q(&[("Tag.1.Key", "gpuctl-deployment"), ("PageSize", "2"), ("PageNumber", "2")]).0, 3);
    assert_eq!(q(&[("Tag.1.Key", "gpuctl-deployment"), ("PageSize", "2"), ("PageNumber", "2")]).1.len(), 1);
    assert_eq!(q(&[("Tag.1.Key", "gpuctl-deployment"), ("Tag.2.Key", "team")]).0, 0, "tags are ANDed");
}

#[test]
fn describe_instances_pages_by_next_token_and_still_by_page_number() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    run(&ecs, &ctx, &[("Amount", "25")]).unwrap();
    let q = |extra: &[(&str, &str)]| {
        let mut p = vec![("RegionId", "cn-hangzhou")];
        p.extend_from_slice(extra);
        let v = call(&ecs, &ctx, "DescribeInstances", &p).unwrap();
        let ids: Vec<String> = v["Instances"]["Instance"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["InstanceId"].as_str().unwrap().to_string())
            .collect();
        (ids, v["NextToken"].as_str().unwrap().to_string())
    };
    // MaxResults below 10 reads as 10 (the request model's docs); the token walks the rest.
    let (first, t1) = q(&[("MaxResults", "3")]);
    assert_eq!(first.len(), 10);
    assert!(!t1.is_empty(), "more to come, so a token");
    let (second, t2) = q(&[("MaxResults", "10"), ("NextToken", &t1)]);
    let (third, t3) = q(&[("MaxResults", "10"), ("NextToken", &t2)]);
    assert_eq!((second.len(), third.len(), t3.as_str()), (10, 5, ""), "the last page says no token");
    let mut all: Vec<String> = [first, second, third].concat();
    all.dedup();
    assert_eq!(all.len(), 25, "no item twice, none left out");
    // PageNumber callers get the same items, and a token that continues after their page.
    let (page2, t) = q(&[("PageSize", "10"), ("PageNumber", "2")]);
    assert_eq!(page2, all[10..20]);
    assert_eq!(q(&[("NextToken", &t)]).0, all[20..]);
    assert_eq!(
        err_code(call(
            &ecs,
            &ctx,
            "DescribeInstances",
            &[("RegionId", "cn-hangzhou"), ("NextToken", "page-2")]
        ))
        .1,
        "InvalidParameter.NextToken"
    );
}

#[test]
fn an_unexpired_subscription_is_deleted_only_after_converting_it_to_pay_as_you_go() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let week = [("InstanceChargeType", "PrePaid"), ("Period", "1"), ("PeriodUnit", "Week")];
    let ids = run(&ecs, &ctx, &week).unwrap();
    let del = |id: &str| {
        call(
            &ecs,
            &ctx,
            "DeleteInstances",
            &[
                ("RegionId", "cn-hangzhou"),
                ("InstanceId.1", id),
                ("Force", "true"),
                ("TerminateSubscription", "true"),
            ],
        )
    };
    // TerminateSubscription releases *expired* subscriptions only (models/_delete_instances_request.py).
    assert_eq!(err_code(del(&ids[0])), (403, codes::CHARGE_TYPE_VIOLATION.into()));
    let convert = |target: &str| {
        call(
            &ecs,
            &ctx,
            "ModifyInstanceChargeType",
            &[
                ("RegionId", "cn-hangzhou"),
                ("InstanceIds", &serde_json::to_string(&ids).unwrap()),
                ("InstanceChargeType", target),
            ],
        )
    };
    assert_eq!(err_code(convert("Yearly")).1, codes::INVALID_PARAMETER);
    let v = convert("PostPaid").unwrap();
    assert!(v["OrderId"].as_str().is_some_and(|o| o.chars().all(|c| c.is_ascii_digit())), "{v}");
    let shown = call(&ecs, &ctx, "DescribeInstances", &[("RegionId", "cn-hangzhou")]).unwrap();
    assert_eq!(shown["Instances"]["Instance"][0]["InstanceChargeType"], "PostPaid");
    // Converting twice is refused: it is no longer a subscription.
    assert_eq!(err_code(convert("PostPaid")), (403, codes::CHARGE_TYPE_VIOLATION.into()));
    del(&ids[0]).unwrap();
    assert_eq!(err_code(convert("PostPaid")).1, "InvalidInstanceId.NotFound");
}

#[test]
fn an_expired_subscription_is_deleted_with_terminate_subscription() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let ids = run(&ecs, &ctx, &[("InstanceChargeType", "PrePaid"), ("Period", "1"), ("PeriodUnit", "Week")])
        .unwrap();
    ctx.clock().advance(SignedDuration::from_hours(24 * 8));
    let del = |ts: &str| {
        call(
            &ecs,
            &ctx,
            "DeleteInstances",
            &[
                ("RegionId", "cn-hangzhou"),
                ("InstanceId.1", &ids[0]),
                ("Force", "true"),
                ("TerminateSubscription", ts),
            ],
        )
    };
    assert_eq!(err_code(del("false")), (403, codes::CHARGE_TYPE_VIOLATION.into()));
    del("true").unwrap();
}

/// Run one VPC action (API 2016-04-28), as `handle` does for that version.
fn vpc_call(ecs: &Ecs, ctx: &SimCtx, action: &str, pairs: &[(&str, &str)]) -> Result<Value, EcsError> {
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ecs.dispatch_vpc("test-account", action, &unflatten(&pairs), ctx)
}

fn vswitch_zones(v: &Value) -> Vec<String> {
    v["VSwitches"]["VSwitch"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["ZoneId"].as_str().unwrap().into())
        .collect()
}

#[test]
fn the_account_has_a_default_vswitch_in_each_zone_it_sells_in() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let all = vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("RegionId", "cn-hangzhou")]).unwrap();
    assert_eq!(vswitch_zones(&all), ["cn-hangzhou-i", "cn-hangzhou-j"]);
    assert_eq!(all["TotalCount"], 2);
    let list = all["VSwitches"]["VSwitch"].as_array().unwrap();
    assert!(list.iter().all(|v| v["IsDefault"] == true && v["Status"] == "Available"));
    assert_eq!(list[0]["VpcId"], list[1]["VpcId"], "one default VPC per region");
    assert_ne!(list[0]["VSwitchId"], list[1]["VSwitchId"]);
    assert_ne!(list[0]["CidrBlock"], list[1]["CidrBlock"]);
    // The same ids on every call and in a fresh emulator: a create can name them.
    let again = vpc_call(&Ecs::new(), &ctx, "DescribeVSwitches", &[("RegionId", "cn-hangzhou")]).unwrap();
    assert_eq!(again["VSwitches"], all["VSwitches"]);

    let zone = vpc_call(
        &ecs,
        &ctx,
        "DescribeVSwitches",
        &[("RegionId", "cn-hangzhou"), ("ZoneId", "cn-hangzhou-j"), ("IsDefault", "true")],
    )
    .unwrap();
    assert_eq!(vswitch_zones(&zone), ["cn-hangzhou-j"]);
    assert_eq!(zone["VSwitches"]["VSwitch"][0]["VSwitchId"], list[1]["VSwitchId"]);
    let not_default =
        vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("RegionId", "cn-hangzhou"), ("IsDefault", "false")])
            .unwrap();
    assert_eq!(not_default["TotalCount"], 0, "the account holds default vSwitches only");
    // A VpcId alone names its region; an unknown one is refused.
    let vpc = list[0]["VpcId"].as_str().unwrap();
    let by_vpc = vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("VpcId", vpc)]).unwrap();
    assert_eq!(by_vpc["TotalCount"], 2);
    assert_eq!(
        err_code(vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("VpcId", "vpc-nope")])),
        (404, "InvalidVpcId.NotFound".into())
    );
    assert_eq!(
        err_code(vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("RegionId", "mars-1")])),
        (404, codes::REGION_NOT_FOUND.into())
    );
    assert_eq!(
        err_code(vpc_call(&ecs, &ctx, "RunInstances", &[("RegionId", "cn-hangzhou")])),
        (404, codes::ACTION_NOT_FOUND.into()),
        "the VPC API serves no ECS action"
    );
}

#[test]
fn vswitches_page_by_page_number_up_to_fifty() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let page = |n: &str, size: &str| {
        vpc_call(
            &ecs,
            &ctx,
            "DescribeVSwitches",
            &[("RegionId", "cn-hangzhou"), ("PageNumber", n), ("PageSize", size)],
        )
        .unwrap()
    };
    let (p1, p2, p3) = (page("1", "1"), page("2", "1"), page("3", "1"));
    assert_eq!(
        (vswitch_zones(&p1), vswitch_zones(&p2)),
        (vec!["cn-hangzhou-i".to_string()], vec!["cn-hangzhou-j".to_string()])
    );
    assert!(vswitch_zones(&p3).is_empty());
    assert_eq!(
        (p2["PageNumber"].clone(), p2["PageSize"].clone(), p2["TotalCount"].clone()),
        (2.into(), 1.into(), 2.into())
    );
    assert_eq!(page("1", "500")["PageSize"], 50, "PageSize is at most 50");
}

#[test]
fn an_account_without_a_default_vswitch_in_a_zone_lists_none_there() {
    let knobs = Knobs {
        no_default_network: vec![gpuctl_simkit::ZoneRule {
            provider: Some(gpuctl_simkit::Provider::Alibaba),
            zone: Some("cn-hangzhou-j".into()),
        }],
        ..Knobs::default()
    };
    let (ecs, ctx) = (Ecs::new(), ctx_with(knobs));
    let all = vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("RegionId", "cn-hangzhou")]).unwrap();
    assert_eq!(vswitch_zones(&all), ["cn-hangzhou-i"]);
    let j = vpc_call(
        &ecs,
        &ctx,
        "DescribeVSwitches",
        &[("RegionId", "cn-hangzhou"), ("ZoneId", "cn-hangzhou-j"), ("IsDefault", "true")],
    )
    .unwrap();
    assert_eq!(j["TotalCount"], 0);
}

#[test]
fn the_default_vpc_has_its_security_group() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let vsw = vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("RegionId", "cn-hangzhou")]).unwrap();
    let vpc = vsw["VSwitches"]["VSwitch"][0]["VpcId"].as_str().unwrap().to_string();
    let groups = call(
        &ecs,
        &ctx,
        "DescribeSecurityGroups",
        &[("RegionId", "cn-hangzhou"), ("VpcId", &vpc), ("NetworkType", "vpc"), ("MaxResults", "10")],
    )
    .unwrap();
    let list = groups["SecurityGroups"]["SecurityGroup"].as_array().unwrap();
    assert_eq!(list.len(), 1);
    assert_eq!(list[0]["VpcId"], vpc.as_str());
    assert!(list[0]["SecurityGroupId"].as_str().unwrap().starts_with("sg-"));
    let other =
        call(&ecs, &ctx, "DescribeSecurityGroups", &[("RegionId", "cn-hangzhou"), ("VpcId", "vpc-other")])
            .unwrap();
    assert_eq!(other["TotalCount"], 0);
}

#[test]
fn the_signed_version_picks_the_product() {
    let req = SimRequest::default();
    let with = |v: &str| serde_json::json!({ "Version": v });
    assert_eq!(product(&req, &with("2014-05-26")).unwrap(), Product::Ecs);
    assert_eq!(product(&req, &with("2016-04-28")).unwrap(), Product::Vpc);
    assert_eq!(product(&req, &serde_json::json!({})).unwrap(), Product::Ecs);
    assert_eq!(err_code(product(&req, &with("2099-01-01"))), (400, "InvalidVersion".into()));
}

/// Issue 12: `handle` refuses what the ECS request models forbid, after auth and before the
/// operation runs, with ECS's `MissingParameter`/`InvalidParameter` (HTTP 400).
#[test]
fn requests_that_break_the_request_model_are_refused_with_ecs_codes() {
    use gpuctl_sign::Algorithm::{Acs3, AlibabaRpcV2};
    let (ecs, ctx) = (Ecs::new(), ctx());
    let (ak, sk) = test_keys();
    let base = [
        ("RegionId", "cn-hangzhou"),
        ("InstanceType", TYPE),
        ("ImageId", "ubuntu_22_04_x64_20G_alibase_20240926.vhd"),
        ("VSwitchId", "vsw-1"),
    ];
    // (action, parameters beyond `base` for RunInstances, the code ECS answers)
    type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);
    let cases: [Case; 7] = [
        ("RunInstances", vec![("Bogus", "1")], codes::INVALID_PARAMETER),
        ("RunInstances", vec![("Tag.1.Bogus", "1")], codes::INVALID_PARAMETER),
        ("RunInstances", vec![("Amount", "one")], codes::INVALID_PARAMETER),
        (
            "RunInstances",
            vec![("InstanceChargeType", "PrePaid"), ("PeriodUnit", "Week"), ("Period", "5")],
            codes::INVALID_PERIOD,
        ),
        (
            "RunInstances",
            vec![
                ("InstanceChargeType", "PrePaid"),
                ("Period", "1"),
                ("AutoReleaseTime", "2026-12-01T10:00:00Z"),
            ],
            codes::INVALID_PARAMETER,
        ),
        ("RunInstances", vec![("Tag.0.Key", "k")], codes::INVALID_PARAMETER),
        ("CreateSnapshot", vec![], codes::MISSING_PARAMETER),
    ];
    for (i, (action, extra, want)) in cases.iter().enumerate() {
        let q: Vec<(&str, &str)> = if *action == "RunInstances" {
            base.iter().copied().chain(extra.iter().copied()).collect()
        } else {
            extra.clone()
        };
        for alg in [Acs3, AlibabaRpcV2] {
            let nonce = format!("n-{i}-{alg:?}");
            let r = ecs.handle(&signed(alg, ak, sk, action, &q, &nonce, SignedDuration::ZERO), &ctx);
            let body = r.json_body();
            assert_eq!(
                (r.status, body["Code"].as_str().unwrap_or("")),
                (400, *want),
                "{action} {q:?} {alg:?}: {body}"
            );
        }
    }
    // Nothing ran: no instance was created by the refused requests.
    let v = call(&ecs, &ctx, "DescribeInstances", &[("RegionId", "cn-hangzhou")]).unwrap();
    assert_eq!(v["TotalCount"], json!(0), "{v}");
    // Auth comes first: the same unknown parameter, unsigned, is refused as unsigned.
    let mut req = signed(Acs3, ak, sk, "RunInstances", &[("Bogus", "1")], "n-unsigned", SignedDuration::ZERO);
    req.headers.retain(|(k, _)| k != "authorization");
    assert_eq!(ecs.handle(&req, &ctx).json_body()["Code"], json!("MissingSignature"));
}

#[test]
fn every_action_served_has_a_definition() {
    let src = include_str!("mod.rs");
    let served: Vec<&str> = src
        .lines()
        .filter_map(|l| l.trim().strip_prefix('"')?.split_once("\" => ").map(|(a, _)| a))
        .collect();
    assert!(served.len() >= 15, "{served:?}");
    for a in served {
        assert!(super::SCHEMA.has(a), "{a} is served but not in contract/schema/alibaba.json");
    }
}

/// The VPC product is held to its own definition (alibabacloud-vpc20160428 7.2.2,
/// models/_describe_vswitches_request.py): a parameter DescribeVSwitchesRequest does not have, or a
/// `PageSize` that is not an integer, is refused with `InvalidParameter` before the listing runs; the
/// same request is served when it keeps to the model; and an ECS action sent with VPC's version is
/// not held to ECS's model but answered as an action VPC does not serve.
#[test]
fn vpc_requests_are_held_to_the_vpc_request_model() {
    use gpuctl_sign::Algorithm::Acs3;
    let (ecs, ctx) = (Ecs::new(), ctx());
    let (ak, sk) = test_keys();
    let vpc = crate::api::vpc::VPC_API_VERSION;
    let send = |action: &str, q: &[(&str, &str)], nonce: &str| {
        let r = ecs.handle(&signed_for(vpc, Acs3, ak, sk, action, q, nonce, SignedDuration::ZERO), &ctx);
        (r.status, r.json_body())
    };
    let region = ("RegionId", "cn-hangzhou");
    for (i, bad) in [("Bogus", "1"), ("PageSize", "ten"), ("IsDefault", "maybe")].into_iter().enumerate() {
        let (status, body) = send("DescribeVSwitches", &[region, bad], &format!("vpc-bad-{i}"));
        assert_eq!((status, body["Code"].as_str()), (400, Some(codes::INVALID_PARAMETER)), "{bad:?}: {body}");
    }
    let (status, body) =
        send("DescribeVSwitches", &[region, ("PageSize", "10"), ("IsDefault", "true")], "vpc-ok");
    assert_eq!(status, 200, "{body}");
    assert!(!body["VSwitches"]["VSwitch"].as_array().unwrap().is_empty(), "{body}");
    // CreateSnapshot without its required DiskId would be MissingParameter at ECS; VPC has no such action.
    let (status, body) = send("CreateSnapshot", &[region], "vpc-ecs-action");
    assert_eq!((status, body["Code"].as_str()), (404, Some(codes::ACTION_NOT_FOUND)), "{body}");
}

// `ssh-keygen -t rsa -b 2048` and `-t ed25519` public halves (the private halves were deleted).
const RSA_PUB: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDyUSzFRX6BlPCXVwGlPJ2aq4JIrBHpWO6v/+qdK5Mt4W4BqBF/GJjht1oz0d2eLH/oAonZsIA9xLlS8mDO167cWL0xevJP/LlhUlNNvf4SfPOa0Ml8vK3v9LT26xDHlvmbVx3fCuKCyr6dIN5rrK0AEn0sa6GP58rwYHIZV9DDwH2ZOTVBgu2IV8tcHN7MGz7YP8NKJNPYFG4Q07aarKCUU89mo/X5cZv+bwXMXqyZhOVeqloJqLwbKMInrVIqIKYwc5bo4y52RpA89mM1IRC6XyEb79S9wB5ogirgLvT662REkhOVn0dZnTLEJepDAga83XLbjtgYkh+ymt51HKaV me@laptop";
const ED_PUB: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop";

#[test]
fn key_pairs_import_once_list_by_name_and_gate_run_instances() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let import = |name: &str, key: &str| {
        call(
            &ecs,
            &ctx,
            "ImportKeyPair",
            &[("RegionId", "cn-hangzhou"), ("KeyPairName", name), ("PublicKeyBody", key)],
        )
    };
    let r = import("gpuctl_0123456789abcdef", RSA_PUB).unwrap();
    assert_eq!(r["KeyPairName"], "gpuctl_0123456789abcdef");
    let fp = r["KeyPairFingerPrint"].as_str().unwrap().to_string();
    assert_eq!(fp.split(':').count(), 16, "RFC 4716 MD5 fingerprint: {fp}");
    assert_eq!(err_code(import("gpuctl_0123456789abcdef", RSA_PUB)), (400, "KeyPair.AlreadyExist".into()));
    assert_eq!(err_code(import("ed", ED_PUB)), (400, "InvalidPublicKeyBody.Malformed".into()));
    assert_eq!(err_code(import("junk", "ssh-rsa AAAA")), (400, "InvalidPublicKeyBody.Malformed".into()));
    assert_eq!(err_code(import("1starts-with-a-digit", RSA_PUB)).1, "InvalidParameter");

    let list = |pairs: &[(&str, &str)]| {
        let mut p = vec![("RegionId", "cn-hangzhou")];
        p.extend_from_slice(pairs);
        call(&ecs, &ctx, "DescribeKeyPairs", &p).unwrap()
    };
    let r = list(&[("KeyPairName", "gpuctl_0123456789abcdef")]);
    assert_eq!(r["TotalCount"], 1, "{r}");
    assert_eq!(r["KeyPairs"]["KeyPair"][0]["KeyPairFingerPrint"], fp.as_str());
    assert!(r["KeyPairs"]["KeyPair"][0].get("PublicKey").is_none(), "only with IncludePublicKey");
    assert_eq!(list(&[("KeyPairName", "gpuctl_*")])["TotalCount"], 1);
    assert_eq!(list(&[("KeyPairName", "gpuctl_")])["TotalCount"], 0);
    let r = list(&[("KeyPairFingerPrint", &fp), ("IncludePublicKey", "true")]);
    assert_eq!(r["KeyPairs"]["KeyPair"][0]["PublicKey"], RSA_PUB.trim_end_matches(" me@laptop"));
    // Another region has none of them.
    let r = call(&ecs, &ctx, "DescribeKeyPairs", &[("RegionId", "cn-beijing")]);
    if let Ok(r) = r {
        assert_eq!(r["TotalCount"], 0);
    }

    assert_eq!(
        err_code(run(&ecs, &ctx, &[("KeyPairName", "made-up")])),
        (404, "InvalidKeyPairName.NotFound".into())
    );
    let ids = run(&ecs, &ctx, &[("KeyPairName", "gpuctl_0123456789abcdef")]).unwrap();
    let r = call(
        &ecs,
        &ctx,
        "DescribeInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceIds", &format!("[\"{}\"]", ids[0]))],
    )
    .unwrap();
    assert_eq!(r["Instances"]["Instance"][0]["KeyPairName"], "gpuctl_0123456789abcdef", "{r}");
}

/// The public IPs `/_sim/state` lists as held.
fn public_ips(ecs: &Ecs, ctx: &SimCtx) -> Vec<String> {
    Emulator::state(ecs, ctx)["public_ips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["IpAddress"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_public_ip_is_assigned_shown_and_released_with_its_instance() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let ids = run(
        &ecs,
        &ctx,
        &[("Amount", "2"), ("InternetMaxBandwidthOut", "10"), ("InternetChargeType", "PayByBandwidth")],
    )
    .unwrap();
    let plain = run(&ecs, &ctx, &[]).unwrap();
    assert_eq!(public_ips(&ecs, &ctx), ["203.0.113.1", "203.0.113.2"]);
    let v = call(&ecs, &ctx, "DescribeInstances", &[("RegionId", "cn-hangzhou")]).unwrap();
    let shown: Vec<(String, Value, Value)> = v["Instances"]["Instance"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| {
            (
                i["InstanceId"].as_str().unwrap().to_string(),
                i["PublicIpAddress"]["IpAddress"].clone(),
                i["InternetChargeType"].clone(),
            )
        })
        .collect();
    for (id, ips, charge) in shown {
        if id == plain[0] {
            assert_eq!((ips, charge), (json!([]), json!("PayByTraffic")));
        } else {
            assert_eq!(ips.as_array().unwrap().len(), 1, "{id}");
            assert_eq!(charge, json!("PayByBandwidth"));
        }
    }
    // ECS's public IP belongs to the instance: deleting it frees the address.
    ctx.clock().advance(SignedDuration::from_secs(30));
    let del = |id: &str| {
        call(
            &ecs,
            &ctx,
            "DeleteInstances",
            &[("RegionId", "cn-hangzhou"), ("InstanceId.1", id), ("Force", "true")],
        )
    };
    del(&ids[0]).unwrap();
    assert_eq!(public_ips(&ecs, &ctx).len(), 1);
    del(&ids[1]).unwrap();
    assert!(public_ips(&ecs, &ctx).is_empty());
}

#[test]
fn public_ip_parameters_the_definition_forbids_are_refused() {
    use gpuctl_sign::Algorithm::Acs3;
    let (ecs, ctx) = (Ecs::new(), ctx());
    let (ak, sk) = test_keys();
    let base = [
        ("RegionId", "cn-hangzhou"),
        ("InstanceType", TYPE),
        ("ImageId", "ubuntu_22_04_x64_20G_alibase_20240926.vhd"),
        ("VSwitchId", "vsw-1"),
    ];
    // alibabacloud-ecs20140526 7.11.8 RunInstancesRequest: InternetMaxBandwidthOut 0 to 100,
    // InternetChargeType PayByBandwidth or PayByTraffic (contract/rules.json).
    let cases: [&[(&str, &str)]; 4] = [
        &[("InternetMaxBandwidthOut", "101")],
        &[("InternetMaxBandwidthOut", "-1")],
        &[("InternetMaxBandwidthOut", "10"), ("InternetChargeType", "PayByHour")],
        &[("InternetMaxBandwidthOut", "ten")],
    ];
    for (i, extra) in cases.iter().enumerate() {
        let q: Vec<(&str, &str)> = base.iter().chain(extra.iter()).copied().collect();
        let r = ecs.handle(
            &signed(Acs3, ak, sk, "RunInstances", &q, &format!("ip-{i}"), SignedDuration::ZERO),
            &ctx,
        );
        let body = r.json_body();
        assert_eq!(
            (r.status, body["Code"].as_str().unwrap_or("")),
            (400, codes::INVALID_PARAMETER),
            "{extra:?}: {body}"
        );
    }
    assert!(lock(&ecs.state).instances.is_empty() && public_ips(&ecs, &ctx).is_empty());
    // The edge of the range is sold.
    let q: Vec<(&str, &str)> = base.iter().copied().chain([("InternetMaxBandwidthOut", "100")]).collect();
    let r = ecs.handle(&signed(Acs3, ak, sk, "RunInstances", &q, "ip-ok", SignedDuration::ZERO), &ctx);
    assert_eq!(r.status, 200, "{}", r.json_body());
    assert_eq!(public_ips(&ecs, &ctx).len(), 1);
}

#[test]
fn user_data_is_kept_base64_and_refused_when_not() {
    use base64::Engine as _;
    let (ecs, ctx) = (Ecs::new(), ctx());
    // alibabacloud_ecs20140526 7.11.8 RunInstancesRequest.user_data: base64, 32 KB before encoding.
    let b64 = "I2Nsb3VkLWNvbmZpZwo="; // "#cloud-config\n"
    let ids = run(&ecs, &ctx, &[("UserData", b64)]).unwrap();
    assert_eq!(ids.len(), 1);
    assert_eq!(ecs.state(&ctx)["instances"][0]["UserData"], serde_json::json!(b64));
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("UserData", "#cloud-config")])),
        (400, "InvalidUserData.Base64FormatInvalid".into())
    );
    let big = base64::engine::general_purpose::STANDARD.encode(vec![b'x'; 32 * 1024 + 1]);
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("UserData", &big)])),
        (400, "InvalidUserData.SizeExceeded".into())
    );
}

#[test]
fn describe_images_lists_system_images_by_owner_name_and_page() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let listed = gpuctl_simkit::images::ALIBABA.len();
    let page = |n: &str| {
        call(
            &ecs,
            &ctx,
            "DescribeImages",
            &[
                ("RegionId", "cn-hangzhou"),
                ("ImageOwnerAlias", "system"),
                ("PageSize", "4"),
                ("PageNumber", n),
            ],
        )
        .unwrap()
    };
    let (one, two) = (page("1"), page("2"));
    assert_eq!(one["TotalCount"].as_u64(), Some(listed as u64), "{one}");
    let ids = |v: &Value| -> Vec<String> {
        v["Images"]["Image"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["ImageId"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(ids(&one).len(), 4);
    assert_eq!(ids(&one).len() + ids(&two).len(), listed);
    assert!(ids(&two).iter().all(|i| !ids(&one).contains(i)), "pages do not overlap");
    assert!(one["Images"]["Image"].as_array().unwrap().iter().all(|i| i["ImageOwnerAlias"] == "system"));
    // ImageName: "Fuzzy search is supported"; a public image's name is its id.
    let gpu =
        call(&ecs, &ctx, "DescribeImages", &[("RegionId", "cn-hangzhou"), ("ImageName", "GPU")]).unwrap();
    assert_eq!(gpu["TotalCount"].as_u64(), Some(1), "{gpu}");
    let own = call(&ecs, &ctx, "DescribeImages", &[("RegionId", "cn-hangzhou"), ("ImageOwnerAlias", "self")])
        .unwrap();
    assert_eq!(own["TotalCount"].as_u64(), Some(0), "no custom image yet: {own}");
    let by_id = call(
        &ecs,
        &ctx,
        "DescribeImages",
        &[
            ("RegionId", "cn-hangzhou"),
            ("ImageId", "ubuntu_22_04_x64_20G_alibase_20240926.vhd,aliyun_3_x64_20G_alibase_20240819.vhd"),
        ],
    )
    .unwrap();
    assert_eq!(by_id["TotalCount"].as_u64(), Some(2), "{by_id}");
}

/// An account with no default network anywhere (`gpuctl sim --empty-account`).
fn empty_account() -> SimCtx {
    ctx_with(Knobs {
        no_default_network: vec![gpuctl_simkit::ZoneRule {
            provider: Some(gpuctl_simkit::Provider::Alibaba),
            zone: None,
        }],
        ..Knobs::default()
    })
}

/// `network = "auto"` on ECS (issue 13): an empty account has nothing to launch into; a VPC, a
/// vSwitch in the zone and a security group are made (tagged, found again by tag), the group gets
/// SSH and in-group rules, an instance goes into them, and each piece is refused deletion while
/// something is in it, then deleted last to first.
#[test]
fn an_empty_account_makes_its_own_network_and_launches_into_it() {
    let (ecs, ctx) = (Ecs::new(), empty_account());
    let r = [("RegionId", "cn-hangzhou")];
    let all = vpc_call(&ecs, &ctx, "DescribeVSwitches", &r).unwrap();
    assert_eq!(all["TotalCount"], 0, "no default vSwitch: {all}");
    assert_eq!(vpc_call(&ecs, &ctx, "DescribeVpcs", &r).unwrap()["TotalCount"], 0);
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("ZoneId", "cn-hangzhou-i")])),
        (400, codes::MISSING_PARAMETER.into())
    );

    let tag = [("Tag.1.Key", "gpuctl-network"), ("Tag.1.Value", "cn-hangzhou-i")];
    let mk_vpc = |token: &str| {
        let mut p = vec![
            ("RegionId", "cn-hangzhou"),
            ("CidrBlock", "10.0.0.0/16"),
            ("VpcName", "gpuctl-cn-hangzhou-i"),
            ("ClientToken", token),
        ];
        p.extend(tag);
        vpc_call(&ecs, &ctx, "CreateVpc", &p)
    };
    let vpc = mk_vpc("t-vpc").unwrap()["VpcId"].as_str().unwrap().to_string();
    assert_eq!(mk_vpc("t-vpc").unwrap()["VpcId"], vpc.as_str(), "a ClientToken retry answers the same VPC");
    assert_eq!(
        err_code(vpc_call(
            &ecs,
            &ctx,
            "CreateVpc",
            &[("RegionId", "cn-hangzhou"), ("CidrBlock", "127.0.0.0/16")]
        )),
        (400, "InvalidCidrBlock.Malformed".into())
    );
    let found = vpc_call(&ecs, &ctx, "DescribeVpcs", &[&r[..], &tag[..]].concat()).unwrap();
    assert_eq!(found["Vpcs"]["Vpc"][0]["VpcId"], vpc.as_str(), "{found}");
    assert_eq!(found["Vpcs"]["Vpc"][0]["Status"], "Pending");
    let vsw_p = |zone: &'static str, cidr: &'static str| {
        let mut p =
            vec![("RegionId", "cn-hangzhou"), ("VpcId", vpc.as_str()), ("ZoneId", zone), ("CidrBlock", cidr)];
        p.extend(tag);
        p
    };
    assert_eq!(
        err_code(vpc_call(&ecs, &ctx, "CreateVSwitch", &vsw_p("cn-hangzhou-i", "10.0.0.0/20"))),
        (400, "IncorrectVpcStatus".into()),
        "a Pending VPC takes no vSwitch"
    );
    ctx.clock().advance(SignedDuration::from_secs(2));
    let vsw = vpc_call(&ecs, &ctx, "CreateVSwitch", &vsw_p("cn-hangzhou-i", "10.0.0.0/20")).unwrap()
        ["VSwitchId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(
        err_code(vpc_call(&ecs, &ctx, "CreateVSwitch", &vsw_p("cn-hangzhou-j", "10.0.8.0/24"))),
        (400, "InvalidCidrBlock.Overlapped".into())
    );
    assert_eq!(
        err_code(vpc_call(&ecs, &ctx, "CreateVSwitch", &vsw_p("cn-hangzhou-j", "10.1.0.0/24"))),
        (400, "InvalidCidrBlock.Malformed".into()),
        "outside the VPC"
    );
    let other = vpc_call(&ecs, &ctx, "CreateVSwitch", &vsw_p("cn-hangzhou-j", "10.0.16.0/20")).unwrap()
        ["VSwitchId"]
        .as_str()
        .unwrap()
        .to_string();
    let in_zone = vpc_call(
        &ecs,
        &ctx,
        "DescribeVSwitches",
        &[&r[..], &[("VpcId", vpc.as_str()), ("ZoneId", "cn-hangzhou-i")][..], &tag[..]].concat(),
    )
    .unwrap();
    assert_eq!(in_zone["TotalCount"], 1);
    assert_eq!(in_zone["VSwitches"]["VSwitch"][0]["VSwitchId"], vsw.as_str());

    let mut gp = vec![
        ("RegionId", "cn-hangzhou"),
        ("VpcId", vpc.as_str()),
        ("SecurityGroupName", "gpuctl-cn-hangzhou-i"),
    ];
    gp.extend(tag);
    let sg = call(&ecs, &ctx, "CreateSecurityGroup", &gp).unwrap()["SecurityGroupId"]
        .as_str()
        .unwrap()
        .to_string();
    let rules = [
        ("RegionId", "cn-hangzhou"),
        ("SecurityGroupId", sg.as_str()),
        ("Permissions.1.IpProtocol", "tcp"),
        ("Permissions.1.PortRange", "22/22"),
        ("Permissions.1.SourceCidrIp", "203.0.113.0/24"),
        ("Permissions.2.IpProtocol", "ALL"),
        ("Permissions.2.PortRange", "-1/-1"),
        ("Permissions.2.SourceGroupId", sg.as_str()),
    ];
    call(&ecs, &ctx, "AuthorizeSecurityGroup", &rules).unwrap();
    call(&ecs, &ctx, "AuthorizeSecurityGroup", &rules).unwrap();
    let held = call(
        &ecs,
        &ctx,
        "DescribeSecurityGroupAttribute",
        &[("RegionId", "cn-hangzhou"), ("SecurityGroupId", sg.as_str()), ("Direction", "ingress")],
    )
    .unwrap();
    let perms = held["Permissions"]["Permission"].as_array().unwrap();
    assert_eq!(perms.len(), 2, "a rule held already is not added twice: {held}");
    assert_eq!(
        (perms[0]["IpProtocol"].as_str(), perms[0]["SourceCidrIp"].as_str()),
        (Some("TCP"), Some("203.0.113.0/24"))
    );
    for (field, bad, code) in [
        ("Permissions.1.IpProtocol", "SCTP", "InvalidIpProtocol.ValueNotSupported"),
        ("Permissions.1.PortRange", "22", "InvalidIpPortRange.Malformed"),
        ("Permissions.1.SourceCidrIp", "203.0.113.0/33", "InvalidSourceCidrIp.Malformed"),
    ] {
        let q: Vec<(&str, &str)> =
            rules[..5].iter().map(|&(k, v)| if k == field { (k, bad) } else { (k, v) }).collect();
        assert_eq!(
            err_code(call(&ecs, &ctx, "AuthorizeSecurityGroup", &q)),
            (400, code.into()),
            "{field}={bad}"
        );
    }

    // The launch must name what the account holds, in the zone, in one VPC.
    let net = |v: &str, g: &str| -> Vec<(String, String)> {
        vec![
            ("ZoneId".into(), "cn-hangzhou-i".into()),
            ("VSwitchId".into(), v.into()),
            ("SecurityGroupIds.1".into(), g.into()),
        ]
    };
    assert_eq!(
        err_code(run(&ecs, &ctx, &with(&net("vsw-nope", &sg)))),
        (404, "InvalidVSwitchId.NotFound".into())
    );
    assert_eq!(
        err_code(run(&ecs, &ctx, &with(&net(&other, &sg)))),
        (400, "InvalidParameter.Mismatch".into()),
        "another zone's vSwitch"
    );
    assert_eq!(
        err_code(run(&ecs, &ctx, &with(&net(&vsw, "sg-nope")))),
        (404, "InvalidSecurityGroupId.NotFound".into())
    );
    let ids = run(&ecs, &ctx, &with(&net(&vsw, &sg))).unwrap();
    let inst = call(&ecs, &ctx, "DescribeInstances", &[("RegionId", "cn-hangzhou")]).unwrap();
    assert_eq!(inst["Instances"]["Instance"][0]["VpcAttributes"]["VpcId"], vpc.as_str(), "{inst}");

    // Deleted last to first, each refused while something is in it.
    let del_sg = || {
        call(
            &ecs,
            &ctx,
            "DeleteSecurityGroup",
            &[("RegionId", "cn-hangzhou"), ("SecurityGroupId", sg.as_str())],
        )
    };
    let del_vsw =
        |id: &str| vpc_call(&ecs, &ctx, "DeleteVSwitch", &[("RegionId", "cn-hangzhou"), ("VSwitchId", id)]);
    let del_vpc =
        || vpc_call(&ecs, &ctx, "DeleteVpc", &[("RegionId", "cn-hangzhou"), ("VpcId", vpc.as_str())]);
    assert_eq!(err_code(del_sg()), (403, "DependencyViolation".into()));
    assert_eq!(err_code(del_vsw(&vsw)), (400, "DependencyViolation".into()));
    assert_eq!(err_code(del_vpc()), (400, "DependencyViolation.VSwitch".into()));
    call(
        &ecs,
        &ctx,
        "DeleteInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceId.1", &ids[0]), ("Force", "true")],
    )
    .unwrap();
    del_sg().unwrap();
    assert_eq!(err_code(del_sg()), (404, "InvalidSecurityGroupId.NotFound".into()));
    del_vsw(&vsw).unwrap();
    assert_eq!(err_code(del_vpc()), (400, "DependencyViolation.VSwitch".into()), "the other vSwitch");
    del_vsw(&other).unwrap();
    del_vpc().unwrap();
    assert_eq!(err_code(del_vpc()), (404, "InvalidVpcId.NotFound".into()));
    let st = ecs.state(&ctx);
    assert!(
        st["vpcs"].as_array().unwrap().is_empty() && st["subnets"].as_array().unwrap().is_empty(),
        "{st}"
    );
}

#[test]
fn the_default_network_is_the_local_clouds_to_keep() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let vsw = vpc_call(&ecs, &ctx, "DescribeVSwitches", &[("RegionId", "cn-hangzhou")]).unwrap();
    let id = vsw["VSwitches"]["VSwitch"][0]["VSwitchId"].as_str().unwrap().to_string();
    assert_eq!(
        err_code(vpc_call(&ecs, &ctx, "DeleteVSwitch", &[("RegionId", "cn-hangzhou"), ("VSwitchId", &id)])),
        (403, "Forbidden.DefaultNetwork".into())
    );
    let vpcs =
        vpc_call(&ecs, &ctx, "DescribeVpcs", &[("RegionId", "cn-hangzhou"), ("IsDefault", "true")]).unwrap();
    assert_eq!(vpcs["TotalCount"], 1, "{vpcs}");
    assert_eq!(vpcs["Vpcs"]["Vpc"][0]["Status"], "Available");
}

fn with(p: &[(String, String)]) -> Vec<(&str, &str)> {
    p.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect()
}

/// An image the region has neither as a public image nor as one of the account's is refused with
/// ECS's `InvalidImageId.NotFound` (404).
#[test]
fn an_unknown_image_is_refused() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let r = call(
        &ecs,
        &ctx,
        "RunInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceType", TYPE), ("ImageId", "m-nope")],
    );
    assert_eq!(err_code(r), (404, "InvalidImageId.NotFound".to_string()));
}

// ------------------------------------------------------------------ issue 14: deployment sets, NAS

const HZ: (&str, &str) = ("RegionId", "cn-hangzhou");

fn make_set(ecs: &Ecs, ctx: &SimCtx, extra: &[(&str, &str)]) -> Result<String, EcsError> {
    let mut p = vec![HZ, ("Strategy", "LowLatency"), ("DeploymentSetName", "e2e-train")];
    p.extend_from_slice(extra);
    let v = call(ecs, ctx, "CreateDeploymentSet", &p)?;
    Ok(v["DeploymentSetId"].as_str().unwrap().to_string())
}

/// The supported families are every GPU family the local cloud sells (its assumption: no per-family
/// list is published), but those a `no_low_latency` knob drops, and only from LowLatency.
#[test]
fn supported_families_are_the_families_sold_but_those_a_knob_drops() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    let fams = |strategy: &str| {
        call(&ecs, &ctx, "DescribeDeploymentSetSupportedInstanceTypeFamily", &[HZ, ("Strategy", strategy)])
            .unwrap()["InstanceTypeFamilies"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert_eq!(fams("LowLatency"), "ecs.gn7i");
    let set = make_set(&ecs, &ctx, &[]).unwrap();
    ctx.update_knobs(|k| {
        k.no_low_latency.push(gpuctl_simkit::FamilyRule {
            provider: Some(gpuctl_simkit::Provider::Alibaba),
            family: Some("ecs.gn7i".into()),
        })
    });
    assert_eq!(fams("LowLatency"), "");
    assert_eq!(fams("Availability"), "ecs.gn7i", "the knob drops from LowLatency only");
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("ZoneId", "cn-hangzhou-i"), ("DeploymentSetId", &set)])),
        (400, codes::BAD_INSTANCE_TYPE.into()),
        "a family the set's strategy does not take"
    );
    assert_eq!(
        err_code(call(
            &ecs,
            &ctx,
            "DescribeDeploymentSetSupportedInstanceTypeFamily",
            &[HZ, ("Strategy", "Close")]
        )),
        (400, "InvalidParameter.Strategy".into())
    );
}

#[test]
fn deployment_sets_are_made_once_found_by_name_and_refused_what_the_docs_forbid() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    assert_eq!(
        err_code(make_set(&ecs, &ctx, &[("Strategy", "Nearby")])),
        (400, "InvalidParameter.Strategy".into())
    );
    assert_eq!(
        err_code(make_set(&ecs, &ctx, &[("DeploymentSetName", "7-train")])),
        (400, "InvalidDeploymentSetName.Malformed".into())
    );
    assert_eq!(
        err_code(call(&ecs, &ctx, "CreateDeploymentSet", &[("Strategy", "LowLatency")])),
        (400, codes::MISSING_PARAMETER.into())
    );
    let id = make_set(&ecs, &ctx, &[("ClientToken", "t-set")]).unwrap();
    assert_eq!(make_set(&ecs, &ctx, &[("ClientToken", "t-set")]).unwrap(), id, "a ClientToken retry");
    assert_eq!(
        err_code(make_set(&ecs, &ctx, &[("ClientToken", "t-set"), ("DeploymentSetName", "other")])),
        (400, codes::IDEMPOTENT_MISMATCH.into())
    );
    let found = call(
        &ecs,
        &ctx,
        "DescribeDeploymentSets",
        &[HZ, ("DeploymentSetName", "e2e-train"), ("PageSize", "50")],
    )
    .unwrap();
    assert_eq!(found["TotalCount"], 1, "{found}");
    assert_eq!(found["DeploymentSets"]["DeploymentSet"][0]["DeploymentSetId"], id.as_str());
    assert_eq!(found["DeploymentSets"]["DeploymentSet"][0]["Strategy"], "LowLatency");
    let by_id =
        call(&ecs, &ctx, "DescribeDeploymentSets", &[HZ, ("DeploymentSetIds", &format!("[\"{id}\"]"))])
            .unwrap();
    assert_eq!(by_id["TotalCount"], 1);

    // RunInstances into it: an unknown set, spot, more than 20 in the zone, a second zone.
    let into = |extra: &[(&str, &str)]| {
        let mut p = vec![("ZoneId", "cn-hangzhou-i"), ("DeploymentSetId", id.as_str())];
        p.extend_from_slice(extra);
        run(&ecs, &ctx, &p)
    };
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("DeploymentSetId", "ds-nope")])),
        (404, "DeploymentSet.NotFound".into())
    );
    assert_eq!(err_code(into(&[("SpotStrategy", "SpotAsPriceGo")])), (400, codes::INVALID_PARAMETER.into()));
    let ids = into(&[("Amount", "20")]).unwrap();
    assert_eq!(err_code(into(&[])), (403, "QuotaExceed.DeploymentSetInstanceQuotaFull".into()), "a 21st");
    let inst =
        call(&ecs, &ctx, "DescribeInstances", &[HZ, ("InstanceIds", &format!("[\"{}\"]", ids[0]))]).unwrap();
    assert_eq!(inst["Instances"]["Instance"][0]["DeploymentSetId"], id.as_str());
    let held = call(&ecs, &ctx, "DescribeDeploymentSets", &[HZ]).unwrap();
    assert_eq!(held["DeploymentSets"]["DeploymentSet"][0]["InstanceAmount"], 20, "{held}");

    let del = || call(&ecs, &ctx, "DeleteDeploymentSet", &[HZ, ("DeploymentSetId", id.as_str())]);
    assert_eq!(err_code(del()), (403, "DependencyViolation.NotEmpty".into()));
    let mut release = vec![HZ, ("Force", "true")];
    let keys: Vec<String> = (1..ids.len()).map(|n| format!("InstanceId.{n}")).collect();
    release.extend(keys.iter().zip(&ids[1..]).map(|(k, v)| (k.as_str(), v.as_str())));
    call(&ecs, &ctx, "DeleteInstances", &release).unwrap();
    assert_eq!(
        err_code(run(&ecs, &ctx, &[("ZoneId", "cn-hangzhou-j"), ("DeploymentSetId", &id)])),
        (403, "QuotaExceed.DeploymentSetInstanceQuotaFull".into()),
        "a LowLatency set keeps to one zone"
    );
    assert_eq!(err_code(del()), (403, "DependencyViolation.NotEmpty".into()), "one is left");
    call(&ecs, &ctx, "DeleteInstances", &[HZ, ("Force", "true"), ("InstanceId.1", &ids[0])]).unwrap();
    del().unwrap();
    assert_eq!(err_code(del()), (404, "DeploymentSet.NotFound".into()));
}

/// Run one NAS action (API 2017-06-26) behind the local cloud's address (no region in the host).
fn nas_call(ecs: &Ecs, ctx: &SimCtx, action: &str, pairs: &[(&str, &str)]) -> Result<Value, EcsError> {
    ecs.tick(ctx);
    let pairs: Vec<(String, String)> = pairs.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect();
    ecs.dispatch_nas("test-account", action, &unflatten(&pairs), ctx, None)
}

const FS: [(&str, &str); 7] = [
    ("FileSystemType", "standard"),
    ("ProtocolType", "NFS"),
    ("StorageType", "Capacity"),
    ("ZoneId", "cn-hangzhou-i"),
    ("Description", "e2e-train"),
    ("Tag.1.Key", "gpuctl-deployment"),
    ("Tag.1.Value", "e2e"),
];

#[test]
fn a_file_system_runs_takes_a_mount_target_that_turns_active_and_is_deleted_after_it() {
    let (ecs, ctx) = (Ecs::new(), ctx());
    fn with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
        FS.iter()
            .copied()
            .filter(|(k, _)| !extra.iter().any(|(e, _)| e == k))
            .chain(extra.iter().copied())
            .collect()
    }
    assert_eq!(
        err_code(nas_call(&ecs, &ctx, "CreateFileSystem", &with(&[("StorageType", "Turbo")]))),
        (400, "InvalidParameter.StorageType".into())
    );
    let dry = nas_call(&ecs, &ctx, "CreateFileSystem", &with(&[("DryRun", "true")])).unwrap();
    assert_eq!(dry["FileSystemId"], "", "a dry run makes nothing");
    let token = with(&[("ClientToken", "t-fs")]);
    let id = nas_call(&ecs, &ctx, "CreateFileSystem", &token).unwrap()["FileSystemId"]
        .as_str()
        .unwrap()
        .to_string();
    assert_eq!(nas_call(&ecs, &ctx, "CreateFileSystem", &token).unwrap()["FileSystemId"], id.as_str());
    let listed = nas_call(
        &ecs,
        &ctx,
        "DescribeFileSystems",
        &[("Tag.1.Key", "gpuctl-deployment"), ("Tag.1.Value", "e2e")],
    )
    .unwrap();
    assert_eq!(listed["TotalCount"], 1, "{listed}");
    let fs = &listed["FileSystems"]["FileSystem"][0];
    assert_eq!((fs["FileSystemId"].as_str(), fs["Status"].as_str()), (Some(id.as_str()), Some("Pending")));
    assert_eq!(
        (fs["StorageType"].as_str(), fs["Description"].as_str()),
        (Some("Capacity"), Some("e2e-train"))
    );

    let vsw = vpc_call(&ecs, &ctx, "DescribeVSwitches", &[HZ, ("ZoneId", "cn-hangzhou-i")]).unwrap();
    let (vsw, vpc) = (
        vsw["VSwitches"]["VSwitch"][0]["VSwitchId"].as_str().unwrap().to_string(),
        vsw["VSwitches"]["VSwitch"][0]["VpcId"].as_str().unwrap().to_string(),
    );
    let mt = |extra: &[(&str, &str)], drop: &str| {
        let p: Vec<(&str, &str)> = [
            ("FileSystemId", id.as_str()),
            ("NetworkType", "Vpc"),
            ("VpcId", vpc.as_str()),
            ("VSwitchId", vsw.as_str()),
            ("AccessGroupName", "DEFAULT_VPC_GROUP_NAME"),
        ]
        .into_iter()
        .filter(|(k, _)| *k != drop && !extra.iter().any(|(e, _)| e == k))
        .chain(extra.iter().copied())
        .collect();
        nas_call(&ecs, &ctx, "CreateMountTarget", &p)
    };
    assert_eq!(err_code(mt(&[], "")), (403, "Instance.IncorrectStatus".into()), "still Pending");
    ctx.clock().advance(SignedDuration::from_secs(3));
    let fs = nas_call(&ecs, &ctx, "DescribeFileSystems", &[("FileSystemId", &id)]).unwrap();
    assert_eq!(fs["FileSystems"]["FileSystem"][0]["Status"], "Running");
    assert_eq!(err_code(mt(&[], "VpcId")), (400, "MissingParameter.VpcId".into()));
    assert_eq!(err_code(mt(&[], "VSwitchId")), (400, "MissingParameter.VSwitchId".into()));
    assert_eq!(err_code(mt(&[("AccessGroupName", "mine")], "")), (404, "InvalidAccessGroup.NotFound".into()));
    assert_eq!(err_code(mt(&[("VSwitchId", "vsw-nope")], "")), (404, "InvalidVSwitchId.NotFound".into()));
    assert_eq!(
        err_code(mt(&[("FileSystemId", "0000000000")], "")),
        (404, "InvalidFileSystem.NotFound".into())
    );
    let domain = mt(&[], "").unwrap()["MountTargetDomain"].as_str().unwrap().to_string();
    assert!(domain.starts_with(&id) && domain.ends_with(".cn-hangzhou.nas.aliyuncs.com"), "{domain}");
    let status = |ecs: &Ecs| {
        let v = nas_call(ecs, &ctx, "DescribeMountTargets", &[("FileSystemId", &id)]).unwrap();
        assert_eq!(v["MountTargets"]["MountTarget"][0]["VswId"], vsw.as_str(), "{v}");
        v["MountTargets"]["MountTarget"][0]["Status"].as_str().unwrap().to_string()
    };
    assert_eq!(status(&ecs), "Pending");
    ctx.clock().advance(SignedDuration::from_secs(3));
    assert_eq!(status(&ecs), "Active");

    let del_fs = || nas_call(&ecs, &ctx, "DeleteFileSystem", &[("FileSystemId", &id)]);
    assert_eq!(err_code(del_fs()), (403, "Instance.IncorrectStatus".into()), "its mount target first");
    let del_mt = || {
        nas_call(&ecs, &ctx, "DeleteMountTarget", &[("FileSystemId", &id), ("MountTargetDomain", &domain)])
    };
    del_mt().unwrap();
    assert_eq!(err_code(del_mt()), (404, "InvalidMountTarget.NotFound".into()));
    del_fs().unwrap();
    let fs = nas_call(&ecs, &ctx, "DescribeFileSystems", &[("FileSystemId", &id)]).unwrap();
    assert_eq!(fs["FileSystems"]["FileSystem"][0]["Status"], "Pending", "being deleted: {fs}");
    ctx.clock().advance(SignedDuration::from_secs(3));
    let fs = nas_call(&ecs, &ctx, "DescribeFileSystems", &[("FileSystemId", &id)]).unwrap();
    assert_eq!(fs["TotalCount"], 0, "gone: {fs}");
    assert_eq!(err_code(del_fs()), (404, "InvalidFileSystem.NotFound".into()));
}

/// NAS is routed by its version and held to its own definition (alibabacloud-nas20170626 3.7.5): no
/// request model has `RegionId` (the region is the host's), `ProtocolType` and `StorageType` are
/// required; a host that names a region keeps the file system there.
#[test]
fn nas_requests_are_held_to_the_nas_request_model_and_the_host_names_the_region() {
    use gpuctl_sign::Algorithm::Acs3;
    let (ecs, ctx) = (Ecs::new(), ctx());
    let (ak, sk) = test_keys();
    let nas = crate::api::nas::NAS_API_VERSION;
    let req = SimRequest::default();
    assert_eq!(product(&req, &serde_json::json!({ "Version": nas })).unwrap(), Product::Nas);
    let send = |q: &[(&str, &str)], nonce: &str, host: Option<&str>| {
        let mut r = signed_for(nas, Acs3, ak, sk, "CreateFileSystem", q, nonce, SignedDuration::ZERO);
        if let Some(h) = host {
            r.headers.retain(|(k, _)| k != "host");
            r.headers.push(("host".into(), h.into()));
        }
        let r = ecs.handle(&r, &ctx);
        (r.status, r.json_body())
    };
    let (status, body) =
        send(&[HZ, ("ProtocolType", "NFS"), ("StorageType", "Capacity")], "nas-region", None);
    assert_eq!((status, body["Code"].as_str()), (400, Some(codes::INVALID_PARAMETER)), "{body}");
    let (status, body) = send(&[("ProtocolType", "NFS")], "nas-missing", None);
    assert_eq!((status, body["Code"].as_str()), (400, Some(codes::MISSING_PARAMETER)), "{body}");
    let (status, body) = send(&[("ProtocolType", "NFS"), ("StorageType", "Performance")], "nas-ok", None);
    assert_eq!(status, 200, "{body}");
    let st = ecs.state(&ctx);
    assert_eq!(st["file_systems"][0]["RegionId"], "cn-hangzhou", "{st}");
    assert_eq!(
        host_region(&SimRequest::default().with_header("host", "nas.cn-hangzhou.aliyuncs.com"), &ctx)
            .as_deref(),
        Some("cn-hangzhou")
    );
    assert_eq!(
        host_region(&SimRequest::default().with_header("host", "nas.xx-nowhere-1.aliyuncs.com"), &ctx),
        None
    );
}
