//! Client tokens: one per logical create, derived, never random, so a retry or a re-run after a crash
//! sends the same token and the cloud answers with the instance it already made.

use sha2::{Digest, Sha256};

use crate::cloud::CreateRequest;

/// `gpuctl-` + 40 hex characters of SHA-256 over (deployment, pool, index, the create's parameters,
/// generation). 47 ASCII characters: under the 64 that Tencent, Alibaba and JD accept.
///
/// `generation` starts at 0 and is bumped only when a new attempt must not be answered with an old
/// instance (a clone asked again, a released index re-created). A fallback to another type or zone
/// changes the parameters and so the token by itself.
pub fn client_token(
    deployment: &str,
    pool: &str,
    index: u32,
    req: &CreateRequest,
    generation: u32,
) -> String {
    let mut h = Sha256::new();
    // Parameters that decide what is bought; not the token itself, tags derived from it, or dry_run.
    let params = serde_json::json!({
        "region": req.region, "zone": req.zone, "type": req.instance_type, "billing": req.billing,
        "term": req.term, "spot": req.spot_max_price, "image": req.image_id, "system_disk": req.system_disk,
        "data_disks": req.data_disks, "network": req.network, "key": req.login_key, "user_data": req.user_data,
    });
    for part in [deployment, pool, &index.to_string(), &params.to_string(), &generation.to_string()] {
        h.update((part.len() as u64).to_le_bytes());
        h.update(part.as_bytes());
    }
    format!("gpuctl-{}", &hex::encode(h.finalize())[..40])
}

/// The token of one pool slot's create: the first generation whose token has no record, or whose
/// record still holds the slot (`ended` says it does not: released, failed for good, reclaimed by
/// the cloud, being released). So a retry or a re-run after a crash — the record `creating` or
/// `running` — meets the same token and the instance it made, while a slot whose instance ended
/// (a spot reclaim, issue 15) is made anew under the next generation, and its replacement's own
/// retries again meet the replacement. Returns the token, its generation and its record.
pub fn slot_token<R, E>(
    deployment: &str,
    pool: &str,
    index: u32,
    req: &CreateRequest,
    mut recorded: impl FnMut(&str) -> Result<Option<R>, E>,
    ended: impl Fn(&R) -> bool,
) -> Result<(String, u32, Option<R>), E> {
    let mut generation = 0;
    loop {
        let t = client_token(deployment, pool, index, req, generation);
        match recorded(&t)? {
            Some(r) if ended(&r) => generation += 1,
            r => return Ok((t, generation, r)),
        }
    }
}

/// `gpuctl-` + 40 hex characters of SHA-256 over `key`: the token of a create that is named by what
/// it is of (a disk's n-th snapshot, an instance's n-th image) rather than by a create request.
pub fn derived(key: &str) -> String {
    format!("gpuctl-{}", &hex::encode(Sha256::digest(key))[..40])
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;
    use crate::state::ResourceState;

    fn req() -> CreateRequest {
        CreateRequest {
            client_token: String::new(),
            name: "d-a-1".into(),
            region: "ap-guangzhou".into(),
            zone: "ap-guangzhou-3".into(),
            instance_type: "GN7.2XLARGE32".into(),
            billing: crate::BillingMode::Spot,
            term: 1,
            spot_max_price: Some(9.0),
            image_id: "img-1".into(),
            system_disk: crate::spec::Disk {
                category: crate::spec::DiskCategory::Ssd,
                size_gb: 100,
                snapshot_id: None,
            },
            data_disks: vec![],
            network: None,
            placement: None,
            login_key: None,
            public_ip: None,
            auto_release_at: None,
            tags: Default::default(),
            user_data: None,
            instance_role: None,
            dry_run: false,
        }
    }

    /// The generation a slot's create gets, given the states recorded under each generation's token.
    fn pick(states: &[ResourceState]) -> (String, u32) {
        let r = req();
        let recorded: HashMap<String, ResourceState> =
            states.iter().enumerate().map(|(g, s)| (client_token("d", "a", 1, &r, g as u32), *s)).collect();
        let (t, g, _) = slot_token(
            "d",
            "a",
            1,
            &r,
            |t| Ok::<_, ()>(recorded.get(t).copied()),
            |s| !s.holds_slot() || *s == ResourceState::Releasing,
        )
        .unwrap();
        (t, g)
    }

    #[test]
    fn a_reclaimed_slot_is_made_anew_under_the_next_generation_and_only_once() {
        use ResourceState::*;
        let r = req();
        // Nothing recorded: generation 0. Running: the same token (a re-run adopts).
        assert_eq!(pick(&[]), (client_token("d", "a", 1, &r, 0), 0));
        assert_eq!(pick(&[Running]).1, 0);
        // Reclaimed by the cloud: the replacement takes generation 1 …
        let (t1, g1) = pick(&[Reclaimed]);
        assert_eq!(g1, 1);
        assert_ne!(t1, client_token("d", "a", 1, &r, 0));
        // … and a retry or a re-run after a crash mid-replacement (its record `creating`, or running)
        // meets that same token: no second replacement.
        assert_eq!(pick(&[Reclaimed, Creating]), (t1.clone(), 1));
        assert_eq!(pick(&[Reclaimed, Running]), (t1, 1));
        // The replacement reclaimed in turn: generation 2.
        assert_eq!(pick(&[Reclaimed, Reclaimed]).1, 2);
        // Ended otherwise (released, failed, being released) moves on just the same.
        assert_eq!(pick(&[Released, Failed, Releasing]).1, 3);
        // Billed until a term's end: the user's no longer, the slot is made anew.
        assert_eq!(pick(&[BilledUntil]).1, 1);
    }
}
