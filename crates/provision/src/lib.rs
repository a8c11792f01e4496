//! gpuctl-provision: turns a deployment spec into rented GPU instances and back.
//!
//! - [`spec`]: the TOML spec, parsed with positions (errors name file:line:column).
//! - [`apply`]: the engine: create/adopt/fall back/wait, release, snapshot, all concurrent.
//! - [`retry`]: pacing per provider API and bounded retries with backoff and jitter.
//! - [`boot`]: a pool's `env` rendered as each cloud's boot config (cloud-config, JD launch script).
//! - [`plan`]: spec + catalog + state → creates, keeps, releases, ¥/hour, totals per billing mode, budget.
//! - [`token`]: deterministic client tokens.
//! - [`public_ip`]: what a pool's public IP costs (per GB or per Mbps·hour), with its source.
//! - [`shared_price`]: what a shared file system costs per GB·month, with its source.
//! - [`pubkey`]: the user's SSH public key (never a private one): fingerprint and key-pair name.
//! - [`workflow`]: provision, destroy, release and clone as engine operations, each under its lock.
//! - [`cluster`]: a cluster pool's placement group and shared file system, made before its nodes, kept by `destroy` unless asked.
//! - [`network`]: `network = "auto"`: the zone's VPC, subnet and security group, found by tag or made, and deleted when unused.
//! - [`name`]: the deployment/pool name rule, and the names gpuctl makes (a clone's deployment).
//! - [`state`]: the SQLite store: intent log, resources, snapshots, apply lock.
//! - [`reclaim`]: spot instances the cloud reclaimed: recorded with the hours they cost, replaced under the next token generation.
//! - [`sweep`]: finding and releasing tagged instances no live record owns (`gpuctl sweep`).
//!
//! Knows no provider's wire format: each provider crate implements gpuctl-cloud's trait.

pub mod agent;
pub mod apply;
pub mod boot;
pub mod clock;
pub mod cluster;
pub mod cost;
pub mod image;
pub mod k3s;
pub mod name;
pub mod network;
pub mod plan;
pub mod pubkey;
pub mod public_ip;
pub mod reclaim;
pub mod retry;
pub mod shared_price;
pub mod spec;
pub mod state;
pub mod sweep;
pub mod token;
pub mod usage;
pub mod workflow;

// The trait, the transport and the clouds' facts live in gpuctl-cloud (the provider crates depend on it,
// not on this engine); re-exported so the engine's own `crate::cloud::…` paths read as before.
pub use gpuctl_cloud::NetworkIds;
pub use gpuctl_cloud::{cloud, http, provider};
pub use provider::{BillingMode, Provider};
