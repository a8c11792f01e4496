//! Reading ECS request parameters over simkit's reader: every parameter arrives flattened in the
//! query (or a form body) and simkit unflattens it to JSON and reads it with ECS's errors (see
//! `error.rs`'s `ParamErrors`: bools as `True`/`true`, numbers as strings, an empty value as unset).
//! What is ECS's own lives here: lists sent as JSON strings (`InstanceIds='["i-a"]'`), `Tag.N.Key`
//! pairs, and which parameters an honest ClientToken retry may change.

use gpuctl_simkit::page::Window;
use gpuctl_simkit::params::as_string;
use serde_json::Value;

use super::error::EcsError;

/// The parameters of one call (or a nested struct of them), read with ECS's errors.
pub type Params<'a> = gpuctl_simkit::Params<'a, EcsError>;

/// What differs between honest retries of one ClientToken request, so is left out of its
/// fingerprint: the token, DryRun and the legacy-signature bookkeeping.
pub const TOKEN_VARYING: &[&str] = &[
    "ClientToken",
    "DryRun",
    "Action",
    "Version",
    "Format",
    "AccessKeyId",
    "Signature",
    "SignatureMethod",
    "SignatureVersion",
    "SignatureNonce",
    "Timestamp",
    "SecurityToken",
];

/// ECS's own parameter shapes.
pub trait EcsParams {
    /// A list sent as a JSON string: `InstanceIds='["i-a","i-b"]'`.
    fn json_list(&self, name: &str) -> Result<Option<Vec<String>>, EcsError>;

    /// `Tag.N.Key` / `Tag.N.Value` pairs, in N order.
    fn tags(&self, name: &str) -> Vec<(String, String)>;

    /// Which slice of a listing one Describe* answer carries: by `NextToken`/`MaxResults` when the
    /// caller sends either (the request models' current paging), else by the deprecated
    /// `PageNumber`/`PageSize` that older SDK callers still send (sizes clamped into `1..=max`).
    /// `max_results` is the action's MaxResults ceiling; below 10 reads as 10, above it as it (the
    /// models' docs, e.g. alibabacloud_ecs20140526 7.11.8 `models/_describe_instances_request.py`
    /// `max_results`: "less than 10, the default value is 10 ... greater than 100, ... 100").
    fn listing(&self, max_results: usize, max_page_size: i64) -> Result<Listing, EcsError>;
}

/// One page of a listing, and the `NextToken` that continues it.
#[derive(Debug, Clone, Copy)]
pub struct Listing {
    skip: usize,
    take: usize,
}

/// Our NextToken is the offset of the next item behind a prefix: opaque to a caller (ECS's tokens are
/// too) and checkable, so a token that is not one of ours is refused rather than read as page 1.
const TOKEN_PREFIX: &str = "gpuctl-sim-next-";

impl Listing {
    /// (how many matched in all, the items of this page).
    pub fn apply<T>(&self, items: impl IntoIterator<Item = T>) -> (usize, Vec<T>) {
        Window::offset_limit(self.skip, self.take).apply(items)
    }

    /// The token for the page after this one, or "" when this page reaches the end (what ECS says).
    pub fn next_token(&self, total: usize) -> String {
        let next = self.skip.saturating_add(self.take);
        if next < total {
            format!("{TOKEN_PREFIX}{next}")
        } else {
            String::new()
        }
    }

    /// The page number and size a PageNumber caller is echoed back.
    pub fn number(&self) -> usize {
        self.skip / self.take.max(1) + 1
    }

    pub fn size(&self) -> usize {
        self.take
    }
}

fn token_offset(token: &str) -> Option<usize> {
    token.strip_prefix(TOKEN_PREFIX)?.parse().ok()
}

impl EcsParams for Params<'_> {
    fn json_list(&self, name: &str) -> Result<Option<Vec<String>>, EcsError> {
        let Some(raw) = self.text(name) else { return Ok(None) };
        let parsed: Result<Vec<Value>, _> = serde_json::from_str(&raw);
        match parsed {
            Ok(items) => Ok(Some(items.iter().filter_map(as_string).collect())),
            Err(_) => Err(EcsError::new(
                400,
                &format!("Invalid{name}.Malformed"),
                format!("The specified parameter \"{name}\" is not valid: expected a JSON array such as [\"a\",\"b\"]."),
            )),
        }
    }

    fn listing(&self, max_results: usize, max_page_size: i64) -> Result<Listing, EcsError> {
        let token = self.text("NextToken");
        let max = self.opt_i64("MaxResults")?;
        if token.is_none() && max.is_none() {
            let w = self.page_number(("PageNumber", "PageSize"), 10, 1..=max_page_size)?;
            let skip = (w.number() - 1).saturating_mul(w.size());
            return Ok(Listing { skip, take: w.size() });
        }
        let take = max.unwrap_or(10).clamp(10, max_results as i64) as usize;
        let skip = match token {
            None => 0,
            Some(t) => token_offset(&t).ok_or_else(|| {
                EcsError::new(
                    400,
                    "InvalidParameter.NextToken",
                    "The specified parameter \"NextToken\" is not valid: pass the NextToken of the previous answer.",
                )
            })?,
        };
        Ok(Listing { skip, take })
    }

    fn tags(&self, name: &str) -> Vec<(String, String)> {
        self.items(name)
            .iter()
            .filter_map(|t| Some((t.raw_text("Key")?, t.raw_text("Value").unwrap_or_default())))
            .collect()
    }
}
