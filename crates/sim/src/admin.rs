//! The `/_sim/...` admin endpoints: what tests and scripts use to look inside the local cloud and
//! steer it. Plain JSON in and out; errors are `{"error": "..."}` with a 4xx status.
//!
//! - `GET  /_sim/health`            → `{"ok": true}`
//! - `GET  /_sim/state`             → every provider's instances, disks, snapshots, images
//! - `POST /_sim/reset`             → forget all state, knobs back to start-up
//! - `GET  /_sim/clock`             → `{"now", "offset_seconds"}`
//! - `POST /_sim/clock`             → `{"advance_seconds": N}` or `{"to": "2030-01-01T00:00:00Z"}`
//! - `GET  /_sim/knobs`, `PUT /_sim/knobs` → all knobs (the `[knobs]` table of the config, as JSON)
//! - `POST /_sim/faults`, `/_sim/stock_outs`, `/_sim/rate_limits` → append one rule
//! - `POST /_sim/public_address`    → `{"instance_id": "...", "address": "127.0.0.1"}`: the instance's
//!   public IP as describe answers it from now on (tests aim `gpuctl ssh`/`run`/`cp` at a local sshd;
//!   the port is the user's `--port`/`ssh_port`, as for any host whose sshd is not on 22)
//! - `POST /_sim/gpu_usage`         → `{"provider": "tencent", "instance_id": "...", "percent": 3.5,
//!   "from"?: RFC 3339, default now}`: the instance's GPU utilization is `percent` from `from` onward
//!   (a step function, a later setting replacing what was set after its `from`), as that cloud's
//!   monitoring API answers it (`gpuctl_simkit::usage`: no data before the first setting or while the
//!   instance is not running)
//! - `POST /_sim/plant`             → `{"provider", "kind": "disk"|"public_ip"|"snapshot"|"file_system",
//!   "region", "zone"?, "name"?, "size_gb"?, "class"?, "tags"?: {k: v}, "created"?, "attached_to"?,
//!   "disk_id"?}` → `{"id"}`: a leftover no gpuctl run made (untagged, foreign, backdated), held by that
//!   cloud's emulator as if the cloud had made it (`gpuctl_simkit::plant`)
//! - `POST /_sim/reclaim`           → `{"provider": "alibaba", "instance_id": "...", "notice_s": 300}`:
//!   the cloud reclaims a spot instance: its metadata service serves the termination time (now +
//!   `notice_s`, default the cloud's documented notice) and the instance is terminated once the sim
//!   clock passes it. Answers `{"provider", "instance_id", "termination_time"}`.

use gpuctl_simkit::{FaultRule, Knobs, RateLimit, SimRequest, SimResponse, StockOut};
use jiff::{SignedDuration, Timestamp};
use serde::de::DeserializeOwned;
use serde_json::{json, Value};

use crate::Sim;

pub(crate) fn handle(sim: &Sim, req: &SimRequest) -> SimResponse {
    let ok = |v: Value| SimResponse::json(200, &v);
    match (req.method.as_str(), req.path.as_str()) {
        ("GET", "/_sim/health") => ok(json!({"ok": true})),
        ("GET", "/_sim/state") => ok(sim.state()),
        ("POST", "/_sim/reset") => {
            sim.reset();
            ok(json!({"reset": true}))
        }
        ("GET", "/_sim/clock") => ok(clock(sim)),
        ("POST", "/_sim/clock") => match body::<ClockMove>(req) {
            Ok(m) => match m.apply(sim) {
                Ok(()) => {
                    sim.tick();
                    ok(clock(sim))
                }
                Err(e) => bad(&e),
            },
            Err(e) => bad(&e),
        },
        ("GET", "/_sim/knobs") => ok(serde_json::to_value(sim.ctx().knobs()).unwrap_or(Value::Null)),
        ("PUT", "/_sim/knobs") => match body::<Knobs>(req) {
            Ok(k) => {
                sim.ctx().set_knobs(k);
                ok(serde_json::to_value(sim.ctx().knobs()).unwrap_or(Value::Null))
            }
            Err(e) => bad(&e),
        },
        ("POST", "/_sim/faults") => append(sim, req, |k, r: FaultRule| k.faults.push(r)),
        ("POST", "/_sim/stock_outs") => append(sim, req, |k, r: StockOut| k.stock_outs.push(r)),
        ("POST", "/_sim/rate_limits") => append(sim, req, |k, r: RateLimit| k.rate_limits.push(r)),
        ("POST", "/_sim/public_address") => match body::<PublicAddress>(req) {
            Ok(p) => p.apply(sim),
            Err(e) => bad(&e),
        },
        ("POST", "/_sim/gpu_usage") => match body::<GpuUsage>(req) {
            Ok(u) => u.apply(sim),
            Err(e) => bad(&e),
        },
        ("POST", "/_sim/plant") => match body::<gpuctl_simkit::Plant>(req) {
            Ok(p) => plant(sim, &p),
            Err(e) => bad(&e),
        },
        ("POST", "/_sim/reclaim") => match body::<Reclaim>(req) {
            Ok(r) => r.apply(sim),
            Err(e) => bad(&e),
        },
        _ => SimResponse::json(
            404,
            &json!({"error": format!("no admin endpoint {} {}", req.method, req.path),
                    "endpoints": ["GET /_sim/health", "GET /_sim/state", "POST /_sim/reset", "GET|POST /_sim/clock",
                                  "GET|PUT /_sim/knobs", "POST /_sim/faults", "POST /_sim/stock_outs", "POST /_sim/rate_limits",
                                  "POST /_sim/public_address", "POST /_sim/gpu_usage", "POST /_sim/reclaim", "POST /_sim/plant"]}),
        ),
    }
}

/// Plants one leftover in the named cloud's emulator (after a tick, so "now" is current).
fn plant(sim: &Sim, p: &gpuctl_simkit::Plant) -> SimResponse {
    sim.tick();
    let Some(emu) = sim.emulators().iter().find(|e| e.provider() == p.provider) else {
        return SimResponse::json(404, &json!({"error": format!("no {} emulator in this sim", p.provider)}));
    };
    if p.created.is_some_and(|t| t > sim.ctx().now()) {
        return bad("created: must not be in the sim's future");
    }
    match emu.plant(p, sim.ctx()) {
        Ok(id) => SimResponse::json(200, &json!({ "id": id })),
        Err(e) => SimResponse::json(409, &json!({ "error": e })),
    }
}

fn bad(message: &str) -> SimResponse {
    SimResponse::json(400, &json!({ "error": message }))
}

fn body<T: DeserializeOwned>(req: &SimRequest) -> Result<T, String> {
    serde_json::from_slice(&req.body).map_err(|e| format!("request body: {e}"))
}

fn append<T: DeserializeOwned>(sim: &Sim, req: &SimRequest, add: impl FnOnce(&mut Knobs, T)) -> SimResponse {
    match body::<T>(req) {
        Ok(rule) => {
            sim.ctx().update_knobs(|k| add(k, rule));
            SimResponse::json(200, &serde_json::to_value(sim.ctx().knobs()).unwrap_or(Value::Null))
        }
        Err(e) => bad(&e),
    }
}

fn clock(sim: &Sim) -> Value {
    json!({ "now": sim.ctx().now().to_string(), "offset_seconds": sim.ctx().clock().offset().as_secs_f64() })
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct ClockMove {
    advance_seconds: Option<f64>,
    to: Option<String>,
}

impl ClockMove {
    fn apply(self, sim: &Sim) -> Result<(), String> {
        match (self.advance_seconds, self.to) {
            // Bounded so the duration arithmetic cannot overflow (≈ 3,000 years is plenty).
            (Some(s), None) if (0.0..=1e11).contains(&s) => {
                sim.ctx().clock().advance(SignedDuration::from_secs_f64(s));
                Ok(())
            }
            (Some(_), None) => {
                Err("advance_seconds must be between 0 and 1e11 (sim time never runs backwards)".into())
            }
            (None, Some(to)) => {
                let t: Timestamp = to.parse().map_err(|e| format!("to: {e}"))?;
                if t < sim.ctx().now() {
                    return Err(format!(
                        "to: {t} is in the sim's past (now {}); time never runs backwards",
                        sim.ctx().now()
                    ));
                }
                sim.ctx().clock().set_at_least(t);
                Ok(())
            }
            _ => Err("give exactly one of advance_seconds or to".into()),
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct PublicAddress {
    instance_id: String,
    address: String,
}

impl PublicAddress {
    fn apply(self, sim: &Sim) -> SimResponse {
        // Only an IPv4 address: describe's fields hold one, and anything else would be a typo.
        if self.address.parse::<std::net::Ipv4Addr>().is_err() {
            return bad(&format!("address: {:?} is not an IPv4 address", self.address));
        }
        for emu in sim.emulators() {
            match emu.point_public_address(&self.instance_id, &self.address) {
                Ok(true) => {
                    return SimResponse::json(
                        200,
                        &json!({"instance_id": self.instance_id, "address": self.address}),
                    )
                }
                Ok(false) => {}
                Err(e) => return SimResponse::json(409, &json!({ "error": e })),
            }
        }
        SimResponse::json(404, &json!({"error": format!("no instance {} in any cloud", self.instance_id)}))
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Reclaim {
    provider: gpuctl_simkit::Provider,
    instance_id: String,
    notice_s: Option<u32>,
}

impl Reclaim {
    fn apply(self, sim: &Sim) -> SimResponse {
        let Some(emu) = sim.emulators().iter().find(|e| e.provider() == self.provider) else {
            return bad(&format!("the sim hosts no {} emulator", self.provider));
        };
        sim.tick();
        let notice = self.notice_s.map(|s| SignedDuration::from_secs(i64::from(s)));
        match emu.reclaim(&self.instance_id, notice, sim.ctx()) {
            Ok(Some(at)) => SimResponse::json(
                200,
                &json!({"provider": self.provider, "instance_id": self.instance_id,
                        "termination_time": at.to_string()}),
            ),
            Ok(None) => SimResponse::json(
                404,
                &json!({"error": format!("no {} instance {}", self.provider, self.instance_id)}),
            ),
            Err(e) => SimResponse::json(409, &json!({ "error": e })),
        }
    }
}

#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct GpuUsage {
    provider: gpuctl_simkit::Provider,
    instance_id: String,
    percent: f64,
    from: Option<String>,
}

impl GpuUsage {
    fn apply(self, sim: &Sim) -> SimResponse {
        // A utilization is a share of the GPUs' time: 0–100, as every cloud's metric reports it.
        if !(0.0..=100.0).contains(&self.percent) {
            return bad(&format!("percent: {} is not between 0 and 100", self.percent));
        }
        let from = match self.from.as_deref().map(str::parse::<Timestamp>) {
            None => sim.ctx().now(),
            Some(Ok(t)) => t,
            Some(Err(e)) => {
                return bad(&format!("from: {e} (give an RFC 3339 time such as 2030-01-01T00:00:00Z)"))
            }
        };
        let Some(emu) = sim.emulators().iter().find(|e| e.provider() == self.provider) else {
            return bad(&format!("the sim hosts no {} emulator", self.provider));
        };
        sim.tick();
        match emu.set_gpu_usage(&self.instance_id, from, self.percent) {
            Ok(true) => SimResponse::json(
                200,
                &json!({"provider": self.provider, "instance_id": self.instance_id, "percent": self.percent,
                        "from": from.to_string()}),
            ),
            Ok(false) => SimResponse::json(
                404,
                &json!({"error": format!("no {} instance {}", self.provider, self.instance_id)}),
            ),
            Err(e) => SimResponse::json(409, &json!({ "error": e })),
        }
    }
}
