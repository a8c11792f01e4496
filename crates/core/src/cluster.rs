//! Clusters: one training job over N instances of one type ("nodes") in one zone (issue 14).
//!
//! Memory and compute come from [`crate::fit`] and [`crate::time`]; what a cluster adds is the
//! network between the nodes. Two ways to spread a job, as PyTorch FSDP and DeepSpeed do:
//! - **hybrid sharding** (FSDP `HYBRID_SHARD`, DeepSpeed ZeRO++ hpZ): ZeRO/FSDP inside each node,
//!   a replica per node. Memory per GPU is one node's; only the trainable gradients cross the network,
//!   once per optimizer step. Chosen whenever one node holds the job: more nodes for speed.
//! - **full sharding** (ZeRO-3 / FSDP `FULL_SHARD` over every GPU): memory per GPU shrinks with the
//!   node count, and at stage 3 every forward and backward all-gathers the weights over the network.
//!   Chosen only when one node cannot hold the job.
//!
//! Per node and step the network carries ring-collective volume: an all-reduce moves 2·(N−1)/N of
//! the buffer, an all-gather or reduce-scatter (N−1)/N (NCCL's ring algorithms; each node's rings
//! leave through its own NIC). The link runs at a share of the instance's published private-network
//! bandwidth; compute and network overlap fully at the fast end of the band and not at all at the
//! slow end. Every number is an assumption the ranking states.

use serde::{Deserialize, Serialize};

use crate::catalog::{Gpu, InstanceType};
use crate::explain::Assumption;
use crate::fit::{weight_bytes, Job, Method};
use crate::time::{estimate_time_explained, TimeEstimate};

/// The most nodes the ranking tries by itself when one node cannot do the job (`--nodes` may ask for
/// more, up to [`crate::input`]'s bound).
pub const MAX_AUTO_NODES: u32 = 16;
/// Below this private-network bandwidth a cluster's nodes talk too slowly for data-parallel
/// training (the brief: ≥ 10 Gbps between the nodes); offers below it carry a warning.
pub const SLOW_LINK_GBPS: f64 = 10.0;
/// Sequences per optimizer step at least: gradient accumulation fills a step up to this when the
/// GPUs' micro-batches are fewer (a common fine-tuning global batch), so gradients cross the network
/// once per this many sequences.
pub const MIN_SEQUENCES_PER_STEP: f64 = 64.0;
/// Share of the published private-network bandwidth NCCL reaches between instances over TCP
/// sockets (low, high). An assumption: the clouds publish line rates, not collective throughput.
pub const LINK_EFFICIENCY: (f64, f64) = (0.40, 0.70);
/// The same over an RDMA fabric (GPUDirect RDMA, no kernel TCP stack): NCCL's bus bandwidth comes
/// much closer to the ports' line rate. An assumption too.
pub const RDMA_EFFICIENCY: (f64, f64) = (0.70, 0.90);

/// How the job is spread over the nodes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Sharding {
    /// ZeRO/FSDP inside each node, one replica per node: gradients cross the network.
    Hybrid,
    /// ZeRO/FSDP over every GPU of every node: at stage 3 the weights cross the network too.
    Full,
}

/// A multi-node offer's cluster: its shape and what its network costs in time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Cluster {
    pub nodes: u32,
    pub gpus_per_node: f64,
    pub sharding: Sharding,
    /// The bandwidth the nodes talk over, Gbit/s: the RDMA fabric's ports where the catalog gives
    /// their speed (`over_rdma`), else the published private-network bandwidth.
    pub net_gbps: f64,
    pub over_rdma: bool,
    /// The RDMA fabric the type's source states.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub rdma: Option<String>,
    /// GB each node sends per step over the network, and the tokens that step trains.
    pub network_gb_per_step: f64,
    pub tokens_per_step: f64,
    /// Seconds per step the GPUs compute (fast, slow) and the network needs (fast, slow).
    pub compute_s_per_step: (f64, f64),
    pub network_s_per_step: (f64, f64),
    /// True when the weights are all-gathered over the network every forward and backward.
    pub weights_cross_network: bool,
}

/// Bytes of the gradients data parallelism reduces: 16-bit for a full fine-tune and `freeze`'s
/// trainable layers, FP32 for LoRA adapters (PEFT keeps adapter weights in FP32 under autocast).
fn gradient_bytes(job: &Job) -> f64 {
    let m = &job.model;
    match job.method {
        Method::Full | Method::FullPure16 => 2.0 * m.params,
        Method::Freeze => {
            let l = f64::from(m.layers.max(1));
            2.0 * (f64::from(job.freeze_trainable_layers) / l).min(1.0)
                * (m.params - m.embedding_params()).max(0.0)
        }
        Method::Lora | Method::Qlora8 | Method::Qlora4 => 4.0 * job.adapter_params(),
        Method::Inference => 0.0,
    }
}

/// Time for `job` on `nodes` instances of `inst` (each `inst.gpu_count` × `gpu`), spread by
/// `sharding` at ZeRO `zero_stage` (the stage the fit chose over the devices that shard). `None` when
/// the type publishes neither an RDMA speed nor a network bandwidth: the network's share would be a
/// guess.
pub(crate) fn cluster_time(
    job: &Job,
    gpu: &Gpu,
    inst: &InstanceType,
    nodes: u32,
    sharding: Sharding,
    zero_stage: u8,
    explain: bool,
) -> Option<(TimeEstimate, Cluster, Vec<Assumption>)> {
    let (net_gbps, over_rdma) = match (inst.rdma_gbps, inst.net_gbps) {
        (Some(r), _) => (r, true),
        (None, Some(n)) => (n, false),
        (None, None) => return None,
    };
    let efficiency = if over_rdma { RDMA_EFFICIENCY } else { LINK_EFFICIENCY };
    let n = f64::from(nodes.max(1));
    // Compute: one node's rate (its own MFU band: inside a node nothing changes) times the nodes.
    let (mut t, a) = estimate_time_explained(job, gpu, inst.gpu_count, explain);
    let devices = f64::from(inst.devices()) * n;
    let micro = f64::from(job.micro_batch.max(1)) * devices;
    let weights_cross_network = sharding == Sharding::Full && zero_stage >= 3;
    let ring = (n - 1.0) / n;
    // Stage 3 over the nodes: every micro-step all-gathers the weights for the forward and again for
    // the backward, and reduce-scatters the gradients. Otherwise one all-reduce of the gradients per
    // optimizer step, which gradient accumulation fills to MIN_SEQUENCES_PER_STEP sequences.
    let (bytes, sequences) = if weights_cross_network {
        ((2.0 * weight_bytes(job) + gradient_bytes(job)) * ring, micro)
    } else {
        (2.0 * gradient_bytes(job) * ring, micro.max(MIN_SEQUENCES_PER_STEP))
    };
    let tokens_per_step = sequences * f64::from(job.seq_len);
    let compute = |rate_per_node: f64| {
        if rate_per_node > 0.0 {
            tokens_per_step / (rate_per_node * n)
        } else {
            f64::INFINITY
        }
    };
    let compute_s = (compute(t.tokens_per_second_high), compute(t.tokens_per_second_low));
    let line = net_gbps * 1e9 / 8.0;
    let network_s = (bytes / (line * efficiency.1), bytes / (line * efficiency.0));
    // Fast end: network hidden behind compute; slow end: none of it hidden.
    let step_fast = compute_s.0.max(network_s.0);
    let step_slow = compute_s.1 + network_s.1;
    t.gpus = inst.gpu_count * n;
    t.tokens_per_second_high = tokens_per_step / step_fast;
    t.tokens_per_second_low = tokens_per_step / step_slow;
    let tokens = t.tokens;
    t.hours_low = if tokens > 0.0 { tokens / t.tokens_per_second_high / 3600.0 } else { 0.0 };
    t.hours_high = if tokens > 0.0 { tokens / t.tokens_per_second_low / 3600.0 } else { 0.0 };
    let cluster = Cluster {
        nodes,
        gpus_per_node: inst.gpu_count,
        sharding,
        net_gbps,
        over_rdma,
        rdma: inst.rdma.clone(),
        network_gb_per_step: bytes / 1e9,
        tokens_per_step,
        compute_s_per_step: compute_s,
        network_s_per_step: network_s,
        weights_cross_network,
    };
    Some((t, cluster, a))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;
    use crate::model::preset;

    fn job(model: &str, method: Method) -> Job {
        let mut j = Job::new(preset(model).unwrap(), method);
        j.tokens = 1e8;
        j
    }

    /// Hybrid sharding sends only the adapters' gradients: a LoRA job over two nodes runs at close to
    /// twice one node's rate, while weights gathered every step over the same link make it crawl.
    #[test]
    fn gradients_cost_little_and_weights_cost_a_lot() {
        let c = Catalog::shipped();
        let i = c.instance_types().iter().find(|i| i.gpu_count == 8.0 && i.net_gbps.is_some()).unwrap();
        let gpu = c.gpu(&i.gpu).unwrap();
        let j = job("qwen2.5-72b", Method::Lora);
        let (one, _) = estimate_time_explained(&j, gpu, i.gpu_count, false);
        let (hybrid, h, _) = cluster_time(&j, gpu, i, 2, Sharding::Hybrid, 3, false).unwrap();
        assert!(!h.weights_cross_network);
        let speedup = hybrid.tokens_per_second_high / one.tokens_per_second_high;
        assert!((1.8..=2.0 + 1e-9).contains(&speedup), "hybrid speed-up {speedup} ({h:?})");
        let (full, f, _) = cluster_time(&j, gpu, i, 2, Sharding::Full, 3, false).unwrap();
        assert!(f.weights_cross_network);
        // 72B in 16-bit gathered twice per micro-step, half of it from the other node: ≥ 144 GB.
        assert!(f.network_gb_per_step > 140.0, "{f:?}");
        assert!(full.hours_high > 1.2 * hybrid.hours_high, "{} vs {}", full.hours_high, hybrid.hours_high);
        assert!(
            f.network_s_per_step.1 / f.compute_s_per_step.1
                > 10.0 * h.network_s_per_step.1 / h.compute_s_per_step.1
        );
        // The slow end never hides the network; the fast end hides what compute covers.
        assert!(full.hours_low <= full.hours_high && hybrid.hours_low <= hybrid.hours_high);
    }

    /// An HCC type publishes its RDMA ports (2×100GE), not a VPC bandwidth: its nodes talk over them.
    #[test]
    fn rdma_types_talk_over_their_fabric() {
        let c = Catalog::shipped();
        let i = c.instance_types().iter().find(|i| i.id == "HCCPNV4s.64XLARGE1024").unwrap();
        let gpu = c.gpu(&i.gpu).unwrap();
        let (_, cl, _) =
            cluster_time(&job("qwen2.5-72b", Method::Full), gpu, i, 2, Sharding::Full, 3, false).unwrap();
        assert!(cl.over_rdma && cl.net_gbps == 200.0, "{cl:?}");
        let line = 200e9 / 8.0;
        assert!(
            (cl.network_s_per_step.0 - cl.network_gb_per_step * 1e9 / (line * RDMA_EFFICIENCY.1)).abs()
                < 1e-9
        );
    }

    #[test]
    fn no_published_bandwidth_no_cluster_time() {
        let c = Catalog::shipped();
        let Some(i) = c
            .instance_types()
            .iter()
            .find(|i| i.net_gbps.is_none() && i.rdma_gbps.is_none() && i.gpu_count >= 1.0)
        else {
            return;
        };
        let gpu = c.gpu(&i.gpu).unwrap();
        assert!(
            cluster_time(&job("qwen2.5-7b", Method::Lora), gpu, i, 2, Sharding::Hybrid, 0, false).is_none()
        );
    }
}
