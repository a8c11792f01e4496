//! ECS's instance metadata service as a program on the instance sees it (the sim serves it at
//! `/_metadata/alibaba/<instance-id>/latest/...`, see gpuctl-sim), and spot reclaims.
//!
//! Paths and answers:
//! - `PUT /latest/api/token` with `X-aliyun-ecs-metadata-token-ttl-seconds` (1–21600): a token for
//!   the hardened mode; a request that then sends `X-aliyun-ecs-metadata-token` must send a live one
//!   (alibabacloud-credentials 1.0.12 provider/ecs_ram_role.py sends both; the plain mode without a
//!   token is served too, as ECS does unless hardened mode is enforced).
//! - `/latest/meta-data/instance-id`, `…/region-id`, `…/zone-id`: text.
//! - `/latest/meta-data/instance/spot/termination-time`: `2015-01-05T18:02:00Z` (UTC), **404** when
//!   the instance is not scheduled for release (the ECS preemptible-instance best practices page,
//!   docs/research/cost-control.md §3).
//! - `/latest/meta-data/ram/security-credentials/`: the role name; `…/<role>`: JSON `{AccessKeyId,
//!   AccessKeySecret, SecurityToken, Expiration (%Y-%m-%dT%H:%M:%SZ), LastUpdated, Code: "Success"}`,
//!   what ecs_ram_role.py `_build_refresh_result` reads. 404 when the instance has no `RamRoleName`.

use gpuctl_simkit::{SimCtx, SimRequest, SimResponse};
use jiff::{SignedDuration, Timestamp};
use serde_json::json;

use gpuctl_simkit::roles::{RoleRefusal, RoleSession};

use super::error::EcsError;
use super::state::EcsState;
use super::PROVIDER;

/// "Alibaba Cloud sends you a notification through an ECS system event 5 minutes before the
/// instance is released" (alibabacloud-ecs20140526 7.11.8 models/_run_instances_request.py, SpotDuration).
pub(crate) const DEFAULT_NOTICE: SignedDuration = SignedDuration::from_secs(300);

const TOKEN_TTL_HEADER: &str = "x-aliyun-ecs-metadata-token-ttl-seconds";
const TOKEN_HEADER: &str = "x-aliyun-ecs-metadata-token";

/// `POST /_sim/reclaim` for Alibaba: only a spot instance (`SpotStrategy` other than `NoSpot`).
pub(crate) fn reclaim(
    st: &mut EcsState,
    id: &str,
    notice: Option<SignedDuration>,
    ctx: &SimCtx,
) -> Result<Option<Timestamp>, String> {
    let Some(i) = st.instances.get_mut(id) else { return Ok(None) };
    if i.spot_strategy == "NoSpot" {
        return Err(format!("{id} has SpotStrategy NoSpot: only spot instances are reclaimed"));
    }
    Ok(Some(gpuctl_simkit::reclaim::mark(&mut i.reclaim_at, ctx.now(), notice, DEFAULT_NOTICE)))
}

pub(crate) fn serve(
    st: &EcsState,
    id: &str,
    path: &str,
    req: &SimRequest,
    ctx: &SimCtx,
) -> Option<SimResponse> {
    let i = st.instances.get(id)?;
    let not_found = || Some(SimResponse::text(404, "404 - Not Found"));
    if req.method == "PUT" && path == "/latest/api/token" {
        let ttl = req.header(TOKEN_TTL_HEADER).and_then(|t| t.trim().parse::<i64>().ok());
        return Some(match ttl {
            Some(s @ 1..=21600) => {
                SimResponse::text(200, &ctx.issue_metadata_token(PROVIDER, id, SignedDuration::from_secs(s)))
            }
            _ => SimResponse::text(
                400,
                "400 - Bad Request: X-aliyun-ecs-metadata-token-ttl-seconds must be 1..21600",
            ),
        });
    }
    if req.method != "GET" {
        return Some(SimResponse::text(405, "405 - Method Not Allowed"));
    }
    if let Some(token) = req.header(TOKEN_HEADER) {
        if !ctx.metadata_token_ok(PROVIDER, id, token) {
            return Some(SimResponse::text(401, "401 - Unauthorized"));
        }
    }
    let text = |t: &str| Some(SimResponse::text(200, t));
    match path.trim_start_matches("/latest/meta-data/") {
        "instance-id" => text(&i.id),
        "region-id" => text(&i.region),
        "zone-id" => text(&i.zone),
        "instance/spot/termination-time" => match i.reclaim_at {
            Some(at) => text(&at.strftime("%Y-%m-%dT%H:%M:%SZ").to_string()),
            None => not_found(),
        },
        "ram/security-credentials" | "ram/security-credentials/" => match &i.ram_role {
            Some(role) => text(role),
            None => not_found(),
        },
        other => match (other.strip_prefix("ram/security-credentials/"), &i.ram_role) {
            (Some(asked), Some(role)) if asked == role => {
                // STS temporary AccessKeyIds start with `STS.`.
                let s = ctx.issue_role_credentials(PROVIDER, &i.id, role, "STS.");
                let fmt = |t: Timestamp| t.strftime("%Y-%m-%dT%H:%M:%SZ").to_string();
                Some(SimResponse::json(
                    200,
                    &json!({
                        "AccessKeyId": s.access_key,
                        "AccessKeySecret": s.secret.expose(),
                        "SecurityToken": s.token.expose(),
                        "Expiration": fmt(s.expires),
                        "LastUpdated": fmt(s.issued),
                        "Code": "Success",
                    }),
                ))
            }
            _ => not_found(),
        },
    }
}

/// What the node agent's role may do: the RAM policy docs/idle-agent.md gives the user to attach to
/// the role (keep the two in step). Stop and delete are scoped to the calling instance (the policy's
/// resource is `acs:ecs:<region>:<account>:instance/<instance-id>`); reading CloudMonitor data is not.
pub(crate) const ROLE_ACTIONS: &[&str] =
    &["StopInstance", "StopInstances", "DeleteInstance", "DeleteInstances", "DescribeMetricList"];
pub(crate) const ROLE_SCOPED: &[&str] =
    &["StopInstance", "StopInstances", "DeleteInstance", "DeleteInstances"];

/// A request signed with instance-role (STS) credentials: it must carry the session's token (the
/// `SecurityToken` parameter, or `x-acs-security-token` under ACS3) and stay within the role's
/// policy. A refused permission is `Forbidden.RAM`, HTTP 403, "User not authorized to operate on the
/// specified resource, or this API doesn't support RAM." (https://www.alibabacloud.com/help/en/ecs/announcement-of-changes-to-the-authentication-mechanism-for-alibaba-cloud-ecs-query-type-apis,
/// read 2026-12-05). The token codes `InvalidSecurityToken.MismatchWithAccessKey` and
/// `InvalidSecurityToken.Expired` are assumptions: no definition found lists them.
pub(crate) fn admit(
    session: &RoleSession,
    req: &SimRequest,
    ctx: &SimCtx,
    action: &str,
    params: &serde_json::Value,
) -> Result<(), EcsError> {
    let token = req
        .header("x-acs-security-token")
        .map(str::to_string)
        .or_else(|| params.get("SecurityToken").and_then(|v| v.as_str()).map(str::to_string));
    let resources: Vec<String> = match params.get("InstanceId").or_else(|| params.get("InstanceIds")) {
        Some(serde_json::Value::String(s)) if s.starts_with('[') => {
            serde_json::from_str(s).unwrap_or_default()
        }
        Some(serde_json::Value::String(s)) => vec![s.clone()],
        Some(serde_json::Value::Array(a)) => a.iter().filter_map(|x| x.as_str().map(String::from)).collect(),
        _ => Vec::new(),
    };
    session.admit(token.as_deref(), ctx.now(), action, ROLE_ACTIONS, ROLE_SCOPED, &resources).map_err(|r| match r {
        RoleRefusal::BadToken => EcsError::new(
            400,
            "InvalidSecurityToken.MismatchWithAccessKey",
            "The security token is missing or does not belong to this AccessKeyId.",
        ),
        RoleRefusal::Expired => {
            EcsError::new(400, "InvalidSecurityToken.Expired", "The specified SecurityToken is expired.")
        }
        RoleRefusal::ActionNotAllowed(_) | RoleRefusal::ResourceNotAllowed(_) => EcsError::new(
            403,
            "Forbidden.RAM",
            format!(
                "User not authorized to operate on the specified resource, or this API doesn't support RAM. (role {} may call {action}? {})",
                session.role,
                match r {
                    RoleRefusal::ResourceNotAllowed(other) => format!("only on {}, not {other}", session.instance_id),
                    _ => "no".to_string(),
                }
            ),
        ),
    })
}
