//! Holds a ladder lobby: opens `LadderService.Lobby` with a version key, plays every invitation
//! (several at once, up to `max_matches`), reports what happens, reconnects after a dropped
//! lobby with a growing delay, and drains on request (`LobbyDrain`: no new invitations, the
//! running matches finish, then it returns).
//!
//! ```no_run
//! # async fn demo() -> Result<(), maumau_bot_sdk::lobby::LobbyError> {
//! use maumau_bot_sdk::{bots::HeuristicBot, lobby::{LobbyOptions, play_ladder}};
//! let options = LobbyOptions::new("http://127.0.0.1:50051", "mmv_...");
//! let mut seed = 0;
//! play_ladder(
//!     &options,
//!     move |_invitation| { seed += 1; Box::new(HeuristicBot::new(seed)) },
//!     |event| eprintln!("{event}"),
//!     std::future::pending(), // or a Ctrl-C future: it drains the lobby when it completes
//! )
//! .await
//! # }
//! ```
//!
//! A tournament hands an entrant its matches the same way (`--entrant 'name=lobby:COMMAND'`): it
//! launches the program once with the lobby in [`LOBBY_ADDR_VAR`] and [`LOBBY_KEY_VAR`]
//! ([`LobbyOptions::from_env`] reads them) and, when it is over, closes the lobby for good
//! (`LobbyDrained` with `closed`), which ends [`hold`] as a drain does.
//!
//! [`hold`] is the general form: it hands each invitation to a function that plays it any way it
//! likes (`maumau bot --ladder -- COMMAND` launches a program there).

use std::fmt;
use std::future::Future;
use std::time::Duration;

use maumau::{pb, wire};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_stream::wrappers::ReceiverStream;

use crate::Bot;
use crate::runner::{RunOptions, run};

/// The first delay before reconnecting a dropped lobby; it doubles up to
/// [`LobbyOptions::max_backoff`] and starts over once a lobby is welcomed again.
const FIRST_BACKOFF: Duration = Duration::from_millis(250);

/// Where the lobby is and what the version plays.
#[derive(Clone, Debug)]
pub struct LobbyOptions {
    /// The ladder's server, e.g. `http://127.0.0.1:50051`.
    pub server: String,
    /// The version key (`mmv_...`) from AddVersion or `maumau ladder register`.
    pub key: String,
    /// Matches played at once (1 to 64).
    pub max_matches: u32,
    /// Rule profiles accepted, by name.
    pub profiles: Vec<String>,
    /// Table sizes accepted.
    pub seats: Vec<u32>,
    /// The name the seats show to operators and spectators.
    pub name: String,
    /// The longest delay between two reconnection attempts.
    pub max_backoff: Duration,
}

/// The environment variable that holds the lobby's server (`http://host:port`) when a
/// tournament launched the bot (`--entrant 'name=lobby:COMMAND'`).
pub const LOBBY_ADDR_VAR: &str = "MAUMAU_LOBBY_ADDR";
/// The environment variable that holds the lobby's key when a tournament launched the bot.
pub const LOBBY_KEY_VAR: &str = "MAUMAU_LOBBY_KEY";

impl LobbyOptions {
    /// The lobby a tournament launched this bot for ([`LOBBY_ADDR_VAR`] and [`LOBBY_KEY_VAR`]),
    /// with the defaults of [`LobbyOptions::new`]; `None` when either variable is unset. A bot
    /// written for the ladder that tries this first runs unchanged in a tournament.
    pub fn from_env() -> Option<LobbyOptions> {
        let addr = std::env::var(LOBBY_ADDR_VAR)
            .ok()
            .filter(|a| !a.is_empty())?;
        let key = std::env::var(LOBBY_KEY_VAR)
            .ok()
            .filter(|k| !k.is_empty())?;
        Some(LobbyOptions::new(addr, key))
    }

    /// One match at a time, every profile, tables of 2 to 4 seats.
    pub fn new(server: impl Into<String>, key: impl Into<String>) -> LobbyOptions {
        LobbyOptions {
            server: server.into(),
            key: key.into(),
            max_matches: 1,
            profiles: ["classic", "penalty-points", "brazilian", "romanian-32"]
                .map(String::from)
                .to_vec(),
            seats: vec![2, 3, 4],
            name: "rust-ladder-bot".into(),
            max_backoff: Duration::from_secs(30),
        }
    }
}

/// Something that happened in the lobby, for the caller to show; its `Display` is one line.
#[derive(Clone, Debug)]
pub enum LobbyEvent {
    /// The lobby is open (again, after a reconnect).
    Welcome(pb::LobbyWelcome),
    /// Why no invitation has come yet, and how many bots are online.
    Waiting(pb::LobbyWaiting),
    /// A match to play; it is being played now.
    Invitation(pb::Invitation),
    /// The ladder says a match of this version ended (with the rating after it, when rated).
    MatchEnded(pb::LadderMatchEnded),
    /// The version's status changed.
    Notice(pb::LobbyNotice),
    /// The local player of an invitation is done; `Err` says why it failed.
    Played {
        /// The invitation played.
        invitation: pb::Invitation,
        /// What the player reported.
        outcome: Result<(), String>,
    },
    /// The lobby dropped; it reconnects after `retry_in`.
    Dropped {
        /// Why it dropped.
        error: String,
        /// The delay before the next attempt.
        retry_in: Duration,
    },
    /// Draining: no new invitations; the running matches finish.
    Draining,
    /// The server confirmed the drain (every match of the version ended) and the local players
    /// are done: the last event.
    Drained,
}

/// The line that reports a [`pb::LobbyWaiting`]: `waiting: DETAIL (N bots online)`.
pub fn waiting_line(w: &pb::LobbyWaiting) -> String {
    let detail = if w.detail.is_empty() {
        w.reason()
            .as_str_name()
            .trim_start_matches("WAITING_REASON_")
            .to_lowercase()
    } else {
        w.detail.clone()
    };
    format!("waiting: {detail} ({} bots online)", w.bots_online)
}

fn status_name(status: pb::VersionStatus) -> String {
    status
        .as_str_name()
        .trim_start_matches("VERSION_STATUS_")
        .to_lowercase()
        .replace('_', " ")
}

impl fmt::Display for LobbyEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LobbyEvent::Welcome(w) => {
                write!(
                    f,
                    "lobby open: version {} of bot {}",
                    w.version_id, w.bot_id
                )?;
                if w.season.is_empty() {
                    write!(f, ", no season open")?;
                } else {
                    write!(f, ", season {}", w.season)?;
                }
                write!(f, ", status {}", status_name(w.status()))?;
                if !w.reason.is_empty() {
                    write!(f, " ({})", w.reason)?;
                }
                Ok(())
            }
            LobbyEvent::Waiting(w) => f.write_str(&waiting_line(w)),
            LobbyEvent::Invitation(i) => write!(
                f,
                "invitation: match {} ({}), {} with {} seats, seat {}{}",
                i.ladder_match_id,
                i.match_id,
                i.profile,
                i.seats,
                i.seat,
                if i.validation {
                    ", validation"
                } else if i.rated {
                    ", rated"
                } else {
                    ", unrated"
                }
            ),
            LobbyEvent::MatchEnded(e) => {
                write!(f, "match {} ({}) ", e.ladder_match_id, e.match_id)?;
                if e.finished {
                    write!(f, "finished: placing {}", e.placing)?;
                } else {
                    write!(f, "aborted")?;
                }
                if e.validation {
                    write!(f, ", validation")?;
                }
                if let Some(r) = e.rating.as_ref().filter(|_| e.rated) {
                    write!(f, ", rating")?;
                    if !e.profile.is_empty() {
                        write!(f, " in {}", e.profile)?;
                    }
                    write!(f, " μ {:.2} σ {:.2} (score {:.2})", r.mu, r.sigma, r.score)?;
                }
                if !e.reason.is_empty() {
                    write!(f, ": {}", e.reason)?;
                }
                Ok(())
            }
            LobbyEvent::Notice(n) => {
                write!(f, "status: {}", status_name(n.status()))?;
                if !n.reason.is_empty() {
                    write!(f, " ({})", n.reason)?;
                }
                Ok(())
            }
            LobbyEvent::Played {
                invitation,
                outcome,
            } => match outcome {
                Ok(()) => write!(f, "played match {}", invitation.ladder_match_id),
                Err(e) => write!(f, "match {}: failed: {e}", invitation.ladder_match_id),
            },
            LobbyEvent::Dropped { error, retry_in } => write!(
                f,
                "lobby dropped ({error}); reconnecting in {:.1} s",
                retry_in.as_secs_f64()
            ),
            LobbyEvent::Draining => {
                f.write_str("draining: no new invitations; finishing the running matches")
            }
            LobbyEvent::Drained => f.write_str("drained"),
        }
    }
}

/// Why holding the lobby stopped without a drain.
#[derive(Debug)]
pub enum LobbyError {
    /// The server address is not a valid URI.
    BadAddress(String),
    /// The ladder refused the lobby for good: a bad or revoked key, an invalid hello, a newer
    /// lobby of the same version (superseded). Reconnecting would not help.
    Refused(tonic::Status),
}

impl fmt::Display for LobbyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LobbyError::BadAddress(a) => write!(
                f,
                "`{a}` is not a server address (try http://127.0.0.1:50051)"
            ),
            LobbyError::Refused(s) => {
                write!(f, "the ladder refused the lobby: {}", s.message())?;
                if let Some(reason) = ladder_reason(s) {
                    write!(f, " ({reason})")?;
                }
                Ok(())
            }
        }
    }
}

impl std::error::Error for LobbyError {}

/// The `maumau-ladder-reason` trailer of a refused call.
fn ladder_reason(status: &tonic::Status) -> Option<&str> {
    status
        .metadata()
        .get("maumau-ladder-reason")
        .and_then(|v| v.to_str().ok())
}

/// Whether a failed lobby is worth opening again.
fn retryable(status: &tonic::Status) -> bool {
    use tonic::Code;
    if ladder_reason(status) == Some("LADDER_ERROR_REASON_SUPERSEDED") {
        return false;
    }
    !matches!(
        status.code(),
        Code::Unauthenticated
            | Code::PermissionDenied
            | Code::InvalidArgument
            | Code::NotFound
            | Code::FailedPrecondition
            | Code::AlreadyExists
            | Code::Aborted
    ) || wire::reason_of(status) == pb::ErrorReason::RateLimited
}

/// An open lobby stream.
struct Open {
    tx: mpsc::Sender<pb::LobbyRequest>,
    rx: tonic::Streaming<pb::LobbyResponse>,
}

/// Why a connection attempt or an open lobby ended.
enum Closed {
    Retry(String),
    Fatal(tonic::Status),
}

async fn open(
    endpoint: &tonic::transport::Endpoint,
    options: &LobbyOptions,
) -> Result<Open, Closed> {
    let channel = endpoint
        .connect()
        .await
        .map_err(|e| Closed::Retry(format!("cannot connect: {e}")))?;
    let (tx, rx) = mpsc::channel(4);
    let hello = pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: options.key.clone(),
            max_matches: options.max_matches,
            profiles: options.profiles.clone(),
            seats: options.seats.clone(),
        })),
    };
    // The channel has room: the first send cannot wait.
    let _ = tx.send(hello).await;
    match pb::ladder_service_client::LadderServiceClient::new(channel)
        .lobby(ReceiverStream::new(rx))
        .await
    {
        Ok(response) => Ok(Open {
            tx,
            rx: response.into_inner(),
        }),
        Err(s) if retryable(&s) => Err(Closed::Retry(s.message().to_string())),
        Err(s) => Err(Closed::Fatal(s)),
    }
}

/// What woke the lobby loop.
enum Wake {
    Drain,
    Message(Result<Option<pb::LobbyResponse>, tonic::Status>),
    Done(Result<(pb::Invitation, Result<(), String>), tokio::task::JoinError>),
    Retry,
}

/// The next message of an open lobby; never ready without one.
async fn next_message(open: &mut Option<Open>) -> Result<Option<pb::LobbyResponse>, tonic::Status> {
    match open {
        Some(o) => o.rx.message().await,
        None => std::future::pending().await,
    }
}

/// Holds the lobby until `drain` completes (then drains and returns `Ok` once every running
/// match is over) or the ladder refuses it for good.
///
/// `play` is called for each invitation with the invitation and the server to join its seat on
/// (the invitation's node, else `options.server`); the future it returns plays the seat and runs
/// on its own task, up to `options.max_matches` at once (the server sends no more invitations
/// than that). `on_event` hears everything worth showing ([`LobbyEvent`]).
pub async fn hold<P, F>(
    options: &LobbyOptions,
    mut play: P,
    mut on_event: impl FnMut(&LobbyEvent),
    drain: impl Future<Output = ()>,
) -> Result<(), LobbyError>
where
    P: FnMut(pb::Invitation, String) -> F,
    F: Future<Output = Result<(), String>> + Send + 'static,
{
    let endpoint = tonic::transport::Endpoint::from_shared(options.server.clone())
        .map_err(|_| LobbyError::BadAddress(options.server.clone()))?
        .tcp_nodelay(true)
        .connect_timeout(Duration::from_secs(10))
        // A server that vanished without closing the connection is noticed, and the lobby
        // reopened, within a minute.
        .http2_keep_alive_interval(Duration::from_secs(30))
        .keep_alive_timeout(Duration::from_secs(20))
        .keep_alive_while_idle(true);
    let mut drain = std::pin::pin!(drain);
    let mut draining = false;
    let mut drained = false;
    let mut open_lobby: Option<Open> = None;
    let mut retry_at = tokio::time::Instant::now();
    let mut backoff = FIRST_BACKOFF;
    let mut refused = None;
    let mut tasks: JoinSet<(pb::Invitation, Result<(), String>)> = JoinSet::new();
    loop {
        if open_lobby.is_none() && (draining || refused.is_some()) && tasks.is_empty() {
            if drained {
                // Last, once the local players are done too.
                on_event(&LobbyEvent::Drained);
            }
            return match refused {
                Some(s) => Err(LobbyError::Refused(s)),
                None => Ok(()),
            };
        }
        let wake = tokio::select! {
            () = &mut drain, if !draining => Wake::Drain,
            m = next_message(&mut open_lobby) => Wake::Message(m),
            Some(done) = tasks.join_next(), if !tasks.is_empty() => Wake::Done(done),
            () = tokio::time::sleep_until(retry_at), if open_lobby.is_none() && !draining && refused.is_none() =>
                Wake::Retry,
        };
        let mut dropped = None;
        match wake {
            Wake::Drain => {
                draining = true;
                on_event(&LobbyEvent::Draining);
                if let Some(o) = &open_lobby {
                    let request = pb::LobbyRequest {
                        kind: Some(pb::lobby_request::Kind::Drain(pb::LobbyDrain {})),
                    };
                    if o.tx.send(request).await.is_err() {
                        open_lobby = None;
                    }
                }
            }
            Wake::Retry => match open(&endpoint, options).await {
                Ok(o) => open_lobby = Some(o),
                Err(Closed::Retry(why)) => dropped = Some(why),
                Err(Closed::Fatal(s)) => refused = Some(s),
            },
            Wake::Done(done) => match done {
                Ok((invitation, outcome)) => {
                    if outcome.is_err() {
                        // The seat may never have been joined: give it up so that the match is
                        // aborted now rather than at its join deadline (a match that started is
                        // left alone by the ladder), or, at a tournament, resigned now.
                        tokio::spawn(withdraw(
                            server_of(&invitation, options),
                            options.key.clone(),
                            invitation.clone(),
                        ));
                    }
                    on_event(&LobbyEvent::Played {
                        invitation,
                        outcome,
                    });
                }
                Err(e) => on_event(&LobbyEvent::Played {
                    invitation: pb::Invitation::default(),
                    outcome: Err(format!("its player failed: {e}")),
                }),
            },
            Wake::Message(Ok(Some(message))) => {
                use pb::lobby_response::Kind;
                match message.kind {
                    Some(Kind::Welcome(w)) => {
                        backoff = FIRST_BACKOFF;
                        on_event(&LobbyEvent::Welcome(w));
                    }
                    Some(Kind::Waiting(w)) => on_event(&LobbyEvent::Waiting(w)),
                    Some(Kind::Invitation(invitation)) => {
                        on_event(&LobbyEvent::Invitation(invitation.clone()));
                        let game = play(invitation.clone(), server_of(&invitation, options));
                        tasks.spawn(async move { (invitation, game.await) });
                    }
                    Some(Kind::MatchEnded(e)) => on_event(&LobbyEvent::MatchEnded(e)),
                    Some(Kind::Notice(n)) => on_event(&LobbyEvent::Notice(n)),
                    // Asked for, or the lobby's last word (a tournament is over): done.
                    Some(Kind::Drained(d)) if draining || d.closed => {
                        if !draining {
                            draining = true;
                            on_event(&LobbyEvent::Draining);
                        }
                        drained = true;
                        open_lobby = None;
                    }
                    // The server drained on its own (it is stopping): come back when it is.
                    Some(Kind::Drained(_)) => dropped = Some("the server is stopping".into()),
                    None => {}
                }
            }
            Wake::Message(Ok(None)) => dropped = Some("the server closed the lobby".into()),
            Wake::Message(Err(s)) if retryable(&s) => dropped = Some(s.message().to_string()),
            Wake::Message(Err(s)) => {
                open_lobby = None;
                refused = Some(s);
            }
        }
        if let Some(error) = dropped {
            open_lobby = None;
            if !draining && refused.is_none() {
                on_event(&LobbyEvent::Dropped {
                    error,
                    retry_in: backoff,
                });
                retry_at = tokio::time::Instant::now() + backoff;
                backoff = (backoff * 2).min(options.max_backoff);
            }
        }
    }
}

/// Where an invitation's table is: its node, else the lobby's server.
fn server_of(invitation: &pb::Invitation, options: &LobbyOptions) -> String {
    if invitation.node_address.is_empty() {
        options.server.clone()
    } else {
        invitation.node_address.clone()
    }
}

/// Gives up the seat of an invitation whose player failed (`LadderService.WithdrawSeat`). A
/// tournament's game server is no ladder (the call is unimplemented there): the seat is resigned
/// with its token instead (`PlayService.Resign`), so its match need not wait for its clock. Best
/// effort: if the call fails, the match is aborted at its join deadline instead (the lobby hears
/// either way, in the match's end), or the seat forfeits by its clock.
async fn withdraw(server: String, key: String, invitation: pb::Invitation) {
    let call = async {
        let channel = tonic::transport::Endpoint::from_shared(server)?
            .connect()
            .await?;
        let mut client = pb::ladder_service_client::LadderServiceClient::new(channel.clone());
        let request = pb::WithdrawSeatRequest {
            version_key: String::new(),
            ladder_match_id: invitation.ladder_match_id,
            seat: invitation.seat,
        };
        match client.withdraw_seat(with_key(request, &key)).await {
            Err(s) if s.code() == tonic::Code::Unimplemented => {
                let request = pb::ResignRequest {
                    token: invitation.seat_token,
                };
                pb::play_service_client::PlayServiceClient::new(channel)
                    .resign(request)
                    .await?;
            }
            done => {
                done?;
            }
        }
        Ok::<_, Box<dyn std::error::Error + Send + Sync>>(())
    };
    let _ = tokio::time::timeout(Duration::from_secs(10), call).await;
}

/// A request carrying a ladder key (`authorization: Bearer KEY`), as the owner's calls need.
pub fn with_key<T>(message: T, key: &str) -> tonic::Request<T> {
    let mut request = tonic::Request::new(message);
    if let Ok(value) = format!("Bearer {key}").parse() {
        request.metadata_mut().insert("authorization", value);
    }
    request
}

/// What [`register`] made; the keys are shown only once, so keep them.
#[derive(Clone, Debug)]
pub struct Registration {
    /// The owner key (`mmo_...`): it adds bots and versions.
    pub owner_key: String,
    /// The bot.
    pub bot_id: i64,
    /// The version.
    pub version_id: i64,
    /// The version key (`mmv_...`): the lobby's.
    pub version_key: String,
}

/// Registers a new owner, a bot and its first version on the ladder at `server`
/// (`http://host:port`). `maumau ladder register` does the same from the command line.
pub async fn register(
    server: &str,
    owner: &str,
    bot: &str,
    label: &str,
) -> Result<Registration, LobbyError> {
    let channel = tonic::transport::Endpoint::from_shared(server.to_string())
        .map_err(|_| LobbyError::BadAddress(server.to_string()))?
        .connect()
        .await
        .map_err(|e| LobbyError::Refused(tonic::Status::unavailable(e.to_string())))?;
    let mut ladder = pb::ladder_service_client::LadderServiceClient::new(channel);
    let owner = ladder
        .register_owner(pb::RegisterOwnerRequest {
            name: owner.into(),
            invitation_code: String::new(),
        })
        .await
        .map_err(LobbyError::Refused)?
        .into_inner();
    let bot_id = ladder
        .register_bot(with_key(
            pb::RegisterBotRequest { name: bot.into() },
            &owner.owner_key,
        ))
        .await
        .map_err(LobbyError::Refused)?
        .into_inner()
        .bot_id;
    let request = pb::AddVersionRequest {
        bot_id,
        label: label.into(),
    };
    let version = ladder
        .add_version(with_key(request, &owner.owner_key))
        .await
        .map_err(LobbyError::Refused)?
        .into_inner();
    Ok(Registration {
        owner_key: owner.owner_key,
        bot_id,
        version_id: version.version_id,
        version_key: version.version_key,
    })
}

/// Holds the lobby and plays every invitation with a bot from `make_bot` (one per invitation)
/// through [`run`]; see [`hold`] for the rest.
pub async fn play_ladder(
    options: &LobbyOptions,
    mut make_bot: impl FnMut(&pb::Invitation) -> Box<dyn Bot>,
    on_event: impl FnMut(&LobbyEvent),
    drain: impl Future<Output = ()>,
) -> Result<(), LobbyError> {
    let name = options.name.clone();
    hold(
        options,
        move |invitation, server| {
            let mut bot = make_bot(&invitation);
            let mut run_options = RunOptions::new(server, invitation.seat_token);
            run_options.name = name.clone();
            async move {
                run(bot.as_mut(), &run_options)
                    .await
                    .map(|_| ())
                    .map_err(|e| e.to_string())
            }
        },
        on_event,
        drain,
    )
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_waiting_message_reads_as_one_line() {
        let waiting = pb::LobbyWaiting {
            reason: pb::WaitingReason::NoOpponents as i32,
            detail: "no opponent of classic with 2 seats is online".into(),
            bots_online: 1,
        };
        assert_eq!(
            LobbyEvent::Waiting(waiting).to_string(),
            "waiting: no opponent of classic with 2 seats is online (1 bots online)"
        );
        let bare = pb::LobbyWaiting {
            reason: pb::WaitingReason::NoSeason as i32,
            detail: String::new(),
            bots_online: 3,
        };
        assert_eq!(waiting_line(&bare), "waiting: no_season (3 bots online)");
    }

    #[test]
    fn a_rated_result_names_the_profile_its_rating_is_for() {
        let ended = pb::LadderMatchEnded {
            ladder_match_id: 7,
            match_id: "m1".into(),
            finished: true,
            rated: true,
            placing: 1,
            rating: Some(pb::Rating {
                mu: 26.5,
                sigma: 7.25,
                score: 4.75,
                ..Default::default()
            }),
            profile: "brazilian".into(),
            ..Default::default()
        };
        assert_eq!(
            LobbyEvent::MatchEnded(ended).to_string(),
            "match 7 (m1) finished: placing 1, rating in brazilian μ 26.50 σ 7.25 (score 4.75)"
        );
    }
}
