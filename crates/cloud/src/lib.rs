//! gpuctl-cloud: what the client side of every cloud shares, the client-side twin of gpuctl-simkit.
//!
//! - [`cloud`]: the trait each provider's client implements, and the error kinds the engine acts on.
//! - [`resource`]: the disks and network ids the trait speaks of.
//! - [`cost`]: GPU utilization, leftovers and bill lines (issue 15).
//! - [`provider`]: the three clouds and what their create APIs can buy.
//! - [`http`]: endpoints (overrides; plain http only to loopback) and the shared reqwest transport.
//!
//! The kit every client is built on:
//! - [`account`]: keys + endpoint + transport, with a `Debug` that prints no secret.
//! - [`send`]: sign → send → the cloud's parsed answer or a classified [`cloud::CloudError`]; a cloud
//!   plugs in its error envelope and classifier as a [`send::Dialect`].
//! - [`services`]: `Cloud` in three parts (instances, disks, prices) a client implements with plain
//!   `async fn`s; one blanket impl makes any client that has all three a `Cloud`.
//! - [`error`]: `CloudError` constructors (gpuctl's own codes are written once, there).
//! - [`json`]: field readers whose errors carry the JSON path.
//! - [`page`]: reading a listing to its end (offset, page-number and next-token styles).
//!
//! Knows no cloud's wire format: each provider crate plugs its own facts into the kit.

pub mod account;
pub mod cloud;
pub mod cost;
pub mod error;
pub mod http;
pub mod json;
pub mod page;
pub mod provider;
pub mod resource;
pub mod send;
pub mod services;

pub use account::Account;
pub use provider::{BillingMode, Provider};
pub use resource::{Disk, DiskCategory, NetworkIds, PublicIp, PublicIpBilling};
