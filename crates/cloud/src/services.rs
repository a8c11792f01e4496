//! [`Cloud`] in three parts, the way the clouds split their APIs into services: instances, disks and
//! snapshots, prices and stock, key pairs, images, networks, a cluster's placement and file systems, and
//! after the plan (issue 15) GPU usage, leftovers and bills. A client implements the parts with plain `async fn`s in its service files
//! (`client/<service>.rs`); the one blanket impl below boxes them into `Cloud`, so the engine can hold
//! clouds side by side as `dyn Cloud` and no client writes that boxing out again.

use std::future::Future;

use crate::cloud::{
    BoxFuture, Cloud, CloudError, CreateRequest, Created, DiskInfo, DiskKind, FileSystem, Filter, FsSpec,
    ImageInfo, Instance, KeyPair, MountTarget, NetKind, NetSpec, PlacementKind, PlacementSpec, Quote,
    SnapshotState, SshRules, Stock,
};
use crate::cost::{BillLine, BillQuery, GpuUsage, Leftover, LeftoverKind, UsageQuery};
use crate::provider::{BillingMode, Provider};

/// Creating, describing and releasing instances (see [`Cloud`] for what each call promises).
pub trait Instances: Send + Sync {
    const PROVIDER: Provider;

    fn create(&self, req: &CreateRequest) -> impl Future<Output = Result<Created, CloudError>> + Send;

    fn describe(
        &self,
        region: &str,
        filter: &Filter,
    ) -> impl Future<Output = Result<Vec<Instance>, CloudError>> + Send;

    fn terminate(
        &self,
        region: &str,
        instance_ids: &[String],
    ) -> impl Future<Output = Result<(), CloudError>> + Send;

    /// Clouds whose create carries the release time keep this default, which does nothing.
    fn set_auto_release(
        &self,
        _region: &str,
        _instance_id: &str,
        _at: jiff::Timestamp,
    ) -> impl Future<Output = Result<(), CloudError>> + Send {
        async { Ok(()) }
    }

    /// See [`Cloud::renewal_off`]: clouds whose terms end another way keep this refusal.
    fn renewal_off(
        &self,
        _region: &str,
        instance_id: &str,
    ) -> impl Future<Output = Result<(), CloudError>> + Send {
        let e = crate::cloud::no_renewal_api(Self::PROVIDER, instance_id);
        async move { Err(e) }
    }
}

/// An instance's cloud disks and their snapshots.
pub trait Disks: Send + Sync {
    fn disks(
        &self,
        region: &str,
        instance_id: &str,
    ) -> impl Future<Output = Result<Vec<(DiskKind, DiskInfo)>, CloudError>> + Send;

    fn snapshot(
        &self,
        region: &str,
        disk_id: &str,
        name: &str,
        client_token: &str,
    ) -> impl Future<Output = Result<String, CloudError>> + Send;

    fn snapshot_state(
        &self,
        region: &str,
        snapshot_id: &str,
    ) -> impl Future<Output = Result<SnapshotState, CloudError>> + Send;
}

/// The cloud's own prices and stock.
pub trait Prices: Send + Sync {
    fn quote(&self, req: &CreateRequest) -> impl Future<Output = Result<Quote, CloudError>> + Send;

    /// `None` (the default): this client does not ask, so stock is unknown.
    fn in_stock(
        &self,
        _region: &str,
        _zone: &str,
        _instance_type: &str,
    ) -> impl Future<Output = Result<Stock, CloudError>> + Send {
        async { Ok(None) }
    }
}

/// The account's SSH key pairs (public keys only).
pub trait KeyPairs: Send + Sync {
    fn find_key_pair(
        &self,
        region: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<KeyPair>, CloudError>> + Send;

    fn import_key_pair(
        &self,
        region: &str,
        name: &str,
        public_key: &str,
    ) -> impl Future<Output = Result<KeyPair, CloudError>> + Send;
}

/// The region's public images (issue 13's images by name).
pub trait Images: Send + Sync {
    fn public_images(&self, region: &str) -> impl Future<Output = Result<Vec<ImageInfo>, CloudError>> + Send;

    /// A custom image of the instance (see [`Cloud::create_image`]).
    fn create_image(
        &self,
        region: &str,
        instance_id: &str,
        name: &str,
        client_token: &str,
    ) -> impl Future<Output = Result<String, CloudError>> + Send;

    fn find_image(
        &self,
        region: &str,
        name: &str,
    ) -> impl Future<Output = Result<Option<String>, CloudError>> + Send;

    fn image_state(
        &self,
        region: &str,
        image_id: &str,
    ) -> impl Future<Output = Result<SnapshotState, CloudError>> + Send;
}

/// The networks gpuctl makes for `network = "auto"` (see [`Cloud::find_net`]). A client that does not
/// make networks keeps these defaults, which refuse with `gpuctl-unsupported`.
pub trait Networks: Send + Sync {
    const NET_PROVIDER: Provider;

    fn find_net(&self, _spec: &NetSpec) -> impl Future<Output = Result<Option<String>, CloudError>> + Send {
        let e = crate::cloud::no_network_api(Self::NET_PROVIDER, "find-network");
        async move { Err(e) }
    }

    fn create_net(&self, _spec: &NetSpec) -> impl Future<Output = Result<String, CloudError>> + Send {
        let e = crate::cloud::no_network_api(Self::NET_PROVIDER, "create-network");
        async move { Err(e) }
    }

    fn authorize_ssh(
        &self,
        _region: &str,
        _id: &str,
        _rules: &SshRules,
    ) -> impl Future<Output = Result<(), CloudError>> + Send {
        let e = crate::cloud::no_network_api(Self::NET_PROVIDER, "authorize-ssh");
        async move { Err(e) }
    }

    fn delete_net(
        &self,
        _region: &str,
        _kind: NetKind,
        _id: &str,
    ) -> impl Future<Output = Result<(), CloudError>> + Send {
        let e = crate::cloud::no_network_api(Self::NET_PROVIDER, "delete-network");
        async move { Err(e) }
    }
}

/// A cluster's placement groups and shared file systems (issue 14). A client that does not make them
/// keeps these defaults: no placement is offered, and file systems are refused with
/// `gpuctl-unsupported`.
pub trait Clusters: Send + Sync {
    const CLUSTER_PROVIDER: Provider;

    fn placement_kind(
        &self,
        _region: &str,
        _instance_type: &str,
        _billing: BillingMode,
    ) -> impl Future<Output = Result<Option<PlacementKind>, CloudError>> + Send {
        async { Ok(None) }
    }

    fn find_placement(
        &self,
        _spec: &PlacementSpec,
    ) -> impl Future<Output = Result<Option<String>, CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "find-placement");
        async move { Err(e) }
    }

    fn create_placement(
        &self,
        _spec: &PlacementSpec,
    ) -> impl Future<Output = Result<String, CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "create-placement");
        async move { Err(e) }
    }

    fn delete_placement(
        &self,
        _region: &str,
        _kind: PlacementKind,
        _id: &str,
    ) -> impl Future<Output = Result<(), CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "delete-placement");
        async move { Err(e) }
    }

    fn find_file_system(
        &self,
        _spec: &FsSpec,
    ) -> impl Future<Output = Result<Option<FileSystem>, CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "find-file-system");
        async move { Err(e) }
    }

    fn create_file_system(&self, _spec: &FsSpec) -> impl Future<Output = Result<String, CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "create-file-system");
        async move { Err(e) }
    }

    fn file_system(
        &self,
        _region: &str,
        _id: &str,
    ) -> impl Future<Output = Result<Option<FileSystem>, CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "describe-file-system");
        async move { Err(e) }
    }

    fn mount_target(
        &self,
        _spec: &FsSpec,
        _fs_id: &str,
    ) -> impl Future<Output = Result<MountTarget, CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "mount-target");
        async move { Err(e) }
    }

    fn delete_file_system(
        &self,
        _region: &str,
        _id: &str,
    ) -> impl Future<Output = Result<(), CloudError>> + Send {
        let e = crate::cloud::no_cluster_api(Self::CLUSTER_PROVIDER, "delete-file-system");
        async move { Err(e) }
    }
}

/// GPU utilization from the cloud's monitoring API (issue 15).
pub trait Usage: Instances {
    fn gpu_usage(&self, _q: &UsageQuery) -> impl Future<Output = Result<Vec<GpuUsage>, CloudError>> + Send {
        let e = crate::cloud::no_cost_api(Self::PROVIDER, "gpu-usage");
        async move { Err(e) }
    }
}

/// Disks, public IPs, snapshots and file systems that outlive instances (issue 15).
pub trait Leftovers: Instances {
    fn leftovers(
        &self,
        _region: &str,
        _kind: LeftoverKind,
    ) -> impl Future<Output = Result<Vec<Leftover>, CloudError>> + Send {
        let e = crate::cloud::no_cost_api(Self::PROVIDER, "leftovers");
        async move { Err(e) }
    }

    fn delete_leftover(
        &self,
        _region: &str,
        _kind: LeftoverKind,
        _id: &str,
    ) -> impl Future<Output = Result<(), CloudError>> + Send {
        let e = crate::cloud::no_cost_api(Self::PROVIDER, "delete-leftover");
        async move { Err(e) }
    }
}

/// The cloud's bill lines (issue 15).
pub trait Bills: Instances {
    fn bill_lines(&self, _q: &BillQuery) -> impl Future<Output = Result<Vec<BillLine>, CloudError>> + Send {
        let e = crate::cloud::no_cost_api(Self::PROVIDER, "bill-lines");
        async move { Err(e) }
    }
}

impl<T: Instances + Disks + Prices + KeyPairs + Images + Networks + Clusters + Usage + Leftovers + Bills>
    Cloud for T
{
    fn provider(&self) -> Provider {
        T::PROVIDER
    }

    fn create<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Created, CloudError>> {
        Box::pin(Instances::create(self, req))
    }

    fn describe<'a>(
        &'a self,
        region: &'a str,
        filter: &'a Filter,
    ) -> BoxFuture<'a, Result<Vec<Instance>, CloudError>> {
        Box::pin(Instances::describe(self, region, filter))
    }

    fn disks<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(DiskKind, DiskInfo)>, CloudError>> {
        Box::pin(Disks::disks(self, region, instance_id))
    }

    fn terminate<'a>(
        &'a self,
        region: &'a str,
        instance_ids: &'a [String],
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Instances::terminate(self, region, instance_ids))
    }

    fn snapshot<'a>(
        &'a self,
        region: &'a str,
        disk_id: &'a str,
        name: &'a str,
        client_token: &'a str,
    ) -> BoxFuture<'a, Result<String, CloudError>> {
        Box::pin(Disks::snapshot(self, region, disk_id, name, client_token))
    }

    fn snapshot_state<'a>(
        &'a self,
        region: &'a str,
        snapshot_id: &'a str,
    ) -> BoxFuture<'a, Result<SnapshotState, CloudError>> {
        Box::pin(Disks::snapshot_state(self, region, snapshot_id))
    }

    fn quote<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Quote, CloudError>> {
        Box::pin(Prices::quote(self, req))
    }

    fn in_stock<'a>(
        &'a self,
        region: &'a str,
        zone: &'a str,
        instance_type: &'a str,
    ) -> BoxFuture<'a, Result<Stock, CloudError>> {
        Box::pin(Prices::in_stock(self, region, zone, instance_type))
    }

    fn set_auto_release<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
        at: jiff::Timestamp,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Instances::set_auto_release(self, region, instance_id, at))
    }

    fn renewal_off<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Instances::renewal_off(self, region, instance_id))
    }

    fn find_key_pair<'a>(
        &'a self,
        region: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeyPair>, CloudError>> {
        Box::pin(KeyPairs::find_key_pair(self, region, name))
    }

    fn import_key_pair<'a>(
        &'a self,
        region: &'a str,
        name: &'a str,
        public_key: &'a str,
    ) -> BoxFuture<'a, Result<KeyPair, CloudError>> {
        Box::pin(KeyPairs::import_key_pair(self, region, name, public_key))
    }

    fn public_images<'a>(&'a self, region: &'a str) -> BoxFuture<'a, Result<Vec<ImageInfo>, CloudError>> {
        Box::pin(Images::public_images(self, region))
    }

    fn create_image<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
        name: &'a str,
        client_token: &'a str,
    ) -> BoxFuture<'a, Result<String, CloudError>> {
        Box::pin(Images::create_image(self, region, instance_id, name, client_token))
    }

    fn find_image<'a>(
        &'a self,
        region: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, CloudError>> {
        Box::pin(Images::find_image(self, region, name))
    }

    fn image_state<'a>(
        &'a self,
        region: &'a str,
        image_id: &'a str,
    ) -> BoxFuture<'a, Result<SnapshotState, CloudError>> {
        Box::pin(Images::image_state(self, region, image_id))
    }

    fn find_net<'a>(&'a self, spec: &'a NetSpec) -> BoxFuture<'a, Result<Option<String>, CloudError>> {
        Box::pin(Networks::find_net(self, spec))
    }

    fn create_net<'a>(&'a self, spec: &'a NetSpec) -> BoxFuture<'a, Result<String, CloudError>> {
        Box::pin(Networks::create_net(self, spec))
    }

    fn authorize_ssh<'a>(
        &'a self,
        region: &'a str,
        id: &'a str,
        rules: &'a SshRules,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Networks::authorize_ssh(self, region, id, rules))
    }

    fn delete_net<'a>(
        &'a self,
        region: &'a str,
        kind: NetKind,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Networks::delete_net(self, region, kind, id))
    }

    fn placement_kind<'a>(
        &'a self,
        region: &'a str,
        instance_type: &'a str,
        billing: BillingMode,
    ) -> BoxFuture<'a, Result<Option<PlacementKind>, CloudError>> {
        Box::pin(Clusters::placement_kind(self, region, instance_type, billing))
    }

    fn find_placement<'a>(
        &'a self,
        spec: &'a PlacementSpec,
    ) -> BoxFuture<'a, Result<Option<String>, CloudError>> {
        Box::pin(Clusters::find_placement(self, spec))
    }

    fn create_placement<'a>(&'a self, spec: &'a PlacementSpec) -> BoxFuture<'a, Result<String, CloudError>> {
        Box::pin(Clusters::create_placement(self, spec))
    }

    fn delete_placement<'a>(
        &'a self,
        region: &'a str,
        kind: PlacementKind,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Clusters::delete_placement(self, region, kind, id))
    }

    fn find_file_system<'a>(
        &'a self,
        spec: &'a FsSpec,
    ) -> BoxFuture<'a, Result<Option<FileSystem>, CloudError>> {
        Box::pin(Clusters::find_file_system(self, spec))
    }

    fn create_file_system<'a>(&'a self, spec: &'a FsSpec) -> BoxFuture<'a, Result<String, CloudError>> {
        Box::pin(Clusters::create_file_system(self, spec))
    }

    fn file_system<'a>(
        &'a self,
        region: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<FileSystem>, CloudError>> {
        Box::pin(Clusters::file_system(self, region, id))
    }

    fn mount_target<'a>(
        &'a self,
        spec: &'a FsSpec,
        fs_id: &'a str,
    ) -> BoxFuture<'a, Result<MountTarget, CloudError>> {
        Box::pin(Clusters::mount_target(self, spec, fs_id))
    }

    fn delete_file_system<'a>(
        &'a self,
        region: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Clusters::delete_file_system(self, region, id))
    }

    fn gpu_usage<'a>(&'a self, q: &'a UsageQuery) -> BoxFuture<'a, Result<Vec<GpuUsage>, CloudError>> {
        Box::pin(Usage::gpu_usage(self, q))
    }

    fn leftovers<'a>(
        &'a self,
        region: &'a str,
        kind: LeftoverKind,
    ) -> BoxFuture<'a, Result<Vec<Leftover>, CloudError>> {
        Box::pin(Leftovers::leftovers(self, region, kind))
    }

    fn delete_leftover<'a>(
        &'a self,
        region: &'a str,
        kind: LeftoverKind,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(Leftovers::delete_leftover(self, region, kind, id))
    }

    fn bill_lines<'a>(&'a self, q: &'a BillQuery) -> BoxFuture<'a, Result<Vec<BillLine>, CloudError>> {
        Box::pin(Bills::bill_lines(self, q))
    }
}
