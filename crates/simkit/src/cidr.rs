//! IPv4 CIDR blocks as the clouds' VPC APIs take them (a VPC's range, a subnet's, a rule's source):
//! parsed strictly (no host bits set), with the containment and overlap tests every emulator's
//! CreateSubnet / CreateVSwitch / createSubnet needs.

use std::net::Ipv4Addr;

/// An IPv4 network block `base/len`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cidr {
    pub base: u32,
    pub len: u8,
}

impl Cidr {
    /// `a.b.c.d/n` with n ≤ 32 and no host bits set; anything else is `None`.
    pub fn parse(s: &str) -> Option<Cidr> {
        let (ip, len) = s.split_once('/')?;
        let ip: Ipv4Addr = ip.parse().ok()?;
        let len: u8 = len.parse().ok().filter(|l| *l <= 32)?;
        let base = u32::from(ip);
        // A block whose address has host bits set is not a network address.
        (base & !Self::mask(len) == 0).then_some(Cidr { base, len })
    }

    fn mask(len: u8) -> u32 {
        if len == 0 {
            0
        } else {
            u32::MAX << (32 - len)
        }
    }

    pub fn contains(&self, other: &Cidr) -> bool {
        other.len >= self.len && other.base & Self::mask(self.len) == self.base
    }

    pub fn overlaps(&self, other: &Cidr) -> bool {
        self.contains(other) || other.contains(self)
    }

    /// How many addresses the block holds (2^(32 − len), capped at 2^31 so it fits the answers).
    pub fn size(&self) -> u64 {
        1u64 << (32 - u32::from(self.len)).min(31)
    }

    pub fn text(&self) -> String {
        format!("{}/{}", Ipv4Addr::from(self.base), self.len)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks_parse_strictly_and_nest() {
        let vpc = Cidr::parse("10.0.0.0/16").unwrap();
        let sub = Cidr::parse("10.0.16.0/20").unwrap();
        assert!(vpc.contains(&sub) && !sub.contains(&vpc) && sub.overlaps(&vpc));
        assert!(!Cidr::parse("10.1.0.0/20").unwrap().overlaps(&sub));
        assert_eq!(Cidr::parse("10.0.0.1/16"), None, "host bits set");
        assert_eq!(Cidr::parse("10.0.0.0/33"), None);
        assert_eq!(Cidr::parse("10.0.0.0"), None);
        assert_eq!(Cidr::parse("0.0.0.0/0").map(|c| c.text()), Some("0.0.0.0/0".into()));
        assert_eq!(sub.size(), 4096);
    }
}
