//! One file per service, one function per operation: `cvm.rs` (instances, prices, images) and
//! `cbs.rs` (disks, snapshots, automatic snapshot policies), `keypair.rs` (CVM's SSH key pairs), `vpc.rs`
//! (VPCs, subnets, security groups: `network = "auto"`), `hpc.rs` (CVM's HPC clusters) and `cfs.rs` (CFS
//! file systems and their mount targets): a cluster's placement and shared storage (issue 14).

pub(crate) mod billing;
pub(crate) mod cbs;
pub(crate) mod cfs;
pub(crate) mod cvm;
pub(crate) mod hpc;
pub(crate) mod keypair;
pub(crate) mod leftover;
pub(crate) mod monitor;
pub(crate) mod vpc;
