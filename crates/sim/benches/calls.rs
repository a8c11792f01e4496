//! What one emulated cloud call costs inside the local cloud (`Sim::call`, no socket): TC3
//! verification through gpuctl-sign, routing, knobs, the operation and the JSON answer.
//! `cargo bench -p gpuctl-sim --bench calls`

use criterion::{criterion_group, criterion_main, Criterion};
use gpuctl_sim::{Outcome, Sim};
use gpuctl_simkit::{SimConfig, SimRequest};
use serde_json::json;

fn signed(action: &str, region: &str, body: &serde_json::Value) -> SimRequest {
    gpuctl_simkit::testing::tc3("127.0.0.1:8090", "cvm", region, action, &body.to_string())
}

fn ok(sim: &Sim, req: &SimRequest) -> usize {
    match sim.call(req).outcome {
        Outcome::Respond(r) => {
            assert!(!r.body.windows(8).any(|w| w == b"\"Error\":"), "{}", String::from_utf8_lossy(&r.body));
            r.body.len()
        }
        Outcome::Drop { .. } => panic!("no faults configured"),
    }
}

fn bench(c: &mut Criterion) {
    let sim = Sim::new(SimConfig::default());
    let offer = sim
        .ctx()
        .offers(gpuctl_simkit::Provider::Tencent)
        .find(|o| o.prices.hourly.is_some())
        .unwrap()
        .clone();
    let launch = json!({"Placement": {"Zone": offer.zones[0]}, "InstanceType": offer.instance_type, "ImageId": "img-487zeit5", "InstanceCount": 100});
    ok(&sim, &signed("RunInstances", &offer.region, &launch));

    let describe = signed("DescribeInstances", &offer.region, &json!({"Limit": 100}));
    c.bench_function("tencent DescribeInstances (100 instances, signed)", |b| b.iter(|| ok(&sim, &describe)));
    let inquiry = signed("InquiryPriceRunInstances", &offer.region, &launch);
    c.bench_function("tencent InquiryPriceRunInstances (signed)", |b| b.iter(|| ok(&sim, &inquiry)));
    let status = signed("DescribeInstancesStatus", &offer.region, &json!({"Limit": 1}));
    c.bench_function("tencent DescribeInstancesStatus (1 of 100, signed)", |b| b.iter(|| ok(&sim, &status)));
}

criterion_group!(benches, bench);
criterion_main!(benches);
