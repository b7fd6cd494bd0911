//! Whole tournaments: determinism, resuming, formats and bad input.
#![allow(missing_docs, clippy::unwrap_used)]

use maumau_engine::{MatchConfig, ProfileId};
use maumau_tournament::{Entrant, Format, Tournament, TournamentError};

fn tournament(bots: &str, profile: ProfileId, seats: u8) -> Tournament {
    let mut t = Tournament::new(
        Entrant::parse_list(bots).unwrap(),
        MatchConfig::new(profile, seats),
    );
    t.deals = 3;
    t.threads = 2;
    t
}

#[test]
fn the_same_seed_gives_the_same_tournament() {
    let t = tournament("random,heuristic,random", ProfileId::Classic, 2);
    let a = t.run(None, &mut |_| {}).unwrap();
    let b = t.run(None, &mut |_| {}).unwrap();
    assert_eq!(a.games, b.games);
    assert_eq!(a.standings, b.standings);
    // 3 tables × 3 deals × 2 seatings.
    assert_eq!(a.games.len(), 18);
    let mut other = t.clone();
    other.seed = 2;
    assert_ne!(other.run(None, &mut |_| {}).unwrap().games, a.games);
}

#[test]
fn an_interrupted_tournament_resumes_without_replaying_finished_games() {
    let dir = tempfile::tempdir().unwrap();
    let t = tournament("random,heuristic,random~0.5", ProfileId::PenaltyPoints, 3);
    let full = t.run(Some(dir.path()), &mut |_| {}).unwrap();
    assert_eq!(full.played_now, full.games.len());
    // Simulate an interruption: keep the first 4 results and half of the fifth line.
    let path = dir.path().join("results.jsonl");
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let kept = format!(
        "{}\n{}",
        lines[..4].join("\n"),
        &lines[4][..lines[4].len() / 2]
    );
    std::fs::write(&path, kept).unwrap();
    let mut seen = Vec::new();
    let resumed = t.run(Some(dir.path()), &mut |p| seen.push(p.done)).unwrap();
    assert_eq!(resumed.played_now, full.games.len() - 4);
    assert_eq!(
        seen.first(),
        Some(&4),
        "progress starts from the resumed games"
    );
    assert_eq!(resumed.games, full.games);
    assert_eq!(resumed.standings, full.standings);
    for f in [
        "standings.json",
        "standings.csv",
        "pairs.csv",
        "replays.jsonl",
        "tournament.json",
    ] {
        assert!(dir.path().join(f).exists(), "{f}");
    }
    // A different tournament refuses the directory instead of mixing results.
    let mut other = t.clone();
    other.deals = 4;
    assert!(matches!(
        other.run(Some(dir.path()), &mut |_| {}),
        Err(TournamentError::OtherTournament(_))
    ));
}

#[test]
fn replays_replay_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let t = tournament("random,heuristic", ProfileId::Romanian32, 2);
    let report = t.run(Some(dir.path()), &mut |_| {}).unwrap();
    let text = std::fs::read_to_string(dir.path().join("replays.jsonl")).unwrap();
    assert_eq!(text.lines().count(), report.games.len());
    for line in text.lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap();
        let record = report.games.iter().find(|g| g.id == v["id"]).unwrap();
        let mut game = maumau_engine::Game::new(t.config, v["seed"].as_u64().unwrap()).unwrap();
        for a in v["actions"].as_array().unwrap() {
            let (seat, action) = a.as_str().unwrap().split_once(' ').unwrap();
            game.apply(seat.parse().unwrap(), action.parse().unwrap())
                .unwrap();
        }
        let result = game.match_result().expect("the replay ends the match");
        assert_eq!(&result.placings[..2], &record.placings[..]);
        assert_eq!(&result.totals[..2], &record.totals[..]);
    }
}

#[test]
fn swiss_and_elimination_run_to_the_end() {
    let mut swiss = tournament(
        "random,heuristic,random,heuristic,random,heuristic",
        ProfileId::Classic,
        2,
    );
    swiss.format = Format::Swiss { rounds: 3 };
    swiss.deals = 1;
    let r = swiss.run(None, &mut |_| {}).unwrap();
    assert_eq!(r.games.len(), 3 * 3 * 2, "3 rounds × 3 tables × 2 seatings");
    let mut knockout = tournament(
        "heuristic,random,random,random,random",
        ProfileId::Classic,
        2,
    );
    knockout.format = Format::SingleElimination;
    knockout.deals = 4;
    let r = knockout.run(None, &mut |_| {}).unwrap();
    // 5 entrants: 1 pairing in round 1 (3 byes), then 2, then 1.
    assert_eq!(r.games.len(), (1 + 2 + 1) * 4 * 2);
    assert_eq!(r.standings[0].name, "heuristic", "{:?}", r.standings);
}

#[test]
fn bad_input_is_refused_with_a_reason() {
    let err = |t: Tournament| t.run(None, &mut |_| {}).unwrap_err().to_string();
    assert!(
        err(tournament("random,heuristic", ProfileId::Classic, 3))
            .contains("cannot fill a table of 3")
    );
    assert!(
        err(tournament(
            "random,heuristic,random",
            ProfileId::Brazilian,
            3
        ))
        .contains("4 to 8 seats")
    );
    let mut e = tournament("random,heuristic,random", ProfileId::Classic, 3);
    e.format = Format::SingleElimination;
    assert!(err(e).contains("tables of 2"));
}
