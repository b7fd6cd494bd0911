//! Fixtures: which entrants sit where, with which deal.
//!
//! Every table of `k` entrants is played on `deals` deals, each deal `k` times with the entrants
//! rotated one seat, so every entrant sits in every position equally often. With duplicate deals
//! the rotations of a deal share one seed, so the same shuffled deck is replayed with the
//! entrants permuted over the seats and the luck of the deal cancels out.

use std::collections::HashSet;

/// One game to play.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fixture {
    /// Stable id: `r{round}-t{table}-d{deal}-s{rotation}`.
    pub id: String,
    /// Entrant index at each seat.
    pub seats: Vec<usize>,
    /// The match seed.
    pub seed: u64,
}

/// Mixes numbers into a seed (SplitMix64 finaliser).
pub fn mix(parts: &[u64]) -> u64 {
    let mut h = 0x6A09_E667_F3BC_C909u64;
    for &p in parts {
        let mut z = h ^ p.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        h = z ^ (z >> 31);
    }
    h
}

/// Every `k`-subset of `0..n`, in lexicographic order.
pub fn combinations(n: usize, k: usize) -> Vec<Vec<usize>> {
    let mut out = Vec::new();
    let mut idx: Vec<usize> = (0..k).collect();
    if k == 0 || k > n {
        return out;
    }
    loop {
        out.push(idx.clone());
        let mut i = k;
        while i > 0 && idx[i - 1] == i - 1 + n - k {
            i -= 1;
        }
        if i == 0 {
            return out;
        }
        idx[i - 1] += 1;
        for j in i..k {
            idx[j] = idx[j - 1] + 1;
        }
    }
}

/// The games of the given tables in one round: each table × deal × rotation.
pub fn fixtures(
    round: u32,
    tables: &[Vec<usize>],
    deals: u32,
    seed: u64,
    duplicate: bool,
) -> Vec<Fixture> {
    let mut out = Vec::new();
    for (t, table) in tables.iter().enumerate() {
        let k = table.len();
        for d in 0..deals {
            let deal_seed = mix(&[seed, round as u64, t as u64, d as u64]);
            for r in 0..k {
                out.push(Fixture {
                    id: format!("r{round}-t{t}-d{d}-s{r}"),
                    seats: (0..k).map(|s| table[(s + r) % k]).collect(),
                    seed: if duplicate {
                        deal_seed
                    } else {
                        mix(&[deal_seed, r as u64])
                    },
                });
            }
        }
    }
    out
}

/// Swiss pairing for one round: entrants in standings order (best first) are grouped into
/// tables of `k`, avoiding any pair that has already met whenever that is possible (searched
/// exhaustively for small fields, greedily for large ones). Entrants left over when `n` is not a
/// multiple of `k` sit out (the lowest ranked).
pub fn swiss_tables(order: &[usize], k: usize, met: &HashSet<(usize, usize)>) -> Vec<Vec<usize>> {
    let tables = order.len() / k;
    let playing = &order[..tables * k];
    let pair = |a: usize, b: usize| (a.min(b), a.max(b));
    let fresh = |table: &[usize], x: usize| table.iter().all(|&y| !met.contains(&pair(x, y)));
    // Depth-first search for a grouping without repeats; bounded so large fields stay fast.
    fn search(
        left: &mut Vec<usize>,
        k: usize,
        fresh: &dyn Fn(&[usize], usize) -> bool,
        out: &mut Vec<Vec<usize>>,
        budget: &mut u32,
    ) -> bool {
        if left.is_empty() {
            return true;
        }
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        let first = left.remove(0);
        let mut table = vec![first];
        let ok = fill(left, k, fresh, &mut table, 0, out, budget);
        left.insert(0, first);
        ok
    }
    fn fill(
        left: &mut Vec<usize>,
        k: usize,
        fresh: &dyn Fn(&[usize], usize) -> bool,
        table: &mut Vec<usize>,
        from: usize,
        out: &mut Vec<Vec<usize>>,
        budget: &mut u32,
    ) -> bool {
        if table.len() == k {
            out.push(table.clone());
            if search(left, k, fresh, out, budget) {
                return true;
            }
            out.pop();
            return false;
        }
        for i in from..left.len() {
            let x = left[i];
            if !fresh(table, x) {
                continue;
            }
            left.remove(i);
            table.push(x);
            let ok = fill(left, k, fresh, table, i, out, budget);
            table.pop();
            left.insert(i, x);
            if ok {
                return true;
            }
        }
        false
    }
    let mut out = Vec::new();
    let mut left = playing.to_vec();
    let mut budget = 100_000;
    if search(&mut left, k, &fresh, &mut out, &mut budget) {
        return out;
    }
    // No repeat-free grouping (or too many to search): group in standings order.
    playing.chunks(k).map(<[usize]>::to_vec).collect()
}

/// The first round of a single-elimination bracket for `n` entrants seeded `0..n` (0 best):
/// pairs (1 vs n, 2 vs n-1, …) in bracket order; `None` is a bye.
pub fn bracket(n: usize) -> Vec<(usize, Option<usize>)> {
    let size = n.next_power_of_two().max(2);
    // Standard seeding order: 0, size-1, then recursively interleaved.
    let mut order = vec![0usize];
    while order.len() < size {
        let m = order.len() * 2;
        order = order.iter().flat_map(|&s| [s, m - 1 - s]).collect();
    }
    order
        .chunks(2)
        .map(|p| {
            let (a, b) = (p[0], p[1]);
            (a, (b < n).then_some(b))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::HashMap;

    #[test]
    fn combinations_are_complete_and_distinct() {
        let c = combinations(5, 3);
        assert_eq!(c.len(), 10);
        let set: HashSet<_> = c.iter().cloned().collect();
        assert_eq!(set.len(), 10);
        assert!(c.iter().all(|t| t.windows(2).all(|w| w[0] < w[1])));
        assert_eq!(combinations(4, 4), vec![vec![0, 1, 2, 3]]);
    }

    #[test]
    fn every_entrant_sits_in_every_position_equally_often() {
        let tables = combinations(5, 3);
        let fx = fixtures(0, &tables, 4, 7, true);
        let mut count: HashMap<(usize, usize), usize> = HashMap::new();
        for f in &fx {
            for (seat, &e) in f.seats.iter().enumerate() {
                *count.entry((e, seat)).or_default() += 1;
            }
        }
        // Each entrant is in C(4,2) = 6 tables × 4 deals, once per seat each time.
        for e in 0..5 {
            for seat in 0..3 {
                assert_eq!(count[&(e, seat)], 24, "entrant {e} seat {seat}");
            }
        }
        // Every pair meets equally often.
        let mut pairs: HashMap<(usize, usize), usize> = HashMap::new();
        for f in &fx {
            for a in 0..3 {
                for b in a + 1..3 {
                    let (x, y) = (f.seats[a].min(f.seats[b]), f.seats[a].max(f.seats[b]));
                    *pairs.entry((x, y)).or_default() += 1;
                }
            }
        }
        assert!(pairs.values().all(|&n| n == pairs[&(0, 1)]));
        assert_eq!(pairs.len(), 10);
    }

    #[test]
    fn duplicate_deals_share_one_seed_per_deal() {
        let fx = fixtures(0, &[vec![0, 1, 2, 3]], 3, 9, true);
        for deal in fx.chunks(4) {
            assert!(deal.iter().all(|f| f.seed == deal[0].seed));
        }
        assert_ne!(fx[0].seed, fx[4].seed);
        let plain = fixtures(0, &[vec![0, 1, 2, 3]], 3, 9, false);
        assert_ne!(plain[0].seed, plain[1].seed);
    }

    #[test]
    fn swiss_never_pairs_twice_while_avoidable() {
        let n = 8;
        let mut met = HashSet::new();
        // 7 rounds of pairs among 8 entrants can all be new (a round-robin exists).
        for round in 0..7 {
            // Standings change every round; use a rotating order.
            let order: Vec<usize> = (0..n).map(|i| (i * 3 + round) % n).collect();
            let tables = swiss_tables(&order, 2, &met);
            assert_eq!(tables.len(), 4);
            for t in &tables {
                let p = (t[0].min(t[1]), t[0].max(t[1]));
                assert!(met.insert(p), "round {round}: {p:?} met twice");
            }
        }
        // Round 8: every pair has met, so repeats are unavoidable and the pairing still works.
        let tables = swiss_tables(&(0..n).collect::<Vec<_>>(), 2, &met);
        assert_eq!(tables.len(), 4);
    }

    #[test]
    fn brackets_seed_the_best_apart() {
        assert_eq!(bracket(4), vec![(0, Some(3)), (1, Some(2))]);
        let b = bracket(6);
        assert_eq!(b.len(), 4);
        assert_eq!(
            b.iter().filter(|(_, x)| x.is_none()).count(),
            2,
            "two byes for the top seeds"
        );
        assert_eq!(b[0], (0, None));
    }
}
