//! End to end: the Rust bot SDK's runner plays real matches, and resumes after its connection
//! is cut in the middle of a match.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::{TestServer, config};
use maumau::pb;
use maumau_bot_sdk::bots::{HeuristicBot, SearchBot};
use maumau_bot_sdk::runner::{RunOptions, run};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

async fn create(
    server: &TestServer,
    seats: u32,
    remote: u32,
    seed: u64,
) -> pb::CreateMatchResponse {
    let bots = (remote..seats)
        .map(|s| pb::SeatBot {
            seat: s,
            kind: pb::BotKind::Random as i32,
        })
        .collect();
    server
        .matches()
        .await
        .create_match(pb::CreateMatchRequest {
            config: Some(config(pb::Profile::Classic, seats)),
            seed: Some(seed),
            bots,
            ..Default::default()
        })
        .await
        .expect("create")
        .into_inner()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_bots_play_a_full_match() {
    let server = TestServer::start().await;
    let created = create(&server, 4, 2, 3).await;
    let url = server.url();
    let t0 = created.seat_tokens[0].token.clone();
    let t1 = created.seat_tokens[1].token.clone();
    let u0 = url.clone();
    let a =
        tokio::spawn(async move { run(&mut HeuristicBot::new(1), &RunOptions::new(u0, t0)).await });
    let b = tokio::spawn(async move {
        run(
            &mut SearchBot::with_iterations(2, 50),
            &RunOptions::new(url, t1),
        )
        .await
    });
    let ra = a.await.expect("task").expect("heuristic bot report");
    let rb = b.await.expect("task").expect("search bot report");
    assert_eq!(ra, rb);
    assert_eq!(ra.status(), pb::MatchStatus::Finished);
    assert_eq!(ra.seats[0].timeouts + ra.seats[1].timeouts, 0);
    assert_eq!(ra.seats[0].rejections + ra.seats[1].rejections, 0);
}

/// The runner asks for EVENT_DELIVERY_WITH_PROMPT unless told otherwise, and for
/// EVENT_DELIVERY_PER_STEP when the bot opts out; either way it reads prompts (and answers) out
/// of batches, so the match plays out with no timeout and no refusal.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sdk_bots_play_a_full_match_with_each_delivery() {
    let server = TestServer::start().await;
    for (opt_out, asked) in [
        (false, pb::EventDelivery::WithPrompt),
        (true, pb::EventDelivery::PerStep),
    ] {
        let created = create(&server, 4, 2, 3).await;
        let mut tasks = Vec::new();
        for t in created.seat_tokens {
            let mut options = RunOptions::new(server.url(), t.token);
            if opt_out {
                options = options.with_events_as_they_happen();
            }
            assert_eq!(options.event_delivery(), asked);
            tasks.push(tokio::spawn(async move {
                run(&mut HeuristicBot::new(u64::from(t.seat)), &options).await
            }));
        }
        let mut reports = Vec::new();
        for t in tasks {
            reports.push(t.await.expect("task").expect("a report"));
        }
        assert_eq!(reports[0], reports[1]);
        let r = &reports[0];
        assert_eq!(r.status(), pb::MatchStatus::Finished, "{asked:?}");
        assert!(r.actions > 0);
        assert!(
            r.seats
                .iter()
                .all(|s| s.timeouts == 0 && s.rejections == 0 && !s.gave_up),
            "{asked:?}: {r:?}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_wrong_token_is_refused_at_once() {
    let server = TestServer::start().await;
    let err = run(
        &mut HeuristicBot::new(1),
        &RunOptions::new(server.url(), "0".repeat(32)),
    )
    .await
    .expect_err("refused");
    assert!(err.to_string().contains("BAD_TOKEN"), "{err}");
}

/// A TCP proxy that cuts its first connection after `cut_after` bytes from the server.
async fn flaky_proxy(
    upstream: std::net::SocketAddr,
    cut_after: usize,
) -> (std::net::SocketAddr, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let connections = Arc::new(AtomicUsize::new(0));
    let count = connections.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let n = count.fetch_add(1, Ordering::SeqCst);
            let limit = if n == 0 { cut_after } else { usize::MAX };
            tokio::spawn(pipe(client, upstream, limit));
        }
    });
    (addr, connections)
}

async fn pipe(client: TcpStream, upstream: std::net::SocketAddr, limit: usize) {
    let Ok(server) = TcpStream::connect(upstream).await else {
        return;
    };
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut cr, mut cw) = client.into_split();
    let (mut sr, mut sw) = server.into_split();
    let up = tokio::spawn(async move {
        let mut buf = [0u8; 8192];
        while let Ok(n) = cr.read(&mut buf).await {
            if n == 0 || sw.write_all(&buf[..n]).await.is_err() {
                break;
            }
        }
    });
    let mut sent = 0usize;
    let mut buf = [0u8; 8192];
    while let Ok(n) = sr.read(&mut buf).await {
        if n == 0 || sent + n > limit || cw.write_all(&buf[..n]).await.is_err() {
            break;
        }
        sent += n;
    }
    up.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_runner_resumes_after_a_cut_connection() {
    let server = TestServer::start().await;
    let created = create(&server, 2, 1, 9).await;
    let (proxy, connections) = flaky_proxy(server.addr, 6_000).await;
    let options = RunOptions::new(
        format!("http://{proxy}"),
        created.seat_tokens[0].token.clone(),
    );
    let report = run(&mut HeuristicBot::new(5), &options)
        .await
        .expect("a report after resuming");
    assert_eq!(report.status(), pb::MatchStatus::Finished);
    assert!(
        connections.load(Ordering::SeqCst) >= 2,
        "the first connection was cut"
    );
    // Nothing was lost: the replay verifies and holds every action.
    let mut matches = server.matches().await;
    let replay = matches
        .get_replay(pb::GetReplayRequest {
            match_id: created.match_id,
        })
        .await
        .expect("replay")
        .into_inner()
        .replay
        .expect("replay");
    let verdict = matches
        .verify_replay(pb::VerifyReplayRequest {
            replay: Some(replay),
        })
        .await
        .expect("verify")
        .into_inner();
    assert!(verdict.valid && verdict.finished);
}
