//! JD renewal: setRenewal, a prepaid VM's automatic renewal on or off (jdcloud_sdk 1.6.354
//! services/renewal/apis/SetRenewalRequest.py, models/SetRenewalParam.py). What it changes shows in
//! `/_sim/state` (`autoRenew`) and in what `tick` does at the term's end; the vm Instance model has no
//! renewal field.

use serde_json::json;

use super::{get, invalid, not_found, required, Answer, Call};
use crate::emulator::state::JdState;

pub fn set_renewal(c: &Call, st: &mut JdState) -> Answer {
    let p = get(c.p, "setRenewalParam").cloned().ok_or_else(|| invalid("setRenewalParam is required"))?;
    // appCode, serviceCode, instanceIds and autoRenewStatus are required; timeSpan, timeUnit and
    // allAutoPay optional (SetRenewalParam.py).
    required(&p, "appCode")?;
    let service = required(&p, "serviceCode")?;
    if service != "vm" {
        return Err(invalid(format!("serviceCode {service} is not a product the local cloud serves (vm)")));
    }
    let renew = match required(&p, "autoRenewStatus")?.as_str() {
        "OPEN" | "MODIFY" => true,
        "CLOSE" => false,
        other => {
            return Err(invalid(format!("autoRenewStatus {other} is not one of OPEN, CLOSE, MODIFY")));
        }
    };
    if let Some(unit) = super::text(&p, "timeUnit") {
        if unit != "MONTH" && unit != "YEAR" {
            return Err(invalid(format!("timeUnit {unit} is not one of MONTH, YEAR")));
        }
    }
    // "资源ID列表,英文逗号分隔": one string of comma-separated ids.
    let ids: Vec<String> = required(&p, "instanceIds")?
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(String::from)
        .collect();
    if ids.is_empty() {
        return Err(invalid("instanceIds names no instance"));
    }
    for id in &ids {
        let i =
            st.instances.get(id).filter(|i| i.region == c.region).ok_or_else(|| not_found("instance", id))?;
        if i.charge_mode != "prepaid_by_duration" {
            return Err(invalid(format!("instance {id} is not prepaid_by_duration; it has no renewal")));
        }
    }
    for id in &ids {
        if let Some(i) = st.instances.get_mut(id) {
            i.auto_renew = renew;
        }
    }
    Ok(json!({}))
}
