//! `plan` against the shipped catalog: prices trace to catalog rows, budgets refuse, state decides
//! what is kept and released.

use std::path::Path;

use expect_test::expect;
use gpuctl_core::{Catalog, Date};
use gpuctl_provision::plan::plan;
use gpuctl_provision::spec::{self, Limits};
use gpuctl_provision::state::{Resource, ResourceState};
use gpuctl_provision::{BillingMode, Provider};

const TODAY: Date = jiff::civil::date(2026, 11, 30);

fn spec_of(src: &str) -> spec::Spec {
    spec::parse("s.toml", src, None, &Limits::default()).unwrap()
}

const T4: &str = r#"
deployment = "d"
hours = 10
[[pool]]
name = "a"
count = 2
provider = "tencent"
region = "ap-guangzhou"
zone = "ap-guangzhou-3"
instance_type = "GN7.2XLARGE32"
billing = "hourly"
image = "img-1"
"#;

#[test]
fn prices_come_from_the_catalog_with_their_source() {
    let cat = Catalog::shipped();
    let p = plan(&spec_of(T4), cat, &[], TODAY);
    let row = cat
        .price(Provider::Tencent, "GN7.2XLARGE32", "ap-guangzhou", BillingMode::Hourly)
        .expect("catalog has GN7 hourly");
    let pool = &p.pools[0];
    let fact = pool.choices[0].price.as_ref().unwrap();
    assert_eq!((fact.cny_per_hour, fact.source.as_str()), (row.cny_per_hour, row.source.as_str()));
    assert_eq!(pool.create, vec![0, 1]);
    // Each node's default system disk (ssd, 100 GB → Tencent CLOUD_SSD) bills by the hour beside it:
    // 0.0025 CNY/GB-hour (storage.toml, Tencent's CBS price page) × 100 GB = 0.25 CNY/hour a node.
    let disk = &pool.disks[0];
    assert_eq!((disk.role, disk.class, disk.size_gb), ("system", Some("CLOUD_SSD"), 100));
    assert!((disk.cny_per_hour.unwrap() - 0.25).abs() < 1e-9, "{disk:?}");
    assert!(disk.source.as_deref().unwrap().contains("价格总览.md"), "{disk:?}");
    assert!((pool.cny_per_hour.unwrap() - 2.0 * (row.cny_per_hour + 0.25)).abs() < 1e-9);
    assert!((p.total_cny.unwrap() - 2.0 * 10.0 * (row.cny + 0.25)).abs() < 1e-9);
    // Every mode the catalog prices is compared, and hourly is among them at the same total.
    let hourly = pool.by_mode.iter().find(|m| m.mode == BillingMode::Hourly).unwrap();
    assert!((hourly.total_cny - p.total_cny.unwrap()).abs() < 1e-9);
    assert!(p.over_budget.is_empty());
}

#[test]
fn over_budget_says_by_how_much() {
    let cat = Catalog::shipped();
    let per_hour = cat
        .price(Provider::Tencent, "GN7.2XLARGE32", "ap-guangzhou", BillingMode::Hourly)
        .unwrap()
        .cny_per_hour;
    let src = T4.replace("hours = 10", "hours = 10\n[budget]\ntotal_cny = 1\nper_hour_cny = 0.5");
    let p = plan(&spec_of(&src), cat, &[], TODAY);
    // Each node with its 100 GB CLOUD_SSD system disk at 0.0025 CNY/GB-hour: 0.25 CNY/hour more.
    let per_hour = per_hour + 0.25;
    assert_eq!(
        p.over_budget,
        vec![
            format!("¥{:.2}/hour (at the dearest fallback candidate of each pool) is above the budget of ¥0.50/hour", 2.0 * per_hour),
            format!("¥{:.2} in total over 10 hours (at the dearest fallback candidate of each pool) is above the budget of ¥1.00", 20.0 * per_hour),
        ]
    );
}

fn recorded(pool: &str, index: u32, state: ResourceState) -> Resource {
    Resource {
        client_token: format!("tok-{pool}-{index}"),
        deployment: "d".into(),
        pool: pool.into(),
        index,
        provider: Provider::Tencent,
        region: "ap-guangzhou".into(),
        zone: "ap-guangzhou-3".into(),
        instance_type: "GN7.2XLARGE32".into(),
        billing: BillingMode::Hourly,
        instance_id: Some(format!("ins-{pool}{index}")),
        state,
        public_ip: None,
        private_ip: None,
        price_cny_per_hour: None,
        price_source: None,
        price_as_of: None,
        auto_release_at: None,
        created_at: "2026-11-30T00:00:00Z".parse().unwrap(),
        running_at: None,
        released_at: None,
        last_error: None,
        billed_until: None,
    }
}

#[test]
fn recorded_state_decides_keep_create_and_release() {
    let state = [
        recorded("a", 0, ResourceState::Running),
        recorded("a", 1, ResourceState::Released), // released: created again
        recorded("a", 2, ResourceState::Running),  // count lowered to 2: released
        recorded("gone", 0, ResourceState::Running), // pool removed: released
    ];
    let p = plan(&spec_of(T4), Catalog::shipped(), &state, TODAY);
    assert_eq!(p.pools[0].create, vec![1]);
    assert_eq!(p.pools[0].keep.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0]);
    let released: Vec<(&str, u32)> = p.release.iter().map(|r| (r.pool.as_str(), r.index)).collect();
    assert_eq!(released, vec![("a", 2), ("gone", 0)]);
    assert_eq!(p.creates(), 1);
}

/// A recorded instance the spec no longer places where it is (another cloud, type or mode) is not
/// kept, priced or duplicated: the plan names it and `provision` refuses until it is released.
#[test]
fn an_instance_the_spec_no_longer_places_is_named_not_kept() {
    let mut other_type = recorded("a", 0, ResourceState::Running);
    other_type.instance_type = "PNV4.7XLARGE116".into();
    let mut other_cloud = recorded("a", 1, ResourceState::Running);
    other_cloud.provider = Provider::Alibaba;
    other_cloud.region = "cn-beijing".into();
    let p = plan(&spec_of(T4), Catalog::shipped(), &[other_type, other_cloud], TODAY);
    let pool = &p.pools[0];
    assert!(pool.keep.is_empty() && pool.create.is_empty(), "{pool:?}");
    assert_eq!(pool.moved.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0, 1]);
    assert_eq!(p.moved.len(), 2);
    assert!(p.moved[0].contains("ins-a0") && p.moved[0].contains("PNV4.7XLARGE116"), "{:?}", p.moved);
    assert!(p.moved[1].contains("alibaba") && p.moved[1].contains("gpuctl destroy"), "{:?}", p.moved);
    // Another billing mode is another purchase too.
    let mut spot = recorded("a", 0, ResourceState::Running);
    spot.billing = BillingMode::Spot;
    let p = plan(&spec_of(T4), Catalog::shipped(), &[spot], TODAY);
    assert_eq!((p.pools[0].create.clone(), p.moved.len()), (vec![1], 1));
}

#[test]
fn staged_specs_plan_with_known_prices() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../infra");
    let mut out = String::new();
    for name in ["stage1.toml", "stage2.toml", "stage3.toml"] {
        let s = spec::parse_file(&root.join(name), &Limits::default()).unwrap();
        let p = plan(&s, Catalog::shipped(), &[], TODAY);
        for pool in &p.pools {
            let c = &pool.choices[0];
            out += &format!(
                "{name} {}: {} × {} {} {} in {}; ¥/h {:?}; total {:?}; over budget: {}\n",
                pool.name,
                pool.count,
                c.provider,
                c.instance_type,
                pool.billing,
                c.zone,
                pool.cny_per_hour.map(|v| (v * 100.0).round() / 100.0),
                pool.total_cny.map(|v| v.round()),
                !p.over_budget.is_empty()
            );
        }
    }
    expect![[r#"
        stage1.toml validate: 1 × tencent GN7.2XLARGE32 hourly in ap-guangzhou-3; ¥/h Some(9.43); total Some(151.0); over budget: false
        stage2.toml tune: 2 × alibaba ecs.gn7i-c8g1.2xlarge weekly in cn-hangzhou-i; ¥/h Some(18.34); total Some(3082.0); over budget: false
        stage3.toml serve: 2 × tencent GN7.2XLARGE32 year3 in ap-shanghai-4; ¥/h Some(0.88); total Some(23187.0); over budget: false
        stage3.toml train: 1 × alibaba ecs.gn7i-c32g1.8xlarge year1 in cn-beijing-g; ¥/h Some(5.24); total Some(45881.0); over budget: false
    "#]].assert_eq(&out);
}

/// A pool's total and its line under its own billing mode are one computation (core's
/// `price::terms_bought` with the pool's term), so they agree for every mode, term and duration —
/// the prepaid terms bought included, which an hour-based comparison used to undercount.
#[test]
fn pool_total_equals_its_own_modes_line() {
    let cat = Catalog::shipped();
    let mut checked = Vec::new();
    for provider in ["alibaba", "tencent"] {
        let (region, zone, ty) = match provider {
            "alibaba" => ("cn-hangzhou", "cn-hangzhou-i", "ecs.gn7i-c8g1.2xlarge"),
            _ => ("ap-guangzhou", "ap-guangzhou-3", "GN7.2XLARGE32"),
        };
        for mode in BillingMode::ALL {
            let terms: &[u32] = if mode.is_per_hour() { &[1] } else { &[1, 2, 3] };
            for &term in terms {
                for hours in ["", "hours = 10\n", "hours = 2000\n"] {
                    let term_line =
                        if mode.is_per_hour() { String::new() } else { format!("term = {term}\n") };
                    let src = format!(
                        "deployment = \"d\"\n{hours}[[pool]]\nname = \"a\"\ncount = 3\nprovider = \"{provider}\"\nregion = \"{region}\"\nzone = \"{zone}\"\ninstance_type = \"{ty}\"\nbilling = \"{mode}\"\n{term_line}image = \"img-1\"\n"
                    );
                    // Modes a cloud's API cannot buy (or with shorter terms) are refused by the parser.
                    let Ok(s) = spec::parse("s.toml", &src, None, &Limits::default()) else { continue };
                    let p = plan(&s, cat, &[], TODAY);
                    let pool = &p.pools[0];
                    let Some(total) = pool.total_cny else { continue };
                    let own = pool.by_mode.iter().find(|m| m.mode == mode).expect("its own mode is compared");
                    assert_eq!(own.total_cny, total, "{provider} {mode} ×{term} {hours:?}");
                    assert_eq!(p.total_cny, Some(total));
                    checked.push((provider, mode, term, hours.is_empty()));
                }
            }
        }
    }
    // The case that disagreed before: a prepaid pool of several terms without `hours`.
    assert!(checked.iter().any(|&(_, m, t, no_hours)| !m.is_per_hour() && t > 1 && no_hours), "{checked:?}");
    assert!(checked.iter().any(|&(_, m, _, _)| m.is_per_hour()), "{checked:?}");
}

/// A spec may name an Alibaba type in the catalog's spelling or the API's (`ecs.`); both plan the
/// same, at the catalog's price, and the choice carries the API's spelling the `Cloud` trait speaks
/// (the one rule: the catalog's `api_type_prefix`, issue 11).
#[test]
fn either_spelling_of_an_alibaba_type_plans_the_api_spelling() {
    let planned = |ty: &str| {
        let src = format!("deployment = \"d\"\nhours = 10\n[[pool]]\nname = \"a\"\ncount = 1\nbilling = \"hourly\"\nprovider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"{ty}\"\nimage = \"img-1\"\n");
        let p = plan(&spec_of(&src), Catalog::shipped(), &[], TODAY);
        let c = p.pools[0].choices[0].clone();
        (c.instance_type, c.price.map(|f| f.cny_per_hour), p.total_cny)
    };
    let api = planned("ecs.gn7i-c8g1.2xlarge");
    assert_eq!(api.0, "ecs.gn7i-c8g1.2xlarge");
    assert!(api.1.is_some() && api.2.is_some(), "{api:?}");
    assert_eq!(planned("gn7i-c8g1.2xlarge"), api);
}

/// JD Cloud's deleteInstance refuses an unexpired prepaid VM and no API ends the term, so `plan`
/// says so before buying one; Alibaba (convert to pay-as-you-go) and Tencent (recycle bin) have a
/// way out, and pay-as-you-go needs none (issue 12 item 5).
#[test]
fn plan_warns_before_buying_a_term_that_cannot_end_early() {
    let pool = |provider: &str, billing: &str| {
        let place = match provider {
            "jdcloud" => "provider = \"jdcloud\"\nregion = \"cn-north-1\"\nzone = \"cn-north-1a\"\ninstance_type = \"p.n1v100.2xlarge\"\nimage = \"7c1e0d55-2a65-4be8-a3a9-8e2f7d6b2204\"\nnetwork = { vpc = \"vpc-1\", subnet = \"subnet-1\", security_groups = [\"sg-1\"] }\n",
            "alibaba" => "provider = \"alibaba\"\nregion = \"cn-hangzhou\"\nzone = \"cn-hangzhou-i\"\ninstance_type = \"ecs.gn7i-c8g1.2xlarge\"\nimage = \"img-1\"\n",
            _ => "provider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\nimage = \"img-1\"\n",
        };
        let src = format!("deployment = \"d\"\nhours = 10\n[[pool]]\nname = \"a\"\ncount = 1\nbilling = \"{billing}\"\n{place}");
        plan(&spec_of(&src), Catalog::shipped(), &[], TODAY).warnings
    };
    let stuck = |w: &[String]| w.iter().filter(|w| w.contains("cannot be ended early")).count();
    let jd = pool("jdcloud", "monthly");
    assert_eq!(stuck(&jd), 1, "{jd:?}");
    assert!(jd.iter().any(|w| w.contains("pool `a`: a monthly jdcloud term")), "{jd:?}");
    assert_eq!(stuck(&pool("jdcloud", "hourly")), 0);
    assert_eq!(stuck(&pool("alibaba", "monthly")), 0);
    assert_eq!(stuck(&pool("tencent", "monthly")), 0);
}

#[test]
fn env_requirements_are_checked_by_the_compat_rules_and_never_passed_unseen() {
    let cat = Catalog::shipped();
    let src = format!(
        "{T4}data_disks = [{{ size_gb = 100 }}]\nenv = {{ container = true, mount = \"/data\", cuda = \"12.1\", driver = \"470.57.02\" }}\n"
    );
    let p = plan(&spec_of(&src), cat, &[], TODAY);
    let env: Vec<&String> = p.warnings.iter().filter(|w| w.contains("env")).collect();
    expect![[r#"
        [
            "pool `a`: env: CUDA 12.1 needs NVIDIA driver ≥ 525.60.13, above driver = \"470.57.02\"; the boot script requires 525.60.13",
            "pool `a`: env CUDA 12.1, driver 470.57.02: not checked against the image: image unknown (given by id; gpuctl has no record of its CUDA or driver); the boot script checks the driver and fails its `driver` step if it is older",
        ]
    "#]]
    .assert_debug_eq(&env);
    // One rendered boot config per cloud the pool may land on, with its summary line.
    assert_eq!(p.pools[0].boot.len(), 1);
    assert!(p.pools[0].boot[0].text.contains("step driver driver_at_least '525.60.13'"));
    assert!(p.pools[0].boot[0].summary.starts_with("cloud-config, "), "{}", p.pools[0].boot[0].summary);
    // A GPU that the CUDA wanted cannot drive is an error from the same rules (Ada, CC 8.9, needs 11.8+).
    let l20 = T4
        .replace("\"tencent\"", "\"alibaba\"")
        .replace("ap-guangzhou-3", "cn-hangzhou-i")
        .replace("ap-guangzhou", "cn-hangzhou")
        .replace("GN7.2XLARGE32", "ecs.gn8is.2xlarge");
    let src = l20 + "env = { cuda = \"11.7\" }\n";
    let p = plan(&spec_of(&src), cat, &[], TODAY);
    assert!(p.warnings.iter().any(|w| w.contains("needs CUDA 11.8 or newer")), "{:?}", p.warnings);
    // Without env nothing is rendered or said.
    let p = plan(&spec_of(T4), cat, &[], TODAY);
    assert!(p.pools[0].boot.is_empty() && !p.warnings.iter().any(|w| w.contains("env")));
}

/// Issue 14: a cluster's nodes share one place. Once a node runs, new nodes may only join it there
/// (the choices shrink to its zone and type); a recorded node elsewhere is named, not kept; and the
/// plan says what the nodes talk over.
#[test]
fn a_cluster_stays_where_its_nodes_run() {
    let src = T4.replace("count = 2", "count = 3\ncluster = true").replace(
        "zone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\n",
        "",
    ) + "[[pool.candidates]]\nprovider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-3\"\ninstance_type = \"GN7.2XLARGE32\"\n\
         [[pool.candidates]]\nprovider = \"tencent\"\nregion = \"ap-guangzhou\"\nzone = \"ap-guangzhou-4\"\ninstance_type = \"GN7.2XLARGE32\"\n";
    let src = src.replace("provider = \"tencent\"\nregion = \"ap-guangzhou\"\nbilling", "billing");
    let s = spec_of(&src);
    let fresh = plan(&s, Catalog::shipped(), &[], TODAY);
    let pool = &fresh.pools[0];
    assert!(pool.cluster);
    assert_eq!(pool.choices.len(), 2, "both zones, in order, for the whole cluster");
    assert_eq!(pool.create, vec![0, 1, 2]);
    assert!(
        fresh
            .warnings
            .iter()
            .any(|w| w.contains("a cluster of 3 nodes on tencent: an HPC cluster for HPC (HCC) types")),
        "{:?}",
        fresh.warnings
    );
    assert!(fresh.warnings.iter().any(|w| w.contains("no shared storage")), "{:?}", fresh.warnings);
    // GN7.2XLARGE32's published bandwidth is under 10 Gbit/s: said before buying.
    let net = Catalog::shipped().instance_type(Provider::Tencent, "GN7.2XLARGE32").and_then(|i| i.net_gbps);
    if net.is_some_and(|g| g < 10.0) {
        assert!(fresh.warnings.iter().any(|w| w.contains("under 10 Gbit/s")), "{:?}", fresh.warnings);
    }

    let mut in_4 = recorded("a", 0, ResourceState::Running);
    in_4.zone = "ap-guangzhou-4".into();
    let mut in_3 = recorded("a", 1, ResourceState::Running);
    in_3.zone = "ap-guangzhou-3".into();
    let p = plan(&s, Catalog::shipped(), &[in_4, in_3], TODAY);
    let pool = &p.pools[0];
    assert_eq!(
        pool.choices.iter().map(|c| c.zone.as_str()).collect::<Vec<_>>(),
        ["ap-guangzhou-4"],
        "new nodes join node 0 where it runs"
    );
    assert_eq!(pool.keep.iter().map(|r| r.index).collect::<Vec<_>>(), vec![0]);
    assert_eq!(
        pool.moved.iter().map(|r| r.index).collect::<Vec<_>>(),
        vec![1],
        "a node in another zone is named"
    );
    assert_eq!(pool.create, vec![2]);
    assert_eq!(p.moved.len(), 1);
}

/// A release an earlier run began and did not finish is finished by the next run, and its slot filled
/// anew: a killed run must not leave a half-released instance counted as the pool's (a cluster moving
/// off a short zone would stay pinned there).
#[test]
fn an_unfinished_release_is_finished_and_its_slot_filled() {
    let state = [recorded("a", 0, ResourceState::Releasing), recorded("a", 1, ResourceState::Running)];
    let p = plan(&spec_of(T4), Catalog::shipped(), &state, TODAY);
    assert_eq!(p.pools[0].create, vec![0]);
    assert_eq!(p.pools[0].keep.iter().map(|r| r.index).collect::<Vec<_>>(), vec![1]);
    assert_eq!(
        p.release.iter().map(|r| (r.index, r.state)).collect::<Vec<_>>(),
        vec![(0, ResourceState::Releasing)]
    );
}

/// Disks and snapshots in the plan (issue 15): a prepaid pool's disks at the prepaid GB-month price
/// for the terms bought, an unknown class left out with a warning, the system-disk rule cited, and
/// the snapshots `snapshot.before_release` leaves priced per month outside the totals.
#[test]
fn disks_and_snapshots_are_priced_with_their_sources() {
    let cat = Catalog::shipped();
    let src = r#"
deployment = "d"
[[pool]]
name = "a"
count = 2
provider = "alibaba"
region = "cn-hangzhou"
zone = "cn-hangzhou-i"
instance_type = "ecs.gn7i-c8g1.2xlarge"
billing = "monthly"
term = 2
image = "img-1"
public_ip = false
snapshot = { before_release = true }
data_disks = [{ category = "premium", size_gb = 200 }]
"#;
    let p = plan(&spec_of(src), cat, &[], TODAY);
    let pool = &p.pools[0];
    let monthly =
        cat.price(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-hangzhou", BillingMode::Monthly).unwrap();
    // System disk: ssd → cloud_essd (PL1), 1.00 CNY/GiB-month prepaid × 100 GB × 2 months × 2 nodes = 400.
    let sys = &pool.disks[0];
    assert_eq!((sys.role, sys.class), ("system", Some("cloud_essd")));
    assert!((sys.total_cny.unwrap() - 400.0).abs() < 1e-9, "{sys:?}");
    assert!((sys.cny_per_hour.unwrap() - 100.0 / 730.0).abs() < 1e-9, "{sys:?}");
    assert!(
        sys.basis.contains("prepaid") && sys.source.as_deref().unwrap().contains("块存储计费.md"),
        "{sys:?}"
    );
    // Data disk: premium → cloud_efficiency, no published figure: out of the totals, said so.
    let data = &pool.disks[1];
    assert_eq!((data.class, data.total_cny), (Some("cloud_efficiency"), None));
    assert!(data.basis.starts_with("price unknown"), "{data:?}");
    assert!(
        p.warnings.iter().any(|w| w.contains("data disk") && w.contains("not in the totals")),
        "{:?}",
        p.warnings
    );
    // The pool's total: two months of both instances plus the priced disk; its mode line agrees.
    assert!((pool.total_cny.unwrap() - (2.0 * 2.0 * monthly.cny + 400.0)).abs() < 1e-6, "{pool:?}");
    let own = pool.by_mode.iter().find(|m| m.mode == BillingMode::Monthly).unwrap();
    assert!((own.total_cny - pool.total_cny.unwrap()).abs() < 1e-9);
    // Per-hour modes price the same disks at the pay-as-you-go GB-hour rate (0.0021 × 100 GB × 1 h × 2).
    let hourly = pool.by_mode.iter().find(|m| m.mode == BillingMode::Hourly).unwrap();
    let hourly_price =
        cat.price(Provider::Alibaba, "gn7i-c8g1.2xlarge", "cn-hangzhou", BillingMode::Hourly).unwrap();
    assert!((hourly.total_cny - 2.0 * (hourly_price.cny + 0.21)).abs() < 1e-9, "{hourly:?}");
    // Prepaid: Alibaba bills the system disk in the instance's mode, not bundled; cited.
    let rule = pool.system_disk_rule.as_deref().unwrap();
    assert!(rule.contains("not bundled") && rule.contains("随ECS实例创建的云盘"), "{rule}");
    // Snapshots: up to (100 + 200) GB × 2 nodes at 0.12 CNY/GiB-month = 72 CNY a month after release.
    let sn = pool.snapshots.as_ref().unwrap();
    assert_eq!(sn.gb, 600);
    assert!((sn.cny_per_month.unwrap() - 72.0).abs() < 1e-9, "{sn:?}");
    // A pay-as-you-go pool states no system-disk rule.
    let p = plan(
        &spec_of(&src.replace("billing = \"monthly\"\nterm = 2", "billing = \"hourly\"")),
        cat,
        &[],
        TODAY,
    );
    assert_eq!(p.pools[0].system_disk_rule, None);
}
