//! GPU utilization from the cloud's monitoring API (issue 15). Not read yet: the trait's default refuses.

use gpuctl_cloud::services::Usage;

use super::Client;

impl Usage for Client {}
