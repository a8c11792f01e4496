//! Renewal: turning a prepaid VM's automatic renewal off (jdcloud_sdk 1.6.354
//! `services/renewal/apis/SetRenewalRequest.py`: `PUT /v2/regions/{regionId}/instances:autoRenewStatus`,
//! body `setRenewalParam`, models/SetRenewalParam.py). JD has no call that ends a term early
//! (`services/vm/apis/DeleteInstanceRequest.py`: only pay-as-you-go or *expired* prepaid VMs can be
//! deleted), so a release of an unexpired prepaid VM turns renewal off and the VM bills until it expires.

use gpuctl_cloud::cloud::CloudError;
use serde_json::json;

use super::{Call, Client};

/// The renewal API's version: its request classes are built with `version="v2"`.
const VERSION: &str = "v2";

/// `appCode` is the business line: `jcloud` for JD Cloud's own products, as JD's renewal API examples
/// send it (SetRenewalParam.py documents the field, not its values); `serviceCode` is the product, `vm`.
const APP_CODE: &str = "jcloud";
const SERVICE_CODE: &str = "vm";

impl Client {
    pub(super) async fn set_renewal_off(&self, region: &str, instance_id: &str) -> Result<(), CloudError> {
        let body = json!({
            "regionId": region,
            "setRenewalParam": {
                "appCode": APP_CODE,
                "serviceCode": SERVICE_CODE,
                // A comma-separated list of resource ids (SetRenewalParam.py `instanceIds`).
                "instanceIds": instance_id,
                // OPEN turns it on, CLOSE off, MODIFY changes its period.
                "autoRenewStatus": "CLOSE",
            },
        });
        let call = Call {
            service: "renewal",
            version: VERSION,
            action: "setRenewal",
            method: "PUT",
            path: "instances:autoRenewStatus",
        };
        self.call(call, region, vec![], Some(body)).await.map(drop)
    }
}
