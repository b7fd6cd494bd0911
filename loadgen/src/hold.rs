//! `--hold N`: creates N matches whose seats never join (the server is started with a long join
//! timeout, so they stay WAITING) and reads how much the server's resident memory grew.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;
use tokio::time::Instant;

use crate::procs::ChildServer;

/// Longest wait for one CreateMatch.
const TIMEOUT: Duration = Duration::from_secs(10);
/// CreateMatch calls in flight at once.
const IN_FLIGHT: usize = 32;
/// How long the server is left alone before its memory is read.
const SETTLE: Duration = Duration::from_millis(500);

/// What holding N matches cost.
#[derive(Debug)]
pub(crate) struct HoldResult {
    /// Matches asked for.
    pub(crate) requested: usize,
    /// Matches created (all WAITING).
    pub(crate) created: usize,
    /// Server RSS before the first match, after half, after all, in kB.
    pub(crate) rss_kb: [u64; 3],
    /// Server peak RSS at the end, kB.
    pub(crate) peak_kb: u64,
    /// Seconds spent creating.
    pub(crate) seconds: f64,
    /// Server CPU seconds spent creating.
    pub(crate) server_cpu: f64,
    /// Status of the last match created, read back with GetMatch.
    pub(crate) last_status: String,
    /// The first failure, if any.
    pub(crate) first_error: Option<String>,
}

/// Creates `count` matches with `IN_FLIGHT` calls at a time; returns how many succeeded, the
/// last match id, and the first error.
async fn create_many(
    client: &MatchServiceClient<tonic::transport::Channel>,
    count: usize,
) -> (usize, Option<String>, Option<String>) {
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..IN_FLIGHT)
        .map(|w| {
            let mut client = client.clone();
            let next = next.clone();
            tokio::spawn(async move {
                let (mut made, mut last, mut error) = (0, None, None);
                for _ in 0..count {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    if i >= count {
                        break;
                    }
                    let req = pb::CreateMatchRequest {
                        config: Some(pb::MatchConfig {
                            profile: pb::Profile::Classic as i32,
                            seats: crate::game::SEATS as u32,
                            calls: pb::CallsMode::Enforce as i32,
                            ..Default::default()
                        }),
                        seed: Some((w * count + i) as u64),
                        label: "loadgen hold".into(),
                        ..Default::default()
                    };
                    match tokio::time::timeout(TIMEOUT, client.create_match(req)).await {
                        Ok(Ok(r)) => {
                            made += 1;
                            last = Some(r.into_inner().match_id);
                        }
                        Ok(Err(s)) => {
                            error = Some(format!("CreateMatch: {s}"));
                            break;
                        }
                        Err(_) => {
                            error = Some("CreateMatch took over 10 s".into());
                            break;
                        }
                    }
                }
                (made, last, error)
            })
        })
        .collect();
    let (mut made, mut last, mut error) = (0, None, None);
    for w in workers {
        if let Ok((m, l, e)) = w.await {
            made += m;
            last = last.or(l);
            error = error.or(e);
        }
    }
    (made, last, error)
}

/// Holds `n` open matches on `server` and measures its memory.
pub(crate) async fn hold(server: &ChildServer, n: usize) -> Result<HoldResult, String> {
    let mut client = MatchServiceClient::new(crate::connect(&server.url(), 1).await?.remove(0));
    tokio::time::sleep(SETTLE).await;
    let rss0 = server.rss_kb();
    let cpu0 = server.cpu_seconds();
    let started = Instant::now();
    let half = n / 2;
    let (made1, last1, err1) = create_many(&client, half).await;
    tokio::time::sleep(SETTLE).await;
    let rss1 = server.rss_kb();
    let (made2, last2, err2) = if err1.is_none() {
        create_many(&client, n - half).await
    } else {
        (0, None, None)
    };
    let seconds = started.elapsed().as_secs_f64() - SETTLE.as_secs_f64();
    let server_cpu = server.cpu_seconds() - cpu0;
    tokio::time::sleep(SETTLE).await;
    let rss2 = server.rss_kb();
    let last_status = match last2.or(last1) {
        Some(id) => {
            let r = tokio::time::timeout(
                TIMEOUT,
                client.get_match(pb::GetMatchRequest { match_id: id }),
            )
            .await;
            match r {
                Ok(Ok(r)) => r
                    .into_inner()
                    .r#match
                    .map(|m| m.status().as_str_name().to_string())
                    .unwrap_or_default(),
                Ok(Err(s)) => format!("GetMatch: {s}"),
                Err(_) => "GetMatch timed out".into(),
            }
        }
        None => "no match was created".into(),
    };
    Ok(HoldResult {
        requested: n,
        created: made1 + made2,
        rss_kb: [rss0, rss1, rss2],
        peak_kb: server.peak_rss_kb(),
        seconds,
        server_cpu,
        last_status,
        first_error: err1.or(err2),
    })
}
