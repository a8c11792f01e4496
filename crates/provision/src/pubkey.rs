//! The user's SSH public key, for importing it as a cloud key pair (issue 13: `login_key = {
//! public_key = "~/.ssh/id_ed25519.pub" }`).
//!
//! gpuctl never reads or stores a private key: a file whose content is one is refused before any of
//! it is parsed, and the refusal quotes none of it. What is kept is the key's type and base64 blob
//! (the comment, often `user@host`, is dropped: it is not part of the key and need not leave the
//! machine), its SHA-256 fingerprint as `ssh-keygen -l` prints it, and the key-pair name derived from
//! that fingerprint, the same on every cloud so a re-run finds the key it imported before.
//!
//! The spec holds it as `spec::LoginKey::Import`; apply's `ensure_key` looks the name up on the cloud
//! and imports it (Tencent/Alibaba `ImportKeyPair`, JD `importKeypair`) only when it is absent.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use sha2::{Digest, Sha256};

/// A public key file is one line: a 16384-bit RSA key is ~2.8 KiB; anything near this is not a key.
pub const MAX_PUBLIC_KEY_BYTES: u64 = 16 * 1024;

/// The OpenSSH key types gpuctl passes on (the ones `ssh-keygen -t` makes without a hardware token).
const KEY_TYPES: &[&str] =
    &["ssh-ed25519", "ssh-rsa", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521"];

/// Markers of private-key files: PEM (`-----BEGIN … PRIVATE KEY-----`, RSA/EC/PKCS#8/encrypted),
/// OpenSSH's own format (`-----BEGIN OPENSSH PRIVATE KEY-----`) and PuTTY's `.ppk`.
fn looks_private(text: &str) -> bool {
    text.contains("PRIVATE KEY-----") || text.trim_start().starts_with("PuTTY-User-Key-File-")
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PublicKey {
    /// `ssh-ed25519`, `ssh-rsa`, `ecdsa-sha2-nistp256`, …
    pub key_type: String,
    /// The base64 blob, as in the `.pub` file.
    pub blob_base64: String,
    /// `SHA256:` + unpadded base64 of the blob's SHA-256, exactly what `ssh-keygen -lf` prints.
    pub fingerprint: String,
    sha256: [u8; 32],
}

impl PublicKey {
    /// Parses the text of a `.pub` file. `origin` names it in errors (never its content).
    pub fn parse(text: &str, origin: &str) -> Result<PublicKey, String> {
        if looks_private(text) {
            return Err(format!(
                "{origin} holds a private key; gpuctl reads only public keys (give the `.pub` file, e.g. ~/.ssh/id_ed25519.pub)"
            ));
        }
        let mut lines = text.lines().map(str::trim).filter(|l| !l.is_empty() && !l.starts_with('#'));
        let Some(line) = lines.next() else {
            return Err(format!(
                "{origin} holds no public key (expected one line like `ssh-ed25519 AAAA… comment`)"
            ));
        };
        if lines.next().is_some() {
            return Err(format!(
                "{origin} holds more than one line; give a file with exactly one public key"
            ));
        }
        let mut fields = line.split_ascii_whitespace();
        let key_type = fields.next().unwrap_or_default();
        if !KEY_TYPES.contains(&key_type) {
            return Err(format!(
                "{origin} is not an OpenSSH public key: the line must start with one of {} (the key type)",
                KEY_TYPES.join(", ")
            ));
        }
        let Some(blob_base64) = fields.next() else {
            return Err(format!("{origin}: the {key_type} key has no base64 part"));
        };
        let blob = base64::engine::general_purpose::STANDARD
            .decode(blob_base64)
            .map_err(|_| format!("{origin}: the {key_type} key's base64 part does not decode"))?;
        // The blob starts with the key type again (RFC 4253 §6.6: string "ssh-rsa", …); a mismatch
        // is a damaged or hand-edited line.
        if blob_key_type(&blob) != Some(key_type.as_bytes()) {
            return Err(format!(
                "{origin}: the key's data does not match its type {key_type}; the file is damaged"
            ));
        }
        let sha256: [u8; 32] = Sha256::digest(&blob).into();
        let fingerprint =
            format!("SHA256:{}", base64::engine::general_purpose::STANDARD_NO_PAD.encode(sha256));
        Ok(PublicKey {
            key_type: key_type.to_owned(),
            blob_base64: blob_base64.to_owned(),
            fingerprint,
            sha256,
        })
    }

    /// Reads and parses the public key at `path` (bounded: see `gpuctl_sign::file`).
    pub fn read(path: &Path) -> Result<PublicKey, String> {
        let text = gpuctl_sign::file::read_string_bounded(path, MAX_PUBLIC_KEY_BYTES)
            .map_err(|e| format!("cannot read public key {}: {}", path.display(), e.reason()))?;
        PublicKey::parse(&text, &path.display().to_string())
    }

    /// The line to send as the key pair's public key: type and blob, no comment.
    pub fn openssh_line(&self) -> String {
        format!("{} {}", self.key_type, self.blob_base64)
    }

    /// The key-pair name gpuctl imports this key under: `gpuctl_` + the first 16 hex digits of the
    /// fingerprint's SHA-256 (23 characters). One name fits every cloud's rule:
    /// - Tencent CVM `ImportKeyPair.KeyName`: digits, letters and `_`, at most 25 characters
    ///   (tccli 3.1.189.1, `tccli/services/cvm/v20170312/api.json`, ImportKeyPairRequest);
    /// - Alibaba ECS `ImportKeyPair.KeyPairName`: 2–128 characters starting with a letter; letters,
    ///   digits, `:`, `_`, `.`, `-` (alibabacloud_ecs20140526 7.11.8,
    ///   `models/_import_key_pair_request.py`);
    /// - JD vm `importKeypair.keyName`: digits, letters, `_` and `-`, at most 32 characters
    ///   (jdcloud_sdk 1.6.354, `jdcloud_sdk/services/vm/apis/ImportKeypairRequest.py`).
    ///
    /// 64 bits of the digest: two different keys of one user colliding is not a practical concern.
    pub fn import_name(&self) -> String {
        format!("gpuctl_{}", hex::encode(&self.sha256[..8]))
    }

    /// Whether the key is RSA: Tencent's `ImportKeyPair.PublicKey` is documented as "`OpenSSH RSA`
    /// 格式" (tccli 3.1.189.1, `tccli/services/cvm/v20170312/api.json`), so an Ed25519 or ECDSA key
    /// is refused for a Tencent pool before anything is sent.
    pub fn is_rsa(&self) -> bool {
        self.key_type == "ssh-rsa"
    }
}

/// The key type string at the start of an SSH wire-format key blob (uint32 length, then bytes).
fn blob_key_type(blob: &[u8]) -> Option<&[u8]> {
    let len = u32::from_be_bytes(blob.get(..4)?.try_into().ok()?) as usize;
    blob.get(4..4usize.checked_add(len)?)
}

/// A spec's `public_key` path: `~/` is the user's home (as a shell would expand it), a relative path
/// is relative to the spec's folder (like `user_data_file`).
pub fn resolve_path(value: &str, spec_dir: &Path, home: Option<&Path>) -> Result<PathBuf, String> {
    if let Some(rest) = value.strip_prefix("~/") {
        let home = home.ok_or_else(|| format!("`{value}` needs HOME to be set"))?;
        return Ok(home.join(rest));
    }
    if value.starts_with('~') {
        return Err(format!("`{value}`: only `~/` (your own home) is expanded; give the full path"));
    }
    Ok(spec_dir.join(value))
}

#[cfg(test)]
mod tests {
    use super::*;

    // Made for these tests with `ssh-keygen -t ed25519 -C me@laptop` and `-t rsa -b 2048`; the private
    // halves were deleted. Fingerprints are `ssh-keygen -lf`'s.
    const ED: &str =
        "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIO2a1L/E68n+5sZjP5Zzs6Dz+RnIt9VGaEXKK/EgZZKW me@laptop\n";
    const ED_FP: &str = "SHA256:elAADEt1gxA4ajt9cY8BJ1/Dd3gjxu/lsgU3HXfO7es";
    const RSA: &str = "ssh-rsa AAAAB3NzaC1yc2EAAAADAQABAAABAQDyUSzFRX6BlPCXVwGlPJ2aq4JIrBHpWO6v/+qdK5Mt4W4BqBF/GJjht1oz0d2eLH/oAonZsIA9xLlS8mDO167cWL0xevJP/LlhUlNNvf4SfPOa0Ml8vK3v9LT26xDHlvmbVx3fCuKCyr6dIN5rrK0AEn0sa6GP58rwYHIZV9DDwH2ZOTVBgu2IV8tcHN7MGz7YP8NKJNPYFG4Q07aarKCUU89mo/X5cZv+bwXMXqyZhOVeqloJqLwbKMInrVIqIKYwc5bo4y52RpA89mM1IRC6XyEb79S9wB5ogirgLvT662REkhOVn0dZnTLEJepDAga83XLbjtgYkh+ymt51HKaV";
    const RSA_FP: &str = "SHA256:fbbh1i7K0N7OE1cg1dQfvH0neAcUC7iAhcOCvUP7QlI";

    #[test]
    fn fingerprints_match_ssh_keygen() {
        let ed = PublicKey::parse(ED, "id.pub").unwrap();
        assert_eq!(ed.fingerprint, ED_FP);
        assert_eq!(ed.key_type, "ssh-ed25519");
        assert!(!ed.is_rsa());
        // The comment stays on this machine.
        assert!(!ed.openssh_line().contains("laptop"));
        let rsa = PublicKey::parse(RSA, "rsa.pub").unwrap();
        assert_eq!(rsa.fingerprint, RSA_FP);
        assert!(rsa.is_rsa());
        assert_eq!(rsa.openssh_line(), RSA);
    }

    #[test]
    fn the_import_name_fits_every_clouds_rule_and_depends_only_on_the_key() {
        let a = PublicKey::parse(ED, "a").unwrap().import_name();
        let b = PublicKey::parse(&ED.replace("me@laptop", "other comment"), "b").unwrap().import_name();
        assert_eq!(a, b);
        assert_ne!(a, PublicKey::parse(RSA, "r").unwrap().import_name());
        assert_eq!(a.len(), 23);
        assert!(a.len() <= 25 && a.starts_with(|c: char| c.is_ascii_alphabetic()));
        assert!(a.chars().all(|c| c.is_ascii_alphanumeric() || c == '_'), "{a}");
    }

    #[test]
    fn a_private_key_is_refused_without_quoting_it() {
        for text in [
            "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAAsecret\n-----END OPENSSH PRIVATE KEY-----\n",
            "-----BEGIN RSA PRIVATE KEY-----\nMIIsecret\n-----END RSA PRIVATE KEY-----\n",
            "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIsecret\n-----END ENCRYPTED PRIVATE KEY-----\n",
            "PuTTY-User-Key-File-3: ssh-ed25519\nPrivate-Lines: 1\nsecret\n",
        ] {
            let e = PublicKey::parse(text, "~/.ssh/id_ed25519").unwrap_err();
            assert!(e.contains("holds a private key") && e.contains(".pub"), "{e}");
            assert!(!e.contains("secret") && !e.contains("MII"), "{e}");
        }
    }

    #[test]
    fn what_is_not_one_public_key_is_a_clear_error() {
        let cases = [
            ("", "holds no public key"),
            ("# only a comment\n", "holds no public key"),
            ("hello world\n", "is not an OpenSSH public key"),
            ("ssh-ed25519\n", "has no base64 part"),
            ("ssh-ed25519 !!!notbase64\n", "does not decode"),
            (&ED.replace("ssh-ed25519 ", "ssh-rsa "), "does not match its type ssh-rsa"),
            ("ssh-ed25519 AAAA\n", "does not match its type"),
            (&format!("{ED}{RSA}\n"), "more than one line"),
        ];
        for (text, wanted) in cases {
            let e = PublicKey::parse(text, "k.pub").unwrap_err();
            assert!(e.starts_with("k.pub") && e.contains(wanted), "{text:?}: {e}");
        }
    }

    #[test]
    fn read_is_bounded_and_refuses_what_is_not_a_file() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("id.pub");
        std::fs::write(&p, ED).unwrap();
        assert_eq!(PublicKey::read(&p).unwrap().fingerprint, ED_FP);
        std::fs::write(&p, "x".repeat(MAX_PUBLIC_KEY_BYTES as usize + 1)).unwrap();
        let e = PublicKey::read(&p).unwrap_err();
        assert!(e.contains("id.pub") && e.contains("at most 16384"), "{e}");
        #[cfg(unix)]
        {
            let e = PublicKey::read(Path::new("/dev/zero")).unwrap_err();
            assert!(e.contains("character device"), "{e}");
        }
    }

    #[test]
    fn paths_expand_home_and_are_relative_to_the_spec() {
        let home = Path::new("/home/me");
        let dir = Path::new("/work/specs");
        assert_eq!(resolve_path("~/.ssh/id.pub", dir, Some(home)).unwrap(), home.join(".ssh/id.pub"));
        assert_eq!(resolve_path("keys/id.pub", dir, Some(home)).unwrap(), dir.join("keys/id.pub"));
        assert_eq!(resolve_path("/abs/id.pub", dir, None).unwrap(), Path::new("/abs/id.pub"));
        assert!(resolve_path("~/.ssh/id.pub", dir, None).unwrap_err().contains("HOME"));
        assert!(resolve_path("~other/id.pub", dir, Some(home)).unwrap_err().contains("only `~/`"));
    }
}
