//! Billing 2018-07-09 (issue 15): `DescribeBillDetail`, the bill's lines, made from what this emulator
//! ran (`State::bills`, `gpuctl_simkit::bill` has the settlement rules and which are assumptions).
//! Parameters and fields: tccli 3.1.189.1 `tccli/services/billing/v20180709/api.json`
//! (DescribeBillDetailRequest, DescribeBillDetailResponse, BillDetail, BillDetailComponent).

use gpuctl_simkit::bill::{china, china_text, Line, Month};
use serde_json::{json, Value};

use crate::api::billing::{
    AMOUNT_DECIMALS, HOURLY, MONTHS_BACK, PAGE_MAX, POST_PAY, PREPAID_NEW, PRE_PAY, SPOT_HOURLY,
};
use crate::api::{charge, codes};
use crate::emulator::error::{Result, TcError};
use crate::emulator::state::State;
use crate::emulator::{Call, PROVIDER};

/// The month asked for: `Month` (`yyyy-mm`), or `BeginTime`+`EndTime` (`yyyy-mm-dd hh:ii:ss`, "必须一起传，
/// 且为相同月份，不支持跨月查询，查询结果是整月数据"), "最多可拉取近18个月内的数据".
/// *Assumption:* which error code each refusal carries is not documented; the billing SDK's
/// errorcodes.py (tencentcloud-sdk-python-billing 3.1.177) lists `InvalidParameterValue` (参数取值错误)
/// and `MissingParameter` (缺少参数错误), used here.
fn month(call: &Call) -> Result<Month> {
    let p = call.p();
    let begin = p.opt_str("BeginTime")?;
    let end = p.opt_str("EndTime")?;
    let m = match (begin, end) {
        (Some(b), Some(e)) => {
            let at = |s: &str, name: &str| {
                gpuctl_simkit::bill::parse_china_text(s).ok_or_else(|| {
                    TcError::new(
                        codes::INVALID_PARAMETER_VALUE,
                        format!("`{name}` `{s}` is not a time in the format yyyy-mm-dd hh:ii:ss."),
                    )
                })
            };
            let (mb, me) = (Month::of(at(&b, "BeginTime")?), Month::of(at(&e, "EndTime")?));
            if mb != me {
                return Err(TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    "BeginTime and EndTime must be in the same month: a query cannot cross months.",
                ));
            }
            mb
        }
        (Some(_), None) | (None, Some(_)) => {
            return Err(TcError::new(
                codes::MISSING_PARAMETER,
                "BeginTime and EndTime must be passed together.",
            ))
        }
        (None, None) => {
            let Some(text) = p.opt_str("Month")? else {
                return Err(TcError::new(
                    codes::MISSING_PARAMETER,
                    "One of Month or BeginTime and EndTime is required.",
                ));
            };
            Month::parse(&text).ok_or_else(|| {
                TcError::new(
                    codes::INVALID_PARAMETER_VALUE,
                    format!("`Month` `{text}` is not in the format yyyy-mm."),
                )
            })?
        }
    };
    let now = Month::of(call.ctx.now());
    let back = now.months_since(m);
    if back >= MONTHS_BACK {
        return Err(TcError::new(
            codes::INVALID_PARAMETER_VALUE,
            format!("`{}` is more than {MONTHS_BACK} months back; only the last {MONTHS_BACK} months can be queried.", m.text()),
        ));
    }
    Ok(m)
}

pub(crate) fn describe_bill_detail(state: &State, call: &Call) -> Result<Value> {
    let p = call.p();
    // Offset and Limit are required ("required": true in the definition, checked by the schema); Limit ≤ 300.
    let window = p.offset_limit(("Offset", "Limit"), PAGE_MAX as i64, PAGE_MAX as i64)?;
    let m = month(call)?;
    let pay_mode = p.opt_str("PayMode")?;
    if let Some(pm) = &pay_mode {
        if pm != PRE_PAY && pm != POST_PAY {
            return Err(TcError::new(
                codes::INVALID_PARAMETER_VALUE,
                format!("`PayMode` `{pm}` is not one of {PRE_PAY}, {POST_PAY}."),
            ));
        }
    }
    let resource = p.opt_str("ResourceId")?;
    let now = call.ctx.now();
    let lines = state.bills.lines(m, now, &call.ctx.knobs(), PROVIDER, AMOUNT_DECIMALS);
    let picked: Vec<&Line> = lines
        .iter()
        .filter(|l| {
            let u = &state.bills.usages[l.usage];
            resource.as_ref().is_none_or(|r| *r == u.resource_id)
                && pay_mode.as_ref().is_none_or(|pm| *pm == pay_mode_of(&u.pay_mode))
        })
        .collect();
    let (total, page) = window.apply(picked);
    let offset = window.number();
    let set: Vec<Value> = page.iter().enumerate().map(|(i, l)| detail(state, l, offset + i)).collect();
    // Context: "本次请求的上下文信息，可用于下一次请求的请求参数中，加快查询速度". The local cloud pages by
    // Offset alone and hands back an opaque context naming where the page ended.
    Ok(
        json!({ "DetailSet": set, "Total": total, "Context": format!("{}-{}", m.text(), offset + page.len()) }),
    )
}

/// `prePay` for a prepaid term, `postPay` for the hourly kinds.
fn pay_mode_of(charge_type: &str) -> &'static str {
    if charge_type == charge::PREPAID {
        PRE_PAY
    } else {
        POST_PAY
    }
}

fn detail(state: &State, l: &Line, n: usize) -> Value {
    let u = &state.bills.usages[l.usage];
    let prepaid = u.pay_mode == charge::PREPAID;
    let (action, action_name) = match u.pay_mode.as_str() {
        charge::PREPAID => ("prepay_purchase", PREPAID_NEW),
        charge::SPOTPAID => ("spotpay_deduct_h", SPOT_HOURLY),
        _ => ("postpay_deduct_h", HOURLY),
    };
    let d = AMOUNT_DECIMALS;
    let hours = l.used_end.duration_since(l.used_start).as_secs() as f64 / 3600.0;
    let day = l.period_start.to_zoned(china()).date();
    let bill_id = format!("{}{:08}", l.period_start.to_zoned(china()).strftime("%Y%m%d%H"), n);
    json!({
        "BusinessCodeName": "云服务器CVM",
        "ProductCodeName": format!("云服务器CVM-{}", u.instance_type),
        "PayModeName": if prepaid { "包年包月" } else { "按量计费" },
        "ProjectName": "默认项目",
        "RegionName": u.region,
        "ZoneName": u.zone,
        "ResourceId": u.resource_id,
        "ResourceName": "",
        "ActionTypeName": action_name,
        "OrderId": "",
        "BillId": bill_id,
        "PayTime": china_text(l.settled_at),
        "FeeBeginTime": china_text(l.used_start),
        "FeeEndTime": china_text(l.used_end),
        "ComponentSet": [{
            "ComponentCodeName": "运算组件",
            "ItemCodeName": format!("运算组件-{}", u.instance_type),
            "SinglePrice": match &u.charge {
                gpuctl_simkit::bill::Charge::Hourly { list_per_hour } => gpuctl_simkit::bill::Amount::from_price(*list_per_hour).text(d),
                gpuctl_simkit::bill::Charge::Upfront { .. } => l.list.text(d),
            },
            "PriceUnit": if prepaid { "元/个/月" } else { "元/小时" },
            "UsedAmount": "1",
            "UsedAmountUnit": "个",
            "TimeSpan": if prepaid { "1".to_string() } else { format!("{hours:.6}") },
            "TimeUnitName": if prepaid { "月" } else { "小时" },
            "Cost": l.list.text(d),
            "Discount": if l.list.0 == 0 { "1".to_string() } else { format!("{:.4}", l.billed.0 as f64 / l.list.0 as f64) },
            "RealCost": l.billed.text(d),
            "CashPayAmount": l.billed.text(d),
            "VoucherPayAmount": "0.00000000",
            "IncentivePayAmount": "0.00000000",
            "TransferPayAmount": "0.00000000",
            "ItemCode": "v_cvm_compute",
            "ComponentCode": "v_cvm_compute",
            "InstanceType": if u.pay_mode == charge::SPOTPAID { "sp" } else { "" },
        }],
        "PayerUin": "",
        "OwnerUin": "",
        "OperateUin": "",
        "Tags": [],
        "BusinessCode": "p_cvm",
        "ProductCode": "sp_cvm",
        "ActionType": action,
        "RegionId": u.region,
        "ProjectId": 0,
        "BillDay": format!("{} 00:00:00", day),
        "BillMonth": format!("{}-{:02}-01 00:00:00", day.year(), day.month()),
        "Id": format!("{}-{n}", u.resource_id),
    })
}
