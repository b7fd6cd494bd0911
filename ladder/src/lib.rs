//! The core of the Mau Mau Arena ladder, a persistent public competition: storage, keys, bot
//! versions, seasons, Weng-Lin ratings, matchmaking and health. No network here; the server's
//! ladder mode sits on top of it.
//!
//! ```
//! use maumau_ladder::{Ladder, LadderConfig, Lobby, SqliteStore, Store, SeatResult};
//! use maumau_ladder::matchmaking::{Format, MatchmakingConfig, plan_tables};
//! use maumau_ladder::store::NewMatch;
//! use maumau_ladder::validation::ValidationPolicy;
//!
//! // Without validation (new versions would first play unrated validation matches).
//! let config = LadderConfig {
//!     validation: ValidationPolicy { required: false, ..ValidationPolicy::default() },
//!     ..LadderConfig::default()
//! };
//! let dir = tempfile::tempdir().unwrap();
//! let ladder = Ladder::new(SqliteStore::open(dir.path()).unwrap(), config);
//! let season = ladder.store().open_season("2026-1", 0).unwrap();
//!
//! // Four owners, one bot and one version each.
//! let mut lobbies = Vec::new();
//! for name in ["ada", "bo", "cy", "di"] {
//!     let (_, owner_key) = ladder.register_owner(name, None, 0).unwrap();
//!     let bot = ladder.register_bot(owner_key.as_str(), &format!("{name}-bot"), 0).unwrap();
//!     let v = ladder.add_version(owner_key.as_str(), bot, "v1", 0).unwrap();
//!     lobbies.push(Lobby { version: v.version, max_matches: 1,
//!                          profiles: vec!["classic".into()], seats: vec![4] });
//! }
//!
//! // The matchmaker makes one table of four; the result is rated.
//! let config = MatchmakingConfig::new(vec![Format { profile: "classic".into(), seats: 4, weight: 1.0 }]);
//! let candidates = ladder.candidates(season, &lobbies).unwrap();
//! let tables = plan_tables(&config, &candidates, &[], 0, 7);
//! assert_eq!(tables.len(), 1);
//! let t = &tables[0];
//! let id = ladder.store().schedule_match(&NewMatch {
//!     season, profile: t.profile.clone(), seed: t.seed, rated: true, seats: t.seats.clone(),
//! }, 1).unwrap();
//! let results: Vec<SeatResult> =
//!     [1, 2, 2, 4].iter().map(|&placing| SeatResult { placing, timeouts: 0 , rejections: 0}).collect();
//! let report = ladder.record_finish(id, &results, 2).unwrap();
//! assert_eq!(report.ratings.len(), 4);
//! assert!(report.ratings[0].after.rating.mu > 25.0);
//! assert!(ladder.rerate(season).unwrap().is_clean());
//! ```
//!
//! Ratings themselves (Weng-Lin from placings, replays) are the pure crate `maumau-rating`, which
//! the tournament shares; this crate keeps them per season, profile and version.
//!
//! Modules: [`keys`] (owner and version keys, registration policy), [`matchmaking`] (pure,
//! seeded table planning), [`health`] (when a version is paused), [`validation`] (new versions'
//! unrated first matches), [`store`] (the storage trait, SQLite and PostgreSQL), [`rerate`]
//! (consistency checks), [`sim`] (a simulated pool for the rating figures), and [`Ladder`], the
//! rules over a store.

mod error;
pub mod health;
mod ids;
pub mod keys;
mod ladder;
pub mod matchmaking;
pub mod rerate;
pub mod sim;
pub mod store;
pub mod validation;

pub use error::{LadderError, Result};
pub use ids::{BotId, KeyId, MatchId, Millis, OwnerId, SanctionId, SeasonId, VersionId};
pub use ladder::{
    Eligibility, HOUSE_OWNER, HOUSE_VERSION, Ladder, LadderConfig, Leaderboard, MAX_VERSIONS,
    MatchReport, NewVersion, Principal, Standing,
};
pub use matchmaking::Lobby;
pub use store::{PgStore, SeatResult, SqliteStore, Store};
