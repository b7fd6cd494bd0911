//! End to end: one HTTP/2 connection carries as many streams as a client opens (a bot host may
//! run hundreds of seats over one connection), and every stream gets its feed.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs)]

mod common;

use common::{Seat, TestServer, config, create_match, play_to_end};
use maumau::pb;
use maumau::pb::play_service_client::PlayServiceClient;
use pb::server_message::Kind;
use tokio_stream::StreamExt;

/// More than hyper's default limit of concurrent streams per connection (200).
const STREAMS: usize = 256;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hundreds_of_streams_share_one_connection() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = create_match(
        &mut matches,
        pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                options: Some(pb::ProfileOptions {
                    single_round: true,
                    ..Default::default()
                }),
                ..config(pb::Profile::Classic, 2)
            }),
            seed: Some(3),
            ..Default::default()
        },
    )
    .await;
    // Every stream below goes over this one connection.
    let channel = server.channel().await;
    let mut feeds = Vec::new();
    for _ in 0..STREAMS {
        let mut client = PlayServiceClient::new(channel.clone());
        let opened = client.watch(pb::WatchRequest {
            token: created.spectator_token.clone(),
            ..Default::default()
        });
        let feed = tokio::time::timeout(std::time::Duration::from_secs(10), opened)
            .await
            .expect("the server accepts another stream on the connection")
            .expect("watch")
            .into_inner();
        feeds.push(feed);
    }
    // Every feed is read as it comes (a client that leaves hundreds of streams unread is cut
    // off by its own HTTP/2 library, which limits the small frames it buffers).
    let readers: Vec<_> = feeds
        .into_iter()
        .map(|mut feed| {
            tokio::spawn(async move {
                let mut kinds = Vec::new();
                while let Some(item) = feed.next().await {
                    kinds.push(item.expect("no error").message.and_then(|m| m.kind));
                }
                kinds
            })
        })
        .collect();
    // The seats play over the same connection; every spectator sees it all, then the end.
    let mut client = PlayServiceClient::new(channel.clone());
    let seat0 = Seat::join(&mut client, &created.seat_tokens[0].token, None).await;
    let seat1 = Seat::join(&mut client, &created.seat_tokens[1].token, None).await;
    let (a, b) = tokio::join!(play_to_end(seat0, 1), play_to_end(seat1, 2));
    assert_eq!(a, b);
    for reader in readers {
        let kinds = reader.await.expect("a reader");
        assert!(
            matches!(kinds.first(), Some(Some(Kind::Welcome(_)))),
            "Welcome first"
        );
        assert!(
            kinds.iter().any(|k| matches!(k, Some(Kind::Event(_)))),
            "the events"
        );
        let Some(Some(Kind::Finished(f))) = kinds.last() else {
            panic!("the feed ends with MatchFinished, got {:?}", kinds.last())
        };
        assert_eq!(f.report.as_ref(), Some(&a));
    }
}

/// A table whose seats all play through one connection runs on that connection's task. When the
/// connection goes away in the middle of the match, the table goes on by itself: both seats
/// rejoin over a new connection and play to the end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_match_outlives_the_connection_both_seats_shared() {
    let server = TestServer::start().await;
    let mut matches = server.matches().await;
    let created = common::relaxed_classic_pair(&mut matches, 11).await;
    let tokens: Vec<String> = created
        .seat_tokens
        .iter()
        .map(|t| t.token.clone())
        .collect();
    {
        let channel = server.channel().await;
        let mut client = PlayServiceClient::new(channel.clone());
        let mut s0 = Seat::join(&mut client, &tokens[0], None).await;
        let mut s1 = Seat::join(&mut client, &tokens[1], None).await;
        // Whoever is to move acts once, so the table has run on the shared connection.
        let (mover, prompt) = tokio::select! {
            p = s0.required_prompt() => (&mut s0, p),
            p = s1.required_prompt() => (&mut s1, p),
        };
        mover
            .send_action(prompt.state_id, common::default_index(&prompt), 1)
            .await;
        let accepted = mover
            .until(|m| match &m.kind {
                Some(Kind::Accepted(a)) => Some(a.request_id),
                Some(Kind::Rejected(r)) => panic!("refused: {r:?}"),
                _ => None,
            })
            .await;
        assert_eq!(accepted, 1);
        // Every handle on the connection goes here: the connection closes.
    }
    let channel = server.channel().await;
    let mut client = PlayServiceClient::new(channel);
    let s0 = Seat::join(&mut client, &tokens[0], None).await;
    let s1 = Seat::join(&mut client, &tokens[1], None).await;
    let (a, b) = tokio::join!(play_to_end(s0, 5), play_to_end(s1, 6));
    assert_eq!(a, b, "both seats get the same report");
    assert_eq!(
        a.status,
        pb::MatchStatus::Finished as i32,
        "the match was played to the end"
    );
}
