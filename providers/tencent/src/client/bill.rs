//! The cloud's bill lines (issue 15): billing 2018-07-09 `DescribeBillDetail` on
//! `billing.tencentcloudapi.com` (tccli 3.1.189.1 `tccli/services/billing/v20180709/api.json`:
//! DescribeBillDetailRequest `Offset`/`Limit` required, Limit "最大值为300", `Month` yyyy-mm, `ResourceId`,
//! `Context`; BillDetail and BillDetailComponent, amounts as strings).
//!
//! The account's bill is one listing whatever the region; `Total` is "24小时缓存一次，可能比实际总记录数少",
//! so the listing is read until a short page, never to `Total`. A line's amounts are the sums of its
//! components' `Cost` (list) and `RealCost` (after discounts), added as exact decimals.

use std::sync::Mutex;

use gpuctl_cloud::cloud::CloudError;
use gpuctl_cloud::cost::{amount_of, Amount, BillLine, BillQuery};
use gpuctl_cloud::json::Field;
use gpuctl_cloud::page::{self, Page, Style};
use gpuctl_cloud::services::Bills;
use gpuctl_cloud::Provider;
use serde_json::{json, Value};

use super::Client;
use crate::api::billing::{AMOUNT_DECIMALS, PAGE_MAX};
use crate::api::BILLING;

/// One page's request: the month, the resource when one is asked for, and the previous page's context
/// ("翻页查询Month>=2023-05的月份的数据可加快查询速度").
pub(crate) fn request_body(q: &BillQuery, offset: usize, context: Option<&str>) -> Value {
    let mut b = json!({ "Offset": offset, "Limit": PAGE_MAX, "Month": q.month });
    if let [one] = q.resource_ids.as_slice() {
        b["ResourceId"] = json!(one);
    }
    if let Some(c) = context.filter(|c| !c.is_empty()) {
        b["Context"] = json!(c);
    }
    b
}

/// One `BillDetail` as gpuctl's line: `None` where it has no resource (a line gpuctl cannot attribute
/// still counts: its resource id is empty, never dropped).
pub(crate) fn line_of(d: Field<'_>) -> Result<BillLine, CloudError> {
    let time = |name: &str| d.get(name).opt_text().and_then(|t| gpuctl_simkit::bill::parse_china_text(&t));
    let mut list = Amount::ZERO;
    let mut billed = Amount::ZERO;
    for c in d.get("ComponentSet").items() {
        list = list + amount(&c, "Cost")?;
        billed = billed + amount(&c, "RealCost")?;
    }
    Ok(BillLine {
        resource_id: d.get("ResourceId").text(),
        product: d.get("BusinessCode").text(),
        region: d.get("RegionName").opt_text(),
        pay_mode: d.get("PayModeName").opt_text(),
        start: time("FeeBeginTime"),
        end: time("FeeEndTime"),
        list_cny: Some(list.text(AMOUNT_DECIMALS)),
        billed_cny: billed.text(AMOUNT_DECIMALS),
        billed_seconds: None,
    })
}

fn amount(c: &Field<'_>, name: &str) -> Result<Amount, CloudError> {
    amount_of(&c.get(name), Provider::Tencent, "DescribeBillDetail")
}

impl Bills for Client {
    async fn bill_lines(&self, q: &BillQuery) -> Result<Vec<BillLine>, CloudError> {
        let context: Mutex<Option<String>> = Mutex::new(None);
        let context = &context;
        let lines = page::all(Style::Offset, |at| async move {
            let ctx = context.lock().unwrap_or_else(|e| e.into_inner()).clone();
            // The region is only the signature's: the bill is the account's.
            let a = self
                .call(BILLING, &q.region, "DescribeBillDetail", request_body(q, at.number(), ctx.as_deref()))
                .await?;
            *context.lock().unwrap_or_else(|e| e.into_inner()) = a.get("Context").opt_text();
            let items = a.get("DetailSet").items().into_iter().map(line_of).collect::<Result<Vec<_>, _>>()?;
            // A short page ends the listing; a full one asks again (Total may undercount).
            let total = if items.len() < PAGE_MAX { (at.number() + items.len()) as u64 } else { u64::MAX };
            Ok(Page::counted(items, total))
        })
        .await?;
        Ok(if q.resource_ids.len() > 1 {
            lines.into_iter().filter(|l| q.resource_ids.contains(&l.resource_id)).collect()
        } else {
            lines
        })
    }
}
