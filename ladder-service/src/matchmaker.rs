//! The matchmaker task and the watcher of each ladder match.
//!
//! A ladder match lives in two places: the ladder store (scheduled → running → finished or
//! aborted) and the game server (a match it hosts, named `ladder match N` in its listings).
//! The matchmaker schedules it in the store first, so the store's count of matches in flight
//! always covers every table it created, then creates the table and records the server's id of
//! it in the store (`server_match_id`), which is how the match's table, viewer and replay are
//! found again; the watcher then waits for the table to close (its command channel closes when
//! the table task ends, after the report is recorded) and writes the end to the store.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

use maumau::pb;
use maumau_ladder::health::SeatOutcome;
use maumau_ladder::matchmaking::{Candidate, Format, MatchmakingConfig, Table, plan_with_house};
use maumau_ladder::store::{Layout, MatchState, NewMatch};
use maumau_ladder::validation::{CopyReport, ValidationNeed};
use maumau_ladder::{
    Eligibility, Ladder, Lobby, MatchId, MatchReport, Millis, SeatResult, Store, VersionId,
};
use rand::rngs::ChaCha20Rng;
use rand::{Rng, SeedableRng};

use super::{Hub, check_format, lock, now_ms};
use maumau_server::{HostedMatch, MatchHandle};
use tokio::sync::mpsc;

/// The label of a ladder match on the game server (in its match listings), before its ladder
/// id. Only for people: the store keeps the server's id of each ladder match's table.
const LABEL_PREFIX: &str = "ladder match ";

/// The shortest time between two matchmaking rounds.
const MIN_ROUND_GAP: std::time::Duration = std::time::Duration::from_millis(10);

/// Recent tables the planner avoids repeating.
const RECENT_TABLES: usize = 64;

/// Aborts (unrated, nobody at fault) the matches a previous run left scheduled or running: their
/// tables died with that process. A scheduled match never started, so nobody joined it.
pub(crate) fn settle_leftovers(
    ladder: &Ladder<dyn Store>,
    now: Millis,
) -> maumau_ladder::Result<()> {
    for m in ladder.store().matches_in_state(MatchState::Scheduled)? {
        ladder.record_unplayed(m.id, "the server restarted before the match started", now)?;
    }
    for m in ladder.store().matches_in_state(MatchState::Running)? {
        let outcomes = vec![
            SeatOutcome {
                joined: true,
                timeouts: 0,
                rejections: 0,
            };
            m.seats.len()
        ];
        ladder.record_abort(m.id, &outcomes, "the server restarted", now)?;
    }
    Ok(())
}

/// Plans and launches matches whenever woken (a lobby opened, a match ended) or every tick. On a
/// shared ladder only the node holding the matchmaker's lock plans (for the lobbies of every
/// node, see `nodes.rs`), every [`super::nodes::LEADER_TICK`], after settling orphaned matches;
/// the nodes claim what it schedules.
pub(crate) async fn run(hub: Arc<Hub>) {
    let mut last_round = tokio::time::Instant::now();
    // On a shared ladder: when the lock and the orphans were last seen to, and whether this node
    // led then. Woken between ticks (a match ended), a leader only plans.
    let mut last_lead: Option<tokio::time::Instant> = None;
    let mut leading = false;
    loop {
        if hub.is_closed() {
            return;
        }
        // Woken by every match end (on a shared ladder, by every node's): plan at most every
        // few milliseconds, taking the ends of that time together.
        tokio::time::sleep_until(last_round + MIN_ROUND_GAP).await;
        last_round = tokio::time::Instant::now();
        let pause = match &hub.cluster {
            None => {
                if let Err(e) = plan_round(&hub).await
                    && !super::is_outage(&e)
                {
                    tracing::warn!(error = %e.message(), "the ladder matchmaker could not plan");
                }
                hub.settings.tick
            }
            Some(_) => {
                let due = last_lead.is_none_or(|t| t.elapsed() >= super::nodes::LEADER_TICK);
                // A node that does not lead tries for the lock on the tick only.
                let led = if due {
                    last_lead = Some(tokio::time::Instant::now());
                    let led = super::nodes::lead(&hub).await;
                    leading = matches!(led, Ok(true));
                    led
                } else {
                    Ok(leading)
                };
                match led {
                    Ok(true) => {
                        if let Err(e) = plan_round(&hub).await
                            && !super::is_outage(&e)
                        {
                            tracing::warn!(error = %e.message(), "the ladder matchmaker could not plan");
                        }
                    }
                    Ok(false) => {}
                    Err(e) if super::is_outage(&e) => {}
                    Err(e) => {
                        tracing::warn!(error = %e.message(), "the ladder matchmaker's lock failed");
                    }
                }
                super::nodes::LEADER_TICK
            }
        };
        tokio::select! {
            () = hub.wake.notified() => {}
            () = tokio::time::sleep(pause) => {}
        }
    }
}

/// Who plays one seat of a ladder table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum SeatPlan {
    /// A version's bot, invited on its lobby.
    Version(VersionId),
    /// A built-in bot of the server (validation matches).
    Bot(pb::BotKind),
    /// A house bot: a built-in bot of the server playing a ladder version.
    House(VersionId, pb::BotKind),
}

/// A table to create: a rated match, or a validation match of one version.
pub(super) struct Launch {
    pub(super) id: MatchId,
    profile: String,
    seed: u64,
    seats: Vec<SeatPlan>,
    validation: bool,
}

impl Launch {
    /// A rated table; `house` tells which versions are house bots (played by the server).
    pub(super) fn rated(
        id: MatchId,
        t: Table,
        house: impl Fn(VersionId) -> Option<pb::BotKind>,
    ) -> Launch {
        Launch {
            id,
            profile: t.profile,
            seed: t.seed,
            seats: t
                .seats
                .into_iter()
                .map(|v| match house(v) {
                    Some(kind) => SeatPlan::House(v, kind),
                    None => SeatPlan::Version(v),
                })
                .collect(),
            validation: false,
        }
    }

    /// The version's copies at `need.copies` seats in a row from a seat the seed picks, the
    /// built-in heuristic and random bots (in turn) at the others.
    pub(super) fn validation(id: MatchId, need: &ValidationNeed, seed: u64) -> Launch {
        let n = usize::from(need.seats.max(1));
        let offset = (seed % n as u64) as usize;
        let mut bots = [pb::BotKind::Heuristic, pb::BotKind::Random]
            .into_iter()
            .cycle();
        let seats = (0..n)
            .map(|i| {
                if (i + n - offset) % n < usize::from(need.copies) {
                    SeatPlan::Version(need.version)
                } else {
                    SeatPlan::Bot(bots.next().unwrap_or(pb::BotKind::Random))
                }
            })
            .collect();
        Launch {
            id,
            profile: need.profile.clone(),
            seed,
            seats,
            validation: true,
        }
    }

    /// The seats the version(s) play, with their versions.
    pub(super) fn version_seats(&self) -> Vec<(usize, VersionId)> {
        self.seats
            .iter()
            .enumerate()
            .filter_map(|(s, p)| match p {
                SeatPlan::Version(v) => Some((s, *v)),
                SeatPlan::Bot(_) | SeatPlan::House(..) => None,
            })
            .collect()
    }
}

async fn plan_round(hub: &Arc<Hub>) -> Result<(), tonic::Status> {
    let shared = hub.cluster.as_ref().map(|c| c.pg.clone());
    let lobbies = match &shared {
        None => hub.open_lobbies(),
        Some(pg) => {
            let pg = pg.clone();
            hub.store(move |_| pg.shared_lobbies(super::nodes::STALE_MS))
                .await?
        }
    };
    if lobbies.is_empty() {
        return Ok(());
    }
    let configured = hub.settings.formats.clone();
    let house_matches = hub.settings.house_matches;
    let house = hub.house.clone();
    let online = (lobbies.len() + house.len()) as u32;
    let plan_seed = hub.next_seed();
    // Deal seeds come from their own stream, keyed by the hub's cryptographic generator: a seed
    // revealed at the end of one match says nothing about its siblings still being played.
    let mut deals = ChaCha20Rng::seed_from_u64(hub.next_seed());
    // A version on a health pause is offered its probe once the interval has passed.
    let probe_interval = hub.settings.probe_interval.as_millis() as Millis;
    let (planned, waits) = hub
        .store(move |ladder| {
            // On a shared ladder a match is scheduled with its layout, for the node that
            // claims it.
            let schedule = |m: &NewMatch, layout: Layout| match &shared {
                Some(pg) => pg.schedule_laid_out(m, layout, now_ms()),
                None => ladder.store().schedule_match(m, now_ms()),
            };
            let Some(season) = ladder.store().current_season()? else {
                let waits = lobbies
                    .iter()
                    .map(|l| {
                        let why = waiting(
                            pb::WaitingReason::NoSeason,
                            "no season is open: no matches are made until the operator opens one"
                                .into(),
                            online,
                        );
                        (l.version, why)
                    })
                    .collect();
                return Ok((Vec::new(), waits));
            };
            let now = now_ms();
            // The store's formats: an operator may have set them through another node.
            let formats = super::formats_in(ladder.store(), &configured)?;
            let is_house = |v: VersionId| house.iter().any(|h| h.version == v);
            let mut all = lobbies.clone();
            all.extend(
                house
                    .iter()
                    .map(|h| house_lobby(h.version, &formats, house_matches)),
            );
            // Every read first, then the writes: a failed read schedules nothing.
            let (plan, mut candidates) = ladder.round(season.id, &all, &formats)?;
            candidates.retain(|c| match (c.probe, c.last_scheduled) {
                (Some(paused), Some(last)) => {
                    now - last >= maumau_ladder::health::probe_wait(probe_interval, paused, last)
                }
                _ => true,
            });
            let (house_cands, real): (Vec<Candidate>, Vec<Candidate>) =
                candidates.into_iter().partition(|c| is_house(c.version));
            let config = MatchmakingConfig::new(formats.clone());
            let recent = if real.is_empty() {
                Vec::new()
            } else {
                ladder.recent_tables(RECENT_TABLES)?
            };
            let tables = plan_with_house(&config, &real, &house_cands, &recent, now, plan_seed);
            // Each match is scheduled on its own; one that cannot be (the season closed, a
            // version retired meanwhile) is skipped, and those already scheduled still launch,
            // so none is left behind in the scheduled state.
            let mut out = Vec::new();
            // Validation first: versions still validating get no rated matches.
            for need in &plan.needs {
                let seed = deals.next_u64();
                let new = NewMatch {
                    season: season.id,
                    profile: need.profile.clone(),
                    seed,
                    rated: false,
                    seats: vec![need.version],
                };
                let layout = Layout {
                    table_seats: need.seats,
                    copies: need.copies,
                };
                match schedule(&new, layout) {
                    Ok(id) => out.push(Launch::validation(id, need, seed)),
                    Err(e) => tracing::warn!(version = %need.version, error = %e, "validation match not scheduled"),
                }
            }
            for mut t in tables {
                t.seed = deals.next_u64();
                let new = NewMatch {
                    season: season.id,
                    profile: t.profile.clone(),
                    seed: t.seed,
                    rated: true,
                    seats: t.seats.clone(),
                };
                let n = t.seats.len() as u8;
                let layout = Layout {
                    table_seats: n,
                    copies: n,
                };
                match schedule(&new, layout) {
                    Ok(id) => out.push(Launch::rated(id, t, |v| {
                        house.iter().find(|h| h.version == v).map(|h| h.kind)
                    })),
                    Err(e) => tracing::warn!(error = %e, "ladder table not scheduled"),
                }
            }
            let invited: HashSet<VersionId> = out
                .iter()
                .flat_map(|l| l.version_seats())
                .map(|(_, v)| v)
                .collect();
            let mut waits = Vec::new();
            for l in &lobbies {
                if invited.contains(&l.version) {
                    continue;
                }
                let why = why_waiting(ladder, l, &plan.waiting, &real, &house_cands, &config)?;
                waits.push((l.version, waiting(why.0, why.1, online)));
            }
            Ok((out, waits))
        })
        .await?;
    let mut invited: Vec<VersionId> = Vec::new();
    match &hub.cluster {
        // The nodes (this one too) claim them.
        Some(c) if !planned.is_empty() => {
            invited.extend(
                planned
                    .iter()
                    .flat_map(|l| l.version_seats())
                    .map(|(_, v)| v),
            );
            c.kick.notify_one();
        }
        Some(_) => {}
        None => {
            for l in planned {
                let versions: Vec<VersionId> = l.version_seats().iter().map(|&(_, v)| v).collect();
                if launch(hub, l).await {
                    invited.extend(versions);
                }
            }
        }
    }
    hub.tell_waiting(waits, &invited);
    Ok(())
}

/// The lobby a house bot holds: every profile of the formats, every table size, `max_matches`
/// at once.
fn house_lobby(version: VersionId, formats: &[Format], max_matches: u32) -> Lobby {
    let mut profiles: Vec<String> = formats.iter().map(|f| f.profile.clone()).collect();
    profiles.sort();
    profiles.dedup();
    Lobby {
        version,
        max_matches: max_matches.max(1),
        profiles,
        seats: (2..=8).collect(),
    }
}

fn waiting(reason: pb::WaitingReason, detail: String, bots_online: u32) -> pb::LobbyWaiting {
    pb::LobbyWaiting {
        reason: reason as i32,
        detail,
        bots_online,
    }
}

/// Why a lobby got no invitation this round: `validating` are the versions held back for
/// validation, `real` and `house` the round's candidates (real bots and house bots).
fn why_waiting(
    ladder: &Ladder<dyn Store>,
    lobby: &Lobby,
    validating: &[VersionId],
    real: &[Candidate],
    house: &[Candidate],
    config: &MatchmakingConfig,
) -> maumau_ladder::Result<(pb::WaitingReason, String)> {
    use pb::WaitingReason as W;
    if validating.contains(&lobby.version) {
        return Ok((
            W::Validating,
            "it plays its unrated validation matches first (one at a time, one per profile it \
             accepts); rated matches follow once they pass"
                .into(),
        ));
    }
    let Some(me) = real.iter().find(|c| c.version == lobby.version) else {
        // Not a candidate: a sanction, a failed validation, or nobody else to plan with.
        return Ok(match ladder.eligibility(lobby.version)? {
            Eligibility::Paused { reason } => (W::Paused, format!("paused by hand: {reason}")),
            Eligibility::Probe { reason, .. } => (
                W::Paused,
                format!(
                    "paused for health ({reason}); it is offered one probe match at a time, after \
                     a wait, and a clean one lifts the pause"
                ),
            ),
            Eligibility::Banned { reason } => (W::Paused, format!("banned: {reason}")),
            Eligibility::Rejected { reason } => (
                W::Paused,
                format!("{reason}; never matched again: add a fixed version"),
            ),
            Eligibility::Retired => (
                W::Paused,
                "retired: a newer version of its bot replaced it".into(),
            ),
            Eligibility::Validating => (
                W::Validating,
                "it needs a passed validation match before it is rated".into(),
            ),
            Eligibility::Active if real.is_empty() && house.is_empty() => (
                W::NoOpponents,
                "no other bot is online on this ladder".into(),
            ),
            Eligibility::Active => (
                W::Validating,
                "it passed validation in none of the profiles it accepts".into(),
            ),
        });
    };
    if me.free == 0 {
        return Ok((
            W::AtCapacity,
            format!(
                "it plays {} match(es) at once, as many as its lobby allows (max_matches)",
                lobby.max_matches
            ),
        ));
    }
    // An opponent: another owner's bot online that accepts a format it accepts, with enough
    // owners to fill the table.
    let others: Vec<&Candidate> = real
        .iter()
        .chain(house)
        .filter(|c| c.owner != me.owner)
        .collect();
    // Each format the ladder plays that it accepts, with the other owners online for it.
    let formats: Vec<(&str, u8, usize)> = config
        .formats
        .iter()
        .filter(|f| {
            f.weight > 0.0 && me.seats.contains(&f.seats) && me.profiles.contains(&f.profile)
        })
        .map(|f| {
            let owners: HashSet<_> = others
                .iter()
                .filter(|c| c.seats.contains(&f.seats) && c.profiles.contains(&f.profile))
                .map(|c| c.owner)
                .collect();
            (f.profile.as_str(), f.seats, owners.len())
        })
        .collect();
    let playable = formats
        .iter()
        .any(|&(_, seats, owners)| owners + 1 >= usize::from(seats));
    Ok(if playable {
        (
            W::Matchmaking,
            "opponents of a format it accepts are online; the next matchmaking round will \
             consider it"
                .into(),
        )
    } else {
        (W::NoOpponents, no_table(&formats, others.len()))
    })
}

/// Why no table can be filled for a bot, format by format: each format it accepts (profile,
/// seats and the other owners online who accept it) needs `seats - 1` other owners' bots.
fn no_table(formats: &[(&str, u8, usize)], others: usize) -> String {
    if formats.is_empty() {
        return format!(
            "none of the ladder's formats is one it accepts (its profiles and table sizes);              {others} other bot(s) online"
        );
    }
    let each: Vec<String> = formats
        .iter()
        .map(|&(profile, seats, owners)| {
            format!(
                "{profile} with {seats} seats needs {} other owner(s)' bots, {owners} online",
                seats - 1
            )
        })
        .collect();
    format!(
        "no table can be filled: {} ({others} other bot(s) online)",
        each.join("; ")
    )
}

/// Records a match that never got a table as aborted, nobody at fault.
async fn abort_unplayed(hub: &Arc<Hub>, l: &Launch, reason: String) {
    if let Some(c) = &hub.cluster {
        c.unhost(l.id);
    }
    let id = l.id;
    let pg = hub.cluster.as_ref().map(|c| c.pg.clone());
    let _ = hub
        .store(move |ladder| {
            ladder.record_unplayed(id, &reason, now_ms())?;
            // No lobby was invited: none is told of its end.
            match pg {
                Some(pg) => pg.mark_told(id),
                None => Ok(()),
            }
        })
        .await;
}

/// The players' names the server shows for a table's seats (its match list, the viewer, the
/// seats' Welcome): each version's bot name, a house bot's marked "(house)", whatever name its
/// program joins with; none for a validation match's built-in bots (the server names them).
/// A name the store cannot give is left out: the seat then shows its client's name.
async fn seat_names(hub: &Arc<Hub>, l: &Launch) -> Vec<String> {
    let seats: Vec<Option<(VersionId, bool)>> = l
        .seats
        .iter()
        .map(|p| match p {
            SeatPlan::Version(v) => Some((*v, false)),
            SeatPlan::House(v, _) => Some((*v, true)),
            SeatPlan::Bot(_) => None,
        })
        .collect();
    hub.store(move |ladder| {
        let store = ladder.store();
        let name = |(v, house): (VersionId, bool)| -> maumau_ladder::Result<String> {
            let bot = store.bot(store.version(v)?.bot)?;
            Ok(match house {
                true => format!("{} (house)", bot.name),
                false => bot.name,
            })
        };
        Ok(seats
            .into_iter()
            .map(|s| s.and_then(|s| name(s).ok()).unwrap_or_default())
            .collect())
    })
    .await
    .unwrap_or_default()
}

/// Creates the match on the game server, sends the invitations and starts the watcher. Returns
/// false when the match was aborted before its invitations (recorded as such).
pub(super) async fn launch(hub: &Arc<Hub>, l: Launch) -> bool {
    let id = l.id;
    if hub.is_closed() {
        abort_unplayed(hub, &l, "the server is shutting down".into()).await;
        return false;
    }
    let versions: Vec<VersionId> = l.version_seats().iter().map(|&(_, v)| v).collect();
    // On a shared ladder the lobbies may be on other nodes: the node delivering an invitation
    // counts it, and one whose lobby closed meanwhile ends as a no-show.
    if hub.cluster.is_none() && !hub.reserve(&versions) {
        abort_unplayed(
            hub,
            &l,
            "a lobby drained or closed before its invitation".into(),
        )
        .await;
        return false;
    }
    let names = seat_names(hub, &l).await;
    let created = check_format(&l.profile, l.seats.len() as u8).and_then(|config| {
        hub.host
            .create(HostedMatch {
                config,
                seed: l.seed,
                bots: l
                    .seats
                    .iter()
                    .map(|p| match p {
                        SeatPlan::Version(_) => None,
                        SeatPlan::Bot(k) | SeatPlan::House(_, k) => Some(*k),
                    })
                    .collect(),
                rated: !l.validation,
                label: format!("{LABEL_PREFIX}{id}"),
                names,
            })
            .map_err(|s| s.message().to_string())
    });
    let (response, handle) = match created {
        Ok(created) => created,
        Err(why) => {
            tracing::warn!(ladder_match = %id, error = %why, "could not create a ladder table");
            if hub.cluster.is_none() {
                for &v in &versions {
                    hub.ended(v);
                }
            }
            abort_unplayed(
                hub,
                &l,
                format!("the server could not create the table: {why}"),
            )
            .await;
            return false;
        }
    };
    // Before any await: a node that loses the lease from now on stops this table.
    if let Some(c) = &hub.cluster {
        c.hosting(id, &response.match_id);
    }
    // The store keeps the table's id: pages and calls find the match's table through it, after
    // a restart too. A failed write loses only the links to the table; the match is played.
    let table = response.match_id.clone();
    if let Err(e) = hub
        .store(move |ladder| ladder.store().set_server_match_id(id, &table))
        .await
    {
        tracing::warn!(ladder_match = %id, match_id = %response.match_id, error = %e.message(), "could not record a ladder match's table");
    }
    let deadline = now_ms() + hub.settings.join_deadline.as_millis() as Millis;
    let node_address = match &hub.cluster {
        Some(c) => c.address.clone(),
        None => hub.settings.node_address.clone(),
    };
    for (seat, version) in l.version_seats() {
        let token = response
            .seat_tokens
            .iter()
            .find(|t| t.seat as usize == seat)
            .map(|t| t.token.clone())
            .unwrap_or_default();
        hub.tell(
            version,
            pb::lobby_response::Kind::Invitation(pb::Invitation {
                ladder_match_id: id.0,
                match_id: response.match_id.clone(),
                seat: seat as u32,
                seat_token: token,
                node_address: node_address.clone(),
                join_deadline_unix_ms: deadline as u64,
                profile: l.profile.clone(),
                seats: l.seats.len() as u32,
                rated: !l.validation,
                validation: l.validation,
            }),
        );
    }
    tracing::info!(ladder_match = %id, match_id = %response.match_id, validation = l.validation, "ladder match created");
    let watching = hub.watching();
    let watched = hub.clone();
    tokio::spawn(async move {
        watch(watched, l, handle).await;
        drop(watching);
    });
    true
}

/// The seats of matches waiting for their players that a lobby may withdraw
/// (`LadderService.WithdrawSeat`): each watcher registers its match here and hears the
/// withdrawals of its seats.
#[derive(Default)]
pub(crate) struct Withdrawals {
    waiting: Mutex<HashMap<MatchId, Waiting>>,
}

/// A match's lobby seats and its watcher's ear.
struct Waiting {
    seats: Vec<(usize, VersionId)>,
    tx: mpsc::UnboundedSender<usize>,
}

impl Withdrawals {
    /// Registers a match's seats; the receiver hears each withdrawn seat. Unregistered by
    /// [`Withdrawals::forget`].
    fn register(&self, l: &Launch) -> mpsc::UnboundedReceiver<usize> {
        let (tx, rx) = mpsc::unbounded_channel();
        let seats = l.version_seats();
        lock(&self.waiting).insert(l.id, Waiting { seats, tx });
        rx
    }

    fn forget(&self, id: MatchId) {
        lock(&self.waiting).remove(&id);
    }

    /// Tells the watcher of `id` that `version` gives up `seat`. `None` when no match of this
    /// node has that seat of that version.
    pub(crate) fn withdraw(&self, id: MatchId, seat: usize, version: VersionId) -> Option<()> {
        let waiting = lock(&self.waiting);
        let w = waiting.get(&id)?;
        w.seats.contains(&(seat, version)).then_some(())?;
        w.tx.send(seat).ok()
    }
}

/// How often the watcher of a waiting match on a shared ladder looks for its seats' lobbies.
const LOBBY_CHECK: std::time::Duration = std::time::Duration::from_secs(1);

/// The seats of a waiting match not joined yet whose version has no lobby on a live node; `None`
/// once the table started. None are judged gone while the store is unreachable.
async fn seats_without_lobby(
    hub: &Hub,
    entry: &MatchHandle,
    version_seats: &[(usize, VersionId)],
) -> Option<Vec<usize>> {
    let summary = entry.summary();
    if summary.status() != pb::MatchStatus::Waiting {
        return None;
    }
    let unjoined: Vec<(usize, VersionId)> = version_seats
        .iter()
        .copied()
        .filter(|&(s, _)| {
            !summary
                .players
                .iter()
                .any(|p| p.seat as usize == s && p.connected)
        })
        .collect();
    if unjoined.is_empty() {
        return Some(Vec::new());
    }
    let pg = hub.cluster.as_ref()?.pg.clone();
    let live = hub
        .store(move |_| pg.shared_lobbies(super::nodes::STALE_MS))
        .await;
    // The store is unreachable: nothing is judged (the join deadline still holds).
    let Ok(live) = live else {
        return Some(Vec::new());
    };
    Some(
        unjoined
            .into_iter()
            .filter(|&(_, v)| !live.iter().any(|l| l.version == v))
            .map(|(s, _)| s)
            .collect(),
    )
}

/// How a match ended, as recorded.
struct Ended {
    report: MatchReport,
    /// Placing of each seat, when finished.
    placings: Option<Vec<u32>>,
    reason: String,
    /// After a validation match: the version's status now.
    status: Option<Eligibility>,
}

/// Waits for the join deadline (or a seat's withdrawal) and the end of the match, and records
/// it.
async fn watch(hub: Arc<Hub>, l: Launch, entry: MatchHandle) {
    let id = l.id;
    let version_seats = l.version_seats();
    let mut joined = vec![true; l.seats.len()];
    // Why the watcher aborted the table (whose fault it was is in `joined`).
    let mut aborted_why = None;
    let mut withdrawals = hub.withdrawals.register(&l);
    let deadline = tokio::time::sleep(hub.settings.join_deadline);
    let mut deadline = std::pin::pin!(deadline);
    // On a shared ladder: seats whose version had no live lobby at the last check.
    let mut lobby_checks =
        tokio::time::interval_at(tokio::time::Instant::now() + LOBBY_CHECK, LOBBY_CHECK);
    let mut checking = hub.cluster.is_some();
    let mut gone_before: Vec<usize> = Vec::new();
    let report = loop {
        tokio::select! {
            report = entry.ended() => break report,
            _ = lobby_checks.tick(), if checking => {
                let gone = seats_without_lobby(&hub, &entry, &version_seats).await;
                let Some(gone) = gone else {
                    checking = false; // it started
                    continue;
                };
                // Gone at two checks in a row: the lobby's node stopped (or the bot left) and
                // the invitation cannot reach the seat. Nobody is at fault.
                let confirmed: Vec<String> = gone
                    .iter()
                    .filter(|s| gone_before.contains(s))
                    .map(|s| s.to_string())
                    .collect();
                gone_before = gone;
                if !confirmed.is_empty() {
                    let reason = format!(
                        "seat(s) {} could not join: their lobby went away (its node stopped?) \
                         before they joined",
                        confirmed.join(", ")
                    );
                    entry.abort(reason.clone()).await;
                    aborted_why = Some(reason);
                    break entry.ended().await;
                }
            }
            Some(seat) = withdrawals.recv() => {
                // A table that started is left to its seats' clocks. Before the deadline, only
                // the seat given up is at fault: the others still had time to join.
                if entry.summary().status() != pb::MatchStatus::Waiting {
                    continue;
                }
                joined[seat] = false;
                let reason = format!("seat {seat} withdrew before joining (its program failed)");
                entry.abort(reason.clone()).await;
                aborted_why = Some(reason);
                break entry.ended().await;
            }
            () = &mut deadline => {
                // A table that started had every seat joined (the join deadline is shorter than
                // the server's join timeout); a seat briefly away from a running match is not a
                // no-show.
                let summary = entry.summary();
                if summary.status() == pb::MatchStatus::Waiting {
                    for &(s, _) in &version_seats {
                        joined[s] = summary
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
                    entry.abort(reason.clone()).await;
                    aborted_why = Some(reason);
                }
                // The table records its report before it stops.
                break entry.ended().await;
            }
        }
    };
    hub.withdrawals.forget(id);
    if let Some(c) = &hub.cluster
        && c.lost(id)
    {
        // Another node settles it (the reaper tells the lobbies); record nothing.
        tracing::warn!(ladder_match = %id, "lost the lease of a ladder match; its table stopped unrecorded");
        c.unhost(id);
        hub.wake.notify_one();
        return;
    }
    let stats = |s: usize| report.as_ref().and_then(|r| r.seats.get(s)).cloned();
    let finished = report.as_ref().filter(|r| {
        aborted_why.is_none() && r.status() == pb::MatchStatus::Finished && r.result.is_some()
    });
    let n = l.seats.len();
    let recorded = match finished {
        Some(r) => {
            let placing = |s: usize| {
                r.result
                    .as_ref()
                    .and_then(|res| res.standings.iter().find(|x| x.seat as usize == s))
                    .map(|x| x.placing.min(u8::MAX as u32) as u8)
                    .unwrap_or(n as u8)
            };
            let placings: Vec<u32> = (0..n).map(|s| placing(s).into()).collect();
            if l.validation {
                let copies: Vec<CopyReport> = version_seats
                    .iter()
                    .map(|&(s, _)| {
                        let st = stats(s).unwrap_or_default();
                        CopyReport {
                            seat: s as u32,
                            timeouts: st.timeouts,
                            rejections: st.rejections,
                            protocol_errors: st.protocol_errors,
                            gave_up: st.gave_up,
                        }
                    })
                    .collect();
                let version = version_seats.first().map(|&(_, v)| v);
                hub.store(move |ladder| {
                    let report = ladder.record_validation(id, &copies, now_ms())?;
                    let status = match version {
                        Some(v) => Some(ladder.eligibility(v)?),
                        None => None,
                    };
                    Ok((report, status))
                })
                .await
                .map(|(report, status)| Ended {
                    reason: report.rejected.join("; "),
                    report,
                    placings: Some(placings),
                    status,
                })
            } else {
                let results: Vec<SeatResult> = (0..n)
                    .map(|s| SeatResult {
                        placing: placing(s),
                        timeouts: stats(s).map(|x| x.timeouts).unwrap_or(0),
                        rejections: stats(s).map(|x| x.rejections).unwrap_or(0),
                    })
                    .collect();
                hub.store(move |ladder| ladder.record_finish(id, &results, now_ms()))
                    .await
                    .map(|report| Ended {
                        report,
                        placings: Some(placings),
                        reason: String::new(),
                        status: None,
                    })
            }
        }
        None => {
            let outcome = |s: usize| SeatOutcome {
                joined: joined[s],
                timeouts: stats(s).map(|x| x.timeouts).unwrap_or(0),
                rejections: stats(s).map(|x| x.rejections).unwrap_or(0),
            };
            let outcomes: Vec<SeatOutcome> = if l.validation {
                // One stored seat for all the copies.
                vec![SeatOutcome {
                    joined: version_seats.iter().all(|&(s, _)| joined[s]),
                    timeouts: version_seats
                        .iter()
                        .map(|&(s, _)| outcome(s).timeouts)
                        .sum(),
                    rejections: version_seats
                        .iter()
                        .map(|&(s, _)| outcome(s).rejections)
                        .sum(),
                }]
            } else {
                (0..n).map(outcome).collect()
            };
            let reason =
                aborted_why.unwrap_or_else(|| "the table was stopped before the end".into());
            let why = reason.clone();
            hub.store(move |ladder| ladder.record_abort(id, &outcomes, &why, now_ms()))
                .await
                .map(|report| Ended {
                    report,
                    placings: None,
                    reason,
                    status: None,
                })
        }
    };
    match recorded {
        Ok(ended) => tell_end(&hub, &l, entry.id(), &ended),
        Err(e) => {
            tracing::error!(ladder_match = %id, error = %e.message(), "could not record a ladder match");
        }
    }
    match &hub.cluster {
        // The node delivering the match's end counts it.
        Some(c) => c.unhost(id),
        None => {
            for (_, v) in &version_seats {
                hub.ended(*v);
            }
        }
    }
    hub.wake.notify_one();
}

/// Tells each seat's lobby how the match ended, and any change of status.
fn tell_end(hub: &Hub, l: &Launch, match_id: &str, ended: &Ended) {
    let rep = &ended.report;
    let mut ends = Vec::new();
    for (s, v) in l.version_seats() {
        let change = rep.ratings.iter().find(|c| c.version == v);
        ends.push((
            v,
            pb::lobby_response::Kind::MatchEnded(pb::LadderMatchEnded {
                ladder_match_id: l.id.0,
                match_id: match_id.to_string(),
                finished: ended.placings.is_some(),
                rated: change.is_some(),
                placing: ended.placings.as_ref().map(|p| p[s]).unwrap_or(0),
                rating: change.map(|c| super::service::rating_to_wire(&c.after.rating)),
                reason: ended.reason.clone(),
                seat: s as u32,
                validation: l.validation,
                profile: l.profile.clone(),
            }),
        ));
    }
    hub.tell_ended(l.id, ends);
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
    if let (Some(status), Some(&(_, v))) = (&ended.status, l.version_seats().first()) {
        let (status, why) = super::status_to_wire(status);
        let reason = if rep.rejected.is_empty() {
            format!("passed validation in {} (ladder match {})", l.profile, l.id)
        } else {
            why
        };
        hub.tell(
            v,
            pb::lobby_response::Kind::Notice(pb::LobbyNotice {
                status: status as i32,
                reason,
            }),
        );
    }
}

#[cfg(test)]
mod tests {
    use super::no_table;

    #[test]
    fn a_bot_that_cannot_be_seated_is_told_which_table_lacks_whom() {
        assert_eq!(
            no_table(&[("brazilian", 4, 1)], 1),
            "no table can be filled: brazilian with 4 seats needs 3 other owner(s)' bots, \
             1 online (1 other bot(s) online)"
        );
        assert_eq!(
            no_table(&[("classic", 2, 0), ("brazilian", 4, 2)], 2),
            "no table can be filled: classic with 2 seats needs 1 other owner(s)' bots, 0 \
             online; brazilian with 4 seats needs 3 other owner(s)' bots, 2 online (2 other \
             bot(s) online)"
        );
        assert!(no_table(&[], 3).starts_with("none of the ladder's formats"));
    }
}
