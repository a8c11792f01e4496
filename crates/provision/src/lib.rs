//! gpuctl-provision: turns a deployment spec into rented GPU instances and back.
//!
//! - [`spec`]: the TOML spec, parsed with positions (errors name file:line:column).
//! - [`provider`]: the three clouds and what their APIs can buy.
//! - [`state`]: the SQLite store: intent log, resources, snapshots, apply lock.
//!
//! Knows no provider's wire format: each provider crate implements the cloud trait.

pub mod provider;
pub mod spec;
pub mod state;

pub use provider::{BillingMode, Provider};
