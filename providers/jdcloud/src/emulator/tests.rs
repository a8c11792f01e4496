//! JD Cloud emulator behaviour: routing, boot states, clientToken idempotency, partial success and
//! stock-outs, auto-release, snapshot policies, catalogued prices, throttling/fault answers, and the
//! signed path (JDCLOUD3 and JDCLOUD2 through gpuctl-sign, scope checks, nonce replay).

use gpuctl_simkit::creds::TEST_KEY_PAIRS;
use gpuctl_simkit::{Discount, Knobs, Offer, Prices, SimConfig, SimCtx, SimRequest, StockOut, ZoneRule};
use jiff::SignedDuration;
use serde_json::{json, Value};

use super::state::ERROR_VISIBLE;
use super::*;

const TYPE: &str = "p.n1p40.3xlarge";
const AZ: &str = "cn-north-1a";

/// One catalogued offer (JD p.n1p40 family from shared/reference/catalog-facts.md §2.3; the price
/// is a test figure, its source says so).
fn offers() -> Vec<Offer> {
    vec![Offer {
        provider: gpuctl_simkit::Provider::JdCloud,
        region: "cn-north-1".into(),
        zones: vec![AZ.into(), "cn-north-1b".into()],
        instance_type: TYPE.into(),
        family: "p.n1p40".into(),
        gpu_model: "Tesla P40".into(),
        gpu_count: 1,
        gpu_memory_gib: 24.0,
        vcpu: 12,
        memory_gib: 48.0,
        prices: Prices { hourly: Some(12.5), ..Prices::default() },
        source: "unit-test figure".into(),
        as_of: "2026-11-30".into(),
    }]
}

fn ctx_with(knobs: Knobs) -> SimCtx {
    SimCtx::new(SimConfig { seed: 3, knobs, ..SimConfig::default() }, offers())
}

fn ctx() -> SimCtx {
    ctx_with(Knobs { boot_seconds: 10, ..Knobs::default() })
}

fn call(jd: &JdCloud, ctx: &SimCtx, method: &str, path: &str, params: Value) -> Result<Value, JdError> {
    jd.tick(ctx);
    let route = route(method, &format!("/v1/regions/cn-north-1/{path}")).expect("routed");
    jd.dispatch("test-account", &route, &params, ctx)
}

fn create(jd: &JdCloud, ctx: &SimCtx, extra: Value) -> Result<Vec<String>, JdError> {
    let mut body = json!({"regionId": "cn-north-1", "instanceSpec": {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "train"}});
    if let (Value::Object(b), Value::Object(e)) = (&mut body, extra) {
        b.extend(e);
    }
    let r = call(jd, ctx, "POST", "instances", body)?;
    Ok(r["instanceIds"].as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect())
}

/// Disks, elastic IPs, snapshots and file systems that outlive instances (issue 15).
mod leftover;

/// 云监控's describeMetricData (issue 15).
mod monitor;

/// billing's queryBillDetail (issue 15).
mod bill;

fn status_of(jd: &JdCloud, ctx: &SimCtx, id: &str) -> String {
    match call(jd, ctx, "GET", &format!("instances/{id}"), json!({})) {
        Ok(v) => v["instance"]["status"].as_str().unwrap().to_string(),
        Err(e) => e.status.to_string(),
    }
}

#[test]
fn routes_match_the_sdk_paths() {
    let check = |m: &str, p: &str, want: Option<(&str, &str, Option<&str>)>| {
        let got = route(m, p).map(|r| (r.action, r.service, r.id));
        assert_eq!(got, want.map(|(a, s, i)| (a, s, i.map(str::to_string))), "{m} {p}");
    };
    check("POST", "/v1/regions/cn-north-1/instances", Some(("createInstances", "vm", None)));
    check("PUT", "/v2/regions/cn-north-1/instances:autoRenewStatus", Some(("setRenewal", "renewal", None)));
    check("PUT", "/v1/regions/cn-north-1/instances:autoRenewStatus", None);
    check("GET", "/v1/regions/cn-north-1/instances/i-abc", Some(("describeInstance", "vm", Some("i-abc"))));
    check(
        "POST",
        "/v1/regions/cn-north-1/instances/i-abc:createImage",
        Some(("createImage", "vm", Some("i-abc"))),
    );
    check(
        "POST",
        "/v1/regions/cn-north-1/instances/i-abc%3AcreateImage",
        Some(("createImage", "vm", Some("i-abc"))),
    );
    check(
        "POST",
        "/v1/regions/cn-north-1/instances:modifyInstanceReleaseTime",
        Some(("modifyInstanceReleaseTime", "vm", None)),
    );
    check(
        "DELETE",
        "/v1/regions/cn-north-1/snapshots/snapshot-1",
        Some(("deleteSnapshot", "disk", Some("snapshot-1"))),
    );
    check(
        "POST",
        "/v1/regions/cn-north-1/snapshotPolicies:apply",
        Some(("applySnapshotPolicies", "disk", None)),
    );
    check(
        "POST",
        "/v1/regions/cn-north-1/calculateTotalPrice",
        Some(("calculateTotalPrice", "billing", None)),
    );
    check("PATCH", "/v1/regions/cn-north-1/instances", None);
    check("GET", "/", None);
    // The vpc service's collections end in `/`, as its request classes spell them.
    check("POST", "/v1/regions/cn-north-1/vpcs/", Some(("createVpc", "vpc", None)));
    check("POST", "/v1/regions/cn-north-1/vpcs", None);
    check("DELETE", "/v1/regions/cn-north-1/vpcs/vpc-1", Some(("deleteVpc", "vpc", Some("vpc-1"))));
    check("GET", "/v1/regions/cn-north-1/subnets/", Some(("describeSubnets", "vpc", None)));
    check(
        "POST",
        "/v1/regions/cn-north-1/networkSecurityGroups/sg-1:addNetworkSecurityGroupRules",
        Some(("addNetworkSecurityGroupRules", "vpc", Some("sg-1"))),
    );
    check(
        "GET",
        "/v1/regions/cn-north-1/networkSecurityGroups/sg-1",
        Some(("describeNetworkSecurityGroup", "vpc", Some("sg-1"))),
    );
}

#[test]
fn instances_boot_pending_to_running_and_are_described() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let ids = create(&jd, &ctx, json!({"maxCount": 2, "instanceSpec": {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "w",
        "dataDisks": [{"diskCategory": "cloud", "cloudDiskSpec": {"diskType": "ssd.gp1", "diskSizeGB": 100}}], "userTags": [{"key": "deployment", "value": "stage2"}]}}))
    .unwrap();
    assert_eq!(ids.len(), 2);
    assert_eq!(status_of(&jd, &ctx, &ids[0]), "pending");
    ctx.clock().advance(SignedDuration::from_secs(11));
    assert_eq!(status_of(&jd, &ctx, &ids[0]), "running");
    let v =
        call(&jd, &ctx, "GET", "instances", json!({"filters": [{"name": "instanceId", "values": [ids[1]]}]}))
            .unwrap();
    assert_eq!(v["totalCount"], 1);
    let inst = &v["instances"][0];
    assert_eq!(inst["instanceName"], "w2");
    assert_eq!(inst["tags"][0]["value"], "stage2");
    assert!(inst["systemDisk"]["cloudDisk"]["diskId"].as_str().unwrap().starts_with("vol-"));
    assert_eq!(inst["dataDisks"][0]["cloudDisk"]["diskSizeGB"], 100);
    let by_tag =
        call(&jd, &ctx, "GET", "instances", json!({"tags": [{"key": "deployment", "values": ["other"]}]}))
            .unwrap();
    assert_eq!(by_tag["totalCount"], 0);
    assert_eq!(status_of(&jd, &ctx, "i-missing"), "NOT_FOUND");
}

#[test]
fn client_token_replays_and_refuses_changed_parameters() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let a = create(&jd, &ctx, json!({"clientToken": "d-0", "maxCount": 2})).unwrap();
    assert_eq!(create(&jd, &ctx, json!({"clientToken": "d-0", "maxCount": 2})).unwrap(), a);
    let e = create(&jd, &ctx, json!({"clientToken": "d-0", "maxCount": 3})).unwrap_err();
    assert_eq!((e.code, e.status), (400, "INVALID_ARGUMENT"));
    assert_eq!(lock(&jd.state).instances.len(), 2);
}

#[test]
fn limited_stock_gives_partial_success_and_failed_instances_disappear() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    jd.limit_stock(TYPE, AZ, 2);
    let ids = create(&jd, &ctx, json!({"maxCount": 3})).unwrap();
    assert_eq!(ids.len(), 3, "the call succeeds and names every instance");
    ctx.clock().advance(SignedDuration::from_secs(11));
    let states: Vec<String> = ids.iter().map(|i| status_of(&jd, &ctx, i)).collect();
    assert_eq!(states, ["running", "running", "error"]);
    let types = call(&jd, &ctx, "GET", "instanceTypes", json!({"filters": [{"name": "az", "values": [AZ]}]}))
        .unwrap();
    assert_eq!(
        types["instanceTypes"][0]["state"][0],
        json!({"az": AZ, "inStock": false, "availableCount": 0})
    );
    ctx.clock().advance(ERROR_VISIBLE);
    assert_eq!(status_of(&jd, &ctx, &ids[2]), "NOT_FOUND", "failed instances are deleted by JD");
    assert!(
        lock(&jd.state).disks.values().all(|d| d.instance_id.as_deref() != Some(ids[2].as_str())),
        "with their disks"
    );
}

#[test]
fn stock_out_knob_refuses_the_create_and_shows_in_instance_types() {
    let knobs = Knobs {
        stock_outs: vec![StockOut {
            provider: Some(gpuctl_simkit::Provider::JdCloud),
            instance_type: None,
            zone: Some(AZ.into()),
            available: None,
        }],
        ..Knobs::default()
    };
    let (jd, ctx) = (JdCloud::new(), ctx_with(knobs));
    let e = create(&jd, &ctx, json!({})).unwrap_err();
    assert_eq!((e.code, e.status), (400, "FAILED_PRECONDITION"));
    let types = call(&jd, &ctx, "GET", "instanceTypes", json!({})).unwrap();
    assert_eq!(
        types["instanceTypes"][0]["state"],
        json!([{"az": AZ, "inStock": false}, {"az": "cn-north-1b", "inStock": true}])
    );
    assert!(lock(&jd.state).instances.is_empty());
}

#[test]
fn release_time_deletes_when_due_and_can_be_cancelled() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let ids = create(&jd, &ctx, json!({"maxCount": 2})).unwrap();
    let at = crate::api::format_release_time(ctx.now() + SignedDuration::from_mins(90));
    let too_soon = crate::api::format_release_time(ctx.now() + SignedDuration::from_mins(10));
    let e = call(
        &jd,
        &ctx,
        "POST",
        "instances:modifyInstanceReleaseTime",
        json!({"instanceIds": [ids[0]], "autoReleaseTime": too_soon}),
    )
    .unwrap_err();
    assert_eq!(e.status, "OUT_OF_RANGE");
    call(
        &jd,
        &ctx,
        "POST",
        "instances:modifyInstanceReleaseTime",
        json!({"instanceIds": ids, "autoReleaseTime": at}),
    )
    .unwrap();
    let v = call(&jd, &ctx, "GET", &format!("instances/{}", ids[0]), json!({})).unwrap();
    assert_eq!(v["instance"]["autoReleaseTime"], at.as_str());
    call(
        &jd,
        &ctx,
        "POST",
        "instances:modifyInstanceReleaseTime",
        json!({"instanceIds": [ids[1]], "autoReleaseTime": null}),
    )
    .unwrap();
    ctx.clock().advance(SignedDuration::from_mins(91));
    assert_eq!(status_of(&jd, &ctx, &ids[0]), "NOT_FOUND");
    assert_eq!(status_of(&jd, &ctx, &ids[1]), "running");
}

#[test]
fn snapshots_images_policies_and_deletes() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let ids = create(&jd, &ctx, json!({})).unwrap();
    let inst = call(&jd, &ctx, "GET", &format!("instances/{}", ids[0]), json!({})).unwrap();
    let disk = inst["instance"]["systemDisk"]["cloudDisk"]["diskId"].as_str().unwrap().to_string();
    let e = call(&jd, &ctx, "POST", &format!("instances/{}:createImage", ids[0]), json!({"name": "golden"}))
        .unwrap_err();
    assert_eq!(e.status, "FAILED_PRECONDITION", "pending instances cannot be imaged");
    ctx.clock().advance(SignedDuration::from_secs(11));
    let img =
        call(&jd, &ctx, "POST", &format!("instances/{}:createImage", ids[0]), json!({"name": "golden"}))
            .unwrap();
    assert!(img["imageId"].as_str().unwrap().starts_with("img-"));

    let body = json!({"regionId": "cn-north-1", "snapshotSpec": {"name": "before-tune", "diskId": disk}, "clientToken": "s-1"});
    let s = call(&jd, &ctx, "POST", "snapshots", body.clone()).unwrap();
    assert_eq!(call(&jd, &ctx, "POST", "snapshots", body).unwrap(), s);
    let sid = s["snapshotId"].as_str().unwrap().to_string();
    let list =
        call(&jd, &ctx, "GET", "snapshots", json!({"filters": [{"name": "snapshotId", "values": [sid]}]}))
            .unwrap();
    assert_eq!(
        (list["totalCount"].as_i64(), list["snapshots"][0]["status"].as_str()),
        (Some(1), Some("creating"))
    );
    call(&jd, &ctx, "DELETE", &format!("snapshots/{sid}"), json!({})).unwrap();
    assert_eq!(
        call(&jd, &ctx, "DELETE", &format!("snapshots/{sid}"), json!({})).unwrap_err().status,
        "NOT_FOUND"
    );
    let image_snap =
        lock(&jd.state).snapshots.values().find(|s| !s.images.is_empty()).map(|s| s.id.clone()).unwrap();
    assert_eq!(
        call(&jd, &ctx, "DELETE", &format!("snapshots/{image_snap}"), json!({})).unwrap_err().status,
        "FAILED_PRECONDITION"
    );

    let effective = crate::api::format_time(ctx.now() + SignedDuration::from_mins(1));
    let bad = call(
        &jd,
        &ctx,
        "POST",
        "snapshotPolicy",
        json!({"name": "p", "interval": 3600, "effectiveTime": effective, "snapshotLifecycle": 0, "status": 1}),
    );
    assert_eq!(bad.unwrap_err().status, "INVALID_ARGUMENT");
    let p = call(&jd, &ctx, "POST", "snapshotPolicy", json!({"name": "twice-a-day", "interval": 43200, "effectiveTime": effective, "snapshotLifecycle": 86400, "status": 1})).unwrap();
    let pid = p["id"].as_str().unwrap().to_string();
    let applied = call(
        &jd,
        &ctx,
        "POST",
        "snapshotPolicies:apply",
        json!({"relations": [
            {"diskId": disk, "diskRegion": "cn-north-1", "policyId": pid, "op": 1},
            {"diskId": "vol-none", "diskRegion": "cn-north-1", "policyId": pid, "op": 1},
        ]}),
    )
    .unwrap();
    assert_eq!(applied["opResults"][0]["code"], 0);
    assert_eq!(applied["opResults"][1]["code"], 404);
    let policy_snaps =
        |jd: &JdCloud| lock(&jd.state).snapshots.values().filter(|s| s.description.contains(&pid)).count();
    ctx.clock().advance(SignedDuration::from_hours(25));
    jd.tick(&ctx);
    assert_eq!(
        policy_snaps(&jd),
        2,
        "runs at +1min and +12h1min; the lifecycle (1 day) has not expired them"
    );
    ctx.clock().advance(SignedDuration::from_hours(24));
    jd.tick(&ctx);
    assert_eq!(policy_snaps(&jd), 2, "two newer runs, two older ones expired");
}

#[test]
fn calculate_total_price_uses_the_catalog_and_names_its_source() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let order = |billing: i64, unit: i64| {
        json!({"regionId": "cn-north-1", "cmd": 1, "packageCount": 2, "orderList": [
        {"serviceCode": "vm", "region": "cn-north-1", "billingType": billing, "timeSpan": 1, "timeUnit": unit, "count": 1,
         "formula": [{"key": TYPE, "value": 1}]}]})
    };
    let v = call(&jd, &ctx, "POST", "calculateTotalPrice", order(1, 0)).unwrap();
    assert_eq!(v["totalPrice"], 25.0);
    assert_eq!(v["discountedTotalPrice"], 25.0, "no discount configured: both are the catalog price");
    assert_eq!(v["totalDiscount"], 0.0);
    assert!(v["remark"].as_str().unwrap().contains("unit-test figure as of 2026-11-30"));
    let e = call(&jd, &ctx, "POST", "calculateTotalPrice", order(3, 3)).unwrap_err();
    assert_eq!(e.status, "FAILED_PRECONDITION", "no monthly price catalogued: refused, not invented");
    // Formula.value is a quantity, a number (billing/models/Formula.py): the type as a value is refused.
    let mut old = order(1, 0);
    old["orderList"][0]["formula"] = json!([{"key": "instanceType", "value": TYPE}]);
    let e = call(&jd, &ctx, "POST", "calculateTotalPrice", old).unwrap_err();
    assert_eq!((e.code, e.status), (400, "INVALID_ARGUMENT"));
    assert!(e.message.contains("must be a number"), "{}", e.message);
    let mut unsold = order(1, 0);
    unsold["orderList"][0]["formula"] = json!([{"key": "g.none", "value": 1}]);
    assert_eq!(
        call(&jd, &ctx, "POST", "calculateTotalPrice", unsold).unwrap_err().status,
        "INVALID_ARGUMENT"
    );
}

#[test]
fn a_configured_discount_is_what_discounted_total_price_charges() {
    let knobs = Knobs {
        discounts: vec![Discount {
            provider: Some(gpuctl_simkit::Provider::JdCloud),
            instance_type: None,
            percent: 20.0,
        }],
        ..Knobs::default()
    };
    let (jd, ctx) = (JdCloud::new(), ctx_with(knobs));
    let body = json!({"regionId": "cn-north-1", "cmd": 1, "packageCount": 1, "orderList": [
        {"serviceCode": "vm", "region": "cn-north-1", "billingType": 1, "timeSpan": 1, "timeUnit": 0, "count": 1,
         "formula": [{"key": TYPE, "value": 1}]}]});
    let v = call(&jd, &ctx, "POST", "calculateTotalPrice", body).unwrap();
    assert_eq!((v["totalPrice"].as_f64(), v["discountedTotalPrice"].as_f64()), (Some(12.5), Some(10.0)));
    assert_eq!(v["totalDiscount"], 2.5);
    assert!(v["remark"].as_str().unwrap().contains("configured discount"));
}

#[test]
fn launch_scripts_are_kept_shown_and_checked_like_jd() {
    use base64::Engine as _;
    let b64 = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
    let (jd, ctx) = (JdCloud::new(), ctx());
    let script = b64(b"#!/bin/bash\necho hi\n");
    let spec = |userdata: Value| {
        json!({"instanceSpec": {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "u", "userdata": userdata,
               "metadata": [{"key": "role", "value": "trainer"}]}})
    };
    let ids = create(&jd, &ctx, spec(json!([{"key": "launch-script", "value": script}]))).unwrap();
    // describeInstancesCustomData shows it (vm/models/CustomData.py); describeInstance does not.
    let q = json!({"filters": [{"name": "instanceId", "values": [ids[0]]}]});
    let v = call(&jd, &ctx, "GET", "instancesCustomData", q).unwrap();
    assert_eq!(v["totalCount"], 1);
    assert_eq!(v["customData"][0]["userdata"], json!([{"key": "launch-script", "value": script}]));
    assert_eq!(v["customData"][0]["metadata"], json!([{"key": "role", "value": "trainer"}]));
    let d = call(&jd, &ctx, "GET", &format!("instances/{}", ids[0]), json!({})).unwrap();
    assert!(d["instance"].get("userdata").is_none());

    let refused = |userdata: Value, hint: &str| {
        let e = create(&jd, &ctx, spec(userdata.clone())).unwrap_err();
        assert_eq!((e.code, e.status), (400, "INVALID_ARGUMENT"), "{userdata}");
        assert!(e.message.contains(hint), "{} should mention {hint}", e.message);
    };
    refused(
        json!([{"key": "launch-script", "value": b64(b"#cloud-config\npackages: [git]\n")}]),
        "#cloud-config",
    );
    refused(json!([{"key": "launch-script", "value": b64(b"#!/bin/sh\n")}]), "#!/bin/bash");
    refused(json!([{"key": "launch-script", "value": "not base64!"}]), "base64");
    refused(json!([{"key": "user-data", "value": script}]), "launch-script");
    let mut big = b"#!/bin/bash\n".to_vec();
    big.resize(16 * 1024 + 1, b'#');
    refused(json!([{"key": "launch-script", "value": b64(&big)}]), "16384");
    assert_eq!(lock(&jd.state).instances.len(), 1, "refused creates make nothing");
}

#[test]
fn throttling_faults_and_unsigned_requests_use_jd_error_shape() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let req = SimRequest::new("POST", "/v1/regions/cn-north-1/instances").with_body(r#"{"maxCount":1}"#);
    assert!(jd.claims(&req));
    assert_eq!(jd.action(&req), "createInstances");
    let r = jd.throttled(&req, &ctx);
    assert_eq!(
        (r.status, r.json_body()["error"].clone()),
        (
            429,
            json!({"code": 429, "status": "RATE_LIMIT", "message": "request rate exceeds the limit; retry later"})
        )
    );
    assert!(r.json_body()["requestId"].as_str().is_some_and(|s| s.len() == 32));
    let r = jd.server_error(&req, &ctx, 503);
    assert_eq!((r.status, r.json_body()["error"]["status"].as_str()), (503, Some("UNAVAILABLE")));
    let r = jd.server_error(&req, &ctx, 500);
    assert_eq!((r.status, r.json_body()["error"]["status"].as_str()), (500, Some("INTERNAL")));
    let r = jd.handle(&req, &ctx);
    assert_eq!((r.status, r.json_body()["error"]["status"].as_str()), (401, Some("UNAUTHENTICATED")));
    assert!(lock(&jd.state).instances.is_empty());
    let r = jd.handle(&SimRequest::new("GET", "/v1/regions/cn-north-1/nothing"), &ctx);
    assert_eq!(r.status, 404);
}

/// Sign like the SDKs do (through gpuctl-sign) and send through `handle`.
fn signed(
    alg: gpuctl_sign::Algorithm,
    service: &str,
    region: &str,
    method: &str,
    path: &str,
    body: &str,
    nonce: &str,
) -> SimRequest {
    let (_, ak, sk) =
        TEST_KEY_PAIRS.iter().find(|(p, _, _)| *p == gpuctl_simkit::Provider::JdCloud).copied().unwrap();
    let req = gpuctl_sign::SignableRequest {
        method: method.into(),
        scheme: "http".into(),
        host: "127.0.0.1:9".into(),
        path: path.into(),
        headers: vec![("Content-Type".into(), "application/json".into())],
        body: body.as_bytes().to_vec(),
        ..Default::default()
    };
    let params = gpuctl_sign::SigningParams {
        algorithm: alg,
        time: jiff::Timestamp::now().as_second(),
        nonce: nonce.into(),
        region: region.into(),
        service: service.into(),
        action: String::new(),
        version: "v1".into(),
    };
    let s = gpuctl_sign::sign(&req, &gpuctl_sign::Credentials::new(ak, sk), &params).unwrap();
    let mut out = SimRequest::new(method, path).with_body(s.body.clone());
    out.raw_query = s.raw_query.clone();
    out.headers = s.headers.iter().map(|(k, v)| (k.to_ascii_lowercase(), v.clone())).collect();
    out
}

#[test]
fn signed_requests_pass_with_both_schemes_and_scope_and_nonce_are_checked() {
    use gpuctl_sign::Algorithm::{JdCloud2, JdCloud3};
    let (jd, ctx) = (JdCloud::new(), ctx());
    let body = r#"{"regionId":"cn-north-1","instanceSpec":{"az":"cn-north-1a","instanceType":"p.n1p40.3xlarge","imageId":"7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204","name":"x"}}"#;
    let path = "/v1/regions/cn-north-1/instances";
    for (alg, nonce) in [(JdCloud3, "n-3"), (JdCloud2, "n-2")] {
        let r = jd.handle(&signed(alg, "vm", "cn-north-1", "POST", path, body, nonce), &ctx);
        assert_eq!(r.status, 200, "{alg:?}: {:?}", r.json_body());
        assert_eq!(r.json_body()["result"]["instanceIds"].as_array().map(Vec::len), Some(1));
    }
    let replay = jd.handle(&signed(JdCloud3, "vm", "cn-north-1", "POST", path, body, "n-3"), &ctx);
    assert_eq!(replay.status, 401, "a reused nonce is refused");
    let wrong_service = jd.handle(&signed(JdCloud3, "disk", "cn-north-1", "POST", path, body, "n-4"), &ctx);
    assert_eq!(wrong_service.status, 401);
    assert!(wrong_service.json_body()["error"]["message"].as_str().unwrap().contains("service disk"));
    let wrong_region = jd.handle(&signed(JdCloud3, "vm", "cn-east-2", "POST", path, body, "n-5"), &ctx);
    assert_eq!(wrong_region.status, 401);
    assert_eq!(lock(&jd.state).instances.len(), 2);
}

#[test]
fn a_clock_jump_replays_policy_runs_before_the_release() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let ids = create(&jd, &ctx, json!({})).unwrap();
    let release = ctx.now() + SignedDuration::from_hours(30);
    let at = crate::api::format_release_time(release);
    call(
        &jd,
        &ctx,
        "POST",
        "instances:modifyInstanceReleaseTime",
        json!({"instanceIds": ids, "autoReleaseTime": at}),
    )
    .unwrap();
    let disk = lock(&jd.state).instances[&ids[0]].system_disk_id.clone().unwrap();
    let effective = crate::api::format_time(ctx.now() + SignedDuration::from_mins(1));
    let p = call(&jd, &ctx, "POST", "snapshotPolicy", json!({"name": "p", "interval": 43200, "effectiveTime": effective, "snapshotLifecycle": 0, "status": 1})).unwrap();
    call(
        &jd,
        &ctx,
        "POST",
        "snapshotPolicies:apply",
        json!({"relations": [{"diskId": disk, "policyId": p["id"], "op": 1}]}),
    )
    .unwrap();
    ctx.clock().advance(SignedDuration::from_hours(100));
    jd.tick(&ctx);
    let st = lock(&jd.state);
    assert!(st.instances.is_empty());
    let runs: Vec<_> = st.snapshots.values().filter(|s| s.disk_id == disk).collect();
    assert_eq!(runs.len(), 3, "runs at +1 min, +12 h 1 min and +24 h 1 min, before the release at +30 h");
    assert!(runs.iter().all(|s| s.created <= release));
}

#[test]
fn bad_create_parameters_get_jd_errors() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let check = |body: Value, want: (u16, &str), hint: &str| {
        let e = call(&jd, &ctx, "POST", "instances", body.clone()).unwrap_err();
        assert_eq!((e.code, e.status), want, "{body}");
        assert!(e.message.contains(hint), "{} should mention {hint}", e.message);
    };
    let spec = |extra: Value| {
        let mut s = json!({"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "x"});
        if let (Value::Object(a), Value::Object(b)) = (&mut s, extra) {
            a.extend(b);
        }
        json!({"regionId": "cn-north-1", "instanceSpec": s})
    };
    check(json!({"regionId": "cn-north-1"}), (400, "INVALID_ARGUMENT"), "instanceSpec");
    check(spec(json!({"imageId": null})), (400, "INVALID_ARGUMENT"), "imageId");
    check(spec(json!({"instanceType": "g.none"})), (400, "INVALID_ARGUMENT"), "g.none");
    check(spec(json!({"az": "cn-north-1z"})), (400, "INVALID_ARGUMENT"), "cn-north-1a");
    check(
        spec(json!({"charge": {"chargeMode": "prepaid_by_duration"}})),
        (400, "INVALID_ARGUMENT"),
        "chargeDuration",
    );
    check(
        spec(
            json!({"charge": {"chargeMode": "prepaid_by_duration", "chargeUnit": "year", "chargeDuration": 5}}),
        ),
        (400, "INVALID_ARGUMENT"),
        "year: 1-3",
    );
    // chargeDuration is 1-9 months or 1-3 years (charge/models/ChargeSpec.py): 12 months is 1 year.
    check(
        spec(
            json!({"charge": {"chargeMode": "prepaid_by_duration", "chargeUnit": "month", "chargeDuration": 12}}),
        ),
        (400, "INVALID_ARGUMENT"),
        "month: 1-9",
    );
    check(spec(json!({"charge": {"chargeMode": "spot"}})), (400, "INVALID_ARGUMENT"), "chargeMode");
    let mut many = spec(json!({}));
    many["maxCount"] = json!(101);
    check(many, (400, "OUT_OF_RANGE"), "maxCount");
    let mut long = spec(json!({}));
    long["clientToken"] = json!("t".repeat(65));
    check(long, (400, "INVALID_ARGUMENT"), "64");
    assert!(lock(&jd.state).instances.is_empty());

    // A prepaid instance cannot be deleted through the API before it expires.
    let ids = create(
        &jd,
        &ctx,
        json!({"instanceSpec": {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "m",
        "charge": {"chargeMode": "prepaid_by_duration", "chargeUnit": "month", "chargeDuration": 1}}}),
    )
    .unwrap();
    ctx.clock().advance(SignedDuration::from_secs(11));
    let e = call(&jd, &ctx, "DELETE", &format!("instances/{}", ids[0]), json!({})).unwrap_err();
    assert_eq!(e.status, "FAILED_PRECONDITION");
    let e = jd
        .dispatch("test-account", &route("GET", "/v1/regions/mars-1/instances").unwrap(), &json!({}), &ctx)
        .unwrap_err();
    assert_eq!(e.status, "INVALID_ARGUMENT");
}

#[test]
fn describe_instances_pages_and_filters() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    create(&jd, &ctx, json!({"maxCount": 12})).unwrap();
    create(&jd, &ctx, json!({"instanceSpec": {"az": "cn-north-1b", "instanceType": TYPE, "imageId": "1b4a3bb0-4f33-4a38-9e3c-1e5c6b2f2004", "name": "other"}})).unwrap();
    let q = |p: Value| {
        let v = call(&jd, &ctx, "GET", "instances", p).unwrap();
        (v["totalCount"].as_u64().unwrap(), v["instances"].as_array().unwrap().len())
    };
    assert_eq!(q(json!({})), (13, 13));
    assert_eq!(q(json!({"pageNumber": "2", "pageSize": "10"})), (13, 3));
    assert_eq!(q(json!({"filters": [{"name": "az", "values": ["cn-north-1b"]}]})), (1, 1));
    assert_eq!(
        q(
            json!({"filters": [{"name": "imageId", "values": ["1b4a3bb0-4f33-4a38-9e3c-1e5c6b2f2004"]}, {"name": "status", "values": ["pending"]}]})
        ),
        (1, 1)
    );
    assert_eq!(q(json!({"filters": [{"name": "name", "values": ["oth"]}]})), (1, 1));
    assert_eq!(q(json!({"filters": [{"name": "status", "values": ["running"]}]})), (0, 0));
}

#[test]
fn describe_by_tag_key_without_values_matches_any_value() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    // userTags sit inside instanceSpec, as in the SDK's InstanceSpec.
    let spec = |name: &str, tags: Value| json!({"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": name, "userTags": tags});
    let tag = |k: &str, v: &str| json!([{"key": k, "value": v}]);
    create(&jd, &ctx, json!({"maxCount": 11, "instanceSpec": spec("a", tag("gpuctl-deployment", "a"))}))
        .unwrap();
    create(&jd, &ctx, json!({"instanceSpec": spec("b", tag("gpuctl-deployment", "b"))})).unwrap();
    create(&jd, &ctx, json!({"instanceSpec": spec("c", tag("team", "gpuctl-deployment"))})).unwrap();
    create(&jd, &ctx, json!({"instanceSpec": spec("d", json!([]))})).unwrap();
    let q = |p: Value| {
        let v = call(&jd, &ctx, "GET", "instances", p).unwrap();
        (v["totalCount"].as_u64().unwrap(), v["instances"].as_array().unwrap().len())
    };
    assert_eq!(
        q(json!({"tags": [{"key": "gpuctl-deployment"}]})),
        (12, 12),
        "the key with any value, never a value equal to the key"
    );
    assert_eq!(
        q(json!({"tags": [{"key": "gpuctl-deployment"}], "pageNumber": "2", "pageSize": "10"})),
        (12, 2)
    );
    assert_eq!(q(json!({"tags": [{"key": "gpuctl-deployment", "values": ["b"]}]})), (1, 1));
    assert_eq!(
        q(json!({"tags": [{"key": "gpuctl-deployment"}, {"key": "team"}]})),
        (0, 0),
        "tag filters are ANDed"
    );
}

fn renew(jd: &JdCloud, ctx: &SimCtx, param: Value) -> Result<Value, JdError> {
    jd.tick(ctx);
    let route = route("PUT", "/v2/regions/cn-north-1/instances:autoRenewStatus").expect("routed");
    jd.dispatch("test-account", &route, &json!({ "regionId": "cn-north-1", "setRenewalParam": param }), ctx)
}

#[test]
fn a_prepaid_term_renews_or_ends_and_only_then_the_vm_can_be_deleted() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let prepaid = |auto: bool| {
        json!({"instanceSpec": {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "m",
        "charge": {"chargeMode": "prepaid_by_duration", "chargeUnit": "month", "chargeDuration": 1, "autoRenew": auto}}})
    };
    let kept = create(&jd, &ctx, prepaid(true)).unwrap().remove(0);
    let ends = create(&jd, &ctx, prepaid(true)).unwrap().remove(0);
    let hourly = create(&jd, &ctx, json!({})).unwrap().remove(0);
    ctx.clock().advance(SignedDuration::from_secs(11));
    // Unexpired prepaid: DeleteInstanceRequest.py deletes only pay-as-you-go or expired prepaid VMs.
    let e = call(&jd, &ctx, "DELETE", &format!("instances/{ends}"), json!({})).unwrap_err();
    assert_eq!((e.code, e.status), (400, "FAILED_PRECONDITION"));

    // setRenewal checks its required fields and the ids it names.
    let param = |ids: &str, status: &str| json!({"appCode": "jcloud", "serviceCode": "vm", "instanceIds": ids, "autoRenewStatus": status});
    assert_eq!(renew(&jd, &ctx, json!({"appCode": "jcloud"})).unwrap_err().status, "INVALID_ARGUMENT");
    assert_eq!(renew(&jd, &ctx, param(&ends, "STOP")).unwrap_err().status, "INVALID_ARGUMENT");
    assert_eq!(renew(&jd, &ctx, param("i-nope", "CLOSE")).unwrap_err().status, "NOT_FOUND");
    assert_eq!(renew(&jd, &ctx, param(&hourly, "CLOSE")).unwrap_err().status, "INVALID_ARGUMENT");
    renew(&jd, &ctx, param(&ends, "CLOSE")).unwrap();
    let state = ops::state_json(&lock(&jd.state), ctx.now(), ctx.boot_time());
    let shown =
        |id: &str| state["instances"].as_array().unwrap().iter().find(|i| i["instanceId"] == id).cloned();
    assert_eq!(shown(&ends).unwrap()["autoRenew"], false);
    assert_eq!(shown(&kept).unwrap()["autoRenew"], true);

    // Past the 30-day term: the renewed one runs on, a new term bought; the other is stopped, its
    // charge overdue, and now deletable.
    ctx.clock().advance(SignedDuration::from_hours(24 * 30));
    assert_eq!(status_of(&jd, &ctx, &kept), "running");
    assert_eq!(status_of(&jd, &ctx, &ends), "stopped");
    let d = call(&jd, &ctx, "GET", &format!("instances/{ends}"), json!({})).unwrap();
    assert_eq!(d["instance"]["charge"]["chargeStatus"], "overdue", "{d}");
    let e = call(&jd, &ctx, "DELETE", &format!("instances/{kept}"), json!({})).unwrap_err();
    assert_eq!(e.status, "FAILED_PRECONDITION");
    call(&jd, &ctx, "DELETE", &format!("instances/{ends}"), json!({})).unwrap();
    assert!(!lock(&jd.state).instances.contains_key(&ends));
}

/// Issue 12: `handle` refuses what jdcloud_sdk's request classes forbid, after auth and before the
/// operation runs, with JD's HTTP 400 `INVALID_ARGUMENT`; path parameters count as parameters.
#[test]
fn requests_that_break_the_request_class_are_refused_with_invalid_argument() {
    use gpuctl_sign::Algorithm::JdCloud3;
    use gpuctl_simkit::validate::Kind;
    let (jd, ctx) = (JdCloud::new(), ctx());
    let spec = r#""az":"cn-north-1a","instanceType":"p.n1p40.3xlarge","imageId":"7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204","name":"x""#;
    let cases = [
        (
            "vm",
            "POST",
            "/v1/regions/cn-north-1/instances".to_string(),
            format!(r#"{{"instanceSpec":{{{spec},"bogus":1}}}}"#),
        ),
        (
            "vm",
            "POST",
            "/v1/regions/cn-north-1/instances".into(),
            format!(r#"{{"instanceSpec":{{{spec}}},"maxCount":"1"}}"#),
        ),
        (
            "vm",
            "POST",
            "/v1/regions/cn-north-1/instances".into(),
            r#"{"instanceSpec":{"az":"cn-north-1a"}}"#.into(),
        ),
        (
            "vm",
            "POST",
            "/v1/regions/cn-north-1/instances".into(),
            format!(
                r#"{{"instanceSpec":{{{spec},"charge":{{"chargeMode":"prepaid_by_duration","chargeUnit":"year","chargeDuration":4}}}}}}"#
            ),
        ),
        (
            "vm",
            "POST",
            "/v1/regions/cn-north-1/instances".into(),
            format!(r#"{{"regionId":"cn-east-2","instanceSpec":{{{spec}}}}}"#),
        ),
        (
            "disk",
            "POST",
            "/v1/regions/cn-north-1/snapshots".into(),
            r#"{"clientToken":"t","snapshotSpec":{"name":"s"}}"#.into(),
        ),
    ];
    for (i, (service, method, path, body)) in cases.iter().enumerate() {
        let r =
            jd.handle(&signed(JdCloud3, service, "cn-north-1", method, path, body, &format!("v-{i}")), &ctx);
        let b = r.json_body();
        assert_eq!((r.status, b["error"]["status"].as_str()), (400, Some("INVALID_ARGUMENT")), "{body}: {b}");
    }
    // A GET's flattened query is held to the class too (indices from 1).
    let mut req =
        signed(JdCloud3, "vm", "cn-north-1", "GET", "/v1/regions/cn-north-1/instances", "", "v-get");
    req.raw_query = "pageNumber=one".into();
    // The query is part of the signature: unsigned-looking tamper is refused first…
    assert_eq!(jd.handle(&req, &ctx).status, 401);
    // …so the flattened form is checked directly on the decoded pairs.
    let refusal = |q: &str| {
        let pairs = gpuctl_simkit::params::form_decode(q);
        super::SCHEMA
            .refusal("describeInstances", gpuctl_simkit::validate::Input::Flat { pairs: &pairs, base: 1 })
    };
    assert!(refusal("regionId=cn-north-1&pageNumber=1&filters.1.name=instanceId&filters.1.values.1=i-1")
        .is_none());
    assert!(refusal("regionId=cn-north-1&pageSize=ten").is_some_and(|v| v.kind == Kind::WrongType));
    assert!(refusal("regionId=cn-north-1&pageSize=5").is_some_and(|v| v.kind == Kind::OutOfRange));
    assert!(refusal("regionId=cn-north-1&filters.0.name=x").is_some());
    assert!(refusal("pageNumber=1").is_some_and(|v| v.kind == Kind::Missing));
    // Nothing ran, and auth still comes first for a wrong request.
    assert!(lock(&jd.state).instances.is_empty());
    let mut unsigned = signed(
        JdCloud3,
        "vm",
        "cn-north-1",
        "POST",
        "/v1/regions/cn-north-1/instances",
        r#"{"bogus":1}"#,
        "v-u",
    );
    unsigned.headers.retain(|(k, _)| k != "authorization");
    assert_eq!(jd.handle(&unsigned, &ctx).status, 401);
}

#[test]
fn every_route_has_a_definition() {
    let src = include_str!("route.rs");
    let served: Vec<&str> = src.lines().filter_map(|l| l.split("=> (\"").nth(1)?.split('"').next()).collect();
    assert!(served.len() >= 12, "{served:?}");
    for a in served {
        assert!(super::SCHEMA.has(a), "{a} is routed but not in contract/schema/jdcloud.json");
    }
}

#[test]
fn key_pairs_import_once_list_by_name_and_gate_create_instances() {
    // `ssh-keygen -t ed25519`'s public half (the private half was deleted): JD takes any OpenSSH key.
    const ED_PUB: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop";
    let (jd, ctx) = (JdCloud::new(), ctx());
    let import = |name: &str, key: &str| {
        call(
            &jd,
            &ctx,
            "POST",
            "keypairs:import",
            json!({"regionId": "cn-north-1", "keyName": name, "publicKey": key}),
        )
    };
    let r = import("gpuctl_0123456789abcdef", ED_PUB).unwrap();
    assert_eq!(r["keyName"], "gpuctl_0123456789abcdef");
    assert_eq!(r["keyFingerprint"], "01:28:cb:15:16:91:ee:27:35:33:d7:b4:29:86:86:fe", "ssh-keygen -E md5");
    let e = import("gpuctl_0123456789abcdef", ED_PUB).unwrap_err();
    assert_eq!((e.code, e.status), (409, "ALREADY_EXISTS"));
    assert_eq!(import("bad", "ssh-ed25519 AAAA").unwrap_err().status, "INVALID_ARGUMENT");
    assert_eq!(import("no spaces", ED_PUB).unwrap_err().status, "INVALID_ARGUMENT");

    let list = |names: &[&str]| {
        call(
            &jd,
            &ctx,
            "GET",
            "keypairs",
            json!({"regionId": "cn-north-1", "filters": [{"name": "keyNames", "values": names}]}),
        )
        .unwrap()
    };
    assert_eq!(list(&["gpuctl_0123456789abcdef"])["totalCount"], 1);
    assert_eq!(list(&["gpuctl_0123456789abcde"])["totalCount"], 0, "names match exactly");

    let create_with = |keys: Value| {
        let body = json!({"regionId": "cn-north-1", "instanceSpec": {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "train", "keyNames": keys}});
        call(&jd, &ctx, "POST", "instances", body)
    };
    assert_eq!(create_with(json!(["made-up"])).unwrap_err().status, "NOT_FOUND");
    assert_eq!(create_with(json!(["gpuctl_0123456789abcdef", "x"])).unwrap_err().status, "INVALID_ARGUMENT");
    let r = create_with(json!(["gpuctl_0123456789abcdef"])).unwrap();
    let id = r["instanceIds"][0].as_str().unwrap().to_string();
    let v = call(&jd, &ctx, "GET", &format!("instances/{id}"), json!({})).unwrap();
    assert_eq!(v["instance"]["keyNames"], json!(["gpuctl_0123456789abcdef"]));
    assert_eq!(list(&["gpuctl_0123456789abcdef"])["keypairs"][0]["instanceIds"], json!([id]));
}

/// The elastic IPs `/_sim/state` lists: (address, bound instance).
fn elastic_ips(jd: &JdCloud, ctx: &SimCtx) -> Vec<(String, Option<String>)> {
    Emulator::state(jd, ctx)["public_ips"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["elasticIpAddress"].as_str().unwrap().to_string(),
                p["instanceId"].as_str().map(str::to_string),
            )
        })
        .collect()
}

fn with_eip(eip: Value) -> Value {
    json!({"instanceSpec": {"az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "train", "elasticIp": eip}})
}

#[test]
fn an_elastic_ip_is_made_shown_and_kept_unless_deleted_with_the_instance() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let eip =
        json!({"bandwidthMbps": 10, "provider": "bgp", "chargeSpec": {"chargeMode": "postpaid_by_usage"}});
    let mut body = with_eip(eip);
    body["maxCount"] = json!(2);
    let ids = create(&jd, &ctx, body).unwrap();
    let plain = create(&jd, &ctx, json!({})).unwrap();
    let held = elastic_ips(&jd, &ctx);
    let mut addresses: Vec<&str> = held.iter().map(|(a, _)| a.as_str()).collect();
    addresses.sort();
    assert_eq!(addresses, ["203.0.113.1", "203.0.113.2"], "unique, from a documentation range");
    let mut bound: Vec<String> = held.iter().filter_map(|(_, i)| i.clone()).collect();
    bound.sort();
    let mut want = ids.clone();
    want.sort();
    assert_eq!(bound, want, "one per instance that asked, none for the plain one");
    ctx.clock().advance(SignedDuration::from_secs(10));
    let shown = |id: &str| {
        let v = call(&jd, &ctx, "GET", &format!("instances/{id}"), json!({})).unwrap();
        (v["instance"]["elasticIpAddress"].clone(), v["instance"]["elasticIpId"].is_string())
    };
    let addr = held.iter().find(|(_, i)| i.as_deref() == Some(ids[0].as_str())).unwrap().0.clone();
    assert_eq!(shown(&ids[0]), (json!(addr), true));
    assert_eq!(shown(&plain[0]), (Value::Null, false));
    // deleteInstance's default keeps the elastic IP: unbound, still there (and billed).
    call(&jd, &ctx, "DELETE", &format!("instances/{}", ids[0]), json!({})).unwrap();
    let after = elastic_ips(&jd, &ctx);
    assert_eq!(after.len(), 2);
    assert!(after.contains(&(addr, None)), "{after:?}");
    // With deletePrimaryNetworkInterfaceAllElasticIp the address goes with the instance.
    call(
        &jd,
        &ctx,
        "DELETE",
        &format!("instances/{}", ids[1]),
        json!({"deletePrimaryNetworkInterfaceAllElasticIp": "true"}),
    )
    .unwrap();
    assert_eq!(elastic_ips(&jd, &ctx).len(), 1, "only the one left behind by the plain delete");
}

#[test]
fn elastic_ip_parameters_the_definition_forbids_are_refused() {
    use gpuctl_sign::Algorithm::JdCloud3;
    let (jd, ctx) = (JdCloud::new(), ctx());
    let path = "/v1/regions/cn-north-1/instances";
    // jdcloud_sdk 1.6.354 services/vpc/models/ElasticIpSpec.py: bandwidthMbps [1-1000] by
    // configuration, [1-200] by traffic, provider required; charge.ChargeSpec's chargeMode enum.
    let cases = [
        json!({"bandwidthMbps": 0, "provider": "bgp"}),
        json!({"bandwidthMbps": 1001, "provider": "bgp"}),
        json!({"bandwidthMbps": 201, "provider": "bgp", "chargeSpec": {"chargeMode": "postpaid_by_usage"}}),
        json!({"bandwidthMbps": 10, "provider": "bgp", "chargeSpec": {"chargeMode": "by_traffic"}}),
        json!({"bandwidthMbps": 10}),
        json!({"bandwidthMbps": "10", "provider": "bgp"}),
    ];
    for (i, eip) in cases.iter().enumerate() {
        let body = with_eip(eip.clone()).to_string();
        let r =
            jd.handle(&signed(JdCloud3, "vm", "cn-north-1", "POST", path, &body, &format!("eip-{i}")), &ctx);
        assert_eq!(
            (r.status, r.json_body()["error"]["status"].as_str().unwrap_or("")),
            (400, "INVALID_ARGUMENT"),
            "{eip}: {}",
            r.json_body()
        );
    }
    assert!(lock(&jd.state).instances.is_empty() && elastic_ips(&jd, &ctx).is_empty());
    let body = with_eip(
        json!({"bandwidthMbps": 1000, "provider": "bgp", "chargeSpec": {"chargeMode": "postpaid_by_duration"}}),
    );
    let r = jd.handle(&signed(JdCloud3, "vm", "cn-north-1", "POST", path, &body.to_string(), "eip-ok"), &ctx);
    assert_eq!(r.status, 200, "{}", r.json_body());
    assert_eq!(elastic_ips(&jd, &ctx).len(), 1);
}

#[test]
fn describe_images_needs_a_source_and_filters_public_images() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    // "如果没有指定 `ids` 参数，此参数必传" (DescribeImagesParameters.imageSource).
    let e = call(&jd, &ctx, "GET", "images", json!({})).unwrap_err();
    assert_eq!((e.code, e.status), (400, "INVALID_ARGUMENT"));
    let listed = gpuctl_simkit::images::JDCLOUD.len();
    let all = call(&jd, &ctx, "GET", "images", json!({ "imageSource": "public", "pageSize": 10 })).unwrap();
    assert_eq!(all["totalCount"].as_u64(), Some(listed as u64), "{all}");
    assert!(all["images"]
        .as_array()
        .unwrap()
        .iter()
        .all(|i| i["imageSource"] == "public" && i["status"] == "ready"));
    let centos =
        call(&jd, &ctx, "GET", "images", json!({ "imageSource": "public", "platform": "CentOS" })).unwrap();
    assert_eq!(centos["totalCount"].as_u64(), Some(1), "{centos}");
    let gpu = call(&jd, &ctx, "GET", "images", json!({ "imageSource": "public", "imageName": "gpu driver" }))
        .unwrap();
    assert_eq!(gpu["totalCount"].as_u64(), Some(1), "{gpu}");
    let own = call(&jd, &ctx, "GET", "images", json!({ "imageSource": "private" })).unwrap();
    assert_eq!(own["totalCount"].as_u64(), Some(0), "{own}");
}

/// The vpc service's operations (the schema's rules are the SDK conformance test's): made, found by
/// tag or name, used by an instance, refused deletion while used.
#[test]
fn vpcs_subnets_and_groups_are_made_found_used_and_deleted_in_order() {
    let jd = JdCloud::new();
    let empty = ZoneRule { provider: Some(gpuctl_simkit::Provider::JdCloud), zone: None };
    let ctx = ctx_with(Knobs { boot_seconds: 1, no_default_network: vec![empty], ..Knobs::default() });
    let tags = json!([{ "key": "gpuctl-network", "value": AZ }]);
    let vpc = call(
        &jd,
        &ctx,
        "POST",
        "vpcs/",
        json!({ "vpcName": "gpuctl-cn-north-1a", "addressPrefix": "10.0.0.0/16", "userTags": tags }),
    )
    .unwrap()["vpcId"]
        .as_str()
        .unwrap()
        .to_string();
    for (body, why) in [
        (json!({ "vpcName": "x".repeat(33) }), "a name over 32 characters"),
        (json!({ "vpcName": "a b" }), "a space in the name"),
        (json!({ "vpcName": "v", "addressPrefix": "10.0.0.0/8" }), "a mask under 16"),
        (json!({ "vpcName": "v", "addressPrefix": "8.8.0.0/16" }), "not a private range"),
    ] {
        assert_eq!(call(&jd, &ctx, "POST", "vpcs/", body).unwrap_err().status, "INVALID_ARGUMENT", "{why}");
    }
    let by_tag = json!({ "tags": [{ "key": "gpuctl-network", "values": [AZ] }] });
    let found = call(&jd, &ctx, "GET", "vpcs/", by_tag.clone()).unwrap();
    assert_eq!(found["vpcs"].as_array().map(|v| v.len()), Some(1), "{found}");
    let other = json!({ "tags": [{ "key": "gpuctl-network", "values": ["cn-north-1b"] }] });
    assert_eq!(call(&jd, &ctx, "GET", "vpcs/", other).unwrap()["totalCount"], 0);

    let subnet_body = |block: &str| json!({ "vpcId": vpc, "subnetName": "gpuctl-cn-north-1a", "addressPrefix": block, "userTags": tags });
    let subnet = call(&jd, &ctx, "POST", "subnets/", subnet_body("10.0.0.0/20")).unwrap()["subnetId"]
        .as_str()
        .unwrap()
        .to_string();
    for block in ["10.0.8.0/24", "10.1.0.0/20"] {
        assert_eq!(
            call(&jd, &ctx, "POST", "subnets/", subnet_body(block)).unwrap_err().status,
            "INVALID_ARGUMENT",
            "{block}"
        );
    }
    let missing = json!({ "vpcId": "vpc-nope", "subnetName": "s", "addressPrefix": "10.0.0.0/20" });
    assert_eq!(call(&jd, &ctx, "POST", "subnets/", missing).unwrap_err().status, "NOT_FOUND");
    let mut q = by_tag.clone();
    q["filters"] = json!([{ "name": "vpcId", "values": [vpc] }]);
    assert_eq!(call(&jd, &ctx, "GET", "subnets/", q).unwrap()["subnets"][0]["subnetId"], subnet);

    let sg = call(
        &jd,
        &ctx,
        "POST",
        "networkSecurityGroups/",
        json!({ "vpcId": vpc, "networkSecurityGroupName": "gpuctl-cn-north-1a" }),
    )
    .unwrap()["networkSecurityGroupId"]
        .as_str()
        .unwrap()
        .to_string();
    let q = json!({ "filters": [{ "name": "vpcId", "values": [vpc] }, { "name": "networkSecurityGroupNames", "values": ["gpuctl-cn-north-1a"] }] });
    assert_eq!(
        call(&jd, &ctx, "GET", "networkSecurityGroups/", q).unwrap()["networkSecurityGroups"][0]
            ["networkSecurityGroupId"],
        sg
    );
    let add = |specs: Value| {
        call(
            &jd,
            &ctx,
            "POST",
            &format!("networkSecurityGroups/{sg}:addNetworkSecurityGroupRules"),
            json!({ "networkSecurityGroupRuleSpecs": specs }),
        )
    };
    add(json!([
        { "protocol": 6, "direction": 0, "addressPrefix": "203.0.113.0/24", "fromPort": 22, "toPort": 22 },
        { "protocol": 300, "direction": 0, "addressPrefix": "10.0.0.0/16" },
    ]))
    .unwrap();
    for (bad, why) in [
        (json!([{ "protocol": 42, "direction": 0, "addressPrefix": "10.0.0.0/16" }]), "protocol"),
        (json!([{ "protocol": 6, "direction": 2, "addressPrefix": "10.0.0.0/16" }]), "direction"),
        (json!([{ "protocol": 6, "direction": 0, "addressPrefix": "10.0.0.1/16" }]), "host bits"),
        (
            json!([{ "protocol": 6, "direction": 0, "addressPrefix": "10.0.0.0/16", "fromPort": 30, "toPort": 22 }]),
            "ports",
        ),
        (
            json!([{ "protocol": 6, "direction": 0, "addressPrefix": "10.0.0.0/16", "priority": 0 }]),
            "priority",
        ),
        (json!([]), "no rules"),
    ] {
        assert_eq!(add(bad).unwrap_err().status, "INVALID_ARGUMENT", "{why}");
    }
    let group = call(&jd, &ctx, "GET", &format!("networkSecurityGroups/{sg}"), json!({})).unwrap();
    let rules = group["networkSecurityGroup"]["securityGroupRules"].as_array().cloned().unwrap();
    assert_eq!(rules.len(), 2);
    assert_eq!(
        (rules[1]["protocol"].as_i64(), rules[1]["fromPort"].as_i64()),
        (Some(300), Some(0)),
        "no ports for all"
    );

    // The empty account knows only what was made: an unknown subnet or a foreign group is refused.
    let nic = |subnet: &str, groups: Value| {
        json!({ "instanceSpec": { "az": AZ, "instanceType": TYPE, "imageId": "7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204", "name": "n",
        "primaryNetworkInterface": { "networkInterface": { "subnetId": subnet, "securityGroups": groups } } } })
    };
    assert_eq!(
        call(&jd, &ctx, "POST", "instances", nic("subnet-nope", json!([]))).unwrap_err().status,
        "NOT_FOUND"
    );
    assert_eq!(
        call(&jd, &ctx, "POST", "instances", nic(&subnet, json!(["sg-nope"]))).unwrap_err().status,
        "NOT_FOUND"
    );
    let six = json!([sg, sg, sg, sg, sg, sg]);
    assert_eq!(
        call(&jd, &ctx, "POST", "instances", nic(&subnet, six)).unwrap_err().status,
        "INVALID_ARGUMENT",
        "at most 5"
    );
    let mut two = nic(&subnet, json!([sg]));
    two["maxCount"] = json!(2);
    let ids = call(&jd, &ctx, "POST", "instances", two).unwrap()["instanceIds"].clone();
    let first =
        call(&jd, &ctx, "GET", &format!("instances/{}", ids[0].as_str().unwrap()), json!({})).unwrap();
    let second =
        call(&jd, &ctx, "GET", &format!("instances/{}", ids[1].as_str().unwrap()), json!({})).unwrap();
    assert_eq!(first["instance"]["vpcId"], vpc);
    assert_eq!(
        first["instance"]["privateIpAddress"], "10.0.0.3",
        "the first two are the gateway's and DHCP's"
    );
    assert_eq!(second["instance"]["privateIpAddress"], "10.0.0.4");
    assert_eq!(
        first["instance"]["primaryNetworkInterface"]["networkInterface"]["securityGroups"][0]["groupId"],
        sg
    );

    for (path, what) in [
        (format!("networkSecurityGroups/{sg}"), "group"),
        (format!("subnets/{subnet}"), "subnet"),
        (format!("vpcs/{vpc}"), "vpc"),
    ] {
        assert_eq!(
            call(&jd, &ctx, "DELETE", &path, json!({})).unwrap_err().status,
            "FAILED_PRECONDITION",
            "{what} in use"
        );
    }
    ctx.clock().advance(SignedDuration::from_secs(2));
    for id in ids.as_array().unwrap() {
        call(&jd, &ctx, "DELETE", &format!("instances/{}", id.as_str().unwrap()), json!({})).unwrap();
    }
    for path in [format!("networkSecurityGroups/{sg}"), format!("subnets/{subnet}"), format!("vpcs/{vpc}")] {
        call(&jd, &ctx, "DELETE", &path, json!({})).unwrap();
    }
    assert_eq!(call(&jd, &ctx, "DELETE", &format!("vpcs/{vpc}"), json!({})).unwrap_err().status, "NOT_FOUND");
    let st = jd.state(&ctx);
    assert_eq!(
        (st["vpcs"].as_array().map(Vec::len), st["security_groups"].as_array().map(Vec::len)),
        (Some(0), Some(0))
    );
}

/// An image the region has neither as an official image nor as one of the account's is refused; an
/// image createImage made is one it has.
#[test]
fn an_unknown_image_is_refused_and_a_made_one_boots() {
    let (jd, ctx) = (JdCloud::new(), ctx());
    let spec = |image: &str| json!({ "instanceSpec": { "az": AZ, "instanceType": TYPE, "imageId": image, "name": "i" } });
    let e = call(&jd, &ctx, "POST", "instances", spec("img-nope")).unwrap_err();
    assert_eq!(e.status, "INVALID_ARGUMENT", "{e:?}");
    assert!(e.message.contains("img-nope"), "{e:?}");
    let id = create(&jd, &ctx, json!({})).unwrap().remove(0);
    ctx.clock().advance(SignedDuration::from_secs(11));
    let img =
        call(&jd, &ctx, "POST", &format!("instances/{id}:createImage"), json!({ "name": "gpuctl-img-1" }))
            .unwrap();
    call(&jd, &ctx, "POST", "instances", spec(img["imageId"].as_str().unwrap())).unwrap();
}

// ------------------------------------------------------------------------------------ zfs (issue 14)

/// A VPC with two subnets (10.0.0.0/24, 10.0.1.0/24) made through the emulator's vpc API.
fn zfs_network(jd: &JdCloud, ctx: &SimCtx) -> (String, String, String) {
    let id = |v: Result<Value, JdError>, k: &str| v.unwrap()[k].as_str().unwrap().to_string();
    let vpc = id(
        call(jd, ctx, "POST", "vpcs/", json!({ "vpcName": "v", "addressPrefix": "10.0.0.0/16" })),
        "vpcId",
    );
    let subnet = |name: &str, block: &str| {
        let body = json!({ "vpcId": vpc, "subnetName": name, "addressPrefix": block });
        id(call(jd, ctx, "POST", "subnets/", body), "subnetId")
    };
    let (first, second) = (subnet("s", "10.0.0.0/24"), subnet("s2", "10.0.1.0/24"));
    (vpc, first, second)
}

fn empty_account() -> SimCtx {
    let empty = ZoneRule { provider: Some(gpuctl_simkit::Provider::JdCloud), zone: None };
    ctx_with(Knobs { boot_seconds: 1, no_default_network: vec![empty], ..Knobs::default() })
}

fn new_fs(jd: &JdCloud, ctx: &SimCtx, name: &str, token: &str) -> Result<String, JdError> {
    let body = json!({ "name": name, "description": "d", "clientToken": token, "fileSystemType": "std1" });
    call(jd, ctx, "POST", "fileSystems", body).map(|v| v["fileSystemId"].as_str().unwrap().to_string())
}

fn fs_status(jd: &JdCloud, ctx: &SimCtx, id: &str) -> String {
    match call(jd, ctx, "GET", &format!("fileSystems/{id}"), json!({})) {
        Ok(v) => v["fileSystem"]["status"].as_str().unwrap().to_string(),
        Err(e) => e.status.to_string(),
    }
}

fn new_mount_target(
    jd: &JdCloud,
    ctx: &SimCtx,
    fs: &str,
    vpc: &str,
    subnet: &str,
    token: &str,
) -> Result<String, JdError> {
    let body = json!({ "fileSystemId": fs, "subnetId": subnet, "vpcId": vpc, "clientToken": token });
    call(jd, ctx, "POST", "mountTargets", body).map(|v| v["mountTargetId"].as_str().unwrap().to_string())
}

#[test]
fn zfs_routes_match_the_sdk_paths() {
    let check = |m: &str, p: &str, want: Option<(&str, Option<&str>)>| {
        let got = route(m, p).map(|r| (r.action, r.service, r.id));
        assert_eq!(got, want.map(|(a, i)| (a, "zfs", i.map(str::to_string))), "{m} {p}");
    };
    check("POST", "/v1/regions/cn-north-1/fileSystems", Some(("createFileSystem", None)));
    check("GET", "/v1/regions/cn-north-1/fileSystems", Some(("describeFileSystems", None)));
    check("GET", "/v1/regions/cn-north-1/fileSystems/fs-1", Some(("describeFileSystem", Some("fs-1"))));
    check("DELETE", "/v1/regions/cn-north-1/fileSystems/fs-1", Some(("deleteFileSystem", Some("fs-1"))));
    check("POST", "/v1/regions/cn-north-1/mountTargets", Some(("createMountTarget", None)));
    check("GET", "/v1/regions/cn-north-1/mountTargets", Some(("describeMountTargets", None)));
    check("DELETE", "/v1/regions/cn-north-1/mountTargets/mt-1", Some(("deleteMountTarget", Some("mt-1"))));
    check("DELETE", "/v1/regions/cn-north-1/fileSystems", None);
    check("PATCH", "/v1/regions/cn-north-1/fileSystems/fs-1", None);
}

/// creating → available → in-use (its mount target) → deleting → gone, on the sim clock.
#[test]
fn a_file_system_is_made_mounted_and_deleted_through_its_states() {
    let (jd, ctx) = (JdCloud::new(), empty_account());
    let (vpc, subnet, _) = zfs_network(&jd, &ctx);
    let fs = new_fs(&jd, &ctx, "gpuctl-train", "t1").unwrap();
    assert_eq!(fs_status(&jd, &ctx, &fs), "creating");
    // Mount targets wait for an available file system (unverified word).
    let early = new_mount_target(&jd, &ctx, &fs, &vpc, &subnet, "m0").unwrap_err();
    assert_eq!(early.status, "FAILED_PRECONDITION", "{early:?}");
    ctx.clock().advance(super::ops::zfs::FS_CREATE_TAKES);
    assert_eq!(fs_status(&jd, &ctx, &fs), "available");
    let got = call(&jd, &ctx, "GET", &format!("fileSystems/{fs}"), json!({})).unwrap()["fileSystem"].clone();
    assert_eq!(
        (got["fileSystemType"].as_str(), got["az"].as_str(), got["name"].as_str()),
        (Some("std1"), Some(AZ), Some("gpuctl-train"))
    );

    let mt = new_mount_target(&jd, &ctx, &fs, &vpc, &subnet, "m1").unwrap();
    assert_eq!(fs_status(&jd, &ctx, &fs), "in-use");
    let listed = call(
        &jd,
        &ctx,
        "GET",
        "mountTargets",
        json!({ "filters": [{ "name": "fileSystemId", "values": [fs] }] }),
    )
    .unwrap();
    let target = &listed["mountTargets"][0];
    assert_eq!(
        (target["mountTargetId"].as_str(), target["subnetId"].as_str()),
        (Some(mt.as_str()), Some(subnet.as_str()))
    );
    // The address is the subnet's first usable one; the next instance there gets the one after.
    assert_eq!(target["ipAddress"], "10.0.0.3");
    assert_eq!(super::ops::vpc::next_address(&lock(&jd.state), &subnet, &[]).as_deref(), Some("10.0.0.4"));
    // Its network interface keeps the subnet (unverified word).
    assert_eq!(
        call(&jd, &ctx, "DELETE", &format!("subnets/{subnet}"), json!({})).unwrap_err().status,
        "FAILED_PRECONDITION"
    );
    // Not deleted while its mount target is there (unverified).
    let held = call(&jd, &ctx, "DELETE", &format!("fileSystems/{fs}"), json!({})).unwrap_err();
    assert_eq!(held.status, "FAILED_PRECONDITION", "{held:?}");
    call(&jd, &ctx, "DELETE", &format!("mountTargets/{mt}"), json!({})).unwrap();
    assert_eq!(fs_status(&jd, &ctx, &fs), "available");
    call(&jd, &ctx, "DELETE", &format!("fileSystems/{fs}"), json!({})).unwrap();
    assert_eq!(fs_status(&jd, &ctx, &fs), "deleting");
    call(&jd, &ctx, "DELETE", &format!("fileSystems/{fs}"), json!({})).unwrap();
    ctx.clock().advance(super::ops::zfs::FS_DELETE_TAKES);
    assert_eq!(fs_status(&jd, &ctx, &fs), "NOT_FOUND");
    let gone = call(&jd, &ctx, "DELETE", &format!("fileSystems/{fs}"), json!({})).unwrap_err();
    assert_eq!((gone.code, gone.status), (404, "NOT_FOUND"));
    call(&jd, &ctx, "DELETE", &format!("subnets/{subnet}"), json!({})).unwrap();
}

#[test]
fn file_system_creates_that_break_the_definitions_or_limits_are_refused() {
    let (jd, ctx) = (JdCloud::new(), empty_account());
    for (name, token, why) in [
        ("x".repeat(33), "t".to_string(), "a name over 32 characters"),
        ("a.b".into(), "t".into(), "a dot in the name"),
        ("".into(), "t".into(), "an empty name"),
        ("训练-fs_1".into(), "gpuctl-abc".into(), "a token with a dash"),
        ("fs".into(), "t".repeat(65), "a token over 64 characters"),
        ("fs".into(), "".into(), "an empty token"),
    ] {
        let e = new_fs(&jd, &ctx, &name, &token).unwrap_err();
        assert_eq!((e.code, e.status), (400, "INVALID_ARGUMENT"), "{why}: {e:?}");
    }
    let bad_type = json!({ "name": "fs", "description": "d", "clientToken": "t", "fileSystemType": "ssd" });
    assert_eq!(call(&jd, &ctx, "POST", "fileSystems", bad_type).unwrap_err().status, "INVALID_ARGUMENT");
    let long = json!({ "name": "fs", "description": "d".repeat(257), "clientToken": "t" });
    assert_eq!(call(&jd, &ctx, "POST", "fileSystems", long).unwrap_err().status, "INVALID_ARGUMENT");
    assert!(lock(&jd.state).file_systems.is_empty());
    // Chinese names are JD's own; the default type is gp1.
    let zh = call(
        &jd,
        &ctx,
        "POST",
        "fileSystems",
        json!({ "name": "训练-fs_1", "description": "d", "clientToken": "t0" }),
    )
    .unwrap();
    let zh = zh["fileSystemId"].as_str().unwrap();
    assert_eq!(lock(&jd.state).file_systems[zh].fs_type, "gp1");
    // Five per region (the limits page), then QUOTA_EXCEEDED (unverified word).
    for i in 1..5 {
        new_fs(&jd, &ctx, &format!("fs{i}"), &format!("t{i}")).unwrap();
    }
    let sixth = new_fs(&jd, &ctx, "fs6", "t6").unwrap_err();
    assert_eq!((sixth.code, sixth.status), (429, "QUOTA_EXCEEDED"), "{sixth:?}");
    // A replay of an earlier create is still answered.
    assert_eq!(
        new_fs(&jd, &ctx, "fs1", "t1").unwrap(),
        lock(&jd.state).file_systems.values().find(|f| f.name == "fs1").unwrap().id
    );
}

#[test]
fn client_tokens_replay_a_create_and_refuse_other_parameters() {
    let (jd, ctx) = (JdCloud::new(), empty_account());
    let (vpc, subnet, _) = zfs_network(&jd, &ctx);
    let fs = new_fs(&jd, &ctx, "fs", "tok1").unwrap();
    assert_eq!(new_fs(&jd, &ctx, "fs", "tok1").unwrap(), fs);
    assert_eq!(new_fs(&jd, &ctx, "other", "tok1").unwrap_err().status, "INVALID_ARGUMENT");
    assert_eq!(lock(&jd.state).file_systems.len(), 1);
    ctx.clock().advance(super::ops::zfs::FS_CREATE_TAKES);
    let mt = new_mount_target(&jd, &ctx, &fs, &vpc, &subnet, "mt1").unwrap();
    assert_eq!(new_mount_target(&jd, &ctx, &fs, &vpc, &subnet, "mt1").unwrap(), mt);
    assert_eq!(lock(&jd.state).mount_targets.len(), 1);
}

#[test]
fn mount_targets_are_one_per_file_system_in_a_known_subnet_of_their_vpc() {
    let (jd, ctx) = (JdCloud::new(), empty_account());
    let (vpc, subnet, other) = zfs_network(&jd, &ctx);
    let fs = new_fs(&jd, &ctx, "fs", "t").unwrap();
    ctx.clock().advance(super::ops::zfs::FS_CREATE_TAKES);
    for (fs_id, vpc_id, subnet_id, token, want) in [
        ("fs-none", vpc.as_str(), subnet.as_str(), "a1", "NOT_FOUND"),
        (fs.as_str(), "vpc-other", subnet.as_str(), "a2", "INVALID_ARGUMENT"),
        // An empty account has no subnet but those made here (unverified word).
        (fs.as_str(), vpc.as_str(), "subnet-none", "a3", "NOT_FOUND"),
        (fs.as_str(), vpc.as_str(), subnet.as_str(), "bad-token", "INVALID_ARGUMENT"),
    ] {
        let e = new_mount_target(&jd, &ctx, fs_id, vpc_id, subnet_id, token).unwrap_err();
        assert_eq!(e.status, want, "{fs_id} {vpc_id} {subnet_id} {token}: {e:?}");
    }
    let missing = json!({ "fileSystemId": fs, "vpcId": vpc, "clientToken": "a4" });
    assert_eq!(call(&jd, &ctx, "POST", "mountTargets", missing).unwrap_err().status, "INVALID_ARGUMENT");
    new_mount_target(&jd, &ctx, &fs, &vpc, &subnet, "a5").unwrap();
    // "1 mount target per file system" (the limits page; unverified word).
    let second = new_mount_target(&jd, &ctx, &fs, &vpc, &other, "a6").unwrap_err();
    assert_eq!((second.code, second.status), (429, "QUOTA_EXCEEDED"), "{second:?}");
    assert_eq!(
        call(&jd, &ctx, "DELETE", "mountTargets/fsmt-none", json!({})).unwrap_err().status,
        "NOT_FOUND"
    );
    assert_eq!(fs_status(&jd, &ctx, "fs-none"), "NOT_FOUND");
}

#[test]
fn describe_file_systems_filters_by_name_id_and_status_and_pages() {
    let (jd, ctx) = (JdCloud::new(), empty_account());
    let a = new_fs(&jd, &ctx, "gpuctl-a", "ta").unwrap();
    ctx.clock().advance(super::ops::zfs::FS_CREATE_TAKES);
    new_fs(&jd, &ctx, "gpuctl-ab", "tb").unwrap();
    new_fs(&jd, &ctx, "other", "tc").unwrap();
    let list = |q: Value| call(&jd, &ctx, "GET", "fileSystems", q);
    let names = |v: Value| {
        let mut n: Vec<String> = v["fileSystems"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["name"].as_str().unwrap().to_string())
            .collect();
        n.sort();
        n
    };
    // `name` matches a part of the name (模糊匹配).
    assert_eq!(
        names(list(json!({ "filters": [{ "name": "name", "values": ["gpuctl-a"] }] })).unwrap()),
        ["gpuctl-a", "gpuctl-ab"]
    );
    assert_eq!(
        list(json!({ "filters": [{ "name": "name", "values": ["a", "b"] }] })).unwrap_err().status,
        "INVALID_ARGUMENT"
    );
    assert_eq!(
        names(list(json!({ "filters": [{ "name": "fileSystemId", "values": [a] }] })).unwrap()),
        ["gpuctl-a"]
    );
    assert_eq!(
        names(list(json!({ "filters": [{ "name": "status", "values": ["creating"] }] })).unwrap()),
        ["gpuctl-ab", "other"]
    );
    // No file system carries tags (createFileSystem takes none).
    assert_eq!(list(json!({ "tags": [{ "key": "k", "values": ["v"] }] })).unwrap()["totalCount"], 0);
    let page = list(json!({ "pageNumber": 2, "pageSize": 10 })).unwrap();
    assert_eq!(
        (page["totalCount"].as_u64(), page["fileSystems"].as_array().map(Vec::len)),
        (Some(3), Some(0))
    );
}

/// What jdcloud_sdk's zfs request classes forbid is refused by `handle` before the operation runs.
#[test]
fn zfs_requests_that_break_the_request_class_are_refused() {
    use gpuctl_sign::Algorithm::JdCloud3;
    let (jd, ctx) = (JdCloud::new(), ctx());
    let fs = "/v1/regions/cn-north-1/fileSystems";
    for (i, (method, path, body)) in [
        ("POST", fs, r#"{"name":"fs","clientToken":"t"}"#),
        ("POST", fs, r#"{"name":"fs","description":"d","clientToken":"t","fileSystemType":"ssd"}"#),
        ("POST", fs, r#"{"name":"fs","description":"d","clientToken":"t","size":1}"#),
        (
            "POST",
            "/v1/regions/cn-north-1/mountTargets",
            r#"{"fileSystemId":"fs-1","vpcId":"v","clientToken":"t"}"#,
        ),
    ]
    .into_iter()
    .enumerate()
    {
        let r =
            jd.handle(&signed(JdCloud3, "zfs", "cn-north-1", method, path, body, &format!("z-{i}")), &ctx);
        let b = r.json_body();
        assert_eq!((r.status, b["error"]["status"].as_str()), (400, Some("INVALID_ARGUMENT")), "{body}: {b}");
        assert!(b["requestId"].as_str().is_some_and(|r| !r.is_empty()), "{b}");
    }
    let refusal = |q: &str| {
        let pairs = gpuctl_simkit::params::form_decode(q);
        super::SCHEMA
            .refusal("describeFileSystems", gpuctl_simkit::validate::Input::Flat { pairs: &pairs, base: 1 })
    };
    assert!(refusal(
        "regionId=cn-north-1&pageNumber=1&pageSize=100&filters.1.name=name&filters.1.values.1=x"
    )
    .is_none());
    assert!(refusal("regionId=cn-north-1&pageSize=5").is_some());
    assert!(refusal("regionId=cn-north-1&pageNumber=0").is_some());
    // A zfs call signed for another service is refused.
    let wrong = jd.handle(&signed(JdCloud3, "vm", "cn-north-1", "GET", fs, "", "z-w"), &ctx);
    assert_eq!(wrong.status, 401);
    let ok = jd.handle(&signed(JdCloud3, "zfs", "cn-north-1", "GET", fs, "", "z-ok"), &ctx);
    assert_eq!((ok.status, ok.json_body()["result"]["totalCount"].as_u64()), (200, Some(0)));
    assert!(lock(&jd.state).file_systems.is_empty());
}

// ------------------------------------------------------- the client against the emulator, over HTTP

/// Serves `jd` on 127.0.0.1 (one request per connection, `Connection: close`) for the real client.
fn serve(jd: std::sync::Arc<JdCloud>, ctx: std::sync::Arc<SimCtx>) -> String {
    use std::io::{BufRead, BufReader, Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(stream);
            let mut line = String::new();
            if reader.read_line(&mut line).is_err() {
                continue;
            }
            let mut words = line.split_whitespace();
            let (method, target) =
                (words.next().unwrap_or("").to_string(), words.next().unwrap_or("/").to_string());
            let mut req = SimRequest::new(&method, &target);
            let mut length = 0;
            loop {
                let mut h = String::new();
                if reader.read_line(&mut h).unwrap_or(0) == 0 || h.trim().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.trim_end().split_once(':') {
                    if k.eq_ignore_ascii_case("content-length") {
                        length = v.trim().parse().unwrap_or(0);
                    }
                    req = req.with_header(k, v.trim());
                }
            }
            let mut body = vec![0; length];
            if reader.read_exact(&mut body).is_err() {
                continue;
            }
            // As the sim's server does: the state is brought to now before each request.
            jd.tick(&ctx);
            let resp = jd.handle(&req.with_body(body), &ctx);
            let mut out = format!("HTTP/1.1 {} X\r\n", resp.status);
            for (k, v) in &resp.headers {
                out.push_str(&format!("{k}: {v}\r\n"));
            }
            out.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", resp.body.len()));
            let mut stream = reader.into_inner();
            let _ = stream.write_all(out.as_bytes()).and_then(|_| stream.write_all(&resp.body));
        }
    });
    url
}

fn client(url: &str) -> crate::client::Client {
    let (_, ak, sk) =
        TEST_KEY_PAIRS.iter().find(|(p, _, _)| *p == gpuctl_simkit::Provider::JdCloud).copied().unwrap();
    let http = gpuctl_cloud::http::Http::new(std::time::Duration::from_secs(5)).unwrap();
    let ep = gpuctl_cloud::http::Endpoint::parse(url).unwrap();
    crate::client::Client::new(gpuctl_sign::Credentials::new(ak, sk), Some(ep), http)
}

/// Issue 14 through `Cloud`: no placement on JD; a file system is created once (its token and name
/// mapped to JD's rules), found by name, mounted from its one mount target at `/cfs`, and deleted
/// with its mount target; the cloud's refusals come back with JD's status word and request id.
#[test]
fn the_client_makes_finds_mounts_and_deletes_a_file_system_on_the_emulator() {
    use gpuctl_cloud::cloud::{Cloud, ErrorKind, FsSpec, FsState, FsTier};
    use gpuctl_cloud::BillingMode;
    let jd = std::sync::Arc::new(JdCloud::new());
    let ctx = std::sync::Arc::new(empty_account());
    let (vpc, subnet, other) = zfs_network(&jd, &ctx);
    let cloud: Box<dyn Cloud> = Box::new(client(&serve(jd.clone(), ctx.clone())));
    let spec = FsSpec {
        region: "cn-north-1".into(),
        zone: AZ.into(),
        // Dots and a length JD's name rule refuses: the client maps it the same way every time.
        name: "gpuctl.e2e.train-pool.shared-file-system".into(),
        tier: FsTier::Capacity,
        vpc: vpc.clone(),
        subnet: subnet.clone(),
        tags: [("gpuctl-deployment".to_string(), "e2e".to_string())].into(),
        client_token: "gpuctl-0123456789abcdef0123456789abcdef01234567".into(),
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        assert_eq!(cloud.placement_kind("cn-north-1", TYPE, BillingMode::Hourly).await.unwrap(), None);
        assert_eq!(cloud.find_file_system(&spec).await.unwrap(), None);
        let id = cloud.create_file_system(&spec).await.unwrap();
        // A retry with the same token is the same file system.
        assert_eq!(cloud.create_file_system(&spec).await.unwrap(), id);
        assert_eq!(lock(&jd.state).file_systems.len(), 1);
        let found = cloud.find_file_system(&spec).await.unwrap().expect("found by its mapped name");
        assert_eq!((found.id.as_str(), &found.state), (id.as_str(), &FsState::Creating));
        assert!(found.name.len() <= 32, "{}", found.name);
        let stored = lock(&jd.state).file_systems[&id].clone();
        assert_eq!(stored.fs_type, "std1");
        assert!(stored.description.contains("gpuctl-deployment=e2e"), "{}", stored.description);
        // Too early for a mount target: JD's word and request id come back.
        let early = cloud.mount_target(&spec, &id).await.unwrap_err();
        assert_eq!((early.kind, early.code.as_str()), (ErrorKind::Invalid, "FAILED_PRECONDITION"));
        assert!(early.request_id.is_some(), "{early:?}");

        ctx.clock().advance(super::ops::zfs::FS_CREATE_TAKES);
        let fs = cloud.file_system("cn-north-1", &id).await.unwrap().unwrap();
        assert_eq!((fs.state, fs.zone.as_deref()), (FsState::Available, Some(AZ)));
        let made = cloud.mount_target(&spec, &id).await.unwrap();
        assert!(!made.ready);
        let ready = cloud.mount_target(&spec, &id).await.unwrap();
        assert_eq!(
            (ready.id.as_str(), ready.address.as_str(), ready.path.as_str(), ready.ready),
            (made.id.as_str(), "10.0.0.3", "/cfs", true)
        );
        assert_eq!(lock(&jd.state).mount_targets.len(), 1);
        // In use (it has its mount target) is available to the engine.
        assert_eq!(cloud.file_system("cn-north-1", &id).await.unwrap().unwrap().state, FsState::Available);
        // One mount target per file system: another subnet is refused before asking JD.
        let elsewhere = FsSpec { subnet: other.clone(), ..spec.clone() };
        let e = cloud.mount_target(&elsewhere, &id).await.unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Invalid, "gpuctl-one-mount-target"), "{e:?}");

        cloud.delete_file_system("cn-north-1", &id).await.unwrap();
        assert!(lock(&jd.state).mount_targets.is_empty());
        assert_eq!(cloud.file_system("cn-north-1", &id).await.unwrap().unwrap().state, FsState::Deleting);
        assert_eq!(cloud.find_file_system(&spec).await.unwrap(), None, "a deleting file system is not live");
        ctx.clock().advance(super::ops::zfs::FS_DELETE_TAKES);
        assert_eq!(cloud.file_system("cn-north-1", &id).await.unwrap(), None);
        let gone = cloud.delete_file_system("cn-north-1", &id).await.unwrap_err();
        assert_eq!((gone.kind, gone.code.as_str()), (ErrorKind::NotFound, "NOT_FOUND"));
        assert!(gone.request_id.is_some());
    });
}
