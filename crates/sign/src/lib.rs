//! gpuctl-sign: request signing for Tencent Cloud (TC3-HMAC-SHA256), Alibaba Cloud
//! (ACS3-HMAC-SHA256, legacy RPC HMAC-SHA1) and JD Cloud (JDCLOUD3- and JDCLOUD2-HMAC-SHA256),
//! in both directions: `sign` for clients, `verify` for the local cloud's emulators.
//!
//! The signer is pure (clock and nonce are injected, no I/O); loading credentials from the
//! environment and the clouds' CLI files lives apart in `credentials`, and every read of a
//! user-given file goes through `file`'s bounded reads.

mod canonical;
pub mod credentials;
mod encode;
pub mod file;
mod request;
mod schemes;
mod secret;
mod sign;
mod time;
mod verify;

pub use request::{Algorithm, IncomingRequest, SignableRequest, Signed, SigningParams};
pub use secret::{Credentials, Secret};
pub use sign::{sign, SignError};
pub use verify::{verify, verify_explained, Explained, Verified, VerifyError, VerifyErrorKind};
