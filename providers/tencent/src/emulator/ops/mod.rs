//! One file per service, one function per operation: `cvm.rs` (instances, prices, images) and
//! `cbs.rs` (disks, snapshots, automatic snapshot policies), `keypair.rs` (CVM's SSH key pairs), `vpc.rs`
//! (VPCs, subnets, security groups: `network = "auto"`).

pub(crate) mod cbs;
pub(crate) mod cvm;
pub(crate) mod keypair;
pub(crate) mod vpc;
