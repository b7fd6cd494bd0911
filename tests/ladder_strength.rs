//! The ladder end to end with bots of known strength: a server and eight reference bots over
//! loopback gRPC (the SDK's heuristic bot with more and more random moves, down to a random bot),
//! every profile and several table sizes. Checks validation (a ninth bot that sends one illegal
//! action per match is rejected, with its reasons and replay downloadable), a health pause and its
//! recovery by a probe match, a ban, a season change, replay downloads, drain (a lobby's own, and
//! the server's on shutdown: matches in flight finish), and that the final classic leaderboard
//! agrees with the bots' known strengths (see the end of the test for how closely).
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;
#[path = "common/ladder.rs"]
mod ladder;

use std::collections::{HashMap, HashSet};
use std::time::{Duration, Instant};

use common::{TestServer, with_bearer};
use ladder::{board, get_bot};
use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::{HeuristicBot, SplitMix};
use maumau_bot_sdk::engine::{Action, Event, Observation};
use maumau_bot_sdk::runner::{RunOptions, run};
use maumau_ladder_service::{LadderFormat, LadderSettings};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

const TOKEN: &str = "op-token";
/// Chance of a random legal move instead of the heuristic's, strongest bot first; 1.0 is a
/// random bot.
const NOISE: [f64; 8] = [0.0, 0.15, 0.3, 0.45, 0.6, 0.75, 0.9, 1.0];
/// Rated classic matches every bot plays at least in the first season...
const RATED: u32 = 6;
/// ... and all of them together (a table of four counts four).
const RATED_TOTAL: u32 = 400;
/// The bot that misses its joins until it is paused for health.
const FLAKY: usize = 3;
/// The bot banned for a moment.
const BANNED: usize = 5;
/// The bot that breaks the protocol.
const BROKEN: usize = 8;
const PROFILES: [&str; 4] = ["classic", "penalty-points", "brazilian", "romanian-32"];

/// The heuristic bot with a share of random moves.
struct Noisy {
    inner: HeuristicBot,
    noise: f64,
    rng: SplitMix,
}

impl Bot for Noisy {
    fn name(&self) -> &str {
        "noisy-heuristic"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        let draw = (self.rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64;
        if draw < self.noise {
            obs.legal[self.rng.below(obs.legal.len())]
        } else {
            self.inner.decide(obs)
        }
    }

    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.inner.react(obs)
    }

    fn on_event(&mut self, event: &Event) {
        self.inner.on_event(event);
    }

    fn listens(&self) -> bool {
        self.inner.listens()
    }
}

/// Plays well, except that its first decision of every match is a card play the rules refuse
/// (the SDK then sends a legal fallback, so the match goes on).
struct Broken {
    inner: HeuristicBot,
    done: bool,
}

impl Bot for Broken {
    fn name(&self) -> &str {
        "broken"
    }

    fn decide(&mut self, obs: &Observation) -> Action {
        if !self.done {
            self.done = true;
            if let Some(a) = ladder::unheld_play(obs) {
                return a;
            }
        }
        self.inner.decide(obs)
    }
}

/// One lobby message, from entrant `who`.
type Message = (usize, pb::lobby_response::Kind);

struct Entrant {
    bot_id: i64,
    version_id: i64,
    /// LobbyRequests (drain).
    tx: mpsc::Sender<pb::LobbyRequest>,
}

/// Opens entrant `who`'s lobby and plays its invitations in the background, forwarding every
/// lobby message to `out`. The flaky entrant ignores rated invitations until it is paused.
async fn enter(
    c: &mut LadderServiceClient<Channel>,
    url: String,
    who: usize,
    out: mpsc::UnboundedSender<Message>,
) -> Entrant {
    let name = format!("e{who}");
    let ladder::Entrant {
        bot_id,
        version_id,
        version_key: key,
        ..
    } = ladder::register(c, &name, &format!("{name}-bot"), "v1").await;
    let (tx, rx) = mpsc::channel(8);
    tx.send(pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: key,
            max_matches: 2,
            profiles: PROFILES.iter().map(|p| p.to_string()).collect(),
            seats: vec![2, 3, 4],
        })),
    })
    .await
    .expect("hello");
    let mut stream = c
        .lobby(ReceiverStream::new(rx))
        .await
        .expect("lobby")
        .into_inner();
    tokio::spawn(async move {
        let mut skipping = who == FLAKY;
        let mut n = 0u64;
        while let Ok(Some(m)) = stream.message().await {
            let Some(kind) = m.kind else { continue };
            match &kind {
                pb::lobby_response::Kind::Notice(x)
                    if x.status() == pb::VersionStatus::HealthPaused =>
                {
                    skipping = false;
                }
                pb::lobby_response::Kind::Invitation(inv) if !(skipping && inv.rated) => {
                    n += 1;
                    let seed = (who as u64) << 32 | n;
                    let options = RunOptions::new(url.clone(), inv.seat_token.clone());
                    tokio::spawn(async move {
                        let mut bot: Box<dyn Bot + Send> = if who == BROKEN {
                            Box::new(Broken {
                                inner: HeuristicBot::new(seed),
                                done: false,
                            })
                        } else {
                            Box::new(Noisy {
                                inner: HeuristicBot::new(seed),
                                noise: NOISE[who],
                                rng: SplitMix::new(seed ^ 0x5eed),
                            })
                        };
                        let _ = run(bot.as_mut(), &options).await;
                    });
                }
                _ => {}
            }
            if out.send((who, kind)).is_err() {
                break;
            }
        }
    });
    Entrant {
        bot_id,
        version_id,
        tx,
    }
}

/// Kendall's τ between a ranking and the true order (both lists of the same items).
fn kendall_tau(ranked: &[usize]) -> f64 {
    let n = ranked.len();
    let mut score = 0i64;
    for i in 0..n {
        for j in i + 1..n {
            score += if ranked[i] < ranked[j] { 1 } else { -1 };
        }
    }
    score as f64 / (n * (n - 1) / 2) as f64
}

/// What the lobbies said so far.
#[derive(Default)]
struct Seen {
    /// Rated matches that finished, per entrant and profile.
    rated: HashMap<(usize, String), u32>,
    /// Every LadderMatchEnded per entrant.
    ended: Vec<Vec<pb::LadderMatchEnded>>,
    /// Invitations per entrant.
    invited: Vec<Vec<pb::Invitation>>,
    notices: Vec<Vec<pb::LobbyNotice>>,
    drained: HashSet<usize>,
}

impl Seen {
    fn new(n: usize) -> Seen {
        Seen {
            ended: vec![Vec::new(); n],
            invited: vec![Vec::new(); n],
            notices: vec![Vec::new(); n],
            ..Seen::default()
        }
    }

    fn take(&mut self, (who, kind): Message) {
        match kind {
            pb::lobby_response::Kind::MatchEnded(e) => {
                if e.rated {
                    let profile = self.invited[who]
                        .iter()
                        .find(|i| i.ladder_match_id == e.ladder_match_id)
                        .map(|i| i.profile.clone())
                        .unwrap_or_default();
                    *self.rated.entry((who, profile)).or_default() += 1;
                }
                self.ended[who].push(e);
            }
            pb::lobby_response::Kind::Invitation(i) => {
                assert!(!self.drained.contains(&who), "an invitation after drain");
                self.invited[who].push(i)
            }
            pb::lobby_response::Kind::Notice(n) => self.notices[who].push(n),
            pb::lobby_response::Kind::Drained(_) => {
                self.drained.insert(who);
            }
            // Why a lobby waits is tested in ladder_house.rs.
            pb::lobby_response::Kind::Welcome(_) | pb::lobby_response::Kind::Waiting(_) => {}
        }
    }

    fn rated_classic(&self, who: usize) -> u32 {
        self.rated
            .get(&(who, "classic".to_string()))
            .copied()
            .unwrap_or(0)
    }
}

/// Reads lobby messages until `done` holds (at most `limit`).
async fn until(
    rx: &mut mpsc::UnboundedReceiver<Message>,
    seen: &mut Seen,
    limit: Duration,
    what: &str,
    mut done: impl FnMut(&Seen) -> bool,
) {
    let end = Instant::now() + limit;
    while !done(seen) {
        let left = end.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, rx.recv()).await {
            Ok(Some(m)) => seen.take(m),
            Ok(None) => panic!("every lobby closed while waiting for {what}"),
            Err(_) => panic!("timed out waiting for {what}"),
        }
    }
}

fn target(kind: pb::SanctionTargetKind, id: i64) -> Option<pb::SanctionTarget> {
    Some(pb::SanctionTarget {
        kind: kind as i32,
        id,
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ladder_orders_bots_by_strength() {
    let started = Instant::now();
    let formats = [
        ("classic", 2, 1.0),
        ("classic", 4, 6.0),
        ("penalty-points", 3, 0.5),
        ("brazilian", 4, 0.5),
        ("romanian-32", 2, 0.5),
    ];
    let server = TestServer::start_with(|c| {
        c.operator_token = Some(TOKEN.into());
        c.join_timeout = Duration::from_secs(20);
        c.ladder = Some(LadderSettings {
            formats: formats
                .iter()
                .map(|&(p, seats, weight)| LadderFormat {
                    profile: p.into(),
                    seats,
                    weight,
                })
                .collect(),
            join_deadline: Duration::from_millis(1500),
            tick: Duration::from_millis(100),
            drain_timeout: Duration::from_secs(30),
            seed: Some(2026),
            ..LadderSettings::default()
        });
    })
    .await;
    let mut c = LadderServiceClient::new(server.channel().await);
    let mut matches = server.matches().await;
    let (out, mut rx) = mpsc::unbounded_channel();
    let mut entrants = Vec::new();
    for who in 0..=BROKEN {
        entrants.push(enter(&mut c, server.url(), who, out.clone()).await);
    }
    drop(out);
    let mut seen = Seen::new(entrants.len());

    // ----- validation: every profile once, unrated, before any rated match -----
    until(
        &mut rx,
        &mut seen,
        Duration::from_secs(60),
        "validation",
        |s| {
            s.notices[BROKEN]
                .iter()
                .any(|n| n.status() == pb::VersionStatus::Rejected)
                && (0..BROKEN).all(|w| {
                    s.ended[w]
                        .iter()
                        .filter(|e| e.validation && e.finished)
                        .map(|e| e.ladder_match_id)
                        .collect::<HashSet<_>>()
                        .len()
                        == PROFILES.len()
                })
        },
    )
    .await;
    let validated_at = started.elapsed();
    eprintln!("validated after {validated_at:?}");
    for (w, e) in entrants.iter().enumerate().take(BROKEN) {
        let page = get_bot(&mut c, e.bot_id).await;
        let v = &page.versions[0];
        let passed: HashSet<&str> = v
            .validations
            .iter()
            .filter(|x| x.passed)
            .map(|x| x.profile.as_str())
            .collect();
        assert_eq!(passed, PROFILES.into_iter().collect(), "{v:?}");
        assert_ne!(v.status(), pb::VersionStatus::Rejected);
        // Validation invitations are unrated and came before any rated one.
        let first_rated = seen.invited[w].iter().position(|i| i.rated);
        let last_validation = seen.invited[w].iter().rposition(|i| i.validation);
        if let (Some(r), Some(l)) = (first_rated, last_validation) {
            assert!(
                l < r,
                "entrant {w}: a validation invitation after a rated one"
            );
        }
        assert!(
            seen.invited[w]
                .iter()
                .all(|i| i.validation != i.rated && !i.seat_token.is_empty())
        );
    }
    // 4-seat validation matches seat two copies of the version.
    let copies = seen.invited[0]
        .iter()
        .filter(|i| i.validation && i.seats == 4)
        .count();
    assert_eq!(
        copies, 4,
        "two copies in each of the two 4-seat validations"
    );
    // The broken bot: rejected, with the reason and a replay that its owner can download.
    let page = get_bot(&mut c, entrants[BROKEN].bot_id).await;
    let v = &page.versions[0];
    assert_eq!(v.status(), pb::VersionStatus::Rejected);
    assert!(v.reason.contains("protocol error"), "{}", v.reason);
    let failed = v
        .validations
        .iter()
        .find(|x| !x.passed)
        .expect("a failed validation");
    assert!(failed.reasons.iter().all(|r| r.contains("protocol error")));
    let replay = matches
        .get_replay(pb::GetReplayRequest {
            match_id: failed.match_id.clone(),
        })
        .await
        .expect("the failed validation's replay")
        .into_inner()
        .replay
        .expect("a replay");
    assert!(maumau::replay::verify(&replay).valid);
    let result = matches
        .get_result(pb::GetResultRequest {
            match_id: failed.match_id.clone(),
        })
        .await
        .expect("its report")
        .into_inner();
    let report = result.report.expect("a report");
    assert!(report.seats.iter().any(|s| s.protocol_errors > 0));
    assert!(
        report.players.iter().any(|p| p.bot != 0),
        "built-in bots sat"
    );

    // ----- rated play, with a health pause and its recovery, and a ban -----
    until(
        &mut rx,
        &mut seen,
        Duration::from_secs(60),
        "the flaky bot's recovery",
        |s| {
            s.notices[FLAKY].iter().any(|n| {
                n.status() == pb::VersionStatus::Active && n.reason.contains("clean probe")
            })
        },
    )
    .await;
    let paused = seen.notices[FLAKY]
        .iter()
        .find(|n| n.status() == pb::VersionStatus::HealthPaused)
        .expect("paused before it recovered");
    assert!(paused.reason.contains("3 matches in a row"), "{paused:?}");
    let no_shows = seen.ended[FLAKY]
        .iter()
        .filter(|e| !e.finished && e.reason.contains("did not join"))
        .count();
    assert!(no_shows >= 3, "{no_shows} no-shows");

    let banned = entrants[BANNED].version_id;
    c.ban(with_bearer(
        pb::BanRequest {
            target: target(pb::SanctionTargetKind::Version, banned),
            reason: "test ban".into(),
        },
        TOKEN,
    ))
    .await
    .expect("ban");
    let page = get_bot(&mut c, entrants[BANNED].bot_id).await;
    assert_eq!(page.versions[0].status(), pb::VersionStatus::Banned);
    let shown = board(&mut c, "").await;
    assert!(
        shown
            .standings
            .iter()
            .all(|s| s.bot_id != entrants[BANNED].bot_id)
    );
    c.unban(with_bearer(
        pb::UnbanRequest {
            target: target(pb::SanctionTargetKind::Version, banned),
            reason: String::new(),
        },
        TOKEN,
    ))
    .await
    .expect("unban");

    until(
        &mut rx,
        &mut seen,
        Duration::from_secs(120),
        "the rated matches",
        |s| {
            (0..BROKEN).all(|w| s.rated_classic(w) >= RATED)
                && (0..BROKEN).map(|w| s.rated_classic(w)).sum::<u32>() >= RATED_TOTAL
        },
    )
    .await;
    let rated_at = started.elapsed();
    eprintln!("rated after {rated_at:?}");
    assert!(
        seen.invited[BROKEN].iter().all(|i| i.validation),
        "a rejected version is never rated"
    );

    // ----- a season change: the old board freezes, the new season starts fresh -----
    c.close_season(with_bearer(pb::CloseSeasonRequest {}, TOKEN))
        .await
        .expect("close");
    let frozen = board(&mut c, "season-1").await;
    c.open_season(with_bearer(
        pb::OpenSeasonRequest {
            name: "season-2".into(),
        },
        TOKEN,
    ))
    .await
    .expect("open");
    let classic = |s: &Seen| (0..BROKEN).map(|w| s.rated_classic(w)).sum::<u32>();
    let before = classic(&seen);
    until(
        &mut rx,
        &mut seen,
        Duration::from_secs(30),
        "rated classic matches in season 2",
        |s| classic(s) >= before + 2,
    )
    .await;
    // A seat hears MatchEnded before the store has written the rating (it is written on the
    // store's thread), so wait for the new season's board to fill rather than read it once.
    let mut season2 = board(&mut c, "").await;
    for _ in 0..250 {
        if !season2.standings.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        season2 = board(&mut c, "").await;
    }
    assert_eq!(season2.season, "season-2");
    assert!(!season2.standings.is_empty(), "{season2:?}");
    assert!(season2.standings.iter().all(|s| s.matches < RATED));

    // ----- drain: one lobby drains itself, then the server stops with matches in flight -----
    entrants[0]
        .tx
        .send(pb::LobbyRequest {
            kind: Some(pb::lobby_request::Kind::Drain(pb::LobbyDrain {})),
        })
        .await
        .expect("drain");
    until(
        &mut rx,
        &mut seen,
        Duration::from_secs(30),
        "entrant 0's drain",
        |s| s.drained.contains(&0),
    )
    .await;
    let open_before_stop = (0..entrants.len())
        .filter(|w| {
            let ended: HashSet<(i64, u32)> = seen.ended[*w]
                .iter()
                .map(|e| (e.ladder_match_id, e.seat))
                .collect();
            seen.invited[*w]
                .iter()
                .any(|i| !ended.contains(&(i.ladder_match_id, i.seat)))
        })
        .count();
    eprintln!("stopping after {:?}", started.elapsed());
    let data = tokio::time::timeout(Duration::from_secs(60), server.stop())
        .await
        .expect("the server stops once its matches end");
    while let Some(m) = rx.recv().await {
        seen.take(m);
    }
    for w in 0..entrants.len() {
        assert!(seen.drained.contains(&w), "entrant {w} was drained");
        let ended: HashSet<(i64, u32)> = seen.ended[w]
            .iter()
            .map(|e| (e.ladder_match_id, e.seat))
            .collect();
        for i in &seen.invited[w] {
            assert!(
                ended.contains(&(i.ladder_match_id, i.seat)),
                "entrant {w}: invitation {} never ended",
                i.ladder_match_id
            );
        }
        assert!(
            seen.ended[w]
                .iter()
                .all(|e| e.finished || e.reason.contains("did not join")),
            "no match was cut short by the shutdown: {:?}",
            seen.ended[w]
        );
    }

    // ----- the final order of season 1 follows the known strengths -----
    let server = TestServer::start_in(data, |c| {
        c.ladder = Some(LadderSettings::default());
    })
    .await;
    let mut c = LadderServiceClient::new(server.channel().await);
    let final_board = board(&mut c, "season-1").await;
    assert_eq!(final_board, frozen, "a closed season does not change");
    let strength: HashMap<i64, usize> = entrants[..BROKEN]
        .iter()
        .enumerate()
        .map(|(i, e)| (e.bot_id, i))
        .collect();
    // The board ranks by the conservative score μ − 3σ, which also punishes few matches (the
    // flaky bot sat out its pause, the banned one its ban). Strength is about μ: order by it.
    // Ranked lines come first, then provisional ones, each sorted by that score.
    let shown: Vec<(bool, f64)> = final_board
        .standings
        .iter()
        .map(|s| (s.provisional, s.rating.unwrap_or_default().score))
        .collect();
    assert!(
        shown
            .windows(2)
            .all(|w| (!w[0].0 && w[1].0) || (w[0].0 == w[1].0 && w[0].1 >= w[1].1)),
        "ranked then provisional, each by μ − 3σ: {shown:?}"
    );
    let mut by_mu: Vec<&pb::Standing> = final_board.standings.iter().collect();
    by_mu.sort_by(|a, b| {
        let mu = |s: &pb::Standing| s.rating.unwrap_or_default().mu;
        mu(b).total_cmp(&mu(a))
    });
    let order: Vec<usize> = by_mu
        .iter()
        .filter_map(|s| strength.get(&s.bot_id).copied())
        .collect();
    assert_eq!(order.len(), BROKEN, "{final_board:?}");
    let tau = kendall_tau(&order);
    for s in &final_board.standings {
        let r = s.rating.unwrap_or_default();
        eprintln!(
            "  {} mu {:.2} sigma {:.2} matches {}",
            s.bot_name, r.mu, r.sigma, s.matches
        );
    }
    eprintln!(
        "validation done after {validated_at:?}, {RATED} rated classic matches each after \
         {rated_at:?}, whole test {:?}; season-1 classic order by μ (0 = strongest): {order:?}, \
         Kendall tau {tau:.2}; {open_before_stop} lobbies had matches in flight at shutdown",
        started.elapsed()
    );
    // A rated match's replay is there too.
    let page = get_bot(&mut c, entrants[0].bot_id).await;
    let rated = page.versions[0]
        .history
        .iter()
        .find(|h| h.state() == pb::LadderMatchState::Finished && !h.validation)
        .expect("a rated match");
    let replay = server
        .matches()
        .await
        .get_replay(pb::GetReplayRequest {
            match_id: rated.match_id.clone(),
        })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("a replay");
    assert!(maumau::replay::verify(&replay).valid);
    // Not the exact order: after ~50 classic matches each, σ is still 2-3 while neighbours
    // differ by a point or two of μ, and the tables depend on timing as well as the seed, so
    // neighbours swap from run to run; in classic Mau Mau luck weighs heavily, and even the
    // random bot has finished second. What holds: the order agrees with the strengths more than
    // it disagrees. (Comparing the stronger half with the weaker half, and then the two
    // strongest with the two weakest, each failed in CI on a loaded machine, once with the
    // strongest bot sixth: too close a call for a pass/fail test.)
    assert!(tau > 0.0, "order {order:?}, tau {tau:.2}");
}
