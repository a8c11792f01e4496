//! gpuctl-cloud: what the client side of every cloud shares, the client-side twin of gpuctl-simkit.
//!
//! - [`cloud`]: the trait each provider's client implements, and the error kinds the engine acts on.
//! - [`resource`]: the disks and network ids the trait speaks of.
//! - [`provider`]: the three clouds and what their create APIs can buy.
//! - [`http`]: endpoints (overrides; plain http only to loopback) and the shared reqwest transport.
//!
//! Knows no cloud's wire format: each provider crate plugs its own facts into the kit.

pub mod cloud;
pub mod http;
pub mod provider;
pub mod resource;

pub use provider::{BillingMode, Provider};
pub use resource::{Disk, DiskCategory, NetworkIds};
