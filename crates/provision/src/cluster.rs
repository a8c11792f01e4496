//! A cluster pool's own resources (issue 14): the low-latency placement group its nodes join, where
//! the cloud offers one for the type (Tencent HPC cluster for HCC types, Alibaba LowLatency deployment
//! set; see `gpuctl_cloud::cloud::PlacementKind`), and its shared NFS file system with a mount
//! target in the nodes' subnet.
//!
//! Both are made once per pool and zone, before the nodes (the nodes' create names the placement
//! group and their boot environment mounts the file system), under an intent like every other create,
//! and looked up by name before each create: Tencent's CreateHpcCluster takes no client token, and a
//! run killed after a create must adopt what it made rather than make a second.
//!
//! Data is never deleted by accident. When a cluster moves on from a zone that cannot hold it, the
//! file system made there *by this run* (empty: no node ran on it) is deleted with the placement
//! group; one found from an earlier run is left alone. `destroy` deletes placement groups once their
//! nodes are gone and keeps file systems (state `kept`, with their monthly price in the report)
//! unless the pool says `on_destroy = "delete"` or the command `--delete-storage`. A zone whose kept
//! file system still has its mount target in the network keeps its network too.

use std::collections::BTreeMap;

use gpuctl_cloud::cloud::{
    FsSpec, FsState, MountTarget, PlacementSpec, SnapshotState, TAG_DEPLOYMENT, TAG_POOL,
};

use crate::apply::{ApplyError, Engine, Event};
use crate::boot::SharedMount;
use crate::plan::Choice;
use crate::spec::{Network, Pool, SharedStorage};
use crate::state::{ClusterResource, Intent};
use crate::NetworkIds;

/// What a cluster's nodes are created with at one choice.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ClusterSetup {
    /// The placement group's id, sent with every node's create.
    pub placement: Option<String>,
    pub shared: Option<SharedMount>,
}

/// What `destroy` did with a deployment's placement groups and file systems.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize)]
pub struct ClusterOutcome {
    pub deleted: Vec<String>,
    /// File systems left with their data: (id, why, ¥ per month at the spec's `size_gb` when known).
    pub kept: Vec<KeptStorage>,
    pub errors: Vec<String>,
}

impl ClusterOutcome {
    pub fn is_empty(&self) -> bool {
        self.deleted.is_empty() && self.kept.is_empty() && self.errors.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct KeptStorage {
    pub provider: crate::Provider,
    pub id: String,
    pub zone: String,
    pub mount_address: Option<String>,
    pub tier: Option<String>,
    /// What it costs per month to keep, where the spec gives `size_gb` and a price is recorded.
    pub cny_per_month: Option<f64>,
    pub price: Option<crate::shared_price::FsPrice>,
}

/// The name of a pool's placement group and file system: the deployment's and the pool's (unique in
/// a store; a deployment name is at most 40 characters, so the name stays within every cloud's limit
/// once the JD client shortens it to its 32).
pub fn resource_name(deployment: &str, pool: &str) -> String {
    format!("gpuctl-{deployment}-{pool}")
}

fn tags(deployment: &str, pool: &str) -> BTreeMap<String, String> {
    [(TAG_DEPLOYMENT.to_string(), deployment.to_string()), (TAG_POOL.to_string(), pool.to_string())].into()
}

impl Engine {
    /// The placement group and shared file system of `pool`'s cluster at `c`, found or made (see the
    /// module doc). `net` is the nodes' network (needed for a file system's mount target).
    /// `made` collects the ids this call created, also when it fails part way, so a cluster moving on
    /// can delete them ([`Engine::drop_cluster_setup`]).
    pub(crate) async fn ensure_cluster_setup(
        &self,
        deployment: &str,
        pool: &Pool,
        c: &Choice,
        made: &mut Vec<String>,
    ) -> Result<ClusterSetup, ApplyError> {
        let net = match &pool.network {
            Network::Auto { ssh_from } => Some(
                self.ensure_network(deployment, &pool.name.value, c.provider, &c.region, &c.zone, ssh_from)
                    .await?,
            ),
            Network::Ids(ids) => ids.for_provider(c.provider).cloned(),
            Network::Default => None,
        };
        let net = net.as_ref();
        let mut setup = ClusterSetup::default();
        let cloud = self.cloud(c.provider)?;
        let name = resource_name(deployment, &pool.name.value);
        let kind = self
            .call(c.provider, "placement-kind", &name, || {
                cloud.placement_kind(&c.region, &c.instance_type, pool.billing.value)
            })
            .await?;
        if let Some(kind) = kind {
            let spec = PlacementSpec {
                kind,
                region: c.region.clone(),
                zone: c.zone.clone(),
                name: name.clone(),
                tags: tags(deployment, &pool.name.value),
                client_token: crate::token::derived(&format!(
                    "placement/{deployment}/{}/{}",
                    pool.name.value, c.zone
                )),
            };
            let (id, created) = self
                .ensure_one(
                    deployment,
                    pool,
                    c,
                    kind.as_str(),
                    &spec.client_token,
                    serde_json::json!({ "kind": kind.as_str(), "zone": c.zone, "name": name }),
                    || cloud.find_placement(&spec),
                    || cloud.create_placement(&spec),
                )
                .await?;
            if created {
                made.push(id.clone());
            }
            setup.placement = Some(id);
        }
        if let Some(st) = &pool.shared_storage {
            let net = net.ok_or_else(|| {
                ApplyError::Other(format!(
                    "pool `{}`: shared storage needs the nodes' VPC and subnet (network = \"auto\" or ids)",
                    pool.name.value
                ))
            })?;
            let (mount, created) = self.ensure_file_system(deployment, pool, c, net, st).await?;
            if let Some(id) = created {
                made.push(id);
            }
            setup.shared = Some(mount);
        }
        Ok(setup)
    }

    async fn ensure_file_system(
        &self,
        deployment: &str,
        pool: &Pool,
        c: &Choice,
        net: &NetworkIds,
        st: &SharedStorage,
    ) -> Result<(SharedMount, Option<String>), ApplyError> {
        let cloud = self.cloud(c.provider)?;
        let spec = FsSpec {
            region: c.region.clone(),
            zone: c.zone.clone(),
            name: resource_name(deployment, &pool.name.value),
            tier: st.tier,
            vpc: net.vpc.clone(),
            subnet: net.subnet.clone(),
            tags: tags(deployment, &pool.name.value),
            client_token: crate::token::derived(&format!("fs/{deployment}/{}/{}", pool.name.value, c.zone)),
        };
        let (id, created) = self
            .ensure_one(
                deployment,
                pool,
                c,
                ClusterResource::FILE_SYSTEM,
                &spec.client_token,
                serde_json::json!({ "zone": c.zone, "name": spec.name, "tier": st.tier.as_str(), "vpc": spec.vpc, "subnet": spec.subnet }),
                || async { Ok(cloud.find_file_system(&spec).await?.map(|f| f.id)) },
                || cloud.create_file_system(&spec),
            )
            .await?;
        let what = format!("file system {id}");
        let ok = self
            .wait_available(&what, || async {
                Ok(match cloud.file_system(&c.region, &id).await? {
                    Some(f) if f.state == FsState::Available => SnapshotState::Available,
                    Some(f) if f.state == FsState::Failed => SnapshotState::Failed,
                    None => SnapshotState::Failed,
                    Some(_) => SnapshotState::Creating,
                })
            })
            .await?;
        if !ok {
            return Err(ApplyError::Other(format!("{what} failed to create, or is gone")));
        }
        // Alibaba and JD make the mount target here, Tencent made it with the file system.
        let target: std::sync::Mutex<Option<MountTarget>> = std::sync::Mutex::new(None);
        let ok = self
            .wait_available(&format!("the mount target of {what}"), || async {
                let t = cloud.mount_target(&spec, &id).await?;
                let state = if t.ready { SnapshotState::Available } else { SnapshotState::Creating };
                *target.lock().unwrap_or_else(|e| e.into_inner()) = Some(t);
                Ok(state)
            })
            .await?;
        let t = target
            .into_inner()
            .unwrap_or_else(|e| e.into_inner())
            .filter(|_| ok)
            .ok_or_else(|| ApplyError::Other(format!("{what} has no mount target")))?;
        let source = format!("{}:{}", t.address, t.path);
        self.store(|s| {
            s.record_cluster_resource(&self.row(
                deployment,
                pool,
                c,
                ClusterResource::FILE_SYSTEM,
                &id,
                &spec.client_token,
                Some(st),
                Some(&source),
            ))
        })?;
        self.emit(Event::SharedStorageReady {
            pool: pool.name.value.clone(),
            provider: c.provider,
            zone: c.zone.clone(),
            id: id.clone(),
            source: source.clone(),
        });
        Ok((SharedMount { source, mount: st.mount.clone() }, created.then_some(id)))
    }

    #[allow(clippy::too_many_arguments)]
    fn row(
        &self,
        deployment: &str,
        pool: &Pool,
        c: &Choice,
        kind: &str,
        id: &str,
        token: &str,
        st: Option<&SharedStorage>,
        mount: Option<&str>,
    ) -> ClusterResource {
        ClusterResource {
            provider: c.provider,
            cloud_id: id.to_owned(),
            region: c.region.clone(),
            zone: c.zone.clone(),
            deployment: deployment.to_owned(),
            pool: pool.name.value.clone(),
            kind: kind.to_owned(),
            name: resource_name(deployment, &pool.name.value),
            client_token: token.to_owned(),
            tier: st.map(|s| s.tier.as_str().to_owned()),
            mount_address: mount.map(str::to_owned),
            state: "live".into(),
        }
    }

    /// One placement group or file system: looked up first, else made under an intent (a create whose
    /// answer was lost is looked up again before a second). Answers its id and whether this call made it.
    #[allow(clippy::too_many_arguments)]
    async fn ensure_one<F, FF, C, CF>(
        &self,
        deployment: &str,
        pool: &Pool,
        c: &Choice,
        kind: &str,
        token: &str,
        params: serde_json::Value,
        find: F,
        create: C,
    ) -> Result<(String, bool), ApplyError>
    where
        F: Fn() -> FF,
        FF: std::future::Future<Output = Result<Option<String>, gpuctl_cloud::cloud::CloudError>>,
        C: Fn() -> CF,
        CF: std::future::Future<Output = Result<String, gpuctl_cloud::cloud::CloudError>>,
    {
        let is_fs = kind == ClusterResource::FILE_SYSTEM;
        let (find_action, create_action) = if is_fs {
            ("find-file-system", "create-file-system")
        } else {
            ("find-placement", "create-placement")
        };
        let st = pool.shared_storage.as_ref().filter(|_| is_fs);
        if let Some(id) = self.call(c.provider, find_action, token, &find).await? {
            self.store(|s| {
                s.record_cluster_resource(&self.row(deployment, pool, c, kind, &id, token, st, None))
            })?;
            return Ok((id, false));
        }
        let intent = Intent {
            deployment: Some(deployment.into()),
            kind: create_action,
            provider: c.provider,
            region: c.region.clone(),
            client_token: token.to_owned(),
            target: None,
            params: params.to_string(),
        };
        let op = self.store(|s| s.record_intent(&intent))?;
        let created = match create().await {
            Ok(id) => Ok(id),
            Err(e) if e.kind.retryable() => match self.call(c.provider, find_action, token, &find).await? {
                Some(id) => Ok(id),
                None => self.call(c.provider, create_action, token, &create).await,
            },
            Err(e) => Err(e),
        };
        match created {
            Ok(id) => {
                self.store(|s| {
                    s.record_cluster_resource(&self.row(deployment, pool, c, kind, &id, token, st, None))?;
                    s.finish_operation(op, "done", None, None)
                })?;
                Ok((id, true))
            }
            Err(e) => {
                let msg = e.to_string();
                self.store(|s| s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg)))?;
                Err(e.into())
            }
        }
    }

    /// Deletes what [`Engine::ensure_cluster_setup`] made at a place the cluster then left (the nodes
    /// there already released). Answers what could not be deleted.
    pub(crate) async fn drop_cluster_setup(&self, deployment: &str, made: &[String]) -> Vec<String> {
        let rows = match self.store(|s| s.cluster_resources(deployment)) {
            Ok(r) => r,
            Err(e) => return vec![e.to_string()],
        };
        let mut errors = Vec::new();
        // The file system before the placement group: neither depends on the other, but this order
        // keeps the costly one's deletion first.
        let mut doomed: Vec<&ClusterResource> =
            rows.iter().filter(|r| made.contains(&r.cloud_id) && r.state == "live").collect();
        doomed.sort_by_key(|r| r.kind != ClusterResource::FILE_SYSTEM);
        for r in doomed {
            if let Err(e) = self.delete_cluster_resource(deployment, r).await {
                errors.push(format!("{} {}: {e}", r.kind, r.cloud_id));
            }
        }
        errors
    }

    /// `destroy`'s step after the instances are gone (see the module doc).
    pub async fn release_cluster_resources(
        &self,
        deployment: &str,
        delete_storage: bool,
        pools: &[Pool],
    ) -> ClusterOutcome {
        let mut out = ClusterOutcome::default();
        let rows = match self.store(|s| s.cluster_resources(deployment)) {
            Ok(r) => r,
            Err(e) => {
                out.errors.push(e.to_string());
                return out;
            }
        };
        let mut live: Vec<&ClusterResource> =
            rows.iter().filter(|r| r.state == "live" || r.state == "kept").collect();
        live.sort_by_key(|r| r.kind == ClusterResource::FILE_SYSTEM);
        for r in live {
            let is_fs = r.kind == ClusterResource::FILE_SYSTEM;
            let keep = is_fs
                && !delete_storage
                && pools
                    .iter()
                    .find(|p| p.name.value == r.pool)
                    .and_then(|p| p.shared_storage.as_ref())
                    .is_none_or(|s| s.keep_on_destroy);
            if keep {
                if r.state != "kept" {
                    if let Err(e) = self.store(|s| s.end_cluster_resource(r.provider, &r.cloud_id, "kept")) {
                        out.errors.push(e.to_string());
                    }
                }
                let st =
                    pools.iter().find(|p| p.name.value == r.pool).and_then(|p| p.shared_storage.as_ref());
                let price = crate::shared_price::of(r);
                let cny_per_month = price
                    .as_ref()
                    .and_then(|p| p.cny_per_gb_month)
                    .zip(st.and_then(|s| s.size_gb))
                    .map(|(cny, gb)| cny * f64::from(gb));
                out.kept.push(KeptStorage {
                    provider: r.provider,
                    id: r.cloud_id.clone(),
                    zone: r.zone.clone(),
                    mount_address: r.mount_address.clone(),
                    tier: r.tier.clone(),
                    cny_per_month,
                    price,
                });
                continue;
            }
            match self.delete_cluster_resource(deployment, r).await {
                Ok(()) => out.deleted.push(r.cloud_id.clone()),
                Err(e) => out.errors.push(format!("{} {}: {e}", r.kind, r.cloud_id)),
            }
        }
        out
    }

    async fn delete_cluster_resource(&self, deployment: &str, r: &ClusterResource) -> Result<(), ApplyError> {
        let cloud = self.cloud(r.provider)?;
        let is_fs = r.kind == ClusterResource::FILE_SYSTEM;
        let intent = Intent {
            deployment: Some(deployment.into()),
            kind: if is_fs { "delete-file-system" } else { "delete-placement" },
            provider: r.provider,
            region: r.region.clone(),
            client_token: r.client_token.clone(),
            target: Some(r.cloud_id.clone()),
            params: serde_json::json!({ "kind": r.kind, "zone": r.zone }).to_string(),
        };
        let op = self.store(|s| s.record_intent(&intent))?;
        let id = r.cloud_id.clone();
        let result = if is_fs {
            self.call(r.provider, "delete-file-system", &id, || cloud.delete_file_system(&r.region, &id))
                .await
        } else {
            let kind = gpuctl_cloud::cloud::PlacementKind::parse(&r.kind).ok_or_else(|| {
                ApplyError::Other(format!("unknown placement kind `{}` in the state store", r.kind))
            })?;
            self.call(r.provider, "delete-placement", &id, || cloud.delete_placement(&r.region, kind, &id))
                .await
        };
        self.gone_or_failed(op, result)?;
        if is_fs {
            // Never "deleted" while the cloud still lists it (it may still bill).
            let gone = self
                .wait_available(&format!("the deletion of file system {id}"), || async {
                    Ok(match cloud.file_system(&r.region, &id).await? {
                        None => SnapshotState::Available,
                        Some(_) => SnapshotState::Creating,
                    })
                })
                .await?;
            debug_assert!(gone);
        }
        self.store(|s| {
            s.end_cluster_resource(r.provider, &id, "deleted")?;
            s.finish_operation(op, "done", None, None)
        })?;
        Ok(())
    }
}
