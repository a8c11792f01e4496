//! Owns the secret types: `Secret` and `Credentials`. A secret prints as `******` in `Debug` and
//! `Display`; the only way to read it is `Secret::expose`, which the signer calls to derive keys.

use std::fmt;

/// An access key secret (or session token). Never printed: `Debug`/`Display` show `******`.
#[derive(Clone, PartialEq, Eq)]
pub struct Secret(String);

impl Secret {
    pub fn new(value: impl Into<String>) -> Self {
        Self(value.into())
    }
    /// The secret itself. Call sites are the key derivations in this crate and nothing that prints.
    pub fn expose(&self) -> &str {
        &self.0
    }
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}

impl From<&str> for Secret {
    fn from(value: &str) -> Self {
        Self(value.to_owned())
    }
}

impl From<String> for Secret {
    fn from(value: String) -> Self {
        Self(value)
    }
}

impl fmt::Debug for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("******")
    }
}

impl fmt::Display for Secret {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("******")
    }
}

/// One cloud account's key pair, plus the session token of temporary (STS) credentials.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Credentials {
    pub access_key_id: String,
    pub secret: Secret,
    /// Temporary-credential token: sent as `X-TC-Token`, `x-acs-security-token` or
    /// `x-jdcloud-security-token`. `None` for long-lived keys.
    pub security_token: Option<Secret>,
}

impl Credentials {
    pub fn new(access_key_id: impl Into<String>, secret: impl Into<Secret>) -> Self {
        Self { access_key_id: access_key_id.into(), secret: secret.into(), security_token: None }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_and_display_hide_the_secret() {
        let c = Credentials {
            access_key_id: "AKIDexample".into(),
            secret: Secret::new("very-secret-value"),
            security_token: Some(Secret::new("token-value")),
        };
        let debug = format!("{c:?}");
        assert!(debug.contains("AKIDexample"), "{debug}");
        assert!(debug.contains("******"), "{debug}");
        assert!(!debug.contains("very-secret-value"), "{debug}");
        assert!(!debug.contains("token-value"), "{debug}");
        assert_eq!(format!("{}", c.secret), "******");
        assert_eq!(format!("{:#?}", c.secret), "******");
        assert_eq!(c.secret.expose(), "very-secret-value");
    }
}
