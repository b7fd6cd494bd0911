//! A tournament played at another [`Venue`]: one where some games are played "elsewhere" (by a
//! stand-in worker rebuilt from the event's description), some claims are lost and played
//! twice, and results come in out of order, gives the same games, standings and champion as
//! [`Tournament::run`], in every format.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::sync::Mutex;
use std::time::Duration;

use maumau_engine::{MatchConfig, ProfileId};
use maumau_tournament::{
    Claim, Entrant, Fixture, Format, GameRecord, Played, Tournament, TournamentError, Venue,
};

/// Every third fixture is played "elsewhere" by a worker's copy of the tournament (collected
/// in reverse order); every fifth claim made here is lost at commit (its game comes back from
/// elsewhere too).
struct Elsewhere {
    worker: Tournament,
    round: Mutex<(Vec<Fixture>, Vec<usize>, usize)>,
}

impl Venue for Elsewhere {
    fn open_round(&self, _: u32, f: &[Fixture], todo: &[usize]) -> Result<(), TournamentError> {
        *self.round.lock().unwrap() = (f.to_vec(), todo.to_vec(), 0);
        Ok(())
    }

    fn claim(&self) -> Result<Claim, TournamentError> {
        let mut r = self.round.lock().unwrap();
        loop {
            let next = r.2;
            let Some(&i) = r.1.get(next) else {
                return Ok(Claim::Later);
            };
            r.2 += 1;
            if i % 3 != 0 {
                return Ok(Claim::Play(i));
            }
        }
    }

    fn commit(&self, index: usize, _: &Played) -> Result<bool, TournamentError> {
        Ok(index % 5 != 1)
    }

    fn collect(&self, wanted: &[usize]) -> Result<Vec<(usize, Played)>, TournamentError> {
        let fixtures = self.round.lock().unwrap().0.clone();
        Ok(wanted
            .iter()
            .rev()
            .filter(|&&i| i % 3 == 0 || i % 5 == 1)
            .map(|&i| (i, self.worker.play_fixture(&fixtures[i])))
            .collect())
    }

    fn poll_every(&self) -> Option<Duration> {
        Some(Duration::from_millis(1))
    }
}

fn untimed(games: &[GameRecord]) -> Vec<GameRecord> {
    games
        .iter()
        .map(|g| GameRecord {
            decision_ns: Vec::new(),
            ..g.clone()
        })
        .collect()
}

#[test]
fn games_played_elsewhere_give_the_same_tournament() {
    for format in [
        Format::RoundRobin,
        Format::Swiss { rounds: 3 },
        Format::SingleElimination,
        Format::DoubleElimination,
    ] {
        let mut t = Tournament::new(
            Entrant::parse_list("random,heuristic,random,heuristic~0.3,random").unwrap(),
            MatchConfig::new(ProfileId::Classic, 2),
        );
        (t.format, t.deals, t.seed, t.threads) = (format, 3, 7, 2);
        let here = t.run(None, &mut |_| {}).unwrap();
        let worker = Tournament::from_description(&t.description(), t.record_replays).unwrap();
        let venue = Elsewhere {
            worker,
            round: Mutex::new(Default::default()),
        };
        let dir = tempfile::tempdir().unwrap();
        let mut last = 0;
        let there = t
            .run_on(&venue, Some(dir.path()), &mut |p| last = p.done)
            .unwrap();
        assert_eq!(untimed(&here.games), untimed(&there.games), "{format:?}");
        assert_eq!(here.champion, there.champion, "{format:?}");
        let names = |r: &maumau_tournament::Report| {
            r.standings
                .iter()
                .map(|s| s.name.clone())
                .collect::<Vec<_>>()
        };
        assert_eq!(names(&here), names(&there), "{format:?}");
        assert_eq!(
            last,
            here.games.len(),
            "progress counts every venue's games"
        );
        // Each game once in the results file.
        let lines = std::fs::read_to_string(dir.path().join("results.jsonl")).unwrap();
        assert_eq!(lines.lines().count(), here.games.len(), "{format:?}");
    }
}

#[test]
fn a_description_that_does_not_parse_is_refused() {
    let t = Tournament::new(
        Entrant::parse_list("random,heuristic").unwrap(),
        MatchConfig::new(ProfileId::Classic, 2),
    );
    let mut d = t.description();
    d.profile = "chess".into();
    assert!(matches!(
        Tournament::from_description(&d, true),
        Err(TournamentError::Invalid(_))
    ));
}
