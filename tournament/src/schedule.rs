//! Fixtures: which entrants sit where, with which deal.
//!
//! Every table of `k` entrants is played on `deals` deals, each deal `k` times with the entrants
//! rotated one seat, so every entrant sits in every position equally often. With duplicate deals
//! the rotations of a deal share one seed, so the same shuffled deck is replayed with the
//! entrants permuted over the seats and the luck of the deal cancels out.
//!
//! Rotations keep the order round the table, and at three seats or more that order matters (who
//! plays after whom: who takes your 7s, who can stop your run). So each deal of a table seats it
//! in the next of its `(k − 1)!` orders round the table ([`table_order`]); over that many deals
//! every entrant sits after every other equally often.

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

/// Mixes numbers into a seed (the SplitMix64 finaliser, [`maumau_engine::seed::mix64`]).
pub fn mix(parts: &[u64]) -> u64 {
    use maumau_engine::seed::{GAMMA, mix64};
    parts.iter().fold(0x6A09_E667_F3BC_C909u64, |h, &p| {
        mix64(h ^ p.wrapping_add(GAMMA))
    })
}

/// A game's seed from the tournament seed and its place in the schedule (or a deal's seed and a
/// seating): the first 8 bytes (big-endian) of SHA-256("maumau game seed" ‖ each part as 8
/// big-endian bytes).
///
/// One-way on purpose: every game's seed is revealed to its seats when it ends, and from an
/// invertible mix (such as [`mix`]) of small, guessable schedule positions a program could work
/// back to the tournament seed, and from it to every deal still to come.
pub fn game_seed(parts: &[u64]) -> u64 {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(b"maumau game seed");
    for p in parts {
        h.update(p.to_be_bytes());
    }
    let digest = h.finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_be_bytes(first)
}

/// The seed of the bot at `seat` in a game dealt from `game_seed`: the SDK's
/// [`maumau_bot_sdk::bots::bot_seed`], the derivation the server uses for the bots it seats, so a
/// game plays the same whether the tournament or the server seats its built-in bots. One-way, so
/// `MAUMAU_SEED` tells an external program nothing about the deal.
pub use maumau_bot_sdk::bots::bot_seed;

/// A tournament seed drawn from the operating system's generator (through the thread-local
/// generator it seeds, should the system call fail): secret until the tournament reveals it.
pub fn random_seed() -> u64 {
    use rand::TryRng;
    rand::rngs::SysRng
        .try_next_u64()
        .unwrap_or_else(|_| rand::random())
}

/// An opaque id for one game played on a server (`g` and 16 hex digits, from the operating
/// system's generator): what its label and `MAUMAU_GAME` show instead of the fixture id, which
/// would tell a program where its game sits in the schedule.
pub fn opaque_game_id() -> String {
    format!("g{:016x}", random_seed())
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
    let mut id = String::new();
    for (t, table) in tables.iter().enumerate() {
        let k = table.len();
        let mut order = table.clone();
        for d in 0..deals {
            let deal_seed = game_seed(&[seed, round as u64, t as u64, d as u64]);
            table_order(table, d as u64, &mut order);
            for r in 0..k {
                // `r{round}-t{t}-d{d}-s{r}`, without the formatting machinery: a big round robin
                // has hundreds of thousands of fixtures.
                id.clear();
                for (tag, n) in [
                    ("r", round as u64),
                    ("-t", t as u64),
                    ("-d", d as u64),
                    ("-s", r as u64),
                ] {
                    id.push_str(tag);
                    push_decimal(&mut id, n);
                }
                out.push(Fixture {
                    id: id.clone(),
                    seats: (0..k).map(|s| order[(s + r) % k]).collect(),
                    seed: if duplicate {
                        deal_seed
                    } else {
                        game_seed(&[deal_seed, r as u64])
                    },
                });
            }
        }
    }
    out
}

/// The `n`-th (modulo `(k − 1)!`) of the orders round a table of `k` entrants, into `order`: the
/// first entrant stays first, the others follow in the `n`-th of their permutations in
/// lexicographic order (the factorial number system). The 0th is `table` itself, so a table of
/// two, which has one order, is always seated as given.
pub fn table_order(table: &[usize], n: u64, order: &mut Vec<usize>) {
    order.clear();
    order.extend_from_slice(table);
    let k = table.len();
    // (k − 1)! fits in a u64 up to k = 21; a table is at most 8 seats (the engine's limit).
    if !(3..=21).contains(&k) {
        return;
    }
    let factorial = |m: usize| (1..=m as u64).product::<u64>();
    let mut n = n % factorial(k - 1);
    // Digit i of n in the factorial base picks which of the entrants left comes next.
    for i in 1..k - 1 {
        let weight = factorial(k - 1 - i);
        let chosen = order.remove(i + (n / weight) as usize);
        order.insert(i, chosen);
        n %= weight;
    }
}

fn push_decimal(s: &mut String, n: u64) {
    s.push_str(itoa::Buffer::new().format(n));
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

/// A knockout at tables of two: single elimination (one loss and you are out) or double
/// elimination (a winners' bracket, a losers' bracket fed by the winners' bracket's losers, and a
/// grand final between the two champions, replayed once if the losers' champion wins it, since
/// the winners' champion had not lost yet).
///
/// Entrants `0..n` are seeded in that order (0 best). The first winners' round pairs 1 vs n,
/// 2 vs n-1, … in bracket order ([`bracket`]), with byes for the top seeds when `n` is not a
/// power of two; later rounds pair neighbours in the bracket. Every round's tables can be played
/// at once: the losers' bracket only takes in losers of earlier rounds. As in the usual bracket
/// it alternates between rounds where its survivors play each other and rounds where they meet
/// the new arrivals from the winners' bracket (in reverse order, to put off rematches).
#[derive(Clone, Debug)]
pub struct Knockout {
    double: bool,
    /// Entrants without a loss, in bracket order.
    winners: Vec<usize>,
    /// Survivors of the losers' bracket, in bracket order.
    survivors: Vec<usize>,
    /// Losers of the winners' bracket waiting for their first losers'-bracket table.
    arrivals: Vec<usize>,
    /// Losses of each entrant.
    losses: Vec<u8>,
    /// The tables handed out by the last [`Knockout::next_round`].
    pending: Vec<(Stage, [usize; 2])>,
    /// Where the winners' and the losers' bracket stand after the pending round, by slot.
    next_winners: Vec<Slot>,
    next_survivors: Vec<Slot>,
    round: u32,
    finals: u8,
    champion: Option<usize>,
}

/// A place in a bracket after a round: an entrant with a bye, or the winner of a pending table.
#[derive(Clone, Copy, Debug)]
enum Slot {
    Bye(usize),
    Table(usize),
}

/// Which part of a knockout a table belongs to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The winners' bracket (the only bracket of a single elimination).
    Winners,
    /// The losers' bracket.
    Losers,
    /// The grand final (and its replay after a reset).
    Final,
}

impl Knockout {
    /// A single-elimination knockout of `n` entrants.
    pub fn single(n: usize) -> Knockout {
        Knockout::new(n, false)
    }

    /// A double-elimination knockout of `n` entrants.
    pub fn double(n: usize) -> Knockout {
        Knockout::new(n, true)
    }

    fn new(n: usize, double: bool) -> Knockout {
        Knockout {
            double,
            winners: (0..n).collect(),
            survivors: Vec::new(),
            arrivals: Vec::new(),
            losses: vec![0; n],
            pending: Vec::new(),
            next_winners: Vec::new(),
            next_survivors: Vec::new(),
            round: 0,
            finals: 0,
            champion: if n == 1 { Some(0) } else { None },
        }
    }

    /// The champion, once the knockout is over.
    pub fn champion(&self) -> Option<usize> {
        self.champion
    }

    /// Losses of each entrant so far.
    pub fn losses(&self) -> &[u8] {
        &self.losses
    }

    /// The tables of the next round, each with its stage; empty when the knockout is over. The
    /// winner of every table must be reported with [`Knockout::record`] before the next call.
    pub fn next_round(&mut self) -> Vec<(Stage, [usize; 2])> {
        assert!(self.pending.is_empty(), "report the last round first");
        if self.champion.is_some() {
            return Vec::new();
        }
        let mut tables: Vec<(Stage, [usize; 2])> = Vec::new();
        let add = |tables: &mut Vec<(Stage, [usize; 2])>, stage, pair| {
            tables.push((stage, pair));
            Slot::Table(tables.len() - 1)
        };
        // The winners' bracket.
        self.next_winners = if self.winners.len() > 1 {
            if self.round == 0 {
                bracket(self.winners.len())
                    .into_iter()
                    .map(|(a, b)| match b {
                        Some(b) => add(
                            &mut tables,
                            Stage::Winners,
                            [self.winners[a], self.winners[b]],
                        ),
                        None => Slot::Bye(self.winners[a]),
                    })
                    .collect()
            } else {
                pair_in_order(&self.winners, |p| add(&mut tables, Stage::Winners, p))
            }
        } else {
            self.winners.iter().map(|&e| Slot::Bye(e)).collect()
        };
        // The losers' bracket.
        self.next_survivors = Vec::new();
        if self.double {
            if self.survivors.is_empty() {
                self.survivors = std::mem::take(&mut self.arrivals);
            }
            let s = std::mem::take(&mut self.survivors);
            self.next_survivors = if !self.arrivals.is_empty() && self.arrivals.len() >= s.len() {
                // The survivors meet as many new arrivals (in reverse order); the rest wait.
                let mut met: Vec<usize> = self.arrivals.drain(..s.len()).collect();
                met.reverse();
                s.iter()
                    .zip(met)
                    .map(|(&a, b)| add(&mut tables, Stage::Losers, [a, b]))
                    .collect()
            } else {
                pair_in_order(&s, |p| add(&mut tables, Stage::Losers, p))
            };
            let last_standing = self.winners.len() == 1
                && s.len() == 1
                && self.arrivals.is_empty()
                && tables.is_empty();
            if last_standing {
                // One entrant left on each side: the grand final.
                self.next_winners.clear();
                self.next_survivors.clear();
                tables.push((Stage::Final, [self.winners[0], s[0]]));
            }
        }
        if tables.is_empty() {
            // Nothing left to play: the last one standing wins.
            self.champion = self.winners.first().copied();
            return Vec::new();
        }
        self.round += 1;
        self.pending = tables.clone();
        tables
    }

    /// Reports the winner of each table of the last round, in the order they were handed out.
    pub fn record(&mut self, winners: &[usize]) {
        assert_eq!(winners.len(), self.pending.len(), "one winner per table");
        let pending = std::mem::take(&mut self.pending);
        for (&(stage, [a, b]), &w) in pending.iter().zip(winners) {
            assert!(w == a || w == b, "the winner sat at the table");
            let l = if w == a { b } else { a };
            self.losses[l] += 1;
            match stage {
                Stage::Winners if self.double => self.arrivals.push(l),
                Stage::Winners | Stage::Losers => {}
                Stage::Final => {
                    self.finals += 1;
                    // The winners' champion `a` wins, or the losers' champion wins the replayed
                    // final: over. The losers' champion winning the first final resets it.
                    if w == a || self.finals == 2 {
                        self.champion = Some(w);
                    } else {
                        self.winners = vec![w];
                        self.survivors = vec![l];
                    }
                    return;
                }
            }
        }
        let resolve = |slots: &[Slot]| -> Vec<usize> {
            slots
                .iter()
                .map(|s| match *s {
                    Slot::Bye(e) => e,
                    Slot::Table(t) => winners[t],
                })
                .collect()
        };
        self.winners = resolve(&self.next_winners);
        self.survivors = resolve(&self.next_survivors);
        if !self.double && self.winners.len() == 1 {
            self.champion = Some(self.winners[0]);
        }
    }
}

/// Pairs a bracket in order, (0, 1), (2, 3), …, through `table`; an odd one out (the first, the
/// best placed) gets a bye. Returns the slots of the next round.
fn pair_in_order(xs: &[usize], mut table: impl FnMut([usize; 2]) -> Slot) -> Vec<Slot> {
    let (byes, rest) = xs.split_at(xs.len() % 2);
    byes.iter()
        .map(|&e| Slot::Bye(e))
        .chain(rest.chunks(2).map(|p| table([p[0], p[1]])))
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
        for (n, k, deals) in [
            (5, 3, 4),
            (2, 2, 3),
            (4, 2, 2),
            (6, 4, 1),
            (7, 5, 2),
            (8, 8, 1),
        ] {
            let tables = combinations(n, k);
            let fx = fixtures(0, &tables, deals, 7, true);
            assert_eq!(fx.len(), tables.len() * deals as usize * k);
            let mut count: HashMap<(usize, usize), usize> = HashMap::new();
            for f in &fx {
                for (seat, &e) in f.seats.iter().enumerate() {
                    *count.entry((e, seat)).or_default() += 1;
                }
            }
            // Each entrant is in C(n−1, k−1) tables × deals, once per seat each time.
            let tables_each = combinations(n - 1, k - 1).len();
            for e in 0..n {
                for seat in 0..k {
                    assert_eq!(
                        count[&(e, seat)],
                        tables_each * deals as usize,
                        "n {n} k {k}: entrant {e} seat {seat}"
                    );
                }
            }
            // Every pair meets equally often.
            let mut pairs: HashMap<(usize, usize), usize> = HashMap::new();
            let mut ordered: HashMap<(usize, usize, usize, usize), usize> = HashMap::new();
            for f in &fx {
                for a in 0..k {
                    for b in 0..k {
                        if a != b {
                            let (x, y) = (f.seats[a], f.seats[b]);
                            if a < b {
                                *pairs.entry((x.min(y), x.max(y))).or_default() += 1;
                            }
                            *ordered.entry((x, y, a, (b + k - a) % k)).or_default() += 1;
                        }
                    }
                }
            }
            assert_eq!(pairs.len(), n * (n - 1) / 2);
            let first = pairs[&(0, 1)];
            assert!(pairs.values().all(|&c| c == first), "n {n} k {k}");
            // Rotations: for any two entrants, how far the second sits after the first is the
            // same at every seat of the first.
            let mut by_gap: HashMap<(usize, usize, usize), Vec<usize>> = HashMap::new();
            for (&(x, y, _, gap), &c) in &ordered {
                by_gap.entry((x, y, gap)).or_default().push(c);
            }
            for ((x, y, gap), cs) in by_gap {
                assert_eq!(cs.len(), k, "n {n} k {k}: {x} then {y} at gap {gap}");
                assert!(cs.iter().all(|&c| c == cs[0]));
            }
        }
    }

    #[test]
    fn the_orders_round_a_table_are_all_there_and_the_first_is_the_table() {
        let mut order = Vec::new();
        for k in 1..=6usize {
            let table: Vec<usize> = (10..10 + k).collect();
            let orders = (1..k.max(1) as u64).product::<u64>();
            let mut seen = HashSet::new();
            for n in 0..orders {
                table_order(&table, n, &mut order);
                assert_eq!(order[0], table[0], "k {k}");
                let mut sorted = order.clone();
                sorted.sort();
                assert_eq!(sorted, table, "k {k}: a permutation");
                seen.insert(order.clone());
            }
            assert_eq!(seen.len() as u64, orders, "k {k}: every order once");
            table_order(&table, 0, &mut order);
            assert_eq!(order, table);
            table_order(&table, orders, &mut order);
            assert_eq!(order, table, "k {k}: the orders repeat");
        }
    }

    #[test]
    fn over_a_cycle_of_deals_everyone_sits_after_everyone_equally_often() {
        // Rotations alone kept the order round the table: at three seats entrant 0 always sat
        // just before entrant 1, whose 7s it never had to take.
        for (n, k) in [(3, 3), (5, 3), (4, 4), (5, 5)] {
            let deals = (1..k as u32).product::<u32>();
            let fx = fixtures(0, &combinations(n, k), deals, 7, true);
            let mut next: HashMap<(usize, usize), usize> = HashMap::new();
            for f in &fx {
                for s in 0..k {
                    *next.entry((f.seats[s], f.seats[(s + 1) % k])).or_default() += 1;
                }
            }
            assert_eq!(next.len(), n * (n - 1), "n {n} k {k}: every ordered pair");
            let first = next[&(0, 1)];
            assert!(next.values().all(|&c| c == first), "n {n} k {k}: {next:?}");
        }
    }

    #[test]
    fn fixture_ids_name_round_table_deal_and_seating() {
        let fx = fixtures(12, &[vec![0, 1], vec![1, 2]], 11, 3, true);
        assert_eq!(fx[0].id, "r12-t0-d0-s0");
        assert_eq!(fx.last().map(|f| f.id.as_str()), Some("r12-t1-d10-s1"));
        let ids: HashSet<&str> = fx.iter().map(|f| f.id.as_str()).collect();
        assert_eq!(ids.len(), fx.len());
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
    fn swiss_tables_of_three_never_repeat_a_pair_while_avoidable() {
        // Nine entrants at tables of three: four rounds can be free of repeats (the lines of the
        // affine plane of order 3), whatever the standings.
        let n = 9;
        let mut met = HashSet::new();
        for round in 0..4 {
            let order: Vec<usize> = (0..n).map(|i| (i * 4 + round * 2) % n).collect();
            let tables = swiss_tables(&order, 3, &met);
            assert_eq!(tables.len(), 3);
            let mut seen = HashSet::new();
            for t in &tables {
                for (i, &a) in t.iter().enumerate() {
                    assert!(seen.insert(a), "round {round}: {a} sits twice");
                    for &b in &t[i + 1..] {
                        let p = (a.min(b), a.max(b));
                        assert!(met.insert(p), "round {round}: {p:?} met twice");
                    }
                }
            }
        }
        assert_eq!(met.len(), 36, "every pair met exactly once");
        // The fifth round must repeat; it still seats everyone.
        let tables = swiss_tables(&(0..n).collect::<Vec<_>>(), 3, &met);
        assert_eq!(tables.concat().len(), 9);
        // With 10 entrants, the lowest ranked sits out.
        let order: Vec<usize> = (0..10).rev().collect();
        let tables = swiss_tables(&order, 3, &HashSet::new());
        assert!(!tables.concat().contains(&0));
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

    type Round = Vec<(Stage, [usize; 2])>;

    /// Plays a knockout to the end with `wins(a, b)` deciding each table; returns every round.
    fn play_out(mut ko: Knockout, wins: impl Fn(usize, usize) -> bool) -> (Knockout, Vec<Round>) {
        let mut rounds = Vec::new();
        loop {
            let tables = ko.next_round();
            if tables.is_empty() {
                return (ko, rounds);
            }
            let winners: Vec<usize> = tables
                .iter()
                .map(|&(_, [a, b])| if wins(a, b) { a } else { b })
                .collect();
            ko.record(&winners);
            rounds.push(tables);
        }
    }

    /// A deterministic pattern of upsets: the better seed wins two pairings in three, depending
    /// on the pair and the seed.
    fn upsets(seed: u64) -> impl Fn(usize, usize) -> bool {
        move |a, b| {
            let upset = mix(&[seed, a.min(b) as u64, a.max(b) as u64]).is_multiple_of(3);
            upset != (a < b)
        }
    }

    #[test]
    fn double_elimination_of_eight_has_the_usual_shape() {
        let (ko, rounds) = play_out(Knockout::double(8), |a, b| a < b);
        let count = |stage| {
            rounds
                .iter()
                .map(|r| r.iter().filter(|(s, _)| *s == stage).count())
                .collect::<Vec<_>>()
        };
        // Winners' bracket 4, 2, 1; losers' bracket 2 (round 2), 2, 1, 1; one final.
        assert_eq!(count(Stage::Winners), vec![4, 2, 1, 0, 0, 0]);
        assert_eq!(count(Stage::Losers), vec![0, 2, 2, 1, 1, 0]);
        assert_eq!(count(Stage::Final), vec![0, 0, 0, 0, 0, 1]);
        assert_eq!(
            ko.champion(),
            Some(0),
            "the best seed wins when the better always wins"
        );
        // Seed 1 lost only to 0 (in the winners' final), came back through the losers' bracket.
        assert_eq!(rounds[5][0].1, [0, 1]);
        assert_eq!(ko.losses()[0], 0);
        assert!(ko.losses()[1..].iter().all(|&l| l == 2));
    }

    #[test]
    fn double_elimination_invariants_hold_for_every_size_and_any_results() {
        for n in 2..=17 {
            for seed in 0..12 {
                let (ko, rounds) = play_out(Knockout::double(n), upsets(seed));
                let champion = ko.champion().expect("a champion");
                let tables: usize = rounds.iter().map(Vec::len).sum();
                let finals = rounds.iter().flatten().filter(|(s, _)| *s == Stage::Final);
                let finals = finals.count();
                // Everyone but the champion is out after exactly two losses; 2n − 2 tables, or
                // one more when the final is replayed.
                for e in 0..n {
                    let l = ko.losses()[e];
                    if e == champion {
                        assert!(l <= 1, "n {n}: the champion lost {l} times");
                    } else {
                        assert_eq!(l, 2, "n {n} seed {seed}: entrant {e} lost {l} times");
                    }
                }
                assert!(finals == 1 || finals == 2);
                assert_eq!(tables, 2 * n - 2 + (finals - 1), "n {n} seed {seed}");
                // Nobody sits twice in one round, and nobody plays after a second loss.
                let mut losses = vec![0u8; n];
                for round in &rounds {
                    let mut seen = HashSet::new();
                    for &(_, [a, b]) in round {
                        assert!(seen.insert(a) && seen.insert(b), "n {n}: twice in a round");
                        assert!(
                            losses[a] < 2 && losses[b] < 2,
                            "n {n}: eliminated player plays"
                        );
                    }
                    let wins = upsets(seed);
                    for &(_, [a, b]) in round {
                        losses[if wins(a, b) { b } else { a }] += 1;
                    }
                }
            }
        }
    }

    #[test]
    fn the_losers_champion_winning_the_final_forces_a_second_one() {
        // Better seeds win in the brackets (so 0 meets 1 in the final); then 1 wins the first
        // final and `second` decides the replay.
        for second in [1, 0] {
            let mut ko = Knockout::double(4);
            let mut finals = Vec::new();
            loop {
                let tables = ko.next_round();
                if tables.is_empty() {
                    break;
                }
                let winners: Vec<usize> = tables
                    .iter()
                    .map(|&(stage, [a, b])| match stage {
                        Stage::Final => {
                            finals.push([a, b]);
                            if finals.len() == 1 { 1 } else { second }
                        }
                        _ => a.min(b),
                    })
                    .collect();
                ko.record(&winners);
            }
            assert_eq!(
                finals,
                vec![[0, 1], [1, 0]],
                "the replay is the same pairing"
            );
            assert_eq!(ko.champion(), Some(second));
            assert_eq!(ko.losses()[second], 1);
            assert_eq!(ko.losses()[1 - second], 2);
        }
    }

    #[test]
    fn single_elimination_keeps_bracket_order_after_byes() {
        // 6 entrants: seeds 0 and 1 have byes; 0 must meet the winner of 3 v 4, 1 the winner of
        // 2 v 5, as the bracket is drawn.
        let mut ko = Knockout::single(6);
        let r0 = ko.next_round();
        assert_eq!(
            r0.iter().map(|(_, t)| *t).collect::<Vec<_>>(),
            vec![[3, 4], [2, 5]]
        );
        ko.record(&[4, 2]);
        let r1: Vec<[usize; 2]> = ko.next_round().iter().map(|(_, t)| *t).collect();
        assert_eq!(r1, vec![[0, 4], [1, 2]]);
        ko.record(&[0, 2]);
        assert_eq!(ko.next_round()[0].1, [0, 2]);
        ko.record(&[2]);
        assert_eq!(ko.champion(), Some(2));
        assert!(ko.next_round().is_empty());
        for n in 2..=17 {
            let (ko, rounds) = play_out(Knockout::single(n), upsets(n as u64));
            let tables: usize = rounds.iter().map(Vec::len).sum();
            assert_eq!(tables, n - 1, "one table per eliminated entrant");
            let out = ko.losses().iter().filter(|&&l| l == 1).count();
            assert_eq!(out, n - 1);
            assert_eq!(ko.losses()[ko.champion().unwrap()], 0);
        }
    }
}
