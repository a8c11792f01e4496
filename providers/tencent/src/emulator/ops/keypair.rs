//! CVM's SSH key pairs: ImportKeyPair, DescribeKeyPairs, and RunInstances' `LoginSettings.KeyIds`
//! check. Parameters and fields follow tccli 3.1.189.1 `tccli/services/cvm/v20170312/api.json`
//! (ImportKeyPairRequest, DescribeKeyPairsRequest, KeyPair); error codes tencentcloud-sdk-python-cvm
//! 3.1.178 `tencentcloud/cvm/v20170312/errorcodes.py`.

use gpuctl_simkit::sshkey::{ImportRefusal, StoredKey};
use serde_json::{json, Value};

use crate::api::codes;
use crate::emulator::error::{Result, TcError};
use crate::emulator::p::{filters, page};
use crate::emulator::state::{cvm_time, State};
use crate::emulator::Call;

/// `KeyName`: "可由数字，字母和下划线组成，长度不超过25个字符" (ImportKeyPairRequest).
const KEY_NAME_MAX: usize = 25;

/// The only project the emulated account has: "如果是默认项目，直接填0就可以" (ImportKeyPairRequest.ProjectId).
const DEFAULT_PROJECT: i64 = 0;

fn check_name(name: &str) -> Result<()> {
    if name.is_empty() {
        return Err(TcError::new(codes::INVALID_KEY_PAIR_NAME_EMPTY, "KeyName must not be empty."));
    }
    if name.chars().count() > KEY_NAME_MAX {
        return Err(TcError::new(
            codes::INVALID_KEY_PAIR_NAME_TOO_LONG,
            format!("KeyName `{name}` is longer than {KEY_NAME_MAX} characters."),
        ));
    }
    if !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(TcError::new(
            codes::INVALID_KEY_PAIR_NAME_ILLEGAL_CHAR,
            format!("KeyName `{name}` may hold only letters, digits and `_`."),
        ));
    }
    Ok(())
}

pub(crate) fn import_key_pair(state: &mut State, call: &Call) -> Result<Value> {
    let v = call.p();
    let name = v.req_str("KeyName")?;
    check_name(&name)?;
    let project = v.opt_i64("ProjectId")?.unwrap_or(DEFAULT_PROJECT);
    if project != DEFAULT_PROJECT {
        return Err(TcError::new(
            codes::INVALID_PROJECT_ID_NOT_FOUND,
            format!("The project `{project}` does not exist."),
        ));
    }
    let public_key = v.req_str("PublicKey")?;
    // "密钥对的公钥内容，`OpenSSH RSA` 格式" (ImportKeyPairRequest.PublicKey), and InvalidPublicKey.Malformed
    // is "不符合`OpenSSH RSA`格式要求": a key of another type is refused as malformed.
    let key = match state.key_pairs.check(&call.region, &name, &public_key, true) {
        Ok(k) if k.key_type == "ssh-rsa" => k,
        Ok(_) | Err(ImportRefusal::Malformed) => {
            return Err(TcError::new(
                codes::INVALID_PUBLIC_KEY_MALFORMED,
                "PublicKey is not an `OpenSSH RSA` public key.",
            ))
        }
        Err(ImportRefusal::DuplicateName) => {
            return Err(TcError::new(
                codes::INVALID_KEY_PAIR_NAME_DUPLICATE,
                format!("A key pair named `{name}` already exists."),
            ))
        }
        Err(ImportRefusal::DuplicateKey(other)) => {
            return Err(TcError::new(
                codes::INVALID_PUBLIC_KEY_DUPLICATE,
                format!("This public key already exists as key pair `{other}`."),
            ))
        }
    };
    let id = call.ctx.new_id("skey-", 8);
    state.key_pairs.insert(StoredKey {
        id: id.clone(),
        region: call.region.clone(),
        name,
        key,
        created: call.ctx.now(),
    });
    Ok(json!({ "KeyId": id }))
}

pub(crate) fn describe_key_pairs(state: &State, call: &Call) -> Result<Value> {
    let v = call.p();
    let window = page(&v)?;
    let ids = v.str_list("KeyIds")?;
    let fs = filters(&v, &["project-id", "key-name"])?;
    // "参数不支持同时指定 `KeyIds` 和 `Filters`" (DescribeKeyPairsRequest.KeyIds).
    if !ids.is_empty() && !fs.is_empty() {
        return Err(TcError::new(codes::INVALID_PARAMETER, "KeyIds and Filters cannot be given together."));
    }
    for id in &ids {
        check_key_id(id)?;
    }
    let found: Vec<&StoredKey> = state
        .key_pairs
        .in_region(&call.region)
        .filter(|k| ids.is_empty() || ids.contains(&k.id))
        .filter(|k| {
            fs.iter().all(|(n, vs)| match n.as_str() {
                "key-name" => vs.contains(&k.name),
                "project-id" => vs.iter().any(|p| p == &DEFAULT_PROJECT.to_string()),
                _ => false,
            })
        })
        .collect();
    let (total, shown) = window.apply(found);
    Ok(json!({
        "TotalCount": total,
        "KeyPairSet": shown.into_iter().map(|k| json!({
            "KeyId": k.id,
            "KeyName": k.name,
            "ProjectId": DEFAULT_PROJECT,
            "Description": "",
            "PublicKey": k.key.canonical(),
            "AssociatedInstanceIds": state
                .instances
                .iter()
                .filter(|i| i.key_ids.contains(&k.id))
                .map(|i| i.id.clone())
                .collect::<Vec<_>>(),
            "CreatedTime": cvm_time(k.created),
            "Tags": [],
        })).collect::<Vec<_>>(),
    }))
}

/// "密钥对ID形如：`skey-11112222`" (DescribeKeyPairsRequest.KeyIds): `skey-` and 8 letters or digits.
fn check_key_id(id: &str) -> Result<()> {
    let ok = id
        .strip_prefix("skey-")
        .is_some_and(|t| t.len() == 8 && t.chars().all(|c| c.is_ascii_alphanumeric()));
    if ok {
        Ok(())
    } else {
        Err(TcError::new(
            codes::INVALID_KEY_PAIR_ID_MALFORMED,
            format!("The key pair id `{id}` is malformed."),
        ))
    }
}

/// RunInstances' `LoginSettings.KeyIds`: each must be a key pair of the region.
pub(crate) fn login_key_ids(state: &State, call: &Call) -> Result<Vec<String>> {
    let ids = call.p().str_list("LoginSettings.KeyIds")?;
    for id in &ids {
        check_key_id(id)?;
        if state.key_pairs.by_id(&call.region, id).is_none() {
            return Err(TcError::new(
                codes::INVALID_KEY_PAIR_ID_NOT_FOUND,
                format!("The key pair `{id}` does not exist."),
            ));
        }
    }
    Ok(ids)
}
