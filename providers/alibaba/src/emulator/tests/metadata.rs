//! The metadata service, spot reclaims and instance-role (STS) credentials (issue 15).

use super::*;

fn meta(ecs: &Ecs, ctx: &SimCtx, id: &str, req: SimRequest) -> (u16, String) {
    ecs.tick(ctx);
    let path = req.path.clone();
    let r = ecs.metadata(id, &path, &req, ctx).expect("the instance exists");
    (r.status, String::from_utf8_lossy(&r.body).into_owned())
}

fn get(path: &str) -> SimRequest {
    SimRequest::new("GET", path)
}

#[test]
fn a_reclaimed_spot_instance_is_locked_noticed_and_released() {
    let ecs = Ecs::new();
    let ctx = ctx();
    let id = run(&ecs, &ctx, &[("InstanceChargeType", "PostPaid"), ("SpotStrategy", "SpotAsPriceGo")])
        .unwrap()[0]
        .clone();
    let plain = run(&ecs, &ctx, &[]).unwrap()[0].clone();
    let path = "/latest/meta-data/instance/spot/termination-time";
    assert_eq!(meta(&ecs, &ctx, &id, get(path)).0, 404);
    assert!(ecs.reclaim(&plain, None, &ctx).is_err(), "NoSpot instances are not reclaimed");
    let at = ecs.reclaim(&id, None, &ctx).unwrap().unwrap();
    // The sim clock is the wall clock plus an offset: it moved on a little since the reclaim.
    let left = at.duration_since(ctx.now());
    assert!(
        left <= SignedDuration::from_secs(300) && left > SignedDuration::from_secs(295),
        "the documented 5 minutes: {left}"
    );
    assert_eq!(meta(&ecs, &ctx, &id, get(path)), (200, at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()));
    let d = call(
        &ecs,
        &ctx,
        "DescribeInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceIds", &format!("[\"{id}\"]"))],
    )
    .unwrap();
    assert_eq!(d["Instances"]["Instance"][0]["OperationLocks"]["LockReason"][0]["LockReason"], "Recycling");
    ctx.clock().advance(SignedDuration::from_secs(301));
    assert_eq!(status(&ecs, &ctx, &id), "gone");
    assert_ne!(status(&ecs, &ctx, &plain), "gone");
}

#[test]
fn role_credentials_need_their_token_and_stay_within_the_policy() {
    let ecs = Ecs::new();
    let ctx = ctx();
    let role = "gpuctl-node-agent";
    let id = run(&ecs, &ctx, &[("RamRoleName", role)]).unwrap()[0].clone();
    let other = run(&ecs, &ctx, &[]).unwrap()[0].clone();
    // Hardened mode: a token from PUT /latest/api/token, then sent with each read.
    let put = SimRequest::new("PUT", "/latest/api/token")
        .with_header("X-aliyun-ecs-metadata-token-ttl-seconds", "60");
    let (status_code, token) = meta(&ecs, &ctx, &id, put);
    assert_eq!(status_code, 200);
    let creds_path = format!("/latest/meta-data/ram/security-credentials/{role}");
    let bad = get(&creds_path).with_header("X-aliyun-ecs-metadata-token", "nope");
    assert_eq!(meta(&ecs, &ctx, &id, bad).0, 401);
    let (s, body) =
        meta(&ecs, &ctx, &id, get(&creds_path).with_header("X-aliyun-ecs-metadata-token", &token));
    assert_eq!(s, 200);
    let creds: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(creds["Code"], "Success");
    let (ak, sk, sts) = (
        creds["AccessKeyId"].as_str().unwrap(),
        creds["AccessKeySecret"].as_str().unwrap(),
        creds["SecurityToken"].as_str().unwrap(),
    );
    assert!(ak.starts_with("STS."));
    assert_eq!(meta(&ecs, &ctx, &other, get("/latest/meta-data/ram/security-credentials/")).0, 404);
    ctx.clock().advance(SignedDuration::from_mins(5));
    let mut n = 0;
    let mut send = |action: &str, extra: &[(&str, &str)], token: Option<&str>| {
        n += 1;
        let mut q = vec![("RegionId", "cn-hangzhou")];
        q.extend_from_slice(extra);
        if let Some(t) = token {
            q.push(("SecurityToken", t));
        }
        let req = signed(
            gpuctl_sign::Algorithm::AlibabaRpcV2,
            ak,
            sk,
            action,
            &q,
            &format!("nonce-role-{n}"),
            SignedDuration::ZERO,
        );
        ecs.tick(&ctx);
        let r = ecs.handle(&req, &ctx);
        (r.status, r.json_body()["Code"].as_str().unwrap_or("").to_string())
    };
    let stop_me = [("InstanceId.1", id.as_str()), ("StoppedMode", "StopCharging")];
    assert_eq!(
        send("StopInstances", &stop_me, None),
        (400, "InvalidSecurityToken.MismatchWithAccessKey".into())
    );
    let stop_other = [("InstanceId.1", other.as_str()), ("StoppedMode", "StopCharging")];
    assert_eq!(send("StopInstances", &stop_other, Some(sts)), (403, "Forbidden.RAM".into()));
    assert_eq!(send("DescribeInstances", &[], Some(sts)), (403, "Forbidden.RAM".into()));
    assert_eq!(send("StopInstances", &stop_me, Some(sts)), (200, String::new()));
    ctx.clock().advance(SignedDuration::from_mins(2));
    let d = call(
        &ecs,
        &ctx,
        "DescribeInstances",
        &[("RegionId", "cn-hangzhou"), ("InstanceIds", &format!("[\"{id}\"]"))],
    )
    .unwrap();
    let i = &d["Instances"]["Instance"][0];
    assert_eq!((i["Status"].as_str(), i["StoppedMode"].as_str()), (Some("Stopped"), Some("StopCharging")));
    ctx.clock().advance(SignedDuration::from_hours(7));
    assert_eq!(
        send("DeleteInstance", &[("InstanceId", id.as_str())], Some(sts)),
        (400, "InvalidSecurityToken.Expired".into())
    );
}
