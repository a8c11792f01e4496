//! "Export spec": the page's side of [`gpuctl_core::export`] (the file is written by core, so the CLI's
//! `estimate --spec-out` writes the same one).

pub use gpuctl_core::export::{deployment_name, export, ExportContext};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::evaluate;
    use crate::query::Inputs;
    use gpuctl_core::parse_date;

    /// An ed25519 public key whose private half was thrown away.
    const KEY: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop\n";
    /// An RSA one (Tencent and Alibaba import no Ed25519), likewise.
    const RSA_KEY: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDyUSzFRX6BlPCXVwGlPJ2aq4JIrBHpWO6v/+qdK5Mt4W4BqBF/GJjht1oz0d2eLH/oAonZsIA9xLlS8mDO167cWL0xevJP/LlhUlNNvf4SfPOa0Ml8vK3v9LT26xDHlvmbVx3fCuKCyr6dIN5rrK0AEn0sa6GP58rwYHIZV9DDwH2ZOTVBgu2IV8tcHN7MGz7YP8NKJNPYFG4Q07aarKCUU89mo/X5cZv+bwXMXqyZhOVeqloJqLwbKMInrVIqIKYwc5bo4y52RpA89mM1IRC6XyEb79S9wB5ogirgLvT662REkhOVn0dZnTLEJepDAga83XLbjtgYkh+ymt51HKaV me@laptop\n";

    /// Every provider's top offer exports a spec that gpuctl-provision's own parser accepts, and the
    /// parsed spec says what the row says.
    #[test]
    fn exports_parse_with_the_provisioner() {
        let catalog = gpuctl_core::Catalog::shipped();
        let today = parse_date("2026-11-30").unwrap();
        for provider in ["tencent", "alibaba", "jdcloud"] {
            let inputs =
                Inputs { providers: vec![provider.into()], method: "qlora4".into(), ..Inputs::default() };
            let ev = evaluate(catalog, &inputs, today);
            let row = ev.rows.first().unwrap_or_else(|| panic!("{provider} has an offer"));
            let ctx = ExportContext {
                model: "qwen2.5-7b",
                method: "qlora4",
                tokens: 50e6,
                epochs: 3.0,
                today: "2026-11-30",
                pool: "tune",
                by: "the gpuctl browser calculator",
                public_key: Some(gpuctl_core::export::usual_public_key(row.best.provider)),
                ssh_from: &[],
                file: None,
                source: "gpuctl-web",
            };
            let text = export(catalog, &row.best, &ctx);
            assert!(text.contains("image = \"ubuntu-22.04\""), "{text}");
            assert!(text.contains("network = \"auto\"") && text.contains("ssh_from = ["), "{text}");
            // The key is the user's file: this test's stands in for it (the parser reads it).
            let key = std::env::temp_dir().join(format!("gpuctl-web-export-{}.pub", std::process::id()));
            std::fs::write(&key, if provider == "jdcloud" { KEY } else { RSA_KEY }).unwrap();
            let usual = gpuctl_core::export::usual_public_key(row.best.provider);
            let text = text.replace(usual, key.to_str().unwrap());
            let spec = gpuctl_provision::spec::parse("export.toml", &text, None, &Default::default())
                .unwrap_or_else(|e| panic!("{provider}: {e}\n{text}"));
            assert!(spec.pools[0].login_key.is_some(), "{text}");
            assert_eq!(spec.deployment.value, "qwen2-5-7b-qlora4");
            assert_eq!(spec.pools.len(), 1);
            let pool = &spec.pools[0];
            assert_eq!(pool.billing.value, row.best.mode, "{text}");
            let dbg = format!("{:?}", pool.placement);
            assert!(dbg.contains(&row.best.region), "{dbg}");
            assert!(dbg.contains(row.best.instance.as_str()), "{dbg}");
        }
    }
}
