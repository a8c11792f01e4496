//! Disks, public IPs, snapshots and file systems that outlive instances (issue 15). Not listed yet: the
//! trait's default refuses.

use gpuctl_cloud::services::Leftovers;

use super::Client;

impl Leftovers for Client {}
