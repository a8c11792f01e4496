//! ClientToken idempotency as the clouds do it: the same token with the same parameters returns the
//! first call's result; the same token with different parameters is an error.
//!
//! [`TokenGate`] is what the emulators use: tokens belong to the account that sent them and to
//! the operation they were sent with, and the parameters are compared by [`defining`]'s
//! fingerprint. [`IdempotencyStore`] is the plain token → (fingerprint, answer) map under it.

use std::collections::HashMap;

use serde_json::Value;
use sha2::{Digest, Sha256};

/// The outcome of presenting a token.
#[derive(Clone, Debug, PartialEq)]
pub enum Idem<T> {
    /// Never seen: do the work, then [`IdempotencyStore::remember`] it.
    New,
    /// Seen with the same parameters: answer this again, do nothing.
    Replay(T),
    /// Seen with different parameters: answer the cloud's mismatch error.
    Mismatch,
}

#[derive(Clone, Debug, Default)]
pub struct IdempotencyStore<T> {
    seen: HashMap<String, (String, T)>,
}

impl<T: Clone> IdempotencyStore<T> {
    pub fn new() -> Self {
        Self { seen: HashMap::new() }
    }

    pub fn check(&self, token: &str, params: &Value) -> Idem<T> {
        match self.seen.get(token) {
            None => Idem::New,
            Some((fp, v)) if *fp == fingerprint(params) => Idem::Replay(v.clone()),
            Some(_) => Idem::Mismatch,
        }
    }

    pub fn remember(&mut self, token: &str, params: &Value, result: T) {
        self.seen.insert(token.to_string(), (fingerprint(params), result));
    }

    pub fn clear(&mut self) {
        self.seen.clear();
    }

    pub fn len(&self) -> usize {
        self.seen.len()
    }

    pub fn is_empty(&self) -> bool {
        self.seen.is_empty()
    }
}

/// A digest of the parameters that define the request. Callers pass the parameters without the
/// token itself and without fields that legitimately vary between retries (DryRun is not one).
/// serde_json's maps are sorted, so key order on the wire does not matter.
pub fn fingerprint(params: &Value) -> String {
    hex::encode(Sha256::digest(params.to_string().as_bytes()))
}

/// The parameters that define a request for token comparison: `params` without the top-level
/// names in `varying` (the token itself, DryRun, signature bookkeeping: what honest retries change)
/// and without `null` fields at any depth (the SDKs send unset fields as null, and every emulator
/// reads null as absent, so `{"A": null}` and `{}` are the same request).
pub fn defining(params: &Value, varying: &[&str]) -> Value {
    fn without_nulls(v: &Value) -> Value {
        match v {
            Value::Object(m) => Value::Object(
                m.iter().filter(|(_, v)| !v.is_null()).map(|(k, v)| (k.clone(), without_nulls(v))).collect(),
            ),
            Value::Array(a) => Value::Array(a.iter().map(without_nulls).collect()),
            other => other.clone(),
        }
    }
    match params {
        Value::Object(m) => Value::Object(
            m.iter()
                .filter(|(k, v)| !v.is_null() && !varying.contains(&k.as_str()))
                .map(|(k, v)| (k.clone(), without_nulls(v)))
                .collect(),
        ),
        other => without_nulls(other),
    }
}

/// A token as presented: where it is kept and the fingerprint of its request, so the answer can be
/// remembered once the work is done.
#[derive(Clone, Debug)]
pub struct Presented {
    key: String,
    params: Value,
}

/// The ClientToken gate every emulator puts in front of its creating operations.
#[derive(Clone, Debug, Default)]
pub struct TokenGate<T> {
    store: IdempotencyStore<T>,
}

impl<T: Clone> TokenGate<T> {
    pub fn new() -> Self {
        Self { store: IdempotencyStore::new() }
    }

    /// Present `token` sent by `account` to operation `op` with `params` (compared without the
    /// `varying` names, see [`defining`]). On [`Idem::New`], do the work and [`remember`](Self::remember)
    /// its answer with the returned [`Presented`].
    pub fn present(
        &self,
        account: &str,
        op: &str,
        token: &str,
        params: &Value,
        varying: &[&str],
    ) -> (Presented, Idem<T>) {
        let presented =
            Presented { key: format!("{account}:{op}:{token}"), params: defining(params, varying) };
        let outcome = self.store.check(&presented.key, &presented.params);
        (presented, outcome)
    }

    pub fn remember(&mut self, presented: Presented, answer: T) {
        self.store.remember(&presented.key, &presented.params, answer);
    }

    pub fn clear(&mut self) {
        self.store.clear();
    }

    /// How many tokens are remembered (shown in `/_sim/state`).
    pub fn len(&self) -> usize {
        self.store.len()
    }

    pub fn is_empty(&self) -> bool {
        self.store.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_gate_keys_by_account_and_operation_and_ignores_what_retries_change() {
        let mut gate = TokenGate::new();
        let first =
            json!({"ClientToken": "t", "DryRun": false, "Type": "a", "Disk": {"Size": 40, "Name": null}});
        let (p, outcome) = gate.present("AK1", "Run", "t", &first, &["ClientToken", "DryRun"]);
        assert_eq!(outcome, Idem::New);
        gate.remember(p, "i-1".to_string());
        let retry =
            json!({"ClientToken": "t", "DryRun": true, "Type": "a", "Disk": {"Size": 40}, "Extra": null});
        assert_eq!(
            gate.present("AK1", "Run", "t", &retry, &["ClientToken", "DryRun"]).1,
            Idem::Replay("i-1".into())
        );
        let changed = json!({"ClientToken": "t", "Type": "b", "Disk": {"Size": 40}});
        assert_eq!(gate.present("AK1", "Run", "t", &changed, &["ClientToken", "DryRun"]).1, Idem::Mismatch);
        assert_eq!(gate.present("AK2", "Run", "t", &changed, &[]).1, Idem::New, "tokens are per account");
        assert_eq!(gate.present("AK1", "Snap", "t", &changed, &[]).1, Idem::New, "and per operation");
        assert_eq!(gate.len(), 1);
        gate.clear();
        assert!(gate.is_empty());
    }

    #[test]
    fn same_token_same_params_replays_different_params_mismatch() {
        let mut store = IdempotencyStore::new();
        let a = json!({"InstanceType": "GN7.2XLARGE32", "Count": 1});
        let a_reordered: Value =
            serde_json::from_str(r#"{"Count":1,"InstanceType":"GN7.2XLARGE32"}"#).unwrap();
        let b = json!({"InstanceType": "GN7.2XLARGE32", "Count": 2});
        assert_eq!(store.check("t1", &a), Idem::New);
        store.remember("t1", &a, vec!["ins-1".to_string()]);
        assert_eq!(store.check("t1", &a_reordered), Idem::Replay(vec!["ins-1".to_string()]));
        assert_eq!(store.check("t1", &b), Idem::Mismatch);
        assert_eq!(store.check("t2", &b), Idem::New);
    }
}
