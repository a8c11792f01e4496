//! What a pool's public IP costs, from the clouds' published price pages as recorded in
//! `shared/reference/price-evidence.md` (§1.4 Tencent, §2.4 Alibaba, §3.4 JD). Traffic billing is
//! shown as its rate: what it costs depends on the GB the instances send, which gpuctl cannot know,
//! so no GB count is assumed and nothing is folded into the plan's totals. A figure the evidence does
//! not record stays unknown.

use crate::provider::Provider;
use crate::spec::{PublicIp, PublicIpBilling};

/// One instance's public IP, priced where the plan's first choice would put it.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct PublicIpPrice {
    pub bandwidth_mbps: u32,
    pub billing: PublicIpBilling,
    pub provider: Provider,
    pub region: String,
    /// ¥ per hour per instance whatever is sent (the bandwidth, or an IP-holding fee); `None`: the
    /// price evidence records no figure.
    pub cny_per_hour: Option<f64>,
    /// ¥ per GB sent (traffic billing); `None` for bandwidth billing, or when unrecorded.
    pub cny_per_gb: Option<f64>,
    /// Where the figures come from, and their date.
    pub source: String,
    /// What is unknown or assumed, in words (shown with the price).
    pub note: String,
}

/// price-evidence §1.4 also cites tccli's price-inquiry example (0.8 per GB) for the same figure.
const TENCENT_SOURCE: &str =
    "Tencent 购买公网网络/公网计费模式.md@0f330adf (price-evidence §1.4, undated; tccli's price example agrees)";
const ALIBABA_SOURCE: &str =
    "AlibabaCloudDocs/ecs cn.zh-CN/产品定价/计费项/公网带宽计费.md, example values (price-evidence §2.4, 2021-02-02)";
const JD_SOURCE: &str =
    "zhangkai263/cn documentation/Networking/Elastic-IP/Pricing/Price-Overview.md@0b77d686 (price-evidence §3.4)";

/// JD's BGP elastic IP by configuration, ¥/hour for 1 to 5 Mbps, and per Mbps above 5: Beijing,
/// Guangzhou and Shanghai (cn-north-1, cn-south-1, cn-east-2). Suqian (cn-east-1) records only 1 and
/// 5 Mbps (0.05, 0.17) and +0.11 above 5.
const JD_LADDER: [f64; 5] = [0.06, 0.10, 0.14, 0.18, 0.22];
const JD_ABOVE_5: f64 = 0.14;

pub fn price(provider: Provider, region: &str, ip: &PublicIp) -> PublicIpPrice {
    let mbps = ip.bandwidth_mbps;
    let (cny_per_hour, cny_per_gb, source, note) = match (provider, ip.billing) {
        (Provider::Tencent, PublicIpBilling::Traffic) => {
            (Some(0.0), Some(0.80), TENCENT_SOURCE, "no hourly fee; the bandwidth is a cap".to_string())
        }
        (Provider::Tencent, PublicIpBilling::Bandwidth) => (
            None,
            None,
            TENCENT_SOURCE,
            "price unknown: the evidence records only a monthly example (5 Mbps = 115 CNY/month), no hourly rate"
                .to_string(),
        ),
        (Provider::Alibaba, PublicIpBilling::Traffic) => {
            (Some(0.0), Some(0.80), ALIBABA_SOURCE, "no hourly fee; the bandwidth is a cap".to_string())
        }
        (Provider::Alibaba, PublicIpBilling::Bandwidth) => {
            // Pay-as-you-go: 0.063 ¥/Mbps/h for the first 5 Mbps, 0.248 for each one above.
            let low = f64::from(mbps.min(5)) * 0.063;
            let high = f64::from(mbps.saturating_sub(5)) * 0.248;
            (Some(low + high), None, ALIBABA_SOURCE, "0.063 ¥/Mbps·h up to 5 Mbps, 0.248 above".to_string())
        }
        (Provider::JdCloud, PublicIpBilling::Traffic) => (
            Some(0.02),
            Some(0.80),
            JD_SOURCE,
            "0.48 ¥/day to hold the IP (0.02 ¥/h) plus traffic".to_string(),
        ),
        (Provider::JdCloud, PublicIpBilling::Bandwidth) => {
            let per_hour = match region {
                "cn-north-1" | "cn-south-1" | "cn-east-2" => Some(jd_ladder(mbps, &JD_LADDER, JD_ABOVE_5)),
                // Suqian: only 1 Mbps and 5 Mbps and above are recorded.
                "cn-east-1" => match mbps {
                    1 => Some(0.05),
                    5.. => Some(0.17 + f64::from(mbps - 5) * 0.11),
                    _ => None,
                },
                _ => None,
            };
            let note = match per_hour {
                Some(_) => "BGP, by configuration".to_string(),
                None => format!("price unknown: the evidence records no {mbps} Mbps figure for {region}"),
            };
            (per_hour, None, JD_SOURCE, note)
        }
    };
    PublicIpPrice {
        bandwidth_mbps: mbps,
        billing: ip.billing,
        provider,
        region: region.to_string(),
        cny_per_hour: cny_per_hour.map(|h| (h * 1e6).round() / 1e6),
        cny_per_gb,
        source: source.to_string(),
        note,
    }
}

fn jd_ladder(mbps: u32, ladder: &[f64; 5], above: f64) -> f64 {
    match mbps {
        0 => 0.0,
        1..=5 => ladder[mbps as usize - 1],
        _ => ladder[4] + f64::from(mbps - 5) * above,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(mbps: u32, billing: PublicIpBilling) -> PublicIp {
        PublicIp { bandwidth_mbps: mbps, billing }
    }

    #[test]
    fn rates_follow_the_recorded_price_pages_and_unknown_stays_unknown() {
        let t = price(Provider::Tencent, "ap-guangzhou", &PublicIp::DEFAULT);
        assert_eq!((t.cny_per_hour, t.cny_per_gb), (Some(0.0), Some(0.80)));
        let t = price(Provider::Tencent, "ap-guangzhou", &ip(10, PublicIpBilling::Bandwidth));
        assert_eq!((t.cny_per_hour, t.cny_per_gb), (None, None));
        assert!(t.note.starts_with("price unknown"), "{}", t.note);
        // 5 × 0.063 + 5 × 0.248
        let a = price(Provider::Alibaba, "cn-hangzhou", &ip(10, PublicIpBilling::Bandwidth));
        assert_eq!(a.cny_per_hour, Some(1.555));
        assert_eq!(
            price(Provider::Alibaba, "cn-hangzhou", &ip(3, PublicIpBilling::Bandwidth)).cny_per_hour,
            Some(0.189)
        );
        let j = price(Provider::JdCloud, "cn-north-1", &PublicIp::DEFAULT);
        assert_eq!((j.cny_per_hour, j.cny_per_gb), (Some(0.02), Some(0.80)));
        let bw = |region: &str, mbps| {
            price(Provider::JdCloud, region, &ip(mbps, PublicIpBilling::Bandwidth)).cny_per_hour
        };
        assert_eq!(bw("cn-north-1", 1), Some(0.06));
        assert_eq!(bw("cn-south-1", 5), Some(0.22));
        assert_eq!(bw("cn-east-2", 10), Some(0.92));
        assert_eq!(bw("cn-east-1", 10), Some(0.72));
        assert_eq!(bw("cn-east-1", 3), None);
    }
}
