//! ClientToken idempotency as the clouds do it: the same token with the same parameters returns the
//! first call's result; the same token with different parameters is an error.

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
