//! The engine's warnings as stable codes with their parameters.
//!
//! Owns the list of warnings the ranking gives (per offer and for the answer as a whole) and the TCO
//! comparison gives, and their English text. The CLI prints that text (`Offer::warnings`, `Ranking::warnings`, unchanged); the
//! browser calculator renders the codes in its own language; `--json` carries both, the codes as
//! `warning_codes` (`{"code": "stale-price", "days": 168, "as_of": "2026-06-15"}`, see docs/json.md).
//! A code, once published, keeps its name and parameters: scripts match on it.

use std::fmt;

use jiff::civil::Date;
use serde::{Deserialize, Serialize};

use crate::price::SPOT_WARNING;

/// One warning: what is wrong or uncertain, with the numbers and names its text needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "code", rename_all = "kebab-case")]
pub enum Warning {
    /// A spot / preemptible price: the instance can be taken back at any time.
    SpotReclaim,
    /// The price is older than [`crate::STALE_PRICE_DAYS`] on the question's day.
    StalePrice { days: i64, as_of: Date },
    /// The price is an estimate (its derivation says how it was made).
    EstimatedPrice,
    /// The price was quoted in the brief and not found in a public source.
    BriefPrice,
    /// The price was derived from another mode's observed price.
    DerivedPrice,
    /// A Huawei Ascend GPU: CANN with MindSpore or torch_npu, not CUDA.
    AscendStack,
    /// A vGPU slice: `share` of one `gpu` card.
    VgpuSlice { share: f64, gpu: String },
    /// Training on a `gpu` without BF16: FP16 with loss scaling.
    NoBf16 { gpu: String },
    /// Inference on a GPU below compute capability 7.0, which vLLM does not support.
    VllmComputeCapability,
    /// Neither tokens nor usage hours were given: costs are for one hour of use.
    NoTokensOrHours,
    /// A full fine-tune keeps `bytes_per_param` bytes per parameter: `gb` for `model`.
    FullFineTuneMemory { bytes_per_param: f64, gb: f64, model: String, params: f64 },
    /// Nothing fits: the infeasible list says why.
    NoOfferFits,
    /// TCO: the catalog has no cloud price for `gpu`, so there is nothing to compare against.
    NoCloudPrice { gpu: String },
    /// TCO: some of the cloud prices compared are estimates.
    EstimatedCloudPrices,
    /// A multi-node offer whose instances talk over only `gbps` Gbit/s (< 10: the brief's floor for
    /// training across nodes).
    SlowNodeLink { gbps: f64 },
}

impl Warning {
    /// The stable code (`stale-price`), as in `--json`'s `warning_codes[].code`.
    pub fn code(&self) -> &'static str {
        match self {
            Warning::SpotReclaim => "spot-reclaim",
            Warning::StalePrice { .. } => "stale-price",
            Warning::EstimatedPrice => "estimated-price",
            Warning::BriefPrice => "brief-price",
            Warning::DerivedPrice => "derived-price",
            Warning::AscendStack => "ascend-stack",
            Warning::VgpuSlice { .. } => "vgpu-slice",
            Warning::NoBf16 { .. } => "no-bf16",
            Warning::VllmComputeCapability => "vllm-compute-capability",
            Warning::NoTokensOrHours => "no-tokens-or-hours",
            Warning::FullFineTuneMemory { .. } => "full-fine-tune-memory",
            Warning::NoOfferFits => "no-offer-fits",
            Warning::NoCloudPrice { .. } => "no-cloud-price",
            Warning::EstimatedCloudPrices => "estimated-cloud-prices",
            Warning::SlowNodeLink { .. } => "slow-node-link",
        }
    }
}

/// The English text the CLI prints.
impl fmt::Display for Warning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Warning::SpotReclaim => f.write_str(SPOT_WARNING),
            Warning::StalePrice { days, as_of } => {
                write!(f, "price is {days} days old (as of {as_of})")
            }
            Warning::EstimatedPrice => f.write_str("price is an estimate (see derivation)"),
            Warning::BriefPrice => f.write_str("price quoted in the brief, unverified"),
            Warning::DerivedPrice => f.write_str("price derived"),
            Warning::AscendStack => {
                f.write_str("Ascend: needs CANN with MindSpore or torch_npu, not CUDA")
            }
            Warning::VgpuSlice { share, gpu } => {
                write!(f, "vGPU slice ({share} of a {gpu}): shares the card, CUDA only")
            }
            Warning::NoBf16 { gpu } => write!(f, "{gpu} has no BF16: trains in FP16 with loss scaling"),
            Warning::VllmComputeCapability => {
                f.write_str("vLLM needs compute capability ≥ 7.0: use another server")
            }
            Warning::NoTokensOrHours => f.write_str(
                "neither tokens nor usage hours given: costs are for 1 hour of use (give --tokens, or --hours-per-day with --days)",
            ),
            Warning::FullFineTuneMemory { bytes_per_param, gb, model, params } => write!(
                f,
                "a full fine-tune keeps {bytes_per_param:.0} bytes per parameter of weights, gradients and Adam states before activations: {gb:.0} GB for {model} ({:.2}B params), so it needs several large GPUs with ZeRO/FSDP; a single 24 GB card cannot hold it (LoRA or QLoRA can)",
                params / 1e9
            ),
            Warning::NoOfferFits => f.write_str("no offer fits: see the infeasible list for why"),
            Warning::NoCloudPrice { gpu } => write!(
                f,
                "no cloud price for GPU '{gpu}' in the catalog: nothing to compare against"
            ),
            Warning::EstimatedCloudPrices => {
                f.write_str("some cloud prices are estimates (see each price's derivation)")
            }
            Warning::SlowNodeLink { gbps } => write!(
                f,
                "the nodes talk over only {gbps} Gbit/s (under 10): the network, not the GPUs, sets the pace"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Each code keeps the English text the CLI printed before codes existed, and its JSON form.
    #[test]
    fn codes_keep_their_text_and_json() {
        let check = |w: Warning, text: &str, json: &str| {
            assert_eq!(w.to_string(), text);
            assert_eq!(serde_json::to_string(&w).unwrap(), json);
            assert_eq!(serde_json::from_str::<Warning>(json).unwrap(), w);
            assert!(json.starts_with(&format!("{{\"code\":\"{}\"", w.code())));
        };
        check(
            Warning::SpotReclaim,
            "spot instances can be reclaimed at any time (typically with ~5 minutes' notice): checkpoint often and expect restarts",
            r#"{"code":"spot-reclaim"}"#,
        );
        check(
            Warning::StalePrice { days: 168, as_of: Date::constant(2026, 6, 15) },
            "price is 168 days old (as of 2026-06-15)",
            r#"{"code":"stale-price","days":168,"as_of":"2026-06-15"}"#,
        );
        check(
            Warning::VgpuSlice { share: 0.25, gpu: "NVIDIA A10".into() },
            "vGPU slice (0.25 of a NVIDIA A10): shares the card, CUDA only",
            r#"{"code":"vgpu-slice","share":0.25,"gpu":"NVIDIA A10"}"#,
        );
        check(
            Warning::NoBf16 { gpu: "NVIDIA T4".into() },
            "NVIDIA T4 has no BF16: trains in FP16 with loss scaling",
            r#"{"code":"no-bf16","gpu":"NVIDIA T4"}"#,
        );
        check(
            Warning::FullFineTuneMemory { bytes_per_param: 16.0, gb: 121.9, model: "qwen2.5-7b".into(), params: 7.62e9 },
            "a full fine-tune keeps 16 bytes per parameter of weights, gradients and Adam states before activations: 122 GB for qwen2.5-7b (7.62B params), so it needs several large GPUs with ZeRO/FSDP; a single 24 GB card cannot hold it (LoRA or QLoRA can)",
            r#"{"code":"full-fine-tune-memory","bytes_per_param":16.0,"gb":121.9,"model":"qwen2.5-7b","params":7620000000.0}"#,
        );
        check(
            Warning::EstimatedPrice,
            "price is an estimate (see derivation)",
            r#"{"code":"estimated-price"}"#,
        );
        check(Warning::BriefPrice, "price quoted in the brief, unverified", r#"{"code":"brief-price"}"#);
        check(Warning::DerivedPrice, "price derived", r#"{"code":"derived-price"}"#);
        check(
            Warning::AscendStack,
            "Ascend: needs CANN with MindSpore or torch_npu, not CUDA",
            r#"{"code":"ascend-stack"}"#,
        );
        check(
            Warning::VllmComputeCapability,
            "vLLM needs compute capability ≥ 7.0: use another server",
            r#"{"code":"vllm-compute-capability"}"#,
        );
        check(
            Warning::NoTokensOrHours,
            "neither tokens nor usage hours given: costs are for 1 hour of use (give --tokens, or --hours-per-day with --days)",
            r#"{"code":"no-tokens-or-hours"}"#,
        );
        check(
            Warning::NoCloudPrice { gpu: "h800".into() },
            "no cloud price for GPU 'h800' in the catalog: nothing to compare against",
            r#"{"code":"no-cloud-price","gpu":"h800"}"#,
        );
        check(
            Warning::EstimatedCloudPrices,
            "some cloud prices are estimates (see each price's derivation)",
            r#"{"code":"estimated-cloud-prices"}"#,
        );
        check(
            Warning::NoOfferFits,
            "no offer fits: see the infeasible list for why",
            r#"{"code":"no-offer-fits"}"#,
        );
    }
}
