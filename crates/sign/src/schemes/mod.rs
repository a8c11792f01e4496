//! One module per scheme. Each exposes `stages(...)`: the canonical request, string-to-sign and
//! signature of a request *as it is on the wire*. `sign` and `verify` both call these and nothing
//! else to compute a signature.

pub(crate) mod acs3;
pub(crate) mod jdcloud;
pub(crate) mod rpc;
pub(crate) mod tc3;
