//! "Export spec": the page's side of [`gpuctl_core::export`] (the file is written by core, so the CLI's
//! `estimate --spec-out` writes the same one).

pub use gpuctl_core::export::{deployment_name, export, ExportContext};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::calc::evaluate;
    use crate::query::Inputs;
    use gpuctl_core::parse_date;

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
            };
            let text = export(catalog, &row.best, &ctx);
            let spec = gpuctl_provision::spec::parse("export.toml", &text, None, &Default::default())
                .unwrap_or_else(|e| panic!("{provider}: {e}\n{text}"));
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
