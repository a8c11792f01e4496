//! Billing: the price JD quotes for one instance (jdcloud_sdk `services/billing`, calculateTotalPrice);
//! the stock of a type is VM's describeInstanceTypes.

use gpuctl_cloud::cloud::{CloudError, CreateRequest, Quote, Stock};
use gpuctl_cloud::services::Prices;
use gpuctl_cloud::BillingMode;
use serde_json::json;

use super::{vm, Call, Client};

impl Prices for Client {
    async fn quote(&self, req: &CreateRequest) -> Result<Quote, CloudError> {
        // billingType 1: by configuration (hourly); 3: subscription with timeUnit 3 month, 4 year.
        let (billing, span, unit) = match req.billing {
            BillingMode::Hourly | BillingMode::Spot => (1, 1, 0),
            BillingMode::Weekly | BillingMode::Monthly => match crate::api::charge_term(req.term) {
                ("year", n) => (3, n, 4),
                (_, n) => (3, n, 3),
            },
            BillingMode::Year1 => (3, 1, 4),
            BillingMode::Year3 => (3, 3, 4),
        };
        let order = json!({
            "serviceCode": "vm", "region": req.region, "az": req.zone, "billingType": billing, "timeSpan": span, "timeUnit": unit, "count": 1,
            // A Formula is one billing item: `key` its alias, `value` the quantity (a number), `number` how
            // many (jdcloud_sdk 1.6.x services/billing/models/Formula.py). A VM's billing item is its
            // instance type, bought once.
            "formula": [{ "key": req.instance_type, "value": 1, "number": 1 }],
        });
        let body = json!({ "regionId": req.region, "cmd": 1, "orderList": [order], "packageCount": 1 });
        let call = Call {
            service: "billing",
            version: crate::api::API_VERSION,
            action: "calculateTotalPrice",
            method: "POST",
            path: "calculateTotalPrice",
        };
        let a = self.call(call, &req.region, vec![], Some(body)).await?;
        Ok(Quote {
            // `discountedTotalPrice` is what is charged; `totalPrice` is the list price before the account's
            // discount (jdcloud_sdk 1.6.x services/billing/models/OrderPrice.py).
            cny: a.get("discountedTotalPrice").f64().unwrap_or(0.0),
            per_hour: req.billing.is_per_hour(),
            request_id: a.request_id,
        })
    }

    async fn in_stock(&self, region: &str, zone: &str, instance_type: &str) -> Result<Stock, CloudError> {
        vm::stock(self, region, zone, instance_type).await.map(Some)
    }
}
