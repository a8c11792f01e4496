//! Unit tests of the Tencent emulator: every request is TC3-signed by gpuctl-sign, so they also
//! exercise the signature path. Time moves only through the sim clock.

use gpuctl_simkit::{Emulator, Knobs, Offer, Prices, SimConfig, SimCtx, SimRequest, StockOut};
use jiff::SignedDuration;
use serde_json::{json, Value};

use super::Tencent;

/// GetMonitorData (issue 15).
mod monitor;

/// DescribeBillDetail (issue 15).
mod billing;

/// The metadata service, spot reclaims, role credentials and StopInstances (issue 15).
mod metadata;

/// Disks, EIPs, snapshots and file systems that outlive instances (issue 15).
mod leftover;

const TYPE: &str = "GN7.2XLARGE32";
const ZONE: &str = "ap-guangzhou-3";

fn offer() -> Offer {
    Offer {
        provider: gpuctl_simkit::Provider::Tencent,
        region: "ap-guangzhou".into(),
        zones: vec![ZONE.into(), "ap-guangzhou-4".into()],
        instance_type: TYPE.into(),
        family: "GN7".into(),
        gpu_model: "T4".into(),
        gpu_count: 1,
        gpu_memory_gib: 16.0,
        vcpu: 8,
        memory_gib: 32.0,
        prices: Prices {
            hourly: Some(8.68),
            spot_hourly: Some(2.1),
            monthly: Some(3200.0),
            yearly: Some(30000.0),
            ..Prices::default()
        },
        source: "test".into(),
        as_of: "2026-01-01".into(),
    }
}

fn setup(knobs: Knobs) -> (Tencent, SimCtx) {
    (Tencent::new(), SimCtx::new(SimConfig { seed: 3, knobs, ..SimConfig::default() }, vec![offer()]))
}

fn signed(service: &str, action: &str, body: &Value) -> SimRequest {
    gpuctl_simkit::testing::tc3("127.0.0.1:9", service, "ap-guangzhou", action, &body.to_string())
}

/// Call one action; returns `Response` (with `Error` on failure).
fn call(emu: &Tencent, ctx: &SimCtx, action: &str, body: Value) -> Value {
    let service = if super::api::CBS_ACTIONS.contains(&action) {
        "cbs"
    } else if super::api::VPC_ACTIONS.contains(&action) {
        "vpc"
    } else if super::api::CFS_ACTIONS.contains(&action) {
        "cfs"
    } else if super::api::MONITOR_ACTIONS.contains(&action) {
        "monitor"
    } else {
        "cvm"
    };
    let mut req = signed(service, action, &body);
    // `signed` sends CVM's version; X-TC-Version is not signed (TC3 signs content-type and host).
    for h in req.headers.iter_mut().filter(|(k, _)| k == "x-tc-version") {
        h.1 = super::api::version(service).into();
    }
    assert!(emu.claims(&req));
    emu.tick(ctx);
    let resp = emu.handle(&req, ctx);
    assert_eq!(resp.status, 200, "Tencent answers errors with HTTP 200 too");
    let v = resp.json_body();
    assert!(v["Response"]["RequestId"].is_string());
    v["Response"].clone()
}

fn code(v: &Value) -> &str {
    v["Error"]["Code"].as_str().unwrap_or("")
}

fn run(extra: Value) -> Value {
    let mut body = json!({"Placement": {"Zone": ZONE}, "InstanceType": TYPE, "ImageId": "img-487zeit5"});
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

fn states(emu: &Tencent, ctx: &SimCtx) -> Vec<String> {
    let r = call(emu, ctx, "DescribeInstancesStatus", json!({}));
    r["InstanceStatusSet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["InstanceState"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn instances_boot_run_terminate_and_leave_with_their_disks() {
    let (emu, ctx) = setup(Knobs { boot_seconds: 10, ..Knobs::default() });
    let r =
        call(&emu, &ctx, "RunInstances", run(json!({"InstanceCount": 2, "DataDisks": [{"DiskSize": 100}]})));
    let ids: Vec<String> = serde_json::from_value(r["InstanceIdSet"].clone()).unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(states(&emu, &ctx), ["PENDING", "PENDING"]);
    assert_eq!(
        Emulator::state(&emu, &ctx)["disks"].as_array().unwrap().len(),
        4,
        "a system and a data disk each"
    );
    ctx.clock().advance(SignedDuration::from_secs(10));
    assert_eq!(states(&emu, &ctx), ["RUNNING", "RUNNING"]);
    let r = call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [ids[0]]}));
    assert_eq!(code(&r), "");
    assert_eq!(states(&emu, &ctx), ["TERMINATING", "RUNNING"]);
    assert_eq!(
        code(&call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [ids[0]]}))),
        "UnsupportedOperation.InstanceStateTerminating"
    );
    ctx.clock().advance(SignedDuration::from_secs(10));
    assert_eq!(states(&emu, &ctx), ["RUNNING"]);
    assert_eq!(
        Emulator::state(&emu, &ctx)["disks"].as_array().unwrap().len(),
        2,
        "the terminated instance's disks are gone"
    );
}

#[test]
fn prepaid_instances_go_to_the_recycle_bin() {
    let (emu, ctx) = setup(Knobs::default());
    let r = call(
        &emu,
        &ctx,
        "RunInstances",
        run(json!({"InstanceChargeType": "PREPAID", "InstanceChargePrepaid": {"Period": 1}})),
    );
    let id = r["InstanceIdSet"][0].clone();
    call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [id]}));
    ctx.clock().advance(SignedDuration::from_hours(1));
    assert_eq!(states(&emu, &ctx), ["SHUTDOWN"]);
}

#[test]
fn client_token_replays_and_refuses_other_parameters() {
    let (emu, ctx) = setup(Knobs::default());
    let first = call(&emu, &ctx, "RunInstances", run(json!({"ClientToken": "tok-1", "InstanceCount": 2})));
    let again = call(&emu, &ctx, "RunInstances", run(json!({"ClientToken": "tok-1", "InstanceCount": 2})));
    assert_eq!(first["InstanceIdSet"], again["InstanceIdSet"]);
    assert_eq!(
        Emulator::state(&emu, &ctx)["instances"].as_array().unwrap().len(),
        2,
        "a replay creates nothing"
    );
    let other = call(&emu, &ctx, "RunInstances", run(json!({"ClientToken": "tok-1", "InstanceCount": 1})));
    assert_eq!(code(&other), "InvalidParameter.InvalidClientToken");
    let long = call(&emu, &ctx, "RunInstances", run(json!({"ClientToken": "x".repeat(65)})));
    assert_eq!(code(&long), "InvalidClientToken.TooLong");
    // A DryRun with the same token is judged on the same parameters and creates nothing.
    let dry = call(&emu, &ctx, "RunInstances", run(json!({"ClientToken": "tok-2", "DryRun": true})));
    assert_eq!(code(&dry), "DryRunOperation");
    assert_eq!(Emulator::state(&emu, &ctx)["instances"].as_array().unwrap().len(), 2);
}

#[test]
fn action_timer_releases_on_the_sim_clock() {
    let (emu, ctx) = setup(Knobs::default());
    let at = ctx
        .now()
        .checked_add(SignedDuration::from_hours(2))
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    call(
        &emu,
        &ctx,
        "RunInstances",
        run(json!({"ActionTimer": {"TimerAction": "TerminateInstances", "ActionTime": at}})),
    );
    let soon = ctx
        .now()
        .checked_add(SignedDuration::from_mins(2))
        .unwrap()
        .strftime("%Y-%m-%dT%H:%M:%SZ")
        .to_string();
    let r = call(
        &emu,
        &ctx,
        "RunInstances",
        run(json!({"ActionTimer": {"TimerAction": "TerminateInstances", "ActionTime": soon}})),
    );
    assert_eq!(code(&r), "InvalidParameterValue", "less than 5 minutes ahead is refused");
    ctx.clock().advance(SignedDuration::from_mins(119));
    assert_eq!(states(&emu, &ctx), ["RUNNING"]);
    ctx.clock().advance(SignedDuration::from_secs(61));
    assert_eq!(states(&emu, &ctx), ["TERMINATING"]);
    ctx.clock().advance(SignedDuration::from_mins(1));
    assert!(states(&emu, &ctx).is_empty());
}

#[test]
fn stock_outs_refuse_creates_and_show_in_zone_configs() {
    let knobs = Knobs {
        stock_outs: vec![StockOut {
            provider: Some(gpuctl_simkit::Provider::Tencent),
            instance_type: Some(TYPE.into()),
            zone: Some(ZONE.into()),
            available: None,
        }],
        ..Knobs::default()
    };
    let (emu, ctx) = setup(knobs);
    assert_eq!(
        code(&call(&emu, &ctx, "RunInstances", run(json!({})))),
        "ResourceInsufficient.ZoneSoldOutForSpecifiedInstance"
    );
    assert_eq!(
        code(&call(&emu, &ctx, "RunInstances", run(json!({"DryRun": true})))),
        "ResourceInsufficient.ZoneSoldOutForSpecifiedInstance"
    );
    let mut other_zone = run(json!({}));
    other_zone["Placement"]["Zone"] = json!("ap-guangzhou-4");
    assert_eq!(code(&call(&emu, &ctx, "RunInstances", other_zone)), "");
    let r = call(
        &emu,
        &ctx,
        "DescribeZoneInstanceConfigInfos",
        json!({"Filters": [{"Name": "instance-charge-type", "Values": ["POSTPAID_BY_HOUR"]}]}),
    );
    let by_zone: Vec<(String, String)> = r["InstanceTypeQuotaSet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| (i["Zone"].as_str().unwrap().into(), i["Status"].as_str().unwrap().into()))
        .collect();
    assert_eq!(
        by_zone,
        [(ZONE.to_string(), "SOLD_OUT".to_string()), ("ap-guangzhou-4".into(), "SELL".into())]
    );
}

#[test]
fn prices_come_from_the_offer() {
    let (emu, ctx) = setup(Knobs::default());
    let check = |extra: Value, path: &str, expected: f64| {
        let r = call(&emu, &ctx, "InquiryPriceRunInstances", run(extra.clone()));
        let got = r["Price"]["InstancePrice"][path].as_f64().unwrap_or(f64::NAN);
        assert!((got - expected).abs() < 1e-9, "{extra}: {path} = {got}, want {expected}");
    };
    check(json!({}), "UnitPrice", 8.68);
    check(json!({"InstanceCount": 3}), "UnitPrice", 26.04);
    // A spot quote must carry a bid (api.json objects.SpotMarketOptions.MaxPrice); one above the spot
    // price is quoted at the spot price.
    check(
        json!({"InstanceChargeType": "SPOTPAID", "InstanceMarketOptions": {"SpotOptions": {"MaxPrice": "8.68"}}}),
        "UnitPrice",
        2.1,
    );
    check(
        json!({"InstanceChargeType": "PREPAID", "InstanceChargePrepaid": {"Period": 2}}),
        "DiscountPrice",
        6400.0,
    );
    check(
        json!({"InstanceChargeType": "PREPAID", "InstanceChargePrepaid": {"Period": 12}}),
        "DiscountPrice",
        30000.0,
    );
    let low = call(
        &emu,
        &ctx,
        "RunInstances",
        run(
            json!({"InstanceChargeType": "SPOTPAID", "InstanceMarketOptions": {"MarketType": "spot", "SpotOptions": {"MaxPrice": "1.0"}}}),
        ),
    );
    assert_eq!(code(&low), "InvalidParameterValue.InsufficientPrice");
}

#[test]
fn automatic_snapshot_policies_fire_and_retain() {
    let (emu, ctx) = setup(Knobs::default());
    call(&emu, &ctx, "RunInstances", run(json!({})));
    let disk = Emulator::state(&emu, &ctx)["disks"][0]["DiskId"].clone();
    let p = call(
        &emu,
        &ctx,
        "CreateAutoSnapshotPolicy",
        json!({"Policy": [{"DayOfWeek": [0,1,2,3,4,5,6], "Hour": [1]}], "RetentionDays": 3}),
    );
    let pid = p["AutoSnapshotPolicyId"].clone();
    assert_eq!(
        code(&call(
            &emu,
            &ctx,
            "BindAutoSnapshotPolicy",
            json!({"AutoSnapshotPolicyId": pid, "DiskIds": [disk]})
        )),
        ""
    );
    ctx.clock().advance(SignedDuration::from_hours(24 * 10));
    let snaps =
        call(&emu, &ctx, "DescribeSnapshots", json!({"Filters": [{"Name": "disk-id", "Values": [disk]}]}));
    let n = snaps["TotalCount"].as_u64().unwrap();
    assert!((3..=4).contains(&n), "daily snapshots kept for 3 days, got {n}");
    assert_eq!(
        code(&call(
            &emu,
            &ctx,
            "BindAutoSnapshotPolicy",
            json!({"AutoSnapshotPolicyId": "asp-zzzzzzzz", "DiskIds": [disk]})
        )),
        "InvalidAutoSnapshotPolicyId.NotFound"
    );
}

#[test]
fn auth_and_routing_errors() {
    let (emu, ctx) = setup(Knobs::default());
    let mut req = signed("cvm", "DescribeInstances", &json!({}));
    req.body = b"{\"Limit\":5}".to_vec().into(); // tampered after signing
    assert_eq!(code(&emu.handle(&req, &ctx).json_body()["Response"]), "AuthFailure.SignatureFailure");
    // A CBS action under a cvm scope: the real cloud checks the scope's service against the host
    // (cvm./cbs.tencentcloudapi.com), so it fails the signature; an action of neither is unknown.
    assert_eq!(code(&call_raw(&emu, &ctx, "cvm", "DescribeDisks")), "AuthFailure.SignatureFailure");
    assert_eq!(code(&call_raw(&emu, &ctx, "cvm", "DescribeNothing")), "InvalidAction");
    let alibaba = SimRequest::new("POST", "/?Action=DescribeInstances");
    assert!(!emu.claims(&alibaba));
}

fn call_raw(emu: &Tencent, ctx: &SimCtx, service: &str, action: &str) -> Value {
    let mut req = signed(service, action, &json!({}));
    // `signed` sets X-TC-Action from the params' action.
    for h in req.headers.iter_mut().filter(|(k, _)| k == "x-tc-action") {
        h.1 = action.into();
    }
    emu.handle(&req, ctx).json_body()["Response"].clone()
}

#[test]
fn create_image_from_an_instance_snapshots_its_disks() {
    let (emu, ctx) = setup(Knobs::default());
    let r = call(&emu, &ctx, "RunInstances", run(json!({"DataDisks": [{"DiskSize": 100}]})));
    let id = r["InstanceIdSet"][0].clone();
    let data = Emulator::state(&emu, &ctx)["instances"][0]["DataDiskIds"][0].clone();
    let img =
        call(&emu, &ctx, "CreateImage", json!({"InstanceId": id, "ImageName": "env", "DataDiskIds": [data]}));
    let image_id = img["ImageId"].as_str().unwrap().to_string();
    let snaps = call(&emu, &ctx, "DescribeSnapshots", json!({}));
    assert_eq!(snaps["TotalCount"], 2, "system + data disk snapshots back the image");
    assert!(snaps["SnapshotSet"].as_array().unwrap().iter().all(|s| s["Images"][0]["ImageId"] == image_id));
    let images = call(&emu, &ctx, "DescribeImages", json!({"ImageIds": [image_id]}));
    assert_eq!(images["ImageSet"][0]["SnapshotSet"].as_array().unwrap().len(), 2);
    let bad = call(
        &emu,
        &ctx,
        "CreateImage",
        json!({"InstanceId": id, "ImageName": "x", "DataDiskIds": ["disk-zzzzzzzz"]}),
    );
    assert_eq!(code(&bad), "InvalidParameterValue");
}

#[test]
fn describe_by_tag_key_matches_any_value_and_pages() {
    let (emu, ctx) = setup(Knobs::default());
    let tagged = |k: &str, v: &str| {
        run(json!({"TagSpecification": [{"ResourceType": "instance", "Tags": [{"Key": k, "Value": v}]}]}))
    };
    for body in [
        tagged("gpuctl-deployment", "a"),
        tagged("gpuctl-deployment", "b"),
        tagged("team", "gpuctl-deployment"),
        run(json!({})),
    ] {
        assert_eq!(code(&call(&emu, &ctx, "RunInstances", body)), "");
    }
    let by_key = |extra: Value| {
        let mut body = json!({"Filters": [{"Name": "tag-key", "Values": ["gpuctl-deployment"]}]});
        for (k, v) in extra.as_object().unwrap() {
            body[k] = v.clone();
        }
        call(&emu, &ctx, "DescribeInstances", body)
    };
    let all = by_key(json!({}));
    assert_eq!(
        all["TotalCount"], 2,
        "the key with any value; a value equal to the key does not count: {all}"
    );
    let values: Vec<&str> = all["InstanceSet"]
        .as_array()
        .unwrap()
        .iter()
        .map(|i| i["Tags"][0]["Value"].as_str().unwrap())
        .collect();
    assert_eq!(values, ["a", "b"]);
    let page = by_key(json!({"Offset": 1, "Limit": 1}));
    assert_eq!((page["TotalCount"].as_u64(), page["InstanceSet"].as_array().unwrap().len()), (Some(2), 1));
    assert_eq!(page["InstanceSet"][0]["Tags"][0]["Value"], "b");
    // Filters are ANDed: tag-key and tag:<key> together narrow to one.
    let both = call(
        &emu,
        &ctx,
        "DescribeInstances",
        json!({"Filters": [{"Name": "tag-key", "Values": ["gpuctl-deployment"]}, {"Name": "tag:gpuctl-deployment", "Values": ["b"]}]}),
    );
    assert_eq!(both["TotalCount"], 1);
}

/// Issue 12: the emulator refuses what tccli's definitions forbid, before the operation runs, in
/// Tencent's common codes; an unsigned request still gets the auth error first.
#[test]
fn requests_that_break_the_definition_are_refused_with_tencents_codes() {
    let (emu, ctx) = setup(Knobs::default());
    let cases = [
        ("RunInstances", run(json!({"Bogus": 1})), "UnknownParameter"),
        ("RunInstances", run(json!({"Placement": {"Zone": ZONE, "Bogus": 1}})), "UnknownParameter"),
        ("TerminateInstances", json!({}), "MissingParameter"),
        (
            "RunInstances",
            run(json!({"InstanceChargeType": "SPOTPAID", "InstanceMarketOptions": {"SpotOptions": {}}})),
            "MissingParameter",
        ),
        ("RunInstances", run(json!({"InstanceChargeType": "PREPAID"})), "MissingParameter"),
        ("RunInstances", run(json!({"InstanceCount": "1"})), "InvalidParameter"),
        ("RunInstances", run(json!({"InstanceChargeType": "MONTHLY"})), "InvalidParameterValue"),
        (
            "InquiryPriceRunInstances",
            run(json!({"InstanceChargeType": "PREPAID", "InstanceChargePrepaid": {"Period": 13}})),
            "InvalidParameterValue",
        ),
    ];
    for (action, body, want) in cases {
        let r = call(&emu, &ctx, action, body.clone());
        assert_eq!(code(&r), want, "{action} {body}: {r}");
    }
    // Nothing ran: the refused creates left no instance.
    assert!(states(&emu, &ctx).is_empty());
    // Auth comes first: an unsigned request with an unknown parameter is an auth failure.
    let mut req = signed("cvm", "RunInstances", &run(json!({"Bogus": 1})));
    req.headers.retain(|(k, _)| k != "authorization");
    assert!(code(&emu.handle(&req, &ctx).json_body()["Response"]).starts_with("AuthFailure"));
}

#[test]
fn flattened_requests_are_held_to_the_definition_too() {
    // The form/GET style's pairs, as `params` hands them to the validator (0-based indices).
    let refusal = |q: &str| {
        let pairs = gpuctl_simkit::params::form_decode(q);
        super::SCHEMA
            .refusal("DescribeInstances", gpuctl_simkit::validate::Input::Flat { pairs: &pairs, base: 0 })
            .map(|v| super::error::violation("DescribeInstances", &v).code)
    };
    assert_eq!(refusal("Limit=5&Filters.0.Name=zone&Filters.0.Values.0=x"), None);
    assert_eq!(refusal("Limit=five"), Some("InvalidParameter"));
    assert_eq!(refusal("Limitt=5"), Some("UnknownParameter"));
    assert_eq!(refusal("Limit=500"), Some("InvalidParameterValue.Range"));
    assert_eq!(refusal("Filters.x.Name=zone"), Some("InvalidParameter"));
    let (emu, ctx) = setup(Knobs::default());
    let r = call(&emu, &ctx, "DescribeInstances", json!({"Limit": 101}));
    assert_eq!(code(&r), "InvalidParameterValue.Range", "{r}");
    let r = call(
        &emu,
        &ctx,
        "RunInstances",
        run(json!({"ActionTimer": {"TimerAction": "TerminateInstances",
        "ActionTime": "2026-12-01 10:00:00"}})),
    );
    assert_eq!(code(&r), "InvalidParameterValue.InvalidTimeFormat", "{r}");
}

#[test]
fn every_action_served_has_a_definition() {
    let all = [
        super::api::CVM_ACTIONS,
        super::api::CBS_ACTIONS,
        super::api::VPC_ACTIONS,
        super::api::CFS_ACTIONS,
        super::api::MONITOR_ACTIONS,
        super::api::BILLING_ACTIONS,
    ];
    for a in all.into_iter().flatten() {
        assert!(super::SCHEMA.has(a), "{a} is served but not in contract/schema/tencent.json");
    }
}

// `ssh-keygen -t rsa -b 2048` and `-t ed25519` public halves (the private halves were deleted).
const RSA_PUB: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDyUSzFRX6BlPCXVwGlPJ2aq4JIrBHpWO6v/+qdK5Mt4W4BqBF/GJjht1oz0d2eLH/oAonZsIA9xLlS8mDO167cWL0xevJP/LlhUlNNvf4SfPOa0Ml8vK3v9LT26xDHlvmbVx3fCuKCyr6dIN5rrK0AEn0sa6GP58rwYHIZV9DDwH2ZOTVBgu2IV8tcHN7MGz7YP8NKJNPYFG4Q07aarKCUU89mo/X5cZv+bwXMXqyZhOVeqloJqLwbKMInrVIqIKYwc5bo4y52RpA89mM1IRC6XyEb79S9wB5ogirgLvT662REkhOVn0dZnTLEJepDAga83XLbjtgYkh+ymt51HKaV me@laptop";
const ED_PUB: &str =
    "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop";

#[test]
fn key_pairs_import_once_list_by_name_and_gate_run_instances() {
    let (emu, ctx) = setup(Knobs::default());
    let import = |name: &str, key: &str| {
        call(&emu, &ctx, "ImportKeyPair", json!({"KeyName": name, "ProjectId": 0, "PublicKey": key}))
    };
    let r = import("gpuctl_0123456789abcdef", RSA_PUB);
    let id = r["KeyId"].as_str().unwrap().to_string();
    assert!(id.starts_with("skey-") && id.len() == 13, "{r}");
    // The same name again, the same key under another name, and what is not an OpenSSH RSA key.
    assert_eq!(code(&import("gpuctl_0123456789abcdef", ED_PUB)), "InvalidKeyPairName.Duplicate");
    assert_eq!(code(&import("other", RSA_PUB)), "InvalidPublicKey.Duplicate");
    assert_eq!(code(&import("ed", ED_PUB)), "InvalidPublicKey.Malformed");
    assert_eq!(code(&import("junk", "ssh-rsa !!")), "InvalidPublicKey.Malformed");
    assert_eq!(code(&import("a-b", RSA_PUB)), "InvalidKeyPairNameIncludeIllegalChar");
    assert_eq!(code(&import(&"k".repeat(26), RSA_PUB)), "InvalidKeyPairNameTooLong");
    let r = call(&emu, &ctx, "ImportKeyPair", json!({"KeyName": "p", "ProjectId": 7, "PublicKey": RSA_PUB}));
    assert_eq!(code(&r), "InvalidProjectId.NotFound");

    let by_name = |name: &str| {
        call(&emu, &ctx, "DescribeKeyPairs", json!({"Filters": [{"Name": "key-name", "Values": [name]}]}))
    };
    let r = by_name("gpuctl_0123456789abcdef");
    assert_eq!(r["TotalCount"], 1, "{r}");
    assert_eq!(r["KeyPairSet"][0]["KeyId"], id.as_str());
    // The comment stays with the user; only the key is kept.
    assert_eq!(r["KeyPairSet"][0]["PublicKey"], RSA_PUB.trim_end_matches(" me@laptop"));
    assert_eq!(by_name("nobody")["TotalCount"], 0);
    let r = call(
        &emu,
        &ctx,
        "DescribeKeyPairs",
        json!({"KeyIds": [id], "Filters": [{"Name": "key-name", "Values": ["x"]}]}),
    );
    assert_eq!(code(&r), "InvalidParameter");

    // RunInstances takes only the region's key ids, and the instance carries them.
    let r = call(&emu, &ctx, "RunInstances", run(json!({"LoginSettings": {"KeyIds": ["skey-00000000"]}})));
    assert_eq!(code(&r), "InvalidKeyPairId.NotFound", "{r}");
    let r = call(&emu, &ctx, "RunInstances", run(json!({"LoginSettings": {"KeyIds": ["nokey"]}})));
    assert_eq!(code(&r), "InvalidKeyPairId.Malformed", "{r}");
    let r = call(&emu, &ctx, "RunInstances", run(json!({"LoginSettings": {"KeyIds": [id]}})));
    let ins = r["InstanceIdSet"][0].as_str().unwrap().to_string();
    let r = call(&emu, &ctx, "DescribeInstances", json!({"InstanceIds": [ins]}));
    assert_eq!(r["InstanceSet"][0]["LoginSettings"]["KeyIds"], json!([id]));
    assert_eq!(by_name("gpuctl_0123456789abcdef")["KeyPairSet"][0]["AssociatedInstanceIds"], json!([ins]));
}

/// The public IPs `/_sim/state` lists as held.
fn public_ips(emu: &Tencent, ctx: &SimCtx) -> Vec<String> {
    Emulator::state(emu, ctx)["public_ips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["PublicIpAddress"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_public_ip_is_assigned_shown_and_released_with_its_instance() {
    let (emu, ctx) = setup(Knobs { boot_seconds: 10, ..Knobs::default() });
    let internet = json!({"InternetAccessible": {"InternetChargeType": "TRAFFIC_POSTPAID_BY_HOUR", "InternetMaxBandwidthOut": 10, "PublicIpAssigned": true}});
    let mut body = run(internet);
    body["InstanceCount"] = json!(2);
    let r = call(&emu, &ctx, "RunInstances", body);
    let ids: Vec<String> = serde_json::from_value(r["InstanceIdSet"].clone()).unwrap();
    // One without: no bandwidth, no address.
    call(&emu, &ctx, "RunInstances", run(json!({})));
    let held = public_ips(&emu, &ctx);
    assert_eq!(held, ["203.0.113.1", "203.0.113.2"], "unique, from a documentation range");
    let d = call(&emu, &ctx, "DescribeInstances", json!({}));
    let set = d["InstanceSet"].as_array().unwrap();
    let addr: Vec<&Value> = set.iter().map(|i| &i["PublicIpAddresses"]).collect();
    assert_eq!(addr, [&json!(["203.0.113.1"]), &json!(["203.0.113.2"]), &Value::Null]);
    assert_eq!(set[0]["InternetAccessible"]["InternetMaxBandwidthOut"], 10);
    assert_eq!(set[0]["InternetAccessible"]["InternetChargeType"], "TRAFFIC_POSTPAID_BY_HOUR");
    // CVM's public IP is the instance's: it goes when termination starts.
    call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [ids[0]]}));
    assert_eq!(public_ips(&emu, &ctx), ["203.0.113.2"]);
    call(&emu, &ctx, "TerminateInstances", json!({"InstanceIds": [ids[1]]}));
    assert!(public_ips(&emu, &ctx).is_empty());
}

#[test]
fn public_ip_parameters_the_definition_forbids_are_refused() {
    let (emu, ctx) = setup(Knobs::default());
    let with = |ia: Value| run(json!({ "InternetAccessible": ia }));
    let cases = [
        // tccli objects.InternetAccessible.InternetChargeType: four values (rules.json).
        (
            with(json!({"InternetChargeType": "BY_TRAFFIC", "InternetMaxBandwidthOut": 10})),
            "InvalidParameterValue",
        ),
        // "当公网带宽为0，则不允许分配公网IP".
        (
            with(json!({"InternetMaxBandwidthOut": 0, "PublicIpAssigned": true})),
            "InvalidParameterCombination",
        ),
        (with(json!({"InternetMaxBandwidthOut": -1})), "InvalidParameterValue"),
        (with(json!({"InternetMaxBandwidthOut": "10"})), "InvalidParameter"),
        (with(json!({"Bogus": 1})), "UnknownParameter"),
    ];
    for (body, want) in cases {
        let r = call(&emu, &ctx, "RunInstances", body.clone());
        assert_eq!(code(&r), want, "{body}: {r}");
    }
    assert!(states(&emu, &ctx).is_empty() && public_ips(&emu, &ctx).is_empty());
    // Bandwidth without PublicIpAssigned: assigned by default ("默认开通公网IP"); `false` opts out.
    call(&emu, &ctx, "RunInstances", with(json!({"InternetMaxBandwidthOut": 5})));
    call(&emu, &ctx, "RunInstances", with(json!({"InternetMaxBandwidthOut": 5, "PublicIpAssigned": false})));
    assert_eq!(public_ips(&emu, &ctx).len(), 1);
    assert_eq!(
        Emulator::state(&emu, &ctx)["public_ips"][0]["InternetChargeType"],
        "BANDWIDTH_POSTPAID_BY_HOUR"
    );
}

#[test]
fn user_data_is_kept_base64_and_refused_when_not() {
    let (emu, ctx) = setup(Knobs::default());
    // tccli 3.1.189.1 cvm api.json RunInstancesRequest.UserData: base64, at most 16 KB.
    let b64 = "I2Nsb3VkLWNvbmZpZwo="; // "#cloud-config\n"
    let v = call(&emu, &ctx, "RunInstances", run(json!({"UserData": b64})));
    assert!(v["InstanceIdSet"][0].is_string(), "{v}");
    assert_eq!(Emulator::state(&emu, &ctx)["instances"][0]["UserData"], json!(b64));
    let v = call(&emu, &ctx, "RunInstances", run(json!({"UserData": "#cloud-config"})));
    assert_eq!(code(&v), "InvalidParameterValue", "{v}");
    let v = call(&emu, &ctx, "RunInstances", run(json!({"UserData": "A".repeat(16 * 1024 + 4)})));
    assert_eq!(code(&v), "InvalidParameterValue", "{v}");
    assert_eq!(
        Emulator::state(&emu, &ctx)["instances"].as_array().map(Vec::len),
        Some(1),
        "refused creates make nothing"
    );
}

#[test]
fn the_admin_api_points_a_public_ip_elsewhere_and_describe_follows() {
    let (emu, ctx) = setup(Knobs { boot_seconds: 10, ..Knobs::default() });
    let internet = json!({"InternetAccessible": {"InternetChargeType": "TRAFFIC_POSTPAID_BY_HOUR", "InternetMaxBandwidthOut": 10, "PublicIpAssigned": true}});
    let r = call(&emu, &ctx, "RunInstances", run(internet));
    let id: Vec<String> = serde_json::from_value(r["InstanceIdSet"].clone()).unwrap();
    let r = call(&emu, &ctx, "RunInstances", run(json!({})));
    let plain: Vec<String> = serde_json::from_value(r["InstanceIdSet"].clone()).unwrap();
    assert_eq!(Emulator::point_public_address(&emu, &id[0], "127.0.0.1"), Ok(true));
    assert!(Emulator::point_public_address(&emu, &plain[0], "127.0.0.1").is_err(), "no public IP to point");
    assert_eq!(Emulator::point_public_address(&emu, "ins-none", "127.0.0.1"), Ok(false));
    let d = call(&emu, &ctx, "DescribeInstances", json!({"InstanceIds": [id[0]]}));
    assert_eq!(d["InstanceSet"][0]["PublicIpAddresses"], json!(["127.0.0.1"]));
    // The documentation address it held is free again.
    let r = call(
        &emu,
        &ctx,
        "RunInstances",
        run(
            json!({"InternetAccessible": {"InternetChargeType": "TRAFFIC_POSTPAID_BY_HOUR", "InternetMaxBandwidthOut": 10, "PublicIpAssigned": true}}),
        ),
    );
    let again: Vec<String> = serde_json::from_value(r["InstanceIdSet"].clone()).unwrap();
    let d = call(&emu, &ctx, "DescribeInstances", json!({"InstanceIds": [again[0]]}));
    assert_eq!(d["InstanceSet"][0]["PublicIpAddresses"], json!(["203.0.113.1"]));
}

#[test]
fn public_images_are_listed_with_their_filters_and_paging() {
    let (emu, ctx) = setup(Knobs::default());
    let public = json!([{ "Name": "image-type", "Values": ["PUBLIC_IMAGE"] }]);
    let listed = gpuctl_simkit::images::TENCENT.len();
    let first = call(&emu, &ctx, "DescribeImages", json!({ "Filters": public, "Limit": 3 }));
    let r = &first;
    assert_eq!(r["TotalCount"].as_u64(), Some(listed as u64), "{r}");
    let set = r["ImageSet"].as_array().unwrap();
    assert_eq!(set.len(), 3);
    assert!(set.iter().all(|i| i["ImageType"] == "PUBLIC_IMAGE" && i["ImageSource"] == "OFFICIAL"), "{r}");
    let next = call(&emu, &ctx, "DescribeImages", json!({ "Filters": public, "Offset": 3, "Limit": 100 }));
    let rest = next["ImageSet"].as_array().unwrap().clone();
    assert_eq!(rest.len(), listed - 3);
    assert!(rest.iter().all(|i| !set.iter().any(|s| s["ImageId"] == i["ImageId"])), "pages do not overlap");
    let count = |filters: Value| {
        call(&emu, &ctx, "DescribeImages", json!({ "Filters": filters }))["TotalCount"].as_u64()
    };
    // platform and image-name match fuzzily, case aside ("支持模糊匹配" / "支持模糊查询").
    assert_eq!(count(json!([{ "Name": "platform", "Values": ["tencentos"] }])), Some(1));
    assert_eq!(count(json!([{ "Name": "image-name", "Values": ["GPU Driver"] }])), Some(2));
    assert_eq!(
        count(json!([{ "Name": "image-type", "Values": ["PRIVATE_IMAGE"] }])),
        Some(0),
        "no custom image yet"
    );
    let both = call(&emu, &ctx, "DescribeImages", json!({ "ImageIds": ["img-487zeit5"], "Filters": public }));
    assert_eq!(both["Error"]["Code"], "InvalidParameter", "{both}");
    let one = call(&emu, &ctx, "DescribeImages", json!({ "ImageIds": ["img-487zeit5"] }));
    assert_eq!(one["ImageSet"][0]["ImageName"], "Ubuntu Server 22.04 LTS 64bit", "{one}");
}

#[test]
fn run_instances_refuses_an_image_the_region_does_not_have() {
    let (emu, ctx) = setup(Knobs::default());
    let r = call(&emu, &ctx, "RunInstances", run(json!({ "ImageId": "img-zzzzzzzz" })));
    assert_eq!(code(&r), "InvalidImageId.NotFound", "{r}");
    let r = call(&emu, &ctx, "RunInstances", run(json!({})));
    assert_eq!(code(&r), "", "a public image boots: {r}");
}

fn empty_account() -> (Tencent, SimCtx) {
    setup(Knobs {
        no_default_network: vec![gpuctl_simkit::ZoneRule { provider: None, zone: None }],
        ..Knobs::default()
    })
}

/// Creates a VPC, a subnet in ZONE and a group; answers their ids.
fn network(emu: &Tencent, ctx: &SimCtx) -> (String, String, String) {
    let tags = json!([{ "Key": "gpuctl-network", "Value": ZONE }]);
    let v = call(emu, ctx, "CreateVpc", json!({ "VpcName": "n", "CidrBlock": "10.0.0.0/16", "Tags": tags }));
    let vpc = v["Vpc"]["VpcId"].as_str().expect("vpc id").to_string();
    let v = call(
        emu,
        ctx,
        "CreateSubnet",
        json!({ "VpcId": vpc, "SubnetName": "n", "CidrBlock": "10.0.0.0/24", "Zone": ZONE, "Tags": tags }),
    );
    let subnet = v["Subnet"]["SubnetId"].as_str().expect("subnet id").to_string();
    let v = call(
        emu,
        ctx,
        "CreateSecurityGroup",
        json!({ "GroupName": "n", "GroupDescription": "d", "Tags": tags }),
    );
    let sg = v["SecurityGroup"]["SecurityGroupId"].as_str().expect("sg id").to_string();
    (vpc, subnet, sg)
}

#[test]
fn an_empty_account_launches_only_into_networks_it_made() {
    let (emu, ctx) = empty_account();
    assert_eq!(
        code(&call(&emu, &ctx, "RunInstances", run(json!({})))),
        "InvalidParameterValue.VpcIdNotExist"
    );
    let (vpc, subnet, sg) = network(&emu, &ctx);
    let net = |vpc: &str, subnet: &str| {
        run(json!({ "VirtualPrivateCloud": { "VpcId": vpc, "SubnetId": subnet }, "SecurityGroupIds": [sg] }))
    };
    assert_eq!(
        code(&call(&emu, &ctx, "RunInstances", net("vpc-nothere1", &subnet))),
        "InvalidParameterValue.VpcIdNotExist"
    );
    assert_eq!(
        code(&call(&emu, &ctx, "RunInstances", net(&vpc, "subnet-nothere"))),
        "InvalidParameterValue.SubnetNotExist"
    );
    let other = call(
        &emu,
        &ctx,
        "CreateSubnet",
        json!({ "VpcId": vpc, "SubnetName": "o", "CidrBlock": "10.0.1.0/24", "Zone": "ap-guangzhou-4" }),
    );
    let other = other["Subnet"]["SubnetId"].as_str().unwrap().to_string();
    assert_eq!(
        code(&call(&emu, &ctx, "RunInstances", net(&vpc, &other))),
        "InvalidParameterValue.SubnetIdZoneIdNotMatch"
    );
    let ok = call(&emu, &ctx, "RunInstances", net(&vpc, &subnet));
    assert!(ok["InstanceIdSet"][0].is_string(), "{ok}");
    // Found again by its tag.
    let found = call(
        &emu,
        &ctx,
        "DescribeSubnets",
        json!({ "Filters": [{ "Name": "tag:gpuctl-network", "Values": [ZONE] }, { "Name": "zone", "Values": [ZONE] }] }),
    );
    assert_eq!(found["TotalCount"], 1, "{found}");
    assert_eq!(found["SubnetSet"][0]["SubnetId"], subnet.as_str());
}

#[test]
fn deletes_are_refused_while_something_still_uses_the_network() {
    let (emu, ctx) = empty_account();
    let (vpc, subnet, sg) = network(&emu, &ctx);
    let ins = call(
        &emu,
        &ctx,
        "RunInstances",
        run(json!({ "VirtualPrivateCloud": { "VpcId": vpc, "SubnetId": subnet }, "SecurityGroupIds": [sg] })),
    );
    let ins = ins["InstanceIdSet"][0].as_str().unwrap().to_string();
    assert_eq!(code(&call(&emu, &ctx, "DeleteVpc", json!({ "VpcId": vpc }))), "ResourceInUse");
    assert_eq!(code(&call(&emu, &ctx, "DeleteSubnet", json!({ "SubnetId": subnet }))), "ResourceInUse");
    assert_eq!(
        code(&call(&emu, &ctx, "DeleteSecurityGroup", json!({ "SecurityGroupId": sg }))),
        "ResourceInUse"
    );
    call(&emu, &ctx, "TerminateInstances", json!({ "InstanceIds": [ins] }));
    ctx.clock().advance(SignedDuration::from_hours(1));
    assert_eq!(code(&call(&emu, &ctx, "DeleteSecurityGroup", json!({ "SecurityGroupId": sg }))), "");
    assert_eq!(code(&call(&emu, &ctx, "DeleteSubnet", json!({ "SubnetId": subnet }))), "");
    assert_eq!(code(&call(&emu, &ctx, "DeleteVpc", json!({ "VpcId": vpc }))), "");
    assert_eq!(code(&call(&emu, &ctx, "DeleteVpc", json!({ "VpcId": vpc }))), "ResourceNotFound");
    let state = Emulator::state(&emu, &ctx);
    assert_eq!(
        (state["vpcs"].as_array().map(Vec::len), state["subnets"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
}

#[test]
fn cidrs_and_policies_are_checked_as_the_definition_says() {
    let (emu, ctx) = empty_account();
    let c = |cidr: &str| {
        code(&call(&emu, &ctx, "CreateVpc", json!({ "VpcName": "n", "CidrBlock": cidr }))).to_string()
    };
    assert_eq!(c("10.0.0.1/16"), "InvalidParameterValue.Malformed");
    assert_eq!(c("not-a-cidr"), "InvalidParameterValue.Malformed");
    assert_eq!(c("8.8.0.0/16"), "InvalidParameterValue.SubnetRange");
    let (vpc, _, sg) = network(&emu, &ctx);
    let s = |cidr: &str| {
        code(&call(
            &emu,
            &ctx,
            "CreateSubnet",
            json!({ "VpcId": vpc, "SubnetName": "x", "CidrBlock": cidr, "Zone": ZONE }),
        ))
        .to_string()
    };
    assert_eq!(s("10.0.0.128/25"), "InvalidParameterValue.SubnetConflict");
    assert_eq!(s("10.1.0.0/24"), "InvalidParameterValue.SubnetRange");
    let pol = |p: Value| {
        code(&call(
            &emu,
            &ctx,
            "CreateSecurityGroupPolicies",
            json!({ "SecurityGroupId": sg, "SecurityGroupPolicySet": { "Ingress": [p] } }),
        ))
        .to_string()
    };
    assert_eq!(
        pol(json!({ "Protocol": "ALL", "Port": "22", "CidrBlock": "0.0.0.0/0", "Action": "ACCEPT" })),
        "InvalidParameterValue.Range"
    );
    assert_eq!(
        pol(json!({ "Protocol": "TCP", "Port": "22", "CidrBlock": "0.0.0.0/0", "Action": "ALLOW" })),
        "InvalidParameterValue.Range"
    );
    assert_eq!(
        pol(json!({ "Protocol": "TCP", "Port": "22", "SecurityGroupId": "sg-nothere", "Action": "ACCEPT" })),
        "InvalidSecurityGroupID.NotFound"
    );
    let ok = json!({ "Protocol": "TCP", "Port": "22", "CidrBlock": "203.0.113.0/24", "Action": "ACCEPT" });
    assert_eq!(pol(ok.clone()), "");
    assert_eq!(pol(ok), "InvalidParameterValue.Duplicate");
    let held = call(&emu, &ctx, "DescribeSecurityGroupPolicies", json!({ "SecurityGroupId": sg }));
    assert_eq!(held["SecurityGroupPolicySet"]["Ingress"][0]["CidrBlock"], "203.0.113.0/24", "{held}");
}

// ------------------------------------------------------------------ issue 14: HPC clusters, CFS

const HCC: &str = "HCCPNV4h.32XLARGE512";

/// The test offer plus an HCC type (monthly only, as the catalog sells them).
fn with_hcc() -> (Tencent, SimCtx) {
    let mut hcc = offer();
    hcc.instance_type = HCC.into();
    hcc.family = "HCCPNV4h".into();
    hcc.prices = Prices { monthly: Some(100_000.0), ..Prices::default() };
    let config =
        SimConfig { seed: 3, knobs: Knobs { boot_seconds: 10, ..Knobs::default() }, ..SimConfig::default() };
    (Tencent::new(), SimCtx::new(config, vec![offer(), hcc]))
}

fn hpc_cluster(emu: &Tencent, ctx: &SimCtx, zone: &str) -> String {
    let r = call(emu, ctx, "CreateHpcCluster", json!({ "Zone": zone, "Name": "dep-train" }));
    r["HpcClusterSet"][0]["HpcClusterId"].as_str().unwrap_or_else(|| panic!("{r}")).to_string()
}

fn run_hcc(extra: Value) -> Value {
    let mut body = run(
        json!({ "InstanceType": HCC, "InstanceChargeType": "PREPAID", "InstanceChargePrepaid": { "Period": 1 } }),
    );
    for (k, v) in extra.as_object().unwrap() {
        body[k] = v.clone();
    }
    body
}

#[test]
fn hpc_clusters_are_made_found_by_name_and_deleted_once_empty() {
    let (emu, ctx) = with_hcc();
    let tags = json!([{ "ResourceType": "hpc", "Tags": [{ "Key": "gpuctl-deployment", "Value": "dep" }] }]);
    let r = call(
        &emu,
        &ctx,
        "CreateHpcCluster",
        json!({ "Zone": ZONE, "Name": "dep-train", "TagSpecification": tags }),
    );
    let id = r["HpcClusterSet"][0]["HpcClusterId"].as_str().unwrap().to_string();
    assert!(id.starts_with("hpc-"), "{r}");
    assert_eq!(r["HpcClusterSet"][0]["HpcClusterType"], "STANDARD");
    let found = call(&emu, &ctx, "DescribeHpcClusters", json!({ "Name": "dep-train", "Zone": ZONE }));
    assert_eq!(
        (found["TotalCount"].as_u64(), found["HpcClusterSet"][0]["HpcClusterId"].as_str()),
        (Some(1), Some(id.as_str()))
    );
    let by_tag = json!({ "Filters": [{ "Name": "tag:gpuctl-deployment", "Values": ["dep"] }] });
    assert_eq!(call(&emu, &ctx, "DescribeHpcClusters", by_tag)["TotalCount"], 1);
    assert_eq!(call(&emu, &ctx, "DescribeHpcClusters", json!({ "Name": "other" }))["TotalCount"], 0);
    // A member holds it: ResourceInUse.HpcCluster until the instance has left (a boot time after the terminate).
    let r = call(&emu, &ctx, "RunInstances", run_hcc(json!({ "HpcClusterId": id })));
    let ins = r["InstanceIdSet"][0].as_str().unwrap_or_else(|| panic!("{r}")).to_string();
    let listed = call(&emu, &ctx, "DescribeHpcClusters", json!({ "HpcClusterIds": [id] }));
    assert_eq!(listed["HpcClusterSet"][0]["InstanceIds"], json!([ins]));
    assert_eq!(
        call(&emu, &ctx, "DescribeInstances", json!({ "InstanceIds": [ins] }))["InstanceSet"][0]
            ["HpcClusterId"],
        id
    );
    let delete = json!({ "HpcClusterIds": [id] });
    assert_eq!(code(&call(&emu, &ctx, "DeleteHpcClusters", delete.clone())), "ResourceInUse.HpcCluster");
    // A terminated PREPAID instance waits in the recycle bin, out of the cluster (see ops/hpc.rs).
    call(&emu, &ctx, "TerminateInstances", json!({ "InstanceIds": [ins] }));
    assert_eq!(code(&call(&emu, &ctx, "DeleteHpcClusters", delete.clone())), "");
    assert_eq!(code(&call(&emu, &ctx, "DeleteHpcClusters", delete)), "ResourceNotFound.HpcCluster");
}

#[test]
fn hpc_cluster_requests_the_definition_forbids_are_refused() {
    let (emu, ctx) = with_hcc();
    let c = |body: Value| code(&call(&emu, &ctx, "CreateHpcCluster", body)).to_string();
    assert_eq!(c(json!({ "Zone": ZONE })), "MissingParameter");
    assert_eq!(c(json!({ "Name": "n" })), "MissingParameter");
    assert_eq!(c(json!({ "Zone": ZONE, "Name": "x".repeat(61) })), "InvalidParameterValue");
    assert_eq!(c(json!({ "Zone": ZONE, "Name": "n", "HpcClusterType": "BIG" })), "InvalidParameterValue");
    assert_eq!(
        c(json!({ "Zone": ZONE, "Name": "n", "HpcClusterBusinessId": "b-1" })),
        "InvalidParameterValue.HpcClusterBusinessIdNotSupported"
    );
    assert_eq!(c(json!({ "Zone": "ap-shanghai-2", "Name": "n" })), "InvalidZone.MismatchRegion");
    assert_eq!(
        code(&call(&emu, &ctx, "DescribeHpcClusters", json!({ "Limit": 101 }))),
        "InvalidParameterValue.Range"
    );
    assert_eq!(code(&call(&emu, &ctx, "DeleteHpcClusters", json!({}))), "MissingParameter");
    assert_eq!(
        code(&call(&emu, &ctx, "DeleteHpcClusters", json!({ "HpcClusterIds": ["hpc-nothere"] }))),
        "ResourceNotFound.HpcCluster"
    );
}

#[test]
fn run_instances_places_only_hcc_types_in_an_hpc_cluster_of_their_zone() {
    let (emu, ctx) = with_hcc();
    let id = hpc_cluster(&emu, &ctx, ZONE);
    let elsewhere = hpc_cluster(&emu, &ctx, "ap-guangzhou-4");
    let r = |body: Value| code(&call(&emu, &ctx, "RunInstances", body)).to_string();
    assert_eq!(r(run_hcc(json!({}))), "InvalidParameterValue.InstanceTypeRequiredHpcCluster");
    assert_eq!(
        r(run(json!({ "HpcClusterId": id }))),
        "InvalidParameterValue.InstanceTypeNotSupportHpcCluster"
    );
    assert_eq!(r(run_hcc(json!({ "HpcClusterId": "hpc-nothere" }))), "ResourceNotFound.HpcCluster");
    assert_eq!(
        r(run_hcc(json!({ "HpcClusterId": elsewhere }))),
        "InvalidParameterValue.HpcClusterIdZoneIdNotMatch"
    );
    assert_eq!(r(run_hcc(json!({ "HpcClusterId": id }))), "");
    assert_eq!(r(run(json!({}))), "", "an ordinary type needs no cluster");
    // A quote is not a launch: the engine prices an HCC type before it makes the cluster.
    let q = call(&emu, &ctx, "InquiryPriceRunInstances", run_hcc(json!({})));
    assert_eq!(code(&q), "", "{q}");
}

fn cfs_body(vpc: &str, subnet: &str, extra: Value) -> Value {
    let mut b = json!({
        "Zone": ZONE, "NetInterface": "VPC", "PGroupId": "pgroupbasic", "Protocol": "NFS", "StorageType": "SD",
        "VpcId": vpc, "SubnetId": subnet, "FsName": "dep-train",
        "ResourceTags": [{ "TagKey": "gpuctl-deployment", "TagValue": "dep" }],
    });
    for (k, v) in extra.as_object().unwrap() {
        b[k] = v.clone();
    }
    b
}

fn fs_states(emu: &Tencent, ctx: &SimCtx, id: &str) -> (String, String) {
    let f = call(emu, ctx, "DescribeCfsFileSystems", json!({ "FileSystemId": id }));
    let m = call(emu, ctx, "DescribeMountTargets", json!({ "FileSystemId": id }));
    let s = |v: &Value| v.as_str().unwrap_or("").to_string();
    (s(&f["FileSystems"][0]["LifeCycleState"]), s(&m["MountTargets"][0]["LifeCycleState"]))
}

#[test]
fn a_file_system_and_its_mount_target_become_available_then_leave_when_deleted() {
    let (emu, ctx) = with_hcc();
    let (vpc, subnet, _) = network(&emu, &ctx);
    let r = call(&emu, &ctx, "CreateCfsFileSystem", cfs_body(&vpc, &subnet, json!({})));
    let id = r["FileSystemId"].as_str().unwrap_or_else(|| panic!("{r}")).to_string();
    assert_eq!(r["LifeCycleState"], "creating");
    assert_eq!(fs_states(&emu, &ctx, &id), ("creating".into(), "creating".into()));
    assert_eq!(
        code(&call(&emu, &ctx, "DeleteCfsFileSystem", json!({ "FileSystemId": id }))),
        "InvalidParameterValue.InvalidFsStatus",
        "not while it is being made"
    );
    ctx.clock().advance(SignedDuration::from_secs(10));
    assert_eq!(fs_states(&emu, &ctx, &id), ("available".into(), "creating".into()));
    ctx.clock().advance(SignedDuration::from_secs(5));
    assert_eq!(fs_states(&emu, &ctx, &id), ("available".into(), "available".into()));
    let m = call(&emu, &ctx, "DescribeMountTargets", json!({ "FileSystemId": id }));
    let ip = m["MountTargets"][0]["IpAddress"].as_str().unwrap_or("");
    assert!(ip.starts_with("10.0.0."), "an address of the subnet: {m}");
    assert_eq!(m["MountTargets"][0]["SubnetId"], subnet.as_str());
    // Found by tag, zone and name, paging 10 at a time by default.
    let by_tag = json!({ "Tags": [{ "TagKey": "gpuctl-deployment", "TagValue": "dep" }], "Filters": [{ "Name": "Zone", "Values": [ZONE] }] });
    let found = call(&emu, &ctx, "DescribeCfsFileSystems", by_tag);
    assert_eq!(
        (found["TotalCount"].as_u64(), found["FileSystems"][0]["FsName"].as_str()),
        (Some(1), Some("dep-train"))
    );
    assert_eq!(code(&call(&emu, &ctx, "DeleteCfsFileSystem", json!({ "FileSystemId": id }))), "");
    assert_eq!(fs_states(&emu, &ctx, &id), ("deleting".into(), "deleting".into()));
    ctx.clock().advance(SignedDuration::from_secs(10));
    assert_eq!(call(&emu, &ctx, "DescribeCfsFileSystems", json!({ "FileSystemId": id }))["TotalCount"], 0);
    for action in ["DescribeMountTargets", "DeleteCfsFileSystem"] {
        assert_eq!(
            code(&call(&emu, &ctx, action, json!({ "FileSystemId": id }))),
            "ResourceNotFound.FileSystemNotFound"
        );
    }
}

#[test]
fn a_client_token_answers_the_same_file_system_for_two_hours() {
    let (emu, ctx) = with_hcc();
    let (vpc, subnet, _) = network(&emu, &ctx);
    let body = cfs_body(&vpc, &subnet, json!({ "ClientToken": "tok-fs" }));
    let first = call(&emu, &ctx, "CreateCfsFileSystem", body.clone());
    let again = call(&emu, &ctx, "CreateCfsFileSystem", body.clone());
    assert_eq!(first["FileSystemId"], again["FileSystemId"]);
    assert_eq!(Emulator::state(&emu, &ctx)["file_systems"].as_array().map(Vec::len), Some(1));
    let other = cfs_body(&vpc, &subnet, json!({ "ClientToken": "tok-fs", "StorageType": "HP" }));
    assert_eq!(
        code(&call(&emu, &ctx, "CreateCfsFileSystem", other)),
        "InvalidParameterValue.InvalidClientToken"
    );
    ctx.clock().advance(SignedDuration::from_hours(2));
    let later = call(&emu, &ctx, "CreateCfsFileSystem", body);
    assert_ne!(later["FileSystemId"], first["FileSystemId"], "the token no longer holds after 2 hours");
    let long = cfs_body(&vpc, &subnet, json!({ "ClientToken": "t".repeat(65) }));
    assert_eq!(
        code(&call(&emu, &ctx, "CreateCfsFileSystem", long)),
        "InvalidParameterValue.ClientTokenLimitExceeded"
    );
}

#[test]
fn file_system_requests_the_definition_forbids_are_refused_with_cfs_codes() {
    let (emu, ctx) = empty_account();
    let (vpc, subnet, _) = network(&emu, &ctx);
    let c = |extra: Value| {
        code(&call(&emu, &ctx, "CreateCfsFileSystem", cfs_body(&vpc, &subnet, extra))).to_string()
    };
    assert_eq!(c(json!({ "StorageType": "XL" })), "InvalidParameterValue.InvalidStorageType");
    assert_eq!(c(json!({ "Protocol": "FTP" })), "InvalidParameterValue.InvalidProtocol");
    assert_eq!(
        c(json!({ "Protocol": "TURBO" })),
        "InvalidParameterValue.InvalidProtocol",
        "TURBO is Turbo types' only"
    );
    assert_eq!(c(json!({ "NetInterface": "BASIC" })), "InvalidParameterValue.InvalidNetInterface");
    assert_eq!(c(json!({ "PGroupId": "default" })), "InvalidParameterValue.InvalidPgroupId");
    assert_eq!(c(json!({ "PGroupId": "pgroup-nothere" })), "ResourceNotFound.PgroupNotFound");
    assert_eq!(c(json!({ "VpcId": "vpc-nothere" })), "InvalidParameterValue.InvalidVpcId");
    assert_eq!(c(json!({ "SubnetId": "subnet-nothere" })), "InvalidParameterValue.InvalidSubnetId");
    assert_eq!(c(json!({ "VpcId": "" })), "InvalidParameterValue.MissingVpcidOrUnvpcid");
    assert_eq!(c(json!({ "SubnetId": "" })), "InvalidParameterValue.MissingSubnetidOrUnsubnetid");
    assert_eq!(c(json!({ "Zone": "ap-shanghai-2" })), "InvalidParameterValue.InvalidZoneId");
    assert_eq!(c(json!({ "FsName": "n".repeat(65) })), "InvalidParameterValue.FsNameLimitExceeded");
    assert_eq!(c(json!({ "MountIP": "192.168.0.9" })), "InvalidParameterValue.InvalidMountTargetIp");
    assert_eq!(
        c(
            json!({ "ResourceTags": [{ "TagKey": "a", "TagValue": "1" }, { "TagKey": "a", "TagValue": "2" }] })
        ),
        "InvalidParameterValue.DuplicatedTagKey"
    );
    assert_eq!(
        c(json!({ "Protocol": "TURBO", "StorageType": "TP", "Capacity": 100 })),
        "InvalidParameterValue.InvalidTurboCapacity"
    );
    assert_eq!(
        code(&call(&emu, &ctx, "CreateCfsFileSystem", json!({ "Zone": ZONE, "NetInterface": "VPC" }))),
        "MissingParameter"
    );
    assert_eq!(code(&call(&emu, &ctx, "DescribeMountTargets", json!({}))), "MissingParameter");
    assert_eq!(
        code(&call(&emu, &ctx, "DescribeCfsFileSystems", json!({ "FileSystemId": "nas-1" }))),
        "InvalidParameterValue.InvalidFileSystemId"
    );
    assert_eq!(
        code(&call(&emu, &ctx, "DeleteCfsFileSystem", json!({ "FileSystemId": "cfs-nothere" }))),
        "ResourceNotFound.FileSystemNotFound"
    );
    assert_eq!(c(json!({})), "", "the same request with its parameters right");
}

#[test]
fn cfs_is_routed_by_its_own_service_and_version() {
    let (emu, ctx) = setup(Knobs::default());
    // Signed for cvm: the scope does not match the CFS action.
    assert_eq!(code(&call_raw(&emu, &ctx, "cvm", "DescribeCfsFileSystems")), "AuthFailure.SignatureFailure");
    // Signed for cfs but with CVM's version.
    let req = signed("cfs", "DescribeCfsFileSystems", &json!({}));
    assert!(emu.claims(&req));
    assert_eq!(code(&emu.handle(&req, &ctx).json_body()["Response"]), "NoSuchVersion");
    assert_eq!(code(&call(&emu, &ctx, "DescribeCfsFileSystems", json!({}))), "");
}

// ------------------------------------------------------- the client against the emulator, over HTTP

/// One HTTP/1.1 request off `stream` as the emulator sees it (lower-case header names, the body by
/// `Content-Length`); `None` when the peer went away.
fn read_request(stream: &std::net::TcpStream) -> Option<SimRequest> {
    use std::io::{BufRead, BufReader, Read};
    let mut reader = BufReader::new(stream);
    let mut first = String::new();
    reader.read_line(&mut first).ok()?;
    let (method, target) = first.split_once(' ')?;
    let target = target.split(' ').next()?;
    let mut req = SimRequest::new(method, target);
    loop {
        let mut line = String::new();
        reader.read_line(&mut line).ok()?;
        match line.trim_end().split_once(':') {
            Some((name, value)) => req = req.with_header(name, value.trim()),
            None => break,
        }
    }
    let length = req.header("content-length").and_then(|n| n.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(req.with_body(body))
}

/// Serves `emu` on a loopback port, one request per connection (`Connection: close`), ticking the
/// state first as the sim's server does; answers the endpoint URL.
fn serve(emu: std::sync::Arc<Tencent>, ctx: std::sync::Arc<SimCtx>) -> String {
    use std::io::Write;
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("bound"));
    std::thread::spawn(move || {
        for mut stream in listener.incoming().flatten() {
            let Some(req) = read_request(&stream) else { continue };
            emu.tick(&ctx);
            let resp = emu.handle(&req, &ctx);
            let head: String = resp.headers.iter().map(|(k, v)| format!("{k}: {v}\r\n")).collect();
            let head = format!(
                "HTTP/1.1 {} -\r\n{head}Content-Length: {}\r\nConnection: close\r\n\r\n",
                resp.status,
                resp.body.len()
            );
            let _ = stream.write_all(head.as_bytes()).and_then(|()| stream.write_all(&resp.body));
        }
    });
    url
}

/// The real client, signing with the sim's Tencent test key, against `url`.
fn tencent_client(url: &str) -> Box<dyn gpuctl_cloud::cloud::Cloud> {
    let (_, ak, sk) = gpuctl_simkit::creds::TEST_KEY_PAIRS
        .iter()
        .find(|(p, _, _)| *p == gpuctl_simkit::Provider::Tencent)
        .copied()
        .expect("a Tencent test key");
    let http = gpuctl_cloud::http::Http::new(std::time::Duration::from_secs(5)).expect("an HTTP client");
    let ep = gpuctl_cloud::http::Endpoint::parse(url).expect("a loopback endpoint");
    Box::new(crate::client::Client::new(gpuctl_sign::Credentials::new(ak, sk), Some(ep), http))
}

fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime").block_on(f)
}

/// Issue 14 through `Cloud`: an HCC type asks for an HPC cluster; the cluster is made, found by name
/// and zone, joined by RunInstances (HpcClusterId), refused while the node is in it, and deleted.
#[test]
fn the_client_makes_finds_joins_and_deletes_an_hpc_cluster() {
    use gpuctl_cloud::cloud::{CreateRequest, ErrorKind, Filter, PlacementKind, PlacementSpec};
    use gpuctl_cloud::{BillingMode, Disk, DiskCategory};
    let (emu, ctx) = with_hcc();
    let (emu, ctx) = (std::sync::Arc::new(emu), std::sync::Arc::new(ctx));
    let cloud = tencent_client(&serve(emu.clone(), ctx.clone()));
    let spec = PlacementSpec {
        kind: PlacementKind::HpcCluster,
        region: "ap-guangzhou".into(),
        zone: ZONE.into(),
        name: "e2e-train".into(),
        tags: [("gpuctl-deployment".to_string(), "e2e".to_string())].into(),
        client_token: "unused".into(),
    };
    let node = |placement: Option<String>, token: &str| CreateRequest {
        client_token: token.into(),
        name: "e2e-train-0".into(),
        region: "ap-guangzhou".into(),
        zone: ZONE.into(),
        instance_type: HCC.into(),
        billing: BillingMode::Monthly,
        term: 1,
        spot_max_price: None,
        image_id: "img-487zeit5".into(),
        system_disk: Disk { category: DiskCategory::Ssd, size_gb: 100, snapshot_id: None },
        data_disks: vec![],
        network: None,
        placement,
        login_key: None,
        public_ip: None,
        auto_release_at: None,
        tags: Default::default(),
        user_data: None,
        instance_role: None,
        dry_run: false,
    };
    block_on(async {
        let kind = |t: &'static str| cloud.placement_kind("ap-guangzhou", t, BillingMode::Monthly);
        assert_eq!(kind(HCC).await.unwrap(), Some(PlacementKind::HpcCluster));
        assert_eq!(kind(TYPE).await.unwrap(), None);
        assert_eq!(cloud.find_placement(&spec).await.unwrap(), None);
        // Without its cluster the HCC node is refused with CVM's code and the request id.
        let e = cloud.create(&node(None, "t-0")).await.unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.kind),
            ("InvalidParameterValue.InstanceTypeRequiredHpcCluster", ErrorKind::Invalid)
        );
        assert!(e.request_id.is_some());
        let id = cloud.create_placement(&spec).await.unwrap();
        assert_eq!(cloud.find_placement(&spec).await.unwrap(), Some(id.clone()));
        let elsewhere = PlacementSpec { zone: "ap-guangzhou-4".into(), ..spec.clone() };
        assert_eq!(cloud.find_placement(&elsewhere).await.unwrap(), None, "found by name and zone");
        let made = cloud.create(&node(Some(id.clone()), "t-1")).await.unwrap();
        let held = lock_state(&emu)["instances"][0]["InstanceId"].clone();
        assert_eq!(held, made.instance_id.as_str());
        let e = cloud.delete_placement("ap-guangzhou", PlacementKind::HpcCluster, &id).await.unwrap_err();
        assert_eq!((e.code.as_str(), e.kind), ("ResourceInUse.HpcCluster", ErrorKind::Transient));
        cloud.terminate("ap-guangzhou", std::slice::from_ref(&made.instance_id)).await.unwrap();
        let listed =
            cloud.describe("ap-guangzhou", &Filter::Ids(vec![made.instance_id.clone()])).await.unwrap();
        assert_eq!(listed.len(), 1, "in the recycle bin");
        cloud.delete_placement("ap-guangzhou", PlacementKind::HpcCluster, &id).await.unwrap();
        let e = cloud.delete_placement("ap-guangzhou", PlacementKind::HpcCluster, &id).await.unwrap_err();
        assert_eq!((e.code.as_str(), e.kind), ("ResourceNotFound.HpcCluster", ErrorKind::NotFound));
        let e = cloud
            .find_placement(&PlacementSpec { kind: PlacementKind::LowLatencySet, ..spec })
            .await
            .unwrap_err();
        assert_eq!(e.code, "gpuctl-unsupported");
    });
}

fn lock_state(emu: &Tencent) -> Value {
    emu.state().to_json(jiff::Timestamp::now())
}

/// Issue 14 through `Cloud`: a file system is made once for its token, found by name and tags, its
/// mount target (made with it) read until ready, and deleted until it is gone.
#[test]
fn the_client_makes_finds_mounts_and_deletes_a_file_system() {
    use gpuctl_cloud::cloud::{ErrorKind, FsSpec, FsState, FsTier};
    let (emu, ctx) = with_hcc();
    let (vpc, subnet, _) = network(&emu, &ctx);
    let (emu, ctx) = (std::sync::Arc::new(emu), std::sync::Arc::new(ctx));
    let cloud = tencent_client(&serve(emu.clone(), ctx.clone()));
    let spec = FsSpec {
        region: "ap-guangzhou".into(),
        zone: ZONE.into(),
        name: "e2e-train".into(),
        tier: FsTier::Performance,
        vpc,
        subnet: subnet.clone(),
        tags: [("gpuctl-deployment".to_string(), "e2e".to_string())].into(),
        client_token: "gpuctl-0123456789abcdef".into(),
    };
    block_on(async {
        assert_eq!(cloud.find_file_system(&spec).await.unwrap(), None);
        let id = cloud.create_file_system(&spec).await.unwrap();
        assert_eq!(
            cloud.create_file_system(&spec).await.unwrap(),
            id,
            "the same token, the same file system"
        );
        // More than a page (Limit 10) of other file systems: the client pages to find its own.
        for n in 0..12 {
            let other =
                FsSpec { name: format!("other-{n}"), client_token: format!("tok-{n}"), ..spec.clone() };
            cloud.create_file_system(&other).await.unwrap();
        }
        let found = cloud.find_file_system(&spec).await.unwrap().expect("found by name and tags");
        assert_eq!(
            (found.id.as_str(), &found.state, found.zone.as_deref()),
            (id.as_str(), &FsState::Creating, Some(ZONE))
        );
        assert_eq!(lock_state(&emu)["file_systems"][0]["StorageType"], "HP");
        let mount = cloud.mount_target(&spec, &id).await.unwrap();
        assert!(!mount.ready && mount.address.starts_with("10.0.0.") && mount.path == "/", "{mount:?}");
        ctx.clock().advance(SignedDuration::from_secs(15));
        assert_eq!(
            cloud.file_system("ap-guangzhou", &id).await.unwrap().map(|f| f.state),
            Some(FsState::Available)
        );
        let mount = cloud.mount_target(&spec, &id).await.unwrap();
        assert!(mount.ready && mount.id.starts_with("mount-"), "{mount:?}");
        let elsewhere = FsSpec { subnet: "subnet-other".into(), ..spec.clone() };
        assert_eq!(cloud.mount_target(&elsewhere, &id).await.unwrap_err().code, "gpuctl-no-mount-target");
        cloud.delete_file_system("ap-guangzhou", &id).await.unwrap();
        assert_eq!(
            cloud.file_system("ap-guangzhou", &id).await.unwrap().map(|f| f.state),
            Some(FsState::Deleting)
        );
        assert_eq!(cloud.find_file_system(&spec).await.unwrap(), None, "one being deleted is not found");
        ctx.clock().advance(SignedDuration::from_secs(10));
        assert_eq!(cloud.file_system("ap-guangzhou", &id).await.unwrap(), None);
        let e = cloud.delete_file_system("ap-guangzhou", &id).await.unwrap_err();
        assert_eq!((e.code.as_str(), e.kind), ("ResourceNotFound.FileSystemNotFound", ErrorKind::NotFound));
        assert!(e.request_id.is_some());
    });
}
