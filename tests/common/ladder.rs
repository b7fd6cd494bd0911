//! Ladder helpers shared by the ladder tests: registering an owner, a bot and a version; the
//! typed ladder reason of a refusal; a small ladder that rates from the first match.
//!
//! Included by the test files that need it with `#[path = "common/ladder.rs"] mod ladder;` (it
//! uses `crate::common`, so those files also declare `mod common;`).
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::time::Duration;

use maumau::pb;
use maumau::pb::ladder_service_client::LadderServiceClient;
use maumau_ladder_service::{
    LADDER_REASON_TRAILER, LadderFormat, LadderSettings, LadderValidation,
};
use tonic::transport::Channel;

use crate::common::with_bearer;

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
