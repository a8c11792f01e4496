//! The cloud trait: what the provisioner needs from a cloud, in the users' words, with no wire format.
//! Each provider crate implements it (signing, HTTP, its error codes) and classifies its errors into
//! [`ErrorKind`] once, so the engine decides retry / fall back / stop without knowing any cloud.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use crate::cost::{BillLine, BillQuery, GpuUsage, Leftover, LeftoverKind, UsageQuery};
use crate::provider::{BillingMode, Provider};
use crate::resource::{Disk, NetworkIds, PublicIp};

/// The trait's futures are boxed so clouds can be held as `dyn Cloud` side by side.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Tag keys gpuctl puts on everything it creates, so a resource can be found without the state store.
pub const TAG_DEPLOYMENT: &str = "gpuctl-deployment";
pub const TAG_POOL: &str = "gpuctl-pool";
pub const TAG_TOKEN: &str = "gpuctl-token";

/// One instance to create. The client token makes the call idempotent: the cloud answers a repeat
/// with the instance it already made.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CreateRequest {
    pub client_token: String,
    /// Instance name shown in the console: `<deployment>-<pool>-<index>`.
    pub name: String,
    pub region: String,
    pub zone: String,
    pub instance_type: String,
    pub billing: BillingMode,
    /// Prepaid units (weeks or months) for prepaid modes.
    pub term: u32,
    pub spot_max_price: Option<f64>,
    pub image_id: String,
    pub system_disk: Disk,
    pub data_disks: Vec<Disk>,
    /// `None`: the account's default network.
    pub network: Option<NetworkIds>,
    /// The low-latency placement group a cluster's node joins (issue 14): Tencent `HpcClusterId`,
    /// Alibaba `DeploymentSetId` (see [`PlacementKind`]); `None` for everything else.
    pub placement: Option<String>,
    pub login_key: Option<String>,
    /// A public IP for the instance; `None`: reachable only inside its network.
    pub public_ip: Option<PublicIp>,
    /// UTC release time for pay-as-you-go instances.
    pub auto_release_at: Option<jiff::Timestamp>,
    pub tags: BTreeMap<String, String>,
    pub user_data: Option<String>,
    /// The instance role whose temporary credentials the node agent reads from the metadata service
    /// (issue 15): Tencent `CamRoleName`, Alibaba `RamRoleName`; JD has none. Left out of the request's
    /// serialized form when absent, so the client tokens of pools without one stay as they were.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instance_role: Option<String>,
    /// Ask the cloud to check (stock, quota, parameters) without creating.
    pub dry_run: bool,
}

/// What a create returned.
#[derive(Debug, Clone, PartialEq)]
pub struct Created {
    pub instance_id: String,
    pub request_id: Option<String>,
}

/// Instance life as the engine needs it; each client maps its cloud's states.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum InstanceState {
    Pending,
    Running,
    Stopping,
    Stopped,
    Terminating,
    /// Gone, or failed to launch and cleaned up by the cloud.
    Terminated,
    /// The launch failed (Tencent LAUNCH_FAILED, JD error).
    Failed,
    /// A state the client does not map, kept verbatim.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct DiskInfo {
    pub disk_id: String,
    #[serde(flatten)]
    pub disk: Disk,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum DiskKind {
    System,
    Data,
}

impl DiskKind {
    pub fn as_str(self) -> &'static str {
        match self {
            DiskKind::System => "system",
            DiskKind::Data => "data",
        }
    }
}

/// Puts an instance's disks in the one order every client answers `Disks::disks` in: the system disk
/// first, then the data disks by id. The clouds list disks in their own orders (CBS and ECS by
/// creation, JD by attachment); the engine snapshots and reports in this order, so a clone or a
/// release plan reads the same whichever cloud it came from.
pub fn system_disk_first(disks: &mut [(DiskKind, DiskInfo)]) {
    disks.sort_by(|(ka, a), (kb, b)| {
        (*ka != DiskKind::System, &a.disk_id).cmp(&(*kb != DiskKind::System, &b.disk_id))
    });
}

/// An instance as the cloud describes it: enough to adopt it, wait for it, and clone it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Instance {
    pub instance_id: String,
    pub name: Option<String>,
    pub region: String,
    pub zone: String,
    pub instance_type: String,
    pub state: InstanceState,
    pub billing: Option<BillingMode>,
    pub image_id: Option<String>,
    pub system_disk: Option<DiskInfo>,
    pub data_disks: Vec<DiskInfo>,
    pub network: Option<NetworkIds>,
    pub login_key: Option<String>,
    pub public_ip: Option<String>,
    pub private_ip: Option<String>,
    pub auto_release_at: Option<String>,
    /// When the cloud says the instance was created, as an RFC 3339 UTC timestamp; `None` when it does not say.
    pub launched_at: Option<String>,
    /// When a prepaid term ends, as an RFC 3339 UTC timestamp; `None` for pay-as-you-go, or when the
    /// cloud does not say. A term that cannot be ended early bills until then.
    pub expires_at: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// The cloud says this spot instance is being reclaimed (issue 15): Alibaba's `Recycling`
    /// operation lock. Tencent's and JD's describe answers carry no such sign (their notice is only
    /// in the instance's metadata service), so there it stays `false` until the instance is gone.
    pub reclaim_notice: bool,
}

/// A public image as the cloud's image API lists it (issue 13: `image = "ubuntu-22.04"`). The clouds
/// say the OS in their own words (Tencent `Platform` + `OsName`, Alibaba `Platform` + `OSNameEn`, JD
/// `platform` + `osVersion`); none has a field for a preinstalled NVIDIA driver, so `driver`/`cuda`
/// come from the image's name where the cloud names its GPU images by them (see each client).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImageInfo {
    pub id: String,
    /// The cloud's display name, e.g. `Ubuntu Server 22.04 LTS 64bit`.
    pub name: String,
    /// The distribution as the cloud says it (`Ubuntu`, `CentOS`, `TencentOS`, `Aliyun`…).
    pub platform: String,
    /// The OS and version in the cloud's words (`Ubuntu Server 22.04 LTS 64bit`, `22.04`…).
    pub os: String,
    /// RFC 3339 creation time as the cloud gave it; `None` when it did not say.
    pub created: Option<String>,
    /// The NVIDIA driver the image ships, when its name says.
    pub driver: Option<String>,
    /// The CUDA the image ships, when its name says.
    pub cuda: Option<String>,
}

impl ImageInfo {
    /// An image as a client read it; the driver and CUDA are taken from its name ([`gpu_from_name`]).
    pub fn new(id: String, name: String, platform: String, os: String, created: Option<String>) -> ImageInfo {
        let (driver, cuda) = gpu_from_name(&name);
        ImageInfo { id, name, platform, os, created, driver, cuda }
    }
}

/// The driver and CUDA versions a GPU image's name carries, by the words `driver`/`GPU` and `CUDA`
/// each followed by a version (`… GPU Driver 535.161.07 CUDA 12.2`, `…_gpu_driver_535_cuda_12_2…`).
/// The image APIs have no field for them (see [`ImageInfo`]), so the name is what the clouds say.
pub fn gpu_from_name(name: &str) -> (Option<String>, Option<String>) {
    let words: Vec<String> = name
        .split(|c: char| c.is_whitespace() || c == '-' || c == '(' || c == ')' || c == ',')
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
        .collect();
    let version_after = |key: &str| {
        words.iter().position(|w| w == key).and_then(|i| words.get(i + 1)).and_then(|v| {
            let ok = v.split('.').all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
            ok.then(|| v.clone())
        })
    };
    (version_after("driver"), version_after("cuda"))
}

/// A key pair as the cloud lists it (issue 13: `login_key = { public_key = … }`). gpuctl only imports
/// public keys; a cloud's private half is never asked for or kept.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct KeyPair {
    /// What the create call names the key by: Tencent's `skey-…` id, Alibaba's and JD's key name.
    pub id: String,
    pub name: String,
}

impl KeyPair {
    /// A key pair of a cloud that names key pairs by their name (Alibaba, JD): the name is the id.
    pub fn named(name: &str) -> KeyPair {
        KeyPair { id: name.to_owned(), name: name.to_owned() }
    }
}

/// The pieces of a network gpuctl makes for `network = "auto"` (issue 13), in the order they are
/// created; they are deleted in the reverse order (a cloud refuses deleting a VPC with subnets).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NetKind {
    Vpc,
    Subnet,
    SecurityGroup,
}

impl NetKind {
    pub const ALL: [NetKind; 3] = [NetKind::Vpc, NetKind::Subnet, NetKind::SecurityGroup];

    pub fn as_str(self) -> &'static str {
        match self {
            NetKind::Vpc => "vpc",
            NetKind::Subnet => "subnet",
            NetKind::SecurityGroup => "security_group",
        }
    }

    pub fn parse(s: &str) -> Option<NetKind> {
        NetKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    /// A short name for client tokens, which the clouds bound (Alibaba: 64 characters).
    pub fn short(self) -> &'static str {
        match self {
            NetKind::Vpc => "vpc",
            NetKind::Subnet => "subnet",
            NetKind::SecurityGroup => "sg",
        }
    }
}

/// One network piece to find or create. `name` is derived from deployment-independent facts (the
/// zone), and `tags` carry gpuctl's `gpuctl-network` tag, so another run or another deployment finds
/// it again by tag, with or without the state store.
#[derive(Debug, Clone, PartialEq)]
pub struct NetSpec {
    pub kind: NetKind,
    pub region: String,
    pub zone: String,
    pub name: String,
    /// The VPC a subnet or (where the cloud ties it to one) a security group belongs to.
    pub vpc: Option<String>,
    /// The IPv4 range of a VPC or subnet.
    pub cidr: Option<String>,
    pub tags: BTreeMap<String, String>,
    /// A client token for the clouds whose create takes one (the engine records it in the intent).
    pub client_token: String,
}

/// The low-latency placement a cloud offers a cluster's nodes (issue 14), where it offers one.
/// Ordinary GPU types on Tencent and every JD `vm` type have none: their cluster is one zone and one
/// subnet (docs/research/clusters.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PlacementKind {
    /// Tencent `CreateHpcCluster`: required by, and only allowed for, high-performance computing (HCC)
    /// types (tccli 3.1.189.1 `cvm/v20170312/api.json` RunInstancesRequest.HpcClusterId).
    HpcCluster,
    /// Alibaba `CreateDeploymentSet` with `Strategy=LowLatency`: one network topology in one zone, at
    /// most 20 instances, no spot (alibabacloud-ecs20140526 7.11.8; the deployment-set limits page).
    LowLatencySet,
}

impl PlacementKind {
    pub const ALL: [PlacementKind; 2] = [PlacementKind::HpcCluster, PlacementKind::LowLatencySet];

    pub fn parse(s: &str) -> Option<PlacementKind> {
        PlacementKind::ALL.into_iter().find(|k| k.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            PlacementKind::HpcCluster => "hpc_cluster",
            PlacementKind::LowLatencySet => "low_latency_set",
        }
    }

    /// In the words of the cloud's console, for plans and errors.
    pub fn describe(self) -> &'static str {
        match self {
            PlacementKind::HpcCluster => "an HPC cluster (高性能计算集群)",
            PlacementKind::LowLatencySet => "a low-latency deployment set (部署集 LowLatency)",
        }
    }
}

/// One placement group to find or create: one per cluster pool, in the cluster's zone. `name` is the
/// deployment's and pool's, so a run killed after the create finds it again by name (Tencent's
/// CreateHpcCluster takes no client token).
#[derive(Debug, Clone, PartialEq)]
pub struct PlacementSpec {
    pub kind: PlacementKind,
    pub region: String,
    pub zone: String,
    pub name: String,
    pub tags: BTreeMap<String, String>,
    pub client_token: String,
}

/// The shared file system's tier, in the users' words; each client maps it (capacity: Tencent CFS
/// 通用标准型 `SD`, Alibaba NAS 通用型 `Capacity`, JD 云文件服务 容量型 `std1`; performance: Tencent `HP`,
/// Alibaba `Performance`, JD 通用型 `gp1`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum FsTier {
    /// The cheapest per GB: data sets and checkpoints read in large sequential blocks.
    Capacity,
    /// Lower latency and more throughput per GB, at a higher price.
    Performance,
}

impl FsTier {
    pub const ALL: [FsTier; 2] = [FsTier::Capacity, FsTier::Performance];

    pub fn parse(s: &str) -> Option<FsTier> {
        FsTier::ALL.into_iter().find(|t| t.as_str() == s)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            FsTier::Capacity => "capacity",
            FsTier::Performance => "performance",
        }
    }
}

/// One shared NFS file system to find or create for a cluster (issue 14), reachable from `subnet`
/// of `vpc` in `zone`. Found again by `name` (and the gpuctl tags where the cloud takes them) before
/// every create.
#[derive(Debug, Clone, PartialEq)]
pub struct FsSpec {
    pub region: String,
    pub zone: String,
    pub name: String,
    pub tier: FsTier,
    pub vpc: String,
    pub subnet: String,
    pub tags: BTreeMap<String, String>,
    pub client_token: String,
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FsState {
    Creating,
    /// Ready for mount targets and mounts.
    Available,
    Failed,
    Deleting,
    /// A state the client does not map, kept verbatim.
    Other(String),
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct FileSystem {
    pub id: String,
    pub name: String,
    pub zone: Option<String>,
    pub state: FsState,
    pub tags: BTreeMap<String, String>,
}

/// Where nodes mount a file system from: what `mount -t nfs <address>:<path>` takes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct MountTarget {
    /// The cloud's id of the mount target (Alibaba names them by their domain).
    pub id: String,
    /// An IP address or a domain name inside the VPC.
    pub address: String,
    /// The export to mount: `/` on Tencent CFS and Alibaba NAS (NFSv4), `/cfs` on JD (its mount
    /// guide: "挂载目标的目录为10.0.0.30:/cfs").
    pub path: String,
    /// Ready to mount (Tencent `available`, Alibaba `Active`, JD a mount target that is listed).
    pub ready: bool,
}

/// A security group's ingress rules as gpuctl asks for them: tcp/22 from these CIDRs, and every
/// protocol from members of the group itself.
#[derive(Debug, Clone, PartialEq)]
pub struct SshRules {
    pub ssh_from: Vec<String>,
}

/// Which instances to describe.
#[derive(Debug, Clone, PartialEq)]
pub enum Filter {
    Ids(Vec<String>),
    /// Instances carrying this tag (finds gpuctl's resources without the state store).
    Tag {
        key: String,
        value: String,
    },
    /// Instances carrying a tag with this key, whatever its value (`gpuctl sweep`: every deployment's
    /// instances, recorded or not).
    TagKey(String),
}

#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum SnapshotState {
    Creating,
    Available,
    Failed,
}

/// A price the cloud quoted for one instance of a create request.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Quote {
    /// ¥ per hour for pay-as-you-go, else the price of the whole term asked for.
    pub cny: f64,
    pub per_hour: bool,
    pub request_id: Option<String>,
}

/// Whether an instance type is on sale in a zone now, with the request id of the answer that said so;
/// `None`: this client does not ask, so stock is unknown.
pub type Stock = Option<(bool, Option<String>)>;

/// The seven kinds of failure the engine acts on. Each provider's classifier maps its codes here.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorKind {
    /// Rate-limited: retry later with the same client token.
    Throttled,
    /// 5xx, timeouts, dropped connections: retry with the same client token.
    Transient,
    /// The type/zone is sold out: fall back to the next candidate (new token).
    StockOut,
    Quota,
    Auth,
    Invalid,
    NotFound,
}

impl ErrorKind {
    pub fn retryable(self) -> bool {
        matches!(self, ErrorKind::Throttled | ErrorKind::Transient)
    }
    pub fn as_str(self) -> &'static str {
        match self {
            ErrorKind::Throttled => "throttled",
            ErrorKind::Transient => "transient",
            ErrorKind::StockOut => "stock-out",
            ErrorKind::Quota => "quota",
            ErrorKind::Auth => "auth",
            ErrorKind::Invalid => "invalid",
            ErrorKind::NotFound => "not-found",
        }
    }
}

/// A failed cloud call, for people: the cloud's own code, message and request id. Never holds a secret
/// (clients build it from the response body, never from the request they signed).
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CloudError {
    pub provider: Provider,
    pub action: String,
    pub kind: ErrorKind,
    /// The cloud's error code (`ResourceInsufficient.SpecifiedInstanceType`, `Throttling.User`, `RATE_LIMIT`),
    /// or gpuctl's own (`http-timeout`) when no answer came.
    pub code: String,
    pub message: String,
    pub request_id: Option<String>,
    /// How long the cloud asked us to wait, when it said.
    #[serde(skip)]
    pub retry_after: Option<Duration>,
}

impl fmt::Display for CloudError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} failed ({}): {}: {}",
            self.provider,
            self.action,
            self.kind.as_str(),
            self.code,
            self.message
        )?;
        if let Some(id) = &self.request_id {
            write!(f, " (request id {id})")?;
        }
        Ok(())
    }
}

impl std::error::Error for CloudError {}

/// One cloud account, as the provisioner uses it. Implemented by each provider crate's client.
pub trait Cloud: Send + Sync {
    fn provider(&self) -> Provider;

    /// Creates one instance (idempotent by `req.client_token`). With `req.dry_run`, checks and creates nothing.
    fn create<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Created, CloudError>>;

    fn describe<'a>(
        &'a self,
        region: &'a str,
        filter: &'a Filter,
    ) -> BoxFuture<'a, Result<Vec<Instance>, CloudError>>;

    /// The instance's cloud disks, system disk first (for snapshots and clones; `describe` leaves them out
    /// where the cloud needs a second call for them).
    fn disks<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
    ) -> BoxFuture<'a, Result<Vec<(DiskKind, DiskInfo)>, CloudError>>;

    /// Asks for termination; the engine then describes until the instances are gone.
    fn terminate<'a>(
        &'a self,
        region: &'a str,
        instance_ids: &'a [String],
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    /// Snapshots one cloud disk; returns the snapshot id (idempotent by `client_token`).
    fn snapshot<'a>(
        &'a self,
        region: &'a str,
        disk_id: &'a str,
        name: &'a str,
        client_token: &'a str,
    ) -> BoxFuture<'a, Result<String, CloudError>>;

    fn snapshot_state<'a>(
        &'a self,
        region: &'a str,
        snapshot_id: &'a str,
    ) -> BoxFuture<'a, Result<SnapshotState, CloudError>>;

    /// The cloud's own price for one instance of `req` (Tencent InquiryPriceRunInstances, Alibaba
    /// DescribePrice, JD calculateTotalPrice).
    fn quote<'a>(&'a self, req: &'a CreateRequest) -> BoxFuture<'a, Result<Quote, CloudError>>;

    /// Whether `instance_type` is on sale in `zone` now (Tencent DescribeZoneInstanceConfigInfos, Alibaba
    /// DescribeAvailableResource, JD describeInstanceTypes), with the request id. `None`: this client does
    /// not ask (the default), so stock is unknown.
    fn in_stock<'a>(
        &'a self,
        _region: &'a str,
        _zone: &'a str,
        _instance_type: &'a str,
    ) -> BoxFuture<'a, Result<Stock, CloudError>> {
        Box::pin(async { Ok(None) })
    }

    /// Sets the release time of an existing instance. The engine calls it when an instance it wants
    /// released at `at` is described without a release time: a cloud that sets it apart from the create
    /// (JD: createInstances, then modifyInstanceReleaseTime) can lose that second call while the instance
    /// lives on, billed. Clouds whose create carries the release time keep this default, which does nothing.
    fn set_auto_release<'a>(
        &'a self,
        _region: &'a str,
        _instance_id: &'a str,
        _at: jiff::Timestamp,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(async { Ok(()) })
    }

    /// Turns automatic renewal off for a prepaid instance, so its term ends at its expiry and is not
    /// bought again. The engine calls it for a release the cloud cannot carry out before the term ends
    /// ([`crate::provider::EarlyEnd::None`]); a cloud with another way out of a term keeps the default,
    /// which refuses (nothing calls it there).
    fn renewal_off<'a>(
        &'a self,
        _region: &'a str,
        instance_id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>> {
        Box::pin(async move { Err(no_renewal_api(self.provider(), instance_id)) })
    }

    /// The account's key pair called `name` in `region`, or `None` (Tencent DescribeKeyPairs, Alibaba
    /// DescribeKeyPairs, JD describeKeypairs). The engine looks a key up by its name before importing
    /// it, so a re-run, or a run after a crash between the import and its record, adopts it.
    fn find_key_pair<'a>(
        &'a self,
        region: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<KeyPair>, CloudError>>;

    /// The region's public (the cloud's own) images, every page.
    fn public_images<'a>(&'a self, region: &'a str) -> BoxFuture<'a, Result<Vec<ImageInfo>, CloudError>>;

    /// Makes a custom image of the instance's system disk (Tencent/Alibaba CreateImage, JD
    /// createImage), named `name` and carrying gpuctl's token tag where the cloud takes tags; returns
    /// its id. The image is `Creating` until [`Cloud::image_state`] says `Available`.
    fn create_image<'a>(
        &'a self,
        region: &'a str,
        instance_id: &'a str,
        name: &'a str,
        client_token: &'a str,
    ) -> BoxFuture<'a, Result<String, CloudError>>;

    /// The custom image named `name` (gpuctl's names are unique per create), or `None`: found before
    /// each create, so a create whose answer was lost (or a run killed after it) is adopted, not
    /// made twice — Tencent's and JD's creates take no client token.
    fn find_image<'a>(
        &'a self,
        region: &'a str,
        name: &'a str,
    ) -> BoxFuture<'a, Result<Option<String>, CloudError>>;

    /// Where a custom image stands (the same three states as a snapshot).
    fn image_state<'a>(
        &'a self,
        region: &'a str,
        image_id: &'a str,
    ) -> BoxFuture<'a, Result<SnapshotState, CloudError>>;

    /// Imports an OpenSSH public key line (`type base64`) as the key pair `name` (Tencent/Alibaba
    /// ImportKeyPair, JD importKeypair).
    fn import_key_pair<'a>(
        &'a self,
        region: &'a str,
        name: &'a str,
        public_key: &'a str,
    ) -> BoxFuture<'a, Result<KeyPair, CloudError>>;

    /// The live network piece tagged like `spec` (its `gpuctl-network` tag), or `None` (issue 13,
    /// `network = "auto"`). Looked up before every create: several of the clouds' creates take no
    /// client token, so a run killed after a create adopts what it made instead of making a second.
    fn find_net<'a>(&'a self, spec: &'a NetSpec) -> BoxFuture<'a, Result<Option<String>, CloudError>>;

    /// Creates the piece; answers its id.
    fn create_net<'a>(&'a self, spec: &'a NetSpec) -> BoxFuture<'a, Result<String, CloudError>>;

    /// Adds to security group `id` the rules of `rules` it does not hold yet.
    fn authorize_ssh<'a>(
        &'a self,
        region: &'a str,
        id: &'a str,
        rules: &'a SshRules,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    /// Deletes the piece. A piece already gone is `ErrorKind::NotFound`.
    fn delete_net<'a>(
        &'a self,
        region: &'a str,
        kind: NetKind,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    /// The low-latency placement the cloud offers `instance_type` billed `billing` (issue 14), or
    /// `None`: the cluster is one zone and one subnet, nothing more.
    fn placement_kind<'a>(
        &'a self,
        region: &'a str,
        instance_type: &'a str,
        billing: BillingMode,
    ) -> BoxFuture<'a, Result<Option<PlacementKind>, CloudError>>;

    /// The placement group named `spec.name` in its zone, or `None`.
    fn find_placement<'a>(
        &'a self,
        spec: &'a PlacementSpec,
    ) -> BoxFuture<'a, Result<Option<String>, CloudError>>;

    /// Creates the placement group; answers its id.
    fn create_placement<'a>(&'a self, spec: &'a PlacementSpec) -> BoxFuture<'a, Result<String, CloudError>>;

    /// Deletes an empty placement group. One already gone is `ErrorKind::NotFound`.
    fn delete_placement<'a>(
        &'a self,
        region: &'a str,
        kind: PlacementKind,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    /// The live file system named `spec.name`, or `None` (looked up before every create).
    fn find_file_system<'a>(
        &'a self,
        spec: &'a FsSpec,
    ) -> BoxFuture<'a, Result<Option<FileSystem>, CloudError>>;

    /// Creates the file system (Tencent: with its mount target in `spec.subnet`); answers its id.
    fn create_file_system<'a>(&'a self, spec: &'a FsSpec) -> BoxFuture<'a, Result<String, CloudError>>;

    /// The file system `id`, or `None` when it is gone.
    fn file_system<'a>(
        &'a self,
        region: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<Option<FileSystem>, CloudError>>;

    /// The file system's mount target in `spec.subnet`, created when there is none (Alibaba
    /// CreateMountTarget, JD createMountTarget; Tencent made it with the file system). Called until
    /// the answer is `ready`.
    fn mount_target<'a>(
        &'a self,
        spec: &'a FsSpec,
        fs_id: &'a str,
    ) -> BoxFuture<'a, Result<MountTarget, CloudError>>;

    /// Deletes the file system and its data, mount targets first. The engine then calls
    /// [`Cloud::file_system`] until it is gone. One already gone is `ErrorKind::NotFound`.
    fn delete_file_system<'a>(
        &'a self,
        region: &'a str,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    // --- Usage (issue 15): the monitoring API ---

    /// GPU utilization of `q.instance_ids` over the window (Tencent GetMonitorData, Alibaba
    /// DescribeMetricList, JD describeMetricData), one [`GpuUsage`] per instance asked for.
    fn gpu_usage<'a>(&'a self, q: &'a UsageQuery) -> BoxFuture<'a, Result<Vec<GpuUsage>, CloudError>>;

    // --- Leftovers (issue 15): what bills after the instances are gone ---

    /// The resources of `kind` in `region` that may be left over: disks attached to nothing, public
    /// IPs bound to nothing, every snapshot, every file system (tagged or not; the engine judges).
    fn leftovers<'a>(
        &'a self,
        region: &'a str,
        kind: LeftoverKind,
    ) -> BoxFuture<'a, Result<Vec<Leftover>, CloudError>>;

    /// Deletes one leftover. One already gone is `ErrorKind::NotFound`.
    fn delete_leftover<'a>(
        &'a self,
        region: &'a str,
        kind: LeftoverKind,
        id: &'a str,
    ) -> BoxFuture<'a, Result<(), CloudError>>;

    // --- Bills (issue 15) ---

    /// Every bill line of the month (all pages), for `q.resource_ids` when given.
    fn bill_lines<'a>(&'a self, q: &'a BillQuery) -> BoxFuture<'a, Result<Vec<BillLine>, CloudError>>;
}

/// The refusal of a cloud client that does not read this cost-control API yet (issue 15).
pub fn no_cost_api(provider: Provider, action: &str) -> CloudError {
    CloudError::unsupported(provider, action, format!("gpuctl does not read {action} on {provider} yet"))
}

/// The refusal of a cloud client that does not make placement groups or file systems yet.
pub fn no_cluster_api(provider: Provider, action: &str) -> CloudError {
    CloudError::unsupported(
        provider,
        action,
        format!("gpuctl does not make placement groups or shared file systems on {provider} yet"),
    )
}

/// The refusal of a cloud client that does not make networks yet (see [`Cloud::find_net`]).
pub fn no_network_api(provider: Provider, action: &str) -> CloudError {
    CloudError::unsupported(
        provider,
        action,
        format!(
            "gpuctl does not make networks on {provider} yet: use network = \"default\" or network = {{ vpc, subnet, security_groups }}"
        ),
    )
}

/// The refusal of a cloud client that has no renewal call of its own (see [`Cloud::renewal_off`]).
pub fn no_renewal_api(provider: Provider, instance_id: &str) -> CloudError {
    CloudError::unsupported(
        provider,
        "renewal-off",
        format!("gpuctl does not turn renewal off on {provider} ({instance_id}): its terms end another way"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::resource::DiskCategory;

    fn disk(kind: DiskKind, id: &str) -> (DiskKind, DiskInfo) {
        (
            kind,
            DiskInfo {
                disk_id: id.into(),
                disk: Disk { category: DiskCategory::Ssd, size_gb: 50, snapshot_id: None },
            },
        )
    }

    #[test]
    fn the_system_disk_comes_first_then_data_disks_by_id() {
        let mut d =
            vec![disk(DiskKind::Data, "d-2"), disk(DiskKind::Data, "d-1"), disk(DiskKind::System, "d-9")];
        system_disk_first(&mut d);
        let ids: Vec<_> = d.iter().map(|(k, i)| (*k, i.disk_id.as_str())).collect();
        assert_eq!(ids, [(DiskKind::System, "d-9"), (DiskKind::Data, "d-1"), (DiskKind::Data, "d-2")]);
    }
}
