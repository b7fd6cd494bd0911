//! Budgets of calls per client address: the one place that turns a peer address into the key of
//! its budget (an IPv4 address, or an IPv6 /64 network, which one client usually holds whole)
//! and keeps a [`RateLimit`] bucket for each. The ladder's registrations and the public mode's
//! CreatePublicMatch both count calls here.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Mutex, PoisonError};

use crate::limit::RateLimit;

/// Addresses whose budgets are kept before the full ones (those that remember nothing) are
/// forgotten.
const ADDRESSES: usize = 10_000;

/// `n` calls per minute for each client address, at most `n` at once.
pub struct PerAddress {
    per_minute: u32,
    budgets: Mutex<HashMap<IpAddr, RateLimit>>,
}

impl PerAddress {
    /// A budget of `n` calls per minute per address, `n` at once.
    pub fn per_minute(n: u32) -> PerAddress {
        PerAddress {
            per_minute: n,
            budgets: Mutex::new(HashMap::new()),
        }
    }

    /// The calls per minute each address may make.
    pub fn limit(&self) -> u32 {
        self.per_minute
    }

    /// Takes one call from the budget of the client at `peer`; false when it is spent. A call
    /// that did not come through a TCP connection (no peer address) is not limited.
    pub fn allow(&self, peer: Option<SocketAddr>) -> bool {
        let Some(peer) = peer else { return true };
        let key = network(peer.ip());
        let mut budgets = self.budgets.lock().unwrap_or_else(PoisonError::into_inner);
        if budgets.len() >= ADDRESSES {
            budgets.retain(|_, b| !b.is_full());
        }
        budgets
            .entry(key)
            .or_insert_with(|| RateLimit::per_minute(self.per_minute))
            .allow()
    }
}

/// The key of a client's budget: an IPv4 address (an IPv4-mapped IPv6 one too) as is, an IPv6
/// address as its /64 network.
pub fn network(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6((u128::from(v6) & !((1u128 << 64) - 1)).into()),
        },
        IpAddr::V4(v4) => IpAddr::V4(v4),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_budget_per_ipv6_network_and_per_ipv4_address() {
        let limit = PerAddress::per_minute(2);
        let a: SocketAddr = "[2001:db8:1:2::1]:1".parse().expect("address");
        let b: SocketAddr = "[2001:db8:1:2:ffff::9]:2".parse().expect("address");
        let c: SocketAddr = "[2001:db8:1:3::1]:1".parse().expect("address");
        assert!(limit.allow(Some(a)));
        assert!(limit.allow(Some(b)));
        assert!(!limit.allow(Some(a)), "the /64 shares one budget");
        assert!(limit.allow(Some(c)), "another /64 has its own");
        let v4: SocketAddr = "10.0.0.1:5".parse().expect("address");
        let mapped: SocketAddr = "[::ffff:10.0.0.1]:6".parse().expect("address");
        assert!(limit.allow(Some(v4)));
        assert!(limit.allow(Some(mapped)));
        assert!(!limit.allow(Some(v4)), "a mapped address is the IPv4 one");
        assert!(limit.allow(None));
    }
}
