//! JD billing `queryBillDetail` (v1, issue 15), as both sides name it: `POST
//! /v1/regions/{regionId}/billDetail:list` on `billing.jdcloud-api.com` (jdcloud_sdk 1.6.354
//! `services/billing/apis/QueryBillDetailRequest.py`). Not the price API (`calculateTotalPrice`,
//! `client/billing.rs`).
//!
//! The response is **not** in the SDK (its request class declares no result). The line type is taken
//! to be `services/billing/models/BillSummary.py` — its own docs tie it to this call
//! (`actionTypeName` "仅用于查询帐单明细接口", `billTime` likewise) — inside `result.result[]`, with
//! `result.pagination` the billing package's `models/Pagination.py`. *Unverified:* the result's field
//! names (`result`, `pagination`), the amounts' form and precision, and the times' format.

pub const QUERY_BILL_DETAIL: &str = "queryBillDetail";
pub const SERVICE: &str = "billing";
pub const PATH: &str = "billDetail:list";

/// `pageSize`: "每页查询数据条数,最多支持1000条".
pub const PAGE_MAX: usize = 1000;
/// `resourceIds`: "资源单id列表,最多支持传入500个".
pub const RESOURCE_IDS_MAX: usize = 500;
/// `startTime`/`endTime`: "格式:yyyy-MM-dd HH:mm:ss", "不支持跨月查询" (read as UTC+8, as JD bills: an assumption).
pub const TIME_FORMAT: &str = "%Y-%m-%d %H:%M:%S";
/// `billingType`: "计费类型 1、按配置 2、按用量 3、包年包月 4、按次".
pub const BY_CONFIGURATION: i64 = 1;
pub const MONTHLY_YEARLY: i64 = 3;
/// *Assumption:* amounts at the cent (the SDK states no precision).
pub const AMOUNT_DECIMALS: u32 = 2;
