//! gpuctl-alibaba: Alibaba Cloud ECS (API version 2014-05-26).
//!
//! `api` holds the wire facts a client and the emulator share (version, error body, error codes);
//! `emulator` is the local cloud's ECS: it verifies signatures, keeps instances, disks, snapshots,
//! images and automatic snapshot policies, and answers as ECS does.

// serde_json's `json!` recurses once per token: an instance as DescribeInstances renders it is deeper
// than the default limit allows.
#![recursion_limit = "256"]

pub mod api;
pub mod client;
pub mod emulator;
