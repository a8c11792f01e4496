//! Instance-role credentials: the temporary keys a cloud's metadata service hands a program running
//! on an instance that was created with a role (Tencent `RunInstances.CamRoleName`, Alibaba
//! `RunInstances.RamRoleName`). The local cloud issues them per (provider, instance, role), they
//! expire on the sim clock, and each emulator, after the signature verified, asks
//! [`SimCtx::role_session`](crate::SimCtx::role_session) whether the key is one of them: then the
//! request must carry the session's token (Tencent `X-TC-Token`, Alibaba `SecurityToken`) and may only
//! do what the role's policy allows, on that instance (docs/idle-agent.md gives that policy).
//!
//! Metadata-service tokens (Alibaba's hardened mode, `PUT /latest/api/token`) live here too: they
//! are per instance and expire after the TTL the caller asked for.
//!
//! Knows no wire format: the emulators render the metadata answers and their cloud's refusals.

use std::collections::HashMap;

use jiff::{SignedDuration, Timestamp};

use crate::creds::SecretKey;
use crate::Provider;

/// How long one set of role credentials lives. Assumption (no definition states a lifetime):
/// Alibaba's credentials library refreshes "ECS RAM role" credentials when fewer than 180 s are left
/// of their `Expiration` (alibabacloud-credentials 1.0.12 provider/ecs_ram_role.py), and both clouds
/// issue STS-style keys of about six hours; six hours here.
pub const LIFETIME: SignedDuration = SignedDuration::from_hours(6);

/// A fresh set is issued once the current one has less than this left (so a caller that refreshes
/// ahead of expiry, as the SDKs do, gets new keys rather than the same ones again).
pub const RENEW_WITHIN: SignedDuration = SignedDuration::from_mins(30);

/// One set of temporary credentials, bound to one instance and its role.
#[derive(Clone, Debug)]
pub struct RoleSession {
    pub provider: Provider,
    pub instance_id: String,
    pub role: String,
    pub access_key: String,
    pub secret: SecretKey,
    /// The session token (a secret too; never printed).
    pub token: SecretKey,
    pub issued: Timestamp,
    pub expires: Timestamp,
}

/// Every session issued so far and the metadata tokens, behind the ctx's mutex.
#[derive(Debug, Default)]
pub struct Roles {
    sessions: Vec<RoleSession>,
    /// metadata token → (provider, instance id, expiry).
    metadata_tokens: HashMap<String, (Provider, String, Timestamp)>,
}

/// Most sessions kept: older ones (all long expired in any test) are dropped first.
const MAX_SESSIONS: usize = 4096;

impl Roles {
    /// The current session for this instance and role, or a new one when none has more than
    /// [`RENEW_WITHIN`] left. `fresh` makes (access key, secret, token) for a new one.
    pub fn issue(
        &mut self,
        provider: Provider,
        instance_id: &str,
        role: &str,
        now: Timestamp,
        fresh: impl FnOnce() -> (String, String, String),
    ) -> RoleSession {
        let current = self.sessions.iter().rev().find(|s| {
            s.provider == provider
                && s.instance_id == instance_id
                && s.role == role
                && s.expires.duration_since(now) > RENEW_WITHIN
        });
        if let Some(s) = current {
            return s.clone();
        }
        let (access_key, secret, token) = fresh();
        let s = RoleSession {
            provider,
            instance_id: instance_id.to_string(),
            role: role.to_string(),
            access_key,
            secret: SecretKey::new(secret),
            token: SecretKey::new(token),
            issued: now,
            expires: now.checked_add(LIFETIME).unwrap_or(now),
        };
        if self.sessions.len() >= MAX_SESSIONS {
            self.sessions.remove(0);
        }
        self.sessions.push(s.clone());
        s
    }

    pub fn find(&self, provider: Provider, access_key: &str) -> Option<&RoleSession> {
        self.sessions.iter().find(|s| s.provider == provider && s.access_key == access_key)
    }

    /// Forget the sessions of instances that are gone (the emulator's reset).
    pub fn clear(&mut self, provider: Provider) {
        self.sessions.retain(|s| s.provider != provider);
        self.metadata_tokens.retain(|_, (p, _, _)| *p != provider);
    }

    pub fn add_metadata_token(
        &mut self,
        token: String,
        provider: Provider,
        instance_id: &str,
        expires: Timestamp,
    ) {
        if self.metadata_tokens.len() >= MAX_SESSIONS {
            self.metadata_tokens.retain(|_, (_, _, t)| *t > expires.checked_sub(LIFETIME).unwrap_or(expires));
        }
        self.metadata_tokens.insert(token, (provider, instance_id.to_string(), expires));
    }

    /// Whether `token` is a live metadata token of this instance.
    pub fn metadata_token_ok(
        &self,
        token: &str,
        provider: Provider,
        instance_id: &str,
        now: Timestamp,
    ) -> bool {
        self.metadata_tokens
            .get(token)
            .is_some_and(|(p, id, t)| *p == provider && id == instance_id && *t > now)
    }
}

/// Why a role session's request is refused; each emulator words it with its cloud's code.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RoleRefusal {
    /// No token, or not this session's.
    BadToken,
    /// Past `expires` on the sim clock.
    Expired,
    /// The action is not in the role's policy.
    ActionNotAllowed(String),
    /// The action is allowed, but on this instance only, and the request names another resource
    /// (or none, where the policy needs one).
    ResourceNotAllowed(String),
}

impl RoleSession {
    /// The checks every emulator makes, in this order: token, expiry, action, resources. `allowed`
    /// is the role policy's actions; `scoped` those of them limited to the session's own instance;
    /// `resources` the instance ids the request names.
    pub fn admit(
        &self,
        token: Option<&str>,
        now: Timestamp,
        action: &str,
        allowed: &[&str],
        scoped: &[&str],
        resources: &[String],
    ) -> Result<(), RoleRefusal> {
        if token != Some(self.token.expose()) {
            return Err(RoleRefusal::BadToken);
        }
        if now >= self.expires {
            return Err(RoleRefusal::Expired);
        }
        if !allowed.contains(&action) {
            return Err(RoleRefusal::ActionNotAllowed(action.to_string()));
        }
        if scoped.contains(&action)
            && (resources.is_empty() || resources.iter().any(|r| *r != self.instance_id))
        {
            let other = resources.iter().find(|r| **r != self.instance_id).cloned().unwrap_or_default();
            return Err(RoleRefusal::ResourceNotAllowed(other));
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(n: &str) -> impl FnOnce() -> (String, String, String) + '_ {
        move || (format!("ak{n}"), format!("sk{n}"), format!("tok{n}"))
    }

    #[test]
    fn sessions_renew_before_expiry_and_admit_only_their_instance() {
        let mut r = Roles::default();
        let t0 = Timestamp::from_second(1_800_000_000).unwrap();
        let a = r.issue(Provider::Tencent, "ins-1", "role", t0, keys("1"));
        let again =
            r.issue(Provider::Tencent, "ins-1", "role", t0 + SignedDuration::from_hours(1), keys("2"));
        assert_eq!(a.access_key, again.access_key, "not yet due for renewal");
        let late = t0 + LIFETIME - SignedDuration::from_mins(10);
        let b = r.issue(Provider::Tencent, "ins-1", "role", late, keys("3"));
        assert_eq!(b.access_key, "ak3");
        assert!(r.find(Provider::Alibaba, "ak3").is_none(), "sessions are per provider");
        let allowed = ["StopInstances", "GetMonitorData"];
        let scoped = ["StopInstances"];
        let me = vec!["ins-1".to_string()];
        assert_eq!(b.admit(Some("tok3"), late, "StopInstances", &allowed, &scoped, &me), Ok(()));
        assert_eq!(
            b.admit(Some("tok1"), late, "StopInstances", &allowed, &scoped, &me),
            Err(RoleRefusal::BadToken)
        );
        assert_eq!(b.admit(None, late, "StopInstances", &allowed, &scoped, &me), Err(RoleRefusal::BadToken));
        assert_eq!(
            b.admit(Some("tok3"), late, "RunInstances", &allowed, &scoped, &me),
            Err(RoleRefusal::ActionNotAllowed("RunInstances".into()))
        );
        assert_eq!(
            b.admit(Some("tok3"), late, "StopInstances", &allowed, &scoped, &["ins-2".to_string()]),
            Err(RoleRefusal::ResourceNotAllowed("ins-2".into()))
        );
        assert_eq!(b.admit(Some("tok3"), late, "GetMonitorData", &allowed, &scoped, &[]), Ok(()));
        assert_eq!(
            b.admit(Some("tok3"), b.expires, "GetMonitorData", &allowed, &scoped, &[]),
            Err(RoleRefusal::Expired)
        );
        assert!(!format!("{b:?}").contains("tok3"), "the token never prints");
    }
}
