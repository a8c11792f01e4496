//! gpuctl-provision: turns a deployment spec into rented GPU instances and back.
//!
//! - [`spec`]: the TOML spec, parsed with positions (errors name file:line:column).
//! - [`provider`]: the three clouds and what their APIs can buy.
//! - [`apply`]: the engine: create/adopt/fall back/wait, release, snapshot, all concurrent.
//! - [`retry`]: pacing per provider API and bounded retries with backoff and jitter.
//! - [`http`]: endpoints (overrides; plain http only to loopback) and the shared reqwest transport.
//! - [`cloud`]: the trait each provider's client implements, and the error kinds the engine acts on.
//! - [`plan`]: spec + catalog + state → creates, keeps, releases, ¥/hour, totals per billing mode, budget.
//! - [`token`]: deterministic client tokens.
//! - [`workflow`]: provision, destroy, release and clone as engine operations, each under its lock.
//! - [`name`]: the deployment/pool name rule, and the names gpuctl makes (a clone's deployment).
//! - [`state`]: the SQLite store: intent log, resources, snapshots, apply lock.
//! - [`sweep`]: finding and releasing tagged instances no live record owns (`gpuctl sweep`).
//!
//! Knows no provider's wire format: each provider crate implements the cloud trait.

pub mod apply;
pub mod cloud;
pub mod http;
pub mod name;
pub mod plan;
pub mod provider;
pub mod retry;
pub mod spec;
pub mod state;
pub mod sweep;
pub mod token;
pub mod workflow;

pub use provider::{BillingMode, Provider};
