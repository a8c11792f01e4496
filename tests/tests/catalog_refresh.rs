//! `gpuctl catalog refresh` against a real `gpuctl sim` process: the overlay it writes is what
//! `catalog` and `estimate` then price with (today's date, the API as source); a stock-out and a type the
//! cloud will not quote are reported with the cloud's code and request id while the other prices are
//! still written (exit 4); a throttled run completes by retrying.

use std::path::Path;
use std::process::Command;

use gpuctl_e2e::e2e::{gpuctl_bin, gpuctl_cmd, SimProcess};
use serde_json::Value;

const QUICK: &str = "seed = 5\n[knobs]\nboot_seconds = 1\n";

/// `gpuctl catalog refresh ARGS --json` with the sim's endpoints and keys, HOME in `dir`.
fn refresh(sim: &SimProcess, dir: &Path, args: &[&str]) -> (Option<i32>, Value) {
    let mut all = vec!["catalog", "refresh", "--json"];
    all.extend_from_slice(args);
    let o = gpuctl_cmd(&sim.url, dir, &all).output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    let v = serde_json::from_str(&out)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {out}\nstderr: {}", String::from_utf8_lossy(&o.stderr)));
    (o.status.code(), v)
}

/// A read-only command (catalog, estimate) as a user runs it: HOME in `dir`, no overlay variables.
fn read(dir: &Path, args: &[&str]) -> Value {
    let mut c = Command::new(gpuctl_bin());
    c.args(args)
        .env("GPUCTL_TODAY", "2026-11-30")
        .env("HOME", dir)
        .env_remove("GPUCTL_PRICE_OVERLAY")
        .env_remove("XDG_CONFIG_HOME");
    let o = c.output().unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{args:?}: {out}\n{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: not JSON ({e}): {out}"))
}

#[test]
fn refreshed_prices_are_what_catalog_and_estimate_use() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), QUICK, &[]);
    // A user's own row survives a refresh.
    let overlay = dir.path().join(".config/gpuctl/prices.toml");
    std::fs::create_dir_all(overlay.parent().unwrap()).unwrap();
    std::fs::write(&overlay, "schema_version = 1\n# my contract\n[[price]]\nprovider = \"jdcloud\"\ninstance = \"p.n1v100.2xlarge\"\nregion = \"*\"\nmode = \"monthly\"\ncny = 1234.0\nas_of = \"2026-10-01\"\nsource = \"my contract\"\nconfidence = \"A\"\n").unwrap();

    let (code, r) = refresh(&sim, dir.path(), &["--provider", "alibaba", "--instance", "gn7i-c8g1.2xlarge"]);
    assert_eq!(code, Some(0), "{r}");
    assert_eq!(r["as_of"], "2026-11-30");
    assert_eq!(r["overlay"], overlay.display().to_string());
    assert!(r["not_quoted"].as_array().unwrap().is_empty(), "{r}");
    let quoted = r["quoted"].as_array().unwrap();
    assert!(
        quoted.iter().any(|q| q["mode"] == "hourly") && quoted.iter().any(|q| q["mode"] == "weekly"),
        "{r}"
    );
    assert!(quoted.iter().all(|q| q["request_id"].as_str().is_some_and(|s| !s.is_empty())), "{r}");
    assert!(r["stock"].as_array().unwrap().iter().all(|s| s["in_stock"] == true), "{r}");

    let text = std::fs::read_to_string(&overlay).unwrap();
    assert!(text.contains("# my contract") && text.contains("cny = 1234.0"), "{text}");

    // `catalog` shows the quoted prices, dated today, with the API as source.
    let cat = read(dir.path(), &["catalog", "--provider", "alibaba", "--json"]);
    let row = cat["instance_types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "gn7i-c8g1.2xlarge")
        .unwrap()
        .clone();
    for q in quoted {
        let p = row["prices"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["region"] == q["region"] && p["mode"] == q["mode"])
            .unwrap_or_else(|| panic!("no {q} in {row}"));
        assert_eq!(p["cny"], q["cny"], "{p}");
        assert_eq!(p["as_of"], "2026-11-30");
        assert_eq!(p["source"], "Alibaba DescribePrice via gpuctl catalog refresh");
    }
    // The user's row is still in force.
    let jd = read(dir.path(), &["catalog", "--provider", "jdcloud", "--json"]);
    let g = jd["instance_types"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["id"] == "p.n1v100.2xlarge")
        .unwrap()
        .clone();
    assert!(g["prices"].as_array().unwrap().iter().any(|p| p["source"] == "my contract"), "{g}");

    // `estimate` prices its offer of that type with the refreshed row.
    let est = read(
        dir.path(),
        &[
            "estimate",
            "--model",
            "qwen2.5-7b",
            "--method",
            "qlora4",
            "--tokens",
            "50M",
            "--provider",
            "alibaba",
            "--top",
            "0",
            "--json",
        ],
    );
    let offers = est["ranking"]["offers"].as_array().unwrap();
    let o = offers
        .iter()
        .find(|o| o["instance"] == "gn7i-c8g1.2xlarge" && o["mode"] == "hourly")
        .unwrap_or_else(|| panic!("no offer: {est}"));
    assert_eq!(o["price"]["as_of"], "2026-11-30", "{o}");
    assert_eq!(o["price"]["source"], "Alibaba DescribePrice via gpuctl catalog refresh");
    assert_eq!(o["price_age_days"], 0);
}

#[test]
fn stock_outs_and_refusals_are_reported_and_the_rest_is_written() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{QUICK}stock_outs = [{{ provider = \"tencent\", instance_type = \"GN7.2XLARGE32\", zone = \"ap-guangzhou-3\" }}]\n");
    let sim = SimProcess::start(dir.path(), &config, &[]);
    let out = dir.path().join("prices.toml");
    let out_s = out.to_str().unwrap();
    // Tencent's price inquiry refuses a malformed image: every Tencent quote fails, Alibaba's still land.
    let (code, r) = refresh(
        &sim,
        dir.path(),
        &[
            "--provider",
            "tencent",
            "--provider",
            "alibaba",
            "--instance",
            "GN7.2XLARGE32",
            "--instance",
            "gn7i-c8g1.2xlarge",
            "--region",
            "ap-guangzhou",
            "--region",
            "cn-hangzhou",
            "--tencent-image",
            "img-bad",
            "--out",
            out_s,
        ],
    );
    assert_eq!(code, Some(4), "partial: {r}");
    let nq = r["not_quoted"].as_array().unwrap();
    assert!(!nq.is_empty());
    for n in nq {
        assert_eq!(n["provider"], "tencent", "{n}");
        assert_eq!(n["code"], "InvalidImageId.Malformed", "{n}");
        assert!(n["request_id"].as_str().is_some_and(|s| !s.is_empty()), "{n}");
    }
    let quoted = r["quoted"].as_array().unwrap();
    assert!(!quoted.is_empty() && quoted.iter().all(|q| q["provider"] == "alibaba"), "{r}");
    let stock = r["stock"].as_array().unwrap();
    let gn7 = stock.iter().find(|s| s["instance"] == "GN7.2XLARGE32").unwrap();
    assert_eq!(gn7["in_stock"], false, "{gn7}");
    assert!(gn7["request_id"].as_str().is_some(), "{gn7}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("gn7i-c8g1.2xlarge") && !text.contains("GN7.2XLARGE32"), "{text}");

    // With a good image the sold-out type is still priced, and its row says it was sold out.
    let (code, r) = refresh(
        &sim,
        dir.path(),
        &[
            "--provider",
            "tencent",
            "--instance",
            "GN7.2XLARGE32",
            "--region",
            "ap-guangzhou",
            "--mode",
            "hourly",
            "--out",
            out_s,
        ],
    );
    assert_eq!(code, Some(0), "{r}");
    let text = std::fs::read_to_string(&out).unwrap();
    assert!(text.contains("GN7.2XLARGE32") && text.contains("SOLD OUT there then"), "{text}");
    assert!(text.contains("gn7i-c8g1.2xlarge"), "the earlier rows are kept: {text}");

    // A human run says so too.
    let o = gpuctl_cmd(
        &sim.url,
        dir.path(),
        &[
            "catalog",
            "refresh",
            "--provider",
            "tencent",
            "--instance",
            "GN7.2XLARGE32",
            "--region",
            "ap-guangzhou",
            "--mode",
            "hourly",
            "--out",
            out_s,
        ],
    )
    .output()
    .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("sold out: tencent GN7.2XLARGE32 in ap-guangzhou-3"), "{stdout}");
}

#[test]
fn a_throttled_refresh_completes() {
    let dir = tempfile::tempdir().unwrap();
    let config = format!("{QUICK}rate_limits = [{{ provider = \"alibaba\", action = \"DescribePrice\", per_second = 2.0, burst = 2.0 }}]\n");
    let sim = SimProcess::start(dir.path(), &config, &[]);
    let out = dir.path().join("prices.toml");
    let (code, r) = refresh(
        &sim,
        dir.path(),
        &[
            "--provider",
            "alibaba",
            "--instance",
            "gn7i-c8g1.2xlarge",
            "--region",
            "cn-hangzhou",
            "--out",
            out.to_str().unwrap(),
        ],
    );
    assert_eq!(code, Some(0), "{r}");
    assert!(r["retries"].as_u64().unwrap() > 0, "the sim should have throttled: {r}");
    assert!(r["not_quoted"].as_array().unwrap().is_empty(), "{r}");
    assert_eq!(r["quoted"].as_array().unwrap().len(), 6, "hourly, spot, weekly, monthly, year1, year3: {r}");
}
