//! gpuctl-simkit: what every cloud emulator of the local cloud shares.
//!
//! It owns the plain request/response types the emulators speak ([`SimRequest`], [`SimResponse`]), the
//! [`Emulator`] trait the sim server routes to, and the shared context ([`SimCtx`]): the sim clock,
//! credentials, knobs (latency, rate limits, stock-outs, faults), a seeded RNG for ids, the offers
//! (instance types and prices) the emulators sell, plus the plumbing every emulator needs: parameter
//! decoding ([`params`]) and typed reading in the cloud's own errors ([`reader`]), paging ([`page`]),
//! the ClientToken gate ([`idem`]), the signature-nonce store ([`nonce`]), cent rounding ([`money`])
//! and signature verification ([`auth`]).
//!
//! It knows no HTTP server and no cloud's wire format: `crates/sim` does the serving, each provider
//! crate's `emulator` module does the cloud.

pub mod auth;
pub mod bill;
pub mod cidr;
pub mod clock;
pub mod config;
pub mod creds;
pub mod ctx;
pub mod idem;
pub mod images;
pub mod knobs;
pub mod money;
pub mod nonce;
pub mod offers;
pub mod page;
pub mod params;
pub mod plant;
pub mod pubip;
pub mod reader;
pub mod reclaim;
pub mod request;
pub mod roles;
pub mod sshkey;
pub mod testing;
pub mod usage;
pub mod validate;

pub use auth::{AuthError, Scheme, Verified};
pub use cidr::Cidr;
pub use clock::SimClock;
pub use config::{ConfigError, SimConfig};
pub use creds::{Credentials, KeyPair, SecretKey};
pub use ctx::{lock, SimCtx};
pub use idem::{Idem, IdempotencyStore, TokenGate};
pub use knobs::{
    Discount, FamilyRule, Fault, FaultKind, FaultRule, Knobs, Latency, RateLimit, StockOut, ZoneRule,
};
pub use nonce::NonceStore;
pub use offers::{Offer, Prices};
pub use page::Window;
pub use plant::{Plant, PlantKind};
pub use pubip::AddressPool;
pub use reader::{ParamErrors, Params};
pub use request::{SimRequest, SimResponse};
pub use usage::GpuBook;

/// The clouds, named once (gpuctl-clouds): knobs, credentials and offers say which one they mean.
pub use gpuctl_clouds::Provider;

/// One cloud's emulator, hosted by the sim server.
///
/// The server calls, for each request: [`claims`](Emulator::claims) on every emulator (the first that
/// claims it gets it), then [`tick`](Emulator::tick) so time-driven state is current, then applies
/// latency, the rate limit (answering with [`throttled`](Emulator::throttled)) and injected faults
/// (answering with [`server_error`](Emulator::server_error) or dropping the connection), and finally
/// [`handle`](Emulator::handle). Emulators keep their own state behind interior mutability; they never
/// sleep or read the wall clock (the time is `ctx.now()`).
pub trait Emulator: Send + Sync {
    /// The cloud this emulator is: what knobs, credentials and offers are matched against.
    fn provider(&self) -> Provider;

    /// Whether this request is for this cloud, judged by the cloud's own protocol markers
    /// (Tencent: `X-TC-Action` + TC3 scope service; Alibaba: `x-acs-action` or `Action`;
    /// JD: `/v1/regions/...` path + scope service). Must not verify signatures or mutate.
    fn claims(&self, req: &SimRequest) -> bool;

    /// The API name this request calls ("RunInstances", "createInstances"), used to key per-API
    /// knobs (rate limits, faults, latency). Only called on claimed requests.
    fn action(&self, req: &SimRequest) -> String;

    /// Answer the request: verify its signature, run the operation, render the cloud's response.
    fn handle(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse;

    /// The cloud's own throttling answer (e.g. Tencent `RequestLimitExceeded`, JD 429 `RATE_LIMIT`).
    fn throttled(&self, req: &SimRequest, ctx: &SimCtx) -> SimResponse;

    /// The cloud's answer to an internal failure with this HTTP status (injected 5xx fault).
    fn server_error(&self, req: &SimRequest, ctx: &SimCtx, status: u16) -> SimResponse;

    /// Everything this emulator holds (instances, disks, snapshots, images, ...) as JSON, with
    /// time-dependent fields (statuses) as of `ctx.now()`: the sim clock is the only time an
    /// emulator sees, so no emulator remembers when it last ticked.
    fn state(&self, ctx: &SimCtx) -> serde_json::Value;

    /// Forget all state (instances, tokens, ...). Knobs and credentials live in the ctx, not here.
    fn reset(&self);

    /// Move time-driven state to `ctx.now()`: boot transitions, auto-release, snapshot policies.
    /// Must be idempotent for the same `now`.
    fn tick(&self, ctx: &SimCtx);

    /// Points the public address of `instance_id` at `address` (the admin API's
    /// `POST /_sim/public_address`), so describe answers with it: how a test aims `gpuctl ssh` at a
    /// local sshd. The address it held goes back to the pool. `Ok(false)`: no instance of this cloud
    /// has that id; `Err`: the instance has no public address (created with `public_ip = false`).
    fn point_public_address(&self, instance_id: &str, address: &str) -> Result<bool, String>;

    /// Sets `instance_id`'s GPU utilization to `percent` from `from` onward (the admin API's
    /// `POST /_sim/gpu_usage`; the semantics are [`usage`]'s): what this cloud's monitoring API then
    /// answers. `Ok(false)`: no instance of this cloud has that id (the default: a cloud without a
    /// monitoring model).
    fn set_gpu_usage(
        &self,
        _instance_id: &str,
        _from: jiff::Timestamp,
        _percent: f64,
    ) -> Result<bool, String> {
        Ok(false)
    }

    /// The admin API's `POST /_sim/plant` (issue 15): make `p` (a disk, public IP, snapshot or file
    /// system) in this cloud's model as if the cloud had made it; answers its id. `Err`: this
    /// emulator cannot (a kind it does not model, an unknown instance to attach to).
    fn plant(&self, p: &Plant, _ctx: &SimCtx) -> Result<String, String> {
        Err(format!("{} cannot plant a {:?}", self.provider(), p.kind))
    }

    /// The admin API's `POST /_sim/reclaim`: the cloud marks spot instance `instance_id` for reclaim
    /// `notice` from now (`None`: the cloud's documented notice; its metadata service serves the
    /// termination time from then on) and
    /// terminates it when the sim clock passes that time. `Ok(None)`: no instance of this cloud has
    /// that id; `Ok(Some(t))`: marked, reclaimed at `t`; `Err`: not a spot instance, or already gone.
    fn reclaim(
        &self,
        _instance_id: &str,
        _notice: Option<jiff::SignedDuration>,
        _ctx: &SimCtx,
    ) -> Result<Option<jiff::Timestamp>, String> {
        Ok(None)
    }

    /// The metadata service as a program on `instance_id` sees it (`GET /latest/meta-data/…`, the
    /// local cloud serves it at `/_metadata/<provider>/<instance-id>/latest/…`: the real one knows its
    /// caller by source address, which loopback cannot tell apart). `path` starts at `/latest`.
    /// `None`: this cloud has no such instance (or no metadata service).
    fn metadata(
        &self,
        _instance_id: &str,
        _path: &str,
        _req: &SimRequest,
        _ctx: &SimCtx,
    ) -> Option<SimResponse> {
        None
    }
}
