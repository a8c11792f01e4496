//! The cloud's bill lines (issue 15): JD billing `queryBillDetail` (`crate::api::bill` has the facts
//! and what is unverified). One month is one query (`startTime` its first second, `endTime` its last,
//! UTC+8: "不支持跨月查询"), per region (the path names one), 1000 lines a page by `pageIndex` from 1,
//! until a short page. Amounts are `totalFee` (list) and `realTotalFee` ("优惠后总价金额", billed),
//! read exactly from their JSON text.

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{amount_of, Amount, BillLine, BillQuery};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::services::Bills;
use gpuctl_cloud::Provider;
use gpuctl_simkit::bill::{china, Month};
use serde_json::{json, Value};

use super::{Call, Client};
use crate::api::bill::{PAGE_MAX, PATH, QUERY_BILL_DETAIL, RESOURCE_IDS_MAX, SERVICE, TIME_FORMAT};
use crate::api::API_VERSION;

/// Pages are bounded: 1000 lines a page, 10,000 pages is 10 million lines in a month.
const MAX_PAGES: usize = 10_000;

/// One page's body: the month's first and last second, the resources when asked (at most 500).
pub(crate) fn request_body(q: &BillQuery, page_index: usize) -> Result<Value, CloudError> {
    let m = Month::parse(&q.month).ok_or_else(|| {
        CloudError::unsupported(
            Provider::JdCloud,
            QUERY_BILL_DETAIL,
            format!("{:?} is not a month (YYYY-MM)", q.month),
        )
    })?;
    let at = |t: jiff::Timestamp| t.to_zoned(china()).strftime(TIME_FORMAT).to_string();
    let mut b = json!({
        "startTime": at(m.start()),
        "endTime": at(m.end() - jiff::SignedDuration::from_secs(1)),
        "pageIndex": page_index,
        "pageSize": PAGE_MAX,
    });
    if !q.resource_ids.is_empty() && q.resource_ids.len() <= RESOURCE_IDS_MAX {
        b["resourceIds"] = json!(q.resource_ids);
    }
    Ok(b)
}

/// One `BillSummary` as gpuctl's line.
pub(crate) fn line_of(d: Field<'_>) -> Result<BillLine, CloudError> {
    let time = |name: &str| {
        d.get(name).opt_text().and_then(|t| {
            jiff::civil::DateTime::strptime(TIME_FORMAT, &t)
                .ok()
                .and_then(|dt| dt.to_zoned(china()).ok())
                .map(|z| z.timestamp())
        })
    };
    Ok(BillLine {
        resource_id: d.get("resourceId").text(),
        product: d.get("serviceCode").text(),
        region: d.get("region").opt_text(),
        pay_mode: d.get("billingTypeName").opt_text(),
        start: time("startTime"),
        end: time("endTime"),
        list_cny: Some(amount(&d, "totalFee")?.text(Amount::DECIMALS)),
        billed_cny: amount(&d, "realTotalFee")?.text(Amount::DECIMALS),
        billed_seconds: None,
    })
}

fn amount(d: &Field<'_>, name: &str) -> Result<Amount, CloudError> {
    amount_of(&d.get(name), Provider::JdCloud, QUERY_BILL_DETAIL)
}

impl Bills for Client {
    async fn bill_lines(&self, q: &BillQuery) -> Result<Vec<BillLine>, CloudError> {
        let mut lines = Vec::new();
        for page in 1.. {
            if page > MAX_PAGES {
                return Err(CloudError::bad_response(
                    Provider::JdCloud,
                    QUERY_BILL_DETAIL,
                    format!("queryBillDetail gave more than {MAX_PAGES} pages; stopped reading"),
                ));
            }
            let call = Call {
                service: SERVICE,
                version: API_VERSION,
                action: QUERY_BILL_DETAIL,
                method: "POST",
                path: PATH,
            };
            let a = self.call(call, &q.region, vec![], Some(request_body(q, page)?)).await?;
            let items = a.get("result").items();
            let n = items.len();
            for item in items {
                lines.push(line_of(item).map_err(|e| e.with_request_id(a.request_id.clone()))?);
            }
            if n < PAGE_MAX {
                break;
            }
        }
        Ok(if q.resource_ids.is_empty() {
            lines
        } else {
            lines.into_iter().filter(|l| q.resource_ids.contains(&l.resource_id)).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_month_is_its_first_and_last_second_in_utc8() {
        let q = BillQuery { month: "2026-12".into(), region: "cn-north-1".into(), resource_ids: vec![] };
        let b = request_body(&q, 2).unwrap();
        assert_eq!(b["startTime"], "2026-12-01 00:00:00");
        assert_eq!(b["endTime"], "2026-12-31 23:59:59");
        assert_eq!((b["pageIndex"].as_u64(), b["pageSize"].as_u64()), (Some(2), Some(1000)));
        let v = json!({ "resourceId": "i-1", "totalFee": 9.74, "realTotalFee": 8.77,
            "startTime": "2026-12-01 08:00:00", "endTime": "2026-12-01 09:00:00" });
        let l = line_of(Field::root("", &v)).unwrap();
        assert_eq!(l.billed_cny, "8.77000000");
        assert_eq!(l.start, Some("2026-12-01T00:00:00Z".parse().unwrap()));
    }
}
