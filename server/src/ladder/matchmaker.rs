//! The matchmaker task and the watcher of each ladder match.
//!
//! A ladder match lives in two places: the ladder store (scheduled → running → finished or
//! aborted) and the server's registry (a table task, labelled `ladder match N`). The matchmaker
//! schedules it in the store first, so the store's count of matches in flight always covers every
//! table it created; the watcher then waits for the table to close (its command channel closes
//! when the table task ends, after the report is recorded) and writes the end to the store.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Duration;

use maumau::pb;
use maumau_ladder::health::SeatOutcome;
use maumau_ladder::matchmaking::{MatchmakingConfig, Table, plan_tables};
use maumau_ladder::store::{MatchState, NewMatch};
use maumau_ladder::{Ladder, MatchId, MatchReport, Millis, SeatResult, Store, VersionId};
use tokio::sync::oneshot;

use super::{Hub, check_format, now_ms};
use crate::registry::{self, Start};
use crate::table::Command;

/// The label of a ladder match in the registry, before its ladder id.
pub(crate) const LABEL_PREFIX: &str = "ladder match ";

/// Recent tables the planner avoids repeating.
const RECENT_TABLES: usize = 64;

/// Aborts (unrated, nobody at fault) the matches a previous run left scheduled or running: their
/// tables died with that process.
pub(crate) fn settle_leftovers(
    ladder: &Ladder<dyn Store>,
    now: Millis,
) -> maumau_ladder::Result<()> {
    for state in [MatchState::Scheduled, MatchState::Running] {
        for m in ladder.store().matches_in_state(state)? {
            let outcomes = vec![
                SeatOutcome {
                    joined: true,
                    timeouts: 0,
                };
                m.seats.len()
            ];
            ladder.record_abort(m.id, &outcomes, "the server restarted", now)?;
        }
    }
    Ok(())
}

/// Plans and launches matches whenever woken (a lobby opened, a match ended) or every tick.
pub(crate) async fn run(hub: Arc<Hub>) {
    loop {
        if hub.is_closed() {
            return;
        }
        if let Err(e) = plan_round(&hub).await {
            tracing::warn!(error = %e.message(), "the ladder matchmaker could not plan");
        }
        tokio::select! {
            () = hub.wake.notified() => {}
            () = tokio::time::sleep(hub.settings.tick) => {}
        }
    }
}

async fn plan_round(hub: &Arc<Hub>) -> Result<(), tonic::Status> {
    let lobbies = hub.open_lobbies();
    if lobbies.len() < 2 {
        return Ok(());
    }
    let formats = super::lock(&hub.formats).clone();
    let seed: u64 = rand::random();
    let planned = hub
        .store(move |ladder| {
            let Some(season) = ladder.store().current_season()? else {
                return Ok(Vec::new());
            };
            let now = now_ms();
            let candidates = ladder.candidates(season.id, &lobbies)?;
            let recent = ladder.recent_tables(RECENT_TABLES)?;
            let config = MatchmakingConfig::new(formats);
            let mut out = Vec::new();
            for t in plan_tables(&config, &candidates, &recent, now, seed) {
                let id = ladder.store().schedule_match(
                    &NewMatch {
                        season: season.id,
                        profile: t.profile.clone(),
                        seed: t.seed,
                        rated: true,
                        seats: t.seats.clone(),
                    },
                    now,
                )?;
                out.push((id, t));
            }
            Ok(out)
        })
        .await?;
    for (id, table) in planned {
        launch(hub, id, table).await;
    }
    Ok(())
}

/// Creates the table in the registry, sends the invitations and starts the watcher.
async fn launch(hub: &Arc<Hub>, id: MatchId, table: Table) {
    let created = check_format(&table.profile, table.seats.len() as u8).and_then(|config| {
        hub.registry
            .create(registry::NewMatch {
                config,
                seed: table.seed,
                start: Start::Seed,
                clock: hub.registry.config.default_time_control,
                bots: vec![None; table.seats.len()],
                rated: true,
                label: format!("{LABEL_PREFIX}{id}"),
            })
            .map_err(|s| s.message().to_string())
    });
    let response = match created {
        Ok(r) => r,
        Err(why) => {
            tracing::warn!(ladder_match = %id, error = %why, "could not create a ladder table");
            let outcomes = vec![
                SeatOutcome {
                    joined: true,
                    timeouts: 0,
                };
                table.seats.len()
            ];
            let reason = format!("the server could not create the table: {why}");
            let _ = hub
                .store(move |l| l.record_abort(id, &outcomes, &reason, now_ms()))
                .await;
            return;
        }
    };
    super::lock(&hub.server_ids).insert(id, response.match_id.clone());
    let deadline = now_ms() + hub.settings.join_deadline.as_millis() as Millis;
    for (seat, version) in table.seats.iter().enumerate() {
        hub.invited(*version);
        let token = response
            .seat_tokens
            .iter()
            .find(|t| t.seat as usize == seat)
            .map(|t| t.token.clone())
            .unwrap_or_default();
        hub.tell(
            *version,
            pb::lobby_response::Kind::Invitation(pb::Invitation {
                ladder_match_id: id.0,
                match_id: response.match_id.clone(),
                seat: seat as u32,
                seat_token: token,
                node_address: hub.settings.node_address.clone(),
                join_deadline_unix_ms: deadline as u64,
                profile: table.profile.clone(),
                seats: table.seats.len() as u32,
                rated: true,
            }),
        );
    }
    tracing::info!(ladder_match = %id, match_id = %response.match_id, "ladder match created");
    hub.watchers.fetch_add(1, Ordering::SeqCst);
    let watched = hub.clone();
    tokio::spawn(async move {
        watch(watched.clone(), id, response.match_id, table.seats).await;
        watched.watchers.fetch_sub(1, Ordering::SeqCst);
    });
}

/// Waits for the join deadline and the end of the match, and records it.
async fn watch(hub: Arc<Hub>, id: MatchId, match_id: String, seats: Vec<VersionId>) {
    let Some(entry) = hub.registry.get(&match_id) else {
        return;
    };
    let mut joined = vec![true; seats.len()];
    let mut no_show = None;
    if let Some(tx) = entry.sender() {
        tokio::select! {
            () = tx.closed() => {}
            () = tokio::time::sleep(hub.settings.join_deadline) => {
                // A table that started had every seat joined (the join deadline is shorter than
                // the registry's join timeout); a seat briefly away from a running match is not a
                // no-show.
                let summary = entry.summary();
                if summary.status() == pb::MatchStatus::Waiting {
                    for (s, j) in joined.iter_mut().enumerate() {
                        *j = summary
                            .players
                            .iter()
                            .any(|p| p.seat as usize == s && p.connected);
                    }
                }
                let missing: Vec<String> = joined
                    .iter()
                    .enumerate()
                    .filter(|(_, j)| !**j)
                    .map(|(s, _)| s.to_string())
                    .collect();
                if missing.is_empty() {
                    let _ = hub.store(move |l| l.store().start_match(id, now_ms())).await;
                } else {
                    let reason = format!("seat(s) {} did not join in time", missing.join(", "));
                    let (reply, done) = oneshot::channel();
                    if tx.send(Command::Abort { reason: reason.clone(), reply }).await.is_ok() {
                        let _ = done.await;
                    }
                    no_show = Some(reason);
                }
                tx.closed().await;
            }
        }
    }
    // The table records its report before it stops; wait briefly if it is not there yet.
    let mut report = entry.report();
    for _ in 0..100 {
        if report.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
        report = entry.report();
    }
    let finished = report.as_ref().filter(|r| {
        no_show.is_none() && r.status() == pb::MatchStatus::Finished && r.result.is_some()
    });
    let recorded = match finished {
        Some(r) => {
            let results: Vec<SeatResult> = (0..seats.len())
                .map(|s| SeatResult {
                    placing: r
                        .result
                        .as_ref()
                        .and_then(|res| res.standings.iter().find(|x| x.seat as usize == s))
                        .map(|x| x.placing.min(u8::MAX as u32) as u8)
                        .unwrap_or(seats.len() as u8),
                    timeouts: r.seats.get(s).map(|x| x.timeouts).unwrap_or(0),
                })
                .collect();
            let placings: Vec<u32> = results.iter().map(|r| r.placing.into()).collect();
            hub.store(move |l| l.record_finish(id, &results, now_ms()))
                .await
                .map(|rep| (rep, Some(placings), String::new()))
        }
        None => {
            let outcomes: Vec<SeatOutcome> = (0..seats.len())
                .map(|s| SeatOutcome {
                    joined: joined[s],
                    timeouts: report
                        .as_ref()
                        .and_then(|r| r.seats.get(s))
                        .map(|x| x.timeouts)
                        .unwrap_or(0),
                })
                .collect();
            let reason = no_show.unwrap_or_else(|| "the table was stopped before the end".into());
            let why = reason.clone();
            hub.store(move |l| l.record_abort(id, &outcomes, &why, now_ms()))
                .await
                .map(|rep| (rep, None, reason))
        }
    };
    match recorded {
        Ok((rep, placings, reason)) => {
            tell_end(&hub, id, &match_id, &seats, &rep, placings, reason)
        }
        Err(e) => {
            tracing::error!(ladder_match = %id, error = %e.message(), "could not record a ladder match");
        }
    }
    for v in &seats {
        hub.ended(*v);
    }
    hub.wake.notify_one();
}

/// Tells each seat's lobby how the match ended, and any health change.
fn tell_end(
    hub: &Hub,
    id: MatchId,
    match_id: &str,
    seats: &[VersionId],
    rep: &MatchReport,
    placings: Option<Vec<u32>>,
    reason: String,
) {
    for (s, v) in seats.iter().enumerate() {
        let change = rep.ratings.iter().find(|c| c.version == *v);
        hub.tell(
            *v,
            pb::lobby_response::Kind::MatchEnded(pb::LadderMatchEnded {
                ladder_match_id: id.0,
                match_id: match_id.to_string(),
                finished: placings.is_some(),
                rated: change.is_some(),
                placing: placings.as_ref().map(|p| p[s]).unwrap_or(0),
                rating: change.map(|c| super::service::rating_to_wire(&c.after.rating)),
                reason: reason.clone(),
            }),
        );
    }
    for (v, why) in &rep.paused {
        hub.tell(
            *v,
            pb::lobby_response::Kind::Notice(pb::LobbyNotice {
                status: pb::VersionStatus::HealthPaused as i32,
                reason: why.clone(),
            }),
        );
    }
    for v in &rep.recovered {
        hub.tell(
            *v,
            pb::lobby_response::Kind::Notice(pb::LobbyNotice {
                status: pb::VersionStatus::Active as i32,
                reason: "a clean probe match lifted the health pause".into(),
            }),
        );
    }
}
