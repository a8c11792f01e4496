//! Properties the engine keeps for any input: memory grows with the job, sharding never costs memory,
//! costs grow with hours, and every ranked offer respects the question's limits.

use gpuctl_core::{
    fit, parse_date, preset, preset_names, rank, terms_for, BillingMode, Catalog, Hardware, Job, Method,
    Question, Usage,
};
use proptest::prelude::*;

fn method() -> impl Strategy<Value = Method> {
    prop::sample::select(Method::ALL.to_vec())
}

fn model() -> impl Strategy<Value = String> {
    prop::sample::select(preset_names().map(String::from).collect::<Vec<_>>())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn memory_grows_with_sequence_and_batch(m in model(), meth in method(), seq in 128u32..8192, mb in 1u32..8, fa in any::<bool>()) {
        let hw = Hardware { vram_gb: 1e6, devices: 1, flash_attention: fa, bf16: true };
        let mut j = Job::new(preset(&m).unwrap(), meth);
        j.seq_len = seq;
        j.micro_batch = mb;
        let base = fit(&j, &hw).need_gb;
        let mut longer = j.clone();
        longer.seq_len = seq * 2;
        let mut wider = j.clone();
        wider.micro_batch = mb + 1;
        prop_assert!(fit(&longer, &hw).need_gb >= base);
        prop_assert!(fit(&wider, &hw).need_gb >= base);
        let b = fit(&j, &hw).breakdown;
        prop_assert!((b.total_gb() - base).abs() < 1e-9, "breakdown sums to the total");
    }

    #[test]
    fn higher_zero_stages_never_need_more(m in model(), meth in method(), devices in 2u32..9) {
        let hw = Hardware { vram_gb: 1e6, devices, flash_attention: true, bf16: true };
        let mut j = Job::new(preset(&m).unwrap(), meth);
        let mut prev = f64::INFINITY;
        for s in 0..=3u8 {
            j.zero_stage = Some(s);
            let need = fit(&j, &hw).need_gb;
            prop_assert!(need <= prev + 1e-9, "stage {} needs {} > {}", s, need, prev);
            prev = need;
        }
    }

    #[test]
    fn billed_terms_grow_with_hours(h in 0.1f64..20_000.0, extra in 0.0f64..1000.0, hpd in 1.0f64..24.0) {
        let u = Usage { hours_per_day: hpd, total_hours: None };
        for m in BillingMode::ALL {
            let (a, b) = (terms_for(m, h, &u), terms_for(m, h + extra, &u));
            prop_assert!(b >= a);
            if !m.is_per_hour() {
                prop_assert!(a >= 1.0 && a.fract() == 0.0);
            }
        }
    }
}

/// Every ranked offer respects the question's budget and deadline. Checked over seeded random questions
/// with a [`TestRunner`] (not `proptest!`) so the test can also require that the property was *exercised*:
/// a question no offer survives proves nothing, and a change that made every ranking empty would
/// otherwise pass (issue 19).
#[test]
fn ranked_offers_respect_the_question() {
    use std::cell::Cell;

    use proptest::test_runner::{Config, TestRunner};

    const CASES: u32 = 64;
    let mut runner = TestRunner::new(Config { cases: CASES, ..Config::default() });
    let (ran, with_offers) = (Cell::new(0u32), Cell::new(0u32));
    let strategy = (model(), method(), 1e5f64..1e9, 10.0f64..1e6, 1.0f64..2000.0);
    runner
        .run(&strategy, |(m, meth, tokens, budget, deadline)| {
            let mut j = Job::new(preset(&m).unwrap(), meth);
            j.tokens = tokens;
            let mut q = Question::new(j, parse_date("2026-11-30").unwrap());
            q.budget_cny = Some(budget);
            q.deadline_hours = Some(deadline);
            let r = rank(Catalog::shipped(), &q);
            ran.set(ran.get() + 1);
            if !r.offers.is_empty() {
                with_offers.set(with_offers.get() + 1);
            }
            for w in r.offers.windows(2) {
                prop_assert!(w[0].cost_high <= w[1].cost_high);
            }
            for o in &r.offers {
                prop_assert!(o.fit.fits && o.time.unsuitable.is_none());
                prop_assert!(o.cost_high <= budget && o.cost_low <= o.cost_high);
                prop_assert!(o.hours_high <= deadline + 1e-9);
                prop_assert!(o.cost_high >= 0.0 && o.cost_high.is_finite());
            }
            Ok(())
        })
        .unwrap();
    // At least half of the random questions must leave offers to check (measured: 60 of 64).
    let (ran, with_offers) = (ran.get(), with_offers.get());
    eprintln!("ranked_offers_respect_the_question: {with_offers} of {ran} questions had offers");
    assert!(ran >= CASES, "the runner ran {ran} cases, expected {CASES}");
    assert!(
        2 * with_offers >= ran,
        "only {with_offers} of {ran} questions left any offer: the property was barely exercised"
    );
}
