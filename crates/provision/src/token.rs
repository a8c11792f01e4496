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

/// `gpuctl-` + 40 hex characters of SHA-256 over `key`: the token of a create that is named by what
/// it is of (a disk's n-th snapshot, an instance's n-th image) rather than by a create request.
pub fn derived(key: &str) -> String {
    format!("gpuctl-{}", &hex::encode(Sha256::digest(key))[..40])
}
