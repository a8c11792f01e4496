//! gpuctl-tencent: Tencent Cloud CVM + CBS (API version 2017-03-12).
//!
//! `api` holds the wire facts a client and the emulator share (hosts, version, error envelope,
//! error codes); `emulator` is the local cloud's CVM and CBS. The client side (the provisioner's
//! cloud trait) will live next to them in `client*.rs`.

// The emulator's responses are large `json!` literals.
#![recursion_limit = "256"]

pub mod api;
pub mod client;
pub mod emulator;
