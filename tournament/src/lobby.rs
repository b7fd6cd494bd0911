//! The tournament lobby: one long-lived program plays every match of an entrant
//! (`--entrant 'name=lobby:COMMAND'`), through the ladder's lobby protocol.
//!
//! The tournament serves `LadderService.Lobby` (and nothing else of the ladder) on a loopback port
//! of its own, with the ladder's messages but none of its database: each lobby entrant gets a key
//! made up at the start. Its program is launched once, with `sh -c`, in this environment:
//!
//! | variable | value |
//! |---|---|
//! | `MAUMAU_LOBBY_ADDR` | the lobby, as `http://127.0.0.1:PORT` |
//! | `MAUMAU_LOBBY_KEY` | the key to send in `LobbyHello.version_key` (or as `authorization: Bearer KEY`) |
//! | `MAUMAU_ENTRANT` | the entrant's name, for logs |
//!
//! With `--sandbox` the program runs in a sandbox of its own ([`maumau_sandbox`]), where the lobby
//! is `unix:/run/maumau/lobby.sock` and the invitations' server `unix:/run/maumau/maumau.sock`,
//! sockets forwarded to the real ones.
//!
//! The SDKs' lobby helpers read the two lobby variables (`LobbyOptions::from_env` in Rust,
//! `lobby_from_env` in Python, `lobbyFromEnv` in TypeScript), so a bot written for the ladder
//! plays a tournament unchanged. The program opens its lobby and gets `LobbyWelcome`; for each
//! seat the tournament gives it, an `Invitation` (the seat token, and the game's server in
//! `node_address`), never more at once than the hello's `max_matches`; when that match is over,
//! a `LadderMatchEnded` with its placing. When the tournament is over, the lobby sends
//! `LobbyDrained` with `closed` set: the program should exit (the helpers return, as after a
//! drain); one still running [`EXIT_GRACE`] later is stopped.
//!
//! What fails is a forfeit with its reason, as for `cmd:` entrants: a program that exits before
//! the tournament is over forfeits every game it has not joined from then on; one that opens no
//! lobby within [`OPEN_TIMEOUT`] of its launch forfeits its games; a seat not joined in time
//! forfeits as any absent seat does (the server's clock).
//!
//! `maumau check-bot --lobby` hosts its bot's lobby here too ([`Lobbies::serve`]): it launches the
//! program itself, with the same two variables, and hands it the gauntlet's matches one by one.

use std::path::Path;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use maumau::pb;
use maumau::pb::ladder_service_server::{LadderService, LadderServiceServer};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc, watch};
use tokio_stream::wrappers::ReceiverStream;
use tonic::{Request, Response, Status, Streaming};

use maumau_sandbox::{Jail, LOBBY_SOCKET, Route, SERVER_SOCKET};

use crate::entrant::{Entrant, Player};

/// How long a program may take from its launch to opening its lobby (or to opening it again
/// after it closed), in a tournament.
pub const OPEN_TIMEOUT: Duration = Duration::from_secs(30);
/// How long a program may run on once its lobby is closed at the end of the tournament.
pub const EXIT_GRACE: Duration = Duration::from_secs(5);

/// Messages to one open lobby stream.
type LobbySender = mpsc::Sender<Result<pb::LobbyResponse, Status>>;

/// Where a lobby entrant's program stands.
#[derive(Clone, Debug)]
enum State {
    /// Launched; no lobby open (yet, or again after a dropped one).
    Waiting,
    /// Its lobby is open: invitations go there.
    Open(LobbySender),
    /// It cannot play any more: why (it exited, never opened its lobby).
    Failed(String),
}

/// One lobby entrant.
struct Slot {
    key: String,
    state: watch::Sender<State>,
    /// Matches it may play at once (the first hello's `max_matches`), and that number.
    capacity: OnceLock<(Arc<Semaphore>, u32)>,
    /// The deadline for opening the lobby.
    launched: tokio::time::Instant,
    /// What the program is invited for, in reasons: "the tournament".
    event: &'static str,
}

impl Slot {
    /// Marks the program failed, unless it failed already (the first reason stays).
    fn fail(&self, why: String) {
        self.state.send_if_modified(|s| {
            if matches!(s, State::Failed(_)) {
                return false;
            }
            *s = State::Failed(why);
            true
        });
    }
}

/// A seat of a match reserved for a lobby entrant: room in its lobby until dropped.
pub struct Reserved {
    slot: Arc<Slot>,
    _permit: OwnedSemaphorePermit,
}

/// The lobbies of a tournament's lobby entrants (or of check-bot's bot), and their programs.
pub struct Lobbies {
    /// By entrant index; `None` for the entrants of other kinds.
    slots: Vec<Option<Arc<Slot>>>,
    /// The lobby's address, `http://127.0.0.1:PORT`.
    addr: String,
    /// How long a program may take to open its lobby, or to open it again.
    open_timeout: Duration,
    /// What the programs are invited for, in reasons: "the tournament".
    event: &'static str,
    /// Set when the tournament is over: lobbies close, programs get their grace.
    over: watch::Sender<bool>,
    /// The programs, each with what went wrong at its end.
    programs: Vec<(String, tokio::task::JoinHandle<Option<String>>)>,
    stop_server: Option<tokio::sync::oneshot::Sender<()>>,
}

impl Lobbies {
    /// Serves the lobbies on a loopback port and launches every lobby entrant's program (output
    /// to `logs/NAME-lobby.log`). Runs on the current Tokio runtime.
    ///
    /// With a `sandbox`, each program runs in a jail of its own, where the lobby and the game
    /// server (`remote`) are two sockets: `MAUMAU_LOBBY_ADDR` is `unix:/run/maumau/lobby.sock`
    /// and its invitations' `node_address` is `unix:/run/maumau/maumau.sock`.
    pub(crate) async fn start(
        entrants: &[Entrant],
        logs: Option<&Path>,
        remote: &crate::Remote,
        sandbox: Option<Arc<maumau_sandbox::Sandbox>>,
    ) -> std::io::Result<Lobbies> {
        let lobby = |e: &Entrant| matches!(e.player, Player::Lobby(_));
        let mut lobbies = Lobbies::open(
            entrants.iter().map(lobby).collect(),
            OPEN_TIMEOUT,
            "the tournament",
        )
        .await?;
        for (i, e) in entrants.iter().enumerate() {
            let (Player::Lobby(command), Some(key)) = (&e.player, lobbies.key(i)) else {
                continue;
            };
            let confined = sandbox.as_ref().map(|sandbox| crate::net::Confinement {
                sandbox: sandbox.clone(),
                routes: vec![
                    Route::new(SERVER_SOCKET, &remote.host_port()),
                    Route::new(LOBBY_SOCKET, &lobbies.addr),
                ],
            });
            let addr = match &confined {
                Some(_) => Jail::addr(LOBBY_SOCKET),
                None => lobbies.addr.clone(),
            };
            let env = vec![
                ("MAUMAU_LOBBY_ADDR", addr),
                ("MAUMAU_LOBBY_KEY", key.to_string()),
                ("MAUMAU_ENTRANT", e.name.clone()),
            ];
            let log = logs.map(|d| d.join(format!("{}-lobby.log", e.name)));
            let run = crate::net::launch(
                command.clone(),
                env,
                log,
                lobbies.over.subscribe(),
                EXIT_GRACE,
                "the tournament",
                confined,
            );
            lobbies.watch_program(i, e.name.clone(), run);
        }
        Ok(lobbies)
    }

    /// Serves `count` lobbies (entrants `0..count`) on a loopback port and launches nothing: the
    /// caller launches each program with [`Lobbies::addr`] and [`Lobbies::key`] in
    /// `MAUMAU_LOBBY_ADDR` and `MAUMAU_LOBBY_KEY`, and hands it to [`Lobbies::watch_program`].
    /// A program has `open_timeout` to open its lobby (and to open it again after it closed);
    /// `event` names what it is invited for in reasons ("it drained its lobby before {event} was
    /// over"). Runs on the current Tokio runtime.
    pub async fn serve(
        count: usize,
        open_timeout: Duration,
        event: &'static str,
    ) -> std::io::Result<Lobbies> {
        Lobbies::open(vec![true; count], open_timeout, event).await
    }

    /// The address of the lobbies: `http://127.0.0.1:PORT`.
    pub fn addr(&self) -> &str {
        &self.addr
    }

    /// The key of entrant `entrant`'s lobby (`None` for an entrant without one).
    pub fn key(&self, entrant: usize) -> Option<&str> {
        Some(&self.slots.get(entrant)?.as_ref()?.key)
    }

    /// Follows entrant `entrant`'s program, a future that ends with it (`Some(why)` when it ended
    /// badly): one that ends before [`Lobbies::close`] fails its lobby with that reason, or with
    /// "its program exited before {event} was over"; [`Lobbies::close`] waits for it.
    pub fn watch_program(
        &mut self,
        entrant: usize,
        name: String,
        program: impl Future<Output = Option<String>> + Send + 'static,
    ) {
        let Some(slot) = self.slots.get(entrant).cloned().flatten() else {
            return;
        };
        let (over, event) = (self.over.subscribe(), self.event);
        self.programs.push((
            name,
            tokio::spawn(async move {
                let why = program.await;
                if !*over.borrow() {
                    slot.fail(
                        why.clone().unwrap_or_else(|| {
                            format!("its program exited before {event} was over")
                        }),
                    );
                }
                why
            }),
        ));
    }

    /// Completes once [`Lobbies::close`] has been called: from then on a program may exit.
    pub fn closed(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut over = self.over.subscribe();
        async move {
            let _ = over.wait_for(|&done| done).await;
        }
    }

    /// Serves a lobby for each `true` of `lobby` (by entrant index).
    async fn open(
        lobby: Vec<bool>,
        open_timeout: Duration,
        event: &'static str,
    ) -> std::io::Result<Lobbies> {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
        let addr = format!("http://{}", listener.local_addr()?);
        let launched = tokio::time::Instant::now();
        let slots: Vec<Option<Arc<Slot>>> = lobby
            .into_iter()
            .map(|lobby| {
                lobby.then(|| {
                    Arc::new(Slot {
                        key: format!("mmt_{:032x}", rand::random::<u128>()),
                        state: watch::Sender::new(State::Waiting),
                        capacity: OnceLock::new(),
                        launched,
                        event,
                    })
                })
            })
            .collect();
        let (over, over_rx) = watch::channel(false);
        let service = TournamentLobby {
            slots: slots.iter().flatten().cloned().collect(),
            over: over_rx,
        };
        let (stop_server, stopped) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(
            tonic::transport::Server::builder()
                .add_service(LadderServiceServer::new(service))
                .serve_with_incoming_shutdown(
                    tonic::transport::server::TcpIncoming::from(listener).with_nodelay(Some(true)),
                    async {
                        let _ = stopped.await;
                    },
                ),
        );
        Ok(Lobbies {
            slots,
            addr,
            open_timeout,
            event,
            over,
            programs: Vec::new(),
            stop_server: Some(stop_server),
        })
    }

    /// Waits for room in `entrant`'s lobby (its program's lobby open, fewer matches than its
    /// `max_matches`); `Err` says why it cannot play.
    pub async fn reserve(&self, entrant: usize) -> Result<Reserved, String> {
        let Some(slot) = self.slots.get(entrant).cloned().flatten() else {
            return Err("it is not a lobby entrant".into());
        };
        let mut state = slot.state.subscribe();
        let opened = slot.capacity.get().is_some();
        let deadline = if opened {
            tokio::time::Instant::now() + self.open_timeout
        } else {
            slot.launched + self.open_timeout
        };
        let timed_out = tokio::time::timeout_at(deadline, async {
            let _ = state.wait_for(|s| !matches!(s, State::Waiting)).await;
        })
        .await
        .is_err();
        if timed_out {
            // Every later game fails at once too.
            let why = if opened {
                format!(
                    "its lobby closed and did not open again within {} s",
                    self.open_timeout.as_secs()
                )
            } else {
                format!(
                    "its program opened no lobby within {} s of its launch",
                    self.open_timeout.as_secs()
                )
            };
            slot.fail(why.clone());
            return Err(why);
        }
        if let State::Failed(why) = &*state.borrow() {
            return Err(why.clone());
        }
        let (capacity, _) = slot
            .capacity
            .get()
            .cloned()
            .ok_or("its lobby never opened")?;
        let permit = capacity
            .acquire_owned()
            .await
            .map_err(|_| "its lobby is closed".to_string())?;
        Ok(Reserved {
            slot,
            _permit: permit,
        })
    }
}

impl Reserved {
    /// Sends the invitation; `Err` says why it could not.
    pub async fn invite(&self, invitation: pb::Invitation) -> Result<(), String> {
        let tx = match &*self.slot.state.borrow() {
            State::Open(tx) => tx.clone(),
            State::Failed(why) => return Err(why.clone()),
            State::Waiting => return Err("its lobby closed before the invitation".into()),
        };
        let message = pb::LobbyResponse {
            kind: Some(pb::lobby_response::Kind::Invitation(invitation)),
        };
        tx.send(Ok(message))
            .await
            .map_err(|_| "its lobby closed before the invitation".to_string())
    }

    /// Completes, with why, once its program cannot play any more.
    pub async fn failed(&self) -> String {
        let mut state = self.slot.state.subscribe();
        let failed = state.wait_for(|s| matches!(s, State::Failed(_))).await;
        let why = failed.ok().and_then(|s| match &*s {
            State::Failed(why) => Some(why.clone()),
            _ => None,
        });
        match why {
            Some(why) => why,
            // The lobbies are gone (the tournament is ending): nothing fails from now on.
            None => std::future::pending().await,
        }
    }

    /// Why its program cannot play any more, if it cannot.
    pub fn failure(&self) -> Option<String> {
        match &*self.slot.state.borrow() {
            State::Failed(why) => Some(why.clone()),
            _ => None,
        }
    }

    /// Tells the program its match ended (best effort: a closed lobby misses it).
    pub fn ended(&self, ended: pb::LadderMatchEnded) {
        if let State::Open(tx) = &*self.slot.state.borrow() {
            let _ = tx.try_send(Ok(pb::LobbyResponse {
                kind: Some(pb::lobby_response::Kind::MatchEnded(ended)),
            }));
        }
    }
}

impl Lobbies {
    /// Closes every lobby for good, waits for the programs to exit (the tournament's stop those
    /// still running [`EXIT_GRACE`] later; a program given to [`Lobbies::watch_program`] must end
    /// by itself) and stops serving; returns a notice per program that ended badly.
    pub async fn close(mut self) -> Vec<String> {
        self.over.send_replace(true);
        for slot in self.slots.iter().flatten() {
            if let State::Open(tx) = &*slot.state.borrow() {
                let _ = tx.try_send(Ok(closed_message()));
            }
        }
        let mut notices = Vec::new();
        for (name, program) in self.programs.drain(..) {
            match program.await {
                Ok(None) => {}
                Ok(Some(why)) => notices.push(format!("{name}: {why}")),
                Err(e) => notices.push(format!("{name}: its program's task failed: {e}")),
            }
        }
        if let Some(stop) = self.stop_server.take() {
            let _ = stop.send(());
        }
        notices
    }
}

fn closed_message() -> pb::LobbyResponse {
    pb::LobbyResponse {
        kind: Some(pb::lobby_response::Kind::Drained(pb::LobbyDrained {
            closed: true,
        })),
    }
}

/// Milliseconds since the Unix epoch, `after` from now (an invitation's join deadline).
pub fn unix_ms_after(after: Duration) -> u64 {
    (SystemTime::now() + after)
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The gRPC face of the lobbies: `LadderService.Lobby` only.
struct TournamentLobby {
    slots: Vec<Arc<Slot>>,
    over: watch::Receiver<bool>,
}

fn bearer<T>(req: &Request<T>) -> Option<String> {
    let value = req.metadata().get("authorization")?.to_str().ok()?;
    value.strip_prefix("Bearer ").map(|k| k.trim().to_string())
}

fn not_here(what: &str) -> Status {
    Status::unimplemented(format!(
        "a tournament's lobby answers only LadderService.Lobby, not {what}"
    ))
}

/// `LadderService` with `Lobby` answered by [`TournamentLobby::open`] and every other call refused
/// with `UNIMPLEMENTED`.
macro_rules! lobby_only {
    ($($name:ident($req:ty) -> $resp:ty;)*) => {
        #[tonic::async_trait]
        impl LadderService for TournamentLobby {
            type LobbyStream = LobbyStream;
            type LobbyFeedStream = LobbyStream;

            async fn lobby(
                &self,
                req: Request<Streaming<pb::LobbyRequest>>,
            ) -> Result<Response<LobbyStream>, Status> {
                self.open(req).await
            }

            async fn lobby_feed(
                &self,
                _: Request<pb::LobbyFeedRequest>,
            ) -> Result<Response<LobbyStream>, Status> {
                Err(not_here("lobby_feed"))
            }

            $(
                async fn $name(&self, _: Request<$req>) -> Result<Response<$resp>, Status> {
                    Err(not_here(stringify!($name)))
                }
            )*
        }
    };
}

lobby_only! {
    register_owner(pb::RegisterOwnerRequest) -> pb::RegisterOwnerResponse;
    register_bot(pb::RegisterBotRequest) -> pb::RegisterBotResponse;
    add_version(pb::AddVersionRequest) -> pb::AddVersionResponse;
    rotate_key(pb::RotateKeyRequest) -> pb::RotateKeyResponse;
    revoke_key(pb::RevokeKeyRequest) -> pb::RevokeKeyResponse;
    get_leaderboard(pb::GetLeaderboardRequest) -> pb::GetLeaderboardResponse;
    get_bot(pb::GetBotRequest) -> pb::GetBotResponse;
    ban(pb::BanRequest) -> pb::BanResponse;
    unban(pb::UnbanRequest) -> pb::UnbanResponse;
    pause(pb::PauseRequest) -> pb::PauseResponse;
    resume(pb::ResumeRequest) -> pb::ResumeResponse;
    resume_version(pb::ResumeVersionRequest) -> pb::ResumeVersionResponse;
    void_match(pb::VoidMatchRequest) -> pb::VoidMatchResponse;
    close_season(pb::CloseSeasonRequest) -> pb::CloseSeasonResponse;
    open_season(pb::OpenSeasonRequest) -> pb::OpenSeasonResponse;
    set_formats(pb::SetFormatsRequest) -> pb::SetFormatsResponse;
    drain_lobby(pb::DrainLobbyRequest) -> pb::DrainLobbyResponse;
    withdraw_seat(pb::WithdrawSeatRequest) -> pb::WithdrawSeatResponse;
    prune_replays(pb::PruneReplaysRequest) -> pb::PruneReplaysResponse;
}

type LobbyStream = ReceiverStream<Result<pb::LobbyResponse, Status>>;

impl TournamentLobby {
    /// A lobby stream: checks the hello's key, welcomes, and hands the stream to the entrant's
    /// slot, where the tournament's invitations go.
    async fn open(
        &self,
        req: Request<Streaming<pb::LobbyRequest>>,
    ) -> Result<Response<LobbyStream>, Status> {
        let meta_key = bearer(&req);
        let mut input = req.into_inner();
        let hello = match input.message().await? {
            Some(pb::LobbyRequest {
                kind: Some(pb::lobby_request::Kind::Hello(h)),
            }) => h,
            _ => {
                return Err(Status::invalid_argument(
                    "the first message must be LobbyHello",
                ));
            }
        };
        let key = match (meta_key, hello.version_key.trim()) {
            (Some(m), k) if !k.is_empty() && m != k => {
                return Err(Status::unauthenticated(
                    "the keys in the metadata and the hello differ",
                ));
            }
            (Some(m), _) => m,
            (None, k) => k.to_string(),
        };
        let Some((index, slot)) = self.slots.iter().enumerate().find(|(_, s)| s.key == key) else {
            return Err(Status::unauthenticated(
                "unknown lobby key: use MAUMAU_LOBBY_KEY as the tournament gave it",
            ));
        };
        if !(1..=64).contains(&hello.max_matches) {
            return Err(Status::invalid_argument("max_matches must be 1 to 64"));
        }
        let slot = slot.clone();
        let (_, most) = slot.capacity.get_or_init(|| {
            let most = hello.max_matches;
            (Arc::new(Semaphore::new(most as usize)), most)
        });
        // Room for a welcome, an invitation and an ending per match, and the last word.
        let (tx, rx) = mpsc::channel(*most as usize * 2 + 4);
        let welcome = pb::LobbyResponse {
            kind: Some(pb::lobby_response::Kind::Welcome(pb::LobbyWelcome {
                version_id: index as i64 + 1,
                bot_id: index as i64 + 1,
                season: "tournament".into(),
                status: pb::VersionStatus::Active as i32,
                reason: String::new(),
            })),
        };
        let _ = tx.try_send(Ok(welcome));
        if *self.over.borrow() {
            let _ = tx.try_send(Ok(closed_message()));
            return Ok(Response::new(ReceiverStream::new(rx)));
        }
        // A newer lobby replaces an older one (which gets no more invitations); a failed
        // program stays failed.
        let replaced = slot.state.send_if_modified(|s| match s {
            State::Failed(_) => false,
            _ => {
                *s = State::Open(tx.clone());
                true
            }
        });
        if !replaced {
            return Err(Status::failed_precondition(
                "this entrant's program already failed",
            ));
        }
        let over = self.over.clone();
        tokio::spawn(async move {
            loop {
                match input.message().await {
                    // A bot that drains before the tournament is over gets no more matches (its
                    // later games are forfeits); it is told once its running ones are over.
                    Ok(Some(pb::LobbyRequest {
                        kind: Some(pb::lobby_request::Kind::Drain(_)),
                    })) => {
                        let closed = *over.borrow();
                        if !closed {
                            slot.fail(format!(
                                "it drained its lobby before {} was over",
                                slot.event
                            ));
                        }
                        if let Some((c, most)) = slot.capacity.get() {
                            let _ = c.acquire_many(*most).await;
                        }
                        let drained = pb::LobbyDrained { closed };
                        let _ = tx
                            .send(Ok(pb::LobbyResponse {
                                kind: Some(pb::lobby_response::Kind::Drained(drained)),
                            }))
                            .await;
                        break;
                    }
                    Ok(Some(_)) => {}
                    Ok(None) | Err(_) => break,
                }
            }
            // This stream is gone: unless a newer one replaced it, the lobby waits to reopen.
            slot.state.send_if_modified(|s| match s {
                State::Open(t) if t.same_channel(&tx) => {
                    *s = State::Waiting;
                    true
                }
                _ => false,
            });
        });
        Ok(Response::new(ReceiverStream::new(rx)))
    }
}
