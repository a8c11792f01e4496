//! The shared context every emulator call gets: clock, credentials, knobs with their runtime state
//! (token buckets, fault counters), the seeded RNG, and the offers for sale.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard};
use std::time::Duration;

use jiff::{SignedDuration, Timestamp};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

use crate::clock::SimClock;
use crate::config::SimConfig;
use crate::creds::{Credentials, SecretKey};
use crate::knobs::{matches, Fault, Knobs};
use crate::offers::Offer;
use crate::roles::{RoleSession, Roles};
use crate::Provider;

/// (rate-limit rule index, provider, action) → (tokens left, last refill on the sim clock).
type Buckets = HashMap<(usize, String, String), (f64, Timestamp)>;

#[derive(Debug)]
pub struct SimCtx {
    clock: SimClock,
    credentials: Credentials,
    knobs: Mutex<Knobs>,
    buckets: Mutex<Buckets>,
    rng: Mutex<StdRng>,
    offers: Vec<Offer>,
    /// Instance-role credentials and metadata tokens issued by the metadata service (`roles`).
    roles: Mutex<Roles>,
}

/// Lock a mutex even if a panic poisoned it: a panic elsewhere must not wedge the whole sim, and
/// the data is still usable. Every emulator locks its state this way.
pub fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl SimCtx {
    pub fn new(config: SimConfig, offers: Vec<Offer>) -> Self {
        let credentials = if config.credentials.is_empty() {
            Credentials::default()
        } else {
            Credentials::from_pairs(config.credentials)
        };
        Self {
            clock: SimClock::default(),
            credentials,
            knobs: Mutex::new(config.knobs),
            buckets: Mutex::new(HashMap::new()),
            rng: Mutex::new(StdRng::seed_from_u64(config.seed)),
            offers,
            roles: Mutex::new(Roles::default()),
        }
    }

    // --- time -------------------------------------------------------------------------------

    pub fn now(&self) -> Timestamp {
        self.clock.now()
    }

    pub fn clock(&self) -> &SimClock {
        &self.clock
    }

    /// How long a new instance boots, on the sim clock.
    pub fn boot_time(&self) -> SignedDuration {
        SignedDuration::from_secs(lock(&self.knobs).boot_seconds as i64)
    }

    // --- credentials ------------------------------------------------------------------------

    pub fn credentials(&self) -> &Credentials {
        &self.credentials
    }

    /// The secret of a configured key pair, or of an instance-role session issued by the metadata
    /// service (the emulator then holds that session to its token and policy: [`Self::role_session`]).
    pub fn secret(&self, provider: Provider, access_key: &str) -> Option<SecretKey> {
        if let Some(s) = self.credentials.secret(provider, access_key) {
            return Some(s.clone());
        }
        lock(&self.roles).find(provider, access_key).map(|s| s.secret.clone())
    }

    // --- instance roles (the metadata service's credentials) -------------------------------------

    /// The instance-role session this access key belongs to, if it is one.
    pub fn role_session(&self, provider: Provider, access_key: &str) -> Option<RoleSession> {
        lock(&self.roles).find(provider, access_key).cloned()
    }

    /// The role credentials the metadata service of `instance_id` hands out now (renewed when the
    /// current ones are near expiry). `key_prefix` is the cloud's look of a temporary key id.
    pub fn issue_role_credentials(
        &self,
        provider: Provider,
        instance_id: &str,
        role: &str,
        key_prefix: &str,
    ) -> RoleSession {
        let now = self.now();
        let fresh = || (self.new_id(key_prefix, 24), self.new_id("", 40), self.new_id("", 96));
        lock(&self.roles).issue(provider, instance_id, role, now, fresh)
    }

    /// A metadata-service token for `instance_id` (Alibaba's hardened mode), valid `ttl` of sim time.
    pub fn issue_metadata_token(&self, provider: Provider, instance_id: &str, ttl: SignedDuration) -> String {
        let token = self.new_id("", 56);
        let expires = self.now().checked_add(ttl).unwrap_or_else(|_| self.now());
        lock(&self.roles).add_metadata_token(token.clone(), provider, instance_id, expires);
        token
    }

    pub fn metadata_token_ok(&self, provider: Provider, instance_id: &str, token: &str) -> bool {
        lock(&self.roles).metadata_token_ok(token, provider, instance_id, self.now())
    }

    /// Forget one cloud's role sessions and metadata tokens (its emulator was reset).
    pub fn forget_roles(&self, provider: Provider) {
        lock(&self.roles).clear(provider);
    }

    // --- knobs ------------------------------------------------------------------------------

    pub fn knobs(&self) -> Knobs {
        lock(&self.knobs).clone()
    }

    /// Replace all knobs; rate-limit buckets start full again.
    pub fn set_knobs(&self, knobs: Knobs) {
        *lock(&self.knobs) = knobs;
        lock(&self.buckets).clear();
    }

    /// Change knobs in place (e.g. append a fault rule).
    pub fn update_knobs(&self, f: impl FnOnce(&mut Knobs)) {
        f(&mut lock(&self.knobs));
        lock(&self.buckets).clear();
    }

    /// The latency to add to this call.
    pub fn latency(&self, provider: Provider, action: &str) -> Duration {
        let k = lock(&self.knobs);
        let ms = k
            .latency
            .iter()
            .find(|l| matches(&l.provider, &provider) && matches(&l.action, action))
            .map_or(k.latency_ms, |l| l.ms);
        Duration::from_millis(ms)
    }

    /// Take one token from every bucket this call falls under. `false` → throttle the call.
    /// Buckets refill on the sim clock, so advancing the clock also refills them.
    pub fn admit(&self, provider: Provider, action: &str) -> bool {
        let knobs = lock(&self.knobs);
        let now = self.now();
        let mut buckets = lock(&self.buckets);
        let mut admitted = true;
        for (i, rule) in knobs.rate_limits.iter().enumerate() {
            if !(matches(&rule.provider, &provider) && matches(&rule.action, action)) {
                continue;
            }
            let cap = rule.capacity();
            let entry = buckets.entry((i, provider.to_string(), action.to_string())).or_insert((cap, now));
            let elapsed = now.duration_since(entry.1).as_secs_f64().max(0.0);
            entry.0 = (entry.0 + elapsed * rule.per_second).min(cap);
            entry.1 = now;
            if entry.0 >= 1.0 {
                entry.0 -= 1.0;
            } else {
                admitted = false;
            }
        }
        admitted
    }

    /// The fault to inject into this call, if any; spends one use of a counted rule.
    pub fn take_fault(&self, provider: Provider, action: &str) -> Option<Fault> {
        let mut knobs = lock(&self.knobs);
        let mut fired = None;
        for rule in knobs.faults.iter_mut() {
            if !(matches(&rule.provider, &provider) && matches(&rule.action, action)) {
                continue;
            }
            if rule.count == Some(0) {
                continue;
            }
            if let Some(p) = rule.probability {
                if lock(&self.rng).gen::<f64>() >= p {
                    continue;
                }
            }
            if let Some(n) = rule.count.as_mut() {
                *n -= 1;
            }
            fired = Some(rule.fault());
            break;
        }
        knobs.faults.retain(|r| r.count != Some(0));
        fired
    }

    /// Whether a stock-out knob closes this type in this zone now: a plain one, or one whose
    /// `available` count has run out.
    /// Whether the account has a default network in this zone (no `no_default_network` knob matches).
    pub fn has_default_network(&self, provider: Provider, zone: &str) -> bool {
        !lock(&self.knobs).no_default_network.iter().any(|r| r.matches(provider, zone))
    }

    pub fn is_sold_out(&self, provider: Provider, instance_type: &str, zone: &str) -> bool {
        self.stock_left(provider, &[instance_type], zone) == Some(0)
    }

    /// How many more instances of this type (under any of its names) the knobs allow in this zone:
    /// `None` without a matching knob, 0 when sold out.
    pub fn stock_left(&self, provider: Provider, instance_types: &[&str], zone: &str) -> Option<u32> {
        let knobs = lock(&self.knobs);
        let matching =
            knobs.stock_outs.iter().filter(|s| instance_types.iter().any(|t| s.matches(provider, t, zone)));
        matching.map(|s| s.available.unwrap_or(0)).min()
    }

    /// Takes up to `n` instances from the stock the knobs leave; returns how many were granted (all
    /// `n` without a matching knob). Tencent and Alibaba grant all or refuse (`all_or_none`); JD makes
    /// what is granted and lets the rest fail.
    pub fn take_stock(
        &self,
        provider: Provider,
        instance_types: &[&str],
        zone: &str,
        n: u32,
        all_or_none: bool,
    ) -> u32 {
        let mut knobs = lock(&self.knobs);
        let matching =
            |s: &crate::knobs::StockOut| instance_types.iter().any(|t| s.matches(provider, t, zone));
        let Some(left) =
            knobs.stock_outs.iter().filter(|s| matching(s)).map(|s| s.available.unwrap_or(0)).min()
        else {
            return n;
        };
        let granted = if all_or_none && left < n { 0 } else { left.min(n) };
        for s in knobs.stock_outs.iter_mut().filter(|s| matching(s)) {
            if let Some(a) = s.available.as_mut() {
                *a -= granted;
            }
        }
        granted
    }

    // --- randomness and ids -----------------------------------------------------------------

    /// `prefix` + `len` random lower-case letters/digits: `new_id("ins-", 8)` → "ins-k3d9x0qa".
    pub fn new_id(&self, prefix: &str, len: usize) -> String {
        const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
        let mut rng = lock(&self.rng);
        let tail: String = (0..len).map(|_| ALPHABET[rng.gen_range(0..ALPHABET.len())] as char).collect();
        format!("{prefix}{tail}")
    }

    /// A request id in UUID form (8-4-4-4-12 lower-case hex), as all three clouds use.
    pub fn request_id(&self) -> String {
        let b: [u8; 16] = lock(&self.rng).gen();
        let h = hex::encode(b);
        format!("{}-{}-{}-{}-{}", &h[0..8], &h[8..12], &h[12..16], &h[16..20], &h[20..32])
    }

    /// A uniform draw in [0, 1) from the seeded RNG.
    pub fn random(&self) -> f64 {
        lock(&self.rng).gen()
    }

    // --- offers -----------------------------------------------------------------------------

    /// Every offer of one provider.
    pub fn offers(&self, provider: Provider) -> impl Iterator<Item = &Offer> + '_ {
        self.offers.iter().filter(move |o| o.provider == provider)
    }

    /// The offer for this type in this region, if it is sold there.
    pub fn offer(&self, provider: Provider, region: &str, instance_type: &str) -> Option<&Offer> {
        self.offers
            .iter()
            .find(|o| o.provider == provider && o.region == region && o.instance_type == instance_type)
    }

    /// The regions a provider sells in (sorted, unique).
    pub fn regions(&self, provider: Provider) -> Vec<String> {
        let mut r: Vec<String> = self.offers(provider).map(|o| o.region.clone()).collect();
        r.sort();
        r.dedup();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::knobs::{FaultKind, FaultRule, RateLimit, StockOut};

    fn ctx(knobs: Knobs) -> SimCtx {
        SimCtx::new(SimConfig { seed: 1, knobs, ..SimConfig::default() }, Vec::new())
    }

    #[test]
    fn rate_limit_throttles_then_refills_on_the_sim_clock() {
        let c = ctx(Knobs {
            rate_limits: vec![RateLimit {
                provider: Some(Provider::Tencent),
                action: Some("RunInstances".into()),
                per_second: 1.0,
                burst: Some(2.0),
            }],
            ..Knobs::default()
        });
        assert!(c.admit(Provider::Tencent, "RunInstances"));
        assert!(c.admit(Provider::Tencent, "RunInstances"));
        assert!(!c.admit(Provider::Tencent, "RunInstances"), "third call within the burst must be throttled");
        assert!(c.admit(Provider::Tencent, "DescribeInstances"), "other APIs are not limited by this rule");
        assert!(c.admit(Provider::Alibaba, "RunInstances"), "other providers are not limited by this rule");
        c.clock().advance(SignedDuration::from_secs(1));
        assert!(c.admit(Provider::Tencent, "RunInstances"), "one second refills one token");
    }

    #[test]
    fn counted_faults_fire_then_are_spent() {
        let c = ctx(Knobs {
            faults: vec![FaultRule::next(None, Some("RunInstances"), FaultKind::Reset, 2)],
            ..Knobs::default()
        });
        assert_eq!(c.take_fault(Provider::Tencent, "DescribeInstances"), None);
        assert_eq!(c.take_fault(Provider::Tencent, "RunInstances"), Some(Fault::Reset));
        assert_eq!(c.take_fault(Provider::Alibaba, "RunInstances"), Some(Fault::Reset));
        assert_eq!(c.take_fault(Provider::Tencent, "RunInstances"), None);
        assert!(c.knobs().faults.is_empty());
    }

    #[test]
    fn probabilistic_faults_follow_the_seed() {
        let rule = FaultRule {
            probability: Some(0.3),
            count: None,
            status: Some(500),
            ..FaultRule::next(None, None, FaultKind::ServerError, 0)
        };
        let fired = |c: &SimCtx| (0..1000).filter(|_| c.take_fault(Provider::JdCloud, "x").is_some()).count();
        let a = fired(&ctx(Knobs { faults: vec![rule.clone()], ..Knobs::default() }));
        let b = fired(&ctx(Knobs { faults: vec![rule], ..Knobs::default() }));
        assert_eq!(a, b, "same seed, same draws");
        assert!((220..380).contains(&a), "about 30% of 1000 calls, got {a}");
    }

    #[test]
    fn stock_outs_match_by_type_and_zone() {
        let c = ctx(Knobs {
            stock_outs: vec![StockOut {
                provider: Some(Provider::Tencent),
                instance_type: Some("GN7.2XLARGE32".into()),
                zone: None,
                available: None,
            }],
            ..Knobs::default()
        });
        assert!(c.is_sold_out(Provider::Tencent, "GN7.2XLARGE32", "ap-guangzhou-3"));
        assert!(!c.is_sold_out(Provider::Tencent, "GN7.5XLARGE80", "ap-guangzhou-3"));
        assert!(!c.is_sold_out(Provider::Alibaba, "GN7.2XLARGE32", "ap-guangzhou-3"));
        assert_eq!(c.take_stock(Provider::Tencent, &["GN7.2XLARGE32"], "z", 1, true), 0);
        assert_eq!(c.take_stock(Provider::Tencent, &["GN7.5XLARGE80"], "z", 3, true), 3, "no knob, no limit");
    }

    #[test]
    fn available_stock_counts_down_all_or_none_or_partly() {
        let limited = |n| StockOut {
            provider: Some(Provider::JdCloud),
            instance_type: None,
            zone: Some("cn-north-1a".into()),
            available: Some(n),
        };
        let c = ctx(Knobs { stock_outs: vec![limited(3)], ..Knobs::default() });
        assert!(!c.is_sold_out(Provider::JdCloud, "p.n1v100.2xlarge", "cn-north-1a"));
        assert_eq!(c.stock_left(Provider::JdCloud, &["p.n1v100.2xlarge"], "cn-north-1a"), Some(3));
        assert_eq!(
            c.take_stock(Provider::JdCloud, &["t"], "cn-north-1a", 4, true),
            0,
            "all or none: 4 > 3, nothing taken"
        );
        assert_eq!(c.take_stock(Provider::JdCloud, &["t"], "cn-north-1a", 2, true), 2);
        assert_eq!(
            c.take_stock(Provider::JdCloud, &["t"], "cn-north-1a", 5, false),
            1,
            "partly: what is left"
        );
        assert!(c.is_sold_out(Provider::JdCloud, "t", "cn-north-1a"));
        assert_eq!(c.knobs().stock_outs[0].available, Some(0), "the knob shows what is left");
        assert_eq!(c.take_stock(Provider::JdCloud, &["t"], "cn-north-1b", 5, false), 5);
    }

    #[test]
    fn ids_are_seeded() {
        let a = ctx(Knobs::default());
        let b = ctx(Knobs::default());
        assert_eq!(a.new_id("ins-", 8), b.new_id("ins-", 8));
        let id = a.new_id("ins-", 8);
        assert_eq!(id.len(), 12);
        let rid = a.request_id();
        assert_eq!(rid.len(), 36);
        assert_eq!(rid.matches('-').count(), 4);
    }
}
