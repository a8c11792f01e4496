//! Constructors for [`CloudError`], so every client builds its failures the same way and no client spells
//! out the seven fields: the cloud's code, message and request id go in, the provider and action say
//! which call failed, and gpuctl's own codes (`sign`, `bad-response`, `no-instance-id`, `http-*`) are
//! written once, here (and `gpuctl-unsupported`, a call a client does not make).

use std::time::Duration;

use crate::cloud::{CloudError, Created, ErrorKind};
use crate::json::FieldError;
use crate::provider::Provider;

impl CloudError {
    /// A failure with the cloud's (or gpuctl's) code and message, no request id, no retry hint.
    pub fn new(
        provider: Provider,
        action: &str,
        kind: ErrorKind,
        code: impl Into<String>,
        message: impl Into<String>,
    ) -> CloudError {
        CloudError {
            provider,
            action: action.into(),
            kind,
            code: code.into(),
            message: message.into(),
            request_id: None,
            retry_after: None,
        }
    }

    /// A call this client does not make (yet): `gpuctl-unsupported`, never retried.
    pub fn unsupported(provider: Provider, action: &str, message: impl Into<String>) -> CloudError {
        CloudError::new(provider, action, ErrorKind::Invalid, "gpuctl-unsupported", message)
    }

    /// The request id the cloud gave the failed call (it is what its support asks for).
    pub fn with_request_id(mut self, request_id: Option<String>) -> CloudError {
        self.request_id = request_id;
        self
    }

    /// How long the cloud asked us to wait before trying again.
    pub fn with_retry_after(mut self, retry_after: Option<Duration>) -> CloudError {
        self.retry_after = retry_after;
        self
    }

    /// No answer came (refused, reset, timed out): retried with the same client token.
    pub fn transport(provider: Provider, action: &str, code: &str, message: String) -> CloudError {
        CloudError::new(provider, action, ErrorKind::Transient, code, message)
    }

    /// The request could not be signed (missing key, bad input). The signer's errors carry no secret.
    pub fn sign(provider: Provider, action: &str, e: &gpuctl_sign::SignError) -> CloudError {
        CloudError::new(provider, action, ErrorKind::Auth, "sign", e.to_string())
    }

    /// An answer gpuctl cannot read (not JSON): transient, as a gateway's garbled page usually is.
    pub fn bad_response(provider: Provider, action: &str, message: String) -> CloudError {
        CloudError::new(provider, action, ErrorKind::Transient, "bad-response", message)
    }

    /// A create that answered success without naming the instance: transient, so the engine asks again
    /// with the same client token and the cloud names the instance it made.
    pub fn missing_id(
        provider: Provider,
        action: &str,
        field: &FieldError,
        request_id: Option<String>,
    ) -> CloudError {
        CloudError::new(
            provider,
            action,
            ErrorKind::Transient,
            "no-instance-id",
            format!("{action} answered without an instance id ({field})"),
        )
        .with_request_id(request_id)
    }

    /// A dry run that would have succeeded: the clouds answer it with an error of this `code` (Tencent
    /// `DryRunOperation`, Alibaba `DryRunOperation`). Any other error, or any error of a real run, stays one.
    pub fn dry_run_passed(self, dry_run: bool, code: &str) -> Result<Created, CloudError> {
        if dry_run && self.code == code {
            return Ok(Created { instance_id: String::new(), request_id: self.request_id });
        }
        Err(self)
    }

    /// A describe of one resource by id that listed nothing: the resource is gone (or never was).
    pub fn not_listed(
        provider: Provider,
        action: &str,
        code: &str,
        what: String,
        request_id: Option<String>,
    ) -> CloudError {
        CloudError::new(provider, action, ErrorKind::NotFound, code, format!("{what} is not listed"))
            .with_request_id(request_id)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn constructors_fill_every_field() {
        let e =
            CloudError::new(Provider::Tencent, "RunInstances", ErrorKind::Quota, "LimitExceeded", "too many")
                .with_request_id(Some("r-1".into()))
                .with_retry_after(Some(Duration::from_secs(2)));
        assert_eq!(
            e,
            CloudError {
                provider: Provider::Tencent,
                action: "RunInstances".into(),
                kind: ErrorKind::Quota,
                code: "LimitExceeded".into(),
                message: "too many".into(),
                request_id: Some("r-1".into()),
                retry_after: Some(Duration::from_secs(2)),
            }
        );
        assert_eq!(
            e.to_string(),
            "tencent RunInstances failed (quota): LimitExceeded: too many (request id r-1)"
        );
    }

    #[test]
    fn gpuctls_own_codes() {
        let missing =
            crate::json::Field::root("Response", &serde_json::Value::Null).get("InstanceIdSet").at(0);
        let e = CloudError::missing_id(
            Provider::Alibaba,
            "RunInstances",
            &missing.text_required().unwrap_err(),
            Some("r".into()),
        );
        assert_eq!((e.kind, e.code.as_str()), (ErrorKind::Transient, "no-instance-id"));
        assert_eq!(
            e.message,
            "RunInstances answered without an instance id (`Response.InstanceIdSet[0]` is missing)"
        );
        assert_eq!(e.request_id.as_deref(), Some("r"));
        let e = CloudError::not_listed(
            Provider::JdCloud,
            "describeSnapshots",
            "NOT_FOUND",
            "snapshot s-1".into(),
            None,
        );
        assert_eq!((e.kind, e.message.as_str()), (ErrorKind::NotFound, "snapshot s-1 is not listed"));
        let dry =
            CloudError::new(Provider::Tencent, "RunInstances", ErrorKind::Invalid, "DryRunOperation", "ok")
                .with_request_id(Some("r-2".into()));
        assert_eq!(
            dry.clone().dry_run_passed(true, "DryRunOperation").unwrap(),
            Created { instance_id: String::new(), request_id: Some("r-2".into()) }
        );
        assert_eq!(dry.clone().dry_run_passed(false, "DryRunOperation").unwrap_err(), dry);
        assert_eq!(dry.clone().dry_run_passed(true, "Other").unwrap_err(), dry);
        assert!(CloudError::transport(Provider::Tencent, "a", "http-timeout", "t".into()).kind.retryable());
        assert!(CloudError::bad_response(Provider::Tencent, "a", "m".into()).kind.retryable());
    }
}
