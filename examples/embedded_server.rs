//! The game server embedded in another Rust program: it serves on a free loopback port, creates
//! a match of built-in bots over gRPC, watches it to its end, prints the result and shuts down.
//!
//! ```sh
//! cargo run --example embedded_server
//! ```
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]

use std::io::Write as _;

use maumau::pb::match_service_client::MatchServiceClient;
use maumau::pb::play_service_client::PlayServiceClient;
use maumau::pb::{self, server_message::Kind};
use maumau_server::ServerConfig;
use tokio_stream::StreamExt as _;

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    // The server: a library call on a listener of ours, stopped through a oneshot. With no
    // `archive` set it keeps finished matches in memory (not durable); for a durable one, as
    // `maumau serve` does: `archive: Some(Arc::new(maumau_archive::SqliteArchive::new(dir)))`.
    let data = tempfile::tempdir()?;
    let config = ServerConfig {
        data_dir: data.path().to_path_buf(),
        ..ServerConfig::default()
    };
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let url = format!("http://{}", listener.local_addr()?);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let server = tokio::spawn(maumau_server::run(listener, config, async {
        let _ = stopped.await;
    }));

    // A classic match of three built-in bots, one round, created over gRPC like any client does.
    let mut matches = MatchServiceClient::connect(url.clone()).await?;
    let kinds = [
        pb::BotKind::Heuristic,
        pb::BotKind::Random,
        pb::BotKind::Random,
    ];
    let created = matches
        .create_match(pb::CreateMatchRequest {
            config: Some(pb::MatchConfig {
                profile: pb::Profile::Classic as i32,
                seats: kinds.len() as u32,
                max_rounds: 1,
                ..Default::default()
            }),
            bots: (0..)
                .zip(kinds)
                .map(|(seat, kind)| pb::SeatBot {
                    seat,
                    kind: kind as i32,
                })
                .collect(),
            ..Default::default()
        })
        .await?
        .into_inner();

    // Watch it as a spectator: the stream ends with MatchFinished and the final report.
    let mut feed = PlayServiceClient::connect(url)
        .await?
        .watch(pb::WatchRequest {
            token: created.spectator_token,
            client_name: "examples/embedded_server.rs".into(),
            ..Default::default()
        })
        .await?
        .into_inner();
    let mut report = None;
    while let Some(response) = feed.next().await {
        if let Some(Kind::Finished(f)) = response?.message.and_then(|m| m.kind) {
            report = f.report;
        }
    }
    let report = report.ok_or("the feed ended without the match's report")?;

    let mut out = std::io::stdout().lock();
    writeln!(
        out,
        "match {}: {:?} after {} actions",
        report.match_id,
        report.status(),
        report.actions
    )?;
    for s in report.result.iter().flat_map(|r| &r.standings) {
        let player = report.players.iter().find(|p| p.seat == s.seat);
        let bot = player.map_or(pb::BotKind::Unspecified, |p| p.bot());
        let (placing, total) = (s.placing, s.total);
        writeln!(
            out,
            "  seat {} ({bot:?}): placing {placing}, total {total}",
            s.seat
        )?;
    }
    drop(out);

    // Shut down: the server finishes what it was doing and returns.
    let _ = stop.send(());
    server.await??;
    Ok(())
}
