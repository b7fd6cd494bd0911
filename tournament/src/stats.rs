//! Standings: Weng-Lin (OpenSkill) ratings from placings, per-entrant figures with their 95%
//! confidence intervals, and pairwise comparisons that use the duplicate design.
//!
//! **Pairwise comparisons.** Every deal of a table is played once per seating: a *block*, the
//! games `r…-t…-d…-s0` to `-s{k−1}`, in which the luck of the deal falls on every entrant alike.
//! For each pair of entrants and each block where both sat, the *placing gain* is how many places
//! the first finished above the second, averaged over the block's games. Placings, not totals:
//! placings are what the tournament ranks by and Weng-Lin rates, they are bounded and mean the
//! same in every profile, while a total's scale and direction change with the profile and its
//! tail is long (the mean total difference is reported beside it, without an interval).
//!
//! The gain's 95% interval is a paired bootstrap over the blocks: [`BOOTSTRAP_RESAMPLES`]
//! resamples of the blocks with replacement, drawn from a generator seeded with the tournament
//! seed and the pair, so a report is reproducible. The percentile interval is widened about the
//! mean by √(n/(n−1))·t₀.₉₇₅(n−1)/z₀.₉₇₅, Hesterberg's small-sample expansion ("What teachers
//! should know about the bootstrap", 2015), which keeps it near 95% with few blocks. Above
//! [`BOOTSTRAP_MAX_BLOCKS`] blocks the t interval is used instead: the bootstrap of a mean of so
//! many bounded values agrees with it to within its own resampling noise, and would cost
//! n × resamples draws per pair. This *direct* gain is reported for every pair that met; it does
//! not decide who is separable.
//!
//! **The strength model** ([`strength_differences`]) decides it, because it uses the blocks a
//! pair did not share too (a pair meets in a tenth of the games or fewer): one strength per
//! entrant, fitted by least squares on every block's placing gains (gain ≈ s_a − s_b), with each
//! difference's 95% interval from a bootstrap that resamples whole blocks (which keeps the
//! duplicate structure), widened for few blocks as above. Two entrants that a chain of blocks
//! joins are *separable* when the tournament has at least [`MIN_BLOCKS`] blocks and the model's
//! interval excludes zero. At 1,280 games of the truth benchmark it separates 3.32 of 4 true
//! neighbours against the direct test's 2.14, at the same 4.4% false separations.
//!
//! **Ranks.** Entrants are ordered by Weng-Lin μ. Neighbours in that order share a rank only when
//! no two of the group are separable, so a chain of ties can never join two entrants that are
//! separable from each other (the last with the first, say). Entrants no chain of blocks joins
//! fall back to the direct test when they shared a block, else to their Weng-Lin intervals
//! (Swiss, knockouts without seatings); an entrant that forfeited every
//! game it played is separable from every entrant that did not (its losses are by rule, not by
//! the run of the cards).

use std::collections::HashMap;

use maumau_engine::outcome::MAX_SEATS;
use maumau_engine::seed::{GAMMA, SplitMix64};
// The workspace's Weng-Lin wrapper: one place where skillratings is called, for the ladder and
// the tournament alike.
use maumau_rating::{Rating, WengLinConfig, update_table, update_two};
use serde::{Deserialize, Serialize};

/// The result of one finished game.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct GameRecord {
    /// The fixture id.
    pub id: String,
    /// The match seed.
    pub seed: u64,
    /// Entrant index at each seat.
    pub seats: Vec<usize>,
    /// Placing of each seat (1 is best; ties share).
    pub placings: Vec<u8>,
    /// Final total of each seat.
    pub totals: Vec<i32>,
    /// Rounds played.
    pub rounds: u16,
    /// Actions applied.
    pub actions: u32,
    /// Seats that forfeited (over gRPC: their bot crashed, left or timed out too often, and the
    /// server placed them last). Empty in-process.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub forfeits: Vec<u8>,
    /// The opaque id the game was played under on the server: its match label and the
    /// `MAUMAU_GAME` of its programs show this, never the fixture id (empty in-process). This
    /// record is the only place that maps it to the schedule.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub game: String,
    /// The server's match id (empty in-process).
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub match_id: String,
    /// Each seat's decision times as `[decisions timed, median ns, longest ns]` (see
    /// [`DecisionTimes`]); empty when no decision was timed (in-process games of bots that
    /// answer from the legal actions alone).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub decision_ns: Vec<[u64; 3]>,
}

/// How long a seat, or an entrant, took to decide. In-process, every decision that needed the
/// observation is timed (a random bot's answers from the legal actions alone are not); over gRPC
/// the server times every prompt to its accepted action, in whole milliseconds. An entrant's
/// median is the median over its games of each game's median.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionTimes {
    /// Decisions timed (0: none were).
    pub decisions: u64,
    /// The median decision, in nanoseconds.
    pub median_ns: u64,
    /// The longest decision, in nanoseconds.
    pub max_ns: u64,
}

impl DecisionTimes {
    /// The figures of one seat's timed decisions (nanoseconds; sorted in place).
    pub fn of(times: &mut [u64]) -> DecisionTimes {
        times.sort_unstable();
        DecisionTimes {
            decisions: times.len() as u64,
            median_ns: times.get(times.len() / 2).copied().unwrap_or(0),
            max_ns: times.last().copied().unwrap_or(0),
        }
    }

    /// As a `results.jsonl` triple.
    pub fn to_record(self) -> [u64; 3] {
        [self.decisions, self.median_ns, self.max_ns]
    }
}

/// A mean with the half-width of its 95% confidence interval.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Estimate {
    /// The mean.
    pub mean: f64,
    /// Half-width of the 95% interval (normal approximation).
    pub ci95: f64,
}

impl Estimate {
    /// The estimate of a sample's mean.
    pub fn of(xs: &[f64]) -> Estimate {
        let n = xs.len() as f64;
        if xs.is_empty() {
            return Estimate::default();
        }
        let mean = xs.iter().sum::<f64>() / n;
        let var = if xs.len() > 1 {
            xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0)
        } else {
            0.0
        };
        Estimate {
            mean,
            ci95: 1.96 * (var / n).sqrt(),
        }
    }

    fn separated_from(&self, other: &Estimate) -> bool {
        (self.mean - other.mean).abs() > self.ci95 + other.ci95
    }
}

/// Fewest blocks two entrants must share before they can be separated. Below 6, even a
/// unanimous result (every block won by the same one) is not significant at 5% by the exact
/// sign-flip test (its p-value is 2/2ⁿ: 6.25% with five blocks); and with 8 blocks the truth
/// benchmark measured the bootstrap separating 9–11% of equal-strength pairs (about 5% from 16
/// blocks on), so a few more are asked for.
pub const MIN_BLOCKS: usize = 10;

/// Resamples of the paired bootstrap.
pub const BOOTSTRAP_RESAMPLES: usize = 2000;

/// Most blocks a pair's bootstrap resamples; beyond, the t interval (see the module docs).
pub const BOOTSTRAP_MAX_BLOCKS: usize = 1000;

/// z₀.₉₇₅, the normal quantile of a two-sided 95% interval.
const Z975: f64 = 1.959_964;

/// One line of the standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    /// 1 for the best; entrants of a group no two of which are separable share a rank.
    pub rank: usize,
    /// True when it shares its rank with another entrant.
    pub tied: bool,
    /// Entrant name.
    pub name: String,
    /// Games played.
    pub games: usize,
    /// Weng-Lin rating: μ with ±1.96σ.
    pub rating: Estimate,
    /// μ − 3σ, the conservative score.
    pub conservative: f64,
    /// Share of games won (shared wins split).
    pub win_share: Estimate,
    /// Mean placing (1 is best).
    pub placing: Estimate,
    /// Mean final total per game (penalty points, or points in romanian-32).
    pub score: Estimate,
    /// Games it forfeited.
    pub forfeits: usize,
    /// How long it took to decide (`decisions` 0 when no decision of it was timed).
    pub decision_times: DecisionTimes,
}

/// A mean with a 95% interval that need not be symmetric.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Interval {
    /// The mean.
    pub mean: f64,
    /// Lower end of the 95% interval (−∞ with fewer than two values).
    pub low: f64,
    /// Upper end of the 95% interval (+∞ with fewer than two values).
    pub high: f64,
}

impl Interval {
    /// True when zero lies in the interval: no difference is among the plausible values.
    pub fn includes_zero(&self) -> bool {
        self.low <= 0.0 && self.high >= 0.0
    }

    /// The same interval for the negated quantity.
    pub fn negated(self) -> Interval {
        Interval {
            mean: -self.mean,
            low: -self.high,
            high: -self.low,
        }
    }
}

/// How two entrants did at the tables where both sat.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// First entrant.
    pub a: String,
    /// Second entrant.
    pub b: String,
    /// Games both played.
    pub games: usize,
    /// Duplicate blocks (a deal played once per seating) both played.
    pub blocks: usize,
    /// Share of those games where `a` placed above `b` (ties count half).
    pub a_ahead: f64,
    /// Places `a` finished above `b` per game, averaged per block, with the 95% interval of the
    /// paired bootstrap over blocks (see the module docs), kept within the possible gains
    /// (±(seats − 1)). Positive: `a` did better.
    pub gain: Interval,
    /// The strength model's difference `s_a − s_b` (in the same places per game) with its 95%
    /// interval from the bootstrap over whole blocks (see the module docs), kept within the
    /// possible gains (all of them with fewer than two blocks).
    #[serde(default)]
    pub model: Interval,
    /// True when the strength model's interval excludes zero and the tournament has at least
    /// [`MIN_BLOCKS`] blocks; for a pair no chain of blocks joins, when the direct gain's
    /// interval excludes zero over at least [`MIN_BLOCKS`] shared blocks.
    pub separable: bool,
    /// `a`'s final total minus `b`'s per game, over the same games (better when lower under
    /// penalty scoring, when higher in romanian-32).
    pub score_diff: f64,
}

impl PairResult {
    /// This pair as `name` sees it (`name` first), if `name` is one of the two.
    pub fn seen_from(&self, name: &str) -> Option<PairResult> {
        if self.a == name {
            Some(self.clone())
        } else if self.b == name {
            Some(PairResult {
                a: self.b.clone(),
                b: self.a.clone(),
                a_ahead: 1.0 - self.a_ahead,
                gain: self.gain.negated(),
                model: self.model.negated(),
                score_diff: -self.score_diff,
                ..self.clone()
            })
        } else {
            None
        }
    }
}

/// The 95% interval of the mean of `xs` by the paired bootstrap (widened for small samples;
/// the t interval above [`BOOTSTRAP_MAX_BLOCKS`] values); the resamples are drawn from `seed`.
pub fn paired_interval(xs: &[f64], seed: u64) -> Interval {
    let n = xs.len();
    let mean = xs.iter().sum::<f64>() / n.max(1) as f64;
    if n < 2 {
        return Interval {
            mean,
            low: f64::NEG_INFINITY,
            high: f64::INFINITY,
        };
    }
    let nf = n as f64;
    let t = t975(n - 1);
    if n > BOOTSTRAP_MAX_BLOCKS {
        let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (nf - 1.0);
        let half = t * (var / nf).sqrt();
        return Interval {
            mean,
            low: mean - half,
            high: mean + half,
        };
    }
    let mut rng = SplitMix64::new(seed);
    let mut means: Vec<f64> = (0..BOOTSTRAP_RESAMPLES)
        .map(|_| {
            let mut sum = 0.0;
            for _ in 0..n {
                // Lemire's multiply-shift: an index below n from 32 random bits.
                let i = (((rng.next_u64() >> 32) * n as u64) >> 32) as usize;
                sum += xs[i];
            }
            sum / nf
        })
        .collect();
    means.sort_by(f64::total_cmp);
    let lo = means[BOOTSTRAP_RESAMPLES * 25 / 1000];
    let hi = means[BOOTSTRAP_RESAMPLES * 975 / 1000 - 1];
    let stretch = (nf / (nf - 1.0)).sqrt() * t / Z975;
    Interval {
        mean,
        low: mean - stretch * (mean - lo),
        high: mean + stretch * (hi - mean),
    }
}

/// One block's placing gains: `(a, b, places per game a finished above b)` for every pair that
/// sat in it.
pub type BlockGains = Vec<(usize, usize, f64)>;

/// The blocks as the strength model's least squares see them. A block enters the normal
/// equations `L s = r` only through the pairs that sat in it (its *shape*: each pair adds its
/// weight to four entries of the Laplacian `L`) and, per entrant, the sum of its gains over the
/// others in it (its part of `r`). Blocks that agree on both make one *class*, and a fit with
/// block weights needs only each class's total weight: a bootstrap refit costs one pass over the
/// classes and the shapes, not over every pair of every block. The blocks keep their order, so
/// a resample that draws block indices draws the very blocks it drew before.
#[derive(Clone, Debug, Default)]
pub(crate) struct StrengthData {
    n: usize,
    /// Each shape's pairs, `(a, b)` with a < b, sorted (a pair twice in a block is there twice).
    shapes: Vec<Vec<(usize, usize)>>,
    shape_ids: HashMap<Vec<(usize, usize)>, u32>,
    /// Each class: its shape and its part of `r`.
    classes: Vec<Class>,
    /// A class's key: its shape, then each entrant of its `r` with the bits of its sum.
    class_ids: HashMap<Vec<u64>, u32>,
    /// Each block's class, in block order.
    block_class: Vec<u32>,
    /// How many blocks each class has.
    class_blocks: Vec<u32>,
    /// Scratch for `push`.
    pairs: Vec<(usize, usize)>,
    sums: Vec<(usize, f64)>,
    key: Vec<u64>,
}

/// Blocks that add the same pairs to the Laplacian and the same sums to the right-hand side.
#[derive(Clone, Debug)]
struct Class {
    shape: u32,
    /// `(entrant, sum of its gains over the others)`, by entrant.
    sums: Vec<(usize, f64)>,
}

/// The scratch space of a fit, reused by every refit of a bootstrap.
#[derive(Default)]
struct Fit {
    l: Vec<f64>,
    s: Vec<f64>,
    group: Vec<usize>,
    shape_weight: Vec<f64>,
}

impl StrengthData {
    /// No blocks yet, among `n` entrants.
    pub(crate) fn new(n: usize) -> StrengthData {
        StrengthData {
            n,
            ..StrengthData::default()
        }
    }

    /// The blocks given, in order.
    fn of(n: usize, blocks: &[BlockGains]) -> StrengthData {
        let mut data = StrengthData::new(n);
        for block in blocks {
            data.push(block.iter().copied());
        }
        data
    }

    /// Blocks so far.
    pub(crate) fn blocks(&self) -> usize {
        self.block_class.len()
    }

    /// Adds the next block: `(a, b, gain of a over b)` for every pair that sat in it. A pair of
    /// an entrant with itself adds nothing.
    pub(crate) fn push(&mut self, gains: impl Iterator<Item = (usize, usize, f64)>) {
        self.pairs.clear();
        self.sums.clear();
        for (a, b, g) in gains {
            if a == b || a >= self.n || b >= self.n {
                continue;
            }
            self.pairs.push((a.min(b), a.max(b)));
            for (e, x) in [(a, g), (b, -g)] {
                match self.sums.iter_mut().find(|(f, _)| *f == e) {
                    Some((_, sum)) => *sum += x,
                    None => self.sums.push((e, x)),
                }
            }
        }
        self.pairs.sort_unstable();
        self.sums.sort_unstable_by_key(|&(e, _)| e);
        let shape = match self.shape_ids.get(self.pairs.as_slice()) {
            Some(&id) => id,
            None => {
                let id = self.shapes.len() as u32;
                self.shapes.push(self.pairs.clone());
                self.shape_ids.insert(self.pairs.clone(), id);
                id
            }
        };
        self.key.clear();
        self.key.push(u64::from(shape));
        for &(e, x) in &self.sums {
            // +0.0 and −0.0 add the same.
            self.key.extend([e as u64, (x + 0.0).to_bits()]);
        }
        let class = match self.class_ids.get(self.key.as_slice()) {
            Some(&id) => id,
            None => {
                let id = self.classes.len() as u32;
                self.classes.push(Class {
                    shape,
                    sums: self.sums.clone(),
                });
                self.class_ids.insert(self.key.clone(), id);
                self.class_blocks.push(0);
                id
            }
        };
        self.class_blocks[class as usize] += 1;
        self.block_class.push(class);
    }

    /// The strength model: `s` minimising Σ (gain − (s_a − s_b))² over every pair of every
    /// block, the blocks of class c weighted by `weights[c]`, each connected group of entrants
    /// summing to zero. Left in `fit.s`.
    fn fit(&self, weights: &[u32], fit: &mut Fit) {
        let n = self.n;
        // Normal equations L s = r, L the weighted Laplacian of who met whom; adding 1 1ᵀ over
        // each connected group makes L invertible and fixes each group's sum at zero (its r
        // sums to zero).
        let Fit {
            l,
            s: r,
            group,
            shape_weight,
        } = fit;
        l.clear();
        l.resize(n * n, 0.0);
        r.clear();
        r.resize(n, 0.0);
        group.clear();
        group.extend(0..n);
        shape_weight.clear();
        shape_weight.resize(self.shapes.len(), 0.0);
        for (class, &w) in self.classes.iter().zip(weights) {
            if w == 0 {
                continue;
            }
            let w = f64::from(w);
            shape_weight[class.shape as usize] += w;
            for &(e, sum) in &class.sums {
                r[e] += w * sum;
            }
        }
        fn root(group: &mut [usize], mut e: usize) -> usize {
            while group[e] != e {
                group[e] = group[group[e]];
                e = group[e];
            }
            e
        }
        for (pairs, &w) in self.shapes.iter().zip(shape_weight.iter()) {
            if w == 0.0 {
                continue;
            }
            for &(a, b) in pairs {
                l[a * n + a] += w;
                l[b * n + b] += w;
                l[a * n + b] -= w;
                l[b * n + a] -= w;
                let (ra, rb) = (root(group, a), root(group, b));
                group[ra] = rb;
            }
        }
        for e in 0..n {
            group[e] = root(group, e);
        }
        for a in 0..n {
            for b in 0..n {
                if group[a] == group[b] {
                    l[a * n + b] += 1.0;
                }
            }
        }
        // Cholesky (L + the groups' 1 1ᵀ is symmetric positive definite), then the two solves.
        for j in 0..n {
            for k in 0..j {
                let f = l[j * n + k];
                for i in j..n {
                    l[i * n + j] -= l[i * n + k] * f;
                }
            }
            let d = l[j * n + j].max(f64::MIN_POSITIVE).sqrt();
            for i in j..n {
                l[i * n + j] /= d;
            }
        }
        for i in 0..n {
            let s: f64 = (0..i).map(|k| l[i * n + k] * r[k]).sum();
            r[i] = (r[i] - s) / l[i * n + i];
        }
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|k| l[k * n + i] * r[k]).sum();
            r[i] = (r[i] - s) / l[i * n + i];
        }
    }

    /// [`strength_differences`] of these blocks.
    pub(crate) fn differences(&self, seed: u64) -> Vec<Interval> {
        let (n, nb) = (self.n, self.blocks());
        let mut fit = Fit::default();
        self.fit(&self.class_blocks, &mut fit);
        let s = fit.s.clone();
        let mut out: Vec<Interval> = (0..n * n)
            .map(|i| Interval {
                mean: s[i / n] - s[i % n],
                low: f64::NEG_INFINITY,
                high: f64::INFINITY,
            })
            .collect();
        if nb < 2 {
            return out;
        }
        // Which entrants a chain of blocks joins.
        let mut joined = vec![false; n * n];
        {
            let mut group: Vec<usize> = (0..n).collect();
            let find = |group: &mut Vec<usize>, mut e: usize| {
                while group[e] != e {
                    e = group[e];
                }
                e
            };
            for &(a, b) in self.shapes.iter().flatten() {
                let (ra, rb) = (find(&mut group, a), find(&mut group, b));
                group[ra] = rb;
            }
            for a in 0..n {
                for b in 0..n {
                    joined[a * n + b] = find(&mut group, a) == find(&mut group, b);
                }
            }
        }
        if self.classes.len() == 1 {
            // Every block alike (mirrored bots under duplicate deals, say): every resample is
            // the whole tournament again and fits the point estimate, so each interval is that
            // point, as the bootstrap would find after its 2,000 refits.
            for a in 0..n {
                for b in a + 1..n {
                    if joined[a * n + b] {
                        let d = &mut out[a * n + b];
                        (d.low, d.high) = (d.mean, d.mean);
                    }
                }
            }
            return out;
        }
        // The joined pairs' differences, resample by resample. Resample k draws from the
        // generator as it stands after the k·nb outputs of the resamples before it
        // (SplitMix64's state is its seed plus a multiple of GAMMA), so the resamples can be
        // shared among threads and still be the very same, whatever the number of threads.
        let pairs: Vec<(usize, usize)> = (0..n)
            .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
            .filter(|&(a, b)| joined[a * n + b])
            .collect();
        let outputs = nb as u64;
        let resamples = |range: std::ops::Range<usize>| -> Vec<f64> {
            let mut rng = SplitMix64::new(
                seed.wrapping_add(
                    (range.start as u64)
                        .wrapping_mul(outputs)
                        .wrapping_mul(GAMMA),
                ),
            );
            let mut fit = Fit::default();
            let mut weights = vec![0u32; self.classes.len()];
            let mut diffs = Vec::with_capacity(range.len() * pairs.len());
            let block_class = self.block_class.as_slice();
            for _ in range {
                weights.iter_mut().for_each(|c| *c = 0);
                resample(&mut rng, nb, |block| {
                    if let Some(w) = block_class
                        .get(block)
                        .and_then(|&c| weights.get_mut(c as usize))
                    {
                        *w += 1;
                    }
                });
                self.fit(&weights, &mut fit);
                diffs.extend(pairs.iter().map(|&(a, b)| fit.s[a] - fit.s[b]));
            }
            diffs
        };
        // Threads only where the draws take milliseconds.
        let threads = if nb * BOOTSTRAP_RESAMPLES >= 1 << 20 {
            std::thread::available_parallelism().map_or(1, |t| t.get().min(8))
        } else {
            1
        };
        let chunk = BOOTSTRAP_RESAMPLES.div_ceil(threads);
        let ranges = (0..threads).map(|t| t * chunk..((t + 1) * chunk).min(BOOTSTRAP_RESAMPLES));
        let by_resample: Vec<f64> = if threads == 1 {
            resamples(0..BOOTSTRAP_RESAMPLES)
        } else {
            std::thread::scope(|scope| {
                let workers: Vec<_> = ranges
                    .map(|range| scope.spawn(|| resamples(range)))
                    .collect();
                workers
                    .into_iter()
                    .flat_map(|w| w.join().unwrap_or_else(|p| std::panic::resume_unwind(p)))
                    .collect()
            })
        };
        let mut diffs = vec![Vec::new(); n * n];
        for (i, &(a, b)) in pairs.iter().enumerate() {
            diffs[a * n + b] = by_resample
                .iter()
                .skip(i)
                .step_by(pairs.len())
                .copied()
                .collect();
        }
        let nf = nb as f64;
        let stretch = (nf / (nf - 1.0)).sqrt() * t975(nb - 1) / Z975;
        for (i, d) in diffs.iter_mut().enumerate() {
            if d.len() != BOOTSTRAP_RESAMPLES {
                continue;
            }
            d.sort_by(f64::total_cmp);
            let (lo, hi) = (
                d[BOOTSTRAP_RESAMPLES * 25 / 1000],
                d[BOOTSTRAP_RESAMPLES * 975 / 1000 - 1],
            );
            let mean = out[i].mean;
            out[i].low = mean - stretch * (mean - lo);
            out[i].high = mean + stretch * (hi - mean);
        }
        out
    }
}

/// The blocks of one bootstrap resample: `nb` block indices drawn uniformly with replacement,
/// each handed to `draw`, one from each 64 random bits (Lemire's multiply-shift: an index below
/// nb from the top 32 bits).
fn resample(rng: &mut SplitMix64, nb: usize, mut draw: impl FnMut(usize)) {
    let n = nb as u64;
    for _ in 0..nb {
        draw((((rng.next_u64() >> 32) * n) >> 32) as usize);
    }
}

/// The strength model's differences `s_a − s_b` (see the module docs) with their 95% intervals,
/// at `[a * n + b]` for a < b: least squares on every block's placing gains, the interval from a
/// bootstrap that resamples whole blocks ([`BOOTSTRAP_RESAMPLES`] times, drawn from `seed`),
/// widened for few blocks as [`paired_interval`] is. Entrants no chain of blocks joins get no
/// interval (±∞).
pub fn strength_differences(n: usize, blocks: &[BlockGains], seed: u64) -> Vec<Interval> {
    StrengthData::of(n, blocks).differences(seed)
}

/// Student's t quantile t₀.₉₇₅ with `df` degrees of freedom: exact to three decimals up to 10,
/// then the Cornish-Fisher expansion about z (within 0.001 from there on).
fn t975(df: usize) -> f64 {
    const TABLE: [f64; 10] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
    ];
    match df {
        0 => f64::INFINITY,
        1..=10 => TABLE[df - 1],
        _ => {
            let (z, v) = (Z975, df as f64);
            z + (z.powi(3) + z) / (4.0 * v)
                + (5.0 * z.powi(5) + 16.0 * z.powi(3) + 3.0 * z) / (96.0 * v * v)
        }
    }
}

/// The block of a game: its id without the seating (`r0-t3-d17-s1` → `r0-t3-d17`); `None` for
/// an id without one, which is a block of its own.
fn block_of(id: &str) -> Option<&str> {
    let (head, seating) = id.rsplit_once("-s")?;
    (!seating.is_empty() && seating.bytes().all(|b| b.is_ascii_digit())).then_some(head)
}

/// A running count, sum and sum of squares, so standings keep no per-game samples. Placings,
/// totals and pair scores are integers or halves, which these sums hold exactly.
#[derive(Clone, Copy, Debug, Default)]
struct Moments {
    n: usize,
    sum: f64,
    squares: f64,
}

impl Moments {
    fn add(&mut self, x: f64) {
        self.n += 1;
        self.sum += x;
        self.squares += x * x;
    }

    /// The same figures as [`Estimate::of`] over the samples added.
    fn estimate(&self) -> Estimate {
        if self.n == 0 {
            return Estimate::default();
        }
        let n = self.n as f64;
        let mean = self.sum / n;
        let var = if self.n > 1 {
            ((self.squares - self.sum * mean) / (n - 1.0)).max(0.0)
        } else {
            0.0
        };
        Estimate {
            mean,
            ci95: 1.96 * (var / n).sqrt(),
        }
    }
}

/// Standings and pair results from the games, rated in the order given. Each game is one
/// Weng-Lin update (skillratings, Bradley-Terry with full pairing; every seat a one-player team
/// ranked by its placing, equal placings a tie). `seed` (the tournament's) seeds the pairs'
/// bootstrap.
pub fn standings(
    names: &[String],
    games: &[GameRecord],
    seed: u64,
) -> (Vec<Standing>, Vec<PairResult>) {
    let mut tally = Tally::new(names.len(), seed);
    for g in games {
        tally.add(g);
    }
    tally.standings(names)
}

/// A pair's sums over the games of the block being read.
#[derive(Clone, Copy, Debug)]
struct BlockSums {
    /// The pair, first < second.
    a: usize,
    b: usize,
    /// Sum of placings `a` finished above `b`.
    gain: f64,
    /// Sum of `a`'s total minus `b`'s.
    score: f64,
    games: u32,
}

/// Standings built one game at a time, so a tournament rates games while later ones are still
/// being played: `Tally::add` every game in schedule order, then [`Tally::standings`] gives what
/// [`standings`] gives for those games. The games of a block must come one after another (they
/// do in schedule order).
#[derive(Clone, Debug)]
pub struct Tally {
    n: usize,
    seed: u64,
    config: WengLinConfig,
    ratings: Vec<Rating>,
    wins: Vec<Moments>,
    placings: Vec<Moments>,
    scores: Vec<Moments>,
    forfeits: Vec<usize>,
    /// Per entrant: the median decision time of each game with timed decisions, the longest
    /// decision and the decisions timed.
    decision_medians: Vec<Vec<u64>>,
    decision_max: Vec<u64>,
    decisions: Vec<u64>,
    /// pairs[a * n + b]: how `a` did against `b` at the tables where both sat.
    pairs: Vec<Moments>,
    /// The block being read (its games so far are in `open`).
    block: String,
    open: Vec<BlockSums>,
    /// blocks[a * n + b], a < b: every finished block's mean (placing gain of `a` over `b`,
    /// `a`'s total minus `b`'s).
    blocks: Vec<Vec<[f64; 2]>>,
    /// Every finished block's placing gains, for the strength model.
    model: StrengthData,
    /// The most seats of any table: a placing gain lies within ±(seats − 1).
    seats: usize,
}

impl Tally {
    /// Nothing rated yet, for `entrants` entrants; `seed` (the tournament's) seeds the pairs'
    /// bootstrap.
    pub fn new(entrants: usize, seed: u64) -> Tally {
        let n = entrants;
        Tally {
            n,
            seed,
            config: WengLinConfig::new(),
            ratings: vec![Rating::default(); n],
            wins: vec![Moments::default(); n],
            placings: vec![Moments::default(); n],
            scores: vec![Moments::default(); n],
            forfeits: vec![0; n],
            decision_medians: vec![Vec::new(); n],
            decision_max: vec![0; n],
            decisions: vec![0; n],
            pairs: vec![Moments::default(); n * n],
            block: String::new(),
            open: Vec::new(),
            blocks: vec![Vec::new(); n * n],
            model: StrengthData::new(n),
            seats: 2,
        }
    }

    /// Rates one more game.
    pub fn add(&mut self, g: &GameRecord) {
        let (n, config) = (self.n, &self.config);
        let ratings = &mut self.ratings;
        let k = g.seats.len().min(g.placings.len()).min(g.totals.len());
        let (seats, places) = (&g.seats[..k], &g.placings[..k]);
        if seats.iter().any(|&e| e >= n) {
            return;
        }
        if k == 2 {
            // Two seats: the one-on-one update, the same figures without the allocations.
            let (mut a, mut b) = (ratings[seats[0]], ratings[seats[1]]);
            update_two(config, &mut a, &mut b, [places[0], places[1]]);
            ratings[seats[0]] = a;
            ratings[seats[1]] = b;
        } else if k > 2 {
            let mut table = [Rating::default(); MAX_SEATS];
            let k = k.min(MAX_SEATS);
            for (r, &e) in table.iter_mut().zip(seats) {
                *r = ratings[e];
            }
            update_table(config, &mut table[..k], &places[..k]);
            for (r, &e) in table.iter().zip(seats) {
                ratings[e] = *r;
            }
        }
        self.seats = self.seats.max(k);
        let firsts = places.iter().filter(|&&p| p == 1).count().max(1) as f64;
        for &s in &g.forfeits {
            if let Some(&e) = seats.get(s as usize) {
                self.forfeits[e] += 1;
            }
        }
        for (&e, times) in seats.iter().zip(&g.decision_ns) {
            let [decisions, median, max] = *times;
            if decisions > 0 {
                self.decision_medians[e].push(median);
                self.decision_max[e] = self.decision_max[e].max(max);
                self.decisions[e] += decisions;
            }
        }
        for (seat, &e) in seats.iter().enumerate() {
            let p = places[seat];
            self.wins[e].add(if p == 1 { 1.0 / firsts } else { 0.0 });
            self.placings[e].add(p as f64);
            self.scores[e].add(g.totals[seat] as f64);
            for (other, &f) in seats.iter().enumerate() {
                if f != e {
                    let q = places[other];
                    self.pairs[e * n + f].add(if p < q {
                        1.0
                    } else if p == q {
                        0.5
                    } else {
                        0.0
                    });
                }
            }
        }
        // The game's block: a new one closes the one before.
        let key = block_of(&g.id);
        if !matches!(key, Some(key) if key == self.block && !self.open.is_empty()) {
            self.close_block();
            self.block.clear();
            self.block.push_str(key.unwrap_or_default());
        }
        for i in 0..k {
            for j in 0..k {
                let (a, b) = (seats[i], seats[j]);
                if a >= b {
                    continue;
                }
                let gain = f64::from(places[j]) - f64::from(places[i]);
                let score = f64::from(g.totals[i]) - f64::from(g.totals[j]);
                match self.open.iter_mut().find(|s| s.a == a && s.b == b) {
                    Some(s) => {
                        s.gain += gain;
                        s.score += score;
                        s.games += 1;
                    }
                    None => self.open.push(BlockSums {
                        a,
                        b,
                        gain,
                        score,
                        games: 1,
                    }),
                }
            }
        }
        if key.is_none() {
            self.close_block();
        }
    }

    /// Files the block being read with its pairs.
    fn close_block(&mut self) {
        if !self.open.is_empty() {
            let open = &self.open;
            self.model
                .push(open.iter().map(|s| (s.a, s.b, s.gain / f64::from(s.games))));
        }
        for s in self.open.drain(..) {
            let games = f64::from(s.games);
            self.blocks[s.a * self.n + s.b].push([s.gain / games, s.score / games]);
        }
    }

    /// The placing gains of the block being read.
    fn open_gains(&self) -> impl Iterator<Item = (usize, usize, f64)> + use<'_> {
        self.open
            .iter()
            .map(|s| (s.a, s.b, s.gain / f64::from(s.games)))
    }

    /// Every block of the pair `a < b`, the one being read included.
    fn blocks_of(&self, a: usize, b: usize) -> Vec<[f64; 2]> {
        let mut xs = self.blocks[a * self.n + b].clone();
        if let Some(s) = self.open.iter().find(|s| s.a == a && s.b == b) {
            let games = f64::from(s.games);
            xs.push([s.gain / games, s.score / games]);
        }
        xs
    }

    /// The pair results of the games rated so far, first < second in entry order, for the
    /// pairs that met, and the strength model's differences for every pair (`[a * self.n + b]`,
    /// a < b; ±∞ where no chain of blocks joins them).
    fn pair_results(&self, names: &[String]) -> (Vec<PairResult>, Vec<Interval>) {
        let n = self.n.min(names.len());
        // Within the possible gains (the widening may reach past them).
        let range = (self.seats - 1) as f64;
        let mut blocks_with_open;
        let within = |i: Interval| Interval {
            low: i.low.max(-range),
            high: i.high.min(range),
            ..i
        };
        let model = if self.open.is_empty() {
            &self.model
        } else {
            blocks_with_open = self.model.clone();
            blocks_with_open.push(self.open_gains());
            &blocks_with_open
        };
        let enough = model.blocks() >= MIN_BLOCKS;
        let model = model.differences(self.seed);
        let mut out = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let m = &self.pairs[a * self.n + b];
                if m.n == 0 {
                    continue;
                }
                let xs = self.blocks_of(a, b);
                let gains: Vec<f64> = xs.iter().map(|x| x[0]).collect();
                let gain = within(paired_interval(
                    &gains,
                    crate::schedule::mix(&[self.seed, a as u64, b as u64]),
                ));
                let joined = model[a * self.n + b].low.is_finite();
                let separable = if joined {
                    enough && !model[a * self.n + b].includes_zero()
                } else {
                    xs.len() >= MIN_BLOCKS && !gain.includes_zero()
                };
                out.push(PairResult {
                    a: names[a].clone(),
                    b: names[b].clone(),
                    games: m.n,
                    blocks: xs.len(),
                    a_ahead: m.sum / m.n as f64,
                    gain,
                    model: within(model[a * self.n + b]),
                    separable,
                    score_diff: xs.iter().map(|x| x[1]).sum::<f64>() / xs.len().max(1) as f64,
                });
            }
        }
        let model = model
            .into_iter()
            .map(|i| {
                if enough {
                    i
                } else {
                    Interval {
                        low: f64::NEG_INFINITY,
                        high: f64::INFINITY,
                        ..i
                    }
                }
            })
            .collect();
        (out, model)
    }

    /// The entrants (indices into `names`) in standings order, best first: by rating μ, then
    /// by name. The order of [`Tally::standings`] without its statistics (the strength model's
    /// bootstrap), for a Swiss round's pairing.
    pub fn order(&self, names: &[String]) -> Vec<usize> {
        let n = self.n.min(names.len());
        let mut order: Vec<usize> = (0..n).collect();
        order.sort_by(|&a, &b| {
            self.ratings[b]
                .mu
                .total_cmp(&self.ratings[a].mu)
                .then_with(|| names[a].cmp(&names[b]))
        });
        order
    }

    /// The standings and pair results of the games rated so far.
    pub fn standings(&self, names: &[String]) -> (Vec<Standing>, Vec<PairResult>) {
        let n = self.n.min(names.len());
        let Tally {
            ratings,
            wins,
            placings,
            scores,
            forfeits,
            ..
        } = self;
        let rows: Vec<Standing> = (0..n)
            .map(|e| Standing {
                rank: 0,
                tied: false,
                name: names[e].clone(),
                games: placings[e].n,
                rating: Estimate {
                    mean: ratings[e].mu,
                    ci95: 1.96 * ratings[e].sigma,
                },
                conservative: ratings[e].mu - 3.0 * ratings[e].sigma,
                win_share: wins[e].estimate(),
                placing: placings[e].estimate(),
                score: scores[e].estimate(),
                forfeits: forfeits[e],
                decision_times: {
                    let mut medians = self.decision_medians[e].clone();
                    DecisionTimes {
                        decisions: self.decisions[e],
                        max_ns: self.decision_max[e],
                        ..DecisionTimes::of(&mut medians)
                    }
                },
            })
            .collect();
        let (pairs, model) = self.pair_results(names);
        let order = self.order(names);
        let all_forfeited = |e: usize| rows[e].games > 0 && rows[e].forfeits >= rows[e].games;
        let separable = |a: usize, b: usize| {
            if all_forfeited(a) != all_forfeited(b) {
                return true;
            }
            let (lo, hi) = (a.min(b), a.max(b));
            match pairs.iter().find(|p| p.a == names[lo] && p.b == names[hi]) {
                Some(p) if p.blocks > 0 => p.separable,
                // Never at one table, but a chain of blocks joins them.
                _ if model[lo * self.n + hi].low.is_finite() => {
                    !model[lo * self.n + hi].includes_zero()
                }
                _ => rows[a].rating.separated_from(&rows[b].rating),
            }
        };
        let mut ranked: Vec<Standing> = Vec::with_capacity(n);
        let mut start = 0;
        while start < n {
            // The longest run from `start` in which no two entrants are separable.
            let mut end = start + 1;
            while end < n && (start..end).all(|m| !separable(order[m], order[end])) {
                end += 1;
            }
            for &e in &order[start..end] {
                ranked.push(Standing {
                    rank: start + 1,
                    tied: end - start > 1,
                    ..rows[e].clone()
                });
            }
            start = end;
        }
        (ranked, pairs)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn game(seats: &[usize], placings: &[u8]) -> GameRecord {
        GameRecord {
            id: String::new(),
            seed: 0,
            seats: seats.to_vec(),
            placings: placings.to_vec(),
            totals: placings.iter().map(|&p| p as i32 * 10).collect(),
            rounds: 1,
            actions: 10,
            forfeits: Vec::new(),
            game: String::new(),
            match_id: String::new(),
            decision_ns: Vec::new(),
        }
    }

    #[test]
    fn the_order_for_pairing_is_the_standings_order() {
        // Ties in rating (fresh entrants, equal results) fall back to the name, as in standings.
        let names: Vec<String> = ["d", "b", "a", "c", "e"].map(String::from).to_vec();
        let games = [
            game(&[0, 1, 2], &[1, 2, 3]),
            game(&[3, 4, 0], &[2, 1, 3]),
            game(&[1, 3, 4], &[1, 3, 2]),
        ];
        let mut tally = Tally::new(names.len(), 7);
        for g in &games {
            tally.add(g);
            let (rows, _) = tally.standings(&names);
            let by_rows: Vec<&str> = rows.iter().map(|r| r.name.as_str()).collect();
            let order: Vec<&str> = tally
                .order(&names)
                .into_iter()
                .map(|e| names[e].as_str())
                .collect();
            assert_eq!(order, by_rows);
        }
    }

    #[test]
    fn one_win_matches_the_weng_lin_worked_example() {
        // Two fresh players, one game: the winner moves up, the loser down, symmetrically.
        let names = vec!["a".to_string(), "b".to_string()];
        let (rows, _) = standings(&names, &[game(&[0, 1], &[1, 2])], 0);
        assert_eq!(rows[0].name, "a");
        let (up, down) = (rows[0].rating.mean - 25.0, 25.0 - rows[1].rating.mean);
        assert!((up - down).abs() < 1e-9 && up > 0.0);
        // skillratings' own two-player Weng-Lin gives the same numbers.
        let (a, b) = skillratings::weng_lin::weng_lin(
            &skillratings::weng_lin::WengLinRating::new(),
            &skillratings::weng_lin::WengLinRating::new(),
            &skillratings::Outcomes::WIN,
            &WengLinConfig::new(),
        );
        assert!((rows[0].rating.mean - a.rating).abs() < 1e-9);
        assert!((rows[1].rating.mean - b.rating).abs() < 1e-9);
        assert!(rows[1].tied, "one game cannot separate two players");
    }

    #[test]
    fn a_three_seat_game_with_a_tie_matches_the_paper_by_hand() {
        // Weng & Lin (2011), Bradley-Terry full pairing, worked by hand for three fresh players
        // (μ 25, σ 25/3, β 25/6) where `a` wins and `b` and `c` tie for second:
        // c² = 2σ² + 2β² = 173.61, every p = 1/2; a gains 2 · σ²/c · 1/2 = 5.2705, b and c each
        // lose σ²/c · 1/2 (the tie between them moves nothing); σ' = σ·sqrt(1 − 2·γ·σ²/c²·1/4)
        // with γ = σ/c, = 7.7885 for everyone.
        let names: Vec<String> = ["a", "b", "c"].iter().map(|s| s.to_string()).collect();
        let (rows, pairs) = standings(&names, &[game(&[0, 1, 2], &[1, 2, 2])], 0);
        let by = |n: &str| rows.iter().find(|r| r.name == n).unwrap();
        assert!((by("a").rating.mean - 30.270_463).abs() < 1e-5);
        assert!((by("b").rating.mean - 22.364_769).abs() < 1e-5);
        assert!((by("c").rating.mean - 22.364_769).abs() < 1e-5);
        for r in &rows {
            assert!((r.rating.ci95 - 1.96 * 7.788_475).abs() < 1e-5, "{r:?}");
        }
        assert_eq!(
            (by("a").rank, by("b").rank),
            (1, 1),
            "one game separates nobody"
        );
        let bc = pairs.iter().find(|p| p.a == "b" && p.b == "c").unwrap();
        assert_eq!(bc.a_ahead, 0.5, "a tie counts half");
        // A forfeit is counted against the seat's entrant.
        let mut g = game(&[2, 0, 1], &[1, 2, 3]);
        g.forfeits = vec![2];
        let (rows, _) = standings(&names, &[g], 0);
        assert_eq!(rows.iter().find(|r| r.name == "b").unwrap().forfeits, 1);
        assert_eq!(rows.iter().map(|r| r.forfeits).sum::<usize>(), 1);
    }

    #[test]
    fn many_wins_separate_and_equal_records_tie() {
        let names: Vec<String> = ["strong", "weak", "twin"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut games = Vec::new();
        for i in 0..60 {
            games.push(game(&[0, 1], &[1, 2]));
            // weak and twin trade wins.
            games.push(if i % 2 == 0 {
                game(&[1, 2], &[1, 2])
            } else {
                game(&[2, 1], &[1, 2])
            });
        }
        let (rows, pairs) = standings(&names, &games, 0);
        assert_eq!(rows[0].name, "strong");
        assert_eq!(rows[0].rank, 1);
        assert!(!rows[0].tied, "strong is clearly ahead");
        assert!(
            rows[1].tied && rows[2].tied,
            "weak and twin cannot be separated"
        );
        assert_eq!((rows[1].rank, rows[2].rank), (2, 2));
        let sw = pairs
            .iter()
            .find(|p| p.a == "strong" && p.b == "weak")
            .unwrap();
        assert_eq!((sw.games, sw.a_ahead), (60, 1.0));
        assert!(sw.separable && sw.gain.mean == 1.0, "{sw:?}");
        assert!((rows[0].win_share.mean - 1.0).abs() < 1e-9);
    }

    #[test]
    fn running_moments_give_the_same_estimates_as_the_samples() {
        let xs = [3.0, 140.0, 0.0, 17.5, 17.5, 99.0, -12.0];
        let mut m = Moments::default();
        for &x in &xs {
            m.add(x);
        }
        let (a, b) = (m.estimate(), Estimate::of(&xs));
        assert!((a.mean - b.mean).abs() < 1e-12 && (a.ci95 - b.ci95).abs() < 1e-12);
        assert_eq!(Moments::default().estimate(), Estimate::default());
    }

    #[test]
    fn tables_rate_as_the_ladder_rates_them_with_the_tournament_beta() {
        // One Weng-Lin wrapper: the ladder's rate_table, given the model's own β (the
        // tournament's), gives the tournament's figures to the last bit.
        use maumau_rating::{RatingConfig, rate_table};
        let w = WengLinConfig::new();
        let config = RatingConfig {
            beta: w.beta,
            uncertainty_tolerance: w.uncertainty_tolerance,
            ..RatingConfig::default()
        };
        let names: Vec<String> = ["a", "b", "c", "d"].iter().map(|s| s.to_string()).collect();
        let games = [
            game(&[0, 1, 2, 3], &[2, 1, 4, 2]),
            game(&[3, 1, 0], &[1, 3, 2]),
        ];
        let (rows, _) = standings(&names, &games, 0);
        let mut ladder = [Rating::default(); 4];
        for g in &games {
            let before: Vec<Rating> = g.seats.iter().map(|&e| ladder[e]).collect();
            let after = rate_table(&config, &before, &g.placings).unwrap();
            for (&e, r) in g.seats.iter().zip(after) {
                ladder[e] = r;
            }
        }
        for (e, name) in names.iter().enumerate() {
            let row = rows.iter().find(|r| &r.name == name).unwrap();
            assert_eq!(row.rating.mean, ladder[e].mu, "{name}");
            assert_eq!(row.rating.ci95, 1.96 * ladder[e].sigma, "{name}");
        }
    }

    #[test]
    fn estimates_have_the_normal_interval() {
        let e = Estimate::of(&[0.0, 1.0, 0.0, 1.0]);
        assert_eq!(e.mean, 0.5);
        assert!((e.ci95 - 1.96 * (1.0f64 / 3.0 / 4.0).sqrt()).abs() < 1e-12);
    }

    /// A normal draw (Box-Muller) from a seeded generator.
    fn normal(rng: &mut SplitMix64) -> f64 {
        let u = |rng: &mut SplitMix64| ((rng.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let (u1, u2) = (u(rng), u(rng));
        (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
    }

    /// A simulated round robin at tables of two with duplicate deals between entrants of known
    /// `strength`: each deal favours seat 0 by a luck drawn once per deal (as large as the play's
    /// own noise), so the two seatings of a deal share it; a game's winner is the seat whose
    /// strength, luck and noise add up to more.
    fn simulated(strength: &[f64], deals: u32, seed: u64) -> Vec<GameRecord> {
        let mut rng = SplitMix64::new(seed);
        let tables = crate::schedule::combinations(strength.len(), 2);
        let mut games = Vec::new();
        for (t, table) in tables.iter().enumerate() {
            for d in 0..deals {
                let luck = normal(&mut rng);
                for r in 0..2 {
                    let seats = vec![table[r], table[1 - r]];
                    let edge = strength[seats[0]] - strength[seats[1]] + luck + normal(&mut rng);
                    let mut g = game(&seats, if edge > 0.0 { &[1, 2] } else { &[2, 1] });
                    g.id = format!("r0-t{t}-d{d}-s{r}");
                    games.push(g);
                }
            }
        }
        games
    }

    /// The pairwise test on simulated entrants of known strength, over 300 tournaments with
    /// fixed seeds (so the figures are always the same): equal entrants are separated in at most
    /// 5% of tournaments, unequal ones in nearly all.
    #[test]
    fn the_pairwise_test_separates_unequal_entrants_and_rarely_equal_ones() {
        let names: Vec<String> = ["strong", "weak", "twin"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let runs = 300;
        let (mut equal, mut unequal) = (0, 0);
        for seed in 0..runs {
            let games = simulated(&[0.8, 0.0, 0.0], 40, seed);
            let (_, pairs) = standings(&names, &games, seed);
            let pair = |a: &str, b: &str| pairs.iter().find(|p| p.a == a && p.b == b).unwrap();
            assert_eq!(pair("weak", "twin").blocks, 40);
            equal += usize::from(pair("weak", "twin").separable);
            let sw = pair("strong", "weak");
            unequal += usize::from(sw.separable && sw.gain.mean > 0.0);
        }
        let (equal, unequal) = (equal as f64 / runs as f64, unequal as f64 / runs as f64);
        eprintln!("separated: equal entrants {equal:.3}, unequal {unequal:.3}");
        assert!(
            equal <= 0.05,
            "equal entrants separated in {equal:.3} of tournaments"
        );
        assert!(unequal >= 0.9, "unequal entrants separated in {unequal:.3}");
    }

    /// The strength model on the same simulated tournaments, over blocks regrouped from the
    /// games: it separates unequal entrants in nearly all tournaments and equal ones in at most
    /// 5%; the fit is exact on noiseless gains.
    #[test]
    fn the_strength_model_separates_unequal_entrants_and_rarely_equal_ones() {
        let blocks_of = |games: &[GameRecord]| -> Vec<BlockGains> {
            games
                .chunks(2)
                .map(|g| {
                    let gain = g
                        .iter()
                        .map(|g| {
                            let sign = if g.seats[0] < g.seats[1] { 1.0 } else { -1.0 };
                            sign * (f64::from(g.placings[1]) - f64::from(g.placings[0]))
                        })
                        .sum::<f64>()
                        / 2.0;
                    let (a, b) = (
                        g[0].seats[0].min(g[0].seats[1]),
                        g[0].seats[0].max(g[0].seats[1]),
                    );
                    vec![(a, b, gain)]
                })
                .collect()
        };
        let runs = 300;
        let (mut equal, mut unequal) = (0, 0);
        for seed in 0..runs {
            let games = simulated(&[0.8, 0.0, 0.0], 40, seed);
            let d = strength_differences(3, &blocks_of(&games), seed);
            equal += usize::from(!d[3 + 2].includes_zero());
            unequal += usize::from(d[1].low > 0.0);
        }
        let (equal, unequal) = (equal as f64 / runs as f64, unequal as f64 / runs as f64);
        eprintln!("model separated: equal entrants {equal:.3}, unequal {unequal:.3}");
        assert!(equal <= 0.05, "equal entrants separated in {equal:.3}");
        assert!(unequal >= 0.9, "unequal entrants separated in {unequal:.3}");
        // Noiseless gains s_a − s_b with s = (1, 0, −1): the fit returns them, and the same
        // seed the same intervals.
        let exact: Vec<BlockGains> = (0..12)
            .map(|i| vec![[(0, 1, 1.0), (0, 2, 2.0), (1, 2, 1.0)][i % 3]])
            .collect();
        let d = strength_differences(3, &exact, 5);
        assert!(
            (d[1].mean - 1.0).abs() < 1e-9 && (d[2].mean - 2.0).abs() < 1e-9,
            "{d:?}"
        );
        assert!(d[2].low > 1.99 && d[2].high < 2.01, "{d:?}");
        assert_eq!(d, strength_differences(3, &exact, 5));
        // Entrants no block joins get no interval.
        let apart = vec![vec![(0, 1, 1.0)]; 12];
        assert!(strength_differences(3, &apart, 5)[2].includes_zero());
    }

    #[test]
    fn intervals_are_reproducible_and_honest_about_few_blocks() {
        let xs = [0.5, 1.0, 0.0, 1.0, 0.5, 1.0, 0.5, 0.0, 1.0, 0.5];
        assert_eq!(paired_interval(&xs, 7), paired_interval(&xs, 7));
        let i = paired_interval(&xs, 7);
        assert!(
            i.low > 0.0 && i.high < 1.2 && (i.mean - 0.6).abs() < 1e-12,
            "{i:?}"
        );
        // Widened for ten blocks: wider than the plain normal interval.
        let e = Estimate::of(&xs);
        assert!(i.high - i.low > 2.0 * e.ci95, "{i:?} {e:?}");
        // One block: no interval at all.
        assert!(paired_interval(&[1.0], 1).includes_zero());
        // Nine unanimous blocks are not enough to separate; ten are.
        let names: Vec<String> = ["a", "b"].iter().map(|s| s.to_string()).collect();
        let mut games = Vec::new();
        for d in 0..10 {
            for r in 0..2 {
                let mut g = if r == 0 {
                    game(&[0, 1], &[1, 2])
                } else {
                    game(&[1, 0], &[2, 1])
                };
                g.id = format!("r0-t0-d{d}-s{r}");
                games.push(g);
            }
        }
        let (_, pairs) = standings(&names, &games[..18], 0);
        assert_eq!((pairs[0].blocks, pairs[0].separable), (9, false));
        let (rows, pairs) = standings(&names, &games, 0);
        assert_eq!((pairs[0].blocks, pairs[0].separable), (10, true));
        assert_eq!((rows[0].rank, rows[1].rank), (1, 2));
        assert_eq!(pairs[0].gain.mean, 1.0);
    }

    /// Ties never chain: the strength model cannot tell `top` from `mid`, nor `mid` from `low`,
    /// but it can tell `top` from `low` (the two gains add up, their noise only as √2), who never
    /// met, so `low` does not share `top`'s rank. And an entrant that forfeited every game is
    /// never tied with anyone who played, however few its games.
    #[test]
    fn ties_do_not_chain_and_a_bot_that_always_forfeits_is_never_tied_with_the_top() {
        let names: Vec<String> = ["top", "mid", "low"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut games = Vec::new();
        for d in 0..28 {
            for (t, (a, b)) in [(0, 1), (1, 2)].into_iter().enumerate() {
                for r in 0..2 {
                    let seats = if r == 0 { [a, b] } else { [b, a] };
                    // The better one wins both seatings of two deals in four, loses both of
                    // one and splits one: a quarter of a place per game.
                    let winner = match d % 4 {
                        0 | 1 => a,
                        2 => b,
                        _ => seats[0],
                    };
                    let placings = if seats[0] == winner { [1, 2] } else { [2, 1] };
                    let mut g = game(&seats, &placings);
                    g.id = format!("r0-t{t}-d{d}-s{r}");
                    games.push(g);
                }
            }
        }
        let (rows, pairs) = standings(&names, &games, 3);
        let by = |n: &str| rows.iter().find(|r| r.name == n).unwrap();
        let pair = |a: &str, b: &str| pairs.iter().find(|p| p.a == a && p.b == b).unwrap();
        assert!(
            !pair("top", "mid").separable && !pair("mid", "low").separable,
            "{pairs:?}"
        );
        assert!(pair("top", "mid").model.low < 0.0 && pair("top", "mid").model.mean > 0.0);
        assert!(!pairs.iter().any(|p| p.a == "top" && p.b == "low"));
        assert_eq!(
            rows.iter().map(|r| r.name.as_str()).collect::<Vec<_>>(),
            ["top", "mid", "low"]
        );
        assert_eq!(
            (by("top").rank, by("mid").rank, by("low").rank),
            (1, 1, 3),
            "{rows:?}"
        );
        assert!(!by("low").tied);

        // Three games, each forfeited by `quitter`: far too few blocks for the statistics, but
        // it never played.
        let names: Vec<String> = ["a", "b", "quitter"]
            .iter()
            .map(|s| s.to_string())
            .collect();
        let mut games = Vec::new();
        for (d, placings) in [[1, 2, 3], [2, 1, 3], [1, 2, 3]].into_iter().enumerate() {
            let mut g = game(&[0, 1, 2], &placings);
            g.id = format!("r0-t0-d{d}-s0");
            g.forfeits = vec![2];
            games.push(g);
        }
        let (rows, _) = standings(&names, &games, 0);
        assert_eq!((rows[0].rank, rows[1].rank), (1, 1), "{rows:?}");
        assert_eq!(rows[2].name, "quitter");
        assert_eq!(
            (rows[2].rank, rows[2].tied, rows[2].forfeits),
            (3, false, 3)
        );
    }

    /// The fit as first written, the reference for the fit over classes: every pair of every
    /// block added to the normal equations one at a time (block i weighted by `counts[i]`).
    fn fit_per_block(n: usize, blocks: &[BlockGains], counts: &[u32]) -> Vec<f64> {
        let mut l = vec![0.0; n * n];
        let mut r = vec![0.0; n];
        let mut group: Vec<usize> = (0..n).collect();
        fn root(group: &mut [usize], mut e: usize) -> usize {
            while group[e] != e {
                e = group[e];
            }
            e
        }
        for (block, &c) in blocks.iter().zip(counts) {
            let w = f64::from(c);
            if w == 0.0 {
                continue;
            }
            for &(a, b, g) in block {
                l[a * n + a] += w;
                l[b * n + b] += w;
                l[a * n + b] -= w;
                l[b * n + a] -= w;
                r[a] += w * g;
                r[b] -= w * g;
                let (ra, rb) = (root(&mut group, a), root(&mut group, b));
                group[ra] = rb;
            }
        }
        let roots: Vec<usize> = (0..n).map(|e| root(&mut group, e)).collect();
        for a in 0..n {
            for b in 0..n {
                if roots[a] == roots[b] {
                    l[a * n + b] += 1.0;
                }
            }
        }
        for j in 0..n {
            for k in 0..j {
                let f = l[j * n + k];
                for i in j..n {
                    l[i * n + j] -= l[i * n + k] * f;
                }
            }
            let d = l[j * n + j].max(f64::MIN_POSITIVE).sqrt();
            for i in j..n {
                l[i * n + j] /= d;
            }
        }
        for i in 0..n {
            let s: f64 = (0..i).map(|k| l[i * n + k] * r[k]).sum();
            r[i] = (r[i] - s) / l[i * n + i];
        }
        for i in (0..n).rev() {
            let s: f64 = (i + 1..n).map(|k| l[k * n + i] * r[k]).sum();
            r[i] = (r[i] - s) / l[i * n + i];
        }
        r
    }

    /// The bootstrap as first written, over [`fit_per_block`]: the same draws, one refit over
    /// every block per resample. Each interval's ends, for a < b joined.
    fn differences_per_block(n: usize, blocks: &[BlockGains], seed: u64) -> Vec<(f64, f64)> {
        let nb = blocks.len();
        let mut rng = SplitMix64::new(seed);
        let mut diffs = vec![Vec::new(); n * n];
        let mut counts = vec![0u32; nb];
        for _ in 0..BOOTSTRAP_RESAMPLES {
            counts.iter_mut().for_each(|c| *c = 0);
            resample(&mut rng, nb, |block| counts[block] += 1);
            let s = fit_per_block(n, blocks, &counts);
            for a in 0..n {
                for b in a + 1..n {
                    diffs[a * n + b].push(s[a] - s[b]);
                }
            }
        }
        diffs
            .iter_mut()
            .map(|d| {
                d.sort_by(f64::total_cmp);
                d.get(BOOTSTRAP_RESAMPLES * 25 / 1000)
                    .zip(d.get(BOOTSTRAP_RESAMPLES * 975 / 1000 - 1))
                    .map_or((0.0, 0.0), |(&lo, &hi)| (lo, hi))
            })
            .collect()
    }

    /// Random blocks: tables of two to four of `n` entrants, gains in halves and quarters as
    /// placings give them, some tables repeated (as deals of one table are).
    fn random_blocks() -> impl Strategy<Value = (usize, Vec<BlockGains>)> {
        (2usize..7).prop_flat_map(|n| {
            let table = proptest::sample::subsequence((0..n).collect::<Vec<_>>(), 2..=n.min(4));
            let block =
                (table, proptest::collection::vec(-12i32..=12, 6)).prop_map(|(seats, gains)| {
                    let mut block = Vec::new();
                    for (i, &a) in seats.iter().enumerate() {
                        for &b in &seats[i + 1..] {
                            block.push((a, b, f64::from(gains[block.len()]) / 4.0));
                        }
                    }
                    block
                });
            let tables = proptest::collection::vec(block, 1..12);
            (Just(n), tables, proptest::collection::vec(1usize..8, 1..12)).prop_map(
                |(n, tables, repeats)| {
                    let blocks = repeats
                        .iter()
                        .zip(tables.iter().cycle())
                        .flat_map(|(&k, b)| std::iter::repeat_n(b.clone(), k))
                        .collect();
                    (n, blocks)
                },
            )
        })
    }

    proptest! {
        /// The fit over classes is the fit over blocks, for any weights of the blocks (zero
        /// included, which can split the entrants into groups).
        #[test]
        fn the_fit_over_classes_is_the_fit_over_blocks(
            (n, blocks) in random_blocks(),
            counts in proptest::collection::vec(0u32..4, 80),
        ) {
            let counts = &counts[..blocks.len().min(80)];
            let blocks = &blocks[..counts.len()];
            let data = StrengthData::of(n, blocks);
            let mut weights = vec![0u32; data.classes.len()];
            for (&class, &c) in data.block_class.iter().zip(counts) {
                weights[class as usize] += c;
            }
            let mut fit = Fit::default();
            data.fit(&weights, &mut fit);
            let reference = fit_per_block(n, blocks, counts);
            for (x, y) in fit.s.iter().zip(&reference) {
                prop_assert!((x - y).abs() < 1e-9, "{:?} against {reference:?}", fit.s);
            }
        }

        /// And the bootstrap over classes gives the intervals of the bootstrap over blocks: the
        /// same draws, the same resamples, the same percentiles.
        #[test]
        fn the_bootstrap_over_classes_is_the_bootstrap_over_blocks(
            (n, blocks) in random_blocks(),
            seed in any::<u64>(),
        ) {
            prop_assume!(blocks.len() >= 2);
            let d = strength_differences(n, &blocks, seed);
            let reference = differences_per_block(n, &blocks, seed);
            let nf = blocks.len() as f64;
            let stretch = (nf / (nf - 1.0)).sqrt() * t975(blocks.len() - 1) / Z975;
            for a in 0..n {
                for b in a + 1..n {
                    let i = d[a * n + b];
                    if !i.low.is_finite() {
                        continue;
                    }
                    let (lo, hi) = reference[a * n + b];
                    prop_assert!((i.low - (i.mean - stretch * (i.mean - lo))).abs() < 1e-9);
                    prop_assert!((i.high - (i.mean + stretch * (hi - i.mean))).abs() < 1e-9);
                }
            }
        }
    }

    /// Enough blocks for the resamples to be shared among threads: the same intervals as the
    /// one-thread bootstrap over blocks.
    #[test]
    fn a_bootstrap_shared_among_threads_draws_the_same_resamples() {
        let mut rng = SplitMix64::new(9);
        let blocks: Vec<BlockGains> = (0..601)
            .map(|i| {
                let (a, b) = [(0, 1), (1, 2), (0, 2), (2, 3)][i % 4];
                vec![(a, b, f64::from((rng.next_u64() % 5) as u8) / 2.0 - 1.0)]
            })
            .collect();
        assert!(blocks.len() * BOOTSTRAP_RESAMPLES >= 1 << 20);
        let d = strength_differences(4, &blocks, 11);
        let reference = differences_per_block(4, &blocks, 11);
        let nf = blocks.len() as f64;
        let stretch = (nf / (nf - 1.0)).sqrt() * t975(blocks.len() - 1) / Z975;
        for a in 0..4 {
            for b in a + 1..4 {
                let (i, (lo, hi)) = (d[a * 4 + b], reference[a * 4 + b]);
                assert!(
                    (i.low - (i.mean - stretch * (i.mean - lo))).abs() < 1e-9,
                    "{a} {b}"
                );
                assert!(
                    (i.high - (i.mean + stretch * (hi - i.mean))).abs() < 1e-9,
                    "{a} {b}"
                );
            }
        }
    }

    #[test]
    fn blocks_are_deals_without_the_seating() {
        assert_eq!(block_of("r0-t3-d17-s1"), Some("r0-t3-d17"));
        assert_eq!(block_of("r12-t0-d0-s10"), Some("r12-t0-d0"));
        assert_eq!(block_of("game-seven"), None);
        assert_eq!(block_of("r0-t0-d0-s"), None);
        assert_eq!(block_of(""), None);
    }
}
