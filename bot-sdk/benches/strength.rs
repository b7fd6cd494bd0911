//! How strong are the reference bots? Duplicate matches (the same deals, seats rotated), for
//! classic with 2 and 4 seats and each other profile at a usual seat count: `heuristic` against
//! `random`, and `search` against `heuristic`. Prints win rates, mean score differences, 95%
//! confidence intervals, the number of games, and the search bot's decision time.
//!
//! `cargo bench -p maumau-bot-sdk --bench strength` (`STRENGTH_DEALS=N` changes the deals per case).

use std::time::{Duration, Instant};

use maumau_bot_sdk::bots::{BotKind, SearchBot};
use maumau_bot_sdk::engine::profile::Scoring;
use maumau_bot_sdk::engine::{CallsMode, Game, MatchConfig, ProfileId};
use maumau_bot_sdk::{Bot, play_match};

/// A Bot wrapper that times `decide`.
struct Timed {
    inner: Box<dyn Bot>,
    spent: Duration,
    calls: u32,
}

impl Bot for Timed {
    fn name(&self) -> &str {
        self.inner.name()
    }
    fn decide(
        &mut self,
        obs: &maumau_bot_sdk::engine::Observation,
    ) -> maumau_bot_sdk::engine::Action {
        let t = Instant::now();
        let a = self.inner.decide(obs);
        self.spent += t.elapsed();
        self.calls += 1;
        a
    }
    fn react(
        &mut self,
        obs: &maumau_bot_sdk::engine::Observation,
    ) -> Option<maumau_bot_sdk::engine::Action> {
        self.inner.react(obs)
    }
}

/// Mean and 95% half-width of a sample.
fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let m = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (n - 1.0).max(1.0);
    (m, 1.96 * (var / n).sqrt())
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return; // `cargo test` runs benches once; this one is a measurement, not a test.
    }
    let deals: u64 = std::env::var("STRENGTH_DEALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(100);
    let iterations: u32 = std::env::var("SEARCH_ITERATIONS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(SearchBot::DEFAULT_ITERATIONS);
    let cases = [
        (ProfileId::Classic, 2),
        (ProfileId::Classic, 4),
        (ProfileId::PenaltyPoints, 4),
        (ProfileId::Brazilian, 6),
        (ProfileId::Romanian32, 3),
    ];
    println!(
        "duplicate matches, calls=enforce, {deals} deals per case, every deal played with seats \
         rotated and kinds swapped; search budget {iterations} samples per decision\n"
    );
    println!(
        "{:<18} {:<22} {:>6} {:>16} {:>22} {:>12}",
        "case", "A vs B", "games", "A win share", "A score adv. (pts)", "A ms/decision"
    );
    for (profile, seats) in cases {
        for (a, b) in [
            (BotKind::Heuristic, BotKind::Random),
            (BotKind::Search, BotKind::Heuristic),
        ] {
            let mut win = Vec::new();
            let mut adv = Vec::new();
            let (mut spent, mut calls) = (Duration::ZERO, 0u32);
            let mut games = 0;
            let config = MatchConfig {
                calls: CallsMode::Enforce,
                ..MatchConfig::new(profile, seats)
            };
            let positive = config
                .rules()
                .map(|r| r.scoring == Scoring::Positive)
                .unwrap_or(false);
            for deal in 0..deals {
                // Every rotation of the seating A B A B … over the same deal.
                let (mut w, mut d) = (0.0, 0.0);
                // Rotations, then the same with the kinds swapped: each kind sits in every seat
                // equally often, whatever the seat count.
                for rot in 0..2 * seats as usize {
                    let swap = rot >= seats as usize;
                    let is_a: Vec<bool> = (0..seats as usize)
                        .map(|s| ((s + rot) % 2 == 0) != swap)
                        .collect();
                    let mut bots: Vec<Box<dyn Bot>> = is_a
                        .iter()
                        .enumerate()
                        .map(|(s, &x)| {
                            let kind = if x { a } else { b };
                            let seed = deal * 131 + s as u64;
                            let inner: Box<dyn Bot> = match kind {
                                BotKind::Search => {
                                    Box::new(SearchBot::with_iterations(seed, iterations))
                                }
                                k => k.build(seed),
                            };
                            Box::new(Timed {
                                inner,
                                spent: Duration::ZERO,
                                calls: 0,
                            }) as Box<dyn Bot>
                        })
                        .collect();
                    let mut game = Game::new(config, 0xD00D + deal).expect("valid");
                    let r = play_match(&mut game, &mut bots).expect("finished");
                    games += 1;
                    let winners: Vec<usize> = r.winners().map(|s| s as usize).collect();
                    w += winners.iter().filter(|&&s| is_a[s]).count() as f64 / winners.len() as f64;
                    let mean = |want: bool| {
                        let xs: Vec<f64> = (0..seats as usize)
                            .filter(|&s| is_a[s] == want)
                            .map(|s| r.totals[s] as f64)
                            .collect();
                        xs.iter().sum::<f64>() / xs.len() as f64
                    };
                    d += if positive {
                        mean(true) - mean(false)
                    } else {
                        mean(false) - mean(true)
                    };
                }
                win.push(w / (2 * seats) as f64);
                adv.push(d / (2 * seats) as f64);
            }
            if a == BotKind::Search {
                // Decision time at the default budget, measured separately on fresh positions.
                let mut bot = SearchBot::with_iterations(1, iterations);
                let mut game = Game::new(config, 42).expect("valid");
                while let Some(seat) = game.to_act() {
                    let obs = game.observation(seat);
                    let t = Instant::now();
                    let action = bot.decide(&obs);
                    if obs.legal.len() > 1 {
                        spent += t.elapsed();
                        calls += 1;
                    }
                    game.apply(seat, action).expect("legal");
                    if calls >= 200 {
                        break;
                    }
                }
            }
            let (wm, wc) = mean_ci(&win);
            let (dm, dc) = mean_ci(&adv);
            let share = 0.5;
            let verdict = if wm - wc > share {
                "A stronger"
            } else if wm + wc < share {
                "B stronger"
            } else {
                "not separated"
            };
            let ms = if calls > 0 {
                format!("{:.2}", spent.as_secs_f64() * 1e3 / calls as f64)
            } else {
                "-".into()
            };
            println!(
                "{:<18} {:<22} {:>6} {:>7.3} ± {:<6.3} {:>10.1} ± {:<8.1} {:>9}  {verdict} (equal = {share:.3})",
                format!("{profile}/{seats}"),
                format!("{a} vs {b}"),
                games,
                wm,
                wc,
                dm,
                dc,
                ms
            );
        }
    }
}
