//! gpuctl-sim: the local cloud. One HTTP server on loopback hosting the emulators of Tencent CVM/CBS,
//! Alibaba ECS and JD Cloud VM/Disk, routing each request to the emulator that claims it by the
//! cloud's own protocol markers, so official SDKs pointed at it work unchanged.
//!
//! This crate owns the central part of every call — tick the emulators to the sim clock, apply
//! latency, rate limits and injected faults — and the `/_sim/...` admin endpoints (state, reset,
//! clock, knobs). [`Sim::call`] is that logic without HTTP; `server` puts it on a socket.

mod admin;
pub mod offers;
pub mod record;
mod server;

use std::sync::Arc;
use std::time::Duration;

use gpuctl_simkit::{Emulator, Fault, Knobs, SimConfig, SimCtx, SimRequest, SimResponse};

pub use server::{serve, BackgroundSim};

/// The local cloud: the shared context and the hosted emulators.
pub struct Sim {
    ctx: Arc<SimCtx>,
    emulators: Vec<Arc<dyn Emulator>>,
    /// The knobs at start-up; `POST /_sim/reset` returns to them.
    initial_knobs: Knobs,
}

/// What the server should do with one request.
#[derive(Debug)]
pub enum Outcome {
    /// Send this response.
    Respond(SimResponse),
    /// Send nothing and close the connection: with a TCP reset (`reset`), or after holding it open
    /// for `after` (a timeout), or right away after the operation took effect (success-then-drop).
    Drop { reset: bool, after: Duration },
}

/// One call's handling: how long to wait first (latency knob), then the outcome.
#[derive(Debug)]
pub struct Call {
    pub latency: Duration,
    pub outcome: Outcome,
}

impl Sim {
    /// The three clouds' emulators, selling gpuctl-core's shipped catalog.
    pub fn new(config: SimConfig) -> Self {
        let offers = offers::from_catalog(gpuctl_core::catalog::Catalog::shipped());
        Self::with_emulators(config, offers, default_emulators())
    }

    /// Any set of emulators and offers (tests use one emulator or a tiny catalog).
    pub fn with_emulators(
        config: SimConfig,
        offers: Vec<gpuctl_simkit::Offer>,
        emulators: Vec<Arc<dyn Emulator>>,
    ) -> Self {
        let initial_knobs = config.knobs.clone();
        Self { ctx: Arc::new(SimCtx::new(config, offers)), emulators, initial_knobs }
    }

    pub fn ctx(&self) -> &SimCtx {
        &self.ctx
    }

    pub fn emulators(&self) -> &[Arc<dyn Emulator>] {
        &self.emulators
    }

    /// Bring every emulator's time-driven state to the sim clock's now.
    pub fn tick(&self) {
        for e in &self.emulators {
            e.tick(&self.ctx);
        }
    }

    /// Every provider's state plus the sim clock, as `GET /_sim/state` returns it.
    pub fn state(&self) -> serde_json::Value {
        self.tick();
        let mut providers = serde_json::Map::new();
        for e in &self.emulators {
            providers.insert(e.provider().to_string(), e.state(&self.ctx));
        }
        serde_json::json!({ "now": self.ctx.now().to_string(), "providers": providers })
    }

    /// Forget every emulator's state and return the knobs to their start-up values. The clock
    /// keeps its offset: sim time never runs backwards.
    pub fn reset(&self) {
        for e in &self.emulators {
            e.reset();
        }
        self.ctx.set_knobs(self.initial_knobs.clone());
    }

    /// Handle one request: admin endpoints, or route to the claiming emulator with the knobs applied.
    pub fn call(&self, req: &SimRequest) -> Call {
        if req.path.starts_with("/_sim/") || req.path == "/_sim" {
            return Call { latency: Duration::ZERO, outcome: Outcome::Respond(admin::handle(self, req)) };
        }
        if let Some(rest) = req.path.strip_prefix("/_metadata/") {
            return Call { latency: Duration::ZERO, outcome: Outcome::Respond(self.metadata(rest, req)) };
        }
        let Some(emu) = self.emulators.iter().find(|e| e.claims(req)) else {
            let body = serde_json::json!({
                "error": "no emulator claims this request",
                "hint": "Tencent needs X-TC-Action and a TC3 scope for cvm/cbs; Alibaba x-acs-action or Action; JD a /v1/regions/... path",
                "method": req.method,
                "path": req.path,
            });
            return Call {
                latency: Duration::ZERO,
                outcome: Outcome::Respond(SimResponse::json(404, &body)),
            };
        };
        let provider = emu.provider();
        let action = emu.action(req);
        let latency = self.ctx.latency(provider, &action);
        emu.tick(&self.ctx);
        if !self.ctx.admit(provider, &action) {
            return Call { latency, outcome: Outcome::Respond(emu.throttled(req, &self.ctx)) };
        }
        let outcome = match self.ctx.take_fault(provider, &action) {
            None => Outcome::Respond(emu.handle(req, &self.ctx)),
            Some(Fault::ServerError { status }) => Outcome::Respond(emu.server_error(req, &self.ctx, status)),
            Some(Fault::Reset) => Outcome::Drop { reset: true, after: Duration::ZERO },
            Some(Fault::Timeout { after }) => Outcome::Drop { reset: false, after },
            Some(Fault::SuccessThenDrop) => {
                let _lost = emu.handle(req, &self.ctx);
                Outcome::Drop { reset: false, after: Duration::ZERO }
            }
        };
        tracing::debug!(provider = provider.as_str(), action, "sim call");
        Call { latency, outcome }
    }
}

impl Sim {
    /// The metadata service: `/_metadata/<provider>/<instance-id>/latest/...`. The real one is a
    /// fixed address inside the cloud's network (Tencent `metadata.tencentyun.com`, Alibaba
    /// `100.100.100.200`) that knows which instance asks by its source address; on loopback every
    /// caller is 127.0.0.1, so the instance is named in the path instead, and a program on the node is
    /// pointed at this prefix as its metadata base URL.
    fn metadata(&self, rest: &str, req: &SimRequest) -> SimResponse {
        let mut parts = rest.splitn(3, '/');
        let (provider, instance, path) = (parts.next(), parts.next(), parts.next());
        let not_found = |why: String| SimResponse::json(404, &serde_json::json!({ "error": why }));
        let (Some(provider), Some(instance), Some(path)) = (provider, instance, path) else {
            return not_found(
                "the metadata service is /_metadata/<provider>/<instance-id>/latest/...".into(),
            );
        };
        let Some(emu) = self.emulators.iter().find(|e| e.provider().as_str() == provider) else {
            return not_found(format!("the sim hosts no emulator for {provider:?}"));
        };
        emu.tick(&self.ctx);
        emu.metadata(instance, &format!("/{path}"), req, &self.ctx)
            .unwrap_or_else(|| not_found(format!("no {provider} instance {instance}")))
    }
}

/// The emulators `gpuctl sim` hosts.
pub fn default_emulators() -> Vec<Arc<dyn Emulator>> {
    vec![
        Arc::new(gpuctl_tencent::emulator::Tencent::new()),
        Arc::new(gpuctl_alibaba::emulator::Ecs::new()),
        Arc::new(gpuctl_jdcloud::emulator::JdCloud::new()),
    ]
}

/// The start-up lines `gpuctl sim` prints: where it listens and which test keys it accepts.
pub fn banner(addr: std::net::SocketAddr, ctx: &SimCtx) -> String {
    let mut s = format!("gpuctl sim listening on http://{addr}\n");
    let documented: Vec<_> = gpuctl_simkit::creds::TEST_KEY_PAIRS.to_vec();
    for pair in ctx.credentials().pairs() {
        let is_test = documented
            .iter()
            .any(|(p, ak, sk)| *p == pair.provider && *ak == pair.access_key && *sk == pair.secret.expose());
        // Only the documented test pairs are printed in full; configured secrets stay hidden.
        let secret = if is_test { pair.secret.expose().to_string() } else { "****** (from config)".into() };
        s.push_str(&format!("  {:8} access key {}  secret {}\n", pair.provider, pair.access_key, secret));
    }
    s
}
