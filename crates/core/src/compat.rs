//! Compatibility: framework ↔ CUDA ↔ driver ↔ GPU checks, so a rented server runs the stack.
//!
//! Facts: PyTorch wheel CUDA builds (pytorch.org "previous versions"), CUDA minimum Linux drivers
//! (CUDA toolkit release notes, table 3: minor-version compatibility), FlashAttention-2 and BF16 need
//! compute capability ≥ 8.0, vLLM needs ≥ 7.0, Ascend runs CANN with MindSpore or torch_npu.

use serde::{Deserialize, Serialize};

use crate::catalog::{Catalog, Gpu, Provider, Stack};

/// What to check. Every field is optional; only given ones are checked.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct CompatQuery {
    /// e.g. "pytorch 2.1", "torch==2.4.0", "mindspore 2.3", "vllm", "flash-attn".
    #[serde(default)]
    pub frameworks: Vec<String>,
    /// CUDA version in the image, e.g. "12.1".
    #[serde(default)]
    pub cuda: Option<String>,
    /// NVIDIA driver version on the host, e.g. "535.104.05".
    #[serde(default)]
    pub driver: Option<String>,
}

impl CompatQuery {
    /// Nothing to check.
    pub fn is_empty(&self) -> bool {
        self.frameworks.is_empty() && self.cuda.is_none() && self.driver.is_none()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Will not run.
    Error,
    /// Runs, with a cost or risk.
    Warning,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CompatIssue {
    pub severity: Severity,
    pub message: String,
}

/// PyTorch minor → CUDA versions with official wheels.
const TORCH_CUDA: &[(&str, &[&str])] = &[
    ("1.13", &["11.6", "11.7"]),
    ("2.0", &["11.7", "11.8"]),
    ("2.1", &["11.8", "12.1"]),
    ("2.2", &["11.8", "12.1"]),
    ("2.3", &["11.8", "12.1"]),
    ("2.4", &["11.8", "12.1", "12.4"]),
    ("2.5", &["11.8", "12.1", "12.4"]),
    ("2.6", &["11.8", "12.4", "12.6"]),
    ("2.7", &["11.8", "12.6", "12.8"]),
];

/// Minimum Linux driver for a CUDA major.minor under minor-version compatibility.
fn min_driver(cuda: (u32, u32)) -> Option<&'static str> {
    match cuda {
        (11, _) => Some("450.80.02"),
        (12, _) => Some("525.60.13"),
        _ => None,
    }
}

/// The lowest Linux driver that runs CUDA `cuda` (e.g. "12.1") under minor-version compatibility, for
/// callers that hold a CUDA requirement but no host driver yet (the boot environment's driver check).
pub fn min_driver_for(cuda: &str) -> Option<&'static str> {
    let v = version(cuda);
    min_driver((*v.first()?, v.get(1).copied().unwrap_or(0)))
}

/// Parse "12.1" / "535.104.05" into numbers for comparison.
fn version(s: &str) -> Vec<u32> {
    s.trim()
        .trim_start_matches(|c: char| !c.is_ascii_digit())
        .split(['.', '-', '+'])
        .map_while(|p| p.parse().ok())
        .collect()
}

fn framework_version(spec: &str) -> (String, Vec<u32>) {
    let s = spec.to_ascii_lowercase();
    let name: String = s.chars().take_while(|c| c.is_ascii_alphabetic() || *c == '-' || *c == '_').collect();
    (name.trim_end_matches(['-', '_']).to_string(), version(&s[name.len()..]))
}

/// Check `q` against `gpu`. An empty list means nothing found wrong.
pub fn check(gpu: &Gpu, q: &CompatQuery) -> Vec<CompatIssue> {
    let mut out = Vec::new();
    let mut err = |m: String| out.push(CompatIssue { severity: Severity::Error, message: m });
    let cc = gpu.cc();
    let cuda = q.cuda.as_deref().map(version);

    if gpu.stack == Stack::Ascend {
        for f in &q.frameworks {
            let (name, _) = framework_version(f);
            if matches!(name.as_str(), "pytorch" | "torch") {
                err(format!("{} runs PyTorch only through torch_npu (Ascend CANN), not CUDA builds: install torch_npu matching your torch version", gpu.name));
            }
            if matches!(name.as_str(), "vllm" | "flash-attn" | "flash_attn" | "flashattention") {
                err(format!(
                    "{name} is CUDA-only; {} needs an Ascend build (e.g. vllm-ascend / MindIE)",
                    gpu.name
                ));
            }
        }
        if q.cuda.is_some() || q.driver.is_some() {
            err(format!("{} has no CUDA: use CANN with MindSpore or torch_npu", gpu.name));
        }
        return out;
    }

    for f in &q.frameworks {
        let (name, v) = framework_version(f);
        match name.as_str() {
            "pytorch" | "torch" if v.len() >= 2 => {
                let key = format!("{}.{}", v[0], v[1]);
                if let (Some((_, cudas)), Some(c)) = (TORCH_CUDA.iter().find(|(k, _)| *k == key), &cuda) {
                    let ck = c.iter().take(2).map(|x| x.to_string()).collect::<Vec<_>>().join(".");
                    if !cudas.contains(&ck.as_str()) {
                        err(format!(
                            "PyTorch {key} ships wheels for CUDA {}, not {ck}: pick one of those images",
                            cudas.join(" / ")
                        ));
                    }
                }
                if gpu.id == "b200" && (v[0], v[1]) < (2, 7) {
                    err("B200 (Blackwell) needs PyTorch 2.7+ built with CUDA 12.8".into());
                }
            }
            "vllm" if cc.is_some_and(|cc| cc < 7.0) => {
                err(format!(
                    "vLLM needs compute capability ≥ 7.0; {} is {}",
                    gpu.name, gpu.compute_capability
                ));
            }
            "flash-attn" | "flash_attn" | "flashattention" if !gpu.flash_attention2 => {
                err(format!(
                    "FlashAttention-2 needs Ampere or newer (CC ≥ 8.0); {} is {}",
                    gpu.name, gpu.compute_capability
                ));
            }
            "mindspore" | "torch_npu" | "torch-npu" => {
                err(format!("{name} targets Huawei Ascend; {} is an NVIDIA GPU", gpu.name));
            }
            _ => {}
        }
    }
    if let Some(c) = &cuda {
        if c.len() >= 2 && (c[0], c[1]) < (11, 8) && cc.is_some_and(|x| x >= 8.9) {
            err(format!("{} (CC {}) needs CUDA 11.8 or newer", gpu.name, gpu.compute_capability));
        }
        if gpu.id == "b200" && c.len() >= 2 && (c[0], c[1]) < (12, 8) {
            err("B200 needs CUDA 12.8 or newer".into());
        }
        if let (Some(d), Some(min)) =
            (q.driver.as_deref(), min_driver((c[0], c.get(1).copied().unwrap_or(0))))
        {
            if version(d) < version(min) {
                err(format!("CUDA {} needs NVIDIA driver ≥ {min}; the host has {d}: use a newer driver image, not a different CUDA on a shared server", c.iter().map(|x| x.to_string()).collect::<Vec<_>>().join(".")));
            }
        }
    }
    if !gpu.fp16_training {
        out.push(CompatIssue {
            severity: Severity::Warning,
            message: format!("{}: {}", gpu.name, gpu.training_note),
        });
    }
    if !gpu.bf16 && gpu.fp16_training {
        out.push(CompatIssue {
            severity: Severity::Warning,
            message: format!(
                "{} has no BF16: train in FP16 with loss scaling (set bf16=false, fp16=true)",
                gpu.name
            ),
        });
    }
    out
}

/// Where Ascend is and is not sold, for a job that needs it (MindSpore, torch_npu): the catalog's own
/// Ascend types if any (e.g. from an overlay), and the evidence that the three clouds sell none. `None`
/// when no framework asks for Ascend. The answer to the brief's "阿里云昇腾910实例" claim, which the
/// evidence refutes (price-evidence.md §4).
pub fn ascend_availability(catalog: &Catalog, q: &CompatQuery) -> Option<String> {
    let wants = q.frameworks.iter().any(|f| {
        let (name, _) = framework_version(f);
        matches!(name.as_str(), "mindspore" | "torch_npu" | "torch-npu")
    });
    if !wants {
        return None;
    }
    let sold: Vec<String> = catalog
        .instance_types()
        .iter()
        .filter(|i| catalog.gpu(&i.gpu).is_some_and(|g| g.stack == Stack::Ascend))
        .map(|i| format!("{} {}", i.provider, i.id))
        .collect();
    let mut text = if sold.is_empty() {
        "Ascend (MindSpore / torch_npu): none of the three clouds gpuctl prices sells an Ascend family."
            .to_string()
    } else {
        format!("Ascend (MindSpore / torch_npu): sold in this catalog as {}.", sold.join(", "))
    };
    if !sold.iter().any(|s| s.starts_with(Provider::Alibaba.as_str())) {
        text.push_str(
            " Alibaba ECS sells no Ascend family: its GPU family doc (GPU计算型实例规格族, 2025 or later) lists NVIDIA \
             families only (gn6i … gn9gc), its naming page defines gn/vgn/sgn (NVIDIA), gi (Intel GPU) and f (FPGA) \
             with no Ascend body, and the 2021 AlibabaCloudDocs/ecs docs hold no 昇腾/Ascend; the brief's \
             \"阿里云昇腾910实例\" is refuted (price-evidence.md §4). Tencent and JD list no Ascend family either \
             (§1.1, §3.1).",
        );
    }
    text.push_str(
        " Ascend 910B cloud instances were found only at Huawei Cloud (ModelArts flavors such as \
         1*ascend-snt9b1, catalog-facts.md §2.4), which gpuctl neither prices nor provisions.",
    );
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::catalog::Catalog;

    fn errors(gpu: &str, frameworks: &[&str], cuda: Option<&str>, driver: Option<&str>) -> Vec<String> {
        let q = CompatQuery {
            frameworks: frameworks.iter().map(|s| s.to_string()).collect(),
            cuda: cuda.map(Into::into),
            driver: driver.map(Into::into),
        };
        check(Catalog::shipped().gpu(gpu).unwrap(), &q)
            .into_iter()
            .filter(|i| i.severity == Severity::Error)
            .map(|i| i.message)
            .collect()
    }

    #[test]
    fn checks() {
        assert!(errors("a10", &["pytorch 2.1"], Some("12.1"), Some("535.104.05")).is_empty());
        assert!(errors("a10", &["pytorch 2.1"], Some("11.7"), None)[0].contains("11.8 / 12.1"));
        assert!(errors("a10", &["torch==2.1.2"], Some("12.1"), Some("470.82.01"))[0]
            .contains("driver ≥ 525.60.13"));
        assert!(errors("p4", &["vllm"], None, None)[0].contains("≥ 7.0"));
        assert!(errors("t4", &["vllm"], None, None).is_empty());
        assert!(errors("t4", &["flash-attn"], None, None)[0].contains("Ampere"));
        assert!(errors("ascend-910b", &["pytorch 2.1"], None, None)[0].contains("torch_npu"));
        assert!(errors("ascend-910b", &["mindspore 2.3"], None, None).is_empty());
        assert!(errors("a100-sxm4-80g", &["mindspore"], None, None)[0].contains("Ascend"));
    }

    #[test]
    fn an_ascend_job_is_told_where_ascend_is_sold() {
        let q = |f: &str| CompatQuery { frameworks: vec![f.into()], ..CompatQuery::default() };
        let c = Catalog::shipped();
        assert_eq!(ascend_availability(c, &q("pytorch 2.1")), None);
        let a = ascend_availability(c, &q("mindspore 2.3")).unwrap();
        assert!(a.contains("none of the three clouds"), "{a}");
        assert!(
            a.contains("Alibaba ECS sells no Ascend family") && a.contains("price-evidence.md §4"),
            "{a}"
        );
        assert!(a.contains("Huawei Cloud"), "{a}");
        assert!(ascend_availability(c, &q("torch_npu")).is_some());
        assert!(errors("b200", &["pytorch 2.4"], Some("12.4"), None).len() == 2);
    }
}
