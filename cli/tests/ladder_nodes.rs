//! The node-death test (issue 6): three `maumau serve --ladder --store postgres://...`
//! processes on one PostgreSQL, reference bots spread over their lobbies, and one node killed
//! with SIGKILL while it hosts matches. Afterwards every match is finished, aborted or void; no
//! match has more than one rating event per seat; a full recompute equals the stored ratings;
//! and every match the dead node hosted was settled (aborted and retried, or voided) within
//! 30 seconds of the kill.
//!
//! The matchmaker's-node test runs two nodes with the default 30 s join deadline, four bots whose
//! only server is node 0 and four on node 1, and kills node 0 (SIGKILL) and its bots mid-play:
//! every survivor is invited to its next match that finishes within 5 s of being free, no seat of
//! any match is charged a no-show, every finished match reaches its survivors' lobbies, and the
//! ratings equal a recompute.
//!
//! The outage-under-play test stops the PostgreSQL server under two nodes and four playing bots
//! for 15 s: health says NOT_SERVING on both meanwhile and SERVING after, every bot plays again,
//! no match is left open, nobody is charged a no-show, every finished match reaches its bots,
//! and the ratings equal a recompute.
//!
//! The outage test stops the PostgreSQL server under a node for a few seconds: health says
//! NOT_SERVING meanwhile, calls and pages fail without naming the database, health says SERVING
//! again once the server is back, and the node logs the outage in a few lines.
//!
//! Needs a PostgreSQL server where the user may create schemas: `MAUMAU_TEST_POSTGRES` (set by
//! `scripts/test.sh` and CI, which start one with `scripts/postgres-temp.sh`). Without it the
//! test says so and passes without running.
#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_bot_sdk::Bot;
use maumau_bot_sdk::bots::{HeuristicBot, RandomBot};
use maumau_bot_sdk::runner::{RunOptions, run};
use maumau_engine::{Action, Observation};
use maumau_ladder::store::{MatchState, NodeId, RatingCause};
use maumau_ladder::{MatchId, PgStore, Store};
use tokio::sync::{mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic_health::pb::health_check_response::ServingStatus;
use tonic_health::pb::health_client::HealthClient;

#[path = "common/postgres.rs"]
mod postgres_schema;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");
const BOTS: usize = 12;
const NODES: usize = 3;

fn now_ms() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

/// A fresh schema on the test PostgreSQL, or `None` (with a message) when there is none.
fn fresh_store_url() -> Option<String> {
    postgres_schema::fresh_store_url("ladder_nodes")
}

/// A `maumau serve --ladder` process.
struct Node {
    child: Child,
    addr: String,
}

impl Drop for Node {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start_node(url: &str, dir: &Path, i: usize) -> Node {
    let log = std::env::var("MAUMAU_TEST_NODE_LOG").unwrap_or_else(|_| "warn".into());
    start_node_logging(url, dir, i, &log)
}

fn start_node_logging(url: &str, dir: &Path, i: usize, log_filter: &str) -> Node {
    start_node_configured(
        url,
        dir,
        i,
        log_filter,
        "ladder_join_deadline_ms = 3000\n\
         [[ladder_formats]]\nprofile = \"classic\"\nseats = 4\nweight = 2.0\n\
         [[ladder_formats]]\nprofile = \"classic\"\nseats = 2\nweight = 1.0\n",
    )
}

/// A node with `config` after the common settings (TOML: keys, then tables).
fn start_node_configured(url: &str, dir: &Path, i: usize, log_filter: &str, config: &str) -> Node {
    let dir = dir.join(format!("node{i}"));
    std::fs::create_dir_all(&dir).unwrap();
    let config_path = dir.join("config.toml");
    std::fs::write(
        &config_path,
        format!(
            "ladder = true\nladder_validation = false\nladder_drain_timeout_ms = 5000\n{config}"
        ),
    )
    .unwrap();
    let config = config_path;
    let mut log = std::fs::File::create(dir.join("stderr.log")).unwrap();
    let mut child = Command::new(BIN)
        .args(["serve", "--ladder", "--listen", "127.0.0.1:0", "--data-dir"])
        .arg(dir.join("data"))
        .arg("--config")
        .arg(&config)
        .arg("--store")
        .arg(url)
        .env_remove("MAUMAU_OPERATOR_TOKEN")
        .env("RUST_LOG", log_filter)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let addr = loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("node {i} exited before serving; see {dir:?}/stderr.log"))
            .unwrap();
        writeln!(log, "{line}").unwrap();
        if let Some(rest) = line.split("serving on ").nth(1) {
            break rest.split_whitespace().next().unwrap().to_string();
        }
    };
    // Keep the log, and the pipe from filling.
    std::thread::spawn(move || {
        for line in lines.map_while(Result::ok) {
            let _ = writeln!(log, "{line}");
        }
    });
    Node {
        child,
        addr: format!("http://{addr}"),
    }
}

fn with_bearer<T>(message: T, key: &str) -> tonic::Request<T> {
    let mut req = tonic::Request::new(message);
    req.metadata_mut()
        .insert("authorization", format!("Bearer {key}").parse().unwrap());
    req
}

/// Registers one owner, bot and version; returns the version key.
async fn register(addr: &str, i: usize) -> String {
    let mut c = LadderServiceClient::connect(addr.to_string())
        .await
        .unwrap();
    let owner = c
        .register_owner(pb::RegisterOwnerRequest {
            name: format!("owner{i}"),
            invitation_code: String::new(),
        })
        .await
        .unwrap()
        .into_inner();
    let bot = c
        .register_bot(with_bearer(
            pb::RegisterBotRequest {
                name: format!("bot{i}"),
            },
            &owner.owner_key,
        ))
        .await
        .unwrap()
        .into_inner();
    c.add_version(with_bearer(
        pb::AddVersionRequest {
            bot_id: bot.bot_id,
            label: "v1".into(),
        },
        &owner.owner_key,
    ))
    .await
    .unwrap()
    .into_inner()
    .version_key
}

/// A reference bot that thinks a little, so that matches last long enough to be killed in.
struct Slow(Box<dyn Bot>);

impl Bot for Slow {
    fn name(&self) -> &str {
        self.0.name()
    }
    fn decide(&mut self, obs: &Observation) -> Action {
        std::thread::sleep(Duration::from_millis(8));
        self.0.decide(obs)
    }
    fn react(&mut self, obs: &Observation) -> Option<Action> {
        self.0.react(obs)
    }
}

#[derive(Default)]
struct Tally {
    invitations: AtomicU64,
    ended: AtomicU64,
    reconnects: AtomicU64,
}

/// How a test lobby plays.
#[derive(Clone)]
struct LobbyStyle {
    /// Its hello: matches at once and table sizes.
    max_matches: u32,
    seats: Vec<u32>,
    /// The heuristic bot for even seeds (else always the random bot).
    heuristic_on_even_seeds: bool,
    /// Where it records what it hears.
    heard: Option<Arc<std::sync::Mutex<Vec<Heard>>>>,
    /// Whether it opens the lobby on the next node when its node goes away (else that fails the
    /// test).
    roam: bool,
}

impl LobbyStyle {
    /// Two matches at once at 2 or 4 seats, heuristic or random, moving on when its node goes.
    fn roaming() -> LobbyStyle {
        LobbyStyle {
            max_matches: 2,
            seats: vec![2, 4],
            heuristic_on_even_seeds: true,
            heard: None,
            roam: true,
        }
    }
}

/// One version's lobby: plays its invitations; when its node goes away it opens the lobby on the
/// next node (if it roams); when told to stop it drains.
async fn lobby(
    nodes: Arc<Vec<String>>,
    home: usize,
    key: String,
    seed: u64,
    tally: Arc<Tally>,
    mut stop: watch::Receiver<bool>,
    style: LobbyStyle,
) {
    let mut at = home;
    let mut plays = tokio::task::JoinSet::new();
    let mut n = 0u64;
    'nodes: loop {
        let url = nodes[at % nodes.len()].clone();
        let Ok(mut client) = LadderServiceClient::connect(url.clone()).await else {
            at += 1;
            tally.reconnects.fetch_add(1, Ordering::Relaxed);
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        };
        let (tx, rx) = mpsc::channel(4);
        tx.send(pb::LobbyRequest {
            kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
                version_key: String::new(),
                max_matches: style.max_matches,
                profiles: vec!["classic".into()],
                seats: style.seats.clone(),
            })),
        })
        .await
        .unwrap();
        let Ok(inbound) = client
            .lobby(with_bearer(ReceiverStream::new(rx), &key))
            .await
        else {
            at += 1;
            tally.reconnects.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let mut inbound = inbound.into_inner();
        let mut draining = *stop.borrow();
        if draining {
            let _ = tx
                .send(pb::LobbyRequest {
                    kind: Some(pb::lobby_request::Kind::Drain(pb::LobbyDrain {})),
                })
                .await;
        }
        loop {
            let message = tokio::select! {
                m = inbound.message() => m,
                _ = stop.changed(), if !draining => {
                    draining = true;
                    let _ = tx.send(pb::LobbyRequest {
                        kind: Some(pb::lobby_request::Kind::Drain(pb::LobbyDrain {})),
                    }).await;
                    continue;
                }
                Some(_) = plays.join_next(), if !plays.is_empty() => continue,
            };
            use pb::lobby_response::Kind as K;
            match message {
                Ok(Some(pb::LobbyResponse {
                    kind: Some(K::Invitation(inv)),
                })) => {
                    tally.invitations.fetch_add(1, Ordering::Relaxed);
                    if let Some(h) = &style.heard {
                        h.lock()
                            .unwrap()
                            .push(Heard::Invited(Instant::now(), inv.ladder_match_id));
                    }
                    n += 1;
                    let server = if inv.node_address.is_empty() {
                        url.clone()
                    } else {
                        inv.node_address.clone()
                    };
                    let bot_seed = seed ^ n.wrapping_mul(maumau_engine::seed::GAMMA);
                    let heuristic = style.heuristic_on_even_seeds && seed.is_multiple_of(2);
                    plays.spawn(async move {
                        let inner: Box<dyn Bot> = if heuristic {
                            Box::new(HeuristicBot::new(bot_seed))
                        } else {
                            Box::new(RandomBot::new(bot_seed))
                        };
                        let mut bot = Slow(inner);
                        let mut options = RunOptions::new(server, inv.seat_token);
                        options.max_reconnects = 2;
                        // A seat at the killed node's table fails; that is expected.
                        let _ =
                            tokio::time::timeout(Duration::from_secs(60), run(&mut bot, &options))
                                .await;
                    });
                }
                Ok(Some(pb::LobbyResponse {
                    kind: Some(K::MatchEnded(e)),
                })) => {
                    tally.ended.fetch_add(1, Ordering::Relaxed);
                    if let Some(h) = &style.heard {
                        h.lock().unwrap().push(Heard::Ended(
                            Instant::now(),
                            e.ladder_match_id,
                            e.finished,
                        ));
                    }
                }
                Ok(Some(pb::LobbyResponse {
                    kind: Some(K::Drained(_)),
                })) => break 'nodes,
                Ok(Some(_)) => {}
                Ok(None) if draining => break 'nodes,
                Ok(None) | Err(_) => {
                    assert!(style.roam, "a lobby that stays closed: {message:?}");
                    // The node went away (or refused): open the lobby on the next one.
                    at += 1;
                    tally.reconnects.fetch_add(1, Ordering::Relaxed);
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue 'nodes;
                }
            }
        }
    }
    while plays.join_next().await.is_some() {}
}

/// The test's own store handle: closed on a thread of its own when the test ends (or fails), as
/// the PostgreSQL client may not be dropped inside the runtime.
struct Db(Option<PgStore>);

impl Db {
    /// Opens the test's store at `url` (on a blocking thread).
    async fn open(url: &str) -> Db {
        let url = url.to_string();
        let pg = tokio::task::spawn_blocking(move || PgStore::open(&url).unwrap())
            .await
            .unwrap();
        Db(Some(pg))
    }
}

impl Drop for Db {
    fn drop(&mut self) {
        if let Some(pg) = self.0.take() {
            let _ = std::thread::spawn(move || pg.close()).join();
        }
    }
}

/// Runs `f` on a blocking thread (the PostgreSQL client may not run inside the runtime).
async fn db<T: Send + 'static>(pg: &PgStore, f: impl FnOnce(&PgStore) -> T + Send + 'static) -> T {
    let pg = pg.clone();
    tokio::task::spawn_blocking(move || f(&pg)).await.unwrap()
}

fn open_matches(pg: &PgStore) -> usize {
    [MatchState::Scheduled, MatchState::Running]
        .into_iter()
        .map(|s| pg.matches_in_state(s).unwrap().len())
        .sum()
}

/// Waits (at most 30 s) until no match is scheduled or running.
async fn await_no_open_matches(pg: &PgStore) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while db(pg, open_matches).await > 0 {
        assert!(
            Instant::now() < deadline,
            "matches still scheduled or running"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Waits (at most 60 s) for every lobby task of a set to end after its drain.
async fn drain(lobbies: &mut tokio::task::JoinSet<()>, what: &str) {
    let drained = tokio::time::timeout(Duration::from_secs(60), async {
        while lobbies.join_next().await.is_some() {}
    })
    .await;
    assert!(drained.is_ok(), "{what}");
}

/// Every ended match (finished, aborted or void), by id.
fn ended_matches(pg: &PgStore) -> Vec<maumau_ladder::store::MatchRecord> {
    let mut all = Vec::new();
    for state in [MatchState::Finished, MatchState::Aborted, MatchState::Void] {
        all.extend(pg.matches_in_state(state).unwrap());
    }
    all.sort_by_key(|m| m.id.0);
    all
}

/// No seat of any match was charged a no-show.
fn assert_no_no_show(records: &[maumau_ladder::store::MatchRecord]) {
    for m in records {
        assert!(
            m.seats.iter().all(|s| s.outcome.is_none_or(|o| o.joined)),
            "a no-show was charged in match {}: {m:?}",
            m.id
        );
    }
}

/// `maumau ladder rerate --store URL` (a full recompute must equal the stored ratings); its
/// output.
fn rerate(url: &str) -> String {
    let out = Command::new(BIN)
        .args(["ladder", "rerate", "--store", url])
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "rerate: {text}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    text.trim().to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn a_killed_node_loses_no_match_and_rates_none_twice() {
    let Some(url) = tokio::task::spawn_blocking(fresh_store_url).await.unwrap() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // MAUMAU_KEEP_TEST_DIR keeps the nodes' logs (MAUMAU_TEST_NODE_LOG sets their RUST_LOG).
    let (_tmp, dir) = if std::env::var_os("MAUMAU_KEEP_TEST_DIR").is_some() {
        let kept = tmp.keep();
        println!("keeping the nodes' logs in {kept:?}");
        (None, kept)
    } else {
        let path = tmp.path().to_path_buf();
        (Some(tmp), path)
    };
    // The first node creates the schema; the others join it.
    let mut nodes: Vec<Option<Node>> = vec![Some(start_node(&url, &dir, 0))];
    for i in 1..NODES {
        nodes.push(Some(start_node(&url, &dir, i)));
    }
    let addrs: Arc<Vec<String>> = Arc::new(
        nodes
            .iter()
            .map(|n| n.as_ref().unwrap().addr.clone())
            .collect(),
    );
    let store = Db::open(&url).await;
    let pg = store.0.clone().unwrap();
    let mut keys = Vec::new();
    for i in 0..BOTS {
        keys.push(register(&addrs[i % NODES], i).await);
    }
    let tally = Arc::new(Tally::default());
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut lobbies = tokio::task::JoinSet::new();
    for (i, key) in keys.into_iter().enumerate() {
        lobbies.spawn(lobby(
            addrs.clone(),
            i % NODES,
            key,
            i as u64 + 1,
            tally.clone(),
            stop_rx.clone(),
            LobbyStyle::roaming(),
        ));
    }

    // Let matches finish on every node, then wait for the victim to host some.
    let victim = NODES - 1;
    let victim_addr = addrs[victim].clone();
    let victim_id: NodeId = db(&pg, move |pg| {
        pg.nodes()
            .unwrap()
            .into_iter()
            .find(|n| n.address == victim_addr)
            .map(|n| n.id)
            .unwrap()
    })
    .await;
    tokio::time::sleep(Duration::from_secs(4)).await;
    let deadline = Instant::now() + Duration::from_secs(30);
    let hosted = loop {
        // A claimed match has its table on the node (a match is stored as running only once
        // its join deadline passed with every seat joined, so short ones never are): wait for
        // one, give its seats a moment to sit down and play, and take the node's matches then.
        let leased = db(&pg, move |pg| pg.leased_to(victim_id).unwrap()).await;
        if !leased.is_empty() {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let leased = db(&pg, move |pg| pg.leased_to(victim_id).unwrap()).await;
            if !leased.is_empty() {
                break leased;
            }
        }
        assert!(
            Instant::now() < deadline,
            "node {} never hosted a match",
            victim_id.0
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let finished_before = db(&pg, |pg| {
        pg.matches_in_state(MatchState::Finished).unwrap().len()
    })
    .await;
    let killed_ms = now_ms();
    {
        let mut node = nodes[victim].take().unwrap();
        node.child.kill().unwrap(); // SIGKILL
        node.child.wait().unwrap();
    }
    println!(
        "killed node {} (SIGKILL) hosting {} matches ({:?}); {finished_before} matches finished \
         before",
        victim_id.0,
        hosted.len(),
        hosted.iter().map(|(m, _)| m.0).collect::<Vec<_>>()
    );

    // Every match it hosted is settled; measure how long that took.
    let ids: Vec<MatchId> = hosted.iter().map(|(m, _)| *m).collect();
    let deadline = Instant::now() + Duration::from_secs(60);
    let settled = loop {
        let ids = ids.clone();
        let records = db(&pg, move |pg| {
            ids.iter()
                .map(|id| pg.match_record(*id).unwrap())
                .collect::<Vec<_>>()
        })
        .await;
        if records
            .iter()
            .all(|m| !matches!(m.state, MatchState::Scheduled | MatchState::Running))
        {
            break records;
        }
        assert!(
            Instant::now() < deadline,
            "orphans left unsettled: {records:?}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    let mut orphans = 0;
    let mut slowest = 0i64;
    for m in &settled {
        let reason = m.reason.clone().unwrap_or_default();
        if reason.contains("stopped hosting") {
            orphans += 1;
            let took = m.ended_ms.unwrap() - killed_ms;
            slowest = slowest.max(took);
            assert!(
                took <= 30_000,
                "match {} settled {took} ms after the kill",
                m.id
            );
        } else {
            // It ended on the node just before the kill.
            assert_eq!(m.state, MatchState::Finished, "{m:?}");
        }
    }
    assert!(orphans > 0, "no match of the killed node was orphaned");
    println!("{orphans} orphaned matches, all settled; the slowest {slowest} ms after the kill");

    // Play on a little (the retries among them), then drain every lobby.
    tokio::time::sleep(Duration::from_secs(3)).await;
    stop_tx.send(true).unwrap();
    drain(&mut lobbies, "the lobbies did not drain").await;
    await_no_open_matches(&pg).await;
    for node in &mut nodes {
        drop(node.take());
    }

    // The store: everything ended, nothing rated twice, ratings equal a full recompute.
    let (finished, aborted, void, retried) = db(&pg, |pg| {
        let count = |s| pg.matches_in_state(s).unwrap();
        let finished = count(MatchState::Finished);
        let aborted = count(MatchState::Aborted);
        let void = count(MatchState::Void);
        assert_eq!(open_matches(pg), 0);
        let season = pg.current_season().unwrap().unwrap().id;
        let events = pg.rating_events(season).unwrap();
        let mut per_seat = std::collections::HashMap::new();
        for e in events.iter().filter(|e| e.cause == RatingCause::Match) {
            *per_seat.entry((e.match_id, e.change.version)).or_insert(0) += 1;
        }
        assert!(
            per_seat.values().all(|&n| n == 1),
            "a seat rated more than once"
        );
        for m in finished.iter().filter(|m| m.rated_seq.is_some()) {
            let n = m
                .seats
                .iter()
                .filter(|s| per_seat.contains_key(&(Some(m.id), s.version)))
                .count();
            assert_eq!(
                n,
                m.seats.len(),
                "match {} is not rated at every seat",
                m.id
            );
        }
        for m in aborted.iter().chain(&void) {
            assert!(
                !per_seat.keys().any(|(id, _)| *id == Some(m.id)),
                "match {} ended unrated but has rating events",
                m.id
            );
        }
        let retried = aborted
            .iter()
            .filter(|m| {
                m.reason
                    .as_deref()
                    .is_some_and(|r| r.contains("retried as match"))
            })
            .count();
        (finished.len(), aborted.len(), void.len(), retried)
    })
    .await;
    // `maumau ladder rerate --store`: a full recompute equals the stored ratings.
    println!("maumau ladder rerate --store: {}", rerate(&url));
    println!(
        "after the run: {finished} finished, {aborted} aborted ({retried} retried after the \
         kill), {void} void; lobbies got {} invitations and {} match ends, reconnected {} times",
        tally.invitations.load(Ordering::Relaxed),
        tally.ended.load(Ordering::Relaxed),
        tally.reconnects.load(Ordering::Relaxed)
    );
    assert!(
        finished > finished_before,
        "no match finished after the kill"
    );
    drop(store);
}

/// A throwaway PostgreSQL server of this test's own (`scripts/postgres-temp.sh`), which it may
/// stop and start: (URL, directory).
fn own_postgres() -> (String, String) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres-temp.sh");
    let out = Command::new("bash")
        .arg(&script)
        .args(["start", "--owner-pid", &std::process::id().to_string()])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let value = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap()
            .to_string()
    };
    (
        value("MAUMAU_TEST_POSTGRES="),
        value("MAUMAU_POSTGRES_DIR="),
    )
}

fn postgres_temp(command: &str, dir: &str) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("../scripts/postgres-temp.sh");
    let status = Command::new("bash")
        .arg(&script)
        .args([command, dir])
        .status()
        .unwrap();
    assert!(status.success(), "postgres-temp.sh {command} failed");
}

async fn health(addr: &str) -> ServingStatus {
    let channel = tonic::transport::Channel::from_shared(addr.to_string())
        .unwrap()
        .connect()
        .await
        .unwrap();
    HealthClient::new(channel)
        .check(tonic_health::pb::HealthCheckRequest {
            service: String::new(),
        })
        .await
        .unwrap()
        .into_inner()
        .status()
}

/// Waits (up to 20 s) until the node's health says `want`; how long it took.
async fn await_health(addr: &str, want: ServingStatus) -> Duration {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(20) {
        if health(addr).await == want {
            return start.elapsed();
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("health never became {want:?}");
}

/// A plain `GET` of a page: its status line, headers and body (binary bytes replaced).
fn get_page(addr: &str, path: &str) -> String {
    use std::io::Read;
    let host = addr.trim_start_matches("http://");
    let mut s = std::net::TcpStream::connect(host).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    write!(
        s,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    // Bytes, not text: a replay is binary.
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_follows_the_store_through_an_outage_and_the_log_stays_short() {
    // This test stops its database, so it starts one of its own; it runs where the others do.
    if std::env::var("MAUMAU_TEST_POSTGRES").is_err() {
        eprintln!("ladder_nodes: outage test SKIPPED, MAUMAU_TEST_POSTGRES is not set");
        return;
    }
    let (admin, pg_dir) = own_postgres();
    let port = admin.rsplit(':').next().unwrap().split('/').next().unwrap();
    let port = port.to_string();
    let dir = tempfile::tempdir().unwrap();
    let node = start_node_logging(&admin, dir.path(), 0, "info");
    await_health(&node.addr, ServingStatus::Serving).await;

    let log_path = dir.path().join("node0/stderr.log");
    let before = std::fs::read_to_string(&log_path).unwrap().len();
    postgres_temp("pause", &pg_dir);
    let down = Instant::now();
    let noticed = await_health(&node.addr, ServingStatus::NotServing).await;
    eprintln!("health said NOT_SERVING {noticed:?} after the database stopped");
    // Calls and pages fail, and say nothing of the database (host, port, user, database).
    let mut c = LadderServiceClient::connect(node.addr.clone())
        .await
        .unwrap();
    let e = c
        .get_leaderboard(pb::GetLeaderboardRequest {
            profile: "classic".into(),
            ..Default::default()
        })
        .await
        .unwrap_err();
    assert_eq!(e.code(), tonic::Code::Unavailable, "{e:?}");
    let page = get_page(&node.addr, "/ladder");
    assert!(page.starts_with("HTTP/1.1 503"), "{page}");
    for told in [e.message(), page.as_str()] {
        for secret in ["127.0.0.1", port.as_str(), "maumau@", "postgres"] {
            assert!(!told.contains(secret), "{secret:?} in {told:?}");
        }
    }
    // A few seconds down, with the node's loops polling all along.
    tokio::time::sleep(Duration::from_secs(3).saturating_sub(down.elapsed())).await;
    postgres_temp("resume", &pg_dir);
    let back = await_health(&node.addr, ServingStatus::Serving).await;
    eprintln!("health said SERVING {back:?} after the database started again");
    c.get_leaderboard(pb::GetLeaderboardRequest {
        profile: "classic".into(),
        ..Default::default()
    })
    .await
    .unwrap();

    // What the node logged from the stop on.
    let log = std::fs::read_to_string(&log_path).unwrap();
    let about: Vec<&str> = log[before..]
        .lines()
        .filter(|l| l.contains("WARN") || l.contains("ERROR") || l.contains("store"))
        .collect();
    eprintln!("the node's log about it:\n{}", about.join("\n"));
    assert!(about.len() <= 4, "{} lines", about.len());
    assert!(
        about.iter().any(|l| l.contains("store is unreachable")),
        "no line when the outage started"
    );
    assert!(
        about
            .iter()
            .any(|l| l.contains("answers again") && l.contains("calls failed")),
        "no line when it ended"
    );
    drop(node);
    postgres_temp("stop", &pg_dir);
}

/// What a survivor's lobby heard, with when.
#[derive(Debug, Clone)]
enum Heard {
    Invited(Instant, i64),
    Ended(Instant, i64, bool),
}

/// One version's lobby on one node, for good: it records what it hears and plays its invitations
/// (one at a time, 2 seats, the random bot) until `stop` (then drains).
async fn recorded_lobby(
    addr: String,
    key: String,
    seed: u64,
    heard: Arc<std::sync::Mutex<Vec<Heard>>>,
    stop: watch::Receiver<bool>,
) {
    let style = LobbyStyle {
        max_matches: 1,
        seats: vec![2],
        heuristic_on_even_seeds: false,
        heard: Some(heard),
        roam: false,
    };
    let tally = Arc::new(Tally::default());
    lobby(Arc::new(vec![addr]), 0, key, seed, tally, stop, style).await;
}

/// When a survivor was free after the kill (the kill, or the end of the match it was in then),
/// and when it was invited to its next match that finished, if it was.
fn free_and_next(heard: &[Heard], killed: Instant) -> (Instant, Option<Instant>) {
    let ended = |id: i64| {
        heard.iter().find_map(|h| match h {
            Heard::Ended(at, m, finished) if *m == id => Some((*at, *finished)),
            _ => None,
        })
    };
    let mut free = killed;
    for h in heard {
        if let Heard::Invited(at, id) = h
            && *at <= killed
            && let Some((end, _)) = ended(*id)
        {
            free = free.max(end);
        }
    }
    let next = heard.iter().find_map(|h| match h {
        Heard::Invited(at, id) if *at > free && ended(*id).is_some_and(|(_, f)| f) => Some(*at),
        _ => None,
    });
    (free, next)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn when_the_matchmakers_node_dies_the_survivors_play_on_within_seconds() {
    let Some(url) = tokio::task::spawn_blocking(fresh_store_url).await.unwrap() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let log = std::env::var("MAUMAU_TEST_NODE_LOG").unwrap_or_else(|_| "warn".into());
    // MAUMAU_KEEP_TEST_DIR keeps the nodes' logs.
    let (_tmp, dir) = if std::env::var_os("MAUMAU_KEEP_TEST_DIR").is_some() {
        let kept = tmp.keep();
        println!("keeping the nodes' logs in {kept:?}");
        (None, kept)
    } else {
        let path = tmp.path().to_path_buf();
        (Some(tmp), path)
    };
    // The default join deadline (30 s): a stall shows.
    let config = "[[ladder_formats]]\nprofile = \"classic\"\nseats = 2\nweight = 1.0\n";
    // Node 0 starts first and runs the matchmaker.
    let mut doomed_node = Some(start_node_configured(&url, &dir, 0, &log, config));
    tokio::time::sleep(Duration::from_secs(1)).await;
    let survivor_node = start_node_configured(&url, &dir, 1, &log, config);
    let addrs = [
        doomed_node.as_ref().unwrap().addr.clone(),
        survivor_node.addr.clone(),
    ];
    let store = Db::open(&url).await;
    let pg = store.0.clone().unwrap();
    // Four bots whose only server is node 0 (they go with it), four on node 1.
    const EACH: usize = 4;
    let mut keys = Vec::new();
    for i in 0..2 * EACH {
        keys.push(register(&addrs[i / EACH], i).await);
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let tally = Arc::new(Tally::default());
    let mut doomed = tokio::task::JoinSet::new();
    let mut survivors = tokio::task::JoinSet::new();
    let mut heard = Vec::new();
    for (i, key) in keys.into_iter().enumerate() {
        if i < EACH {
            // A lobby of the existing kind, pinned to node 0 (a one-address list).
            let only = Arc::new(vec![addrs[0].clone()]);
            doomed.spawn(lobby(
                only,
                0,
                key,
                i as u64 + 1,
                tally.clone(),
                stop_rx.clone(),
                LobbyStyle::roaming(),
            ));
        } else {
            let h = Arc::new(std::sync::Mutex::new(Vec::new()));
            heard.push(h.clone());
            survivors.spawn(recorded_lobby(
                addrs[1].clone(),
                key,
                i as u64 + 1,
                h,
                stop_rx.clone(),
            ));
        }
    }
    // Play until matches finish (a loaded machine takes longer), then some more.
    let deadline = Instant::now() + Duration::from_secs(60);
    let finished = |pg: &PgStore| pg.matches_in_state(MatchState::Finished).unwrap().len();
    while db(&pg, finished).await == 0 {
        assert!(
            Instant::now() < deadline,
            "no match finished before the kill"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_secs(2)).await;
    let finished_before = db(&pg, finished).await;
    // Node 0's page of a bot whose lobby is on node 1 says it is online there (bots are
    // registered in order: the fifth is the first survivor).
    let page = tokio::task::spawn_blocking({
        let addr = addrs[0].clone();
        move || get_page(&addr, &format!("/ladder/bots/{}", EACH + 1))
    })
    .await
    .unwrap();
    assert!(
        page.contains("Online: its lobby is open on another node of this ladder."),
        "{page}"
    );
    // SIGKILL node 0, and its bots with it.
    let killed = Instant::now();
    {
        let mut node = doomed_node.take().unwrap();
        node.child.kill().unwrap();
        node.child.wait().unwrap();
    }
    doomed.abort_all();
    println!("killed node 0 (the matchmaker's) after {finished_before} finished matches");
    // Play on until every survivor played a match that finished after being free (a match that
    // lost its doomed opponent plays on against the server's bot first), at most 90 s.
    let deadline = Instant::now() + Duration::from_secs(90);
    loop {
        tokio::time::sleep(Duration::from_millis(200)).await;
        let all = heard
            .iter()
            .all(|h| free_and_next(&h.lock().unwrap(), killed).1.is_some());
        if all || Instant::now() > deadline {
            break;
        }
    }
    stop_tx.send(true).unwrap();
    drain(&mut survivors, "the survivors' lobbies did not drain").await;
    await_no_open_matches(&pg).await;
    drop(survivor_node);

    let records = db(&pg, ended_matches).await;
    let ledger = || {
        records
            .iter()
            .map(|m| {
                let seats: Vec<i64> = m.seats.iter().map(|s| s.version.0).collect();
                format!(
                    "match {} {:?} seats {seats:?} created {} ended {:?}: {}",
                    m.id,
                    m.state,
                    m.created_ms,
                    m.ended_ms,
                    m.reason.as_deref().unwrap_or("")
                )
            })
            .collect::<Vec<_>>()
            .join("\n")
    };
    // Every survivor was invited to a match that finished within 5 s of having an opponent: of
    // being free itself and another survivor being free too (the doomed bots are gone, and a
    // survivor whose match lost its opponent plays on against the server's bot first).
    let heard: Vec<Vec<Heard>> = heard.iter().map(|h| h.lock().unwrap().clone()).collect();
    let times: Vec<(Instant, Option<Instant>)> =
        heard.iter().map(|h| free_and_next(h, killed)).collect();
    for (i, h) in heard.iter().enumerate() {
        let (free, next) = times[i];
        let paired = times
            .iter()
            .enumerate()
            .filter(|&(j, _)| j != i)
            .map(|(_, &(other, _))| free.max(other))
            .min()
            .unwrap();
        let next =
            next.unwrap_or_else(|| panic!("survivor {i} never played again: {h:?}\n{}", ledger()));
        let waited = next.saturating_duration_since(paired);
        println!("survivor {i}: invited {waited:?} after it had an opponent");
        assert!(
            waited <= Duration::from_secs(5),
            "survivor {i} waited {waited:?}: {h:?}\n{}",
            ledger()
        );
        // Each end is heard once.
        let mut ends: Vec<i64> = h
            .iter()
            .filter_map(|x| match x {
                Heard::Ended(_, id, _) => Some(*id),
                _ => None,
            })
            .collect();
        let all = ends.len();
        ends.dedup();
        assert_eq!(ends.len(), all, "survivor {i} heard an end twice: {h:?}");
    }
    // No bot is charged a no-show; every finished match of a survivor reached it.
    assert_no_no_show(&records);
    let survivor_versions: Vec<_> = {
        let all: Vec<_> = records
            .iter()
            .flat_map(|m| m.seats.iter().map(|s| s.version))
            .collect();
        let mut v = all.clone();
        v.sort_by_key(|v| v.0);
        v.dedup();
        v.into_iter().rev().take(EACH).collect()
    };
    for m in records.iter().filter(|m| m.state == MatchState::Finished) {
        let theirs = m
            .seats
            .iter()
            .filter(|s| survivor_versions.contains(&s.version))
            .count();
        let told = heard
            .iter()
            .filter(|h| {
                h.iter()
                    .any(|x| matches!(x, Heard::Ended(_, id, true) if *id == m.id.0))
            })
            .count();
        assert_eq!(
            told, theirs,
            "match {} ended finished; its survivors heard {told} of {theirs}",
            m.id
        );
    }
    // Ratings equal a full recompute.
    println!("maumau ladder rerate --store: {}", rerate(&url));
    drop(store);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invitation_past_its_join_deadline_is_not_delivered() {
    use prost::Message as _;
    let Some(url) = tokio::task::spawn_blocking(fresh_store_url).await.unwrap() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let node = start_node(&url, tmp.path(), 0);
    let key = register(&node.addr, 0).await;
    let store = Db::open(&url).await;
    let pg = store.0.clone().unwrap();
    // Queued while the lobby was away: one invitation whose deadline passed (a lobby reopened
    // after a restart), one still open.
    let invitation = |id: i64, deadline: i64| {
        pb::LobbyResponse {
            kind: Some(pb::lobby_response::Kind::Invitation(pb::Invitation {
                ladder_match_id: id,
                join_deadline_unix_ms: deadline as u64,
                ..Default::default()
            })),
        }
        .encode_to_vec()
    };
    let version = maumau_ladder::VersionId(1);
    let posted = |payload| maumau_ladder::store::Posted {
        version,
        payload,
        end_of: None,
    };
    let events = vec![
        posted(invitation(901, now_ms() - 60_000)),
        posted(invitation(902, now_ms() + 60_000)),
    ];
    db(&pg, move |pg| pg.post_events(&events).unwrap()).await;
    let mut client = LadderServiceClient::connect(node.addr.clone())
        .await
        .unwrap();
    let (tx, rx) = mpsc::channel(4);
    tx.send(pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: String::new(),
            max_matches: 1,
            profiles: vec!["classic".into()],
            seats: vec![2],
        })),
    })
    .await
    .unwrap();
    let mut inbound = client
        .lobby(with_bearer(ReceiverStream::new(rx), &key))
        .await
        .unwrap()
        .into_inner();
    let invited = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let m = inbound.message().await.unwrap().unwrap();
            if let Some(pb::lobby_response::Kind::Invitation(i)) = m.kind {
                return i.ladder_match_id;
            }
        }
    })
    .await
    .expect("the open invitation is delivered");
    assert_eq!(invited, 902, "the expired invitation was dropped");
    drop(tx);
    drop(store);
}

/// Two nodes with the heuristic house bot (2-seat classic; started together, they register it
/// once between them) and one real bot's lobby on node 1, alone on the ladder but for the house
/// bot, recording what it hears until told to stop.
struct HouseLadder {
    nodes: Vec<Node>,
    lobby: tokio::task::JoinHandle<()>,
    stop: watch::Sender<bool>,
    heard: Arc<std::sync::Mutex<Vec<Heard>>>,
}

async fn house_ladder(url: &str, dir: &Path) -> HouseLadder {
    let log = std::env::var("MAUMAU_TEST_NODE_LOG").unwrap_or_else(|_| "warn".into());
    let config = "ladder_house_bots = [\"heuristic\"]\n\
                  [[ladder_formats]]\nprofile = \"classic\"\nseats = 2\nweight = 1.0\n";
    let nodes: Vec<Node> = std::thread::scope(|s| {
        let started: Vec<_> = (0..2)
            .map(|i| {
                let log = &log;
                s.spawn(move || start_node_configured(url, dir, i, log, config))
            })
            .collect();
        started.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let key = register(&nodes[1].addr, 0).await;
    let heard = Arc::new(std::sync::Mutex::new(Vec::new()));
    let (stop, stop_rx) = watch::channel(false);
    let lobby = tokio::spawn(recorded_lobby(
        nodes[1].addr.clone(),
        key,
        1,
        heard.clone(),
        stop_rx,
    ));
    HouseLadder {
        nodes,
        lobby,
        stop,
        heard,
    }
}

impl HouseLadder {
    /// Stops the lobby and waits (at most a minute) for it to drain.
    async fn drain(&mut self) {
        self.stop.send(true).unwrap();
        tokio::time::timeout(Duration::from_secs(60), &mut self.lobby)
            .await
            .expect("the lobby drains")
            .unwrap();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn house_bots_fill_tables_on_a_shared_ladder() {
    let Some(url) = tokio::task::spawn_blocking(fresh_store_url).await.unwrap() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let mut ladder = house_ladder(&url, tmp.path()).await;
    let deadline = Instant::now() + Duration::from_secs(60);
    let finished = |h: &[Heard]| {
        h.iter()
            .filter(|x| matches!(x, Heard::Ended(_, _, true)))
            .count()
    };
    while finished(&ladder.heard.lock().unwrap()) < 2 {
        assert!(
            Instant::now() < deadline,
            "no rated match against the house bot: {:?}",
            ladder.heard.lock().unwrap()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    ladder.drain().await;
    let nodes = &ladder.nodes;
    let mut c = LadderServiceClient::connect(nodes[0].addr.clone())
        .await
        .unwrap();
    let board = c
        .get_leaderboard(pb::GetLeaderboardRequest {
            profile: "classic".into(),
            ..Default::default()
        })
        .await
        .unwrap()
        .into_inner();
    let house: Vec<_> = board.standings.iter().filter(|s| s.house).collect();
    assert_eq!(house.len(), 1, "one house bot: {board:?}");
    assert!(house[0].matches >= 2, "{board:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fifteen_second_database_outage_under_play_loses_nothing() {
    // This test stops its database, so it starts one of its own; it runs where the others do.
    if std::env::var("MAUMAU_TEST_POSTGRES").is_err() {
        eprintln!("ladder_nodes: outage-under-play test SKIPPED, MAUMAU_TEST_POSTGRES is not set");
        return;
    }
    let (url, pg_dir) = own_postgres();
    let tmp = tempfile::tempdir().unwrap();
    let log = std::env::var("MAUMAU_TEST_NODE_LOG").unwrap_or_else(|_| "warn".into());
    let config = "[[ladder_formats]]\nprofile = \"classic\"\nseats = 2\nweight = 1.0\n";
    let first = start_node_configured(&url, tmp.path(), 0, &log, config);
    let nodes = [
        first,
        start_node_configured(&url, tmp.path(), 1, &log, config),
    ];
    let mut keys = Vec::new();
    for i in 0..4 {
        keys.push(register(&nodes[i % 2].addr, i).await);
    }
    let (stop_tx, stop_rx) = watch::channel(false);
    let mut lobbies = tokio::task::JoinSet::new();
    let mut heard = Vec::new();
    for (i, key) in keys.into_iter().enumerate() {
        let h = Arc::new(std::sync::Mutex::new(Vec::new()));
        heard.push(h.clone());
        lobbies.spawn(recorded_lobby(
            nodes[i % 2].addr.clone(),
            key,
            i as u64 + 1,
            h,
            stop_rx.clone(),
        ));
    }
    tokio::time::sleep(Duration::from_secs(4)).await;
    postgres_temp("pause", &pg_dir);
    for n in &nodes {
        await_health(&n.addr, ServingStatus::NotServing).await;
    }
    tokio::time::sleep(Duration::from_secs(15)).await;
    postgres_temp("resume", &pg_dir);
    let back = Instant::now();
    for n in &nodes {
        await_health(&n.addr, ServingStatus::Serving).await;
    }
    // Every bot plays a match that finishes after the database is back.
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let done = heard.iter().all(|h| {
            h.lock()
                .unwrap()
                .iter()
                .any(|x| matches!(x, Heard::Ended(at, _, true) if *at > back))
        });
        if done {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "a bot played no match after the outage: {:?}",
            heard
                .iter()
                .map(|h| h.lock().unwrap().clone())
                .collect::<Vec<_>>()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    stop_tx.send(true).unwrap();
    drain(&mut lobbies, "the lobbies did not drain").await;
    let store = Db::open(&url).await;
    let pg = store.0.clone().unwrap();
    await_no_open_matches(&pg).await;
    // Nothing lost: every match ended; nobody was charged a no-show; every finished match
    // reached every one of its bots; the ratings equal a recompute.
    let records = db(&pg, ended_matches).await;
    assert_no_no_show(&records);
    for m in records.iter().filter(|m| m.state == MatchState::Finished) {
        let told = heard
            .iter()
            .filter(|h| {
                h.lock()
                    .unwrap()
                    .iter()
                    .any(|x| matches!(x, Heard::Ended(_, id, true) if *id == m.id.0))
            })
            .count();
        assert_eq!(
            told,
            m.seats.len(),
            "match {} reached {told} of its bots",
            m.id
        );
    }
    drop(nodes);
    println!(
        "{} matches; maumau ladder rerate --store: {}",
        records.len(),
        rerate(&url)
    );
    drop(store);
    postgres_temp("stop", &pg_dir);
}

/// Each node keeps the tables it hosted: another node's pages link to the hosting node's viewer
/// and replay (its address), its replay address redirects there, and once the hosting node has
/// stopped they name it instead of linking to it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn another_nodes_match_links_to_the_node_that_hosted_it() {
    let Some(url) = tokio::task::spawn_blocking(fresh_store_url).await.unwrap() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    // One real bot against the house bot, until a finished match was hosted by each node.
    let mut ladder = house_ladder(&url, tmp.path()).await;
    let store = Db::open(&url).await;
    let pg = store.0.clone().unwrap();
    let deadline = Instant::now() + Duration::from_secs(90);
    let hosted = loop {
        let hosted = db(&pg, |pg| {
            let mut by_node: Vec<(MatchId, maumau_ladder::store::Host)> = Vec::new();
            for m in pg.matches_in_state(MatchState::Finished).unwrap() {
                let host = pg
                    .host_of(m.id)
                    .unwrap()
                    .expect("a finished match had a node");
                if !by_node.iter().any(|(_, h)| h.node == host.node) {
                    by_node.push((m.id, host));
                }
            }
            by_node
        })
        .await;
        if hosted.len() == 2 {
            break hosted;
        }
        assert!(
            Instant::now() < deadline,
            "no finished match on each node: {hosted:?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    ladder.drain().await;
    let nodes = &mut ladder.nodes;
    let index = |nodes: &[Node], host: &maumau_ladder::store::Host| {
        nodes
            .iter()
            .position(|n| n.addr == host.address)
            .unwrap_or_else(|| panic!("no node at {}", host.address))
    };
    for (id, host) in &hosted {
        let at = index(nodes, host);
        let other = 1 - at;
        let record = db(&pg, {
            let id = *id;
            move |pg| pg.match_record(id).unwrap()
        })
        .await;
        let server_id = record.server_match_id.clone().unwrap();
        // On its own node: the viewer embedded, the replay served.
        let own = get_page(&nodes[at].addr, &format!("/ladder/matches/{id}"));
        assert!(own.starts_with("HTTP/1.1 200"), "{own}");
        assert!(!own.contains("hosted by node"), "{own}");
        assert!(own.contains("<iframe"), "{own}");
        // On the other node: where it was hosted, and links there.
        let page = get_page(&nodes[other].addr, &format!("/ladder/matches/{id}"));
        assert!(page.starts_with("HTTP/1.1 200"), "{page}");
        assert!(
            page.contains(&format!("hosted by node {}", host.node.0)),
            "{page}"
        );
        let there = &host.address;
        for link in [
            format!("href=\"{there}/ladder/matches/{id}\""),
            format!("href=\"{there}/ladder/replays/{id}\""),
            format!("href=\"{there}/matches/{server_id}/view\""),
        ] {
            assert!(page.contains(&link), "{link} missing from {page}");
        }
        assert!(
            !page.contains("<iframe"),
            "another origin is not framed: {page}"
        );
        let replay = get_page(&nodes[other].addr, &format!("/ladder/replays/{id}"));
        assert!(replay.starts_with("HTTP/1.1 307"), "{replay}");
        assert!(
            replay
                .to_ascii_lowercase()
                .contains(&format!("location: {there}/ladder/replays/{id}\r\n")),
            "{replay}"
        );
        let file = get_page(&nodes[at].addr, &format!("/ladder/replays/{id}"));
        assert!(
            file.starts_with("HTTP/1.1 200"),
            "{}",
            &file[..200.min(file.len())]
        );
        assert!(file.contains(&format!("ladder-match-{id}.replay")));
    }
    // The host of the first match stops for good: named, no longer linked.
    let (id, host) = &hosted[0];
    let at = index(nodes, host);
    let other = 1 - at;
    nodes[at].child.kill().unwrap();
    nodes[at].child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(30);
    let page = loop {
        let page = get_page(&nodes[other].addr, &format!("/ladder/matches/{id}"));
        if page.contains("which stopped") {
            break page;
        }
        assert!(Instant::now() < deadline, "still linked: {page}");
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    assert!(
        !page.contains(&format!("href=\"{}", host.address)),
        "{page}"
    );
    let replay = get_page(&nodes[other].addr, &format!("/ladder/replays/{id}"));
    assert!(replay.starts_with("HTTP/1.1 404"), "{replay}");
    assert!(
        replay.contains(&format!("hosted by node {}, which stopped", host.node.0)),
        "{replay}"
    );
    drop(store);
}

/// The profile of the first invitation of a lobby opened on `addr` by version `key`, which offers
/// classic and penalty-points at 2 seats. The lobby stays open in the returned task.
async fn first_invitation(addr: &str, key: &str) -> String {
    let mut c = LadderServiceClient::connect(addr.to_string())
        .await
        .unwrap();
    let (tx, rx) = mpsc::channel(4);
    tx.send(pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: key.into(),
            max_matches: 1,
            profiles: vec!["classic".into(), "penalty-points".into()],
            seats: vec![2],
        })),
    })
    .await
    .unwrap();
    let mut stream = c.lobby(ReceiverStream::new(rx)).await.unwrap().into_inner();
    loop {
        let message = tokio::time::timeout(Duration::from_secs(60), stream.message())
            .await
            .expect("an invitation within a minute")
            .unwrap()
            .expect("the lobby stays open");
        if let Some(pb::lobby_response::Kind::Invitation(i)) = message.kind {
            drop(tx);
            return i.profile;
        }
    }
}

/// Formats an operator sets through one node are the matchmaker's on another, and every node's
/// pages show them: node 0 starts first and runs the matchmaker; SetFormats goes to node 1 and
/// the lobbies open there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn formats_set_on_one_node_are_made_by_the_matchmaker_on_another() {
    let Some(url) = tokio::task::spawn_blocking(fresh_store_url).await.unwrap() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let first = start_node(&url, tmp.path(), 0);
    // Node 0 takes the matchmaker's lock at its first round, before node 1 exists.
    tokio::time::sleep(Duration::from_millis(500)).await;
    let second = start_node(&url, tmp.path(), 1);
    let mut c = LadderServiceClient::connect(second.addr.clone())
        .await
        .unwrap();
    c.set_formats(pb::SetFormatsRequest {
        formats: vec![pb::LadderFormat {
            profile: "penalty-points".into(),
            seats: 2,
            weight: 1.0,
        }],
    })
    .await
    .unwrap();
    let (a, b) = (
        register(&second.addr, 0).await,
        register(&second.addr, 1).await,
    );
    let (pa, pb_) = tokio::join!(
        first_invitation(&second.addr, &a),
        first_invitation(&second.addr, &b)
    );
    assert_eq!(
        (pa.as_str(), pb_.as_str()),
        ("penalty-points", "penalty-points")
    );
    // Both nodes' leaderboards say so, and show that profile first.
    for node in [&first, &second] {
        let addr = node.addr.clone();
        let board = tokio::task::spawn_blocking(move || get_page(&addr, "/ladder"))
            .await
            .unwrap();
        assert!(
            board.contains("Tables made: <strong>penalty-points</strong> at 2 seats."),
            "{board}"
        );
        assert!(
            board.contains("profile <strong>penalty-points</strong>"),
            "{board}"
        );
    }
    drop(first);
}

/// A ban through one node reaches the banned version's lobby open on another, as a notice.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ban_through_one_node_is_announced_on_a_lobby_on_another() {
    let Some(url) = tokio::task::spawn_blocking(fresh_store_url).await.unwrap() else {
        return;
    };
    let tmp = tempfile::tempdir().unwrap();
    let nodes = [
        start_node(&url, tmp.path(), 0),
        start_node(&url, tmp.path(), 1),
    ];
    let key = register(&nodes[1].addr, 0).await;
    let mut c = LadderServiceClient::connect(nodes[1].addr.clone())
        .await
        .unwrap();
    let (tx, rx) = mpsc::channel(4);
    tx.send(pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: key,
            max_matches: 1,
            profiles: vec!["classic".into()],
            seats: vec![2],
        })),
    })
    .await
    .unwrap();
    let mut lobby = c.lobby(ReceiverStream::new(rx)).await.unwrap().into_inner();
    let mut next = async || {
        tokio::time::timeout(Duration::from_secs(60), lobby.message())
            .await
            .expect("a lobby message within a minute")
            .unwrap()
            .expect("the lobby stays open")
            .kind
    };
    let version = loop {
        if let Some(pb::lobby_response::Kind::Welcome(w)) = next().await {
            break w.version_id;
        }
    };
    let mut operator = LadderServiceClient::connect(nodes[0].addr.clone())
        .await
        .unwrap();
    operator
        .ban(pb::BanRequest {
            target: Some(pb::SanctionTarget {
                kind: pb::SanctionTargetKind::Version as i32,
                id: version,
            }),
            reason: "cheating".into(),
        })
        .await
        .unwrap();
    let notice = loop {
        if let Some(pb::lobby_response::Kind::Notice(n)) = next().await {
            break n;
        }
    };
    assert_eq!(notice.status(), pb::VersionStatus::Banned);
    assert_eq!(notice.reason, "cheating");
    drop(tx);
}
