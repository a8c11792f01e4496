//! ECS SSH key pairs: ImportKeyPair, DescribeKeyPairs, and RunInstances' `KeyPairName` check.
//! Fields follow alibabacloud_ecs20140526 7.11.8 (`models/_import_key_pair_request.py`,
//! `_import_key_pair_response_body.py`, `_describe_key_pairs_request.py`,
//! `_describe_key_pairs_response_body.py`). ECS names a key pair by its name: there is no separate id.

use gpuctl_simkit::sshkey::{ImportRefusal, StoredKey};
use gpuctl_simkit::ParamErrors as _;
use serde_json::{json, Value};

use super::{region, Answer, Call};
use crate::api::{codes, format_time};
use crate::emulator::error::EcsError;
use crate::emulator::state::EcsState;

/// The encryption methods ImportKeyPair accepts ("rsa, dsa, ssh-rsa, ssh-dss, ecdsa", and their
/// OpenSSH certificate forms; ImportKeyPair's usage notes, help.aliyun.com/document_detail/51774):
/// an Ed25519 key is not among them.
fn accepted(key_type: &str) -> bool {
    key_type == "ssh-rsa" || key_type == "ssh-dss" || key_type.starts_with("ecdsa-sha2-")
}

/// `KeyPairName`: "2 to 128 characters in length and must start with a letter ... It cannot start
/// with http:// or https://. ... colons (:), underscores (_), periods (.), or hyphens (-)"
/// (`_import_key_pair_request.py`).
fn check_name(name: &str) -> Result<(), EcsError> {
    let len = name.chars().count();
    let ok = (2..=128).contains(&len)
        && name.starts_with(|c: char| c.is_alphabetic())
        && !name.starts_with("http://")
        && !name.starts_with("https://")
        && name.chars().all(|c| c.is_alphanumeric() || ":_.-".contains(c));
    if ok {
        Ok(())
    } else {
        Err(EcsError::invalid("KeyPairName", "2-128 characters starting with a letter", &json!(name)))
    }
}

pub fn import_key_pair(c: &Call, st: &mut EcsState) -> Answer {
    let region = region(c)?;
    let name = c.p.required("KeyPairName")?;
    check_name(&name)?;
    let body = c.p.required("PublicKeyBody")?;
    // ECS documents no refusal of one public key under a second name, so only the name must be free.
    let key = match st.key_pairs.check(&region, &name, &body, false) {
        Ok(k) if accepted(&k.key_type) => k,
        Ok(_) | Err(ImportRefusal::Malformed) | Err(ImportRefusal::DuplicateKey(_)) => {
            return Err(EcsError::new(
                400,
                codes::PUBLIC_KEY_MALFORMED,
                "The specified PublicKeyBody is not an RSA, DSA or ECDSA public key in OpenSSH format.",
            ))
        }
        Err(ImportRefusal::DuplicateName) => {
            return Err(EcsError::new(
                400,
                codes::KEY_PAIR_EXISTS,
                format!("The key pair \"{name}\" already exists."),
            ))
        }
    };
    let fingerprint = key.md5_fingerprint();
    st.key_pairs.insert(StoredKey { id: name.clone(), region, name: name.clone(), key, created: c.now });
    Ok(json!({ "KeyPairName": name, "KeyPairFingerPrint": fingerprint }))
}

/// `KeyPairName` with `*` wildcards ("`*SshKey`", "`SshKey*`", "`*SshKey*`", exact otherwise:
/// `_describe_key_pairs_request.py`).
fn name_matches(pattern: &str, name: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == name;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !name.starts_with(first) || name.len() < first.len() + last.len() || !name.ends_with(last) {
        return false;
    }
    let mut rest = &name[first.len()..name.len() - last.len()];
    for mid in &parts[1..parts.len() - 1] {
        match rest.find(mid) {
            Some(i) => rest = &rest[i + mid.len()..],
            None => return false,
        }
    }
    true
}

pub fn describe_key_pairs(c: &Call, st: &EcsState) -> Answer {
    let region = region(c)?;
    let name = c.p.text("KeyPairName");
    let fingerprint = c.p.text("KeyPairFingerPrint");
    let with_key = c.p.opt_bool("IncludePublicKey")?.unwrap_or(false);
    // "The number of entries per page ... Maximum value: 50. Default value: 10."
    let w = c.p.page_number(("PageNumber", "PageSize"), 10, 1..=50)?;
    let found: Vec<&StoredKey> = st
        .key_pairs
        .in_region(&region)
        .filter(|k| name.as_deref().is_none_or(|n| name_matches(n, &k.name)))
        .filter(|k| fingerprint.as_deref().is_none_or(|f| f == k.key.md5_fingerprint()))
        .collect();
    let total = found.len();
    let page: Vec<Value> = found
        .into_iter()
        .skip((w.number() - 1).saturating_mul(w.size()))
        .take(w.size())
        .map(|k| {
            let mut v = json!({
                "KeyPairName": k.name,
                "KeyPairFingerPrint": k.key.md5_fingerprint(),
                "CreationTime": format_time(k.created),
                "ResourceGroupId": "",
                "Tags": { "Tag": [] },
            });
            if with_key {
                v["PublicKey"] = json!(k.key.canonical());
            }
            v
        })
        .collect();
    Ok(json!({
        "KeyPairs": { "KeyPair": page },
        "TotalCount": total,
        "PageNumber": w.number(),
        "PageSize": w.size(),
    }))
}

/// RunInstances' `KeyPairName`: empty for none, else a key pair of the region.
pub(crate) fn login_key(c: &Call, st: &EcsState, region: &str) -> Result<String, EcsError> {
    let Some(name) = c.p.text("KeyPairName").filter(|n| !n.is_empty()) else {
        return Ok(String::new());
    };
    if st.key_pairs.get(region, &name).is_none() {
        // *unverified* status; the code is ECS's for a KeyPairName it does not know.
        return Err(EcsError::new(
            404,
            codes::KEY_PAIR_NOT_FOUND,
            format!("The specified KeyPairName \"{name}\" does not exist in region {region}."),
        ));
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::name_matches;

    #[test]
    fn key_pair_names_match_with_wildcards_as_documented() {
        for (p, n, want) in [
            ("SshKey", "SshKey", true),
            ("SshKey", "MySshKey", false),
            ("*SshKey", "MySshKey", true),
            ("*SshKey", "SshKey", true),
            ("SshKey*", "SshKey2", true),
            ("*SshKey*", "aSshKeyb", true),
            ("*SshKey*", "aSshKeb", false),
            ("a*b*c", "abc", true),
            ("ab*ba", "aba", false),
        ] {
            assert_eq!(name_matches(p, n), want, "{p} vs {n}");
        }
    }
}
