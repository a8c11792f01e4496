//! CVM's instance metadata service as a program on the instance sees it (the sim serves it at
//! `/_metadata/tencent/<instance-id>/latest/...`, see gpuctl-sim), and spot reclaims.
//!
//! Paths and answers:
//! - `/latest/meta-data/instance-id`, `/latest/meta-data/placement/region`, `…/placement/zone`: text.
//! - `/latest/meta-data/spot/termination-time`: `2018-08-18 12:05:33` (the reclaim time, UTC+8),
//!   **404** when the instance is not marked for reclaim
//!   (https://www.tencentcloud.com/document/product/213/32487, docs/research/cost-control.md §3).
//! - `/latest/meta-data/cam/security-credentials/`: the role name; `…/<role>`: JSON
//!   `{TmpSecretId, TmpSecretKey, ExpiredTime (unix s), Expiration, Token, Code: "Success"}` — the
//!   shape tencentcloud-sdk-python-common 3.1.195 `tencentcloud/common/credential.py`
//!   `CVMRoleCredential.update_credential` reads. 404 when the instance has no `CamRoleName`.

use gpuctl_simkit::{SimCtx, SimRequest, SimResponse};
use jiff::{tz::TimeZone, SignedDuration, Timestamp};
use serde_json::json;

use gpuctl_simkit::roles::{RoleRefusal, RoleSession};

use super::state::State;
use super::{TcError, PROVIDER};
use crate::api::charge;

/// The notice a reclaimed spot instance gets. Assumption: Tencent's page on spot notices gives no
/// lead time (docs/research/cost-control.md §3, "not found"); two minutes, the common figure.
pub(crate) const DEFAULT_NOTICE: SignedDuration = SignedDuration::from_secs(120);

/// `POST /_sim/reclaim` for Tencent: only a running SPOTPAID instance is reclaimed.
pub(crate) fn reclaim(
    st: &mut State,
    id: &str,
    notice: Option<SignedDuration>,
    ctx: &SimCtx,
) -> Result<Option<Timestamp>, String> {
    let Some(i) = st.instances.iter_mut().find(|i| i.id == id) else { return Ok(None) };
    if i.charge_type != charge::SPOTPAID {
        return Err(format!(
            "{id} is {}, not a spot instance (SPOTPAID): only spot instances are reclaimed",
            i.charge_type
        ));
    }
    if i.terminating_since.is_some() || i.shutdown {
        return Err(format!("{id} is already terminating"));
    }
    Ok(Some(gpuctl_simkit::reclaim::mark(&mut i.reclaim_at, ctx.now(), notice, DEFAULT_NOTICE)))
}

pub(crate) fn serve(st: &State, id: &str, path: &str, req: &SimRequest, ctx: &SimCtx) -> Option<SimResponse> {
    let i = st.instances.iter().find(|i| i.id == id && i.terminating_since.is_none() && !i.shutdown)?;
    let not_found = || SimResponse::text(404, "404 Not Found");
    if req.method != "GET" {
        return Some(SimResponse::text(405, "405 Method Not Allowed"));
    }
    let text = |t: &str| Some(SimResponse::text(200, t));
    match path.trim_start_matches("/latest/meta-data/") {
        "instance-id" => text(&i.id),
        "placement/region" => text(&i.region),
        "placement/zone" => text(&i.zone),
        "spot/termination-time" => match i.reclaim_at {
            Some(at) => text(
                &at.to_zoned(TimeZone::fixed(jiff::tz::offset(8))).strftime("%Y-%m-%d %H:%M:%S").to_string(),
            ),
            None => Some(not_found()),
        },
        "cam/security-credentials" | "cam/security-credentials/" => match &i.cam_role {
            Some(role) => text(role),
            None => Some(not_found()),
        },
        other => match (other.strip_prefix("cam/security-credentials/"), &i.cam_role) {
            (Some(asked), Some(role)) if asked == role => {
                // Tencent's temporary SecretIds start with AKID like the long-lived ones.
                let s = ctx.issue_role_credentials(PROVIDER, &i.id, role, "AKID");
                Some(SimResponse::json(
                    200,
                    &json!({
                        "TmpSecretId": s.access_key,
                        "TmpSecretKey": s.secret.expose(),
                        "ExpiredTime": s.expires.as_second(),
                        "Expiration": s.expires.strftime("%Y-%m-%dT%H:%M:%SZ").to_string(),
                        "Token": s.token.expose(),
                        "Code": "Success",
                    }),
                ))
            }
            _ => Some(not_found()),
        },
    }
}

/// What the node agent's role may do: the policy docs/idle-agent.md gives the user to attach to the
/// role (keep the two in step). Stop and terminate are scoped to the calling instance (the policy's
/// resource is `qcs::cvm:<region>:uin/<uin>:instance/<instance-id>`); reading monitoring data is not
/// (the monitor API takes any instance's dimensions, and the policy grants `*`).
pub(crate) const ROLE_ACTIONS: &[&str] = &["StopInstances", "TerminateInstances", "GetMonitorData"];
pub(crate) const ROLE_SCOPED: &[&str] = &["StopInstances", "TerminateInstances"];

/// A request signed with instance-role credentials: it must carry the session's token
/// (`X-TC-Token`) and stay within the role's policy. Codes from tencentcloud-sdk-python-cvm 3.1.178
/// cvm/v20170312/errorcodes.py: `UnauthorizedOperation.InvalidToken` ("请确认Token是否有效") and
/// `UnauthorizedOperation.PermissionDenied` ("无权操作指定的资源，请正确配置CAM策略").
pub(crate) fn admit(
    session: &RoleSession,
    req: &SimRequest,
    ctx: &SimCtx,
    action: &str,
    params: &serde_json::Value,
) -> Result<(), TcError> {
    let resources: Vec<String> = params
        .get("InstanceIds")
        .and_then(|v| v.as_array())
        .map(|a| a.iter().filter_map(|x| x.as_str().map(String::from)).collect())
        .unwrap_or_default();
    session.admit(req.header("x-tc-token"), ctx.now(), action, ROLE_ACTIONS, ROLE_SCOPED, &resources).map_err(
        |r| match r {
            RoleRefusal::BadToken => TcError::new(
                "UnauthorizedOperation.InvalidToken",
                "The temporary credentials' token is missing or does not match (X-TC-Token).",
            ),
            RoleRefusal::Expired => {
                TcError::new("UnauthorizedOperation.InvalidToken", "The temporary credentials have expired.")
            }
            RoleRefusal::ActionNotAllowed(a) => TcError::new(
                "UnauthorizedOperation.PermissionDenied",
                format!("The role `{}` is not allowed to call {a}.", session.role),
            ),
            RoleRefusal::ResourceNotAllowed(r) => TcError::new(
                "UnauthorizedOperation.PermissionDenied",
                format!(
                    "The role `{}` may call {action} only on instance {}, not `{r}`.",
                    session.role, session.instance_id
                ),
            ),
        },
    )
}
