//! `gpuctl cost` (issue 15) against a real `gpuctl sim` process: a deployment of one pay-as-you-go and
//! one spot instance on Tencent runs through a whole calendar month of the sim clock (UTC+8), with a
//! 10 % account discount and the default one-day settlement lag, beside another team's instance (their own state store).
//! Mid-month the month is `open` with hours not billed yet; released before the month ends, just after
//! it the month is `settling` (the last hours are in their lag); past the lag it is `settled`. Each
//! instance's estimate (recorded ¥/hour × recorded hours) stands beside its billed sum and list sum;
//! the discount is list − billed; the foreign instance's lines are listed as untracked; and the billed
//! total is, to the last digit, the sum of the emulator's own lines read apart through the client. The
//! deployment's `budget.monthly_cny` is exceeded: `cost` and `status` exit 3.

use std::path::Path;
use std::process::Output;
use std::sync::Arc;
use std::time::Duration;

use gpuctl_cloud::cloud::Cloud;
use gpuctl_cloud::cost::{Amount, BillQuery};
use gpuctl_cloud::http::{Endpoint, Http};
use gpuctl_e2e::e2e::{gpuctl_cmd, placement, SimProcess};
use serde_json::Value;

const CONFIG: &str = "seed = 15\n[knobs]\nboot_seconds = 1\n\n[[knobs.discounts]]\nprovider = \"tencent\"\npercent = 10\n\n[[knobs.discounts]]\nprovider = \"alibaba\"\npercent = 10\n\n[[knobs.discounts]]\nprovider = \"jdcloud\"\npercent = 10\n";

/// The sim clock's offset from the wall clock, in whole seconds: what gpuctl's records follow.
fn offset(sim: &SimProcess) -> i64 {
    let (_, body) = sim.admin("GET", "/_sim/clock", "");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["offset_seconds"].as_f64().unwrap().round() as i64
}

fn sim_now(sim: &SimProcess) -> jiff::Timestamp {
    let (_, body) = sim.admin("GET", "/_sim/clock", "");
    let v: Value = serde_json::from_str(&body).unwrap();
    v["now"].as_str().unwrap().parse().unwrap()
}

fn move_to(sim: &SimProcess, to: jiff::Timestamp) {
    let (status, body) = sim.admin("POST", "/_sim/clock", &format!("{{\"to\": \"{to}\"}}"));
    assert_eq!(status, 200, "{body}");
}

/// gpuctl on the sim's clock.
fn run(sim: &SimProcess, dir: &Path, args: &[&str]) -> Output {
    gpuctl_cmd(&sim.url, dir, args)
        .env("GPUCTL_CLOCK_OFFSET_S", offset(sim).to_string())
        .output()
        .expect("gpuctl runs")
}

fn json_of(o: &Output, args: &[&str]) -> Value {
    let out = String::from_utf8_lossy(&o.stdout);
    serde_json::from_str(&out).unwrap_or_else(|e| {
        panic!("{args:?}: not JSON ({e}): {out}\nstderr: {}", String::from_utf8_lossy(&o.stderr))
    })
}

fn amount(v: &Value) -> Amount {
    Amount::parse(v.as_str().unwrap_or_else(|| panic!("not an amount: {v}"))).unwrap()
}

fn tencent(sim: &SimProcess) -> Arc<dyn Cloud> {
    let http = Http::new(Duration::from_secs(10)).unwrap();
    let ep = Some(Endpoint::parse(&sim.url).unwrap());
    let (_, ak, sk) =
        gpuctl_simkit::creds::TEST_KEY_PAIRS.iter().find(|(n, _, _)| n.as_str() == "tencent").unwrap();
    Arc::new(gpuctl_tencent::client::Client::new(gpuctl_sign::Credentials::new(*ak, *sk), ep, http))
}

fn jdcloud(sim: &SimProcess) -> Arc<dyn Cloud> {
    let http = Http::new(Duration::from_secs(10)).unwrap();
    let ep = Some(Endpoint::parse(&sim.url).unwrap());
    let (_, ak, sk) =
        gpuctl_simkit::creds::TEST_KEY_PAIRS.iter().find(|(n, _, _)| n.as_str() == "jdcloud").unwrap();
    Arc::new(gpuctl_jdcloud::client::Client::new(gpuctl_sign::Credentials::new(*ak, *sk), ep, http))
}

fn alibaba(sim: &SimProcess) -> Arc<dyn Cloud> {
    let http = Http::new(Duration::from_secs(10)).unwrap();
    let ep = Some(Endpoint::parse(&sim.url).unwrap());
    let (_, ak, sk) =
        gpuctl_simkit::creds::TEST_KEY_PAIRS.iter().find(|(n, _, _)| n.as_str() == "alibaba").unwrap();
    Arc::new(gpuctl_alibaba::client::Client::new(gpuctl_sign::Credentials::new(*ak, *sk), ep, http))
}

/// Another team's run: its own state store in `other`, so nothing of it is recorded in ours.
fn foreign_instance(sim: &SimProcess, other: &Path) -> String {
    let spec = other.join("theirs.toml");
    std::fs::write(
        &spec,
        format!("deployment = \"theirs\"\n[[pool]]\nname = \"a\"\ncount = 1\nbilling = \"hourly\"\nauto_release = false\n{}", placement("tencent")),
    )
    .unwrap();
    let args = ["provision", spec.to_str().unwrap(), "--yes", "--json"];
    let o = run(sim, other, &args);
    assert!(o.status.success(), "their provision: {}", String::from_utf8_lossy(&o.stderr));
    json_of(&o, &args)["units"][0]["instance_id"].as_str().unwrap().to_string()
}

fn resource<'a>(report: &'a Value, billing: &str) -> &'a Value {
    report["resources"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["billing"] == billing)
        .unwrap_or_else(|| panic!("no {billing} resource: {report}"))
}

#[test]
fn a_month_of_use_reconciles_to_the_bill_and_a_budget_over_it_exits_3() {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), CONFIG, &[]);
    // The sim to one minute into the next calendar month (UTC+8): the month the test runs through.
    let month = gpuctl_provision::cost::Month::of(sim_now(&sim));
    let next = gpuctl_provision::cost::Month::of(month.end());
    move_to(&sim, next.start() + jiff::SignedDuration::from_mins(1));
    let m = next.to_string();

    let spec = dir.path().join("bill.toml");
    std::fs::write(
        &spec,
        format!(
            "deployment = \"bill\"\n[budget]\nmonthly_cny = 100\n\
             [[pool]]\nname = \"payg\"\ncount = 1\nbilling = \"hourly\"\nauto_release = false\n{p}\
             [[pool]]\nname = \"spot\"\ncount = 1\nbilling = \"spot\"\nauto_release = false\n{p}",
            p = placement("tencent")
        ),
    )
    .unwrap();
    let o = run(&sim, dir.path(), &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    assert!(o.status.success(), "provision: {}", String::from_utf8_lossy(&o.stderr));
    let theirs = tempfile::tempdir().unwrap();
    let foreign = foreign_instance(&sim, theirs.path());

    // Ten days in: the month is open, lines lag a day behind, the budget of ¥100 is already exceeded.
    move_to(&sim, next.start() + jiff::SignedDuration::from_hours(240));
    let args = ["cost", "--month", &m, "--json"];
    let o = run(&sim, dir.path(), &args);
    let mid = json_of(&o, &args);
    assert_eq!(o.status.code(), Some(3), "over budget: {mid}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("over budget: bill"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    assert_eq!(mid["settlement"], "open", "{mid}");
    assert_eq!(mid["resources"].as_array().unwrap().len(), 2, "{mid}");
    for r in mid["resources"].as_array().unwrap() {
        assert_eq!(r["settled"], false, "{r}");
        let unbilled = r["unbilled_hours"].as_f64().unwrap();
        assert!(
            (23.99..26.0).contains(&unbilled),
            "a day's lag (gpuctl's record and the cloud up to a second apart), and the hour not over: {r}"
        );
    }
    assert_eq!(mid["budgets"][0]["exceeded"], true, "{mid}");

    // Released five hours before the month ends; just after it ends the last hours are still in their lag.
    move_to(&sim, next.end() - jiff::SignedDuration::from_hours(5));
    let o = run(&sim, dir.path(), &["destroy", spec.to_str().unwrap(), "--yes", "--json"]);
    assert!(o.status.success(), "destroy: {}", String::from_utf8_lossy(&o.stderr));
    move_to(&sim, next.end() + jiff::SignedDuration::from_hours(1));
    let o = run(&sim, dir.path(), &args);
    let settling = json_of(&o, &args);
    assert_eq!(settling["settlement"], "settling", "{settling}");
    assert!(settling["resources"].as_array().unwrap().iter().all(|r| r["settled"] == false), "{settling}");

    // Past the lag: settled, every recorded hour billed.
    move_to(&sim, next.end() + jiff::SignedDuration::from_hours(49));
    let o = run(&sim, dir.path(), &args);
    let done = json_of(&o, &args);
    assert_eq!(o.status.code(), Some(3), "still over budget: {done}");
    assert_eq!(done["settlement"], "settled", "{done}");
    let days = (next.end().duration_since(next.start()).as_secs_f64() / 3600.0) - 5.0;
    for billing in ["hourly", "spot"] {
        let r = resource(&done, billing);
        assert_eq!(r["settled"], true, "{r}");
        assert_eq!(r["unbilled_hours"], 0.0, "{r}");
        let hours = r["hours"].as_f64().unwrap();
        assert!((hours - days).abs() < 0.1, "lived the month less 5 h: {hours} vs {days}: {r}");
        let (est, billed, list) =
            (amount(&r["estimated_cny"]), amount(&r["billed_cny"]), amount(&r["list_cny"]));
        let price = r["price_cny_per_hour"].as_f64().unwrap();
        // The list amount is the estimate (the same price for the same hours) within a few minutes of
        // gpuctl's and the cloud's clocks; the discount is 10 % of list, line by line to the cent-millionth.
        assert!(
            (list.as_f64() - est.as_f64()).abs() < price * 0.1,
            "{billing}: list {list:?} vs estimate {est:?}"
        );
        assert_eq!(amount(&r["discount_cny"]), list - billed, "{r}");
        let ten = (list.0 as f64 * 0.1) as i128;
        assert!(
            (list.0 - billed.0 - ten).abs() <= r["lines"].as_i64().unwrap() as i128,
            "{billing}: 10 % off: {r}"
        );
        assert_eq!(amount(&r["difference_cny"]), billed - est, "{r}");
        assert!(r["lines"].as_u64().unwrap() as f64 >= days.floor(), "an hourly line per hour: {r}");
    }
    assert!(resource(&done, "spot")["billed_cny"] != resource(&done, "hourly")["billed_cny"]);

    // The foreign instance's lines: listed apart, not gpuctl's.
    let untracked = done["untracked"].as_array().unwrap();
    assert_eq!(untracked.len(), 1, "{done}");
    assert_eq!(untracked[0]["resource_id"], foreign.as_str());

    // The totals are the emulator's lines, read apart through the client and summed here.
    let cloud = tencent(&sim);
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let lines = rt
        .block_on(cloud.bill_lines(&BillQuery {
            month: m.clone(),
            region: "ap-guangzhou".into(),
            resource_ids: vec![],
        }))
        .unwrap();
    let sum: Amount = lines.iter().map(|l| Amount::parse(&l.billed_cny).unwrap()).sum();
    assert_eq!(amount(&done["billed_cny"]), sum, "{done}");
    assert_eq!(done["lines"].as_u64().unwrap() as usize, lines.len());
    let tracked: Amount =
        done["resources"].as_array().unwrap().iter().map(|r| amount(&r["billed_cny"])).sum();
    assert_eq!(amount(&done["tracked_billed_cny"]), tracked);
    assert_eq!(tracked + amount(&done["untracked_billed_cny"]), sum);

    // One deployment: its own lines only, and its budget; the month before: nothing, exit 0.
    let dep_args = ["cost", "--deployment", "bill", "--month", &m, "--json"];
    let o = run(&sim, dir.path(), &dep_args);
    let dep = json_of(&o, &dep_args);
    assert_eq!(o.status.code(), Some(3));
    assert_eq!(amount(&dep["billed_cny"]), tracked, "{dep}");
    assert!(dep["untracked"].as_array().unwrap().is_empty());
    let before = month.to_string();
    let prev_args = ["cost", "--month", &before, "--json"];
    let o = run(&sim, dir.path(), &prev_args);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(json_of(&o, &prev_args)["billed_cny"], "0.00");

    // A human's table says the same, and a bad month is bad input.
    let o = run(&sim, dir.path(), &["cost", "--month", &m]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("settled") && text.contains("not gpuctl's"), "{text}");
    let o = run(&sim, dir.path(), &["cost", "--month", "2027-13"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));

    // status warns about this month's budget too: a new month, a new pay-as-you-go instance, its bill.
    let o = run(&sim, dir.path(), &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    assert!(o.status.success(), "provision: {}", String::from_utf8_lossy(&o.stderr));
    move_to(&sim, sim_now(&sim) + jiff::SignedDuration::from_hours(72));
    let o = run(&sim, dir.path(), &["status", "bill"]);
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("over budget: bill"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let o = run(&sim, dir.path(), &["destroy", spec.to_str().unwrap(), "--yes", "--json"]);
    assert!(o.status.success(), "destroy: {}", String::from_utf8_lossy(&o.stderr));
}

/// What a month of use on one cloud shows: the month (`YYYY-MM`), `cost --json` ten days in and two
/// days after it ends, and the hours the deployment lived in it.
struct MonthOfUse {
    text: String,
    mid: Value,
    done: Value,
    hours_lived: f64,
}

/// A deployment of `pools` on `provider` from a minute into the next month (UTC+8) until five hours
/// before its end, with `cost` read ten days in (open, the day's lag unbilled, over its ¥100 budget) and
/// two days after the month (settled). Asserts what holds on every cloud.
fn a_month_on(provider: &str, pools: &[&str]) -> MonthOfUse {
    let dir = tempfile::tempdir().unwrap();
    let sim = SimProcess::start(dir.path(), CONFIG, &[]);
    let month = gpuctl_provision::cost::Month::of(sim_now(&sim));
    let next = gpuctl_provision::cost::Month::of(month.end());
    move_to(&sim, next.start() + jiff::SignedDuration::from_mins(1));
    let m = next.to_string();
    let spec = dir.path().join("month.toml");
    let pools: String = pools
        .iter()
        .map(|b| {
            format!(
                "[[pool]]\nname = \"{b}\"\ncount = 1\nbilling = \"{b}\"\nauto_release = false\n{}",
                placement(provider)
            )
        })
        .collect();
    std::fs::write(&spec, format!("deployment = \"month\"\n[budget]\nmonthly_cny = 100\n{pools}")).unwrap();
    let o = run(&sim, dir.path(), &["provision", spec.to_str().unwrap(), "--yes", "--json"]);
    assert!(o.status.success(), "provision: {}", String::from_utf8_lossy(&o.stderr));

    move_to(&sim, next.start() + jiff::SignedDuration::from_hours(240));
    let args = ["cost", "--month", &m, "--json"];
    let o = run(&sim, dir.path(), &args);
    let mid = json_of(&o, &args);
    assert_eq!(o.status.code(), Some(3), "over budget: {mid}\n{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(mid["settlement"], "open", "{mid}");
    assert_eq!(mid["resources"].as_array().unwrap().len(), pools.matches("[[pool]]").count(), "{mid}");
    for r in mid["resources"].as_array().unwrap() {
        let unbilled = r["unbilled_hours"].as_f64().unwrap();
        assert!(
            (23.99..26.0).contains(&unbilled),
            "a day's lag (gpuctl's record and the cloud up to a second apart), and the hour not over: {r}"
        );
    }

    move_to(&sim, next.end() - jiff::SignedDuration::from_hours(5));
    let o = run(&sim, dir.path(), &["destroy", spec.to_str().unwrap(), "--yes", "--json"]);
    assert!(o.status.success(), "destroy: {}", String::from_utf8_lossy(&o.stderr));
    move_to(&sim, next.end() + jiff::SignedDuration::from_hours(49));
    let o = run(&sim, dir.path(), &args);
    let done = json_of(&o, &args);
    assert_eq!(done["settlement"], "settled", "{done}");
    let hours_lived = (next.end().duration_since(next.start()).as_secs_f64() / 3600.0) - 5.0;
    for r in done["resources"].as_array().unwrap() {
        assert_eq!(r["settled"], true, "{r}");
        assert_eq!(r["unbilled_hours"], 0.0, "{r}");
        let (est, billed, list) =
            (amount(&r["estimated_cny"]), amount(&r["billed_cny"]), amount(&r["list_cny"]));
        let price = r["price_cny_per_hour"].as_f64().unwrap();
        // Each hour is billed at the cent: list is the estimate within a cent an hour and a few minutes.
        assert!(
            (list.as_f64() - est.as_f64()).abs() < price * 0.1 + hours_lived * 0.01,
            "list {list:?} vs estimate {est:?}: {r}"
        );
        assert_eq!(amount(&r["discount_cny"]), list - billed, "{r}");
        assert!(
            ((list.as_f64() - billed.as_f64()) - list.as_f64() * 0.1).abs() <= hours_lived * 0.01,
            "10 % off within a cent an hour: {r}"
        );
    }
    // The billed total is, to the last digit, the cloud's own lines read apart through the client.
    let (cloud, region) = match provider {
        "alibaba" => (alibaba(&sim), "cn-hangzhou"),
        _ => (jdcloud(&sim), "cn-north-1"),
    };
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    let lines = rt
        .block_on(cloud.bill_lines(&BillQuery {
            month: m.clone(),
            region: region.into(),
            resource_ids: vec![],
        }))
        .unwrap();
    let sum: Amount = lines.iter().map(|l| Amount::parse(&l.billed_cny).unwrap()).sum();
    assert_eq!(amount(&done["billed_cny"]), sum, "{done}");
    assert_eq!(amount(&done["tracked_billed_cny"]), sum, "{done}");
    assert_eq!(done["lines"].as_u64().unwrap() as usize, lines.len());
    MonthOfUse { text: m, mid, done, hours_lived }
}

/// The same month on Alibaba: BSS `DescribeInstanceBill` gives one MONTHLY item per instance, its
/// settled hours as `ServicePeriod` (what the engine counts as billed with no span) and its amounts at
/// the cent.
#[test]
fn a_month_on_alibaba_reconciles_to_its_instance_bill() {
    let month = a_month_on("alibaba", &["hourly", "spot"]);
    for r in
        month.mid["resources"].as_array().unwrap().iter().chain(month.done["resources"].as_array().unwrap())
    {
        assert_eq!(r["lines"], 1, "one MONTHLY item in {}: {r}", month.text);
    }
    assert!(resource(&month.done, "spot")["billed_cny"] != resource(&month.done, "hourly")["billed_cny"]);
}

/// The same month on JD: `queryBillDetail` (v1, per region) gives a line per settled hour with its span.
#[test]
fn a_month_on_jd_reconciles_to_its_bill_detail() {
    let month = a_month_on("jdcloud", &["hourly"]);
    let r = resource(&month.done, "hourly");
    assert!(
        r["lines"].as_f64().unwrap() >= month.hours_lived.floor(),
        "a line per hour in {}: {r}",
        month.text
    );
}
