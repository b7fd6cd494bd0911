//! Ladder helpers shared by the ladder tests: registering an owner, a bot and a version; the
//! typed ladder reason of a refusal; a small ladder that rates from the first match; an open lobby
//! and the heuristic bot that plays its invitations; a bot's page and the leaderboard.
//!
//! Included by the test files that need it with `#[path = "common/ladder.rs"] mod ladder;` (it
//! uses `crate::common`, so those files also declare `mod common;`).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::time::Duration;

use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_bot_sdk::bots::HeuristicBot;
use maumau_bot_sdk::runner::{RunOptions, run};
use maumau_ladder_service::{
    LADDER_REASON_TRAILER, LadderFormat, LadderSettings, LadderValidation,
};
use tokio::sync::mpsc;
use tokio_stream::wrappers::ReceiverStream;
use tonic::transport::Channel;

use crate::common::with_bearer;

/// How long a test waits for a lobby message: generous, for a loaded 2-core machine.
pub const MESSAGE_WAIT: Duration = Duration::from_secs(120);

/// A lobby's first message: version `key` offers classic at `seats`, `max_matches` at once.
pub fn hello(key: &str, max_matches: u32, seats: u32) -> pb::LobbyRequest {
    pb::LobbyRequest {
        kind: Some(pb::lobby_request::Kind::Hello(pb::LobbyHello {
            version_key: key.into(),
            max_matches,
            profiles: vec!["classic".into()],
            seats: vec![seats],
        })),
    }
}

/// An open lobby: send `LobbyRequest`s on `tx`, read `LobbyResponse`s from `rx`.
pub struct Lobby {
    pub tx: mpsc::Sender<pb::LobbyRequest>,
    pub rx: tonic::Streaming<pb::LobbyResponse>,
}

impl Lobby {
    /// Opens a lobby whose first message is `first` (usually [`hello`]).
    pub async fn open(
        c: &mut LadderServiceClient<Channel>,
        first: pb::LobbyRequest,
    ) -> Result<Lobby, tonic::Status> {
        let (tx, rx) = mpsc::channel(16);
        tx.send(first).await.expect("send the first lobby message");
        let rx = c.lobby(ReceiverStream::new(rx)).await?.into_inner();
        Ok(Lobby { tx, rx })
    }

    /// The next message, reasons for waiting included; `None` when the stream ended.
    pub async fn next_any(&mut self) -> Option<pb::lobby_response::Kind> {
        tokio::time::timeout(MESSAGE_WAIT, self.rx.message())
            .await
            .expect("a lobby message in time")
            .expect("the lobby stream does not fail")
            .map(|m| m.kind.expect("a message kind"))
    }

    /// The next message but the reasons for waiting (`LobbyWaiting`, tested in
    /// `ladder_house.rs`); `None` when the stream ended.
    pub async fn next(&mut self) -> Option<pb::lobby_response::Kind> {
        loop {
            let kind = self.next_any().await;
            if !matches!(kind, Some(pb::lobby_response::Kind::Waiting(_))) {
                return kind;
            }
        }
    }

    /// The next message after the welcome, reasons for waiting included.
    pub async fn next_after_welcome(&mut self) -> pb::lobby_response::Kind {
        loop {
            match self.next_any().await.expect("the lobby stays open") {
                pb::lobby_response::Kind::Welcome(_) => {}
                other => return other,
            }
        }
    }

    /// The welcome, which must be the next message but the reasons for waiting.
    pub async fn welcome(&mut self) -> pb::LobbyWelcome {
        match self.next().await {
            Some(pb::lobby_response::Kind::Welcome(w)) => w,
            other => panic!("expected a welcome, got {other:?}"),
        }
    }

    /// Asks the lobby to drain: no more invitations, close after the matches in play.
    pub async fn drain(&self) {
        self.tx
            .send(pb::LobbyRequest {
                kind: Some(pb::lobby_request::Kind::Drain(pb::LobbyDrain {})),
            })
            .await
            .expect("send drain");
    }
}

/// Plays an invitation with the SDK's heuristic bot on its own task; the task fails if the match
/// cannot be played.
pub fn play(url: &str, inv: &pb::Invitation, seed: u64) -> tokio::task::JoinHandle<()> {
    assert!(inv.node_address.is_empty(), "tables are on this server");
    let mut options = RunOptions::new(url, inv.seat_token.clone());
    options.name = "ladder-test".into();
    tokio::spawn(async move {
        let mut bot = HeuristicBot::new(seed);
        run(&mut bot, &options).await.expect("the match is played");
    })
}

/// A bot's page (`GetBot`) with up to 200 matches of history.
pub async fn get_bot(c: &mut LadderServiceClient<Channel>, bot_id: i64) -> pb::GetBotResponse {
    c.get_bot(pb::GetBotRequest {
        bot_id,
        history_limit: 200,
        ..Default::default()
    })
    .await
    .expect("GetBot")
    .into_inner()
}

/// The classic leaderboard of `season` (empty: the current season).
pub async fn board(
    c: &mut LadderServiceClient<Channel>,
    season: &str,
) -> pb::GetLeaderboardResponse {
    c.get_leaderboard(pb::GetLeaderboardRequest {
        season: season.into(),
        profile: "classic".into(),
        ..Default::default()
    })
    .await
    .expect("GetLeaderboard")
    .into_inner()
}

/// A registered owner with one bot and one version, and their keys.
#[derive(Clone, Debug)]
pub struct Entrant {
    pub owner_key: String,
    pub bot_id: i64,
    pub version_id: i64,
    pub version_key: String,
}

/// Registers owner `owner`, its bot `bot` and the bot's version `label`.
pub async fn register(
    c: &mut LadderServiceClient<Channel>,
    owner: &str,
    bot: &str,
    label: &str,
) -> Entrant {
    let o = c
        .register_owner(pb::RegisterOwnerRequest {
            name: owner.into(),
            invitation_code: String::new(),
        })
        .await
        .expect("register owner")
        .into_inner();
    let b = c
        .register_bot(with_bearer(
            pb::RegisterBotRequest { name: bot.into() },
            &o.owner_key,
        ))
        .await
        .expect("register bot")
        .into_inner();
    let v = c
        .add_version(with_bearer(
            pb::AddVersionRequest {
                bot_id: b.bot_id,
                label: label.into(),
            },
            &o.owner_key,
        ))
        .await
        .expect("add version")
        .into_inner();
    assert!(v.version_key.starts_with("mmv_"), "{}", v.version_key);
    Entrant {
        owner_key: o.owner_key,
        bot_id: b.bot_id,
        version_id: v.version_id,
        version_key: v.version_key,
    }
}

/// The typed ladder reason a refusal carries in its trailer (`Unspecified` if none).
pub fn ladder_reason(status: &tonic::Status) -> pb::LadderErrorReason {
    status
        .metadata()
        .get(LADDER_REASON_TRAILER)
        .and_then(|v| v.to_str().ok())
        .and_then(pb::LadderErrorReason::from_str_name)
        .unwrap_or(pb::LadderErrorReason::Unspecified)
}

/// Validation turned off: versions are rated from their first match (validation itself is
/// tested in `ladder_strength.rs`).
pub fn no_validation() -> LadderValidation {
    LadderValidation {
        required: false,
        ..LadderValidation::default()
    }
}

/// A ladder of 2-seat classic matches, ticking every 100 ms, rating from the first match.
pub fn classic_pairs(join_deadline: Duration) -> LadderSettings {
    LadderSettings {
        formats: vec![LadderFormat {
            profile: "classic".into(),
            seats: 2,
            weight: 1.0,
        }],
        join_deadline,
        tick: Duration::from_millis(100),
        validation: no_validation(),
        ..LadderSettings::default()
    }
}

/// A play of a card the seat does not hold: an action the rules refuse in every state. (An action
/// merely missing from the prompt's list is not enough: the list names one call per play, but
/// the rules accept a needless "Mau", so such an action may be no refusal at all.)
pub fn unheld_play(
    obs: &maumau_bot_sdk::engine::Observation,
) -> Option<maumau_bot_sdk::engine::Action> {
    use maumau_bot_sdk::engine::{ACTION_COUNT, Action};
    (0..ACTION_COUNT)
        .filter_map(Action::from_index)
        .find(|a| matches!(a, Action::Play { card, .. } if !obs.hand.contains(*card)))
}
