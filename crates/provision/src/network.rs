//! `network = "auto"` (issue 13): per cloud, region and zone, one VPC, one subnet in the zone and one
//! security group that lets SSH (tcp/22) in from the pool's `ssh_from` and all traffic in from the
//! group's own members. Shared by every deployment of gpuctl's in that zone.
//!
//! - Found again by gpuctl's `gpuctl-network = <zone>` tag (every create carries it; Tencent's VPC API
//!   lists it back with `tag:<key>` filters) before anything is made: the clouds' VPC creates take no
//!   client token (tccli 3.1.189.1 `vpc/v20170312/api.json` CreateVpcRequest, CreateSubnetRequest,
//!   CreateSecurityGroupRequest have none), so a run killed after a create adopts what it made on
//!   the re-run, and another deployment (from this state store or another) reuses it.
//! - Each create is an operation in the intent log, written before the call and closed with its
//!   outcome; each piece found or made is recorded in the store's `networks` table (migration 3), and
//!   each deployment's use of the zone's network in `network_uses`.
//! - `destroy` deletes a zone's pieces only when they carry gpuctl's tag (gpuctl made them) and no
//!   other deployment in the store still uses them, security group → subnet → VPC, after the
//!   instances are gone. A cloud that still sees something in them (another store's deployment)
//!   refuses (Tencent `ResourceInUse`): the network is kept and the use stays open, so the next
//!   `destroy` tries again.

use std::collections::BTreeMap;

use gpuctl_cloud::cloud::{ErrorKind, NetKind, NetSpec, SshRules};

use crate::apply::{ApplyError, Engine, Event};
use crate::state::{Intent, NetworkRecord};
use crate::{NetworkIds, Provider};

/// The tag every network piece gpuctl makes carries; its value is the zone.
pub const TAG_NETWORK: &str = "gpuctl-network";

/// The address ranges of what gpuctl makes: one VPC per zone, so every zone may use the same ones.
/// Inside each cloud's allowed private ranges (Tencent: "仅能在10.0.0.0/12，172.16.0.0/12，
/// 192.168.0.0/16这三个内网网段内", CreateVpcRequest.CidrBlock).
pub const VPC_CIDR: &str = "10.0.0.0/16";
pub const SUBNET_CIDR: &str = "10.0.0.0/20";

/// The clouds whose client makes networks (the others refuse `network = "auto"` in the spec check):
/// all three now.
pub fn makes_networks(p: Provider) -> bool {
    matches!(p, Provider::Tencent | Provider::Alibaba | Provider::JdCloud)
}

/// An IPv4 CIDR block as `ssh_from` takes it: `a.b.c.d/n`, n ≤ 32, no host bits set.
pub fn parse_cidr(s: &str) -> Result<(), String> {
    let (ip, len) = s.split_once('/').ok_or("not a CIDR block (a.b.c.d/n), e.g. 203.0.113.7/32")?;
    let ip: std::net::Ipv4Addr = ip.parse().map_err(|_| format!("`{ip}` is not an IPv4 address"))?;
    let len: u32 =
        len.parse().ok().filter(|l| *l <= 32).ok_or(format!("`/{len}` is not a prefix length of 0–32"))?;
    let mask = if len == 0 { 0 } else { u32::MAX << (32 - len) };
    if u32::from(ip) & !mask != 0 {
        let net = std::net::Ipv4Addr::from(u32::from(ip) & mask);
        return Err(format!("host bits are set; the block is {net}/{len}"));
    }
    Ok(())
}

/// Whether `ssh_from` opens SSH to the whole internet (the plan says so in a warning).
pub fn open_to_all(ssh_from: &[String]) -> bool {
    ssh_from.iter().any(|c| c.ends_with("/0"))
}

/// The piece of `kind` for a zone: its name and tags come from the zone alone, never from a
/// deployment, so every deployment in the zone finds the same one.
pub fn spec(kind: NetKind, region: &str, zone: &str, vpc: Option<String>) -> NetSpec {
    let cidr = match kind {
        NetKind::Vpc => Some(VPC_CIDR.to_string()),
        NetKind::Subnet => Some(SUBNET_CIDR.to_string()),
        NetKind::SecurityGroup => None,
    };
    NetSpec {
        kind,
        region: region.to_owned(),
        zone: zone.to_owned(),
        name: format!("gpuctl-{zone}"),
        vpc,
        cidr,
        tags: BTreeMap::from([(TAG_NETWORK.to_string(), zone.to_string())]),
        // Fresh for each attempt, never derived from the zone alone: a cloud that takes a ClientToken
        // (Alibaba's CreateVpc, CreateVSwitch, CreateSecurityGroup) keeps it per account, so a token
        // used again after `destroy` — or by another state store on the same account — would answer
        // with the piece made (and perhaps deleted) back then. The engine's retry of one create
        // reuses this spec, and so its token; a re-run after a crash finds the piece by its tag.
        client_token: format!(
            "gpuctl-{}-{zone}-{}",
            kind.short(),
            &uuid::Uuid::new_v4().simple().to_string()[..12]
        ),
    }
}

/// What `destroy` did with one zone's network.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct NetworkOutcome {
    pub provider: Provider,
    pub region: String,
    pub zone: String,
    /// The ids deleted, security group first.
    pub deleted: Vec<String>,
    /// Why what is left was kept (another deployment uses it, or the cloud still sees users).
    pub kept: Option<String>,
}

impl Engine {
    /// The zone's network for `deployment`'s pool: found by tag or made, recorded, the pool's
    /// `ssh_from` authorized on the group, and the deployment's use recorded (see the module doc).
    pub(crate) async fn ensure_network(
        &self,
        deployment: &str,
        pool: &str,
        provider: Provider,
        region: &str,
        zone: &str,
        ssh_from: &[String],
    ) -> Result<NetworkIds, ApplyError> {
        // One pool's units start together: the lock makes them find or make the network once.
        let mut known = self.nets().lock().await;
        let slot = (provider, region.to_owned(), zone.to_owned());
        let ids = match known.get(&slot) {
            Some(ids) => ids.clone(),
            None => {
                let vpc = self
                    .ensure_piece(deployment, pool, provider, spec(NetKind::Vpc, region, zone, None))
                    .await?;
                let subnet = self
                    .ensure_piece(
                        deployment,
                        pool,
                        provider,
                        spec(NetKind::Subnet, region, zone, Some(vpc.clone())),
                    )
                    .await?;
                let sg = self
                    .ensure_piece(
                        deployment,
                        pool,
                        provider,
                        spec(NetKind::SecurityGroup, region, zone, Some(vpc.clone())),
                    )
                    .await?;
                NetworkIds { vpc, subnet, security_groups: vec![sg] }
            }
        };
        // Every pool's own ssh_from (adds only the rules the group lacks).
        let cloud = self.cloud(provider)?;
        let rules = SshRules { ssh_from: ssh_from.to_vec() };
        let sg = ids.security_groups[0].clone();
        self.call(provider, "authorize-ssh", &sg, || cloud.authorize_ssh(region, &sg, &rules)).await?;
        self.store(|s| s.use_network(provider, region, zone, deployment))?;
        known.insert(slot, ids.clone());
        Ok(ids)
    }

    /// One piece: looked up by tag first, created under an intent when absent.
    async fn ensure_piece(
        &self,
        deployment: &str,
        pool: &str,
        provider: Provider,
        spec: NetSpec,
    ) -> Result<String, ApplyError> {
        let cloud = self.cloud(provider)?;
        let key = spec.client_token.clone();
        let record = |id: &str| NetworkRecord {
            provider,
            region: spec.region.clone(),
            zone: spec.zone.clone(),
            kind: spec.kind.as_str().to_owned(),
            cloud_id: id.to_owned(),
            client_token: spec.client_token.clone(),
            made_by_gpuctl: true,
            state: "live".into(),
        };
        let ready = |id: &str, created: bool| Event::NetworkReady {
            pool: pool.to_owned(),
            provider,
            zone: spec.zone.clone(),
            kind: spec.kind,
            id: id.to_owned(),
            created,
        };
        if let Some(id) = self.call(provider, "find-network", &key, || cloud.find_net(&spec)).await? {
            self.store(|s| s.record_network(&record(&id)))?;
            self.emit(ready(&id, false));
            return Ok(id);
        }
        let intent = Intent {
            deployment: Some(deployment.into()),
            kind: "create-network",
            provider,
            region: spec.region.clone(),
            client_token: spec.client_token.clone(),
            target: spec.vpc.clone(),
            params: serde_json::json!({
                "kind": spec.kind.as_str(), "zone": spec.zone, "name": spec.name, "cidr": spec.cidr,
                "tags": spec.tags,
            })
            .to_string(),
        };
        let op = self.store(|s| s.record_intent(&intent))?;
        // Not retried blindly: a create whose answer was lost is looked up by tag before a second.
        let created = match cloud.create_net(&spec).await {
            Ok(id) => Ok(id),
            Err(e) if e.kind.retryable() => {
                match self.call(provider, "find-network", &key, || cloud.find_net(&spec)).await? {
                    Some(id) => Ok(id),
                    None => self.call(provider, "create-network", &key, || cloud.create_net(&spec)).await,
                }
            }
            Err(e) => Err(e),
        };
        match created {
            Ok(id) => {
                self.store(|s| {
                    s.record_network(&record(&id))?;
                    s.finish_operation(op, "done", None, None)
                })?;
                self.emit(ready(&id, true));
                Ok(id)
            }
            Err(e) => {
                let msg = e.to_string();
                self.store(|s| s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg)))?;
                Err(e.into())
            }
        }
    }

    /// `destroy`'s last step: every zone network `deployment` uses is deleted when gpuctl made it and
    /// nothing else uses it, else kept (see the module doc). Runs after the instances are gone.
    pub async fn release_networks(&self, deployment: &str) -> (Vec<NetworkOutcome>, Vec<String>) {
        let mut out = Vec::new();
        let mut errors = Vec::new();
        let slots = match self.store(|s| s.network_uses(deployment)) {
            Ok(s) => s,
            Err(e) => return (out, vec![e.to_string()]),
        };
        for (provider, region, zone) in slots {
            match self.release_zone_network(deployment, provider, &region, &zone).await {
                Ok(o) => out.push(o),
                Err(e) => errors.push(format!("network of {provider} {zone}: {e}")),
            }
        }
        (out, errors)
    }

    async fn release_zone_network(
        &self,
        deployment: &str,
        provider: Provider,
        region: &str,
        zone: &str,
    ) -> Result<NetworkOutcome, ApplyError> {
        let mut o = NetworkOutcome {
            provider,
            region: region.to_owned(),
            zone: zone.to_owned(),
            deleted: Vec::new(),
            kept: None,
        };
        let end_use = || -> Result<(), ApplyError> {
            self.store(|s| s.end_network_use(provider, region, zone, deployment))?;
            Ok(())
        };
        let others = self.store(|s| s.other_network_users(provider, region, zone, deployment))?;
        if !others.is_empty() {
            end_use()?;
            o.kept = Some(format!("used by {}", others.join(", ")));
            return Ok(o);
        }
        // A shared file system kept by this destroy has its mount target in the subnet, and it is
        // reached through this network: both stay, and the use stays open for a later
        // `destroy --delete-storage`.
        let kept_fs: Vec<String> = self
            .store(|s| s.cluster_resources(deployment))?
            .into_iter()
            .filter(|r| {
                r.provider == provider
                    && r.zone == zone
                    && r.kind == crate::state::ClusterResource::FILE_SYSTEM
                    && r.state != "deleted"
            })
            .map(|r| r.cloud_id)
            .collect();
        if !kept_fs.is_empty() {
            o.kept = Some(format!(
                "the shared file system {} is kept, and its mount target is in this network",
                kept_fs.join(", ")
            ));
            return Ok(o);
        }
        let cloud = self.cloud(provider)?;
        let mut pieces: Vec<NetworkRecord> = self
            .store(|s| s.networks(provider, region, zone))?
            .into_iter()
            .filter(|n| n.made_by_gpuctl && n.state == "live")
            .collect();
        // Security group, then subnet, then VPC: a cloud refuses a VPC that still holds subnets.
        pieces.sort_by_key(|n| std::cmp::Reverse(NetKind::parse(&n.kind)));
        for n in pieces {
            let Some(kind) = NetKind::parse(&n.kind) else { continue };
            let intent = Intent {
                deployment: Some(deployment.into()),
                kind: "delete-network",
                provider,
                region: region.to_owned(),
                client_token: n.client_token.clone(),
                target: Some(n.cloud_id.clone()),
                params: serde_json::json!({ "kind": n.kind, "zone": zone }).to_string(),
            };
            let op = self.store(|s| s.record_intent(&intent))?;
            let id = n.cloud_id.clone();
            match self.call(provider, "delete-network", &id, || cloud.delete_net(region, kind, &id)).await {
                Ok(()) => {}
                // Gone already (an earlier run deleted it and was stopped before recording that).
                Err(e) if e.kind == ErrorKind::NotFound => {}
                Err(e) => {
                    let msg = e.to_string();
                    self.store(|s| s.finish_operation(op, "failed", e.request_id.as_deref(), Some(&msg)))?;
                    // The cloud still sees something in it: another store's deployment. Kept, and the
                    // use stays open so the next destroy tries again.
                    o.kept = Some(format!("the cloud keeps {id}: {}", e.message));
                    return Ok(o);
                }
            }
            self.store(|s| {
                s.set_network_deleted(provider, &id)?;
                s.finish_operation(op, "done", None, None)
            })?;
            o.deleted.push(id);
        }
        self.nets().lock().await.remove(&(provider, region.to_owned(), zone.to_owned()));
        end_use()?;
        Ok(o)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ssh_from_takes_only_network_blocks() {
        assert_eq!(parse_cidr("203.0.113.7/32"), Ok(()));
        assert_eq!(parse_cidr("0.0.0.0/0"), Ok(()));
        assert!(parse_cidr("203.0.113.7").unwrap_err().contains("CIDR"));
        assert!(parse_cidr("203.0.113.7/24").unwrap_err().contains("203.0.113.0/24"));
        assert!(parse_cidr("300.0.0.0/8").unwrap_err().contains("IPv4"));
        assert!(parse_cidr("10.0.0.0/33").unwrap_err().contains("prefix"));
        assert!(open_to_all(&["0.0.0.0/0".into()]) && !open_to_all(&["10.0.0.0/8".into()]));
    }

    #[test]
    fn a_zones_pieces_are_named_and_tagged_from_the_zone_alone() {
        let s = spec(NetKind::Subnet, "ap-guangzhou", "ap-guangzhou-3", Some("vpc-1".into()));
        assert_eq!(s.name, "gpuctl-ap-guangzhou-3");
        assert_eq!(s.tags.get(TAG_NETWORK).map(String::as_str), Some("ap-guangzhou-3"));
        assert_eq!(s.cidr.as_deref(), Some(SUBNET_CIDR));
        assert!(s.client_token.starts_with("gpuctl-subnet-ap-guangzhou-3-"), "{}", s.client_token);
        assert!(s.client_token.len() <= 64, "Alibaba's ClientToken is at most 64 ASCII characters");
        let again = spec(NetKind::Subnet, "ap-guangzhou", "ap-guangzhou-3", Some("vpc-1".into()));
        assert_ne!(again.client_token, s.client_token, "a fresh token for each attempt");
    }
}
