//! The metadata service, spot reclaims and instance-role credentials (issue 15).

use super::*;

fn meta(emu: &Tencent, ctx: &SimCtx, id: &str, path: &str) -> (u16, String) {
    emu.tick(ctx);
    let req = SimRequest::new("GET", path);
    let r = emu.metadata(id, path, &req, ctx).expect("the instance exists");
    (r.status, String::from_utf8_lossy(&r.body).into_owned())
}

/// `action` on CVM signed with the role's temporary keys, with `token` as X-TC-Token.
fn as_role(
    emu: &Tencent,
    ctx: &SimCtx,
    creds: &Value,
    token: Option<&str>,
    action: &str,
    body: Value,
) -> Value {
    let now = jiff::Timestamp::now().as_second();
    let mut req = gpuctl_simkit::testing::tc3_with(
        "127.0.0.1:9",
        "cvm",
        "ap-guangzhou",
        action,
        &body.to_string(),
        creds["TmpSecretId"].as_str().unwrap(),
        creds["TmpSecretKey"].as_str().unwrap(),
        now,
    );
    if let Some(t) = token {
        req.headers.push(("x-tc-token".into(), t.into()));
    }
    emu.tick(ctx);
    emu.handle(&req, ctx).json_body()["Response"].clone()
}

#[test]
fn a_reclaimed_spot_instance_gets_its_notice_then_goes() {
    let (emu, ctx) = setup(Knobs { boot_seconds: 10, ..Knobs::default() });
    let spot = json!({"InstanceChargeType": "SPOTPAID", "InstanceMarketOptions": {"SpotOptions": {"MaxPrice": "8.68"}}});
    let id = call(&emu, &ctx, "RunInstances", run(spot))["InstanceIdSet"][0].as_str().unwrap().to_string();
    let plain =
        call(&emu, &ctx, "RunInstances", run(json!({})))["InstanceIdSet"][0].as_str().unwrap().to_string();
    assert_eq!(meta(&emu, &ctx, &id, "/latest/meta-data/instance-id"), (200, id.clone()));
    assert_eq!(meta(&emu, &ctx, &id, "/latest/meta-data/spot/termination-time").0, 404, "not marked yet");
    assert!(emu.reclaim(&plain, None, &ctx).is_err(), "only spot instances are reclaimed");
    assert_eq!(emu.reclaim("ins-nothere", None, &ctx), Ok(None));
    let at = emu.reclaim(&id, Some(SignedDuration::from_secs(60)), &ctx).unwrap().unwrap();
    let (status, text) = meta(&emu, &ctx, &id, "/latest/meta-data/spot/termination-time");
    // `2018-08-18 12:05:33`, the reclaim time in UTC+8.
    let want =
        at.to_zoned(jiff::tz::TimeZone::fixed(jiff::tz::offset(8))).strftime("%Y-%m-%d %H:%M:%S").to_string();
    assert_eq!((status, text), (200, want));
    ctx.clock().advance(SignedDuration::from_secs(59));
    assert_eq!(states(&emu, &ctx), ["RUNNING", "RUNNING"]);
    ctx.clock().advance(SignedDuration::from_secs(2));
    assert_eq!(
        states(&emu, &ctx),
        ["TERMINATING", "RUNNING"],
        "terminated by the cloud at its termination time"
    );
}

#[test]
fn role_credentials_stop_only_their_own_instance() {
    let (emu, ctx) = setup(Knobs { boot_seconds: 10, ..Knobs::default() });
    let role = "gpuctl-node-agent";
    let id = call(&emu, &ctx, "RunInstances", run(json!({"CamRoleName": role})))["InstanceIdSet"][0]
        .as_str()
        .unwrap()
        .to_string();
    let other =
        call(&emu, &ctx, "RunInstances", run(json!({})))["InstanceIdSet"][0].as_str().unwrap().to_string();
    assert_eq!(
        meta(&emu, &ctx, &other, "/latest/meta-data/cam/security-credentials/").0,
        404,
        "no role, no keys"
    );
    assert_eq!(meta(&emu, &ctx, &id, "/latest/meta-data/cam/security-credentials/"), (200, role.to_string()));
    let (status, body) = meta(&emu, &ctx, &id, &format!("/latest/meta-data/cam/security-credentials/{role}"));
    assert_eq!(status, 200);
    let creds: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(creds["Code"], "Success");
    assert!(creds["ExpiredTime"].as_i64().unwrap() > ctx.now().as_second());
    let token = creds["Token"].as_str().unwrap();
    ctx.clock().advance(SignedDuration::from_secs(20));
    let stop = |token: Option<&str>, ids: &[&str], mode: &str| {
        as_role(&emu, &ctx, &creds, token, "StopInstances", json!({"InstanceIds": ids, "StoppedMode": mode}))
    };
    assert_eq!(code(&stop(None, &[&id], "STOP_CHARGING")), "UnauthorizedOperation.InvalidToken");
    assert_eq!(code(&stop(Some("wrong"), &[&id], "STOP_CHARGING")), "UnauthorizedOperation.InvalidToken");
    assert_eq!(
        code(&stop(Some(token), &[&other], "STOP_CHARGING")),
        "UnauthorizedOperation.PermissionDenied"
    );
    assert_eq!(
        code(&stop(Some(token), &[&id, &other], "STOP_CHARGING")),
        "UnauthorizedOperation.PermissionDenied"
    );
    let run_again = as_role(&emu, &ctx, &creds, Some(token), "RunInstances", run(json!({})));
    assert_eq!(code(&run_again), "UnauthorizedOperation.PermissionDenied");
    let r = stop(Some(token), &[&id], "STOP_CHARGING");
    assert_eq!(code(&r), "", "{r}");
    ctx.clock().advance(SignedDuration::from_secs(30));
    let d = call(&emu, &ctx, "DescribeInstances", json!({"InstanceIds": [id]}));
    let inst = &d["InstanceSet"][0];
    assert_eq!(
        (inst["InstanceState"].as_str(), inst["StopChargingMode"].as_str()),
        (Some("STOPPED"), Some("STOP_CHARGING"))
    );
    assert_eq!(inst["CamRoleName"], role);
    // The role's keys expire on the sim clock.
    ctx.clock().advance(SignedDuration::from_hours(7));
    let late = as_role(&emu, &ctx, &creds, Some(token), "TerminateInstances", json!({"InstanceIds": [id]}));
    assert_eq!(code(&late), "UnauthorizedOperation.InvalidToken");
}

#[test]
fn stop_charging_is_for_pay_as_you_go_only() {
    let (emu, ctx) = setup(Knobs { boot_seconds: 10, ..Knobs::default() });
    let spot = json!({"InstanceChargeType": "SPOTPAID", "InstanceMarketOptions": {"SpotOptions": {"MaxPrice": "8.68"}}});
    let id = call(&emu, &ctx, "RunInstances", run(spot))["InstanceIdSet"][0].as_str().unwrap().to_string();
    let r = call(&emu, &ctx, "StopInstances", json!({"InstanceIds": [id], "StoppedMode": "STOP_CHARGING"}));
    assert_eq!(code(&r), "UnsupportedOperation.InstanceStatePending");
    ctx.clock().advance(SignedDuration::from_secs(20));
    let r = call(&emu, &ctx, "StopInstances", json!({"InstanceIds": [id], "StoppedMode": "STOP_CHARGING"}));
    assert_eq!(code(&r), "UnsupportedOperation.StoppedModeStopCharging");
    let r = call(&emu, &ctx, "StopInstances", json!({"InstanceIds": [id]}));
    assert_eq!(code(&r), "");
    assert_eq!(states(&emu, &ctx), ["STOPPING"]);
}
