//! A cluster's placement and shared file system (issue 14): JD Cloud 云文件服务 (zfs); JD vm has no low-latency placement.

use gpuctl_cloud::services::Clusters;
use gpuctl_cloud::Provider;

use super::Client;

impl Clusters for Client {
    const CLUSTER_PROVIDER: Provider = Provider::JdCloud;
}
