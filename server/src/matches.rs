//! The match service: create, abort, list and inspect matches; download and verify replays.

use std::sync::Arc;
use std::time::Duration;

use maumau::pb::match_service_server::MatchService;
use maumau::{pb, wire};
use maumau_engine::{MatchConfig, Seat};
use tonic::{Request, Response, Status};

use crate::config::TimeControl;
use crate::reasons::{MESSAGE_CHARS, clip, echo};
use crate::registry::Registry;
use crate::table::{NewMatch, Start};

/// The match service.
pub(crate) struct Matches {
    pub(crate) registry: Arc<Registry>,
    /// Each client address's budget of CreatePublicMatch calls.
    pub(crate) public_limit: crate::PerAddress,
    /// Public matches open now (each decremented by a task that waits for its end).
    pub(crate) public_open: Arc<std::sync::atomic::AtomicUsize>,
}

impl Matches {
    /// Operator calls need the operator token when the server has one. An empty bearer never
    /// passes, whatever the server was given.
    fn operator<T>(&self, req: &Request<T>) -> Result<(), Status> {
        if self.is_operator(req) {
            Ok(())
        } else {
            Err(wire::status(
                pb::ErrorReason::PermissionDenied,
                "this call needs `authorization: Bearer <operator token>`",
            ))
        }
    }

    /// Whether the request comes from the operator: it carries the operator token, or the
    /// server has none (then everyone is, as for every operator call).
    fn is_operator<T>(&self, req: &Request<T>) -> bool {
        match &self.registry.config.operator_token {
            None => true,
            Some(t) => crate::play::operator_bearer(req, t),
        }
    }

    /// A match, open or finished (a finished one is read from the store).
    async fn entry(&self, id: &str) -> Result<Arc<crate::table::Handle>, Status> {
        self.registry.get(id).await.ok_or_else(|| {
            wire::status(
                pb::ErrorReason::MatchNotFound,
                format!("no match `{}`", echo(id)),
            )
        })
    }
}

/// A refusal of a CreateMatch or VerifyReplay request; the message may carry pieces of the
/// request (the engine's notation errors), so it is clipped.
fn invalid(reason: pb::ErrorReason, message: impl Into<String>) -> Status {
    wire::status(reason, clip(&message.into(), MESSAGE_CHARS))
}

/// Checks a CreateMatch request and turns it into what the registry needs.
fn new_match(r: pb::CreateMatchRequest, defaults: &TimeControl) -> Result<NewMatch, Status> {
    // The request's start as the replay will record it.
    let start: Start = r.start.map(|s| match s {
        pb::create_match_request::Start::DeckOrder(d) => pb::replay::Start::DeckOrder(d),
        pb::create_match_request::Start::Position(p) => pb::replay::Start::Position(p),
    });
    let config = match (&start, r.config.as_ref()) {
        (Some(pb::replay::Start::Position(p)), given) => {
            let game = maumau_engine::Game::from_position(p)
                .map_err(|e| invalid(pb::ErrorReason::InvalidSetup, e.to_string()))?;
            if let Some(c) = given {
                let c = MatchConfig::try_from(c)
                    .map_err(|e| invalid(pb::ErrorReason::InvalidConfig, e.to_string()))?;
                if c != *game.config() {
                    return Err(invalid(
                        pb::ErrorReason::InvalidSetup,
                        "the configuration differs from the one in the position; leave it unset",
                    ));
                }
            }
            *game.config()
        }
        (_, Some(c)) => MatchConfig::try_from(c)
            .map_err(|e| invalid(pb::ErrorReason::InvalidConfig, e.to_string()))?,
        (_, None) => {
            return Err(invalid(
                pb::ErrorReason::InvalidConfig,
                "config is required",
            ));
        }
    };
    if r.rated && start.is_some() {
        return Err(invalid(
            pb::ErrorReason::InvalidSetup,
            "a rated match starts from a seed, never from a deck order or a position",
        ));
    }
    if r.rated && r.seed.is_some() {
        return Err(invalid(
            pb::ErrorReason::InvalidSetup,
            "a rated match starts from a seed the server draws; leave seed unset",
        ));
    }
    let mut bots = vec![None; config.seats as usize];
    for b in &r.bots {
        let seat = Seat::try_from(b.seat)
            .ok()
            .filter(|&s| s < config.seats)
            .ok_or_else(|| {
                invalid(
                    pb::ErrorReason::InvalidSetup,
                    format!("a bot on seat {}, which does not exist", b.seat),
                )
            })?;
        let kind = pb::BotKind::try_from(b.kind).map_err(|_| {
            invalid(
                pb::ErrorReason::InvalidArgument,
                format!("seat {seat}: unknown bot kind {}", b.kind),
            )
        })?;
        if kind == pb::BotKind::Unspecified {
            return Err(invalid(
                pb::ErrorReason::InvalidArgument,
                format!(
                    "seat {seat}: bot kind is required \
                     (BOT_KIND_RANDOM, BOT_KIND_HEURISTIC or BOT_KIND_SEARCH)"
                ),
            ));
        }
        if bots[seat as usize].replace(kind).is_some() {
            return Err(invalid(
                pb::ErrorReason::InvalidSetup,
                format!("seat {seat} is given two built-in bots"),
            ));
        }
    }
    if r.join_timeout_ms > MAX_JOIN_TIMEOUT_MS {
        return Err(invalid(
            pb::ErrorReason::InvalidArgument,
            format!(
                "join_timeout_ms {} is more than a day ({MAX_JOIN_TIMEOUT_MS}); a match waits \
                 at most that long for its seats",
                r.join_timeout_ms
            ),
        ));
    }
    let join_timeout =
        (r.join_timeout_ms > 0).then(|| Duration::from_millis(r.join_timeout_ms.into()));
    let seed = r.seed.unwrap_or_else(rand::random);
    Ok(NewMatch {
        config,
        seed,
        start,
        clock: TimeControl::from_wire(r.time_control.as_ref(), defaults)?,
        bots,
        rated: r.rated,
        label: r.label.chars().take(128).collect(),
        join_timeout,
        sealed: r.sealed,
        names: Vec::new(),
    })
}

/// How long a public match waits for its person to join.
const PUBLIC_JOIN_TIMEOUT: Duration = Duration::from_secs(600);
/// The shortest decision allowance of a public match's clock (people are not bots).
const PUBLIC_MIN_DECISION_MS: u32 = 5_000;
/// The longest decision allowance of a public match's clock.
const PUBLIC_MAX_DECISION_MS: u32 = 600_000;
/// The largest time bank of a public match's clock.
const PUBLIC_MAX_BANK_MS: u32 = 3_600_000;
/// How long a public match's person may be away while their seat must act before a bot plays
/// it (until they are back), when the request leaves it 0; and the most it may ask.
const PUBLIC_GRACE_MS: (u32, u32) = (30_000, 600_000);
/// The label of every public match.
pub(crate) const PUBLIC_LABEL: &str = "public play";

/// Checks a CreatePublicMatch request (the limits written on `CreatePublicMatchRequest` in
/// match.proto) and turns it into what the registry needs: never rated, a seed the server
/// draws, a shuffle, a person's clock, a bot while the person is away.
fn public_match(r: pb::CreatePublicMatchRequest) -> Result<NewMatch, Status> {
    let config = r
        .config
        .as_ref()
        .ok_or_else(|| invalid(pb::ErrorReason::InvalidConfig, "config is required"))
        .and_then(|c| {
            MatchConfig::try_from(c)
                .map_err(|e| invalid(pb::ErrorReason::InvalidConfig, e.to_string()))
        })?;
    // The bots, checked as CreateMatch checks them.
    let checked = new_match(
        pb::CreateMatchRequest {
            config: r.config,
            bots: r.bots,
            ..Default::default()
        },
        &TimeControl::default(),
    )?;
    let free = checked.bots.iter().filter(|b| b.is_none()).count();
    if free != 1 {
        return Err(invalid(
            pb::ErrorReason::InvalidSetup,
            format!(
                "a public match seats one person and built-in bots on every other seat: \
                 {free} of its {} seats have no bot (give bots for all seats but one)",
                config.seats
            ),
        ));
    }
    let bad = |m: String| invalid(pb::ErrorReason::InvalidArgument, m);
    let clock = match r.time_control {
        None => pb::TimeControl {
            untimed: true,
            ..Default::default()
        },
        Some(c) => c,
    };
    if !clock.untimed {
        if clock.decision_ms < PUBLIC_MIN_DECISION_MS || clock.decision_ms > PUBLIC_MAX_DECISION_MS
        {
            return Err(bad(format!(
                "time_control.decision_ms {}: a public match gives a person \
                 {PUBLIC_MIN_DECISION_MS} to {PUBLIC_MAX_DECISION_MS} ms per decision (or set \
                 untimed)",
                clock.decision_ms
            )));
        }
        if clock.bank_ms > PUBLIC_MAX_BANK_MS {
            return Err(bad(format!(
                "time_control.bank_ms {} is more than {PUBLIC_MAX_BANK_MS} ms",
                clock.bank_ms
            )));
        }
    }
    if clock.disconnect_grace_ms > PUBLIC_GRACE_MS.1 {
        return Err(bad(format!(
            "time_control.disconnect_grace_ms {} is more than {} ms",
            clock.disconnect_grace_ms, PUBLIC_GRACE_MS.1
        )));
    }
    match pb::GiveUpPolicy::try_from(clock.give_up) {
        Ok(pb::GiveUpPolicy::Unspecified | pb::GiveUpPolicy::BotUntilBack) => {}
        _ => {
            return Err(bad(format!(
                "time_control.give_up {}: in a public match a bot plays the person's seat \
                 while they are away, until they are back (GIVE_UP_POLICY_BOT_UNTIL_BACK, or \
                 unset)",
                clock.give_up
            )));
        }
    }
    let clock = pb::TimeControl {
        disconnect_grace_ms: match clock.disconnect_grace_ms {
            0 => PUBLIC_GRACE_MS.0,
            ms => ms,
        },
        give_up: pb::GiveUpPolicy::BotUntilBack as i32,
        ..clock
    };
    Ok(NewMatch {
        config,
        seed: rand::random(),
        start: None,
        clock: TimeControl::from_wire(Some(&clock), &TimeControl::default())?,
        bots: checked.bots,
        rated: false,
        label: PUBLIC_LABEL.to_string(),
        join_timeout: Some(PUBLIC_JOIN_TIMEOUT),
        sealed: false,
        names: Vec::new(),
    })
}

/// The refusal of a sealed match's replay.
fn sealed_status() -> Status {
    wire::status(
        pb::ErrorReason::Sealed,
        "the match is sealed: its replay stays closed until the operator reveals it \
         (RevealMatch); GetResult has its report meanwhile",
    )
}

/// The longest a match may wait for its seats to join (`CreateMatchRequest.join_timeout_ms`).
const MAX_JOIN_TIMEOUT_MS: u32 = 86_400_000;

#[tonic::async_trait]
impl MatchService for Matches {
    async fn create_match(
        &self,
        req: Request<pb::CreateMatchRequest>,
    ) -> Result<Response<pb::CreateMatchResponse>, Status> {
        self.operator(&req)?;
        let m = new_match(req.into_inner(), &self.registry.config.default_time_control)?;
        let (response, _) = self.registry.create(m)?;
        tracing::info!(match_id = %response.match_id, "match created");
        Ok(Response::new(response))
    }

    async fn create_public_match(
        &self,
        req: Request<pb::CreatePublicMatchRequest>,
    ) -> Result<Response<pb::CreateMatchResponse>, Status> {
        if !self.registry.config.public_play {
            return Err(wire::status(
                pb::ErrorReason::PermissionDenied,
                "public play is off on this server: its operator starts it with \
                 `maumau serve --public-play` (config key `public_play`)",
            ));
        }
        if !self.public_limit.allow(req.remote_addr()) {
            return Err(wire::status(
                pb::ErrorReason::RateLimited,
                format!(
                    "too many public matches from this address (at most {} a minute); wait and \
                     retry",
                    self.public_limit.limit()
                ),
            ));
        }
        let m = public_match(req.into_inner())?;
        use std::sync::atomic::Ordering::SeqCst;
        let max = self.registry.config.public_play_max_open;
        // Taken before the match is created, so that concurrent calls cannot pass the cap.
        if self
            .public_open
            .fetch_update(SeqCst, SeqCst, |n| (n < max).then_some(n + 1))
            .is_err()
        {
            return Err(wire::status(
                pb::ErrorReason::Unavailable,
                format!("the server already holds its {max} public matches; retry later"),
            ));
        }
        let (response, entry) = match self.registry.create(m) {
            Ok(created) => created,
            Err(e) => {
                self.public_open.fetch_sub(1, SeqCst);
                return Err(e);
            }
        };
        let open = self.public_open.clone();
        tokio::spawn(async move {
            entry.ended().await;
            open.fetch_sub(1, SeqCst);
        });
        tracing::info!(match_id = %response.match_id, "public match created");
        Ok(Response::new(response))
    }

    async fn abort_match(
        &self,
        req: Request<pb::AbortMatchRequest>,
    ) -> Result<Response<pb::AbortMatchResponse>, Status> {
        self.operator(&req)?;
        let r = req.into_inner();
        let entry = self.entry(&r.match_id).await?;
        let reason = if r.reason.is_empty() {
            "aborted by the operator".into()
        } else {
            r.reason
        };
        entry.abort(reason).await;
        // The table records the end before it stops; wait for that, but not for a disk that
        // cannot be written (the answer then shows the match still open).
        let _ = tokio::time::timeout(std::time::Duration::from_millis(500), entry.ended()).await;
        Ok(Response::new(pb::AbortMatchResponse {
            status: entry.status() as i32,
        }))
    }

    async fn reveal_match(
        &self,
        req: Request<pb::RevealMatchRequest>,
    ) -> Result<Response<pb::RevealMatchResponse>, Status> {
        self.operator(&req)?;
        let id = req.into_inner().match_id;
        let was_sealed = self.registry.reveal(&id).await?;
        if was_sealed {
            tracing::info!(match_id = %id, "match revealed");
        }
        Ok(Response::new(pb::RevealMatchResponse { was_sealed }))
    }

    async fn list_matches(
        &self,
        req: Request<pb::ListMatchesRequest>,
    ) -> Result<Response<pb::ListMatchesResponse>, Status> {
        let r = req.into_inner();
        let start = if r.page_token.is_empty() {
            0
        } else {
            r.page_token
                .parse()
                .map_err(|_| invalid(pb::ErrorReason::InvalidArgument, "bad page_token"))?
        };
        let size = match r.page_size {
            0 => 50,
            n => n.min(500) as usize,
        };
        let status = match pb::MatchStatus::try_from(r.status) {
            Ok(pb::MatchStatus::Unspecified) => None,
            Ok(s) => Some(s),
            Err(_) => {
                return Err(invalid(
                    pb::ErrorReason::InvalidArgument,
                    format!(
                        "status = {} is not a MatchStatus; leave it unset (0) to list every match",
                        r.status
                    ),
                ));
            }
        };
        let (matches, next) = self.registry.list(start, size, status).await;
        Ok(Response::new(pb::ListMatchesResponse {
            matches,
            next_page_token: next.map(|n| n.to_string()).unwrap_or_default(),
        }))
    }

    async fn get_match(
        &self,
        req: Request<pb::GetMatchRequest>,
    ) -> Result<Response<pb::GetMatchResponse>, Status> {
        let entry = self.entry(&req.into_inner().match_id).await?;
        Ok(Response::new(pb::GetMatchResponse {
            r#match: Some(entry.summary()),
        }))
    }

    async fn get_result(
        &self,
        req: Request<pb::GetResultRequest>,
    ) -> Result<Response<pb::GetResultResponse>, Status> {
        let operator = self.is_operator(&req);
        let entry = self.entry(&req.into_inner().match_id).await?;
        let report = match operator {
            true => entry.report(),
            false => entry.public_report(),
        };
        let report = report.ok_or_else(|| {
            invalid(
                pb::ErrorReason::MatchNotFinished,
                "the match is still being played",
            )
        })?;
        Ok(Response::new(pb::GetResultResponse {
            report: Some(report),
        }))
    }

    async fn get_replay(
        &self,
        req: Request<pb::GetReplayRequest>,
    ) -> Result<Response<pb::GetReplayResponse>, Status> {
        let operator = self.is_operator(&req);
        let entry = self.entry(&req.into_inner().match_id).await?;
        if entry.replay_pruned() {
            return Err(wire::status(
                pb::ErrorReason::ReplayPruned,
                "replay pruned: the operator deleted this match's replay; GetResult still has \
                 its result",
            ));
        }
        let replay = entry.replay().ok_or_else(|| {
            invalid(
                pb::ErrorReason::MatchNotFinished,
                "the replay is available when the match ends",
            )
        })?;
        if !operator && entry.sealed() {
            return Err(sealed_status());
        }
        Ok(Response::new(pb::GetReplayResponse {
            replay: Some(replay),
        }))
    }

    async fn verify_replay(
        &self,
        req: Request<pb::VerifyReplayRequest>,
    ) -> Result<Response<pb::VerifyReplayResponse>, Status> {
        let replay = req
            .into_inner()
            .replay
            .ok_or_else(|| invalid(pb::ErrorReason::InvalidReplay, "no replay"))?;
        Ok(Response::new(maumau::replay::verify(&replay)))
    }
}
