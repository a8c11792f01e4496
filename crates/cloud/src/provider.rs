//! What each cloud's create API can buy, as the spec checks it before any catalog is consulted.
//! The clouds and billing modes themselves are gpuctl-core's [`Provider`] and [`BillingMode`];
//! facts here cite `shared/reference/cloud-apis.md`. Prices live in the catalog, not here.

pub use gpuctl_core::{BillingMode, Provider};

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

/// Whether an instance can be created without naming a VPC/subnet (the account's default network).
pub fn has_default_network(provider: Provider) -> bool {
    // JD's createInstances requires primaryNetworkInterface.subnetId.
    !matches!(provider, Provider::JdCloud)
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

#[cfg(test)]
mod tests {
    use super::*;

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
