//! Data-quality checks on the shipped catalog (`crates/core/data/*.toml`), kept beside the data as
//! gpuhunt keeps them for its catalogs (issue 18): each type is complete and evidenced, each price row
//! cites source, date and confidence, the mode ratios stay inside what the clouds document, regions
//! and zones belong to the provider, and no key is there twice. The figures they pin come from
//! ../shared/reference/price-evidence.md; a failure names the row.

// The browser form drops the free texts these checks read (build.rs), so they run on the full one.
#![cfg(feature = "toml-files")]

use std::collections::BTreeSet;

use gpuctl_core::{parse_date, BillingMode, Catalog, Confidence, PriceOrigin, Provider};

fn cat() -> &'static Catalog {
    Catalog::shipped()
}

#[test]
fn every_type_has_its_gpu_count_cpu_memory_and_evidence() {
    let c = cat();
    for i in c.instance_types() {
        let at = format!("{} {}", i.provider, i.id);
        assert!(c.gpu(&i.gpu).is_some(), "{at}: unknown GPU {}", i.gpu);
        assert!(i.gpu_count > 0.0 && i.gpu_count <= 16.0, "{at}: gpu_count {}", i.gpu_count);
        // 0 is the catalog's "not published": allowed only where the row says so.
        if i.vcpu == 0 || i.ram_gb == 0.0 {
            assert!(i.notes.contains("0 = unknown"), "{at}: vCPU/RAM missing without saying so");
        }
        assert!(i.ram_gb >= 0.0 && i.ram_gb.is_finite(), "{at}");
        assert!(!i.family.is_empty() && i.id.len() > 2, "{at}");
        // Evidence that the type exists: a named source, never an estimate.
        assert!(i.source.len() > 10, "{at}: no source");
        assert!(
            matches!(i.confidence, Confidence::A | Confidence::B | Confidence::C),
            "{at}: a type needs observed evidence, not {:?}",
            i.confidence
        );
        if let Some(r) = &i.restricted {
            assert!(!r.is_empty(), "{at}: restricted needs its reason");
        }
    }
}

/// Network bandwidth on every size whose source prints one (price-evidence.md §1.1, §2.1, §3.1): all
/// sizes of these families, except the ones named, which the source lists without a figure.
#[test]
fn network_figures_are_there_wherever_the_source_gives_them() {
    let with_net: [(Provider, &[&str]); 3] = [
        (
            Provider::Tencent,
            &["GN6", "GN6S", "GN7", "GN7vw", "GN7vi", "GI3X", "GN8", "GN10X", "GN10Xp", "GT4", "PNV4"],
        ),
        (
            Provider::Alibaba,
            &[
                "gn6i",
                "gn6v",
                "gn6e",
                "gn7",
                "gn7e",
                "gn7i",
                "gn7s",
                "gn8is",
                "gn8v",
                "gn8v-tee",
                "vgn6i-vws",
                "vgn7i-vws",
                "ebmgn7i",
                "ebmgn7",
                "ebmgn6e",
                "ebmgn6v",
                "ebmgn6i",
                "sccgn6",
                "sccgn6e",
            ],
        ),
        (Provider::JdCloud, &["cps.gpu"]),
    ];
    let without = ["GN7vw.8XLARGE128", "gn7i-c80g1.20xlarge"];
    let c = cat();
    let mut checked = 0;
    for (p, families) in with_net {
        for i in c.instance_types_of(p).filter(|i| families.contains(&i.family.as_str())) {
            if without.contains(&i.id.as_str()) {
                assert!(i.net_gbps.is_none(), "{} {}: the source gives no figure", p, i.id);
                continue;
            }
            let n = i.net_gbps.unwrap_or_else(|| panic!("{p} {}: network bandwidth missing", i.id));
            assert!((1.0..=400.0).contains(&n), "{p} {}: {n} Gbit/s", i.id);
            checked += 1;
        }
    }
    assert!(checked >= 110, "only {checked} types with a network figure");
    // Spot checks against the evidence rows.
    let net = |p, id| c.instance_type(p, id).and_then(|i| i.net_gbps);
    assert_eq!(net(Provider::Tencent, "PNV4.56XLARGE932"), Some(100.0));
    assert_eq!(net(Provider::Tencent, "GN7.LARGE20"), Some(1.5));
    assert_eq!(net(Provider::Alibaba, "gn8v-8x.48xlarge"), Some(100.0));
    assert_eq!(net(Provider::Alibaba, "gn6v-c10g1.20xlarge"), Some(35.0));
    let rdma = |p, id| c.instance_type(p, id).and_then(|i| i.rdma.clone()).unwrap_or_default();
    assert!(rdma(Provider::Alibaba, "sccgn6.24xlarge").contains("RoCE v2 2×25"));
    assert!(rdma(Provider::Tencent, "HCCG5v.24XLARGE384").contains("2×100GE"));
}

#[test]
fn the_lineup_covers_the_evidence() {
    let c = cat();
    assert!(c.instance_types().len() >= 150, "{} types", c.instance_types().len());
    for fam in ["p.n1p40", "p.n1p40h", "p.n1v100", "p.c1p40", "p.q1p40", "cps.gpu", "gcs"] {
        assert!(c.instance_types_of(Provider::JdCloud).any(|i| i.family == fam), "JD {fam} missing");
    }
    for (p, fam) in [
        (Provider::Tencent, "GN7vi"),
        (Provider::Tencent, "GN2"),
        (Provider::Tencent, "BMG5t"),
        (Provider::Alibaba, "sccgn6"),
        (Provider::Alibaba, "ebmgn7"),
        (Provider::Alibaba, "vgn6i-vws"),
        (Provider::Alibaba, "gn8v-tee"),
    ] {
        assert!(c.instance_types_of(p).any(|i| i.family == fam), "{p} {fam} missing");
    }
    // Invite-only / contact-sales types carry the flag (price-evidence.md §1.1, §2.1, §3.1).
    let restricted = |p, id| c.instance_type(p, id).is_some_and(|i| i.restricted.is_some());
    assert!(restricted(Provider::Tencent, "GN7vw.LARGE16"));
    assert!(restricted(Provider::Alibaba, "gn7s-c8g1.2xlarge"));
    assert!(restricted(Provider::Alibaba, "gn8v.4xlarge"));
    assert!(restricted(Provider::JdCloud, "p.c1p40g.large"));
    assert!(!restricted(Provider::Alibaba, "gn7i-c8g1.2xlarge"));
}

#[test]
fn every_price_row_cites_source_date_and_confidence() {
    let c = cat();
    let mut observed = 0;
    let mut dated = BTreeSet::new();
    for (r, origin) in c.price_rows() {
        let at = format!("{} {} {} {}", r.provider, r.instance, r.region, r.mode);
        assert_eq!(origin, PriceOrigin::Shipped);
        assert!(r.source.len() > 10, "{at}: no source");
        let d = parse_date(&r.as_of).unwrap_or_else(|e| panic!("{at}: {e}"));
        assert!(d.year() >= 2018 && d <= parse_date("2026-12-31").unwrap(), "{at}: as_of {d}");
        assert!(r.cny > 0.0 && r.cny.is_finite(), "{at}");
        match r.confidence {
            Confidence::A | Confidence::B | Confidence::C => {
                observed += 1;
                dated.insert(r.as_of.clone());
            }
            Confidence::Brief => {
                assert!(r.derivation.contains("unverified"), "{at}: a brief quote must say it is unverified")
            }
            other => panic!("{at}: a shipped row cannot be {other:?}"),
        }
    }
    assert!(observed >= 150, "only {observed} observed price rows");
    assert!(dated.len() >= 5, "observed rows from only {} dates", dated.len());
    // The brief's JD GCS figure stays marked as such (price-evidence.md §4: not found in any source).
    let gcs = c.price(Provider::JdCloud, "gcs.classic.24g", "cn-central-xy1", BillingMode::Hourly).unwrap();
    assert_eq!((gcs.cny, gcs.confidence), (1.89, Confidence::Brief));
}

#[test]
fn no_key_is_there_twice() {
    let c = cat();
    let mut seen = BTreeSet::new();
    for g in c.gpus() {
        assert!(seen.insert(g.id.clone()), "GPU {} twice", g.id);
    }
    let mut seen = BTreeSet::new();
    for i in c.instance_types() {
        assert!(seen.insert((i.provider, i.id.clone())), "{} {} twice", i.provider, i.id);
        let regions: BTreeSet<_> = i.regions.iter().collect();
        assert_eq!(regions.len(), i.regions.len(), "{} {}: a region twice", i.provider, i.id);
    }
    // Two rows may share (provider, instance, region, mode) only with different sources.
    let mut seen = BTreeSet::new();
    for (r, _) in c.price_rows() {
        let key = (r.provider, r.instance.clone(), r.region.clone(), r.mode, r.source.clone());
        assert!(
            seen.insert(key),
            "price {} {} {} {} twice from one source",
            r.provider,
            r.instance,
            r.region,
            r.mode
        );
    }
    // A cloud's region (and a region's zone) listed twice would be searched and priced twice.
    for p in c.providers() {
        let mut seen = BTreeSet::new();
        for r in &p.regions {
            assert!(seen.insert(r.id.clone()), "{} region {} twice", p.id, r.id);
            let zones: BTreeSet<_> = r.zones.iter().collect();
            assert_eq!(zones.len(), r.zones.len(), "{} {}: a zone twice", p.id, r.id);
        }
    }
    let mut seen = BTreeSet::new();
    for m in c.mode_ratios() {
        assert!(seen.insert((m.provider, m.mode)), "mode ratio {:?} {} twice", m.provider, m.mode);
    }
}

#[test]
fn regions_and_zones_belong_to_the_provider() {
    let c = cat();
    for i in c.instance_types() {
        let p = c.provider(i.provider).unwrap();
        assert!(!i.regions.is_empty(), "{} {}: no region", i.provider, i.id);
        for r in &i.regions {
            assert!(p.regions.iter().any(|x| &x.id == r), "{} {}: region {r}", i.provider, i.id);
        }
        for z in &i.zones {
            let region = p.regions.iter().find(|x| x.zones.contains(z));
            let region =
                region.unwrap_or_else(|| panic!("{} {}: zone {z} is not {}'s", i.provider, i.id, p.id));
            assert!(i.regions.contains(&region.id), "{} {}: zone {z} outside its regions", i.provider, i.id);
        }
    }
    // Region ids follow each cloud's own scheme.
    for p in c.providers() {
        let prefix = match p.id {
            Provider::Tencent => "ap-",
            Provider::Alibaba | Provider::JdCloud => "cn-",
        };
        for r in &p.regions {
            assert!(r.id.starts_with(prefix), "{} region {}", p.id, r.id);
            assert!(!r.zones.is_empty() && r.zones.iter().all(|z| z.starts_with(&r.id)), "{} {}", p.id, r.id);
        }
    }
}

/// The documented ratios are the documented numbers, and the judgement fallbacks stay inside the
/// bounds the clouds document (price-evidence.md §1.3, §2.3, §3.3).
#[test]
fn mode_ratios_stay_inside_documented_bounds() {
    let c = cat();
    let ratio = |p: Option<Provider>, m: BillingMode| {
        c.mode_ratios().iter().find(|r| r.provider == p && r.mode == m).map(|r| r.of_monthly)
    };
    let close = |a: f64, b: f64| (a - b).abs() <= 0.005 * b;
    // Tencent CVM 'other families': 1 yr 83 %, 3 yr 50 % of list; monthly = 288 × hourly on its GPU list.
    assert!(close(ratio(Some(Provider::Tencent), BillingMode::Year1).unwrap(), 12.0 * 0.83));
    assert!(close(ratio(Some(Provider::Tencent), BillingMode::Year3).unwrap(), 36.0 * 0.50));
    assert!(close(ratio(Some(Provider::Tencent), BillingMode::Hourly).unwrap(), 1.0 / 288.0));
    // Alibaba ONE_YEAR_85_PERCENT; JD monthly = 288 × hourly.
    assert!(close(ratio(Some(Provider::Alibaba), BillingMode::Year1).unwrap(), 12.0 * 0.85));
    assert!(close(ratio(Some(Provider::JdCloud), BillingMode::Hourly).unwrap(), 1.0 / 288.0));
    for p in Provider::ALL {
        let get = |m| ratio(Some(p), m).or_else(|| ratio(None, m));
        let hourly = get(BillingMode::Hourly).unwrap();
        // Monthly ÷ hourly between 288 h (Tencent/JD lists) and 730 h (a month of hours).
        assert!((1.0 / 730.0..=1.0 / 288.0 + 1e-6).contains(&hourly), "{p} hourly {hourly}");
        // Spot: Alibaba's documented floor is 10 % of pay-as-you-go; never above it.
        let spot = get(BillingMode::Spot).unwrap();
        assert!(spot >= 0.1 * hourly - 1e-9 && spot <= hourly, "{p} spot {spot} vs hourly {hourly}");
        // A week is dearer than 7/30 of a month and cheaper than a month.
        let weekly = get(BillingMode::Weekly).unwrap();
        assert!((7.0 / 30.0..1.0).contains(&weekly), "{p} weekly {weekly}");
        // Terms: no dearer than paying monthly, no cheaper than the deepest documented discount
        // (Tencent 3 yr at 50 %; its S5 special 3 yr 41 % is CPU-only).
        let y1 = get(BillingMode::Year1).unwrap();
        let y3 = get(BillingMode::Year3).unwrap();
        assert!((12.0 * 0.5..=12.0).contains(&y1), "{p} year1 {y1}");
        assert!((36.0 * 0.3..=36.0).contains(&y3), "{p} year3 {y3}");
        assert!(y3 <= 3.0 * y1, "{p}: 3 years dearer than three single years");
    }
    // Each ratio says where it comes from, and the judgement ones say so.
    for m in c.mode_ratios() {
        assert!(m.derivation.len() > 10, "{:?} {}", m.provider, m.mode);
        if m.provider.is_some() {
            assert!(m.derivation.contains("confidence"), "{:?} {}: name the evidence", m.provider, m.mode);
        }
    }
}

/// Observed beats derived, conflicting sources are kept apart, and the derivation says which was used.
#[test]
fn conflicting_sources_are_kept_apart_and_the_choice_explained() {
    let c = cat();
    let keyed = |inst: &str| {
        c.price_rows()
            .filter(|(r, _)| r.instance == inst && r.mode == BillingMode::Monthly && r.region == "*")
            .count()
    };
    // GT4.4XLARGE96: list 13,748 (≈2021, A) and a 2026 scrape 12,948 (C): both kept, the newer used.
    assert_eq!(keyed("GT4.4XLARGE96"), 2);
    let p = c.price(Provider::Tencent, "GT4.4XLARGE96", "ap-guangzhou", BillingMode::Monthly).unwrap();
    assert_eq!((p.cny, p.confidence), (12948.0, Confidence::C));
    assert!(p.derivation.contains("13748.00") && p.derivation.contains("newer"), "{}", p.derivation);
    // GN6S.LARGE20: Tencent's list 2,000 (A) beats the brief's 175.
    let p = c.price(Provider::Tencent, "GN6S.LARGE20", "ap-guangzhou", BillingMode::Monthly).unwrap();
    assert_eq!((p.cny, p.confidence), (2000.0, Confidence::A));
    assert!(p.derivation.contains("beats a brief quote"), "{}", p.derivation);
    // An old observation next to a newer per-GPU anchor that disagrees: the text says which and why.
    let p = c.price(Provider::Tencent, "GN7.2XLARGE32", "ap-guangzhou", BillingMode::Monthly).unwrap();
    assert_eq!((p.cny, p.origin), (2500.0, PriceOrigin::Shipped));
    assert!(p.derivation.contains("newer per-GPU anchor"), "{}", p.derivation);
    // JD Suqian has its own list price, 75 % of BJ/SH/GZ; not averaged with it.
    let bj = c.price(Provider::JdCloud, "p.n1v100.2xlarge", "cn-north-1", BillingMode::Hourly).unwrap();
    let sq = c.price(Provider::JdCloud, "p.n1v100.2xlarge", "cn-east-1", BillingMode::Hourly).unwrap();
    assert_eq!((bj.cny, sq.cny), (20.73, 15.55));
    // A documented ratio is used where a cloud has one: Tencent 1 yr = 12 × 83 % of its monthly.
    let y1 = c.price(Provider::Tencent, "GN7.2XLARGE32", "ap-guangzhou", BillingMode::Year1).unwrap();
    assert_eq!(y1.origin, PriceOrigin::Derived);
    assert!((y1.cny - 2500.0 * 9.96).abs() < 0.01 && y1.derivation.contains("83 %"), "{y1:?}");
    // The mix is visible: most resolved prices are still estimates, the observed ones are dated.
    let mix = Catalog::evidence_mix(c.prices());
    assert!(mix.observed >= 300 && mix.derived > mix.observed, "{mix:?}");
    assert_eq!(mix.observed_oldest.unwrap().to_string(), "2019-01-01");
    let line = mix.line(parse_date("2026-12-01").unwrap());
    assert!(line.contains("observed (2019-01-01 … ") && line.contains("catalog refresh"), "{line}");
}

/// Issue 16: a GeForce card's box figure (FP16 tensor with FP16 accumulate) is twice what
/// mixed-precision training runs (FP32 accumulate), while data-centre cards run both at one rate.
/// The catalog carries both figures for GeForce cards, `fp16_tflops` is always the FP32-accumulate
/// one, and training times use it.
#[test]
fn geforce_cards_carry_both_tensor_rates_and_train_at_the_fp32_accumulate_one() {
    let c = cat();
    let mut geforce = 0;
    for g in c.gpus() {
        if g.name.contains("GeForce") {
            geforce += 1;
            let acc16 = g.fp16_acc16_tflops.unwrap_or_else(|| panic!("{}: no FP16-accumulate figure", g.id));
            let ratio = acc16 / g.fp16_tflops;
            assert!(
                (1.98..=2.02).contains(&ratio),
                "{}: FP16-acc {acc16} ÷ FP32-acc {} = {ratio}",
                g.id,
                g.fp16_tflops
            );
            let mut job = gpuctl_core::fit::Job::new(
                gpuctl_core::preset("qwen2.5-7b").unwrap(),
                gpuctl_core::Method::Lora,
            );
            job.tokens = 1e6;
            let t = gpuctl_core::time::estimate_time(&job, g, 1.0);
            assert_eq!(
                t.peak_tflops_per_gpu, g.fp16_tflops,
                "{}: training must use the FP32-accumulate rate",
                g.id
            );
            assert!(
                t.assumptions.iter().any(|a| a.contains("FP32 accumulate")),
                "{}: {:?}",
                g.id,
                t.assumptions
            );
        } else {
            assert_eq!(g.fp16_acc16_tflops, None, "{}: a second rate only where it differs (GeForce)", g.id);
        }
    }
    assert!(geforce >= 4, "the catalog's GeForce cards: {geforce}");
    // The RTX 4090: 165.2 with FP32 accumulate, 330.3 with FP16 accumulate (Ada whitepaper).
    let g = c.gpu("rtx4090").unwrap();
    assert_eq!((g.fp16_tflops, g.fp16_acc16_tflops), (165.0, Some(330.3)));
}
