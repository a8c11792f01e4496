//! `POST /_sim/gpu_usage` through the whole sim (`Sim::call`, issue 15): a setting reaches the named
//! cloud's emulator and its monitoring API answers it; bad bodies, unknown instances and another cloud's
//! instance are refused with the admin API's statuses.

use gpuctl_sim::{Outcome, Sim};
use gpuctl_simkit::{SimConfig, SimRequest, SimResponse};
use serde_json::{json, Value};

fn answer(sim: &Sim, req: &SimRequest) -> SimResponse {
    match sim.call(req).outcome {
        Outcome::Respond(r) => r,
        other => panic!("no answer: {other:?}"),
    }
}

fn admin(sim: &Sim, body: Value) -> (u16, Value) {
    let r = answer(sim, &SimRequest::new("POST", "/_sim/gpu_usage").with_body(body.to_string().into_bytes()));
    (r.status, r.json_body())
}

/// A running Tencent instance of the shipped catalog, made through the signed API; its region.
fn instance(sim: &Sim) -> (String, String) {
    let offer = sim.ctx().offers(gpuctl_simkit::Provider::Tencent).next().expect("a Tencent offer").clone();
    let body = json!({"Placement": {"Zone": offer.zones[0]}, "InstanceType": offer.instance_type, "ImageId": "img-487zeit5"});
    let req =
        gpuctl_simkit::testing::tc3("127.0.0.1:9", "cvm", &offer.region, "RunInstances", &body.to_string());
    let r = answer(sim, &req).json_body();
    let id = r["Response"]["InstanceIdSet"][0].as_str().unwrap_or_else(|| panic!("{r}")).to_string();
    (id, offer.region)
}

#[test]
fn a_setting_reaches_the_cloud_and_its_monitoring_answers_it() {
    let sim = Sim::new(SimConfig::default());
    let (id, region) = instance(&sim);
    sim.ctx().clock().advance(jiff::SignedDuration::from_mins(10));
    let (status, r) = admin(&sim, json!({"provider": "tencent", "instance_id": id, "percent": 3.5}));
    assert_eq!(status, 200, "{r}");
    assert_eq!((r["percent"].as_f64(), r["instance_id"].as_str()), (Some(3.5), Some(id.as_str())));
    sim.ctx().clock().advance(jiff::SignedDuration::from_mins(10));
    let now = sim.ctx().now();
    let body = json!({
        "Namespace": "QCE/CVM", "MetricName": "GpuUtil", "Period": 60,
        "Instances": [{"Dimensions": [{"Name": "InstanceId", "Value": id}]}],
        "StartTime": (now - jiff::SignedDuration::from_mins(5)).to_string(), "EndTime": now.to_string(),
    });
    let mut req =
        gpuctl_simkit::testing::tc3("127.0.0.1:9", "monitor", &region, "GetMonitorData", &body.to_string());
    for h in req.headers.iter_mut().filter(|(k, _)| k == "x-tc-version") {
        h.1 = "2018-07-24".into();
    }
    let r = answer(&sim, &req).json_body();
    let values = r["Response"]["DataPoints"][0]["Values"].as_array().cloned().unwrap_or_default();
    assert!(!values.is_empty() && values.iter().all(|v| v.as_f64() == Some(3.5)), "{r}");
}

#[test]
fn bad_settings_are_refused() {
    let sim = Sim::new(SimConfig::default());
    let (id, _) = instance(&sim);
    for (body, want) in [
        (json!({"provider": "tencent", "instance_id": id, "percent": 101}), 400),
        (json!({"provider": "tencent", "instance_id": id, "percent": -1}), 400),
        (json!({"provider": "tencent", "instance_id": id, "percent": 1, "from": "yesterday"}), 400),
        (json!({"provider": "tencent", "instance_id": id, "percent": 1, "colour": "red"}), 400),
        (json!({"provider": "tencnet", "instance_id": id, "percent": 1}), 400),
        (json!({"provider": "tencent", "instance_id": "ins-nothere", "percent": 1}), 404),
        // The instance is Tencent's: Alibaba's emulator has no such instance.
        (json!({"provider": "alibaba", "instance_id": id, "percent": 1}), 404),
    ] {
        let (status, r) = admin(&sim, body.clone());
        assert_eq!(status, want, "{body} → {r}");
        assert!(r["error"].is_string(), "{r}");
    }
    let (status, _) = admin(
        &sim,
        json!({"provider": "tencent", "instance_id": id, "percent": 0, "from": "2030-01-01T00:00:00Z"}),
    );
    assert_eq!(status, 200, "a setting may start in the future");
}
