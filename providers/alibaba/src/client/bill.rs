//! The cloud's bill lines (issue 15): BSS OpenAPI 2017-12-14 `DescribeInstanceBill` on
//! `business.aliyuncs.com` (alibabacloud_bssopenapi20171214 5.1.2 `models/_describe_instance_bill_request.py`:
//! `BillingCycle` YYYY-MM required, `Granularity` MONTHLY/DAILY, `InstanceID`, `MaxResults` "Maximum
//! value: 300", `NextToken` "An empty value indicates that all data has been read";
//! `_describe_instance_bill_response_body.py`: `Data.Items[]` with `InstanceID`, `PretaxGrossAmount`
//! "The original amount", `PretaxAmount` "The payable amount", `ServicePeriod` and its unit).
//!
//! One MONTHLY listing of the cycle, page after page until `NextToken` is empty. A MONTHLY item states
//! no span, only a duration (`ServicePeriod`): that is the line's `billed_seconds`. Amounts are JSON
//! numbers; their text is read as an exact decimal (never through a float sum), and one with more
//! decimals than an amount can have is refused as a bad answer, never rounded silently.

use gpuctl_cloud::cloud::{CloudError, ErrorKind};
use gpuctl_cloud::cost::{amount_of, Amount, BillLine, BillQuery};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::services::Bills;
use gpuctl_cloud::Provider;

use super::Client;
use crate::api::bss::{service_seconds, AMOUNT_DECIMALS, DESCRIBE_INSTANCE_BILL, MONTHLY, PAGE_MAX};

/// Pages are bounded: 300 lines a page, 10,000 pages is 3 million lines in a month.
const MAX_PAGES: usize = 10_000;

/// One page's request: the cycle, monthly, the one instance when one is asked for, the page's token.
pub(crate) fn request_params(q: &BillQuery, token: Option<&str>) -> Vec<(String, String)> {
    let mut p = vec![
        ("BillingCycle".to_string(), q.month.clone()),
        ("Granularity".to_string(), MONTHLY.to_string()),
        ("MaxResults".to_string(), PAGE_MAX.to_string()),
    ];
    // The request model's wire name is `InstanceID` (`to_map`: `result['InstanceID']`).
    if let [one] = q.resource_ids.as_slice() {
        p.push(("InstanceID".to_string(), one.clone()));
    }
    if let Some(t) = token.filter(|t| !t.is_empty()) {
        p.push(("NextToken".to_string(), t.to_string()));
    }
    p
}

/// One item as gpuctl's line. An item without an instance still counts (empty id, never dropped).
pub(crate) fn line_of(d: Field<'_>) -> Result<BillLine, CloudError> {
    let list = amount(&d, "PretaxGrossAmount")?;
    let billed = amount(&d, "PretaxAmount")?;
    Ok(BillLine {
        resource_id: d.get("InstanceID").text(),
        product: d.get("ProductCode").text(),
        region: d.get("Region").opt_text(),
        pay_mode: d.get("SubscriptionType").opt_text(),
        start: None,
        end: None,
        list_cny: Some(text(list)),
        billed_cny: text(billed),
        billed_seconds: service_seconds(&d.get("ServicePeriod").text(), &d.get("ServicePeriodUnit").text()),
    })
}

/// At the cent, as the bill writes it; with every digit the cloud gave where it gave more.
fn text(a: Amount) -> String {
    let cents = 10i128.pow(Amount::DECIMALS - AMOUNT_DECIMALS);
    a.text(if a.0 % cents == 0 { AMOUNT_DECIMALS } else { Amount::DECIMALS })
}

fn amount(d: &Field<'_>, name: &str) -> Result<Amount, CloudError> {
    amount_of(&d.get(name), Provider::Alibaba, DESCRIBE_INSTANCE_BILL)
}

impl Bills for Client {
    async fn bill_lines(&self, q: &BillQuery) -> Result<Vec<BillLine>, CloudError> {
        let mut lines = Vec::new();
        let mut token: Option<String> = None;
        for page in 0.. {
            if page == MAX_PAGES {
                return Err(CloudError::bad_response(
                    Provider::Alibaba,
                    DESCRIBE_INSTANCE_BILL,
                    format!("DescribeInstanceBill gave more than {MAX_PAGES} pages; stopped reading"),
                ));
            }
            let a = self.call_bss(DESCRIBE_INSTANCE_BILL, request_params(q, token.as_deref())).await?;
            let body = Field::root("", &a.body);
            // BSS answers `Success` beside its data; a 200 that says false is the cloud's refusal.
            if body.get("Success").value().as_bool() == Some(false) {
                return Err(CloudError::new(
                    Provider::Alibaba,
                    DESCRIBE_INSTANCE_BILL,
                    ErrorKind::Invalid,
                    body.get("Code").text(),
                    body.get("Message").text(),
                )
                .with_request_id(a.request_id.clone()));
            }
            let data = body.get("Data");
            for item in data.get("Items").items() {
                lines.push(line_of(item).map_err(|e| e.with_request_id(a.request_id.clone()))?);
            }
            token = data.get("NextToken").opt_text();
            if token.is_none() {
                break;
            }
        }
        Ok(if q.resource_ids.len() > 1 {
            lines.into_iter().filter(|l| q.resource_ids.contains(&l.resource_id)).collect()
        } else {
            lines
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn items_read_exactly_with_their_duration() {
        let v = json!({ "InstanceID": "i-1", "ProductCode": "ecs", "SubscriptionType": "PayAsYouGo",
            "PretaxGrossAmount": 1234.56, "PretaxAmount": 1111.1, "ServicePeriod": "5400", "ServicePeriodUnit": "秒" });
        let l = line_of(Field::root("", &v)).unwrap();
        assert_eq!((l.list_cny.as_deref(), l.billed_cny.as_str()), (Some("1234.56"), "1111.10"));
        assert_eq!(l.billed_seconds, Some(5400));
        let v = json!({ "InstanceID": "i-1", "PretaxAmount": 0.30000000000000004 });
        assert_eq!(line_of(Field::root("", &v)).unwrap_err().code, "bad-response");
    }

    #[test]
    fn one_instance_is_asked_by_its_wire_name() {
        let q =
            BillQuery { month: "2026-12".into(), region: String::new(), resource_ids: vec!["i-1".into()] };
        let p = request_params(&q, Some("t"));
        assert!(p.contains(&("InstanceID".into(), "i-1".into())));
        assert!(p.contains(&("NextToken".into(), "t".into())));
        assert!(p.contains(&("MaxResults".into(), "300".into())));
    }
}
