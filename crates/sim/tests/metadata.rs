//! The metadata service and spot reclaims through the whole sim (`Sim::call`, issue 15): routing by
//! `/_metadata/<provider>/<instance-id>/...`, and `POST /_sim/reclaim`'s answers.

use gpuctl_sim::{Outcome, Sim};
use gpuctl_simkit::{SimConfig, SimRequest, SimResponse};
use serde_json::{json, Value};

fn answer(sim: &Sim, req: &SimRequest) -> SimResponse {
    match sim.call(req).outcome {
        Outcome::Respond(r) => r,
        other => panic!("no answer: {other:?}"),
    }
}

fn admin(sim: &Sim, path: &str, body: Value) -> (u16, Value) {
    let r = answer(sim, &SimRequest::new("POST", path).with_body(body.to_string().into_bytes()));
    (r.status, r.json_body())
}

fn text(sim: &Sim, path: &str) -> (u16, String) {
    let r = answer(sim, &SimRequest::new("GET", path));
    (r.status, String::from_utf8_lossy(&r.body).into_owned())
}

/// A Tencent spot instance of the shipped catalog, made through the signed API.
fn spot_instance(sim: &Sim) -> String {
    let offer = sim
        .ctx()
        .offers(gpuctl_simkit::Provider::Tencent)
        .find(|o| o.prices.spot_hourly.is_some())
        .expect("the catalog sells a Tencent spot type")
        .clone();
    let body = json!({
        "Placement": {"Zone": offer.zones[0]}, "InstanceType": offer.instance_type, "ImageId": "img-487zeit5",
        "InstanceChargeType": "SPOTPAID", "InstanceMarketOptions": {"SpotOptions": {"MaxPrice": "1000"}},
    });
    let req =
        gpuctl_simkit::testing::tc3("127.0.0.1:9", "cvm", &offer.region, "RunInstances", &body.to_string());
    let r = answer(sim, &req).json_body();
    r["Response"]["InstanceIdSet"][0].as_str().unwrap_or_else(|| panic!("{r}")).to_string()
}

#[test]
fn reclaim_marks_the_notice_the_metadata_service_serves() {
    let sim = Sim::new(SimConfig::default());
    let id = spot_instance(&sim);
    let notice = format!("/_metadata/tencent/{id}/latest/meta-data/spot/termination-time");
    assert_eq!(
        text(&sim, &format!("/_metadata/tencent/{id}/latest/meta-data/instance-id")),
        (200, id.clone())
    );
    assert_eq!(text(&sim, &notice).0, 404);
    assert_eq!(text(&sim, "/_metadata/tencent/ins-nothere/latest/meta-data/instance-id").0, 404);
    assert_eq!(text(&sim, &format!("/_metadata/nocloud/{id}/latest/meta-data/instance-id")).0, 404);
    let (status, r) =
        admin(&sim, "/_sim/reclaim", json!({"provider": "tencent", "instance_id": id, "notice_s": 30}));
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["instance_id"], id.as_str());
    assert!(r["termination_time"].is_string());
    assert_eq!(text(&sim, &notice).0, 200);
    // Wrong bodies and unknown instances are refused, not ignored.
    assert_eq!(admin(&sim, "/_sim/reclaim", json!({"provider": "tencent", "instance": id})).0, 400);
    assert_eq!(admin(&sim, "/_sim/reclaim", json!({"provider": "alibaba", "instance_id": id})).0, 404);
    // Past the termination time the cloud terminates it.
    assert_eq!(admin(&sim, "/_sim/clock", json!({"advance_seconds": 31})).0, 200);
    let state = answer(&sim, &SimRequest::new("GET", "/_sim/state")).json_body();
    let inst = &state["providers"]["tencent"]["instances"][0];
    assert_eq!(inst["Terminating"], true, "{inst}");
}
