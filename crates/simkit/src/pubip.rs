//! Public IPv4 addresses for the emulators' instances, from the documentation ranges of RFC 5737
//! (192.0.2.0/24, 198.51.100.0/24, 203.0.113.0/24), so no test ever reaches a real host. Each
//! address is held by one instance at a time; a released one may be handed out again.

use std::collections::BTreeSet;

/// The three /24 ranges RFC 5737 reserves for documentation, in the order they are handed out.
const RANGES: [[u8; 3]; 3] = [[203, 0, 113], [198, 51, 100], [192, 0, 2]];
/// Hosts .1 to .254 of each range (not the network or broadcast address).
const HOSTS: u32 = 254;

/// The addresses one emulator has handed out and not yet taken back.
#[derive(Debug, Default)]
pub struct AddressPool {
    held: BTreeSet<u32>,
}

impl AddressPool {
    /// The lowest free address, now held; `None` when all 762 are held (the cloud is out of IPs).
    pub fn assign(&mut self) -> Option<String> {
        let n = (0..HOSTS * RANGES.len() as u32).find(|n| !self.held.contains(n))?;
        self.held.insert(n);
        let [a, b, c] = RANGES[(n / HOSTS) as usize];
        Some(format!("{a}.{b}.{c}.{}", n % HOSTS + 1))
    }

    /// `n` addresses, all held now, or none when fewer than `n` are free (a create that asks for
    /// several instances gets every address or is refused whole).
    pub fn assign_all(&mut self, n: usize) -> Option<Vec<String>> {
        let mut got = Vec::with_capacity(n);
        for _ in 0..n {
            match self.assign() {
                Some(a) => got.push(a),
                None => {
                    for a in &got {
                        self.release(a);
                    }
                    return None;
                }
            }
        }
        Some(got)
    }

    /// Takes an address back; one this pool did not hand out is ignored.
    pub fn release(&mut self, address: &str) {
        if let Some(n) = Self::index(address) {
            self.held.remove(&n);
        }
    }

    pub fn held(&self) -> usize {
        self.held.len()
    }

    fn index(address: &str) -> Option<u32> {
        let parts: Vec<u8> = address.split('.').map(str::parse).collect::<Result<_, _>>().ok()?;
        let [a, b, c, d] = parts[..] else { return None };
        let range = RANGES.iter().position(|r| r == &[a, b, c])? as u32;
        (1..=HOSTS as u8).contains(&d).then(|| range * HOSTS + u32::from(d) - 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_are_unique_while_held_and_reused_once_released() {
        let mut pool = AddressPool::default();
        let a = pool.assign().unwrap();
        let b = pool.assign().unwrap();
        assert_eq!((a.as_str(), b.as_str()), ("203.0.113.1", "203.0.113.2"));
        pool.release(&a);
        assert_eq!(pool.held(), 1);
        assert_eq!(pool.assign().unwrap(), "203.0.113.1");
        pool.release("10.0.0.1");
        pool.release("203.0.113.0");
        assert_eq!(pool.held(), 2);
        let all: BTreeSet<String> = std::iter::from_fn(|| pool.assign()).collect();
        assert_eq!(all.len(), 762 - 2);
        assert!(all.contains("198.51.100.1") && all.contains("192.0.2.254"));
        assert!(!all.contains(&b));
        assert_eq!(pool.assign(), None);
        pool.release("203.0.113.5");
        assert_eq!(pool.assign_all(2), None, "all or none");
        assert_eq!(pool.assign_all(1), Some(vec!["203.0.113.5".to_string()]));
    }
}
