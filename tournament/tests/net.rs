//! Over gRPC: the same seeds give the same games as in-process, a server that is not there is a
//! clear error, and a program that crashes forfeits while the tournament carries on.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

use std::net::SocketAddr;
use std::time::Duration;

use maumau_engine::{MatchConfig, ProfileId};
use maumau_tournament::{Clock, Entrant, Format, GameRecord, Remote, Tournament, TournamentError};

/// A real server on 127.0.0.1:0, on its own runtime, stopped on drop.
struct Server {
    addr: SocketAddr,
    runtime: tokio::runtime::Runtime,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: Option<tokio::task::JoinHandle<()>>,
    _dir: tempfile::TempDir,
}

impl Server {
    fn start(join_timeout: Duration) -> Server {
        let dir = tempfile::tempdir().unwrap();
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .unwrap();
        let addr = listener.local_addr().unwrap();
        let config = maumau_server::ServerConfig {
            data_dir: dir.path().to_path_buf(),
            join_timeout,
            ..maumau_server::ServerConfig::default()
        };
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = runtime.spawn(async move {
            maumau_server::run(listener, config, async {
                let _ = stopped.await;
            })
            .await
            .unwrap();
        });
        Server {
            addr,
            runtime,
            stop: Some(stop),
            task: Some(task),
            _dir: dir,
        }
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
        // Let the server record its matches before the runtime goes.
        if let Some(t) = self.task.take() {
            let _ = self.runtime.block_on(t);
        }
    }
}

fn tournament(bots: &str, profile: ProfileId, seats: u8) -> Tournament {
    let mut t = Tournament::new(
        Entrant::parse_list(bots).unwrap(),
        MatchConfig::new(profile, seats),
    );
    t.deals = 2;
    t.threads = 2;
    t
}

#[test]
fn the_same_seeds_give_the_same_games_in_process_and_over_grpc() {
    let server = Server::start(Duration::from_secs(10));
    for (bots, profile, seats, format) in [
        (
            "random,heuristic,heuristic~0.3,search:3",
            ProfileId::Classic,
            3,
            Format::RoundRobin,
        ),
        (
            "heuristic,random,heuristic~0.5",
            ProfileId::Romanian32,
            2,
            Format::DoubleElimination,
        ),
    ] {
        let mut t = tournament(bots, profile, seats);
        t.format = format;
        let dir_a = tempfile::tempdir().unwrap();
        let local = t.run(Some(dir_a.path()), &mut |_| {}).unwrap();
        let mut remote = Remote::new(server.addr.to_string());
        remote.every_game = true;
        t.server = Some(remote);
        let dir_b = tempfile::tempdir().unwrap();
        let net = t.run(Some(dir_b.path()), &mut |_| {}).unwrap();
        assert!(!local.games.is_empty());
        assert_eq!(local.games.len(), net.games.len());
        // Game by game: seats, placings, totals, rounds and the number of actions.
        for (a, b) in local.games.iter().zip(&net.games) {
            // Over gRPC a game also records the opaque id it was played under, and its match.
            assert!(
                b.game.starts_with('g') && b.match_id.starts_with('m'),
                "{b:?}"
            );
            // Decision times are measured, and differ: in-process in nanoseconds, for the
            // decisions that needed the observation; over gRPC by the server, for every prompt.
            assert_eq!(b.decision_ns.len(), b.seats.len(), "{b:?}");
            let (a, b) = (
                &GameRecord {
                    decision_ns: Vec::new(),
                    ..a.clone()
                },
                &GameRecord {
                    game: String::new(),
                    match_id: String::new(),
                    decision_ns: Vec::new(),
                    ..b.clone()
                },
            );
            assert_eq!(a, b, "{bots}: game {} differs over gRPC", a.id);
        }
        let untimed = |rows: &[maumau_tournament::Standing]| {
            rows.iter()
                .map(|r| maumau_tournament::Standing {
                    decision_times: Default::default(),
                    ..r.clone()
                })
                .collect::<Vec<_>>()
        };
        assert_eq!(untimed(&local.standings), untimed(&net.standings));
        assert_eq!(local.champion, net.champion);
        assert!(net.notices.is_empty(), "{:?}", net.notices);
        // And action by action: the server's replays equal the in-process ones.
        let lines = |d: &tempfile::TempDir| {
            let mut v: Vec<String> = std::fs::read_to_string(d.path().join("replays.jsonl"))
                .unwrap()
                .lines()
                .map(str::to_string)
                .collect();
            v.sort();
            v
        };
        assert_eq!(lines(&dir_a), lines(&dir_b), "{bots}: replays differ");
    }
}

/// A match whose seats are all built-in bots seated by the server itself (`CreateMatch` with
/// `bots`) plays, action for action, the tournament's in-process game with the same seed and the
/// same bots: both give the bot at a seat the seed `bot_seed(match seed, seat)`.
#[test]
fn built_in_bots_seated_by_the_server_play_as_in_the_tournament() {
    use maumau::pb;
    use maumau_bot_sdk::bots::BotKind;
    use maumau_engine::Action;

    let server = Server::start(Duration::from_secs(10));
    let config = MatchConfig {
        max_rounds: 1,
        ..MatchConfig::new(ProfileId::Classic, 3)
    };
    let mut t = Tournament::new(
        Entrant::parse_list("random,heuristic,search").unwrap(),
        config,
    );
    t.deals = 1;
    t.threads = 1;
    let dir = tempfile::tempdir().unwrap();
    let local = t.run(Some(dir.path()), &mut |_| {}).unwrap();
    let replays = std::fs::read_to_string(dir.path().join("replays.jsonl")).unwrap();
    let url = format!("http://{}", server.addr);
    let mut games = 0;
    for line in replays.lines() {
        let game: serde_json::Value = serde_json::from_str(line).unwrap();
        let seed = game["seed"].as_u64().unwrap();
        let bots = game["entrants"]
            .as_array()
            .unwrap()
            .iter()
            .enumerate()
            .map(|(seat, name)| {
                let kind = match name.as_str().unwrap().parse::<BotKind>().unwrap() {
                    BotKind::Random => pb::BotKind::Random,
                    BotKind::Heuristic => pb::BotKind::Heuristic,
                    BotKind::Search => pb::BotKind::Search,
                };
                pb::SeatBot {
                    seat: seat as u32,
                    kind: kind as i32,
                }
            })
            .collect();
        let in_process: Vec<String> = game["actions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|a| a.as_str().unwrap().to_string())
            .collect();
        let on_server: Vec<String> = server.runtime.block_on(async {
            let mut matches = pb::match_service_client::MatchServiceClient::connect(url.clone())
                .await
                .unwrap();
            let created = matches
                .create_match(pb::CreateMatchRequest {
                    config: Some(pb::MatchConfig::from(&config)),
                    seed: Some(seed),
                    bots,
                    ..Default::default()
                })
                .await
                .unwrap()
                .into_inner();
            assert!(
                created.seat_tokens.is_empty(),
                "every seat is a built-in bot"
            );
            // A match of built-in bots plays by itself: poll until it has a result.
            let id = created.match_id;
            let mut finished = false;
            for _ in 0..1200 {
                let result = matches
                    .get_result(pb::GetResultRequest {
                        match_id: id.clone(),
                    })
                    .await;
                if result.is_ok() {
                    finished = true;
                    break;
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            assert!(finished, "match {id} did not finish within a minute");
            let replay = matches
                .get_replay(pb::GetReplayRequest { match_id: id })
                .await
                .unwrap()
                .into_inner()
                .replay
                .unwrap();
            replay
                .actions
                .iter()
                .map(|a| {
                    let action = Action::from_index(a.index as usize).unwrap();
                    format!("{} {action}", a.seat)
                })
                .collect()
        });
        assert_eq!(
            on_server, in_process,
            "seed {seed}: the server's bots played another game"
        );
        games += 1;
    }
    assert_eq!(games, local.games.len());
    assert!(games >= 3, "every rotation of the three bots");
}

#[test]
fn a_crashing_program_forfeits_and_the_tournament_carries_on() {
    // The server starts a match without a seat that never joins after 200 ms; the seat forfeits
    // 200 ms after it had to act.
    let server = Server::start(Duration::from_millis(200));
    let mut t = Tournament::new(
        Entrant::parse_all([
            "random",
            "heuristic",
            "crash=cmd:echo 'bot.py: something broke' >&2; exit 3",
        ])
        .unwrap(),
        MatchConfig::new(ProfileId::Classic, 2),
    );
    t.deals = 1;
    t.threads = 2;
    let mut remote = Remote::new(format!("http://{}", server.addr));
    remote.clock = Clock {
        disconnect_grace: Duration::from_millis(200),
        ..Clock::default()
    };
    t.server = Some(remote);
    let dir = tempfile::tempdir().unwrap();
    let mut live = Vec::new();
    let report = t
        .run(Some(dir.path()), &mut |p| live.extend(p.notice))
        .unwrap();
    // 3 tables × 2 seatings; the two tables with `crash` are forfeited, the other is played.
    assert_eq!(report.games.len(), 6);
    let crash = report.standings.iter().find(|s| s.name == "crash").unwrap();
    assert_eq!((crash.forfeits, crash.games), (4, 4));
    for g in report.games.iter().filter(|g| g.seats.contains(&2)) {
        let seat = g.seats.iter().position(|&e| e == 2).unwrap();
        assert_eq!(g.forfeits, vec![seat as u8]);
        assert_eq!(g.placings[seat], 2, "a forfeit is placed last");
    }
    assert!(
        report
            .games
            .iter()
            .filter(|g| !g.seats.contains(&2))
            .all(|g| g.forfeits.is_empty())
    );
    assert_eq!(
        live, report.notices,
        "every notice was shown as it happened"
    );
    assert_eq!(report.notices.len(), 4);
    for n in &report.notices {
        assert!(n.contains("crash") && n.contains("forfeited"), "{n}");
        assert!(n.contains("exit status: 3"), "{n}");
        assert!(n.contains("something broke"), "{n}");
    }
    let logs = std::fs::read_dir(dir.path().join("logs")).unwrap().count();
    assert_eq!(logs, 4, "one log per launch");
}

#[test]
fn no_server_and_an_unreachable_server_are_clear_errors() {
    let entrants = Entrant::parse_all(["random", "mine=cmd:true"]).unwrap();
    let mut t = Tournament::new(entrants, MatchConfig::new(ProfileId::Classic, 2));
    let err = t.run(None, &mut |_| {}).unwrap_err();
    assert!(matches!(err, TournamentError::Invalid(_)));
    assert!(err.to_string().contains("needs a server"), "{err}");
    // A port nothing listens on: bind one, then free it.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    t.server = Some(Remote::new(format!("127.0.0.1:{port}")));
    let err = t.run(None, &mut |_| {}).unwrap_err();
    assert!(matches!(err, TournamentError::Server(_)));
    assert!(err.to_string().contains("cannot reach the server"), "{err}");
}

/// What a program in a tournament game can read before its game ends (its environment, and the
/// match's label that anyone reads through GetMatch) gives away neither the tournament seed nor
/// the game's place in the schedule, even when the seed was chosen by hand: the game is named by
/// an opaque id that only results.jsonl maps to its fixture, and the program's own seed is
/// derived one-way from the game's seed (the old invertible mix gave the game seed away).
#[test]
fn nothing_a_seat_can_read_gives_away_the_seed_or_the_schedule() {
    let server = Server::start(Duration::from_millis(200));
    let dir = tempfile::tempdir().unwrap();
    let envs = dir.path().join("envs");
    std::fs::create_dir_all(&envs).unwrap();
    // The program writes down its environment and leaves (so it forfeits).
    let peek = format!("peek=cmd:env > '{}'/\"$MAUMAU_MATCH_ID\"", envs.display());
    let mut t = Tournament::new(
        Entrant::parse_all(["random", &peek]).unwrap(),
        MatchConfig::new(ProfileId::Classic, 2),
    );
    t.deals = 2;
    t.threads = 2;
    t.seed = 4242;
    let mut remote = Remote::new(format!("http://{}", server.addr));
    remote.clock = Clock {
        disconnect_grace: Duration::from_millis(200),
        ..Clock::default()
    };
    t.server = Some(remote);
    let out = dir.path().join("out");
    let report = t.run(Some(&out), &mut |_| {}).unwrap();
    assert_eq!(report.games.len(), 4);
    let url = format!("http://{}", server.addr);
    let mut games = std::collections::HashSet::new();
    for g in &report.games {
        let seat = g.seats.iter().position(|&e| e == 1).unwrap();
        assert!(
            g.game.starts_with('g') && g.game.len() == 17,
            "an opaque game id: {g:?}"
        );
        assert!(games.insert(g.game.clone()), "one id per game");
        let env = std::fs::read_to_string(envs.join(&g.match_id)).unwrap();
        let var = |name: &str| {
            env.lines()
                .find_map(|l| l.strip_prefix(&format!("{name}=")))
                .unwrap_or_else(|| panic!("{name} missing from {env}"))
                .to_string()
        };
        assert_eq!(var("MAUMAU_GAME"), g.game);
        let bot_seed: u64 = var("MAUMAU_SEED").parse().unwrap();
        assert_eq!(
            bot_seed,
            maumau_tournament::schedule::bot_seed(g.seed, seat)
        );
        assert_ne!(
            bot_seed,
            maumau_tournament::schedule::mix(&[g.seed, seat as u64, 0xB07]),
            "not the invertible mix of the game seed"
        );
        let label = server.runtime.block_on(async {
            let mut client =
                maumau::pb::match_service_client::MatchServiceClient::connect(url.clone())
                    .await
                    .unwrap();
            client
                .get_match(maumau::pb::GetMatchRequest {
                    match_id: g.match_id.clone(),
                })
                .await
                .unwrap()
                .into_inner()
                .r#match
                .unwrap()
                .label
        });
        assert_eq!(label, format!("tournament game {}", g.game));
        // No value in the environment is the tournament seed, the game seed or the fixture id.
        for line in env.lines() {
            let value = line.split_once('=').map_or(line, |(_, v)| v);
            assert_ne!(value, t.seed.to_string(), "{line}");
            assert_ne!(value, g.seed.to_string(), "{line}");
            assert!(!value.contains(&g.id), "{line}");
        }
    }
    // results.jsonl maps each opaque id to its fixture.
    let results = std::fs::read_to_string(out.join("results.jsonl")).unwrap();
    for g in &report.games {
        assert!(
            results
                .lines()
                .any(|l| l.contains(&format!("\"id\":\"{}\"", g.id))
                    && l.contains(&format!("\"game\":\"{}\"", g.game))),
            "{results}"
        );
    }
}
