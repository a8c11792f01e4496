//! One file per service, one function per operation: `cvm.rs` (instances, prices, images) and
//! `cbs.rs` (disks, snapshots, automatic snapshot policies).

pub(crate) mod cbs;
pub(crate) mod cvm;
