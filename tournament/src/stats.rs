//! Standings: Weng-Lin (OpenSkill) ratings from placings, per-entrant and per-pair figures, each
//! with a 95% confidence interval, and which entrants cannot be told apart.

use maumau_engine::outcome::MAX_SEATS;
// The ladder's Weng-Lin wrapper: one place where skillratings is called, for the ladder and the
// tournament alike (the ladder crate depends on nothing of the game, so no cycle).
use maumau_ladder::rating::{Rating, WengLinConfig, update_table, update_two};
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

/// One line of the standings.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Standing {
    /// 1 for the best; entrants that cannot be separated share a rank.
    pub rank: usize,
    /// True when the rating interval overlaps the one ranked just above.
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
    /// Share of those games where `a` placed above `b` (ties count half).
    pub a_ahead: Estimate,
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
/// ranked by its placing, equal placings a tie).
pub fn standings(names: &[String], games: &[GameRecord]) -> (Vec<Standing>, Vec<PairResult>) {
    let mut tally = Tally::new(names.len());
    for g in games {
        tally.add(g);
    }
    tally.standings(names)
}

/// Standings built one game at a time, so a tournament rates games while later ones are still
/// being played: `Tally::add` every game in schedule order, then [`Tally::standings`] gives what
/// [`standings`] gives for those games.
#[derive(Clone, Debug)]
pub struct Tally {
    n: usize,
    config: WengLinConfig,
    ratings: Vec<Rating>,
    wins: Vec<Moments>,
    placings: Vec<Moments>,
    scores: Vec<Moments>,
    forfeits: Vec<usize>,
    /// pairs[a * n + b]: how `a` did against `b` at the tables where both sat.
    pairs: Vec<Moments>,
}

impl Tally {
    /// Nothing rated yet, for `entrants` entrants.
    pub fn new(entrants: usize) -> Tally {
        let n = entrants;
        Tally {
            n,
            config: WengLinConfig::new(),
            ratings: vec![Rating::default(); n],
            wins: vec![Moments::default(); n],
            placings: vec![Moments::default(); n],
            scores: vec![Moments::default(); n],
            forfeits: vec![0; n],
            pairs: vec![Moments::default(); n * n],
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
        let firsts = places.iter().filter(|&&p| p == 1).count().max(1) as f64;
        for &s in &g.forfeits {
            if let Some(&e) = seats.get(s as usize) {
                self.forfeits[e] += 1;
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
            pairs,
            ..
        } = self;
        let mut rows: Vec<Standing> = (0..n)
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
            })
            .collect();
        rows.sort_by(|a, b| {
            b.rating
                .mean
                .total_cmp(&a.rating.mean)
                .then_with(|| a.name.cmp(&b.name))
        });
        for i in 0..rows.len() {
            let tied = i > 0 && !rows[i].rating.separated_from(&rows[i - 1].rating);
            rows[i].tied = tied;
            rows[i].rank = if tied { rows[i - 1].rank } else { i + 1 };
        }
        let mut pair_results = Vec::new();
        for a in 0..n {
            for b in a + 1..n {
                let m = &pairs[a * self.n + b];
                if m.n > 0 {
                    pair_results.push(PairResult {
                        a: names[a].clone(),
                        b: names[b].clone(),
                        games: m.n,
                        a_ahead: m.estimate(),
                    });
                }
            }
        }
        (rows, pair_results)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        }
    }

    #[test]
    fn one_win_matches_the_weng_lin_worked_example() {
        // Two fresh players, one game: the winner moves up, the loser down, symmetrically.
        let names = vec!["a".to_string(), "b".to_string()];
        let (rows, _) = standings(&names, &[game(&[0, 1], &[1, 2])]);
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
        let (rows, pairs) = standings(&names, &[game(&[0, 1, 2], &[1, 2, 2])]);
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
        assert_eq!(bc.a_ahead.mean, 0.5, "a tie counts half");
        // A forfeit is counted against the seat's entrant.
        let mut g = game(&[2, 0, 1], &[1, 2, 3]);
        g.forfeits = vec![2];
        let (rows, _) = standings(&names, &[g]);
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
        let (rows, pairs) = standings(&names, &games);
        assert_eq!(rows[0].name, "strong");
        assert_eq!(rows[0].rank, 1);
        assert!(!rows[1].tied, "strong is clearly ahead");
        assert!(rows[2].tied, "weak and twin cannot be separated");
        assert_eq!(rows[1].rank, rows[2].rank);
        let sw = pairs
            .iter()
            .find(|p| p.a == "strong" && p.b == "weak")
            .unwrap();
        assert_eq!((sw.games, sw.a_ahead.mean), (60, 1.0));
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
        use maumau_ladder::rating::{RatingConfig, rate_table};
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
        let (rows, _) = standings(&names, &games);
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
}
