//! Billing (issue 15): the bill's lines, `DescribeBillDetail` of billing 2018-07-09 on
//! `billing.tencentcloudapi.com` (tccli 3.1.189.1 `tccli/services/billing/v20180709/api.json`:
//! metadata.apiVersion, DescribeBillDetailRequest, BillDetail, BillDetailComponent).

pub const BILLING_ACTIONS: &[&str] = &["DescribeBillDetail"];

/// `Limit`: "数量，最大值为300" (DescribeBillDetailRequest.Limit).
pub const PAGE_MAX: usize = 300;

/// `Month`: "最多可拉取近18个月内的数据" (DescribeBillDetailRequest.Month).
pub const MONTHS_BACK: i32 = 18;

/// Amounts are strings with eight decimals (tccli 3.1.189.1 `billing/v20180709/examples.json`,
/// DescribeBillDetail: `"Cost": "-80.89000000"`, `"RealCost"`, `"CashPayAmount": "-80.43264806"`).
pub const AMOUNT_DECIMALS: u32 = 8;

/// `PayMode`: "prePay(表示包年包月)/postPay(表示按时按量)" (DescribeBillDetailRequest.PayMode).
pub const PRE_PAY: &str = "prePay";
pub const POST_PAY: &str = "postPay";

/// `ActionTypeName` examples of DescribeBillDetailRequest.ActionType: the settlement kinds the local
/// cloud bills (按量计费小时结, 竞价实例小时结, 包年包月新购).
pub const HOURLY: &str = "按量计费小时结";
pub const SPOT_HOURLY: &str = "竞价实例小时结";
pub const PREPAID_NEW: &str = "包年包月新购";
