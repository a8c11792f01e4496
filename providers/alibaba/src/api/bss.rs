//! BSS OpenAPI (API 2017-12-14, RPC style): the account's bill by instance (issue 15), as both sides
//! name it. Sources: alibabacloud_bssopenapi20171214 5.1.2 (`client.py`: `version = '2017-12-14'`, the
//! endpoint map `'cn-hangzhou': 'business.aliyuncs.com'`; `models/_describe_instance_bill_request.py`,
//! `models/_describe_instance_bill_response_body.py`). The bill is the account's: no request model
//! field names a region, and the mainland regions share one host.

/// `x-acs-version` of BSS OpenAPI (`client.py` `describe_instance_bill_with_options`).
pub const BSS_API_VERSION: &str = "2017-12-14";
pub const DESCRIBE_INSTANCE_BILL: &str = "DescribeInstanceBill";

/// The host of the Chinese mainland account's bill (`client.py` `_endpoint_map`: cn-hangzhou and
/// cn-shanghai → `business.aliyuncs.com`; the international site's regions → `business.ap-southeast-1…`).
pub const BSS_HOST: &str = "business.aliyuncs.com";

/// `BillingCycle`: "The billing cycle in the YYYY-MM format. Only the last 18 billing cycles are supported."
pub const CYCLES_BACK: i32 = 18;
/// `MaxResults`: "Default value: 20. Maximum value: 300."
pub const PAGE_DEFAULT: usize = 20;
pub const PAGE_MAX: usize = 300;
/// `Granularity`: "MONTHLY: monthly … DAILY: daily … If you select DAILY, you must specify BillingDate."
pub const MONTHLY: &str = "MONTHLY";
pub const DAILY: &str = "DAILY";
/// `SubscriptionType` (request and item): "Subscription: subscription. PayAsYouGo: pay-as-you-go."
pub const SUBSCRIPTION: &str = "Subscription";
pub const PAY_AS_YOU_GO: &str = "PayAsYouGo";
/// `Item`: "SubscriptionOrder: subscription order, PayAsYouGoBill: pay-as-you-go bill, …".
pub const ITEM_ORDER: &str = "SubscriptionOrder";
pub const ITEM_PAYG: &str = "PayAsYouGoBill";

/// Amounts (`PretaxGrossAmount`, `PretaxAmount`, typed `float` in the response model) at two decimals,
/// the cent. *Assumption:* the model states no precision; the console's bills are in cents.
pub const AMOUNT_DECIMALS: u32 = 2;

/// `ServicePeriod` ("The service duration", a string) and `ServicePeriodUnit` ("The unit of the service
/// duration"). *Assumption:* the model names neither the unit's spellings nor the duration's form; the
/// local cloud writes whole seconds with the unit `秒`, and the client reads 秒/Second and 小时/Hour,
/// leaving any other unit unknown.
pub const SERVICE_PERIOD_SECONDS: &str = "秒";

/// The seconds a `ServicePeriod` in `unit` states; `None` for a unit or number not understood.
pub fn service_seconds(period: &str, unit: &str) -> Option<u64> {
    let n: f64 = period.trim().parse().ok().filter(|n: &f64| n.is_finite() && *n >= 0.0)?;
    let secs = match unit.trim() {
        "秒" | "Second" | "Seconds" | "second" | "seconds" => n,
        "小时" | "Hour" | "Hours" | "hour" | "hours" => n * 3600.0,
        _ => return None,
    };
    Some(secs.round() as u64)
}
