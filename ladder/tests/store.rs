//! The storage suite: every test of the [`Store`] trait runs against SQLite (a database file in a
//! temporary directory) and against PostgreSQL (a fresh database on a real server, see
//! `common/postgres.rs`); a few tests of what only one backend has (SQLite's directory lock)
//! stand alone.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
// Test helpers outside #[test] functions unwrap as the tests do.
#![allow(clippy::unwrap_used)]

use maumau_ladder::health::SeatOutcome;
use maumau_ladder::keys::{KeyHash, KeyKind, SecretKey};
use maumau_ladder::matchmaking::Format;
use maumau_ladder::store::{
    DATABASE_FILE, KeySubject, LOCK_FILE, MatchState, NewMatch, RatingCause, RatingChange,
    SanctionKind, SanctionTarget,
};
use maumau_ladder::{
    BotId, LadderError, MatchId, OwnerId, PgStore, SeasonId, SeatResult, SqliteStore, Store,
    VersionId,
};
use maumau_rating::{RatingConfig, RatingState, replay};

mod common {
    pub(crate) mod postgres;
}

fn hash(n: u8) -> KeyHash {
    SecretKey::from_bytes(KeyKind::Owner, &[n; 32]).hash()
}

fn vhash(n: u8) -> KeyHash {
    SecretKey::from_bytes(KeyKind::Version, &[n; 32]).hash()
}

/// A store with a season and `n` owners with one bot and one version each.
fn setup(h: &Harness, n: u8) -> (&dyn Store, SeasonId, Vec<VersionId>) {
    let s = h.store();
    let season = s.open_season("s1", 0).unwrap();
    let mut vs = Vec::new();
    for i in 0..n {
        let o = s.create_owner(&format!("owner{i}"), &hash(i), 0).unwrap();
        let b = s.create_bot(o, &format!("bot{i}"), 0).unwrap();
        vs.push(s.create_version(b, "v1", &vhash(i), 2, 0).unwrap().0);
    }
    (s, season, vs)
}

fn results(placings: &[u8]) -> Vec<SeatResult> {
    placings
        .iter()
        .map(|&placing| SeatResult {
            placing,
            timeouts: 0,
            rejections: 0,
        })
        .collect()
}

fn new_match(season: SeasonId, seats: &[VersionId]) -> NewMatch {
    NewMatch {
        season,
        profile: "classic".into(),
        seed: 1,
        rated: true,
        seats: seats.to_vec(),
    }
}

fn play(s: &dyn Store, season: SeasonId, seats: &[VersionId], placings: &[u8], t: i64) -> MatchId {
    let id = s.schedule_match(&new_match(season, seats), t).unwrap();
    s.start_match(id, t).unwrap();
    s.finish_match(id, &results(placings), &RatingConfig::default(), t + 1)
        .unwrap();
    id
}

#[test]
fn open_creates_the_database_and_reopens_it_with_its_data() {
    let dir = tempfile::tempdir().unwrap();
    let owner = {
        let s = SqliteStore::open(&dir.path().join("data")).unwrap();
        assert_eq!(s.schema_step().unwrap(), SqliteStore::known_schema_step());
        s.create_owner("ada", &hash(1), 5).unwrap()
    };
    assert!(dir.path().join("data").join(DATABASE_FILE).is_file());
    assert!(dir.path().join("data").join(LOCK_FILE).is_file());
    let s = SqliteStore::open(&dir.path().join("data")).unwrap();
    assert_eq!(s.owner(owner).unwrap().name, "ada");
    assert_eq!(s.owner(owner).unwrap().created_ms, 5);
    assert_eq!(s.schema_step().unwrap(), SqliteStore::known_schema_step());
}

#[test]
fn a_second_store_on_the_same_directory_is_refused_until_the_first_closes() {
    let dir = tempfile::tempdir().unwrap();
    let first = SqliteStore::open(dir.path()).unwrap();
    match SqliteStore::open(dir.path()) {
        Err(LadderError::Locked { path }) => assert!(path.ends_with(LOCK_FILE)),
        other => panic!("expected Locked, got {other:?}"),
    }
    drop(first);
    SqliteStore::open(dir.path()).unwrap();
}

/// Run by `a_second_process_is_refused` in a child process: opening the directory named by
/// `LADDER_LOCK_DIR` must fail with `Locked` (or succeed, if `LADDER_LOCK_EXPECT=open`).
#[test]
#[ignore = "run as a child process by a_second_process_is_refused"]
fn child_process_opens_the_store() {
    let Ok(dir) = std::env::var("LADDER_LOCK_DIR") else {
        return;
    };
    let expect_open = std::env::var("LADDER_LOCK_EXPECT").as_deref() == Ok("open");
    match SqliteStore::open(std::path::Path::new(&dir)) {
        Ok(_) => assert!(expect_open, "the second process opened a locked directory"),
        Err(LadderError::Locked { .. }) => assert!(!expect_open, "locked after the holder left"),
        Err(e) => panic!("unexpected error: {e}"),
    }
}

#[test]
fn a_second_process_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let child = |expect: &str| {
        std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "child_process_opens_the_store",
                "--ignored",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("LADDER_LOCK_DIR", dir.path())
            .env("LADDER_LOCK_EXPECT", expect)
            .output()
            .unwrap()
    };
    let held = SqliteStore::open(dir.path()).unwrap();
    let out = child("locked");
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("1 passed"),
        "the child test did not run: {text}"
    );
    drop(held);
    let out = child("open");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
}

#[test]
fn a_database_from_a_newer_build_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    drop(SqliteStore::open(dir.path()).unwrap());
    let c = rusqlite::Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
    c.execute(
        "INSERT INTO schema_migrations (step, name, applied_ms) VALUES (99, 'future', 0)",
        [],
    )
    .unwrap();
    drop(c);
    match SqliteStore::open(dir.path()) {
        Err(LadderError::SchemaTooNew { found: 99, known }) => {
            assert_eq!(known, SqliteStore::known_schema_step())
        }
        other => panic!("{other:?}"),
    }
}

/// A store under test and what it lives in.
struct Harness {
    backend: Backend,
    store: Option<Box<dyn Store>>,
}

enum Backend {
    Sqlite(tempfile::TempDir),
    Postgres(String),
}

impl Harness {
    fn sqlite() -> Harness {
        let dir = tempfile::tempdir().unwrap();
        let store = Box::new(SqliteStore::open(dir.path()).unwrap());
        Harness {
            backend: Backend::Sqlite(dir),
            store: Some(store),
        }
    }

    fn postgres() -> Harness {
        let url = common::postgres::fresh_database();
        let store = Box::new(PgStore::open(&url).unwrap());
        Harness {
            backend: Backend::Postgres(url),
            store: Some(store),
        }
    }

    fn store(&self) -> &dyn Store {
        self.store.as_deref().unwrap()
    }

    /// Closes the store and opens it again on the same data.
    fn reopen(&mut self) {
        drop(self.store.take());
        self.store = Some(match &self.backend {
            Backend::Sqlite(dir) => Box::new(SqliteStore::open(dir.path()).unwrap()),
            Backend::Postgres(url) => Box::new(PgStore::open(url).unwrap()),
        });
    }

    /// Closes the store, runs `sql` on its database, and opens the store again.
    fn reopen_after(&mut self, sql: &str) {
        drop(self.store.take());
        match &self.backend {
            Backend::Sqlite(dir) => rusqlite::Connection::open(dir.path().join(DATABASE_FILE))
                .unwrap()
                .execute_batch(sql)
                .unwrap(),
            Backend::Postgres(url) => ::postgres::Client::connect(url, ::postgres::NoTls)
                .unwrap()
                .batch_execute(sql)
                .unwrap(),
        }
        self.reopen();
    }

    /// Tries to change a version's label with plain SQL, past the store.
    fn relabel_behind_the_stores_back(&self, v: VersionId) -> Result<(), String> {
        match &self.backend {
            Backend::Sqlite(dir) => {
                let c = rusqlite::Connection::open(dir.path().join(DATABASE_FILE)).unwrap();
                c.execute("UPDATE versions SET label = 'changed' WHERE id = ?1", [v.0])
                    .map(drop)
                    .map_err(|e| e.to_string())
            }
            Backend::Postgres(url) => {
                let mut c = ::postgres::Client::connect(url, ::postgres::NoTls).unwrap();
                c.execute(
                    "UPDATE versions SET label = 'changed' WHERE id = $1",
                    &[&v.0],
                )
                .map(drop)
                .map_err(|e| {
                    e.as_db_error()
                        .map_or(e.to_string(), |d| d.message().into())
                })
            }
        }
    }
}

/// Runs every named test against both stores.
macro_rules! suite {
    ($($name:ident),* $(,)?) => {
        mod sqlite {
            $(#[test]
            fn $name() {
                super::$name(&mut super::Harness::sqlite());
            })*
        }
        mod postgres {
            $(#[test]
            fn $name() {
                super::$name(&mut super::Harness::postgres());
            })*
        }
    };
}

suite!(
    owners_bots_and_names,
    the_two_newest_versions_stay_active,
    keys_are_found_by_hash_revoked_and_rotated,
    one_season_is_open_at_a_time,
    schedule_checks_its_seats,
    a_match_is_rated_once_with_one_event_per_seat,
    ratings_accumulate_in_rating_order_and_match_a_replay,
    unrated_and_late_matches_leave_ratings_alone,
    aborted_matches_keep_seat_outcomes_and_are_never_rated,
    voiding_recomputes_ratings_without_the_match,
    rating_changes_apply_only_over_the_expected_ratings,
    sanctions_start_and_lift,
    seat_history_and_last_scheduled,
    everything_survives_a_restart,
    concurrent_finishes_rate_a_match_once,
    placing_stats_count_finished_rated_matches_of_the_season_and_profile,
    validation_matches_have_one_seat_and_keep_their_verdict,
    a_database_from_before_rejections_migrates,
    names_from_before_name_keys_are_still_compared_as_they_look,
    a_match_keeps_one_server_match_id_across_a_restart,
    a_database_from_before_server_match_ids_migrates_and_keeps_its_rows,
    formats_set_are_kept_in_order_replaced_whole_and_survive_a_restart,
);

#[test]
fn postgres_refuses_a_database_from_a_newer_build_and_migrates_once() {
    let url = common::postgres::fresh_database();
    // Several nodes starting at once apply the steps once.
    std::thread::scope(|scope| {
        for _ in 0..4 {
            scope.spawn(|| PgStore::open(&url).unwrap());
        }
    });
    let s = PgStore::open(&url).unwrap();
    assert_eq!(s.schema_step().unwrap(), PgStore::known_schema_step());
    drop(s);
    let mut c = ::postgres::Client::connect(&url, ::postgres::NoTls).unwrap();
    let steps: i64 = c
        .query_one("SELECT COUNT(*) FROM schema_migrations", &[])
        .unwrap()
        .get(0);
    assert_eq!(steps, i64::from(PgStore::known_schema_step()));
    c.execute(
        "INSERT INTO schema_migrations (step, name, applied_ms) VALUES (99, 'future', 0)",
        &[],
    )
    .unwrap();
    match PgStore::open(&url) {
        Err(LadderError::SchemaTooNew { found: 99, known }) => {
            assert_eq!(known, PgStore::known_schema_step())
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn postgres_refuses_an_unreachable_server_with_a_clear_error() {
    match PgStore::open("postgres://nobody:secret@127.0.0.1:1/none?connect_timeout=2") {
        Err(e @ LadderError::Unavailable(_)) => {
            let text = e.to_string();
            assert!(text.contains("cannot connect"), "{text}");
            assert!(!text.contains("secret"), "the password leaked: {text}");
        }
        other => panic!("{other:?}"),
    }
}

/// TLS when the URL asks: `sslmode=require` encrypts (PostgreSQL's `pg_stat_ssl` says so for
/// every connection of the store) and the store works; `verify-full` with the server's CA
/// connects; `verify-full` with another CA, or for a host name the certificate does not carry,
/// is refused with an error that says why and names no password.
#[test]
fn postgres_connects_with_tls_when_the_url_asks_and_verify_full_checks_the_certificate() {
    let (admin, ca) = common::postgres::tls_server();
    let base = common::postgres::fresh_database_on(admin);
    let name = format!("tlstest_{}", std::process::id());

    let s = PgStore::open(&format!("{base}&application_name={name}&sslmode=require")).unwrap();
    let o = s.create_owner("ada", &hash(1), 0).unwrap();
    let b = s.create_bot(o, "lovelace", 0).unwrap();
    assert_eq!(s.owner(o).unwrap().name, "ada");
    assert_eq!(s.bot(b).unwrap().name, "lovelace");
    let mut plain = ::postgres::Client::connect(admin, ::postgres::NoTls).unwrap();
    let row = plain
        .query_one(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE l.ssl)
             FROM pg_stat_activity a JOIN pg_stat_ssl l USING (pid)
             WHERE a.application_name = $1",
            &[&name],
        )
        .unwrap();
    let (open, encrypted): (i64, i64) = (row.get(0), row.get(1));
    assert!(open >= 1, "the store keeps a connection");
    assert_eq!(
        encrypted, open,
        "every connection of the store is encrypted"
    );
    s.close();
    drop(s);

    let s = PgStore::open(&format!("{base}&sslmode=verify-full&sslrootcert={ca}")).unwrap();
    assert_eq!(s.owner(o).unwrap().name, "ada");
    s.close();
    drop(s);

    // Another CA: a certificate of its own, made with openssl as the server's was.
    let dir = tempfile::tempdir().unwrap();
    let other = dir.path().join("other-ca.pem");
    let made = std::process::Command::new("openssl")
        .args(["req", "-x509", "-newkey", "ec", "-pkeyopt"])
        .args([
            "ec_paramgen_curve:prime256v1",
            "-nodes",
            "-days",
            "1",
            "-subj",
        ])
        .args(["/CN=another CA", "-keyout"])
        .arg(dir.path().join("other-ca.key"))
        .arg("-out")
        .arg(&other)
        .output()
        .unwrap();
    assert!(made.status.success(), "{made:?}");
    let refused = |url: &str, says: &str| match PgStore::open(url) {
        Err(e @ LadderError::Database(_)) => {
            let text = e.to_string();
            assert!(text.contains("cannot connect"), "{text}");
            assert!(text.contains(says), "{text}");
            assert!(!text.contains("hunter2"), "the password leaked: {text}");
        }
        other => panic!("{url}: {other:?}"),
    };
    refused(
        &format!(
            "{base}&password=hunter2&sslmode=verify-full&sslrootcert={}",
            other.display()
        ),
        "invalid peer certificate: UnknownIssuer",
    );
    // The right CA, but a name the certificate does not carry (same server, through hostaddr).
    if base.contains("@127.0.0.1:") {
        refused(
            &format!(
                "{}&hostaddr=127.0.0.1&password=hunter2&sslmode=verify-full&sslrootcert={ca}",
                base.replacen("@127.0.0.1:", "@db.invalid:", 1)
            ),
            "invalid peer certificate: certificate not valid for name",
        );
    }
}

fn owners_bots_and_names(h: &mut Harness) {
    let s = h.store();
    let o = s.create_owner("ada", &hash(1), 0).unwrap();
    assert!(matches!(
        s.create_owner("ada", &hash(2), 0),
        Err(LadderError::Duplicate { what: "owner", .. })
    ));
    // The same key hash twice is refused too, and the owner is not half-created.
    assert!(matches!(
        s.create_owner("bo", &hash(1), 0),
        Err(LadderError::Duplicate { what: "key", .. })
    ));
    s.create_bot(o, "x", 0).unwrap();
    assert!(
        s.create_owner("bo", &hash(2), 0).is_ok(),
        "the failed owner left nothing behind"
    );
    for bad in ["", "   ", "a\nb", &"x".repeat(101)] {
        assert!(matches!(
            s.create_owner(bad, &hash(3), 0),
            Err(LadderError::Invalid(_))
        ));
    }
    assert!(matches!(
        s.create_bot(OwnerId(99), "y", 0),
        Err(LadderError::NotFound { what: "owner", .. })
    ));
    assert!(matches!(
        s.create_bot(o, "x", 0),
        Err(LadderError::Duplicate { what: "bot", .. })
    ));
    let b = s.create_bot(o, "second", 3).unwrap();
    let bots = s.bots_of(o).unwrap();
    assert_eq!(bots.len(), 2);
    assert_eq!(bots[1].id, b);
    assert_eq!(s.bot(b).unwrap().owner, o);
    assert!(matches!(
        s.bot(BotId(77)),
        Err(LadderError::NotFound { what: "bot", .. })
    ));
}

fn the_two_newest_versions_stay_active(h: &mut Harness) {
    let s = h.store();
    let o = s.create_owner("ada", &hash(1), 0).unwrap();
    let b = s.create_bot(o, "bot", 0).unwrap();
    let (v1, r1) = s.create_version(b, "1.0", &vhash(1), 2, 10).unwrap();
    let (v2, r2) = s.create_version(b, "1.1", &vhash(2), 2, 20).unwrap();
    assert!(r1.is_empty() && r2.is_empty());
    let (v3, r3) = s.create_version(b, "2.0", &vhash(3), 2, 30).unwrap();
    assert_eq!(r3, vec![v1]);
    let vs = s.versions_of(b).unwrap();
    assert_eq!(
        vs.iter().map(|v| v.id).collect::<Vec<_>>(),
        vec![v3, v2, v1],
        "newest first"
    );
    assert_eq!(vs[2].retired_ms, Some(30));
    assert!(vs[0].is_active() && vs[1].is_active() && !vs[2].is_active());
    let active: Vec<VersionId> = s
        .active_versions()
        .unwrap()
        .iter()
        .map(|v| v.version)
        .collect();
    assert_eq!(active, vec![v2, v3]);
    // Labels are unique within a bot and immutable.
    assert!(matches!(
        s.create_version(b, "1.1", &vhash(4), 2, 40),
        Err(LadderError::Duplicate {
            what: "version",
            ..
        })
    ));
    assert!(matches!(
        s.create_version(b, "x", &vhash(4), 0, 40),
        Err(LadderError::Invalid(_))
    ));
    let err = h.relabel_behind_the_stores_back(v2).unwrap_err();
    assert!(err.contains("immutable"), "{err}");
}

fn keys_are_found_by_hash_revoked_and_rotated(h: &mut Harness) {
    let (s, _season, vs) = setup(h, 1);
    let rec = s.key_by_hash(&vhash(0)).unwrap().unwrap();
    assert_eq!(rec.subject, KeySubject::Version(vs[0]));
    assert!(rec.revoked_ms.is_none());
    assert!(s.key_by_hash(&vhash(9)).unwrap().is_none());

    let new = s.rotate_key(rec.id, &vhash(10), 50).unwrap();
    let old = s.key_by_hash(&vhash(0)).unwrap().unwrap();
    assert_eq!(old.revoked_ms, Some(50));
    let fresh = s.key_by_hash(&vhash(10)).unwrap().unwrap();
    assert_eq!(
        (fresh.id, fresh.subject, fresh.revoked_ms),
        (new, rec.subject, None)
    );
    assert!(matches!(
        s.rotate_key(rec.id, &vhash(11), 60),
        Err(LadderError::State(_))
    ));
    assert!(
        s.key_by_hash(&vhash(11)).unwrap().is_none(),
        "a failed rotation issues nothing"
    );

    let extra = s
        .add_key(KeySubject::Version(vs[0]), &vhash(12), 70)
        .unwrap();
    s.revoke_key(extra, 80).unwrap();
    s.revoke_key(extra, 90).unwrap();
    assert_eq!(
        s.key_by_hash(&vhash(12)).unwrap().unwrap().revoked_ms,
        Some(80)
    );
    assert_eq!(s.keys_of(KeySubject::Version(vs[0])).unwrap().len(), 3);
    assert!(matches!(
        s.add_key(KeySubject::Owner(OwnerId(42)), &hash(42), 0),
        Err(LadderError::NotFound { .. })
    ));
    assert!(matches!(
        s.add_key(KeySubject::Version(vs[0]), &vhash(12), 0),
        Err(LadderError::Duplicate { what: "key", .. })
    ));
}

fn one_season_is_open_at_a_time(h: &mut Harness) {
    let (s, season, vs) = setup(h, 2);
    assert!(matches!(s.open_season("s2", 1), Err(LadderError::State(_))));
    assert_eq!(s.current_season().unwrap().unwrap().id, season);
    s.close_season(season, 10).unwrap();
    assert!(matches!(
        s.close_season(season, 11),
        Err(LadderError::State(_))
    ));
    assert!(s.current_season().unwrap().is_none());
    assert!(matches!(
        s.schedule_match(&new_match(season, &vs), 12),
        Err(LadderError::State(_))
    ));
    assert!(matches!(
        s.open_season("s1", 12),
        Err(LadderError::Duplicate { what: "season", .. })
    ));
    let s2 = s.open_season("s2", 12).unwrap();
    let seasons = s.seasons().unwrap();
    assert_eq!(seasons.len(), 2);
    assert_eq!(seasons[0].closed_ms, Some(10));
    assert_eq!(s.current_season().unwrap().unwrap().id, s2);
}

fn schedule_checks_its_seats(h: &mut Harness) {
    let (s, season, vs) = setup(h, 3);
    assert!(matches!(
        s.schedule_match(&new_match(season, &vs[..1]), 0),
        Err(LadderError::Invalid(_))
    ));
    assert!(matches!(
        s.schedule_match(&new_match(season, &[vs[0], vs[1], vs[0]]), 0),
        Err(LadderError::Invalid(_))
    ));
    assert!(matches!(
        s.schedule_match(&new_match(season, &[vs[0], VersionId(999)]), 0),
        Err(LadderError::NotFound {
            what: "version",
            ..
        })
    ));
    assert!(matches!(
        s.schedule_match(&new_match(SeasonId(9), &vs), 0),
        Err(LadderError::NotFound { what: "season", .. })
    ));
    // A retired version cannot be seated.
    let b = s.version(vs[0]).unwrap().bot;
    s.create_version(b, "v2", &vhash(50), 2, 1).unwrap();
    s.create_version(b, "v3", &vhash(51), 2, 2).unwrap();
    assert!(matches!(
        s.schedule_match(&new_match(season, &vs), 3),
        Err(LadderError::State(_))
    ));
}

fn a_match_is_rated_once_with_one_event_per_seat(h: &mut Harness) {
    let (s, season, vs) = setup(h, 4);
    let mut m = new_match(season, &vs);
    m.seed = u64::MAX - 5;
    let id = s.schedule_match(&m, 100).unwrap();
    let rec = s.match_record(id).unwrap();
    assert_eq!(rec.state, MatchState::Scheduled);
    assert_eq!(rec.seed, u64::MAX - 5);
    assert_eq!(rec.seats.iter().map(|x| x.version).collect::<Vec<_>>(), vs);
    assert!(
        rec.seats
            .iter()
            .all(|x| x.outcome.is_none() && x.placing.is_none())
    );

    s.start_match(id, 110).unwrap();
    assert!(matches!(s.start_match(id, 111), Err(LadderError::State(_))));
    let cfg = RatingConfig::default();
    // Bad results change nothing.
    assert!(matches!(
        s.finish_match(id, &results(&[1, 2, 3]), &cfg, 120),
        Err(LadderError::Invalid(_))
    ));
    assert!(matches!(
        s.finish_match(id, &results(&[1, 1, 2, 4]), &cfg, 120),
        Err(LadderError::Invalid(_))
    ));
    assert_eq!(s.match_record(id).unwrap().state, MatchState::Running);
    assert!(s.rating_events(season).unwrap().is_empty());

    let mut r = results(&[2, 1, 3, 3]);
    r[2].timeouts = 4;
    r[2].rejections = 2;
    let changes = s.finish_match(id, &r, &cfg, 130).unwrap();
    assert_eq!(changes.len(), 4);
    assert!(changes[1].after.rating.mu > changes[0].after.rating.mu);
    assert!(matches!(
        s.finish_match(id, &r, &cfg, 140),
        Err(LadderError::State(_))
    ));
    let rec = s.match_record(id).unwrap();
    assert_eq!(rec.state, MatchState::Finished);
    assert_eq!((rec.started_ms, rec.ended_ms), (Some(110), Some(130)));
    assert_eq!(rec.rated_seq, Some(1));
    assert_eq!(rec.seats[2].placing, Some(3));
    assert_eq!(
        rec.seats[2].outcome,
        Some(SeatOutcome {
            joined: true,
            timeouts: 4,
            rejections: 2,
        })
    );

    let events = s.rating_events(season).unwrap();
    assert_eq!(events.len(), 4);
    for (e, c) in events.iter().zip(&changes) {
        assert_eq!(e.cause, RatingCause::Match);
        assert_eq!(e.match_id, Some(id));
        assert_eq!(&e.change, c);
        assert_eq!(e.change.before, RatingState::default());
    }
    let row = s.rating(season, "classic", vs[1]).unwrap().unwrap();
    assert_eq!(row.state, changes[1].after);
    assert_eq!(row.state.matches, 1);
    assert!(s.rating(season, "brazilian", vs[1]).unwrap().is_none());
    assert_eq!(s.ratings(season).unwrap().len(), 4);
}

fn ratings_accumulate_in_rating_order_and_match_a_replay(h: &mut Harness) {
    let (s, season, vs) = setup(h, 5);
    play(s, season, &vs[..4], &[1, 2, 3, 4], 10);
    play(s, season, &vs[1..], &[4, 3, 2, 1], 20);
    play(s, season, &[vs[0], vs[4]], &[2, 1], 30);
    let rated = s.rated_matches(season).unwrap();
    assert_eq!(rated.len(), 3);
    let replayed = replay(&RatingConfig::default(), &rated);
    for row in s.ratings(season).unwrap() {
        assert_eq!(replayed[&(row.profile.clone(), row.version)], row.state);
    }
    assert_eq!(
        s.rating(season, "classic", vs[0])
            .unwrap()
            .unwrap()
            .state
            .matches,
        2
    );
}

fn unrated_and_late_matches_leave_ratings_alone(h: &mut Harness) {
    let (s, season, vs) = setup(h, 3);
    let mut m = new_match(season, &vs);
    m.rated = false;
    let id = s.schedule_match(&m, 0).unwrap();
    assert!(
        s.finish_match(id, &results(&[1, 2, 3]), &RatingConfig::default(), 1)
            .unwrap()
            .is_empty()
    );
    assert_eq!(s.match_record(id).unwrap().rated_seq, None);
    // A rated match whose season closes before it ends is kept unrated.
    let late = s.schedule_match(&new_match(season, &vs), 2).unwrap();
    s.close_season(season, 3).unwrap();
    assert!(
        s.finish_match(late, &results(&[1, 2, 3]), &RatingConfig::default(), 4)
            .unwrap()
            .is_empty()
    );
    let rec = s.match_record(late).unwrap();
    assert_eq!(rec.state, MatchState::Finished);
    assert!(!rec.rated);
    assert!(s.ratings(season).unwrap().is_empty());
    assert!(s.rating_events(season).unwrap().is_empty());
}

fn aborted_matches_keep_seat_outcomes_and_are_never_rated(h: &mut Harness) {
    let (s, season, vs) = setup(h, 3);
    let id = s.schedule_match(&new_match(season, &vs), 0).unwrap();
    let outcomes = [
        SeatOutcome {
            joined: true,
            timeouts: 0,
            rejections: 0,
        },
        SeatOutcome {
            joined: false,
            timeouts: 0,
            rejections: 0,
        },
        SeatOutcome {
            joined: true,
            timeouts: 1,
            rejections: 0,
        },
    ];
    assert!(matches!(
        s.abort_match(id, &outcomes[..2], "no-show", 5),
        Err(LadderError::Invalid(_))
    ));
    s.abort_match(id, &outcomes, "seat 1 did not join", 5)
        .unwrap();
    let rec = s.match_record(id).unwrap();
    assert_eq!(rec.state, MatchState::Aborted);
    assert_eq!(rec.reason.as_deref(), Some("seat 1 did not join"));
    assert_eq!(rec.seats[1].outcome, Some(outcomes[1]));
    assert!(matches!(
        s.finish_match(id, &results(&[1, 2, 3]), &RatingConfig::default(), 6),
        Err(LadderError::State(_))
    ));
    assert!(matches!(
        s.abort_match(id, &outcomes, "again", 7),
        Err(LadderError::State(_))
    ));
    let h = s.seat_history(vs[1], None, 10).unwrap();
    assert_eq!(h.len(), 1);
    assert_eq!(h[0].state, MatchState::Aborted);
    assert!(h[0].outcome.is_fault());
    assert_eq!(s.matches_in_state(MatchState::Aborted).unwrap().len(), 1);
    assert!(s.ratings(season).unwrap().is_empty());
}

fn voiding_recomputes_ratings_without_the_match(h: &mut Harness) {
    let (s, season, vs) = setup(h, 5);
    let cfg = RatingConfig::default();
    let a = play(s, season, &vs[..4], &[1, 2, 3, 4], 10);
    let b = play(s, season, &[vs[0], vs[4]], &[1, 2], 20);
    play(s, season, &vs[..4], &[4, 3, 2, 1], 30);
    let before = s.ratings(season).unwrap();

    let changes = s.void_match(b, "fixed by a bug", &cfg, 40).unwrap();
    // vs[4] played only the voided match: back to the default with 0 matches.
    let v4 = changes.iter().find(|c| c.version == vs[4]).unwrap();
    assert_eq!(v4.after, RatingState::default());
    // vs[0] played after it: changed. vs[1..4] never met vs[4] nor vs[0] in b, but their later
    // match c involved vs[0], whose rating differed: changed too.
    assert!(changes.iter().any(|c| c.version == vs[0]));
    assert_eq!(s.match_record(b).unwrap().state, MatchState::Void);
    assert_eq!(
        s.match_record(b).unwrap().reason.as_deref(),
        Some("fixed by a bug")
    );

    let expected = replay(
        &cfg,
        &s.rated_matches(season)
            .unwrap()
            .into_iter()
            .filter(|m| m.id != b)
            .collect::<Vec<_>>(),
    );
    assert_eq!(s.rated_matches(season).unwrap().len(), 2);
    for row in s.ratings(season).unwrap() {
        let want = expected
            .get(&(row.profile.clone(), row.version))
            .copied()
            .unwrap_or_default();
        assert_eq!(row.state, want, "version {}", row.version);
    }
    assert_ne!(before, s.ratings(season).unwrap());
    let void_events = s
        .rating_events(season)
        .unwrap()
        .into_iter()
        .filter(|e| e.cause == RatingCause::Void)
        .count();
    assert_eq!(void_events, changes.len());
    assert!(matches!(
        s.void_match(b, "again", &cfg, 50),
        Err(LadderError::State(_))
    ));
    assert!(matches!(
        s.void_match(a, " ", &cfg, 50),
        Err(LadderError::Invalid(_))
    ));
    // Voiding an unrated or unfinished match changes no rating.
    let d = s.schedule_match(&new_match(season, &vs[..2]), 60).unwrap();
    assert!(s.void_match(d, "operator", &cfg, 61).unwrap().is_empty());
}

fn rating_changes_apply_only_over_the_expected_ratings(h: &mut Harness) {
    let (s, season, vs) = setup(h, 2);
    play(s, season, &vs, &[1, 2], 10);
    let current = s.rating(season, "classic", vs[0]).unwrap().unwrap().state;
    let mut after = current;
    after.rating.mu += 1.0;
    let stale = RatingChange {
        profile: "classic".into(),
        version: vs[0],
        before: RatingState::default(),
        after,
    };
    assert!(matches!(
        s.apply_rating_changes(
            season,
            std::slice::from_ref(&stale),
            RatingCause::Rerate,
            20
        ),
        Err(LadderError::State(_))
    ));
    assert_eq!(s.rating_events(season).unwrap().len(), 2);
    let good = RatingChange {
        before: current,
        ..stale
    };
    s.apply_rating_changes(season, &[good], RatingCause::Rerate, 20)
        .unwrap();
    assert_eq!(
        s.rating(season, "classic", vs[0]).unwrap().unwrap().state,
        after
    );
    let last = s.rating_events(season).unwrap().pop().unwrap();
    assert_eq!((last.cause, last.match_id), (RatingCause::Rerate, None));
}

fn sanctions_start_and_lift(h: &mut Harness) {
    let (s, _season, vs) = setup(h, 1);
    let t = SanctionTarget::Version(vs[0]);
    let p = s
        .add_sanction(t, SanctionKind::Pause, "maintenance", 10)
        .unwrap();
    let h = s
        .add_sanction(t, SanctionKind::Health, "3 timeouts", 11)
        .unwrap();
    s.add_sanction(
        SanctionTarget::Owner(OwnerId(1)),
        SanctionKind::Ban,
        "cheating",
        12,
    )
    .unwrap();
    assert!(matches!(
        s.add_sanction(t, SanctionKind::Ban, "", 13),
        Err(LadderError::Invalid(_))
    ));
    assert!(matches!(
        s.add_sanction(SanctionTarget::Bot(BotId(50)), SanctionKind::Ban, "x", 13),
        Err(LadderError::NotFound { what: "bot", .. })
    ));
    assert_eq!(s.active_sanctions().unwrap().len(), 3);
    s.lift_sanction(h, "probe clean", 20).unwrap();
    assert!(matches!(
        s.lift_sanction(h, "again", 21),
        Err(LadderError::State(_))
    ));
    let of = s.sanctions_of(t).unwrap();
    assert_eq!(of.len(), 2);
    assert_eq!(of[0].id, p);
    assert_eq!(of[1].lifted_ms, Some(20));
    assert_eq!(of[1].lifted_reason.as_deref(), Some("probe clean"));
    assert_eq!(of[1].kind, SanctionKind::Health);
    assert_eq!(s.active_sanctions().unwrap().len(), 2);
}

fn seat_history_and_last_scheduled(h: &mut Harness) {
    let (s, season, vs) = setup(h, 2);
    for t in 0..5 {
        play(s, season, &vs, &[1, 2], t * 10);
    }
    let h = s.seat_history(vs[0], None, 3).unwrap();
    assert_eq!(h.len(), 3);
    assert!(h[0].ended_ms > h[1].ended_ms, "newest first");
    assert_eq!(s.seat_history(vs[0], Some(21), 10).unwrap().len(), 2);
    // A scheduled match has no outcome yet.
    s.schedule_match(&new_match(season, &vs), 100).unwrap();
    assert_eq!(s.seat_history(vs[0], None, 10).unwrap().len(), 5);
    assert_eq!(
        s.last_scheduled().unwrap(),
        vec![(vs[0], 100), (vs[1], 100)]
    );
    assert_eq!(s.recent_matches(2).unwrap()[0].state, MatchState::Scheduled);
    assert_eq!(s.matches_in_state(MatchState::Finished).unwrap().len(), 5);
}

/// Undoes schema steps 11 (formats), 10 and 9 (tournament events: PostgreSQL's tables and their
/// index, none on SQLite), 8 (ends told) and 7 (the server's match ids), as a database from
/// before them is.
const BEFORE_SERVER_MATCH_IDS: &str = "DROP TABLE formats;
     DELETE FROM schema_migrations WHERE step = 11;
     DROP TABLE IF EXISTS tournament_games;
     DROP TABLE IF EXISTS tournament_events;
     DELETE FROM schema_migrations WHERE step = 10;
     DELETE FROM schema_migrations WHERE step = 9;
     DROP INDEX IF EXISTS matches_untold;
     ALTER TABLE matches DROP COLUMN ends_told;
     DELETE FROM schema_migrations WHERE step = 8;
     ALTER TABLE matches DROP COLUMN server_match_id;
     DELETE FROM schema_migrations WHERE step = 7;";

/// Undoes schema step 6 (name keys); run after [`BEFORE_SERVER_MATCH_IDS`].
const BEFORE_NAME_KEYS: &str = "DROP INDEX owners_by_name_key;
     DROP INDEX bots_by_name_key;
     DROP INDEX versions_by_label_key;
     ALTER TABLE owners DROP COLUMN name_key;
     ALTER TABLE bots DROP COLUMN name_key;
     ALTER TABLE versions DROP COLUMN label_key;
     DELETE FROM schema_migrations WHERE step = 6;";

fn a_database_from_before_rejections_migrates(h: &mut Harness) {
    let (season, vs, old) = {
        let (s, season, vs) = setup(h, 2);
        (season, vs.clone(), play(s, season, &vs, &[1, 2], 10))
    };
    // Back to step 4: no rejections column, steps 5 to 9 not applied.
    h.reopen_after(&format!(
        "{BEFORE_SERVER_MATCH_IDS}
         {BEFORE_NAME_KEYS}
         ALTER TABLE match_seats DROP COLUMN rejections;
         DELETE FROM schema_migrations WHERE step = 5;"
    ));
    let s = h.store();
    let seat = s.match_record(old).unwrap().seats[0].outcome.unwrap();
    assert_eq!((seat.joined, seat.rejections), (true, 0));
    let id = s.schedule_match(&new_match(season, &vs), 20).unwrap();
    let mut r = results(&[1, 2]);
    r[1].rejections = 3;
    s.finish_match(id, &r, &RatingConfig::default(), 30)
        .unwrap();
    let h = s.seat_history(vs[1], None, 1).unwrap();
    assert_eq!((h[0].match_id, h[0].outcome.rejections), (id, 3));
}

fn everything_survives_a_restart(h: &mut Harness) {
    let (season, vs, id) = {
        let s = h.store();
        let season = s.open_season("s1", 0).unwrap();
        let mut vs = Vec::new();
        for i in 0..3 {
            let o = s.create_owner(&format!("o{i}"), &hash(i), 0).unwrap();
            let b = s.create_bot(o, &format!("b{i}"), 0).unwrap();
            vs.push(s.create_version(b, "v1", &vhash(i), 2, 0).unwrap().0);
        }
        let id = play(s, season, &vs, &[1, 2, 3], 10);
        (season, vs, id)
    };
    h.reopen();
    let s = h.store();
    assert_eq!(s.match_record(id).unwrap().state, MatchState::Finished);
    assert_eq!(s.ratings(season).unwrap().len(), 3);
    assert_eq!(s.rating_events(season).unwrap().len(), 3);
    assert_eq!(s.rated_matches(season).unwrap()[0].seats[0], (vs[0], 1));
    // The rating order continues after a restart.
    let next = play(s, season, &vs, &[3, 2, 1], 20);
    assert_eq!(s.match_record(next).unwrap().rated_seq, Some(2));
}

fn formats_set_are_kept_in_order_replaced_whole_and_survive_a_restart(h: &mut Harness) {
    let format = |profile: &str, seats: u8, weight: f64| Format {
        profile: profile.into(),
        seats,
        weight,
    };
    assert_eq!(h.store().formats().unwrap(), None, "none set yet");
    let first = vec![
        format("romanian-32", 3, 2.5),
        format("classic", 4, 1.0),
        format("brazilian", 6, 0.0),
    ];
    h.store().set_formats(&first, 100).unwrap();
    assert_eq!(h.store().formats().unwrap(), Some((first, 100)));
    let second = vec![format("penalty-points", 2, 0.25)];
    h.store().set_formats(&second, 200).unwrap();
    h.reopen();
    assert_eq!(
        h.store().formats().unwrap(),
        Some((second, 200)),
        "replaced whole, and kept across a restart"
    );
}

fn concurrent_finishes_rate_a_match_once(h: &mut Harness) {
    let (s, season, vs) = setup(h, 4);
    let id = s.schedule_match(&new_match(season, &vs), 0).unwrap();
    let cfg = RatingConfig::default();
    let r = results(&[1, 2, 3, 4]);
    let ok = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4)
            .map(|_| scope.spawn(|| s.finish_match(id, &r, &cfg, 5).is_ok()))
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().ok())
            .filter(|&finished| finished)
            .count()
    });
    assert_eq!(ok, 1);
    assert_eq!(s.rating_events(season).unwrap().len(), 4);
    assert_eq!(
        s.rating(season, "classic", vs[0])
            .unwrap()
            .unwrap()
            .state
            .matches,
        1
    );
}

fn placing_stats_count_finished_rated_matches_of_the_season_and_profile(h: &mut Harness) {
    let (s, season, vs) = setup(h, 3);
    let cfg = RatingConfig::default();
    // Two rated classic matches, one with timeouts and a tie for first.
    play(s, season, &vs, &[1, 2, 3], 10);
    let id = s.schedule_match(&new_match(season, &vs), 20).unwrap();
    let with_timeouts = [
        SeatResult {
            placing: 1,
            timeouts: 0,
            rejections: 0,
        },
        SeatResult {
            placing: 1,
            timeouts: 2,
            rejections: 0,
        },
        SeatResult {
            placing: 3,
            timeouts: 5,
            rejections: 0,
        },
    ];
    s.finish_match(id, &with_timeouts, &cfg, 21).unwrap();
    // Left out: another profile, an unrated match, an aborted one and a voided one.
    let mut other = new_match(season, &vs);
    other.profile = "brazilian".into();
    let o = s.schedule_match(&other, 30).unwrap();
    s.finish_match(o, &results(&[3, 2, 1]), &cfg, 31).unwrap();
    let mut unrated = new_match(season, &vs);
    unrated.rated = false;
    let u = s.schedule_match(&unrated, 40).unwrap();
    s.finish_match(u, &results(&[3, 2, 1]), &cfg, 41).unwrap();
    let a = s.schedule_match(&new_match(season, &vs), 50).unwrap();
    let joined = SeatOutcome {
        joined: true,
        timeouts: 9,
        rejections: 0,
    };
    s.abort_match(a, &[joined; 3], "test", 51).unwrap();
    let v = play(s, season, &vs, &[3, 2, 1], 60);
    s.void_match(v, "test", &cfg, 70).unwrap();

    let stats = s.placing_stats(season, "classic").unwrap();
    let got: Vec<_> = stats
        .iter()
        .map(|p| (p.version, p.matches, p.wins, p.placing_sum, p.timeouts))
        .collect();
    assert_eq!(
        got,
        vec![
            (vs[0], 2, 2, 2, 0),
            (vs[1], 2, 1, 3, 2),
            (vs[2], 2, 0, 6, 5),
        ]
    );
    // The match counts agree with the ratings' own counts.
    for row in s.ratings(season).unwrap() {
        if row.profile == "classic" {
            let p = stats.iter().find(|p| p.version == row.version).unwrap();
            assert_eq!(p.matches, row.state.matches);
        }
    }
    assert_eq!(s.placing_stats(season, "brazilian").unwrap().len(), 3);
    assert!(s.placing_stats(season, "romanian-32").unwrap().is_empty());
}

fn validation_matches_have_one_seat_and_keep_their_verdict(h: &mut Harness) {
    let (s, season, vs) = setup(h, 2);
    let validation = |profile: &str| NewMatch {
        season,
        profile: profile.into(),
        seed: 7,
        rated: false,
        seats: vec![vs[0]],
    };
    // One seat is enough for an unrated match, never for a rated one; none is never enough.
    let mut rated_alone = validation("classic");
    rated_alone.rated = true;
    assert!(matches!(
        s.schedule_match(&rated_alone, 0),
        Err(LadderError::Invalid(_))
    ));
    let mut empty = validation("classic");
    empty.seats.clear();
    assert!(matches!(
        s.schedule_match(&empty, 0),
        Err(LadderError::Invalid(_))
    ));
    let passed = s.schedule_match(&validation("classic"), 10).unwrap();
    s.start_match(passed, 11).unwrap();
    let clean = SeatOutcome {
        joined: true,
        timeouts: 0,
        rejections: 0,
    };
    s.finish_validation(passed, clean, &[], 20).unwrap();
    let failed = s.schedule_match(&validation("brazilian"), 30).unwrap();
    let reasons = vec![
        "protocol error: an illegal action".to_string(),
        "3 timeouts (at most 1)".to_string(),
    ];
    let late = SeatOutcome {
        joined: true,
        timeouts: 3,
        rejections: 0,
    };
    // Finished straight from scheduled: it may never have started.
    s.finish_validation(failed, late, &reasons, 40).unwrap();

    let got = s.validations_of(vs[0]).unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(
        (got[0].match_id, got[0].profile.as_str(), got[0].passed),
        (passed, "classic", true)
    );
    assert!(got[0].reasons.is_empty());
    assert_eq!(got[0].ended_ms, 20);
    assert_eq!(
        (got[1].match_id, got[1].profile.as_str(), got[1].passed),
        (failed, "brazilian", false)
    );
    assert_eq!(got[1].reasons, reasons);
    assert_eq!(got[1].ended_ms, 40);
    assert!(s.validations_of(vs[1]).unwrap().is_empty());

    // The match records say finished, unrated, with the seat's outcome; nothing was rated.
    let m = s.match_record(failed).unwrap();
    assert_eq!(m.state, MatchState::Finished);
    assert!(!m.rated && m.rated_seq.is_none());
    assert_eq!(m.started_ms, Some(40));
    assert_eq!(m.seats.len(), 1);
    assert_eq!(m.seats[0].outcome, Some(late));
    assert_eq!(m.seats[0].placing, None);
    assert!(s.rating_events(season).unwrap().is_empty());
    assert!(s.ratings(season).unwrap().is_empty());
    assert!(s.placing_stats(season, "classic").unwrap().is_empty());

    // A verdict is given once; rated matches take no verdict.
    assert!(matches!(
        s.finish_validation(passed, clean, &[], 50),
        Err(LadderError::State(_))
    ));
    let rated = s.schedule_match(&new_match(season, &vs), 60).unwrap();
    assert!(matches!(
        s.finish_validation(rated, clean, &[], 61),
        Err(LadderError::Invalid(_))
    ));
    assert!(matches!(
        s.finish_validation(MatchId(9999), clean, &[], 61),
        Err(LadderError::NotFound { .. })
    ));
    // They survive a restart.
    h.reopen();
    assert_eq!(h.store().validations_of(vs[0]).unwrap(), got);
    // A voided validation match no longer counts.
    h.store()
        .void_match(failed, "test", &RatingConfig::default(), 70)
        .unwrap();
    assert_eq!(h.store().validations_of(vs[0]).unwrap(), got[..1]);
}

#[test]
fn postgres_nodes_claim_under_a_lease_and_orphans_are_retried_then_voided() {
    use maumau_ladder::store::{Layout, MAX_RETRIES};
    let url = common::postgres::fresh_database();
    let a = PgStore::open(&url).unwrap();
    // Another node: its own connections and leases.
    let b = PgStore::open(&url).unwrap();
    let season = a.open_season("s1", 0).unwrap();
    let vs = versions(&a, 4);
    let na = a.join_node("http://a").unwrap();
    let nb = b.join_node("http://b").unwrap();
    let four = Layout {
        table_seats: 4,
        copies: 4,
    };
    let m1 = a
        .schedule_laid_out(&new_match(season, &vs), four, 10)
        .unwrap();
    let m2 = a
        .schedule_laid_out(&new_match(season, &vs), four, 10)
        .unwrap();
    // A match scheduled without a layout is not work for the nodes.
    a.schedule_match(&new_match(season, &vs), 10).unwrap();

    // Each match is claimed once: a takes one, b the other, nothing is left.
    let got_a = a.claim(na, 1, 60_000).unwrap();
    let got_b = b.claim(nb, 5, 60_000).unwrap();
    assert_eq!(got_a.len(), 1);
    assert_eq!(got_b.len(), 1);
    assert_eq!(got_a[0].record.id, m1);
    assert_eq!(got_b[0].record.id, m2);
    assert_eq!(got_a[0].layout, four);
    assert!(a.claim(na, 5, 60_000).unwrap().is_empty());

    // Only the holder records the end; the other node is refused and changes nothing.
    let cfg = RatingConfig::default();
    assert!(matches!(
        b.finish_match(m1, &results(&[1, 2, 3, 4]), &cfg, 30),
        Err(LadderError::State(_))
    ));
    assert!(matches!(
        b.abort_match(
            m1,
            &[SeatOutcome {
                joined: true,
                timeouts: 0,
                rejections: 0,
            }; 4],
            "no",
            30
        ),
        Err(LadderError::State(_))
    ));
    assert_eq!(a.match_record(m1).unwrap().state, MatchState::Scheduled);
    a.finish_match(m1, &results(&[1, 2, 3, 4]), &cfg, 30)
        .unwrap();
    a.release_lease(m1);

    // b renews its lease and sees it in its heartbeat; then b goes silent and its lease runs out
    // (a renewal of 1 ms, and the database's clock moves on).
    let lobby = maumau_ladder::Lobby {
        version: vs[0],
        max_matches: 2,
        profiles: vec!["classic".into()],
        seats: vec![4],
    };
    assert_eq!(
        b.heartbeat(nb, std::slice::from_ref(&lobby), 60_000)
            .unwrap(),
        vec![m2]
    );
    assert_eq!(a.shared_lobbies(3_000).unwrap(), vec![lobby.clone()]);
    assert!(a.reap(1_400, |s, n| s + n as u64).unwrap().is_empty());
    b.heartbeat(nb, std::slice::from_ref(&lobby), 1).unwrap();
    // Every seat's version has a lobby on a live node (a), so the orphan is retried.
    let everyone: Vec<maumau_ladder::Lobby> = vs
        .iter()
        .map(|&version| maumau_ladder::Lobby {
            version,
            ..lobby.clone()
        })
        .collect();
    a.heartbeat(na, &everyone, 60_000).unwrap();
    pg_clock_moves_on();
    assert!(a.shared_lobbies(1).unwrap().is_empty());
    let reaped = a.reap(1_600, |s, n| s + n as u64).unwrap();
    assert_eq!(reaped.len(), 1);
    assert_eq!(reaped[0].record.id, m2);
    assert_eq!(reaped[0].node, nb);
    let retry = reaped[0].retry.unwrap();
    assert!(!reaped[0].voided);
    let old = a.match_record(m2).unwrap();
    assert_eq!(old.state, MatchState::Aborted);
    assert!(
        old.reason
            .unwrap()
            .contains(&format!("retried as match {retry}"))
    );
    // b's late finish fails: nothing is rated twice.
    assert!(
        b.finish_match(m2, &results(&[1, 2, 3, 4]), &cfg, 1_700)
            .is_err()
    );
    let again = a.match_record(retry).unwrap();
    assert_eq!(again.state, MatchState::Scheduled);
    assert_eq!(again.seed, old.seed + 1);
    assert_eq!(
        again.seats.iter().map(|s| s.version).collect::<Vec<_>>(),
        vs
    );

    // The retry dies too, MAX_RETRIES times in all; then the match is voided.
    let mut current = retry;
    for attempt in 1..=MAX_RETRIES {
        let claimed = b.claim(nb, 5, 1).unwrap();
        assert_eq!(claimed.len(), 1);
        assert_eq!(claimed[0].record.id, current);
        pg_clock_moves_on();
        let reaped = a
            .reap(2_000 * i64::from(attempt) + 1_500, |s, n| s + n as u64)
            .unwrap();
        assert_eq!(reaped.len(), 1);
        if attempt < MAX_RETRIES {
            current = reaped[0].retry.unwrap();
        } else {
            assert!(reaped[0].voided && reaped[0].retry.is_none());
            assert_eq!(a.match_record(current).unwrap().state, MatchState::Void);
        }
    }
    // Only m1 was rated, once per seat.
    let events = a.rating_events(season).unwrap();
    assert_eq!(events.len(), 4);
    assert!(events.iter().all(|e| e.match_id == Some(m1)));
    assert!(a.try_lead().unwrap());
    assert!(!b.try_lead().unwrap(), "two matchmakers at once");
    a.close();
    // The lock goes with a's session (the server notices the session end at once, or nearly).
    let mut led = false;
    for _ in 0..100 {
        led = b.try_lead().unwrap();
        if led {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    assert!(led, "the lock outlived its session");
    b.close();
}

/// A dead node (its session ended) is told from a slow one (silent, but its liveness lock is
/// held): the dead one is marked stopped, its lobbies dropped and its leases ended at once, and
/// its orphan is not retried when a seat's version has no lobby on a live node left.
#[test]
fn postgres_a_dead_node_is_buried_at_once_and_a_slow_one_is_not() {
    use maumau_ladder::store::Layout;
    let url = common::postgres::fresh_database();
    let a = PgStore::open(&url).unwrap();
    let c = PgStore::open(&url).unwrap();
    let season = a.open_season("s1", 0).unwrap();
    let vs = versions(&a, 2);
    let na = a.join_node("http://a").unwrap();
    let nc = c.join_node("http://c").unwrap();
    assert!(a.try_lead().unwrap());
    let m = a
        .schedule_laid_out(
            &new_match(season, &vs),
            Layout {
                table_seats: 2,
                copies: 2,
            },
            10,
        )
        .unwrap();
    assert_eq!(c.claim(nc, 1, 60_000).unwrap().len(), 1);
    // Version 0's lobby is on c, version 1's on a.
    let lobby = |version| maumau_ladder::Lobby {
        version,
        max_matches: 1,
        profiles: vec!["classic".into()],
        seats: vec![2],
    };
    c.hold_node_lock(nc).unwrap();
    c.heartbeat(nc, &[lobby(vs[0])], 60_000).unwrap();
    a.hold_node_lock(na).unwrap();
    a.heartbeat(na, &[lobby(vs[1])], 60_000).unwrap();
    pg_clock_moves_on();
    // c is silent but alive (it holds its lock): left alone, its lease stands.
    assert!(a.bury_dead_nodes(1).unwrap().is_empty());
    assert!(a.reap(20, |s, n| s + n as u64).unwrap().is_empty());
    // c's process dies: its session ends and the lock is free.
    c.close();
    let buried = await_burial(&a);
    assert_eq!(buried, vec![nc]);
    assert!(a.bury_dead_nodes(1).unwrap().is_empty(), "buried once");
    assert_eq!(a.shared_lobbies(60_000).unwrap(), vec![lobby(vs[1])]);
    let nodes = a.nodes().unwrap();
    assert!(nodes.iter().any(|n| n.id == nc && n.stopped_ms.is_some()));
    assert!(nodes.iter().any(|n| n.id == na && n.stopped_ms.is_none()));
    // Its match's lease ended with it; version 0's lobby went too, so no retry: aborted, nobody
    // at fault.
    let reaped = a.reap(30, |s, n| s + n as u64).unwrap();
    assert_eq!(reaped.len(), 1);
    assert_eq!(reaped[0].record.id, m);
    assert!(reaped[0].retry.is_none() && !reaped[0].voided);
    let ended = a.match_record(m).unwrap();
    assert_eq!(ended.state, MatchState::Aborted);
    assert!(ended.reason.unwrap().contains("not retried"));
    assert!(
        ended
            .seats
            .iter()
            .all(|s| s.outcome.is_some_and(|o| o.joined))
    );
    a.close();
}

/// A result a node recorded but did not get to tell before it died is told by the matchmaker's
/// node, and only once: a late post of the same end by anyone queues nothing.
#[test]
fn postgres_an_end_recorded_by_a_node_that_died_is_told_once() {
    use maumau_ladder::store::{Layout, Posted};
    let url = common::postgres::fresh_database();
    let a = PgStore::open(&url).unwrap();
    let c = PgStore::open(&url).unwrap();
    let season = a.open_season("s1", 0).unwrap();
    let vs = versions(&a, 2);
    let na = a.join_node("http://a").unwrap();
    let nc = c.join_node("http://c").unwrap();
    assert!(a.try_lead().unwrap());
    a.hold_node_lock(na).unwrap();
    let two = Layout {
        table_seats: 2,
        copies: 2,
    };
    let told = a
        .schedule_laid_out(&new_match(season, &vs), two, 10)
        .unwrap();
    let untold = a
        .schedule_laid_out(&new_match(season, &vs), two, 10)
        .unwrap();
    assert_eq!(c.claim(nc, 2, 60_000).unwrap().len(), 2);
    c.hold_node_lock(nc).unwrap();
    let cfg = RatingConfig::default();
    let end = |m: maumau_ladder::MatchId, v: VersionId| Posted {
        version: v,
        payload: format!("end of {m}").into_bytes(),
        end_of: Some(m),
    };
    // c records both ends but tells only the first before it dies.
    c.finish_match(told, &results(&[1, 2]), &cfg, 20).unwrap();
    c.finish_match(untold, &results(&[2, 1]), &cfg, 21).unwrap();
    c.post_events(&[end(told, vs[0]), end(told, vs[1])])
        .unwrap();
    assert!(a.untold_ends(60_000).unwrap().is_empty(), "c is alive");
    c.close();
    let buried = await_burial(&a);
    assert_eq!(buried, vec![nc]);
    let found = a.untold_ends(60_000).unwrap();
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].0.id, untold);
    assert_eq!(found[0].0.state, MatchState::Finished);
    // Told now, by a; then again by anyone (c's late post): only the first is queued.
    a.post_events(&[end(untold, vs[0]), end(untold, vs[1])])
        .unwrap();
    a.post_events(&[end(untold, vs[0]), end(untold, vs[1])])
        .unwrap();
    assert!(a.untold_ends(60_000).unwrap().is_empty());
    let queued = a.take_events(&vs).unwrap();
    let ends_of = |m: maumau_ladder::MatchId| {
        queued
            .iter()
            .filter(|(_, p)| *p == format!("end of {m}").into_bytes())
            .count()
    };
    assert_eq!(ends_of(told), 2);
    assert_eq!(ends_of(untold), 2);
    a.close();
}

/// What one node does is heard by the others at once: a match scheduled, lobby messages queued,
/// a match's end told; messages name the nodes whose lobbies they are for.
#[test]
fn postgres_nodes_hear_what_the_others_notify() {
    use maumau_ladder::matchmaking::Lobby;
    use maumau_ladder::store::{Layout, Notice, Posted};
    let url = common::postgres::fresh_database();
    let a = PgStore::open(&url).unwrap();
    let b = PgStore::open(&url).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    b.listen(move |notice| {
        let _ = tx.lock().unwrap().send(notice);
    })
    .unwrap();
    let season = a.open_season("s1", 0).unwrap();
    let vs = versions(&a, 3);
    let heard = |want: Notice| {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            match rx.recv_timeout(left) {
                Ok(notice) if notice == want => return,
                Ok(_) => continue,
                Err(e) => panic!("never heard {want:?}: {e}"),
            }
        }
    };
    // The listener may still be connecting: schedule until it hears one.
    let layout = Layout {
        table_seats: 2,
        copies: 2,
    };
    let pair = [vs[0], vs[1]];
    let mut id = a
        .schedule_laid_out(&new_match(season, &pair), layout, 10)
        .unwrap();
    for _ in 0..50 {
        if let Ok(notice) = rx.recv_timeout(std::time::Duration::from_millis(200)) {
            assert_eq!(notice, Notice::Scheduled);
            break;
        }
        id = a
            .schedule_laid_out(&new_match(season, &pair), layout, 10)
            .unwrap();
    }
    let message = |version, end_of| Posted {
        version,
        payload: b"hello".to_vec(),
        end_of,
    };
    // No node holds these lobbies yet: every node is told.
    a.post_events(&[message(vs[0], None)]).unwrap();
    heard(Notice::Messages(vec![]));
    // vs[0]'s lobby is on node `na`, vs[1]'s on `nb`, vs[2]'s nowhere.
    let lobby = |version| Lobby {
        version,
        max_matches: 1,
        profiles: vec!["classic".into()],
        seats: vec![2],
    };
    let na = a.join_node("http://a").unwrap();
    let nb = a.join_node("http://b").unwrap();
    a.heartbeat(na, &[lobby(vs[0])], 60_000).unwrap();
    a.heartbeat(nb, &[lobby(vs[1])], 60_000).unwrap();
    a.post_events(&[message(vs[0], None), message(vs[2], None)])
        .unwrap();
    heard(Notice::Messages(vec![na]));
    assert!(Notice::Messages(vec![na]).concerns(na));
    assert!(!Notice::Messages(vec![na]).concerns(nb));
    // A match's end, for both seats: both nodes, and the matchmaker.
    assert!(!a.claim(na, 10, 60_000).unwrap().is_empty());
    a.post_events(&[message(vs[0], Some(id)), message(vs[1], Some(id))])
        .unwrap();
    heard(Notice::Ended(vec![na, nb]));
    // A poll's question: messages for these lobbies, or (when claiming) a match to claim.
    assert!(a.has_work(&[vs[1]], false).unwrap());
    assert!(!a.has_work(&[], false).unwrap());
    // The messages are taken in the order they were queued, whatever the node.
    let taken = a.take_events(&[vs[0], vs[1], vs[2]]).unwrap();
    let order: Vec<VersionId> = taken.iter().map(|(v, _)| *v).collect();
    assert_eq!(order, vec![vs[0], vs[0], vs[2], vs[0], vs[1]]);
    assert!(!a.has_work(&[vs[0], vs[1], vs[2]], true).unwrap());
    a.schedule_laid_out(&new_match(season, &pair), layout, 10)
        .unwrap();
    assert!(a.has_work(&[], true).unwrap());
    assert!(!a.has_work(&[vs[0]], false).unwrap());
    b.close();
    a.close();
}

/// A notice's payload reads back as itself; one this build does not know concerns every node and
/// wakes the matchmaker.
#[test]
fn notices_read_back_and_unknown_ones_wake_everybody() {
    use maumau_ladder::store::{NodeId, Notice};
    for n in [
        Notice::Scheduled,
        Notice::Messages(vec![]),
        Notice::Messages(vec![NodeId(3)]),
        Notice::Ended(vec![NodeId(1), NodeId(12)]),
        Notice::Ended(vec![]),
    ] {
        assert_eq!(Notice::parse(&n.payload()), n, "{}", n.payload());
    }
    assert_eq!(Notice::parse("ended:1,12").payload(), "ended:1,12");
    for unknown in ["claimed", "messages:x", "scheduled:2", ""] {
        let n = Notice::parse(unknown);
        assert_eq!(n, Notice::Other(unknown.to_string()));
        assert!(n.concerns(NodeId(7)) && n.wakes_matchmaker());
    }
    assert!(!Notice::Scheduled.wakes_matchmaker());
    assert!(Notice::Scheduled.concerns(NodeId(7)));
}

/// The nodes `a` buries once a dead node's session has ended (PostgreSQL notices at once, or
/// nearly: tried for up to 2 s).
fn await_burial(a: &PgStore) -> Vec<maumau_ladder::store::NodeId> {
    for _ in 0..100 {
        let buried = a.bury_dead_nodes(1).unwrap();
        if !buried.is_empty() {
            return buried;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    Vec::new()
}

/// `n` owners with a bot and a version each; their versions.
fn versions(store: &PgStore, n: u8) -> Vec<VersionId> {
    (0..n)
        .map(|i| {
            let o = store.create_owner(&format!("o{i}"), &hash(i), 0).unwrap();
            let bot = store.create_bot(o, &format!("b{i}"), 0).unwrap();
            store.create_version(bot, "v1", &vhash(i), 2, 0).unwrap().0
        })
        .collect()
}

/// Lets the database's clock pass a lease of a millisecond or two.
fn pg_clock_moves_on() {
    std::thread::sleep(std::time::Duration::from_millis(20));
}

/// Leases and liveness are judged by the database's clock: a node whose own clock is minutes
/// ahead (the `now` it passes) reaps no live lease, and one minutes behind still reaps an
/// expired one.
#[test]
fn postgres_leases_follow_the_database_clock_not_the_nodes() {
    use maumau_ladder::store::Layout;
    let url = common::postgres::fresh_database();
    let a = PgStore::open(&url).unwrap();
    let b = PgStore::open(&url).unwrap();
    let season = a.open_season("s1", 0).unwrap();
    let vs = versions(&a, 2);
    let two = Layout {
        table_seats: 2,
        copies: 2,
    };
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64;
    let (ahead, behind) = (wall + 600_000, wall - 600_000);
    let nb = b.join_node("http://b").unwrap();
    let live = a
        .schedule_laid_out(&new_match(season, &vs), two, behind)
        .unwrap();
    assert_eq!(b.claim(nb, 1, 5_000).unwrap().len(), 1);
    let lobby = maumau_ladder::Lobby {
        version: vs[0],
        max_matches: 1,
        profiles: vec!["classic".into()],
        seats: vec![2],
    };
    assert_eq!(
        b.heartbeat(nb, std::slice::from_ref(&lobby), 5_000)
            .unwrap(),
        vec![live]
    );
    // The matchmaker's node runs ten minutes ahead: b is alive and its lease is not reaped.
    assert!(a.reap(ahead, |s, n| s + n as u64).unwrap().is_empty());
    assert_eq!(a.shared_lobbies(3_000).unwrap(), vec![lobby.clone()]);
    assert_eq!(a.match_record(live).unwrap().state, MatchState::Scheduled);

    // A lease that ran out by the database's clock is reaped by a node ten minutes behind.
    let expired = a
        .schedule_laid_out(&new_match(season, &vs), two, behind)
        .unwrap();
    let claimed = b.claim(nb, 1, 1).unwrap();
    assert_eq!(claimed[0].record.id, expired);
    pg_clock_moves_on();
    let reaped = a.reap(behind, |s, n| s + n as u64).unwrap();
    assert_eq!(
        reaped.iter().map(|r| r.record.id).collect::<Vec<_>>(),
        vec![expired]
    );
    assert_eq!(a.match_record(expired).unwrap().state, MatchState::Aborted);
    assert_eq!(a.match_record(live).unwrap().state, MatchState::Scheduled);
    // The live lease is still b's to renew.
    assert_eq!(
        b.heartbeat(nb, std::slice::from_ref(&lobby), 5_000)
            .unwrap(),
        vec![live]
    );
    a.close();
    b.close();
}

/// Connections of the test's store, by the application name in its URL.
fn connections_named(admin: &mut ::postgres::Client, name: &str) -> (i64, i64) {
    let row = admin
        .query_one(
            "SELECT COUNT(*), COUNT(*) FILTER (WHERE wait_event_type = 'Lock')
             FROM pg_stat_activity WHERE application_name = $1",
            &[&name],
        )
        .unwrap();
    (row.get(0), row.get(1))
}

/// The pool opens at most its limit however many calls run at once; a call that finds every
/// connection in use waits, then fails Busy (which is not an outage).
#[test]
fn postgres_pool_keeps_its_limit_and_a_call_beyond_it_waits_then_fails_busy() {
    use maumau_ladder::store::PoolLimits;
    use std::time::{Duration, Instant};
    let base = common::postgres::fresh_database();
    let name = format!("pooltest_{}", std::process::id());
    let url = format!("{base}&application_name={name}");
    let wait = Duration::from_millis(300);
    let s = PgStore::open_with(
        &url,
        PoolLimits {
            max_connections: 3,
            wait,
        },
    )
    .unwrap();
    s.open_season("s1", 0).unwrap();
    let mut admin = ::postgres::Client::connect(&base, ::postgres::NoTls).unwrap();

    // Sixteen readers at once.
    let readers: Vec<_> = (0..16)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || {
                for _ in 0..40 {
                    s.seasons().unwrap();
                }
            })
        })
        .collect();
    let mut most = (0, 0);
    while readers.iter().any(|r| !r.is_finished()) {
        most.0 = most.0.max(connections_named(&mut admin, &name).0);
        most.1 = most.1.max(s.open_connections());
    }
    for r in readers {
        r.join().unwrap();
    }
    assert!(most.0 <= 3 && most.1 <= 3, "{most:?} connections open");

    // Three calls hold every connection (they wait for a table lock); a fourth waits its time
    // and fails Busy, and the store is still available.
    let mut t = admin.transaction().unwrap();
    t.batch_execute("LOCK TABLE seasons IN ACCESS EXCLUSIVE MODE")
        .unwrap();
    let holders: Vec<_> = (0..3)
        .map(|_| {
            let s = s.clone();
            std::thread::spawn(move || s.seasons().map(|v| v.len()))
        })
        .collect();
    let mut watcher = ::postgres::Client::connect(&base, ::postgres::NoTls).unwrap();
    while connections_named(&mut watcher, &name).1 < 3 {
        std::thread::yield_now();
    }
    let started = Instant::now();
    match s.seasons() {
        Err(LadderError::Busy(why)) => assert!(why.contains("3 connections"), "{why}"),
        other => panic!("{other:?}"),
    }
    let waited = started.elapsed();
    assert!(
        waited >= wait && waited < wait * 10,
        "waited {waited:?} for {wait:?}"
    );
    assert!(s.is_available());
    t.commit().unwrap();
    for h in holders {
        assert_eq!(h.join().unwrap().unwrap(), 1);
    }
    assert_eq!(s.seasons().unwrap().len(), 1);
    s.close();
}

fn names_from_before_name_keys_are_still_compared_as_they_look(h: &mut Harness) {
    let (o, b) = {
        let s = h.store();
        let o = s.create_owner("house-proud", &hash(1), 0).unwrap();
        let b = s.create_bot(o, "bot-one", 0).unwrap();
        s.create_version(b, "v1", &vhash(1), 2, 0).unwrap();
        (o, b)
    };
    // Back to step 5: the rows have no keys.
    h.reopen_after(&format!("{BEFORE_SERVER_MATCH_IDS}\n{BEFORE_NAME_KEYS}"));
    let s = h.store();
    let dup = |r: Result<(), LadderError>, what: &str| match r {
        Err(LadderError::Duplicate { what: w, name }) => assert_eq!(w, what, "{name}"),
        other => panic!("{what}: {other:?}"),
    };
    // A Cyrillic о in each (twice: the first look fills the old rows' keys in, then rolls back).
    for _ in 0..2 {
        dup(
            s.create_owner("hоuse-proud", &hash(2), 1).map(|_| ()),
            "owner",
        );
        dup(s.create_bot(o, "bоt-one", 1).map(|_| ()), "bot");
        dup(
            s.create_version(b, "V1", &vhash(2), 2, 1).map(|_| ()),
            "version",
        );
    }
    // Distinct names still register, and keep their keys.
    let o2 = s.create_owner("other", &hash(3), 1).unwrap();
    s.create_bot(o2, "bot-two", 1).unwrap();
    dup(s.create_owner("ОTHER", &hash(4), 2).map(|_| ()), "owner");
}

fn a_match_keeps_one_server_match_id_across_a_restart(h: &mut Harness) {
    let (played, unplayed, validation, vs) = {
        let (s, season, vs) = setup(h, 2);
        let played = s.schedule_match(&new_match(season, &vs), 10).unwrap();
        assert_eq!(s.match_record(played).unwrap().server_match_id, None);
        s.set_server_match_id(played, "m0123456789abcdef").unwrap();
        // The same id again is a retried write; another id, or none, is refused.
        s.set_server_match_id(played, "m0123456789abcdef").unwrap();
        assert!(matches!(
            s.set_server_match_id(played, "mffff"),
            Err(LadderError::State(_))
        ));
        assert!(matches!(
            s.set_server_match_id(played, ""),
            Err(LadderError::Invalid(_))
        ));
        assert!(matches!(
            s.set_server_match_id(MatchId(9999), "m1"),
            Err(LadderError::NotFound { .. })
        ));
        s.start_match(played, 11).unwrap();
        s.finish_match(played, &results(&[1, 2]), &RatingConfig::default(), 12)
            .unwrap();
        // A match that never got a table has none.
        let unplayed = s.schedule_match(&new_match(season, &vs), 20).unwrap();
        s.abort_uninvited(unplayed, "no table", 21).unwrap();
        // A validation match's verdict names its table too.
        let validation = s
            .schedule_match(
                &NewMatch {
                    rated: false,
                    seats: vec![vs[0]],
                    ..new_match(season, &vs)
                },
                30,
            )
            .unwrap();
        s.set_server_match_id(validation, "m2").unwrap();
        let clean = SeatOutcome {
            joined: true,
            timeouts: 0,
            rejections: 0,
        };
        s.finish_validation(validation, clean, &[], 31).unwrap();
        (played, unplayed, validation, vs)
    };
    h.reopen();
    let s = h.store();
    let m = s.match_record(played).unwrap();
    assert_eq!(
        (m.state, m.server_match_id.as_deref()),
        (MatchState::Finished, Some("m0123456789abcdef"))
    );
    assert_eq!(s.match_record(unplayed).unwrap().server_match_id, None);
    let ids: Vec<Option<String>> = s
        .recent_matches(10)
        .unwrap()
        .into_iter()
        .map(|m| m.server_match_id)
        .collect();
    assert_eq!(
        ids,
        [Some("m2".into()), None, Some("m0123456789abcdef".into())]
    );
    let verdicts = s.validations_of(vs[0]).unwrap();
    assert_eq!(
        (verdicts[0].match_id, verdicts[0].server_match_id.as_deref()),
        (validation, Some("m2"))
    );
    assert_eq!(s.server_match_ids().unwrap(), ["m0123456789abcdef", "m2"]);
}

fn a_database_from_before_server_match_ids_migrates_and_keeps_its_rows(h: &mut Harness) {
    let (season, vs, old, running) = {
        let (s, season, vs) = setup(h, 2);
        let old = play(s, season, &vs, &[2, 1], 10);
        let running = s.schedule_match(&new_match(season, &vs), 20).unwrap();
        s.start_match(running, 21).unwrap();
        (season, vs, old, running)
    };
    let before = (
        h.store().match_record(old).unwrap(),
        h.store().ratings(season).unwrap(),
        h.store().rating_events(season).unwrap(),
    );
    // Back to step 6: no server_match_id column, steps 7 to 9 not applied.
    h.reopen_after(BEFORE_SERVER_MATCH_IDS);
    let s = h.store();
    // Every row is still there, as it was; the old matches have no table id.
    assert_eq!(
        (
            s.match_record(old).unwrap(),
            s.ratings(season).unwrap(),
            s.rating_events(season).unwrap(),
        ),
        before
    );
    assert_eq!(s.match_record(running).unwrap().state, MatchState::Running);
    assert_eq!(s.match_record(running).unwrap().server_match_id, None);
    assert!(s.server_match_ids().unwrap().is_empty());
    // The step ran: a match still in flight takes its table id, and new matches do.
    s.set_server_match_id(running, "m1").unwrap();
    let new = s.schedule_match(&new_match(season, &vs), 30).unwrap();
    s.set_server_match_id(new, "m2").unwrap();
    assert_eq!(s.server_match_ids().unwrap(), ["m1", "m2"]);
    let schema_step = match &h.backend {
        Backend::Sqlite(dir) => {
            drop(h.store.take());
            let s = SqliteStore::open(dir.path()).unwrap();
            (s.schema_step().unwrap(), SqliteStore::known_schema_step())
        }
        Backend::Postgres(url) => {
            let s = PgStore::open(url).unwrap();
            (s.schema_step().unwrap(), PgStore::known_schema_step())
        }
    };
    assert_eq!(schema_step.0, schema_step.1);
    assert_eq!(schema_step.0, 11);
}
