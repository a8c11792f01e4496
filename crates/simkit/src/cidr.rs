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

/// The first private address of an emulator's fixed pattern that no live instance holds. The
/// emulators number addresses from a counter (`pattern(n)`); counting from the number of instances
/// alone would hand a new instance the address of one still running once another instance has gone
/// (a cluster's replacement node then shares a node's address). Starts at `start`, tries at most
/// 65,536 numbers (more than an emulator ever holds), and falls back to `pattern(start)`.
pub fn free_address<'a>(
    start: usize,
    pattern: impl Fn(usize) -> String,
    held: impl Iterator<Item = &'a str> + Clone,
) -> String {
    (start..start + 65_536)
        .map(&pattern)
        .find(|a| !held.clone().any(|h| h == a))
        .unwrap_or_else(|| pattern(start))
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

    #[test]
    fn a_free_address_skips_the_ones_live_instances_hold() {
        let pattern = |n: usize| format!("10.0.0.{}", n % 250 + 2);
        let held = ["10.0.0.3", "10.0.0.4"];
        assert_eq!(free_address(1, pattern, held.iter().copied()), "10.0.0.5");
        assert_eq!(free_address(0, pattern, held.iter().copied()), "10.0.0.2");
    }
}
