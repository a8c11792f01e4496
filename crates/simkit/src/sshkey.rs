//! SSH public keys as the emulated clouds keep them (issue 13: Tencent/Alibaba `ImportKeyPair`, JD
//! `importKeypair`): what every emulator needs to accept an imported key, refuse a malformed one and
//! answer with the fingerprint its cloud documents. Each emulator keeps its own [`KeyStore`] in its
//! state and maps refusals to its cloud's codes; only public keys ever exist here.

use base64::Engine as _;
use jiff::Timestamp;
use md5::{Digest, Md5};

/// A public key line, `type base64 [comment]`, that decodes and whose blob names its own type
/// (RFC 4253 §6.6: the blob starts with the key type as an SSH string).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKeyLine {
    pub key_type: String,
    pub blob: Vec<u8>,
}

impl PublicKeyLine {
    /// `None` for anything that is not one OpenSSH public key line (the clouds refuse it as malformed).
    pub fn parse(text: &str) -> Option<PublicKeyLine> {
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty());
        let line = lines.next()?;
        if lines.next().is_some() {
            return None;
        }
        let mut fields = line.split_ascii_whitespace();
        let key_type = fields.next()?;
        let blob = base64::engine::general_purpose::STANDARD.decode(fields.next()?).ok()?;
        let len = u32::from_be_bytes(blob.get(..4)?.try_into().ok()?) as usize;
        if blob.get(4..4usize.checked_add(len)?)? != key_type.as_bytes() {
            return None;
        }
        Some(PublicKeyLine { key_type: key_type.to_owned(), blob })
    }

    /// The line without its comment, as the clouds list the key's public half.
    pub fn canonical(&self) -> String {
        format!("{} {}", self.key_type, base64::engine::general_purpose::STANDARD.encode(&self.blob))
    }

    /// RFC 4716 §4's fingerprint: the MD5 of the blob as colon-separated hex pairs, which Alibaba's
    /// `KeyPairFingerPrint` (alibabacloud_ecs20140526 7.11.8, `models/_import_key_pair_response_body.py`)
    /// and JD's `keyFingerprint` (jdcloud_sdk 1.6.354, `jdcloud_sdk/services/vm/models/Keypair.py`)
    /// are documented to be.
    pub fn md5_fingerprint(&self) -> String {
        let digest = Md5::digest(&self.blob);
        digest.iter().map(|b| format!("{b:02x}")).collect::<Vec<_>>().join(":")
    }
}

/// One imported key pair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredKey {
    /// The cloud's id (Tencent `skey-…`); clouds that name keys by name keep the name here too.
    pub id: String,
    pub region: String,
    pub name: String,
    pub key: PublicKeyLine,
    pub created: Timestamp,
}

/// Why an import was refused; each emulator answers it with its cloud's own code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ImportRefusal {
    /// Not one OpenSSH public key line.
    Malformed,
    /// The region already has a key of this name.
    DuplicateName,
    /// The region already has this public key, under the name given.
    DuplicateKey(String),
}

/// The key pairs of one emulated cloud, per region, in import order.
#[derive(Debug, Default)]
pub struct KeyStore {
    keys: Vec<StoredKey>,
}

impl KeyStore {
    /// Checks an import without storing it: the key parses and its name is free in the region. Whether
    /// a second name for the same key is refused is the cloud's rule, so the duplicate key is reported
    /// only when `refuse_same_key`.
    pub fn check(
        &self,
        region: &str,
        name: &str,
        public_key: &str,
        refuse_same_key: bool,
    ) -> Result<PublicKeyLine, ImportRefusal> {
        let key = PublicKeyLine::parse(public_key).ok_or(ImportRefusal::Malformed)?;
        if self.get(region, name).is_some() {
            return Err(ImportRefusal::DuplicateName);
        }
        if refuse_same_key {
            if let Some(k) = self.in_region(region).find(|k| k.key.blob == key.blob) {
                return Err(ImportRefusal::DuplicateKey(k.name.clone()));
            }
        }
        Ok(key)
    }

    pub fn insert(&mut self, key: StoredKey) {
        self.keys.push(key);
    }

    pub fn in_region<'a>(&'a self, region: &'a str) -> impl Iterator<Item = &'a StoredKey> + 'a {
        self.keys.iter().filter(move |k| k.region == region)
    }

    /// The region's key called `name`.
    pub fn get(&self, region: &str, name: &str) -> Option<&StoredKey> {
        self.keys.iter().find(|k| k.region == region && k.name == name)
    }

    /// The `/_sim/state` view: every key pair, public halves as fingerprints only.
    pub fn view(&self) -> serde_json::Value {
        self.keys
            .iter()
            .map(|k| {
                serde_json::json!({
                    "id": k.id, "region": k.region, "name": k.name, "key_type": k.key.key_type,
                    "fingerprint_md5": k.key.md5_fingerprint(), "created": k.created.to_string(),
                })
            })
            .collect()
    }

    /// The region's key with this id.
    pub fn by_id(&self, region: &str, id: &str) -> Option<&StoredKey> {
        self.keys.iter().find(|k| k.region == region && k.id == id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // `ssh-keygen -t ed25519`'s public half (the private half was deleted); its MD5 fingerprint is
    // `ssh-keygen -l -E md5 -f`'s.
    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop";

    #[test]
    fn a_public_key_line_parses_and_keeps_no_comment() {
        let k = PublicKeyLine::parse(ED).unwrap();
        assert_eq!(k.key_type, "ssh-ed25519");
        assert!(!k.canonical().contains("laptop"));
        assert_eq!(PublicKeyLine::parse(&k.canonical()), Some(k.clone()));
        assert_eq!(k.md5_fingerprint(), "01:28:cb:15:16:91:ee:27:35:33:d7:b4:29:86:86:fe");
    }

    #[test]
    fn what_is_not_a_public_key_is_malformed() {
        for bad in [
            "",
            "ssh-ed25519",
            "ssh-ed25519 !!!",
            "ssh-rsa AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW",
            "ssh-ed25519 AAAA",
            &format!("{ED}\n{ED}"),
            "-----BEGIN OPENSSH PRIVATE KEY-----",
        ] {
            assert_eq!(PublicKeyLine::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn names_are_unique_per_region_and_a_second_name_for_a_key_is_the_clouds_rule() {
        let mut s = KeyStore::default();
        let key = s.check("r1", "a", ED, true).unwrap();
        s.insert(StoredKey {
            id: "skey-1".into(),
            region: "r1".into(),
            name: "a".into(),
            key,
            created: Timestamp::UNIX_EPOCH,
        });
        assert_eq!(s.check("r1", "a", ED, false), Err(ImportRefusal::DuplicateName));
        assert_eq!(s.check("r1", "b", ED, true), Err(ImportRefusal::DuplicateKey("a".into())));
        assert!(s.check("r1", "b", ED, false).is_ok());
        assert!(s.check("r2", "a", ED, true).is_ok());
        assert_eq!(s.check("r1", "c", "nope", true), Err(ImportRefusal::Malformed));
        assert_eq!(s.by_id("r1", "skey-1").map(|k| k.name.as_str()), Some("a"));
        assert!(s.get("r2", "a").is_none());
    }
}
