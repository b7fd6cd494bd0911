//! Tournament overhead: a round robin of built-in random bots in classic with 4 seats against
//! bare engine playouts of the same games on the same cores. Scheduling, bots and rating must
//! cost at most 10% (ratio ≥ 0.90). Measured with replay recording off and on, interleaved and
//! repeated, medians reported (the machine is shared and noisy).
//!
//! `cargo bench -p maumau-tournament --bench speed` (`SPEED_GAMES=N` games per measurement).

use std::time::Instant;

use maumau_engine::{ActionList, CallsMode, Game, MatchConfig, ProfileId};
use maumau_tournament::schedule::mix;
use maumau_tournament::{Entrant, Tournament};

fn config() -> MatchConfig {
    MatchConfig {
        calls: CallsMode::Enforce,
        ..MatchConfig::new(ProfileId::Classic, 4)
    }
}

/// The same games as the tournament (same seeds), played by a bare loop: legal actions into a
/// reused list, a SplitMix choice, apply with no event sink. Parallel over `threads`.
fn bare(seeds: &[u64], threads: usize) -> f64 {
    let t = Instant::now();
    std::thread::scope(|s| {
        for chunk in seeds.chunks(seeds.len().div_ceil(threads)) {
            s.spawn(move || {
                let mut list = ActionList::default();
                let mut checksum = 0u64;
                for &seed in chunk {
                    let mut game = Game::new(config(), seed).expect("valid");
                    let mut rng = seed;
                    while let Some(seat) = game.to_act() {
                        game.legal_actions_into(seat, &mut list);
                        rng = rng.wrapping_add(0x9E37_79B9_7F4A_7C15);
                        let mut z = rng;
                        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
                        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
                        let pick = (((z >> 32) * list.len() as u64) >> 32) as usize;
                        let _ = game.apply_with(seat, list[pick], &mut ());
                    }
                    checksum ^= game.match_result().map_or(0, |r| r.totals[0] as u64);
                }
                std::hint::black_box(checksum);
            });
        }
    });
    seeds.len() as f64 / t.elapsed().as_secs_f64()
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    xs[xs.len() / 2]
}

fn main() {
    if std::env::args().any(|a| a == "--test" || a == "--list") {
        return;
    }
    let games: u32 = std::env::var("SPEED_GAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(20_000);
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get());
    let mut t = Tournament::new(
        Entrant::parse_list("random,random,random,random").expect("valid"),
        config(),
    );
    t.deals = games / 4;
    t.threads = threads;
    // The tournament's seeds, so both sides play exactly the same deals.
    let tables = maumau_tournament::schedule::combinations(4, 4);
    let seeds: Vec<u64> = maumau_tournament::schedule::fixtures(0, &tables, t.deals, t.seed, true)
        .iter()
        .map(|f| f.seed)
        .collect();
    let _ = mix(&[0]);
    let (mut b, mut off, mut on) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..5 {
        b.push(bare(&seeds, threads));
        t.record_replays = false;
        let r = t.run(None, &mut |_| {}).expect("runs");
        off.push(r.games.len() as f64 / r.seconds);
        t.record_replays = true;
        let r = t.run(None, &mut |_| {}).expect("runs");
        on.push(r.games.len() as f64 / r.seconds);
    }
    let (b, off, on) = (median(b), median(off), median(on));
    println!(
        "classic/4, {} random-bot games per measurement, {threads} threads, medians of 5",
        seeds.len()
    );
    println!("  bare engine playouts      {b:>9.0} games/s");
    println!(
        "  tournament, replays off   {off:>9.0} games/s   ratio {:.3}",
        off / b
    );
    println!(
        "  tournament, replays on    {on:>9.0} games/s   ratio {:.3}",
        on / b
    );
    println!("  target: ratio >= 0.90");
}
