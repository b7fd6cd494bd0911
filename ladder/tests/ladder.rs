//! The ladder's rules over a real SQLite store: registration, keys, versions, pauses and bans,
//! health, voiding and rerating, and the matchmaker's candidates.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
// Test helpers outside #[test] functions unwrap as the tests do.
#![allow(clippy::unwrap_used)]

use maumau_ladder::health::{HealthPolicy, SeatOutcome};
use maumau_ladder::keys::RegistrationPolicy;
use maumau_ladder::matchmaking::Format;
use maumau_ladder::rerate::Finding;
use maumau_ladder::store::{DATABASE_FILE, KeySubject, NewMatch, SanctionTarget};
use maumau_ladder::validation::{CopyReport, ValidationPolicy};
use maumau_ladder::{
    BotId, Eligibility, Ladder, LadderConfig, LadderError, Lobby, MatchId, Principal, SeasonId,
    SeatResult, SqliteStore, Store, VersionId,
};

struct World {
    dir: tempfile::TempDir,
    ladder: Ladder<SqliteStore>,
    season: SeasonId,
    owner_keys: Vec<String>,
    bots: Vec<BotId>,
    versions: Vec<VersionId>,
}

/// The default policies without validation (most tests are about something else).
fn plain() -> LadderConfig {
    LadderConfig {
        validation: ValidationPolicy {
            required: false,
            ..ValidationPolicy::default()
        },
        ..LadderConfig::default()
    }
}

fn world(n: usize, config: LadderConfig) -> World {
    let dir = tempfile::tempdir().unwrap();
    let ladder = Ladder::new(SqliteStore::open(dir.path()).unwrap(), config);
    let season = ladder.store().open_season("s1", 0).unwrap();
    let mut w = World {
        dir,
        ladder,
        season,
        owner_keys: Vec::new(),
        bots: Vec::new(),
        versions: Vec::new(),
    };
    for i in 0..n {
        let (_, key) = w
            .ladder
            .register_owner(&format!("owner{i}"), Some("invite"), 0)
            .unwrap();
        let bot = w
            .ladder
            .register_bot(key.as_str(), &format!("bot{i}"), 0)
            .unwrap();
        let v = w.ladder.add_version(key.as_str(), bot, "v1", 0).unwrap();
        w.owner_keys.push(key.as_str().to_string());
        w.bots.push(bot);
        w.versions.push(v.version);
    }
    w
}

fn schedule(w: &World, seats: &[VersionId], t: i64) -> MatchId {
    w.ladder
        .store()
        .schedule_match(
            &NewMatch {
                season: w.season,
                profile: "classic".into(),
                seed: t as u64,
                rated: true,
                seats: seats.to_vec(),
            },
            t,
        )
        .unwrap()
}

fn clean(placings: &[u8]) -> Vec<SeatResult> {
    placings
        .iter()
        .map(|&placing| SeatResult {
            placing,
            timeouts: 0,
            rejections: 0,
        })
        .collect()
}

#[test]
fn registration_can_need_an_invitation() {
    let dir = tempfile::tempdir().unwrap();
    let config = LadderConfig {
        registration: RegistrationPolicy::invitation(&["spring"]),
        ..LadderConfig::default()
    };
    let ladder = Ladder::new(SqliteStore::open(dir.path()).unwrap(), config);
    assert!(matches!(
        ladder.register_owner("ada", None, 0),
        Err(LadderError::InvitationRequired)
    ));
    assert!(matches!(
        ladder.register_owner("ada", Some("autumn"), 0),
        Err(LadderError::InvitationRequired)
    ));
    let (id, key) = ladder.register_owner("ada", Some("spring"), 0).unwrap();
    assert_eq!(
        ladder.authenticate(key.as_str()).unwrap(),
        Principal::Owner(id)
    );
    // The key itself is never stored, only its hash.
    let bytes = std::fs::read(dir.path().join(DATABASE_FILE)).unwrap();
    let needle = key.as_str().as_bytes();
    assert!(!bytes.windows(needle.len()).any(|w| w == needle));
}

#[test]
fn keys_authenticate_until_revoked_rotated_or_retired() {
    let w = world(2, plain());
    let l = &w.ladder;
    let owner_key = &w.owner_keys[0];
    let v2 = l.add_version(owner_key, w.bots[0], "v2", 1).unwrap();
    match l.authenticate(v2.key.as_str()).unwrap() {
        Principal::Version(info) => {
            assert_eq!((info.version, info.bot), (v2.version, w.bots[0]));
        }
        other => panic!("{other:?}"),
    }
    for bad in ["", "mmv_abc", "mmo_", "hello"] {
        assert!(matches!(
            l.authenticate(bad),
            Err(LadderError::Unauthenticated)
        ));
    }
    // A well-formed key nobody was given.
    let stranger =
        maumau_ladder::keys::SecretKey::generate(maumau_ladder::keys::KeyKind::Owner).unwrap();
    assert!(matches!(
        l.authenticate(stranger.as_str()),
        Err(LadderError::Unauthenticated)
    ));

    // Version keys cannot do owner things; owners cannot touch others' bots.
    assert!(matches!(
        l.register_bot(v2.key.as_str(), "sneaky", 2),
        Err(LadderError::Forbidden(_))
    ));
    assert!(matches!(
        l.add_version(&w.owner_keys[1], w.bots[0], "v9", 2),
        Err(LadderError::Forbidden(_))
    ));
    assert!(matches!(
        l.rotate_key(&w.owner_keys[1], KeySubject::Version(v2.version), 2),
        Err(LadderError::Forbidden(_))
    ));

    // Rotation: the old key stops, the new one works.
    let new = l
        .rotate_key(owner_key, KeySubject::Version(v2.version), 3)
        .unwrap();
    assert!(matches!(
        l.authenticate(v2.key.as_str()),
        Err(LadderError::Unauthenticated)
    ));
    assert!(l.authenticate(new.as_str()).is_ok());
    // Rotating the owner key.
    let new_owner = l
        .rotate_key(owner_key, KeySubject::Owner(maumau_ladder::OwnerId(1)), 4)
        .unwrap();
    assert!(matches!(
        l.authenticate(owner_key),
        Err(LadderError::Unauthenticated)
    ));
    let owner_key = new_owner.as_str();
    // Revocation.
    assert_eq!(l.revoke_version_keys(owner_key, v2.version, 5).unwrap(), 1);
    assert!(matches!(
        l.authenticate(new.as_str()),
        Err(LadderError::Unauthenticated)
    ));
    let back = l
        .rotate_key(owner_key, KeySubject::Version(v2.version), 6)
        .unwrap();
    assert!(l.authenticate(back.as_str()).is_ok());

    // A third version retires the first; its key no longer opens a lobby.
    let v1_key = l
        .rotate_key(owner_key, KeySubject::Version(w.versions[0]), 7)
        .unwrap();
    assert!(l.authenticate(v1_key.as_str()).is_ok());
    let v3 = l.add_version(owner_key, w.bots[0], "v3", 8).unwrap();
    assert_eq!(v3.retired, vec![w.versions[0]]);
    assert!(matches!(
        l.authenticate(v1_key.as_str()),
        Err(LadderError::Unauthenticated)
    ));
    assert_eq!(l.eligibility(w.versions[0]).unwrap(), Eligibility::Retired);
}

#[test]
fn bans_and_pauses_reach_versions_through_bots_and_owners() {
    let w = world(3, plain());
    let l = &w.ladder;
    let v = w.versions[0];
    assert_eq!(l.eligibility(v).unwrap(), Eligibility::Active);
    l.pause(SanctionTarget::Bot(w.bots[0]), "upgrading", 1)
        .unwrap();
    assert_eq!(
        l.eligibility(v).unwrap(),
        Eligibility::Paused {
            reason: "upgrading".into()
        }
    );
    l.ban(
        SanctionTarget::Owner(maumau_ladder::OwnerId(1)),
        "collusion",
        2,
    )
    .unwrap();
    assert_eq!(
        l.eligibility(v).unwrap(),
        Eligibility::Banned {
            reason: "collusion".into()
        }
    );
    assert!(matches!(
        l.register_bot(&w.owner_keys[0], "another", 3),
        Err(LadderError::Forbidden(_))
    ));
    // The owner cannot lift an operator's pause or ban.
    assert!(l.owner_resume(&w.owner_keys[0], v, 4).unwrap().is_empty());
    assert_eq!(
        l.unban(
            SanctionTarget::Owner(maumau_ladder::OwnerId(1)),
            "appeal",
            5
        )
        .unwrap()
        .len(),
        1
    );
    assert!(matches!(
        l.eligibility(v).unwrap(),
        Eligibility::Paused { .. }
    ));
    l.resume(SanctionTarget::Bot(w.bots[0]), "done", 6).unwrap();
    assert_eq!(l.eligibility(v).unwrap(), Eligibility::Active);
    // Other owners were never affected.
    assert_eq!(l.eligibility(w.versions[1]).unwrap(), Eligibility::Active);
}

/// Plays a 3-seat match where `faulty` times out (or misses the join when `no_show`).
fn faulty_match(w: &World, faulty: usize, no_show: bool, t: i64) -> maumau_ladder::MatchReport {
    let seats = &w.versions[..3];
    let id = schedule(w, seats, t);
    if no_show {
        let outcomes: Vec<SeatOutcome> = (0..3)
            .map(|i| SeatOutcome {
                joined: i != faulty,
                timeouts: 0,
                rejections: 0,
            })
            .collect();
        w.ladder
            .record_abort(id, &outcomes, "a seat did not join", t + 1)
            .unwrap()
    } else {
        let mut r = clean(&[1, 2, 3]);
        r[faulty].timeouts = 1;
        w.ladder.record_finish(id, &r, t + 1).unwrap()
    }
}

#[test]
fn three_faulty_matches_pause_and_a_clean_probe_resumes() {
    let w = world(3, plain());
    let l = &w.ladder;
    let v = w.versions[1];
    assert!(faulty_match(&w, 1, false, 10).paused.is_empty());
    assert!(faulty_match(&w, 1, true, 20).paused.is_empty());
    let report = faulty_match(&w, 1, false, 30);
    assert_eq!(report.paused.len(), 1);
    assert_eq!(report.paused[0].0, v);
    assert!(
        report.paused[0].1.contains("3 matches in a row"),
        "{:?}",
        report.paused
    );
    assert!(matches!(
        l.eligibility(v).unwrap(),
        Eligibility::Probe { .. }
    ));

    // As a probe it is a candidate with one free seat, and not while a match of it is in flight.
    let lobbies: Vec<Lobby> = w
        .versions
        .iter()
        .map(|&version| Lobby {
            version,
            max_matches: 4,
            profiles: vec!["classic".into()],
            seats: vec![3],
        })
        .collect();
    assert_round_agrees(&w, &lobbies, &[]);
    let c = l.candidates(w.season, &lobbies).unwrap();
    let probe = c.iter().find(|c| c.version == v).unwrap();
    assert!(probe.probe.is_some());
    let probe_match = schedule(&w, &w.versions[..3], 40);
    assert_round_agrees(&w, &lobbies, &[]);
    let c = l.candidates(w.season, &lobbies).unwrap();
    assert!(c.iter().all(|c| c.version != v));
    assert_eq!(
        c.iter().find(|c| c.version == w.versions[0]).unwrap().free,
        3
    );

    // A clean probe lifts the health pause.
    let report = l
        .record_finish(probe_match, &clean(&[2, 1, 3]), 41)
        .unwrap();
    assert_eq!(report.recovered, vec![v]);
    assert_eq!(l.eligibility(v).unwrap(), Eligibility::Active);
    // Its old faults are forgotten: one more fault does not pause it again.
    assert!(faulty_match(&w, 1, false, 50).paused.is_empty());
}

#[test]
fn a_faulty_probe_keeps_the_pause_and_the_owner_can_resume() {
    let w = world(3, plain());
    let l = &w.ladder;
    let v = w.versions[2];
    for t in [10, 20, 30] {
        faulty_match(&w, 2, false, t);
    }
    assert!(matches!(
        l.eligibility(v).unwrap(),
        Eligibility::Probe { .. }
    ));
    let report = faulty_match(&w, 2, false, 40);
    assert!(report.recovered.is_empty() && report.paused.is_empty());
    assert!(matches!(
        l.eligibility(v).unwrap(),
        Eligibility::Probe { .. }
    ));
    // Someone else's key cannot resume it; its owner's can.
    assert!(matches!(
        l.owner_resume(&w.owner_keys[0], v, 45),
        Err(LadderError::Forbidden(_))
    ));
    assert_eq!(l.owner_resume(&w.owner_keys[2], v, 45).unwrap().len(), 1);
    assert_eq!(l.eligibility(v).unwrap(), Eligibility::Active);
}

#[test]
fn manual_pauses_never_resume_by_themselves() {
    let w = world(3, plain());
    let l = &w.ladder;
    let v = w.versions[0];
    l.pause(SanctionTarget::Version(v), "operator check", 5)
        .unwrap();
    // Even a clean match (scheduled before the pause) leaves it paused.
    let id = schedule(&w, &w.versions[..3], 6);
    let report = l.record_finish(id, &clean(&[1, 2, 3]), 7).unwrap();
    assert!(report.recovered.is_empty());
    assert!(matches!(
        l.eligibility(v).unwrap(),
        Eligibility::Paused { .. }
    ));
    let lobbies = vec![Lobby {
        version: v,
        max_matches: 1,
        profiles: vec!["classic".into()],
        seats: vec![3],
    }];
    assert!(l.candidates(w.season, &lobbies).unwrap().is_empty());
}

#[test]
fn a_high_fault_rate_over_the_window_pauses() {
    let config = LadderConfig {
        health: HealthPolicy {
            streak: 3,
            window: 10,
            max_fault_rate: 0.25,
        },
        ..plain()
    };
    let w = world(3, config);
    // Fault, clean, clean, repeated: 1 in 3 (> 25%) but never 3 in a row.
    let mut paused_at = None;
    for i in 0..12 {
        let t = 10 * (i + 1);
        let report = if i % 3 == 0 {
            faulty_match(&w, 0, i % 2 == 0, t)
        } else {
            let id = schedule(&w, &w.versions[..3], t);
            w.ladder
                .record_finish(id, &clean(&[1, 2, 3]), t + 1)
                .unwrap()
        };
        if !report.paused.is_empty() {
            paused_at = Some(i);
            assert!(
                report.paused[0].1.contains("of its last 10"),
                "{:?}",
                report.paused
            );
            break;
        }
    }
    // The window fills at the 10th match.
    assert_eq!(paused_at, Some(9));
}

#[test]
fn void_and_rerate_keep_ratings_consistent() {
    let w = world(5, plain());
    let l = &w.ladder;
    let vs = &w.versions;
    let mut ids = Vec::new();
    for (t, seats) in [
        (10, [vs[0], vs[1], vs[2], vs[3]]),
        (20, [vs[1], vs[2], vs[3], vs[4]]),
        (30, [vs[0], vs[2], vs[3], vs[4]]),
        (40, [vs[0], vs[1], vs[3], vs[4]]),
    ] {
        let id = schedule(&w, &seats, t);
        l.record_finish(id, &clean(&[1, 2, 3, 4]), t + 1).unwrap();
        ids.push(id);
    }
    let report = l.rerate(w.season).unwrap();
    assert!(report.is_clean(), "{report}");
    assert_eq!((report.matches, report.ratings, report.events), (4, 5, 16));

    let changes = l.void_match(ids[1], "duplicate account", 50).unwrap();
    assert!(!changes.is_empty());
    let report = l.rerate(w.season).unwrap();
    assert!(report.is_clean(), "{report}");
    assert_eq!(report.matches, 3);

    // Tamper with a stored rating behind the ladder's back: rerate reports it, apply fixes it.
    {
        let c = rusqlite::Connection::open(w.dir.path().join(DATABASE_FILE)).unwrap();
        c.execute(
            "UPDATE ratings SET mu = mu + 2 WHERE version_id = ?1",
            [vs[2].0],
        )
        .unwrap();
    }
    let report = l.rerate(w.season).unwrap();
    assert!(!report.is_clean());
    assert!(
        report
            .findings
            .iter()
            .any(|f| matches!(f, Finding::RatingDiffers { version, .. } if *version == vs[2]))
    );
    assert!(report.to_string().contains("differences"), "{report}");
    let fixed = l.apply_rerate(w.season, 60).unwrap();
    assert_eq!(fixed.len(), 1);
    // The fix is an event too, so events, ratings and the replay agree again.
    let report = l.rerate(w.season).unwrap();
    assert!(report.is_clean(), "{report}");
}

#[test]
fn candidates_reflect_lobbies_ratings_and_capacity() {
    let w = world(4, plain());
    let l = &w.ladder;
    let vs = &w.versions;
    let id = schedule(&w, vs, 100);
    l.record_finish(id, &clean(&[1, 2, 3, 4]), 101).unwrap();
    let running = schedule(&w, &vs[..2], 200);
    l.store().start_match(running, 201).unwrap();
    let mut lobbies: Vec<Lobby> = vs
        .iter()
        .map(|&version| Lobby {
            version,
            max_matches: 2,
            profiles: vec!["classic".into(), "brazilian".into()],
            seats: vec![2, 4],
        })
        .collect();
    lobbies.push(lobbies[0].clone()); // a duplicate lobby counts once
    lobbies.push(Lobby {
        version: VersionId(999),
        ..lobbies[0].clone()
    });
    let c = l.candidates(w.season, &lobbies).unwrap();
    assert_eq!(c.len(), 4);
    assert_eq!(c[0].free, 1);
    assert_eq!(c[3].free, 2);
    assert_eq!(c[0].rated_matches, 1);
    assert!(c[0].mu["classic"] > c[3].mu["classic"]);
    assert!(!c[0].mu.contains_key("brazilian"));
    assert_eq!(c[0].last_scheduled, Some(200));
    assert_eq!(c[3].last_scheduled, Some(100));
    assert!(c.iter().all(|c| c.probe.is_none()));
    assert_eq!(c[1].owner, l.store().bot(w.bots[1]).unwrap().owner);
    let recent = l.recent_tables(5).unwrap();
    assert_eq!(recent.len(), 2);
    assert_eq!(recent[0].seats, vs[..2].to_vec());
}

#[test]
fn a_match_in_flight_before_a_health_pause_is_no_probe() {
    let w = world(3, plain());
    let l = &w.ladder;
    let v = w.versions[1];
    let early = schedule(&w, &w.versions[..3], 5);
    for t in [10, 20, 30] {
        faulty_match(&w, 1, false, t);
    }
    assert!(matches!(
        l.eligibility(v).unwrap(),
        Eligibility::Probe { .. }
    ));
    // Scheduled before the pause: clean, but not a probe.
    let report = l.record_finish(early, &clean(&[1, 2, 3]), 45).unwrap();
    assert!(report.recovered.is_empty());
    assert!(matches!(
        l.eligibility(v).unwrap(),
        Eligibility::Probe { .. }
    ));
}

fn validation_match(w: &World, v: VersionId, profile: &str, t: i64) -> MatchId {
    w.ladder
        .store()
        .schedule_match(
            &NewMatch {
                season: w.season,
                profile: profile.into(),
                seed: t as u64,
                rated: false,
                seats: vec![v],
            },
            t,
        )
        .unwrap()
}

/// `Ladder::round` reads once what `validation_plan` then `candidates` (on the lobbies the plan
/// does not hold back) read on their own: the two must agree.
fn assert_round_agrees(w: &World, lobbies: &[Lobby], formats: &[Format]) {
    let l = &w.ladder;
    let (plan, candidates) = l.round(w.season, lobbies, formats).unwrap();
    assert_eq!(plan, l.validation_plan(lobbies, formats).unwrap());
    let rest: Vec<Lobby> = lobbies
        .iter()
        .filter(|x| !plan.waiting.contains(&x.version))
        .cloned()
        .collect();
    let expected = if rest.len() < 2 {
        Vec::new()
    } else {
        l.candidates(w.season, &rest).unwrap()
    };
    assert_eq!(candidates, expected);
}

#[test]
fn new_versions_validate_every_profile_before_they_are_rated() {
    let w = world(3, LadderConfig::default());
    let l = &w.ladder;
    let formats: Vec<Format> = [
        ("classic", 2),
        ("classic", 4),
        ("brazilian", 4),
        ("penalty-points", 3),
    ]
    .iter()
    .map(|&(p, seats)| Format {
        profile: p.into(),
        seats,
        weight: 1.0,
    })
    .collect();
    let lobby = |version, max_matches| Lobby {
        version,
        max_matches,
        // romanian-32 is accepted but not made by the ladder: no validation for it.
        profiles: vec!["classic".into(), "brazilian".into(), "romanian-32".into()],
        seats: vec![2, 4],
    };
    let lobbies = vec![lobby(w.versions[0], 1), lobby(w.versions[1], 3)];
    assert_eq!(
        l.eligibility(w.versions[0]).unwrap(),
        Eligibility::Validating
    );
    assert!(l.candidates(w.season, &lobbies).unwrap().is_empty());

    // One validation at a time per version, at the largest size, copies within capacity.
    assert_round_agrees(&w, &lobbies, &formats);
    let plan = l.validation_plan(&lobbies, &formats).unwrap();
    assert_eq!(plan.waiting, vec![w.versions[0], w.versions[1]]);
    assert_eq!(plan.needs.len(), 2);
    assert_eq!(
        (
            plan.needs[0].profile.as_str(),
            plan.needs[0].seats,
            plan.needs[0].copies
        ),
        ("classic", 4, 1)
    );
    assert_eq!(plan.needs[1].copies, 2);
    let m0 = validation_match(&w, w.versions[0], "classic", 10);
    assert_round_agrees(&w, &lobbies, &formats);
    let plan = l.validation_plan(&lobbies, &formats).unwrap();
    assert_eq!(plan.needs.len(), 1, "v0 has a validation in flight");
    assert_eq!(plan.waiting.len(), 2);

    // A clean pass in classic: active, rated in classic only, still waiting for brazilian.
    let clean_copy = CopyReport {
        seat: 1,
        timeouts: 1,
        ..CopyReport::default()
    };
    let report = l.record_validation(m0, &[clean_copy], 11).unwrap();
    assert!(report.rejected.is_empty() && report.ratings.is_empty());
    assert_eq!(l.eligibility(w.versions[0]).unwrap(), Eligibility::Active);
    let c = l.candidates(w.season, &lobbies).unwrap();
    assert_eq!(c.len(), 1);
    assert_eq!(c[0].profiles, vec!["classic".to_string()]);
    assert_round_agrees(&w, &lobbies, &formats);
    let plan = l.validation_plan(&lobbies, &formats).unwrap();
    assert_eq!(plan.needs[0].profile, "brazilian");
    let m1 = validation_match(&w, w.versions[0], "brazilian", 20);
    l.record_validation(m1, &[clean_copy], 21).unwrap();
    assert_round_agrees(&w, &lobbies, &formats);
    let plan = l.validation_plan(&lobbies, &formats).unwrap();
    assert_eq!(plan.waiting, vec![w.versions[1]]);
    let history = l.store().validations_of(w.versions[0]).unwrap();
    assert_eq!(history.len(), 2);
    assert!(history.iter().all(|v| v.passed && v.reasons.is_empty()));
    assert!(!l.store().match_record(m1).unwrap().rated);

    // A protocol error rejects the other version for good, with the reasons kept.
    let m2 = validation_match(&w, w.versions[1], "classic", 30);
    let bad = CopyReport {
        seat: 3,
        protocol_errors: 1,
        ..CopyReport::default()
    };
    let report = l.record_validation(m2, &[clean_copy, bad], 31).unwrap();
    assert_eq!(report.rejected.len(), 1);
    match l.eligibility(w.versions[1]).unwrap() {
        Eligibility::Rejected { reason } => {
            assert!(
                reason.contains("classic") && reason.contains("seat 3"),
                "{reason}"
            )
        }
        other => panic!("expected a rejection, got {other:?}"),
    }
    assert_round_agrees(&w, &lobbies, &formats);
    let plan = l.validation_plan(&lobbies, &formats).unwrap();
    assert!(plan.waiting.is_empty() && plan.needs.is_empty());
    assert!(
        l.candidates(w.season, &lobbies)
            .unwrap()
            .iter()
            .all(|c| c.version != w.versions[1])
    );
    // Voiding the failed validation takes its verdict back: the version validates again.
    l.void_match(m2, "the operator's mistake", 35).unwrap();
    assert_eq!(
        l.eligibility(w.versions[1]).unwrap(),
        Eligibility::Validating
    );
    assert!(l.store().validations_of(w.versions[1]).unwrap().is_empty());
    assert_round_agrees(&w, &lobbies, &formats);
    let plan = l.validation_plan(&lobbies, &formats).unwrap();
    assert_eq!(plan.waiting, vec![w.versions[1]]);
    assert_eq!(plan.needs.len(), 1);

    // A rated match cannot be finished as a validation.
    let rated = schedule(&w, &w.versions[..2], 40);
    assert!(matches!(
        l.record_validation(rated, &[clean_copy], 41),
        Err(LadderError::Invalid(_))
    ));
}

#[test]
fn a_match_aborted_before_its_invitations_is_not_joined_and_faults_nobody() {
    let w = world(2, plain());
    let store = w.ladder.store();
    // More than a health streak of matches that never sent an invitation.
    for t in 1..=5 {
        let id = schedule(&w, &w.versions, t);
        let report = w
            .ladder
            .record_unplayed(id, "the server could not create the table", t)
            .unwrap();
        assert!(report.paused.is_empty(), "{report:?}");
        let m = store.match_record(id).unwrap();
        assert!(m.seats.iter().all(|s| s.outcome.is_none()), "{m:?}");
    }
    for &v in &w.versions {
        assert_eq!(w.ladder.eligibility(v).unwrap(), Eligibility::Active);
        let history = store.seat_history(v, None, 10).unwrap();
        assert_eq!(history.len(), 5);
        assert!(history.iter().all(|h| !h.invited && !h.outcome.joined));
    }
    // Only a scheduled match can be: one whose invitations went out cannot.
    let id = schedule(&w, &w.versions, 9);
    store.start_match(id, 9).unwrap();
    assert!(matches!(
        w.ladder.record_unplayed(id, "too late", 10),
        Err(LadderError::State(_))
    ));
}

#[test]
fn house_bots_need_no_validation_and_their_owner_is_reserved() {
    let w = world(1, LadderConfig::default());
    let house = w.ladder.house_version("heuristic (house)", 1).unwrap();
    // Asked again: the same version.
    assert_eq!(
        w.ladder.house_version("heuristic (house)", 2).unwrap(),
        house
    );
    assert_eq!(w.ladder.eligibility(house).unwrap(), Eligibility::Active);
    // A real version validates first.
    assert_eq!(
        w.ladder.eligibility(w.versions[0]).unwrap(),
        Eligibility::Validating
    );
    assert!(matches!(
        w.ladder.register_owner("House", Some("invite"), 3),
        Err(LadderError::Invalid(_))
    ));
    let owner = w.ladder.house_owner().unwrap().unwrap();
    assert!(w.ladder.is_house(owner).unwrap());
}

#[test]
fn names_that_look_alike_are_one_name() {
    let w = world(1, plain());
    let key = w.owner_keys[0].as_str();
    let (_, other) = w.ladder.register_owner("house-party", None, 0).unwrap();
    // A Cyrillic о, fullwidth letters, another case: each looks like a name already taken.
    let taken = |r: Result<_, LadderError>, what: &str| match r {
        Err(LadderError::Duplicate { what: w, .. }) if w == what => {}
        Err(e) => panic!("{what}: {e}"),
        Ok(_) => panic!("{what}: a look-alike was accepted"),
    };
    taken(
        w.ladder.register_owner("оwner0", None, 0).map(|_| ()),
        "owner",
    );
    taken(
        w.ladder.register_owner("ｏｗｎｅｒ0", None, 0).map(|_| ()),
        "owner",
    );
    taken(
        w.ladder.register_owner("Owner0", None, 0).map(|_| ()),
        "owner",
    );
    taken(
        w.ladder.register_bot(other.as_str(), "bоt0", 0).map(|_| ()),
        "bot",
    );
    taken(
        w.ladder.add_version(key, w.bots[0], "ｖ1", 0).map(|_| ()),
        "version",
    );
    // Another bot's labels are its own.
    let b = w
        .ladder
        .register_bot(other.as_str(), "lookalike", 0)
        .unwrap();
    w.ladder.add_version(other.as_str(), b, "v1", 0).unwrap();
    // The reserved owner and the house bots' mark, however spelt.
    for name in ["house", "HOUSE", "hоuse", "ｈｏｕｓｅ"] {
        match w.ladder.register_owner(name, None, 0) {
            Err(LadderError::Invalid(why)) => assert!(why.contains("reserved"), "{why}"),
            other => panic!("{name}: {:?}", other.map(|_| ())),
        }
    }
    for name in ["heuristic (house)", "x (Hоuse)", "（house）"] {
        match w.ladder.register_bot(key, name, 0) {
            Err(LadderError::Invalid(why)) => assert!(why.contains("(house)"), "{why}"),
            other => panic!("{name}: {:?}", other.map(|_| ())),
        }
        assert!(matches!(
            w.ladder.add_version(key, w.bots[0], name, 0),
            Err(LadderError::Invalid(_))
        ));
    }
    // The house itself still registers its bots under its mark.
    w.ladder.house_version("heuristic (house)", 1).unwrap();
}

#[test]
fn a_bot_has_at_most_max_versions() {
    let w = world(
        1,
        LadderConfig {
            max_versions: 3,
            ..plain()
        },
    );
    let key = w.owner_keys[0].as_str();
    w.ladder.add_version(key, w.bots[0], "v2", 0).unwrap();
    w.ladder.add_version(key, w.bots[0], "v3", 0).unwrap();
    match w.ladder.add_version(key, w.bots[0], "v4", 0) {
        Err(LadderError::State(why)) => assert!(why.contains("3 versions"), "{why}"),
        other => panic!("{:?}", other.map(|_| ())),
    }
    assert_eq!(LadderConfig::default().max_versions, 100);
}
