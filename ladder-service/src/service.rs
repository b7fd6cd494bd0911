//! The gRPC calls of `maumau.v1.LadderService`.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use maumau::pb;
use maumau::pb::ladder_service_server::LadderService;
use maumau_ladder::keys::SecretKey;
use maumau_ladder::matchmaking::Format;
use maumau_ladder::store::{KeySubject, MatchState, SanctionTarget, Season};
use maumau_ladder::{
    BotId, Ladder, LadderError, Lobby, MatchId, OwnerId, Principal, Store, VersionId,
};
use maumau_rating::Rating;
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use super::{Hub, check_format, now_ms, refuse, status_to_wire};
use maumau_server::{bearer, echo};

/// Most matches one lobby may declare at once.
const MAX_LOBBY_MATCHES: u32 = 64;

/// The ladder service.
pub(crate) struct LadderApi {
    pub(crate) hub: Arc<Hub>,
}

/// The wire form of a rating.
pub(crate) fn rating_to_wire(r: &Rating) -> pb::Rating {
    let (low, high) = r.interval95();
    pb::Rating {
        mu: r.mu,
        sigma: r.sigma,
        score: r.score(),
        interval_low: low,
        interval_high: high,
    }
}

fn invalid(message: impl Into<String>) -> Status {
    refuse(
        pb::LadderErrorReason::Invalid,
        Some(pb::ErrorReason::InvalidArgument),
        message,
    )
}

/// The key in `authorization: Bearer KEY`, or a BAD_KEY refusal.
fn key_of<T>(req: &Request<T>) -> Result<String, Status> {
    bearer(req).ok_or_else(|| {
        refuse(
            pb::LadderErrorReason::BadKey,
            Some(pb::ErrorReason::BadToken),
            "this call needs `authorization: Bearer OWNER_KEY`",
        )
    })
}

fn target_from_wire(t: Option<&pb::SanctionTarget>) -> Result<SanctionTarget, Status> {
    let t = t.ok_or_else(|| invalid("target is required"))?;
    Ok(match t.kind() {
        pb::SanctionTargetKind::Owner => SanctionTarget::Owner(OwnerId(t.id)),
        pb::SanctionTargetKind::Bot => SanctionTarget::Bot(BotId(t.id)),
        pb::SanctionTargetKind::Version => SanctionTarget::Version(VersionId(t.id)),
        pb::SanctionTargetKind::Unspecified => return Err(invalid("target kind is required")),
    })
}

/// Checks that the target exists, so a typo is refused rather than recorded.
fn check_target(l: &Ladder<dyn Store>, t: SanctionTarget) -> maumau_ladder::Result<()> {
    match t {
        SanctionTarget::Owner(o) => l.store().owner(o).map(|_| ()),
        SanctionTarget::Bot(b) => l.store().bot(b).map(|_| ()),
        SanctionTarget::Version(v) => l.store().version(v).map(|_| ()),
    }
}

fn reason_or(reason: String, default: &str) -> String {
    if reason.trim().is_empty() {
        default.to_string()
    } else {
        reason.chars().take(500).collect()
    }
}

/// Where every live version under `target` stands now, after an operator's sanction changed:
/// the notices its lobby is told (`LobbyNotice`), with `why` as the reason when its status gives
/// none (an active version: "unbanned by the operator"). Retired versions hold no lobby.
fn standings_after_sanction(
    l: &Ladder<dyn Store>,
    target: SanctionTarget,
    why: &str,
) -> maumau_ladder::Result<Vec<(VersionId, pb::LobbyNotice)>> {
    let store = l.store();
    let versions: Vec<VersionId> = match target {
        SanctionTarget::Version(v) => vec![v],
        SanctionTarget::Bot(b) => store.versions_of(b)?.iter().map(|v| v.id).collect(),
        SanctionTarget::Owner(o) => {
            let mut all = Vec::new();
            for b in store.bots_of(o)? {
                all.extend(store.versions_of(b.id)?.iter().map(|v| v.id));
            }
            all
        }
    };
    let mut notices = Vec::new();
    for v in versions {
        let (status, reason) = status_to_wire(&l.eligibility(v)?);
        if status == pb::VersionStatus::Retired {
            continue;
        }
        let reason = if reason.is_empty() {
            why.to_string()
        } else {
            reason
        };
        notices.push((
            v,
            pb::LobbyNotice {
                status: status as i32,
                reason,
            },
        ));
    }
    Ok(notices)
}

/// The season named `name`, or the open one (else the newest) when `name` is empty.
fn season_named(l: &Ladder<dyn Store>, name: &str) -> maumau_ladder::Result<Season> {
    let seasons = l.store().seasons()?;
    let found = if name.is_empty() {
        seasons
            .iter()
            .find(|s| s.closed_ms.is_none())
            .or(seasons.last())
    } else {
        seasons.iter().find(|s| s.name == name)
    };
    found.cloned().ok_or_else(|| LadderError::NotFound {
        what: "season",
        id: if name.is_empty() {
            "(none yet)".into()
        } else {
            echo(name)
        },
    })
}

fn state_to_wire(s: MatchState) -> pb::LadderMatchState {
    match s {
        MatchState::Scheduled => pb::LadderMatchState::Scheduled,
        MatchState::Running => pb::LadderMatchState::Running,
        MatchState::Finished => pb::LadderMatchState::Finished,
        MatchState::Aborted => pb::LadderMatchState::Aborted,
        MatchState::Void => pb::LadderMatchState::Void,
    }
}

impl LadderApi {
    /// Takes one registration from the budget of the owner whose key made a call that creates
    /// something (a bot, a version, a key). A key that is not a live owner key spends nothing:
    /// the call itself refuses it.
    async fn allow_owner_registration(&self, key: &str) -> Result<(), Status> {
        let key = key.to_string();
        let owner = self
            .hub
            .store(move |l| {
                Ok(match l.authenticate(&key) {
                    Ok(Principal::Owner(o)) => Some(o),
                    _ => None,
                })
            })
            .await?;
        match owner {
            Some(o) => self.hub.allow_owner_registration(o),
            None => Ok(()),
        }
    }

    /// Operator calls need the operator token when the server has one. An empty bearer never
    /// passes, whatever the server was given.
    /// Tells each version's lobby (on whichever node it is open) where it stands now.
    fn announce(&self, notices: Vec<(VersionId, pb::LobbyNotice)>) {
        for (version, notice) in notices {
            self.hub
                .tell(version, pb::lobby_response::Kind::Notice(notice));
        }
    }

    fn operator<T>(&self, req: &Request<T>) -> Result<(), Status> {
        match &self.hub.host.config().operator_token {
            None => Ok(()),
            Some(t) if maumau_server::operator_bearer(req, t) => Ok(()),
            Some(_) => Err(refuse(
                pb::LadderErrorReason::OperatorOnly,
                Some(pb::ErrorReason::PermissionDenied),
                "this call needs `authorization: Bearer <operator token>`",
            )),
        }
    }

    /// Reads and checks the first lobby message.
    async fn open_lobby(
        &self,
        meta_key: Option<String>,
        input: &mut Streaming<pb::LobbyRequest>,
    ) -> Result<(Lobby, pb::LobbyWelcome), Status> {
        let no_hello = || {
            refuse(
                pb::LadderErrorReason::NoHello,
                Some(pb::ErrorReason::NotJoined),
                "the first lobby message must be LobbyHello",
            )
        };
        let first = tokio::time::timeout(Duration::from_secs(30), input.message())
            .await
            .map_err(|_| no_hello())??;
        let Some(pb::LobbyRequest {
            kind: Some(pb::lobby_request::Kind::Hello(hello)),
        }) = first
        else {
            return Err(no_hello());
        };
        self.check_hello(meta_key, hello).await
    }

    /// Checks a lobby's hello (from a Lobby stream or a LobbyFeed request) and its key.
    async fn check_hello(
        &self,
        meta_key: Option<String>,
        hello: pb::LobbyHello,
    ) -> Result<(Lobby, pb::LobbyWelcome), Status> {
        let key = match (meta_key, hello.version_key.as_str()) {
            (Some(m), b) if !b.is_empty() && m != b => {
                return Err(refuse(
                    pb::LadderErrorReason::BadKey,
                    Some(pb::ErrorReason::BadToken),
                    "the key in the metadata and the one in LobbyHello differ",
                ));
            }
            (Some(m), _) => m,
            (None, "") => {
                return Err(refuse(
                    pb::LadderErrorReason::BadKey,
                    Some(pb::ErrorReason::BadToken),
                    "no version key: send it as `authorization: Bearer KEY` or in LobbyHello",
                ));
            }
            (None, b) => b.to_string(),
        };
        if hello.max_matches == 0 || hello.max_matches > MAX_LOBBY_MATCHES {
            return Err(invalid(format!(
                "max_matches must be between 1 and {MAX_LOBBY_MATCHES}"
            )));
        }
        if hello.profiles.is_empty() || hello.seats.is_empty() {
            return Err(invalid("name at least one profile and one table size"));
        }
        for p in &hello.profiles {
            p.parse::<maumau_engine::ProfileId>()
                .map_err(|_| invalid(format!("unknown profile {:?}", echo(p))))?;
        }
        let mut seats = Vec::new();
        for &s in &hello.seats {
            if !(2..=8).contains(&s) {
                return Err(invalid(format!("a table size of {s}: must be 2 to 8")));
            }
            seats.push(s as u8);
        }
        // Repeats mean nothing and would only make every matchmaking round slower.
        seats.sort_unstable();
        seats.dedup();
        let mut profiles = hello.profiles.clone();
        profiles.sort_unstable();
        profiles.dedup();
        let (info, eligibility, season) = self
            .hub
            .store(move |l| {
                let info = match l.authenticate(&key)? {
                    Principal::Version(v) => v,
                    Principal::Owner(_) => {
                        return Err(LadderError::Forbidden(
                            "a lobby needs a version key, not the owner key".into(),
                        ));
                    }
                };
                let eligibility = l.eligibility(info.version)?;
                let season = l.store().current_season()?.map(|s| s.name);
                Ok((info, eligibility, season))
            })
            .await?;
        let (status, reason) = status_to_wire(&eligibility);
        let lobby = Lobby {
            version: info.version,
            max_matches: hello.max_matches,
            profiles,
            seats,
        };
        let welcome = pb::LobbyWelcome {
            version_id: info.version.0,
            bot_id: info.bot.0,
            season: season.unwrap_or_default(),
            status: status as i32,
            reason,
        };
        Ok((lobby, welcome))
    }

    /// Opens a checked lobby: sends the welcome and attaches it to the hub. Returns the stream's
    /// sender (for the caller's task), the connection id, and the receiver that completes when
    /// the server closes the lobby.
    async fn attach_lobby(
        &self,
        lobby: Lobby,
        welcome: pb::LobbyWelcome,
    ) -> Result<
        (
            LobbyStream,
            u64,
            tokio::sync::oneshot::Receiver<()>,
            LobbySender,
        ),
        Status,
    > {
        let (tx, rx) = mpsc::channel(256);
        let _ = tx
            .send(Ok(pb::LobbyResponse {
                kind: Some(pb::lobby_response::Kind::Welcome(welcome)),
            }))
            .await;
        let Some((conn, on_close)) = self.hub.attach(lobby, tx.clone()) else {
            return Err(refuse(
                pb::LadderErrorReason::State,
                Some(pb::ErrorReason::Unavailable),
                "the server is shutting down",
            ));
        };
        Ok((ReceiverStream::new(rx), conn, on_close, tx))
    }

    /// The version a version key (in the metadata or `in_request`) speaks for.
    async fn version_of(
        &self,
        meta_key: Option<String>,
        in_request: String,
    ) -> Result<VersionId, Status> {
        let key = match (meta_key, in_request) {
            (Some(m), b) if !b.is_empty() && m != b => {
                return Err(refuse(
                    pb::LadderErrorReason::BadKey,
                    Some(pb::ErrorReason::BadToken),
                    "the key in the metadata and the one in the request differ",
                ));
            }
            (Some(m), _) => m,
            (None, b) if b.is_empty() => {
                return Err(refuse(
                    pb::LadderErrorReason::BadKey,
                    Some(pb::ErrorReason::BadToken),
                    "no version key: send it as `authorization: Bearer KEY` or in the request",
                ));
            }
            (None, b) => b,
        };
        self.hub
            .store(move |l| match l.authenticate(&key)? {
                Principal::Version(v) => Ok(v.version),
                Principal::Owner(_) => Err(LadderError::Forbidden(
                    "this needs a version key, not the owner key".into(),
                )),
            })
            .await
    }
}

type LobbySender = mpsc::Sender<Result<pb::LobbyResponse, Status>>;

type LobbyStream = ReceiverStream<Result<pb::LobbyResponse, Status>>;

#[tonic::async_trait]
impl LadderService for LadderApi {
    async fn register_owner(
        &self,
        req: Request<pb::RegisterOwnerRequest>,
    ) -> Result<Response<pb::RegisterOwnerResponse>, Status> {
        self.hub.allow_registration(req.remote_addr())?;
        let r = req.into_inner();
        let name = r.name.trim().to_string();
        if name.is_empty() || name.chars().count() > 64 {
            return Err(invalid("name must be 1 to 64 characters"));
        }
        let code = (!r.invitation_code.is_empty()).then_some(r.invitation_code);
        let (id, key) = self
            .hub
            .store(move |l| l.register_owner(&name, code.as_deref(), now_ms()))
            .await?;
        Ok(Response::new(pb::RegisterOwnerResponse {
            owner_id: id.0,
            owner_key: key.as_str().to_string(),
        }))
    }

    async fn register_bot(
        &self,
        req: Request<pb::RegisterBotRequest>,
    ) -> Result<Response<pb::RegisterBotResponse>, Status> {
        self.hub.allow_registration(req.remote_addr())?;
        let key = key_of(&req)?;
        self.allow_owner_registration(&key).await?;
        let name = req.into_inner().name.trim().to_string();
        if name.is_empty() || name.chars().count() > 64 {
            return Err(invalid("name must be 1 to 64 characters"));
        }
        let id = self
            .hub
            .store(move |l| l.register_bot(&key, &name, now_ms()))
            .await?;
        Ok(Response::new(pb::RegisterBotResponse { bot_id: id.0 }))
    }

    async fn add_version(
        &self,
        req: Request<pb::AddVersionRequest>,
    ) -> Result<Response<pb::AddVersionResponse>, Status> {
        self.hub.allow_registration(req.remote_addr())?;
        let key = key_of(&req)?;
        self.allow_owner_registration(&key).await?;
        let r = req.into_inner();
        let label = r.label.trim().to_string();
        if label.is_empty() || label.chars().count() > 64 {
            return Err(invalid("label must be 1 to 64 characters"));
        }
        let v = self
            .hub
            .store(move |l| l.add_version(&key, BotId(r.bot_id), &label, now_ms()))
            .await?;
        Ok(Response::new(pb::AddVersionResponse {
            version_id: v.version.0,
            version_key: v.key.as_str().to_string(),
            retired_version_ids: v.retired.iter().map(|r| r.0).collect(),
        }))
    }

    async fn rotate_key(
        &self,
        req: Request<pb::RotateKeyRequest>,
    ) -> Result<Response<pb::RotateKeyResponse>, Status> {
        self.hub.allow_registration(req.remote_addr())?;
        let key = key_of(&req)?;
        self.allow_owner_registration(&key).await?;
        let version = req.into_inner().version_id;
        let new: SecretKey = self
            .hub
            .store(move |l| {
                let subject = if version == 0 {
                    match l.authenticate(&key)? {
                        Principal::Owner(o) => KeySubject::Owner(o),
                        Principal::Version(_) => {
                            return Err(LadderError::Forbidden(
                                "this needs the owner key, not a version key".into(),
                            ));
                        }
                    }
                } else {
                    KeySubject::Version(VersionId(version))
                };
                l.rotate_key(&key, subject, now_ms())
            })
            .await?;
        Ok(Response::new(pb::RotateKeyResponse {
            key: new.as_str().to_string(),
        }))
    }

    async fn revoke_key(
        &self,
        req: Request<pb::RevokeKeyRequest>,
    ) -> Result<Response<pb::RevokeKeyResponse>, Status> {
        let key = key_of(&req)?;
        let version = VersionId(req.into_inner().version_id);
        let n = self
            .hub
            .store(move |l| l.revoke_version_keys(&key, version, now_ms()))
            .await?;
        Ok(Response::new(pb::RevokeKeyResponse { revoked: n as u32 }))
    }

    type LobbyStream = LobbyStream;

    async fn lobby(
        &self,
        req: Request<Streaming<pb::LobbyRequest>>,
    ) -> Result<Response<LobbyStream>, Status> {
        let meta_key = bearer(&req);
        let mut input = req.into_inner();
        let (lobby, welcome) = self.open_lobby(meta_key, &mut input).await?;
        let version = lobby.version;
        // Only the hub keeps a sender: the stream ends when the hub lets go of the lobby.
        let (stream, conn, mut on_close, _) = self.attach_lobby(lobby, welcome).await?;
        tracing::info!(version = %version, "lobby open");
        let hub = self.hub.clone();
        tokio::spawn(async move {
            loop {
                let message = tokio::select! {
                    m = input.message() => m,
                    // Closed by the server (drained, replaced, shutting down): stop reading.
                    _ = &mut on_close => break,
                };
                match message {
                    Ok(Some(pb::LobbyRequest {
                        kind: Some(pb::lobby_request::Kind::Drain(_)),
                    })) => hub.drain(version, conn),
                    // A second hello or an empty message changes nothing.
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
            hub.detach(version, conn);
            tracing::info!(version = %version, "lobby closed");
        });
        Ok(Response::new(stream))
    }

    async fn get_leaderboard(
        &self,
        req: Request<pb::GetLeaderboardRequest>,
    ) -> Result<Response<pb::GetLeaderboardResponse>, Status> {
        let r = req.into_inner();
        r.profile
            .parse::<maumau_engine::ProfileId>()
            .map_err(|_| invalid(format!("unknown profile {:?}", echo(&r.profile))))?;
        let start: usize = if r.page_token.is_empty() {
            0
        } else {
            r.page_token
                .parse()
                .map_err(|_| invalid("bad page_token"))?
        };
        let size = match r.page_size {
            0 => 50,
            n => n.min(500) as usize,
        };
        let profile = r.profile.clone();
        let (season, board, house) = self
            .hub
            .store(move |l| {
                let season = season_named(l, &r.season)?;
                let board = l.leaderboard(season.id, &profile)?;
                // The house bots' bots, to mark their lines.
                let house: HashSet<BotId> = match l.house_owner()? {
                    Some(o) => l.store().bots_of(o)?.into_iter().map(|b| b.id).collect(),
                    None => HashSet::new(),
                };
                Ok((season.name, board, house))
            })
            .await?;
        let lines: Vec<pb::Standing> = board
            .ranked
            .iter()
            .map(|s| (s, false))
            .chain(board.provisional.iter().map(|s| (s, true)))
            .map(|(s, provisional)| pb::Standing {
                rank: s.rank as u32,
                bot_id: s.bot.0,
                bot_name: s.bot_name.clone(),
                version_id: s.version.0,
                version_label: s.label.clone(),
                rating: Some(rating_to_wire(&s.rating)),
                matches: s.matches,
                provisional,
                house: house.contains(&s.bot),
            })
            .collect();
        if start > lines.len() {
            return Err(invalid(format!(
                "page_token {start} is past the end of the board ({} lines)",
                lines.len()
            )));
        }
        let end = start.saturating_add(size).min(lines.len());
        let page = lines[start..end].to_vec();
        Ok(Response::new(pb::GetLeaderboardResponse {
            season,
            profile: r.profile,
            standings: page,
            next_page_token: if end < lines.len() {
                end.to_string()
            } else {
                String::new()
            },
        }))
    }

    async fn get_bot(
        &self,
        req: Request<pb::GetBotRequest>,
    ) -> Result<Response<pb::GetBotResponse>, Status> {
        let r = req.into_inner();
        let limit = match r.history_limit {
            0 => 20,
            n => n.min(200) as usize,
        };
        // Which tables this server has (it may read the server's archive: on the store's thread).
        let here = self.hub.clone();
        let mut response = self
            .hub
            .store(move |l| {
                let bot = l.store().bot(BotId(r.bot_id))?;
                let owner = l.store().owner(bot.owner)?;
                let season = season_named(l, &r.season).ok();
                let ratings = match &season {
                    Some(s) => l.store().ratings(s.id)?,
                    None => Vec::new(),
                };
                let mut versions = Vec::new();
                for v in l.store().versions_of(bot.id)? {
                    let (status, reason) = status_to_wire(&l.eligibility(v.id)?);
                    let mut history = Vec::new();
                    for h in l.store().seat_history(v.id, None, limit)? {
                        let m = l.store().match_record(h.match_id)?;
                        let placing = m
                            .seats
                            .iter()
                            .find(|s| s.version == v.id)
                            .and_then(|s| s.placing)
                            .unwrap_or(0);
                        let table = here.table_here(m.server_match_id.as_deref());
                        history.push(pb::HistoryEntry {
                            ladder_match_id: m.id.0,
                            match_id: table.unwrap_or_default().to_string(),
                            state: state_to_wire(h.state) as i32,
                            profile: m.profile.clone(),
                            seats: m.seats.len() as u32,
                            placing: placing.into(),
                            joined: h.outcome.joined,
                            timeouts: h.outcome.timeouts,
                            rejections: h.outcome.rejections,
                            ended_unix_ms: h.ended_ms.max(0) as u64,
                            reason: m.reason.clone().unwrap_or_default(),
                            replay_pruned: here.replay_pruned(table),
                            validation: !m.rated && m.seats.len() == 1,
                        });
                    }
                    let validations = l
                        .store()
                        .validations_of(v.id)?
                        .into_iter()
                        .map(|x| pb::ValidationResult {
                            ladder_match_id: x.match_id.0,
                            match_id: here
                                .table_here(x.server_match_id.as_deref())
                                .unwrap_or_default()
                                .to_string(),
                            profile: x.profile,
                            passed: x.passed,
                            reasons: x.reasons,
                            ended_unix_ms: x.ended_ms.max(0) as u64,
                        })
                        .collect();
                    versions.push(pb::BotVersion {
                        version_id: v.id.0,
                        label: v.label.clone(),
                        created_unix_ms: v.created_ms.max(0) as u64,
                        status: status as i32,
                        reason,
                        ratings: ratings
                            .iter()
                            .filter(|row| row.version == v.id)
                            .map(|row| pb::ProfileRating {
                                profile: row.profile.clone(),
                                rating: Some(rating_to_wire(&row.state.rating)),
                                matches: row.state.matches,
                                provisional: row.state.is_provisional(&l.config().rating),
                            })
                            .collect(),
                        history,
                        validations,
                        waiting: None,
                    });
                }
                let house = l.is_house(owner.id)?;
                Ok(pb::GetBotResponse {
                    house,
                    bot_id: bot.id.0,
                    name: bot.name,
                    owner_id: owner.id.0,
                    owner_name: owner.name,
                    season: season.map(|s| s.name).unwrap_or_default(),
                    versions,
                })
            })
            .await?;
        for v in &mut response.versions {
            v.waiting = self.hub.waiting_of(VersionId(v.version_id));
        }
        Ok(Response::new(response))
    }

    async fn ban(&self, req: Request<pb::BanRequest>) -> Result<Response<pb::BanResponse>, Status> {
        self.operator(&req)?;
        let r = req.into_inner();
        let target = target_from_wire(r.target.as_ref())?;
        let reason = reason_or(r.reason, "banned by the operator");
        let (id, notices) = self
            .hub
            .store(move |l| {
                check_target(l, target)?;
                let id = l.ban(target, &reason, now_ms())?;
                Ok((id, standings_after_sanction(l, target, &reason)?))
            })
            .await?;
        self.announce(notices);
        self.hub.wake.notify_one();
        Ok(Response::new(pb::BanResponse { sanction_id: id.0 }))
    }

    async fn unban(
        &self,
        req: Request<pb::UnbanRequest>,
    ) -> Result<Response<pb::UnbanResponse>, Status> {
        self.operator(&req)?;
        let r = req.into_inner();
        let target = target_from_wire(r.target.as_ref())?;
        let reason = reason_or(r.reason, "unbanned by the operator");
        let (lifted, notices) = self
            .hub
            .store(move |l| {
                check_target(l, target)?;
                let lifted = l.unban(target, &reason, now_ms())?;
                Ok((lifted, standings_after_sanction(l, target, &reason)?))
            })
            .await?;
        if !lifted.is_empty() {
            self.announce(notices);
        }
        self.hub.wake.notify_one();
        Ok(Response::new(pb::UnbanResponse {
            lifted: lifted.len() as u32,
        }))
    }

    async fn pause(
        &self,
        req: Request<pb::PauseRequest>,
    ) -> Result<Response<pb::PauseResponse>, Status> {
        self.operator(&req)?;
        let r = req.into_inner();
        let target = target_from_wire(r.target.as_ref())?;
        let reason = reason_or(r.reason, "paused by the operator");
        let (id, notices) = self
            .hub
            .store(move |l| {
                check_target(l, target)?;
                let id = l.pause(target, &reason, now_ms())?;
                Ok((id, standings_after_sanction(l, target, &reason)?))
            })
            .await?;
        self.announce(notices);
        Ok(Response::new(pb::PauseResponse { sanction_id: id.0 }))
    }

    async fn resume(
        &self,
        req: Request<pb::ResumeRequest>,
    ) -> Result<Response<pb::ResumeResponse>, Status> {
        self.operator(&req)?;
        let r = req.into_inner();
        let target = target_from_wire(r.target.as_ref())?;
        let reason = reason_or(r.reason, "resumed by the operator");
        let (lifted, notices) = self
            .hub
            .store(move |l| {
                check_target(l, target)?;
                let lifted = l.resume(target, &reason, now_ms())?;
                Ok((lifted, standings_after_sanction(l, target, &reason)?))
            })
            .await?;
        if !lifted.is_empty() {
            self.announce(notices);
        }
        self.hub.wake.notify_one();
        Ok(Response::new(pb::ResumeResponse {
            lifted: lifted.len() as u32,
        }))
    }

    async fn resume_version(
        &self,
        req: Request<pb::ResumeVersionRequest>,
    ) -> Result<Response<pb::ResumeVersionResponse>, Status> {
        let key = key_of(&req)?;
        let version = VersionId(req.into_inner().version_id);
        let (lifted, now) = self
            .hub
            .store(move |l| {
                let lifted = l.owner_resume(&key, version, now_ms())?;
                Ok((lifted, l.eligibility(version)?))
            })
            .await?;
        if !lifted.is_empty() {
            let (status, why) = status_to_wire(&now);
            let reason = if why.is_empty() {
                "its owner lifted the health pause".into()
            } else {
                why
            };
            self.hub.tell(
                version,
                pb::lobby_response::Kind::Notice(pb::LobbyNotice {
                    status: status as i32,
                    reason,
                }),
            );
            self.hub.wake.notify_one();
        }
        Ok(Response::new(pb::ResumeVersionResponse {
            lifted: lifted.len() as u32,
        }))
    }

    async fn void_match(
        &self,
        req: Request<pb::VoidMatchRequest>,
    ) -> Result<Response<pb::VoidMatchResponse>, Status> {
        self.operator(&req)?;
        let r = req.into_inner();
        let reason = reason_or(r.reason, "voided by the operator");
        let changes = self
            .hub
            .store(move |l| l.void_match(MatchId(r.ladder_match_id), &reason, now_ms()))
            .await?;
        Ok(Response::new(pb::VoidMatchResponse {
            ratings_changed: changes.len() as u32,
        }))
    }

    async fn close_season(
        &self,
        req: Request<pb::CloseSeasonRequest>,
    ) -> Result<Response<pb::CloseSeasonResponse>, Status> {
        self.operator(&req)?;
        let name = self
            .hub
            .store(|l| {
                let s = l
                    .store()
                    .current_season()?
                    .ok_or_else(|| LadderError::State("no season is open".into()))?;
                l.store().close_season(s.id, now_ms())?;
                Ok(s.name)
            })
            .await?;
        Ok(Response::new(pb::CloseSeasonResponse { season: name }))
    }

    async fn open_season(
        &self,
        req: Request<pb::OpenSeasonRequest>,
    ) -> Result<Response<pb::OpenSeasonResponse>, Status> {
        self.operator(&req)?;
        let name = req.into_inner().name.trim().to_string();
        if name.is_empty() || name.chars().count() > 64 {
            return Err(invalid("name must be 1 to 64 characters"));
        }
        let opened = name.clone();
        self.hub
            .store(move |l| l.store().open_season(&name, now_ms()))
            .await?;
        self.hub.wake.notify_one();
        Ok(Response::new(pb::OpenSeasonResponse { season: opened }))
    }

    async fn set_formats(
        &self,
        req: Request<pb::SetFormatsRequest>,
    ) -> Result<Response<pb::SetFormatsResponse>, Status> {
        self.operator(&req)?;
        let mut formats = Vec::new();
        for f in req.into_inner().formats {
            let seats = u8::try_from(f.seats).map_err(|_| invalid("seats out of range"))?;
            check_format(&f.profile, seats).map_err(invalid)?;
            if !f.weight.is_finite() || f.weight < 0.0 {
                return Err(invalid("weights must be finite and not negative"));
            }
            formats.push(Format {
                profile: f.profile,
                seats,
                weight: f.weight,
            });
        }
        if !formats.iter().any(|f| f.weight > 0.0) {
            return Err(invalid("at least one format needs a positive weight"));
        }
        let wire = formats
            .iter()
            .map(|f| pb::LadderFormat {
                profile: f.profile.clone(),
                seats: f.seats.into(),
                weight: f.weight,
            })
            .collect();
        // Stored: they outlive a restart, and every node's matchmaker and pages read them.
        self.hub
            .store(move |l| l.store().set_formats(&formats, now_ms()))
            .await?;
        self.hub.wake.notify_one();
        Ok(Response::new(pb::SetFormatsResponse { formats: wire }))
    }
    type LobbyFeedStream = LobbyStream;

    async fn lobby_feed(
        &self,
        req: Request<pb::LobbyFeedRequest>,
    ) -> Result<Response<LobbyStream>, Status> {
        let meta_key = bearer(&req);
        let hello = req.into_inner().hello.ok_or_else(|| {
            refuse(
                pb::LadderErrorReason::NoHello,
                Some(pb::ErrorReason::NotJoined),
                "LobbyFeedRequest needs its hello",
            )
        })?;
        let (lobby, welcome) = self.check_hello(meta_key, hello).await?;
        let version = lobby.version;
        let (stream, conn, mut on_close, tx) = self.attach_lobby(lobby, welcome).await?;
        tracing::info!(version = %version, "lobby feed open");
        let hub = self.hub.clone();
        tokio::spawn(async move {
            // Until the server closes the lobby (drained, replaced, shutting down) or the client
            // goes away (the response stream is dropped). Then this task's sender goes, so the
            // stream ends once the hub has let go of the lobby too.
            tokio::select! {
                _ = &mut on_close => {}
                _ = tx.closed() => {}
            }
            drop(tx);
            hub.detach(version, conn);
            tracing::info!(version = %version, "lobby feed closed");
        });
        Ok(Response::new(stream))
    }

    async fn drain_lobby(
        &self,
        req: Request<pb::DrainLobbyRequest>,
    ) -> Result<Response<pb::DrainLobbyResponse>, Status> {
        let meta_key = bearer(&req);
        let version = self
            .version_of(meta_key, req.into_inner().version_key)
            .await?;
        let (was_open, matches_in_flight) = self.hub.drain_open(version);
        Ok(Response::new(pb::DrainLobbyResponse {
            was_open,
            matches_in_flight,
        }))
    }

    async fn withdraw_seat(
        &self,
        req: Request<pb::WithdrawSeatRequest>,
    ) -> Result<Response<pb::WithdrawSeatResponse>, Status> {
        let meta_key = bearer(&req);
        let r = req.into_inner();
        let version = self.version_of(meta_key, r.version_key).await?;
        let withdrawn = self
            .hub
            .withdrawals
            .withdraw(MatchId(r.ladder_match_id), r.seat as usize, version)
            .is_some();
        if withdrawn {
            tracing::info!(ladder_match = r.ladder_match_id, seat = r.seat, version = %version, "a lobby withdrew a seat");
        }
        Ok(Response::new(pb::WithdrawSeatResponse { withdrawn }))
    }

    async fn prune_replays(
        &self,
        req: Request<pb::PruneReplaysRequest>,
    ) -> Result<Response<pb::PruneReplaysResponse>, Status> {
        self.operator(&req)?;
        let r = req.into_inner();
        if r.older_than_seconds == 0 && r.keep_newest.is_none() {
            return Err(invalid(
                "say which replays to prune: older_than_seconds, keep_newest, or both",
            ));
        }
        let older_than =
            (r.older_than_seconds > 0).then(|| Duration::from_secs(r.older_than_seconds));
        let keep = r.keep_newest.map(|k| k as usize);
        let done = self.hub.prune_replays(older_than, keep, r.dry_run).await?;
        Ok(Response::new(pb::PruneReplaysResponse {
            pruned: done.pruned,
            kept: done.kept,
            bytes_freed: done.bytes_freed,
        }))
    }
}
