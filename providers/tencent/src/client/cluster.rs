//! A cluster's placement and shared file system (issue 14): Tencent CFS and HPC clusters.

use gpuctl_cloud::services::Clusters;
use gpuctl_cloud::Provider;

use super::Client;

impl Clusters for Client {
    const CLUSTER_PROVIDER: Provider = Provider::Tencent;
}
