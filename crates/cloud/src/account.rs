//! One cloud account as a client holds it: the keys, where the cloud is reached (an override from
//! `--endpoint` / `GPUCTL_<CLOUD>_ENDPOINT`, else the cloud's own hosts) and the shared transport.
//! Written once so every client's `Debug` is the same and prints no secret: the access key id and the
//! endpoint, nothing the signer keeps.

use std::fmt;

use gpuctl_sign::Credentials;

use crate::http::{Endpoint, Http};

pub struct Account {
    pub creds: Credentials,
    /// `None`: each call goes to the cloud's own host for its service and region.
    pub endpoint: Option<Endpoint>,
    pub http: Http,
}

impl Account {
    pub fn new(creds: Credentials, endpoint: Option<Endpoint>, http: Http) -> Account {
        Account { creds, endpoint, http }
    }

    /// Where a call goes: the override when there is one (it serves every service and region, as the
    /// local cloud does), else `https://` + the cloud's host for this call.
    pub fn endpoint_or(&self, host: impl FnOnce() -> String) -> Endpoint {
        self.endpoint.clone().unwrap_or_else(|| Endpoint::https(host()))
    }
}

impl fmt::Debug for Account {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Account")
            .field("access_key_id", &self.creds.access_key_id)
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_shows_the_key_id_never_the_secret() {
        let mut creds = Credentials::new("AKIDexample", "s3cr3t-value");
        creds.security_token = Some("t0ken-value".into());
        let a = Account::new(
            creds,
            Some(Endpoint::https("cvm.example")),
            Http::new(std::time::Duration::from_secs(1)).unwrap(),
        );
        let d = format!("{a:?}");
        assert!(d.contains("AKIDexample") && d.contains("cvm.example"), "{d}");
        assert!(!d.contains("s3cr3t") && !d.contains("t0ken"), "{d}");
        assert_eq!(a.endpoint_or(|| "other".into()).host, "cvm.example");
        let a = Account { endpoint: None, ..a };
        assert_eq!(a.endpoint_or(|| "api.cn-x.example".into()).url("/"), "https://api.cn-x.example/");
    }
}
