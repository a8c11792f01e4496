//! Billing: the price JD quotes for one instance (jdcloud_sdk `services/billing`, calculateTotalPrice).

use gpuctl_cloud::cloud::{CloudError, CreateRequest, Quote};
use gpuctl_cloud::BillingMode;
use serde_json::json;

use super::{Call, Client};

pub(super) async fn quote(c: &Client, req: &CreateRequest) -> Result<Quote, CloudError> {
    // billingType 1: by configuration (hourly); 3: subscription with timeUnit 3 month, 4 year.
    let (billing, span, unit) = match req.billing {
        BillingMode::Hourly | BillingMode::Spot => (1, 1, 0),
        BillingMode::Weekly | BillingMode::Monthly => (3, req.term, 3),
        BillingMode::Year1 => (3, 1, 4),
        BillingMode::Year3 => (3, 3, 4),
    };
    let order = json!({
        "serviceCode": "vm", "region": req.region, "az": req.zone, "billingType": billing, "timeSpan": span, "timeUnit": unit, "count": 1,
        "formula": [{ "key": "instanceType", "value": req.instance_type }],
    });
    let body = json!({ "regionId": req.region, "cmd": 1, "orderList": [order], "packageCount": 1 });
    let call = Call {
        service: "billing",
        action: "calculateTotalPrice",
        method: "POST",
        path: "calculateTotalPrice",
    };
    let a = c.call(call, &req.region, vec![], Some(body)).await?;
    Ok(Quote {
        cny: a.get("totalPrice").f64().unwrap_or(0.0),
        per_hour: req.billing.is_per_hour(),
        request_id: a.request_id,
    })
}
