//! The client against the emulator over real HTTP on 127.0.0.1 (signing, the NAS host and version, error
//! classification): issue 14's deployment sets and NAS file systems, end to end in this crate. The
//! server below is the least HTTP/1.1 the client needs: one request per connection.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::Arc;
use std::time::Duration;

use gpuctl_cloud::cloud::{CreateRequest, ErrorKind, FsSpec, FsState, FsTier, PlacementKind, PlacementSpec};
use gpuctl_cloud::http::{Endpoint, Http};
use gpuctl_cloud::services::{Clusters, Instances};
use gpuctl_cloud::{BillingMode, Disk, DiskCategory};
use gpuctl_simkit::{Emulator, Offer, Prices, SimConfig, SimCtx, SimRequest};
use jiff::SignedDuration;

use super::Client;
use crate::emulator::Ecs;

const TYPE: &str = "ecs.gn7e-c16g1.4xlarge";

pub(super) fn ctx() -> Arc<SimCtx> {
    let offer = Offer {
        provider: gpuctl_simkit::Provider::Alibaba,
        region: "cn-hangzhou".into(),
        zones: vec!["cn-hangzhou-i".into()],
        instance_type: TYPE.into(),
        family: "ecs.gn7e".into(),
        gpu_model: "NVIDIA A800".into(),
        gpu_count: 1,
        gpu_memory_gib: 80.0,
        vcpu: 16,
        memory_gib: 125.0,
        // Test figures: the round trips do not price anything.
        prices: Prices { hourly: Some(30.0), spot_hourly: Some(6.0), ..Prices::default() },
        source: "test".into(),
        as_of: "2026-12-04".into(),
    };
    Arc::new(SimCtx::new(SimConfig { seed: 7, ..SimConfig::default() }, vec![offer]))
}

/// Serves `ecs` on a free loopback port; answers the base URL.
pub(super) fn serve(ecs: Arc<Ecs>, ctx: Arc<SimCtx>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").expect("a loopback port");
    let url = format!("http://{}", listener.local_addr().expect("bound"));
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let Ok(read) = stream.try_clone() else { continue };
            let mut r = BufReader::new(read);
            let mut line = String::new();
            if r.read_line(&mut line).is_err() {
                continue;
            }
            let mut parts = line.split_whitespace();
            let (method, target) =
                (parts.next().unwrap_or("GET").to_string(), parts.next().unwrap_or("/").to_string());
            let (mut headers, mut len) = (Vec::new(), 0usize);
            loop {
                let mut h = String::new();
                if r.read_line(&mut h).is_err() || h.trim_end().is_empty() {
                    break;
                }
                if let Some((k, v)) = h.trim_end().split_once(':') {
                    let (k, v) = (k.trim().to_ascii_lowercase(), v.trim().to_string());
                    if k == "content-length" {
                        len = v.parse().unwrap_or(0);
                    }
                    headers.push((k, v));
                }
            }
            let mut body = vec![0; len];
            if r.read_exact(&mut body).is_err() {
                continue;
            }
            let mut req = SimRequest::new(&method, &target).with_body(body);
            req.headers = headers;
            ecs.tick(&ctx);
            let resp = ecs.handle(&req, &ctx);
            let mut head = format!(
                "HTTP/1.1 {} X\r\nContent-Length: {}\r\nConnection: close\r\n",
                resp.status,
                resp.body.len()
            );
            for (k, v) in &resp.headers {
                head.push_str(&format!("{k}: {v}\r\n"));
            }
            head.push_str("\r\n");
            let _ = stream.write_all(head.as_bytes()).and_then(|_| stream.write_all(&resp.body));
        }
    });
    url
}

pub(super) fn client(url: &str) -> Client {
    let (_, ak, sk) = gpuctl_simkit::creds::TEST_KEY_PAIRS
        .iter()
        .find(|(p, _, _)| *p == gpuctl_simkit::Provider::Alibaba)
        .copied()
        .expect("the sim's Alibaba test keys");
    let http = Http::new(Duration::from_secs(5)).expect("an HTTP client");
    Client::new(
        gpuctl_sign::Credentials::new(ak, sk),
        Some(Endpoint::parse(url).expect("a loopback URL")),
        http,
    )
}

pub(super) fn block_on<F: std::future::Future>(f: F) -> F::Output {
    tokio::runtime::Builder::new_current_thread().enable_all().build().expect("a runtime").block_on(f)
}

pub(super) fn request(placement: Option<String>, billing: BillingMode) -> CreateRequest {
    CreateRequest {
        client_token: format!("t-{}", uuid::Uuid::new_v4()),
        name: "e2e-train-0".into(),
        region: "cn-hangzhou".into(),
        zone: "cn-hangzhou-i".into(),
        instance_type: TYPE.into(),
        billing,
        term: 0,
        spot_max_price: None,
        image_id: "ubuntu_22_04_x64_20G_alibase_20240926.vhd".into(),
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
    }
}

#[test]
fn a_low_latency_set_is_offered_made_found_filled_and_deleted() {
    let (ecs, ctx) = (Arc::new(Ecs::new()), ctx());
    let c = client(&serve(ecs, ctx.clone()));
    block_on(async {
        let kind = c.placement_kind("cn-hangzhou", TYPE, BillingMode::Hourly).await.unwrap();
        assert_eq!(kind, Some(PlacementKind::LowLatencySet));
        assert_eq!(c.placement_kind("cn-hangzhou", TYPE, BillingMode::Spot).await.unwrap(), None, "no spot");
        let spec = PlacementSpec {
            kind: PlacementKind::LowLatencySet,
            region: "cn-hangzhou".into(),
            zone: "cn-hangzhou-i".into(),
            name: "e2e.train".into(),
            tags: Default::default(),
            client_token: "t-set-1".into(),
        };
        assert_eq!(c.find_placement(&spec).await.unwrap(), None);
        let id = c.create_placement(&spec).await.unwrap();
        assert_eq!(c.create_placement(&spec).await.unwrap(), id, "the ClientToken answers the same set");
        assert_eq!(c.find_placement(&spec).await.unwrap().as_deref(), Some(id.as_str()));
        let made = Instances::create(&c, &request(Some(id.clone()), BillingMode::Hourly)).await.unwrap();
        let e = Instances::create(&c, &request(Some(id.clone()), BillingMode::Spot)).await.unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Invalid, "InvalidParameter"), "{e:?}");
        let e =
            Instances::create(&c, &request(Some("ds-nope".into()), BillingMode::Hourly)).await.unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::NotFound, "DeploymentSet.NotFound"));
        let e = c.delete_placement("cn-hangzhou", PlacementKind::LowLatencySet, &id).await.unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Transient, "DependencyViolation.NotEmpty"));
        assert!(e.request_id.is_some(), "{e:?}");
        Instances::terminate(&c, "cn-hangzhou", &[made.instance_id]).await.unwrap();
        c.delete_placement("cn-hangzhou", PlacementKind::LowLatencySet, &id).await.unwrap();
        let e = c.delete_placement("cn-hangzhou", PlacementKind::LowLatencySet, &id).await.unwrap_err();
        assert_eq!(e.kind, ErrorKind::NotFound);

        ctx.update_knobs(|k| {
            k.no_low_latency
                .push(gpuctl_simkit::FamilyRule { provider: None, family: Some("ecs.gn7e".into()) })
        });
        assert_eq!(c.placement_kind("cn-hangzhou", TYPE, BillingMode::Hourly).await.unwrap(), None);
    });
}

#[test]
fn a_file_system_is_made_found_mounted_until_active_and_deleted() {
    let (ecs, ctx) = (Arc::new(Ecs::new()), ctx());
    let c = client(&serve(ecs.clone(), ctx.clone()));
    let vsw = ecs.state(&ctx)["subnets"][0].clone();
    let spec = FsSpec {
        region: "cn-hangzhou".into(),
        zone: "cn-hangzhou-i".into(),
        name: "e2e-train".into(),
        tier: FsTier::Performance,
        vpc: vsw["vpc_id"].as_str().map(str::to_string).unwrap_or_default(),
        subnet: vsw["id"].as_str().map(str::to_string).unwrap_or_default(),
        tags: [("gpuctl-deployment".to_string(), "e2e".to_string())].into(),
        client_token: "t-fs-1".into(),
    };
    assert!(spec.subnet.starts_with("vsw-") && spec.vpc.starts_with("vpc-"), "{vsw}");
    block_on(async {
        assert_eq!(c.find_file_system(&spec).await.unwrap(), None);
        let id = c.create_file_system(&spec).await.unwrap();
        assert_eq!(c.create_file_system(&spec).await.unwrap(), id, "the ClientToken answers the same one");
        let found = c.find_file_system(&spec).await.unwrap().expect("found by name and tag");
        assert_eq!((found.id.as_str(), found.state), (id.as_str(), FsState::Creating));
        assert_eq!(found.zone.as_deref(), Some("cn-hangzhou-i"));
        let e = c.mount_target(&spec, &id).await.unwrap_err();
        assert_eq!(
            (e.kind, e.code.as_str()),
            (ErrorKind::Transient, "Instance.IncorrectStatus"),
            "not Running yet"
        );
        ctx.clock().advance(SignedDuration::from_secs(3));
        assert_eq!(c.file_system("cn-hangzhou", &id).await.unwrap().unwrap().state, FsState::Available);
        let m = c.mount_target(&spec, &id).await.unwrap();
        assert!(!m.ready && m.path == "/" && m.address.ends_with(".nas.aliyuncs.com"), "{m:?}");
        assert_eq!(c.mount_target(&spec, &id).await.unwrap(), m, "the one in the subnet, not a second");
        ctx.clock().advance(SignedDuration::from_secs(3));
        assert!(c.mount_target(&spec, &id).await.unwrap().ready);
        c.delete_file_system("cn-hangzhou", &id).await.unwrap();
        ctx.clock().advance(SignedDuration::from_secs(3));
        assert_eq!(c.file_system("cn-hangzhou", &id).await.unwrap(), None);
        assert_eq!(c.delete_file_system("cn-hangzhou", &id).await.unwrap_err().kind, ErrorKind::NotFound);
    });
}

/// Issue 15: GPU utilization through `Usage` — DescribeMetricList at CloudMonitor's version, the period
/// rounded to one the API allows, pages followed, an instance without data answered empty, and a
/// refusal carrying Alibaba's code and request id.
#[test]
fn gpu_usage_is_read_from_cloudmonitor() {
    use gpuctl_cloud::cost::UsageQuery;
    use gpuctl_cloud::services::Usage;
    let (ecs, ctx) = (Arc::new(Ecs::new()), ctx());
    let c = client(&serve(ecs.clone(), ctx.clone()));
    block_on(async {
        let made = Instances::create(&c, &request(None, BillingMode::Hourly)).await.unwrap();
        ctx.clock().advance(SignedDuration::from_secs(120));
        let t0 = jiff::Timestamp::from_second(ctx.now().as_second().div_euclid(900) * 900 + 900).unwrap();
        ctx.clock().set_at_least(t0);
        ecs.set_gpu_usage(&made.instance_id, t0, 4.0).unwrap();
        ctx.clock().advance(SignedDuration::from_hours(30));
        let q = UsageQuery {
            region: "cn-hangzhou".into(),
            instance_ids: vec![made.instance_id.clone(), "i-without-data".into()],
            start: t0,
            end: t0 + SignedDuration::from_hours(30),
            period_s: 20,
        };
        let got = Usage::gpu_usage(&c, &q).await.unwrap();
        // (t0, t0 + 30 h] at 60 s: 1,799 points, more than one page of 1,440.
        assert_eq!((got[0].period_s, got[0].points.len()), (60, 1799), "20 s rounds up to 60");
        assert!(
            got[0].points.iter().all(|p| p.percent == 4.0)
                && got[0].points[0].at == t0 + SignedDuration::from_mins(1)
        );
        assert!(got[1].points.is_empty());
        let long = UsageQuery { start: t0 - SignedDuration::from_hours(24 * 40), ..q };
        let e = Usage::gpu_usage(&c, &long).await.unwrap_err();
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Invalid, "InvalidParameter"), "{e:?}");
        assert!(e.request_id.is_some());
    });
}
