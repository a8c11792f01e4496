//! What each cloud's create API can buy, as the spec checks it before any catalog is consulted.
//! The clouds and billing modes themselves are gpuctl-core's [`Provider`] and [`BillingMode`];
//! facts here cite `shared/reference/cloud-apis.md`. Prices live in the catalog, not here.

pub use gpuctl_core::{BillingMode, Provider};

use crate::resource::PublicIpBilling;

/// Whether the create API can buy this billing mode, and if not, why (shown to the user verbatim).
pub fn api_offers(provider: Provider, mode: BillingMode) -> Result<(), &'static str> {
    use BillingMode::*;
    match (provider, mode) {
        (_, Hourly | Monthly | Year1 | Year3) => Ok(()),
        // Tencent: InstanceChargeType SPOTPAID. Alibaba: PostPaid + SpotStrategy.
        (Provider::Tencent | Provider::Alibaba, Spot) => Ok(()),
        (Provider::JdCloud, Spot) => Err("JD Cloud's createInstances has no spot/preemptible parameter"),
        // Alibaba: PrePaid with PeriodUnit=Week.
        (Provider::Alibaba, Weekly) => Ok(()),
        (Provider::Tencent, Weekly) => Err("Tencent's PREPAID period is counted in months"),
        (Provider::JdCloud, Weekly) => Err("JD Cloud's prepaid_by_duration is counted in months or years"),
    }
}

/// Whether a spot create must name a bid. Tencent: tccli 3.1.189.1 services/cvm/v20170312/api.json
/// objects.SpotMarketOptions.MaxPrice is required. Alibaba's SpotAsPriceGo follows the market price.
pub fn spot_bid_required(provider: Provider) -> bool {
    matches!(provider, Provider::Tencent)
}

/// The outbound bandwidth (Mbps) a public IP may be given at create time, per the create API's definition;
/// `None` where the definition states no range. Alibaba: alibabacloud-ecs20140526 7.11.8
/// models/_run_instances_request.py InternetMaxBandwidthOut "Valid values: 0 to 100" (0 means no public
/// IP, so 1 is gpuctl's floor); JD: jdcloud_sdk 1.6.354 services/vpc/models/ElasticIpSpec.py bandwidthMbps
/// "计费类型为按配置时，取值范围为[1-1000]；计费类型为按流量时，取值范围为[1-200]"; Tencent: tccli 3.1.189.1
/// services/cvm/v20170312/api.json objects.InternetAccessible.InternetMaxBandwidthOut only says the
/// range differs per instance type.
pub fn public_bandwidth_range(provider: Provider, billing: PublicIpBilling) -> Option<(u32, u32)> {
    match (provider, billing) {
        (Provider::Alibaba, _) => Some((1, 100)),
        (Provider::JdCloud, PublicIpBilling::Traffic) => Some((1, 200)),
        (Provider::JdCloud, PublicIpBilling::Bandwidth) => Some((1, 1000)),
        (Provider::Tencent, _) => None,
    }
}

/// Whether an instance can be created without naming a VPC/subnet (the account's default network).
pub fn has_default_network(provider: Provider) -> bool {
    // JD's createInstances requires primaryNetworkInterface.subnetId.
    !matches!(provider, Provider::JdCloud)
}

/// Whether the cloud's key-pair import takes an OpenSSH public key of this type (`ssh-ed25519`,
/// `ssh-rsa`, `ecdsa-sha2-nistp256`, …), and if not, why — so a spec is refused at plan time rather
/// than by the import.
/// - Tencent: "密钥对的公钥内容，`OpenSSH RSA` 格式" (tccli 3.1.189.1, services/cvm/v20170312/api.json
///   ImportKeyPairRequest.PublicKey): RSA only.
/// - Alibaba: "rsa, dsa, ssh-rsa, ssh-dss, ecdsa" and their certificate forms (ImportKeyPair's usage
///   notes, help.aliyun.com/document_detail/51774): no Ed25519.
/// - JD: importKeypair states no type (jdcloud_sdk 1.6.354 services/vm/apis/ImportKeypairRequest.py).
pub fn imports_key_type(provider: Provider, key_type: &str) -> Result<(), String> {
    let (ok, takes) = match provider {
        Provider::Tencent => (key_type == "ssh-rsa", "only OpenSSH RSA public keys"),
        Provider::Alibaba => (
            key_type == "ssh-rsa" || key_type == "ssh-dss" || key_type.starts_with("ecdsa-sha2-"),
            "RSA, DSA and ECDSA public keys, not Ed25519",
        ),
        Provider::JdCloud => (true, ""),
    };
    if ok {
        Ok(())
    } else {
        Err(format!("{provider}'s key-pair import takes {takes}; this key is {key_type}"))
    }
}

/// How a prepaid (subscription) instance can stop billing before its term ends, per cloud.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EarlyEnd {
    /// Converted to pay-as-you-go (the unused term refunded), then released like any pay-as-you-go
    /// instance. Alibaba: ModifyInstanceChargeType PrePaid → PostPaid, then DeleteInstances
    /// (alibabacloud_ecs20140526 7.11.8, models/_modify_instance_charge_type_request.py,
    /// models/_delete_instances_request.py `terminate_subscription`: expired subscriptions only).
    ConvertToPayAsYouGo,
    /// Terminated into the recycle bin, refunded under the cloud's return rules. Tencent: "包年包月实例如符合
    /// 退还规则，也可通过本接口主动退还 … 首次调用本接口，实例将被移至回收站" (tccli 3.1.189.1,
    /// tccli/services/cvm/v20170312/api.json, TerminateInstances).
    RecycleBin,
    /// No API ends the term: the instance bills until it expires. JD Cloud: "不可以删除包年包月未到期的云主机"
    /// (jdcloud_sdk 1.6.354, jdcloud_sdk/services/vm/apis/DeleteInstanceRequest.py).
    None,
}

/// How `provider` lets a prepaid instance end early (see [`EarlyEnd`]).
pub fn early_end(provider: Provider) -> EarlyEnd {
    match provider {
        Provider::Alibaba => EarlyEnd::ConvertToPayAsYouGo,
        Provider::Tencent => EarlyEnd::RecycleBin,
        Provider::JdCloud => EarlyEnd::None,
    }
}

/// Whether `mode` buys a term paid up front (every mode but pay-as-you-go and spot).
pub fn is_prepaid(mode: BillingMode) -> bool {
    !matches!(mode, BillingMode::Hourly | BillingMode::Spot)
}

/// The `term` values each cloud's create API accepts for a prepaid mode (months for `monthly`, weeks
/// for `weekly`; `year1`/`year3` buy one such term). Empty for pay-as-you-go modes.
pub fn allowed_terms(provider: Provider, mode: BillingMode) -> &'static [u32] {
    use BillingMode::*;
    match (provider, mode) {
        (_, Hourly | Spot) => &[],
        // One year or three years is one term of that length on every cloud.
        (_, Year1 | Year3) => &[1],
        // tccli 3.0 services/cvm/v20170312/api.json objects.InstanceChargePrepaid.Period: "可选取值:
        // 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 24, 36, 48, 60" (months).
        (Provider::Tencent, Monthly) => &[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 24, 36, 48, 60],
        // alibabacloud_ecs20140526 models/_run_instances_request.py RunInstancesRequest.period: with
        // PeriodUnit=Month 1–9, 12, 24, 36, 48, 60; with PeriodUnit=Week 1–4.
        (Provider::Alibaba, Monthly) => &[1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36, 48, 60],
        (Provider::Alibaba, Weekly) => &[1, 2, 3, 4],
        // jdcloud_sdk services/charge/models/ChargeSpec.py chargeDuration: months 1–9 or years 1–3;
        // 12/24/36 months are sent as 1/2/3 years by the JD client.
        (Provider::JdCloud, Monthly) => &[1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 24, 36],
        // Not offered at all (see `api_offers`): no term is right.
        (Provider::Tencent | Provider::JdCloud, Weekly) => &[],
    }
}

/// `1, 2, …` for an error message.
pub fn terms_list(terms: &[u32]) -> String {
    terms.iter().map(|t| t.to_string()).collect::<Vec<_>>().join(", ")
}

/// Whether the cloud runs this user data at first boot, and if not, why. Tencent and Alibaba hand it
/// to cloud-init, which runs scripts and cloud-configs alike. JD Cloud has no cloud-init: it runs
/// `instanceSpec.userdata` `launch-script` only, and on Linux only a bash or Python script whose first
/// line is `#!/bin/bash` or `#!/usr/bin/env python`, at most 16 KB before base64 (jdcloud_sdk 1.6.354
/// services/vm/models/InstanceSpec.py `userdata`, Userdata.py). gpuctl has no cloud-init renderer to
/// turn a cloud-config into a script, so the spec refuses one rather than boot without it. The JD
/// emulator refuses the same scripts with INVALID_ARGUMENT.
pub fn boot_script_runs(provider: Provider, text: &str) -> Result<(), String> {
    if provider != Provider::JdCloud {
        return Ok(());
    }
    let first = text.lines().next().unwrap_or("").trim_end();
    let runs = first == "#!/bin/bash"
        || first.starts_with("#!/bin/bash ")
        || first == "#!/usr/bin/env python"
        || first.starts_with("#!/usr/bin/env python3")
        || first.starts_with("#!/usr/bin/env python ");
    if runs {
        return Ok(());
    }
    let what = if first.starts_with("#cloud-config") {
        "is a #cloud-config, which JD Cloud never runs (it has no cloud-init)".to_string()
    } else {
        let shown: String = first.chars().take(40).collect();
        format!("starts with `{}`, not a script JD Cloud runs", shown.escape_debug())
    };
    Err(format!(
        "{what}; on jdcloud it must be a launch script whose first line is `#!/bin/bash` or `#!/usr/bin/env python`"
    ))
}

/// How a cloud runs user data at first boot (the boot environment of issue 13, rendered by
/// gpuctl-provision's `boot`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BootFormat {
    /// cloud-init's `#cloud-config` (the script is written by `write_files` and run by `runcmd`).
    CloudConfig,
    /// A `#!/bin/bash` script the cloud's agent runs once.
    LaunchScript,
}

impl BootFormat {
    pub fn as_str(self) -> &'static str {
        match self {
            BootFormat::CloudConfig => "cloud-config",
            BootFormat::LaunchScript => "launch script",
        }
    }
}

/// What gpuctl knows of one cloud's boot: the format its images run and its in-network mirrors.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BootFacts {
    pub provider: Provider,
    pub format: BootFormat,
    /// Host of the cloud's mirror of the Ubuntu and Debian archives, reached from inside its network.
    pub apt_mirror: Option<&'static str>,
    /// A Docker Hub registry mirror every instance of the cloud may use without an account of its own.
    pub registry_mirror: Option<&'static str>,
}

/// The facts per cloud, in data (one row each, in `Provider::ALL` order).
const BOOT_FACTS: [BootFacts; 3] = [
    // Tencent Cloud docs, "CVM > 软件源加速" (product/213/8623): `mirrors.tencentyun.com` serves the
    // distributions' archives to CVMs inside Tencent's network; "Tencent Container Registry > 镜像加速"
    // (product/1207/45596): `https://mirror.ccs.tencentyun.com` mirrors Docker Hub for CVMs. Tencent's
    // images run cloud-init (CVM docs, "实例自定义数据": a `#cloud-config` or a script, base64).
    BootFacts {
        provider: Provider::Tencent,
        format: BootFormat::CloudConfig,
        apt_mirror: Some("mirrors.tencentyun.com"),
        registry_mirror: Some("https://mirror.ccs.tencentyun.com"),
    },
    // Alibaba Cloud docs, "ECS > 镜像 > 使用阿里云镜像源" : `mirrors.cloud.aliyuncs.com` is the VPC-internal
    // mirror of `mirrors.aliyun.com`. Its Docker Hub accelerator is per account
    // (`https://<id>.mirror.aliyuncs.com`, from the Container Registry console), so none is shared here.
    // ECS images run cloud-init for `UserData` (ECS docs, "实例自定义数据").
    BootFacts {
        provider: Provider::Alibaba,
        format: BootFormat::CloudConfig,
        apt_mirror: Some("mirrors.cloud.aliyuncs.com"),
        registry_mirror: None,
    },
    // JD Cloud runs `userdata` key `launch-script` (base64) as a script whose first line is `#!/bin/bash`
    // (jdcloud_sdk 1.6.93 services/vm/models/Userdata.py; `boot_script_runs` in gpuctl-cloud). No mirror
    // hostname of JD's is documented, so its images keep their own apt sources.
    BootFacts {
        provider: Provider::JdCloud,
        format: BootFormat::LaunchScript,
        apt_mirror: None,
        registry_mirror: None,
    },
];

/// The boot facts of `p`.
pub fn boot_facts(p: Provider) -> &'static BootFacts {
    // One row per provider: the test below keeps it so.
    BOOT_FACTS.iter().find(|c| c.provider == p).unwrap_or(&BOOT_FACTS[0])
}

/// What the node agent (issue 15, gpuctl-provision `agent`) needs to know of a cloud: where the
/// instance's metadata service is, which API hosts it calls, which monitoring series is the GPU
/// utilization, and which official SDKs (pinned) it signs with, from which PyPI mirror. `None` for a
/// cloud the agent cannot run on (JD: no instance-role credentials, no reclaim notice).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AgentFacts {
    pub provider: Provider,
    /// The metadata service's base URL; the agent appends `/latest/meta-data/…`.
    pub metadata_base: &'static str,
    /// Path (after the base) of the spot termination time: 404 until the instance is marked.
    pub notice_path: &'static str,
    /// Path of the role credentials (the role name is appended).
    pub credentials_path: &'static str,
    /// Path of the region id.
    pub region_path: &'static str,
    /// The compute API's host (`{region}` is replaced with the instance's region).
    pub compute_endpoint: &'static str,
    /// The monitoring API's host (`{region}` likewise).
    pub monitor_endpoint: &'static str,
    /// The GPU utilization series: (namespace, metric, dimension naming the instance, period s).
    pub metric: (&'static str, &'static str, &'static str, u32),
    /// pip requirement lines, pinned as `scripts/pyenv` pins them for the contract.
    pub sdk: &'static [&'static str],
    /// The cloud's PyPI mirror, reached from inside its network.
    pub pypi_index: &'static str,
    /// What still bills while an instance is stopped in the no-charge mode (docs/research/cost-control.md §2).
    pub stopped_still_bills: &'static str,
}

const AGENT_FACTS: [AgentFacts; 2] = [
    // Metadata: http://metadata.tencentyun.com/latest/meta-data/ (tencentcloud-sdk-python-common 3.1.195
    // credential.py CVMRoleCredential; spot/termination-time: tencentcloud.com/document/product/213/32487).
    // GpuUtil in QCE/CVM with dimension InstanceId and 60 s periods: as gpuctl-tencent api/monitor.rs.
    // PyPI: the VPC-internal host of the apt mirror above, path /pypi/simple. Unverified (assumption):
    // the page read (index, 2026-12-05) names only the public https://mirrors.cloud.tencent.com/pypi/simple,
    // which an instance without a public IP cannot reach.
    AgentFacts {
        provider: Provider::Tencent,
        metadata_base: "http://metadata.tencentyun.com",
        notice_path: "/latest/meta-data/spot/termination-time",
        credentials_path: "/latest/meta-data/cam/security-credentials/",
        region_path: "/latest/meta-data/placement/region",
        compute_endpoint: "cvm.tencentcloudapi.com",
        monitor_endpoint: "monitor.tencentcloudapi.com",
        metric: ("QCE/CVM", "GpuUtil", "InstanceId", 60),
        sdk: &[
            "tencentcloud-sdk-python-common==3.1.195",
            "tencentcloud-sdk-python-cvm==3.1.178",
            "tencentcloud-sdk-python-monitor==3.1.189",
        ],
        pypi_index: "http://mirrors.tencentyun.com/pypi/simple",
        // tencentcloud.com/document/product/213/19922: CPU and memory stop billing; cloud disks, public
        // bandwidth and images still bill; the public IP is released on shutdown.
        stopped_still_bills: "its system and data disks, public bandwidth and images still bill, and its public IP is released",
    },
    // Metadata: http://100.100.100.200 (alibabacloud-credentials 1.0.12 provider/ecs_ram_role.py);
    // instance/spot/termination-time: the ECS preemptible-instance best practices (cost-control.md §3).
    // ECS's regional host ecs.<region>.aliyuncs.com; CloudMonitor's metrics.<region>.aliyuncs.com; the
    // metric as gpuctl-alibaba api/cms.rs. PyPI: mirrors.cloud.aliyuncs.com, the VPC-internal
    // mirror of mirrors.aliyun.com (as BOOT_FACTS' apt mirror); its /pypi/simple/ path is an assumption
    // (unverified: the pages read name the public https://mirrors.aliyun.com/pypi/simple/).
    AgentFacts {
        provider: Provider::Alibaba,
        metadata_base: "http://100.100.100.200",
        notice_path: "/latest/meta-data/instance/spot/termination-time",
        credentials_path: "/latest/meta-data/ram/security-credentials/",
        region_path: "/latest/meta-data/region-id",
        compute_endpoint: "ecs.{region}.aliyuncs.com",
        monitor_endpoint: "metrics.{region}.aliyuncs.com",
        metric: ("acs_ecs_dashboard", "instance_gpu_gpu_usedutilization", "instanceId", 60),
        sdk: &[
            "alibabacloud-tea-openapi==0.4.6",
            "alibabacloud-ecs20140526==7.11.8",
            "alibabacloud-cms20190101==4.0.10",
        ],
        pypi_index: "http://mirrors.cloud.aliyuncs.com/pypi/simple/",
        // alibabacloud-ecs20140526 7.11.8 models/_stop_instances_request.py StoppedMode: vCPU, memory, GPU,
        // image licence and fixed bandwidth stop billing; system and data disks and EIP bandwidth do not.
        stopped_still_bills: "its system and data disks and any EIP's bandwidth still bill, and its static public IP may change",
    },
];

/// The node agent's facts for `p`, or `None` where it cannot run.
pub fn agent_facts(p: Provider) -> Option<&'static AgentFacts> {
    AGENT_FACTS.iter().find(|c| c.provider == p)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_boot_facts_row_per_cloud() {
        for p in Provider::ALL {
            assert_eq!(BOOT_FACTS.iter().filter(|c| c.provider == p).count(), 1, "{p}");
            assert_eq!(boot_facts(p).provider, p);
        }
    }

    #[test]
    fn every_offered_prepaid_mode_has_terms_and_pay_as_you_go_has_none() {
        for p in Provider::ALL {
            for m in BillingMode::ALL {
                let terms = allowed_terms(p, m);
                match m {
                    BillingMode::Hourly | BillingMode::Spot => assert!(terms.is_empty(), "{p} {m}"),
                    _ if api_offers(p, m).is_ok() => assert!(terms.contains(&1), "{p} {m}"),
                    _ => assert!(terms.is_empty(), "{p} {m}"),
                }
            }
        }
        assert!(!allowed_terms(Provider::Tencent, BillingMode::Monthly).contains(&13));
        assert!(!allowed_terms(Provider::Alibaba, BillingMode::Monthly).contains(&10));
        assert!(allowed_terms(Provider::JdCloud, BillingMode::Monthly).contains(&24));
        assert!(!allowed_terms(Provider::JdCloud, BillingMode::Monthly).contains(&48));
    }

    #[test]
    fn jd_runs_only_bash_and_python_launch_scripts() {
        for ok in [
            "#!/bin/bash\necho hi\n",
            "#!/bin/bash -e\n",
            "#!/usr/bin/env python\nprint(1)\n",
            "#!/usr/bin/env python3\n",
        ] {
            assert_eq!(boot_script_runs(Provider::JdCloud, ok), Ok(()), "{ok:?}");
        }
        for bad in ["#cloud-config\npackages: [git]\n", "#!/bin/sh\n", "echo hi\n", ""] {
            assert!(boot_script_runs(Provider::JdCloud, bad).is_err(), "{bad:?}");
        }
        let e = boot_script_runs(Provider::JdCloud, "#cloud-config\n").unwrap_err();
        assert!(e.contains("never runs") && e.contains("#!/bin/bash"), "{e}");
        // cloud-init on the other two runs either.
        assert_eq!(boot_script_runs(Provider::Tencent, "#cloud-config\n"), Ok(()));
        assert_eq!(boot_script_runs(Provider::Alibaba, "#cloud-config\n"), Ok(()));
    }
}
