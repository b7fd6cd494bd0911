//! The tournament event queue of the PostgreSQL store (`store/events.rs`): games claimed once at
//! a time, a result kept only by the claim holding the lease and only once, a lease that ran out
//! (by the database's clock) claimed again, and events of another version or without a living
//! coordinator left alone.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

mod common {
    pub(crate) mod postgres;
}

use maumau_ladder::PgStore;
use maumau_ladder::store::EventState;

#[test]
fn a_game_is_kept_once_by_the_claim_that_holds_it() {
    let store = PgStore::open(&common::postgres::fresh_database()).unwrap();
    let event = store.create_event("{}", true, "v1", 60_000).unwrap();
    let info = store.event(event).unwrap().unwrap();
    assert_eq!((info.state, info.coordinated), (EventState::Running, true));
    assert!(store.event(event + 1000).unwrap().is_none());
    store
        .add_event_games(
            event,
            0,
            &[
                (0, "r0-t0-d0-s0", u64::MAX, &[1, 0]),
                (1, "r0-t0-d0-s1", 7, &[0, 1]),
            ],
        )
        .unwrap();
    // Released again (a restart): nothing changes.
    store
        .add_event_games(event, 0, &[(0, "r0-t0-d0-s0", 1, &[0, 0])])
        .unwrap();
    // Another version sees nothing.
    assert!(
        store
            .claim_event_game(9, "v2", None, 60_000)
            .unwrap()
            .is_none()
    );
    let a = store
        .claim_event_game(1, "v1", None, 60_000)
        .unwrap()
        .unwrap();
    assert_eq!(
        (a.index, a.seed, a.seats.clone()),
        (0, u64::MAX, vec![1, 0])
    );
    // A lease of 0 ms runs out at once: the next claim takes the game again.
    let b = store
        .claim_event_game(2, "v1", Some(event), 0)
        .unwrap()
        .unwrap();
    assert_eq!(b.index, 1);
    std::thread::sleep(std::time::Duration::from_millis(5));
    let b2 = store
        .claim_event_game(3, "v1", Some(event), 60_000)
        .unwrap()
        .unwrap();
    assert_eq!((b2.index, b2.epoch), (1, b.epoch + 1));
    // The lost claim keeps nothing; the holder keeps its result once.
    assert!(!store.commit_event_game(&b, 2, "late", None).unwrap());
    assert!(
        store
            .commit_event_game(&b2, 3, "{\"b\":1}", Some(b"replay"))
            .unwrap()
    );
    assert!(!store.commit_event_game(&b2, 3, "again", None).unwrap());
    assert!(store.commit_event_game(&a, 1, "{\"a\":1}", None).unwrap());
    assert!(
        store
            .claim_event_game(1, "v1", None, 60_000)
            .unwrap()
            .is_none()
    );
    let done = store.done_event_games(event, 0, &[0, 1]).unwrap();
    assert_eq!(
        done,
        vec![
            (0, "{\"a\":1}".to_string(), None),
            (1, "{\"b\":1}".to_string(), Some(b"replay".to_vec()))
        ]
    );
    assert_eq!(store.done_event_games(event, 0, &[1]).unwrap().len(), 1);
    assert_eq!(
        store.event_game_plays(event).unwrap(),
        vec![(0, 0, 1), (0, 1, 2)]
    );
    store.finish_event(event).unwrap();
    assert_eq!(
        store.event(event).unwrap().unwrap().state,
        EventState::Finished
    );
    assert!(store.running_events().unwrap().is_empty());
}

#[test]
fn games_of_an_event_whose_coordinator_stopped_are_not_handed_out() {
    let store = PgStore::open(&common::postgres::fresh_database()).unwrap();
    let event = store.create_event("{}", false, "v1", 0).unwrap();
    store
        .add_event_games(event, 0, &[(0, "r0-t0-d0-s0", 1, &[0, 1])])
        .unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    assert!(!store.event(event).unwrap().unwrap().coordinated);
    assert!(
        store
            .claim_event_game(1, "v1", None, 60_000)
            .unwrap()
            .is_none()
    );
    // Its coordinator is back: the game is handed out, and its lease renewed.
    store.renew_event_leases(7, Some(event), 60_000).unwrap();
    let g = store
        .claim_event_game(1, "v1", None, 60_000)
        .unwrap()
        .unwrap();
    assert_eq!(store.renew_event_leases(1, None, 60_000).unwrap(), 1);
    assert!(store.commit_event_game(&g, 1, "{}", None).unwrap());
    let (statements, transactions) = store.event_statements();
    assert!(statements >= transactions && transactions >= 5);
}

#[test]
fn an_event_whose_coordinator_stopped_is_taken_over_by_the_same_tournament() {
    let store = PgStore::open(&common::postgres::fresh_database()).unwrap();
    let live = store
        .create_event("{\"seed\":1}", true, "v1", 60_000)
        .unwrap();
    // Its coordinator is alive: nobody takes it over.
    assert_eq!(
        store.take_over_event("{\"seed\":1}", "v1", 60_000).unwrap(),
        None
    );
    let stopped = store.create_event("{\"seed\":2}", true, "v1", 0).unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    // Another tournament or another version does not take it.
    assert_eq!(
        store.take_over_event("{\"seed\":3}", "v1", 60_000).unwrap(),
        None
    );
    assert_eq!(
        store.take_over_event("{\"seed\":2}", "v2", 60_000).unwrap(),
        None
    );
    assert_eq!(
        store.take_over_event("{\"seed\":2}", "v1", 60_000).unwrap(),
        Some(stopped)
    );
    assert!(store.event(stopped).unwrap().unwrap().coordinated);
    // Taken: alive again, so not a second time.
    assert_eq!(
        store.take_over_event("{\"seed\":2}", "v1", 60_000).unwrap(),
        None
    );
    assert_ne!(live, stopped);
}

/// A deal (the games with one seed) is over once every game of it is done; a worker that cannot
/// play an event claims none of its games, and still those of the others.
#[test]
fn deals_are_over_when_all_their_games_are_and_events_can_be_left_alone() {
    let store = PgStore::open(&common::postgres::fresh_database()).unwrap();
    let event = store.create_event("{}", true, "v1", 60_000).unwrap();
    let other = store.create_event("{\"x\":1}", true, "v1", 60_000).unwrap();
    store
        .add_event_games(
            event,
            0,
            &[
                (0, "r0-t0-d0-s0", u64::MAX, &[0, 1]),
                (1, "r0-t0-d0-s1", u64::MAX, &[1, 0]),
                (2, "r0-t0-d1-s0", 5, &[0, 1]),
            ],
        )
        .unwrap();
    store
        .add_event_games(other, 0, &[(0, "r0-t0-d0-s0", 9, &[0, 1])])
        .unwrap();
    assert!(
        store
            .finished_event_deals(event, &[u64::MAX, 5])
            .unwrap()
            .is_empty()
    );
    let g = store
        .claim_event_game_except(1, "v1", None, &[event], 60_000)
        .unwrap()
        .unwrap();
    assert_eq!(g.event, other, "the event left alone is skipped");
    // Given back, it is claimed again at once (by the next claim, of a new epoch).
    assert!(store.release_event_game(&g, 1).unwrap());
    assert!(
        !store.release_event_game(&g, 1).unwrap(),
        "released already"
    );
    let g = store
        .claim_event_game_except(2, "v1", None, &[event], 60_000)
        .unwrap()
        .unwrap();
    assert_eq!((g.event, g.index), (other, 0));
    assert!(store.commit_event_game(&g, 2, "{}", None).unwrap());
    assert!(
        store
            .claim_event_game_except(1, "v1", None, &[event], 60_000)
            .unwrap()
            .is_none()
    );
    for _ in 0..2 {
        let g = store
            .claim_event_game(1, "v1", Some(event), 60_000)
            .unwrap()
            .unwrap();
        assert!(store.commit_event_game(&g, 1, "{}", None).unwrap());
    }
    // The deal of u64::MAX is over; that of 5 has a game left.
    assert_eq!(
        store.finished_event_deals(event, &[u64::MAX, 5]).unwrap(),
        vec![u64::MAX]
    );
}
