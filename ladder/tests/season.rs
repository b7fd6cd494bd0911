//! A whole season through the core: lobbies, the matchmaker, the store, ratings, the leaderboard
//! and rerate, with bots of known strength.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
// Test helpers outside #[test] functions unwrap as the tests do.
#![allow(clippy::unwrap_used)]

use maumau_ladder::matchmaking::{Format, MatchmakingConfig, plan_tables};
use maumau_ladder::sim::draw_placings;
use maumau_ladder::store::{NewMatch, SanctionTarget};
use maumau_ladder::validation::ValidationPolicy;
use maumau_ladder::{
    Ladder, LadderConfig, Lobby, SeasonId, SeatResult, SqliteStore, Store, VersionId,
};
use rand::SeedableRng;
use rand_pcg::Pcg64;

struct Season {
    _dir: tempfile::TempDir,
    ladder: Ladder<SqliteStore>,
    season: SeasonId,
    /// (version, true strength), weakest first.
    versions: Vec<(VersionId, f64)>,
    owner_keys: Vec<String>,
}

fn season(bots: usize) -> Season {
    let dir = tempfile::tempdir().unwrap();
    // Validation is the server's business here: versions are rated from their first match.
    let config = LadderConfig {
        validation: ValidationPolicy {
            required: false,
            ..ValidationPolicy::default()
        },
        ..LadderConfig::default()
    };
    let ladder = Ladder::new(SqliteStore::open(dir.path()).unwrap(), config);
    let season = ladder.store().open_season("2026-1", 0).unwrap();
    let mut versions = Vec::new();
    let mut owner_keys = Vec::new();
    for i in 0..bots {
        let (_, key) = ladder.register_owner(&format!("o{i}"), None, 0).unwrap();
        let bot = ladder
            .register_bot(key.as_str(), &format!("bot{i:02}"), 0)
            .unwrap();
        let v = ladder.add_version(key.as_str(), bot, "1.0", 0).unwrap();
        versions.push((v.version, 12.0 + 2.5 * i as f64));
        owner_keys.push(key.as_str().to_string());
    }
    Season {
        _dir: dir,
        ladder,
        season,
        versions,
        owner_keys,
    }
}

/// Plays `rounds` rounds: every lobby has room for one match; the matchmaker fills it.
fn play_rounds(s: &Season, rounds: i64, rng: &mut Pcg64) -> usize {
    let config = MatchmakingConfig::new(vec![
        Format {
            profile: "classic".into(),
            seats: 4,
            weight: 3.0,
        },
        Format {
            profile: "classic".into(),
            seats: 3,
            weight: 1.0,
        },
    ]);
    let lobbies: Vec<Lobby> = s
        .versions
        .iter()
        .map(|&(version, _)| Lobby {
            version,
            max_matches: 1,
            profiles: vec!["classic".into()],
            seats: vec![3, 4],
        })
        .collect();
    let strength = |v: VersionId| s.versions.iter().find(|x| x.0 == v).unwrap().1;
    let mut played = 0;
    for round in 0..rounds {
        let now = 1_000 * (round + 1);
        let candidates = s.ladder.candidates(s.season, &lobbies).unwrap();
        let recent = s.ladder.recent_tables(20).unwrap();
        let tables = plan_tables(&config, &candidates, &recent, now, round as u64);
        assert!(!tables.is_empty());
        let mut ids = Vec::new();
        for t in &tables {
            let id = s
                .ladder
                .store()
                .schedule_match(
                    &NewMatch {
                        season: s.season,
                        profile: t.profile.clone(),
                        seed: t.seed,
                        rated: true,
                        seats: t.seats.clone(),
                    },
                    now,
                )
                .unwrap();
            ids.push((id, t));
        }
        // While they are scheduled, nobody has free capacity left for another table.
        let busy = s.ladder.candidates(s.season, &lobbies).unwrap();
        assert!(plan_tables(&config, &busy, &[], now, 1).is_empty());
        for (id, t) in ids {
            s.ladder.store().start_match(id, now + 1).unwrap();
            let strengths: Vec<f64> = t.seats.iter().map(|&v| strength(v)).collect();
            let placings = draw_placings(&strengths, 5.9, rng);
            let results: Vec<SeatResult> = placings
                .iter()
                .map(|&placing| SeatResult {
                    placing,
                    timeouts: 0,
                    rejections: 0,
                })
                .collect();
            let report = s.ladder.record_finish(id, &results, now + 2).unwrap();
            assert_eq!(report.ratings.len(), t.seats.len());
            played += 1;
        }
    }
    played
}

#[test]
fn a_season_ranks_bots_by_strength_and_rerates_clean() {
    let s = season(10);
    let mut rng = Pcg64::seed_from_u64(11);
    let played = play_rounds(&s, 40, &mut rng);
    assert!(played >= 80, "{played}");

    let report = s.ladder.rerate(s.season).unwrap();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.matches, played);

    let board = s.ladder.leaderboard(s.season, "classic").unwrap();
    assert_eq!(board.ranked.len() + board.provisional.len(), 10);
    assert!(board.provisional.is_empty(), "everyone played 10+ matches");
    // Rank correlation between the board and the true strengths.
    let true_rank = |v: VersionId| 10 - s.versions.iter().position(|x| x.0 == v).unwrap();
    let n = board.ranked.len() as f64;
    let d2: f64 = board
        .ranked
        .iter()
        .map(|row| (row.rank as f64 - true_rank(row.version) as f64).powi(2))
        .sum();
    let spearman = 1.0 - 6.0 * d2 / (n * (n * n - 1.0));
    assert!(spearman > 0.8, "Spearman {spearman}: {:#?}", board.ranked);
    for w in board.ranked.windows(2) {
        assert!(w[0].score >= w[1].score);
    }
    let top = &board.ranked[0];
    assert_eq!(top.rank, 1);
    assert!((top.score - (top.rating.mu - 3.0 * top.rating.sigma)).abs() < 1e-12);
    assert!(top.interval95.0 < top.rating.mu && top.rating.mu < top.interval95.1);
}

#[test]
fn the_board_shows_each_bots_best_active_version_and_hides_bans() {
    let s = season(6);
    let mut rng = Pcg64::seed_from_u64(5);
    play_rounds(&s, 20, &mut rng);
    let before = s.ladder.leaderboard(s.season, "classic").unwrap();
    assert_eq!(before.ranked.len(), 6);

    // A new version of the strongest bot starts provisional: the board keeps the old one.
    let strongest = s.versions[5].0;
    let bot = s.ladder.store().version(strongest).unwrap().bot;
    let v2 = s
        .ladder
        .add_version(&s.owner_keys[5], bot, "2.0", 100_000)
        .unwrap();
    let id = s
        .ladder
        .store()
        .schedule_match(
            &NewMatch {
                season: s.season,
                profile: "classic".into(),
                seed: 9,
                rated: true,
                seats: vec![v2.version, s.versions[0].0, s.versions[1].0],
            },
            100_001,
        )
        .unwrap();
    let results: Vec<SeatResult> = [1, 2, 3]
        .iter()
        .map(|&placing| SeatResult {
            placing,
            timeouts: 0,
            rejections: 0,
        })
        .collect();
    s.ladder.record_finish(id, &results, 100_002).unwrap();
    let board = s.ladder.leaderboard(s.season, "classic").unwrap();
    let row = board.ranked.iter().find(|r| r.bot == bot).unwrap();
    assert_eq!((row.version, row.label.as_str()), (strongest, "1.0"));
    assert!(board.provisional.is_empty(), "the bot is shown once");

    // Banning a bot takes it off the board; other profiles have no board yet.
    s.ladder
        .ban(SanctionTarget::Bot(bot), "shared its key", 100_003)
        .unwrap();
    let board = s.ladder.leaderboard(s.season, "classic").unwrap();
    assert_eq!(board.ranked.len(), 5);
    assert!(board.ranked.iter().all(|r| r.bot != bot));
    assert_eq!(board.ranked[0].rank, 1);
    assert!(
        s.ladder
            .leaderboard(s.season, "brazilian")
            .unwrap()
            .ranked
            .is_empty()
    );
}

#[test]
fn a_new_season_starts_fresh_and_the_old_one_stays_browsable() {
    let s = season(5);
    let mut rng = Pcg64::seed_from_u64(2);
    play_rounds(&s, 5, &mut rng);
    let old = s.ladder.leaderboard(s.season, "classic").unwrap();
    s.ladder.store().close_season(s.season, 50_000).unwrap();
    let next = s.ladder.store().open_season("2026-2", 50_001).unwrap();
    let fresh = Season { season: next, ..s };
    play_rounds(&fresh, 1, &mut rng);
    // Every rating of the new season comes from its own one round.
    for row in fresh.ladder.store().ratings(next).unwrap() {
        assert_eq!(row.state.matches, 1);
    }
    // The closed season is frozen as it was.
    assert_eq!(
        fresh.ladder.leaderboard(SeasonId(1), "classic").unwrap(),
        old
    );
    assert!(fresh.ladder.rerate(SeasonId(1)).unwrap().is_clean());
    assert!(fresh.ladder.rerate(next).unwrap().is_clean());
}

#[test]
fn the_store_can_be_chosen_at_run_time() {
    let dir = tempfile::tempdir().unwrap();
    let ladder: Box<Ladder<dyn Store>> = Box::new(Ladder::new(
        SqliteStore::open(dir.path()).unwrap(),
        LadderConfig::default(),
    ));
    let season = ladder.store().open_season("s", 0).unwrap();
    let (owner, key) = ladder.register_owner("ada", None, 0).unwrap();
    assert_eq!(
        ladder.authenticate(key.as_str()).unwrap(),
        maumau_ladder::Principal::Owner(owner)
    );
    assert!(ladder.rerate(season).unwrap().is_clean());
}
