//! JD vm's SSH key pairs: importKeypair, describeKeypairs, and createInstances' `keyNames` check.
//! Parameters follow jdcloud_sdk 1.6.354 `jdcloud_sdk/services/vm/apis/ImportKeypairRequest.py` and
//! `DescribeKeypairsRequest.py`, the listed fields `jdcloud_sdk/services/vm/models/Keypair.py`. JD
//! names a key pair by its `keyName`: there is no separate id.

use gpuctl_simkit::sshkey::{ImportRefusal, StoredKey};
use serde_json::{json, Value};

use super::{filter, invalid, list, page, required, Answer, Call};
use crate::api::{format_time, status};
use crate::emulator::error::JdError;
use crate::emulator::state::JdState;

/// `keyName`: "只允许数字、大小写字母、下划线“_”及中划线“-”，不超过32个字符" (ImportKeypairParameters).
fn check_name(name: &str) -> Result<(), JdError> {
    let ok = !name.is_empty()
        && name.len() <= 32
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-');
    if ok {
        Ok(())
    } else {
        Err(invalid(format!("keyName {name:?} must be 1-32 letters, digits, `_` or `-`")))
    }
}

pub fn import_keypair(c: &Call, st: &mut JdState) -> Answer {
    let name = required(c.p, "keyName")?;
    check_name(&name)?;
    let public_key = required(c.p, "publicKey")?;
    // JD documents no refusal of one public key under a second name; a taken name is refused
    // ("若传入已存在的密钥名称，会返回错误", createKeypair's docs) *unverified* as ALREADY_EXISTS.
    let key = match st.key_pairs.check(&c.region, &name, &public_key, false) {
        Ok(k) => k,
        Err(ImportRefusal::DuplicateName) => {
            return Err(JdError::new(status::ALREADY_EXISTS, format!("keypair {name} already exists")))
        }
        Err(ImportRefusal::Malformed | ImportRefusal::DuplicateKey(_)) => {
            return Err(invalid("publicKey is not an OpenSSH public key"))
        }
    };
    let fingerprint = key.md5_fingerprint();
    st.key_pairs.insert(StoredKey {
        id: name.clone(),
        region: c.region.clone(),
        name: name.clone(),
        key,
        created: c.now,
    });
    Ok(json!({ "keyName": name, "keyFingerprint": fingerprint }))
}

pub fn describe_keypairs(c: &Call, st: &JdState) -> Answer {
    // "`keyNames`: 密钥对名称，精确匹配，支持多个" (DescribeKeypairsParameters.filters).
    let names = filter(c.p, "keyNames");
    let pg = page(c.p)?;
    let found: Vec<&StoredKey> = st
        .key_pairs
        .in_region(&c.region)
        .filter(|k| names.as_ref().is_none_or(|n| n.contains(&k.name)))
        .collect();
    let (total, shown) = pg.apply(found);
    let keypairs: Vec<Value> = shown
        .into_iter()
        .map(|k| {
            json!({
                "keyName": k.name,
                "keyFingerprint": k.key.md5_fingerprint(),
                "createTime": format_time(k.created),
                "instanceIds": st
                    .instances
                    .values()
                    .filter(|i| i.key_names.contains(&k.name))
                    .map(|i| i.id.clone())
                    .collect::<Vec<_>>(),
            })
        })
        .collect();
    Ok(json!({ "keypairs": keypairs, "totalCount": total }))
}

/// createInstances' `instanceSpec.keyNames`: "仅支持输入单个密钥" (jdcloud_sdk 1.6.354
/// `jdcloud_sdk/services/vm/models/InstanceSpec.py`), and it must be a key pair of the region
/// (*unverified*: JD's status for an unknown key name; NOT_FOUND as for other unknown resources).
pub(crate) fn login_keys(c: &Call, st: &JdState, spec: &Value) -> Result<Vec<String>, JdError> {
    let names = list(spec, "keyNames");
    if names.len() > 1 {
        return Err(invalid("instanceSpec.keyNames takes a single key name"));
    }
    for n in &names {
        if st.key_pairs.get(&c.region, n).is_none() {
            return Err(JdError::new(status::NOT_FOUND, format!("keypair {n} not found")));
        }
    }
    Ok(names)
}
