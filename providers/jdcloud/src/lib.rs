//! gpuctl-jdcloud: JD Cloud VM, Disk and billing (API version v1, paths `/v1/regions/{r}/...`).
//!
//! `api` holds the wire facts a client and the emulator share (error body, statuses, time formats);
//! `emulator` is the local cloud's JD Cloud: it verifies JDCLOUD3/JDCLOUD2 signatures, keeps
//! instances, disks, snapshots, images and snapshot policies, and answers as JD Cloud does.

pub mod api;
pub mod client;
pub mod emulator;
