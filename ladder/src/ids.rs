//! Typed row ids, so an owner id can never be passed where a version id is wanted.

use std::fmt;

macro_rules! id_type {
    ($(#[$doc:meta] $name:ident),* $(,)?) => {$(
        #[$doc]
        #[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub struct $name(pub i64);

        impl fmt::Display for $name {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                self.0.fmt(f)
            }
        }
    )*};
}

id_type! {
    /// An owner: the person or team behind one or more bots.
    OwnerId,
    /// A bot: a name that collects versions.
    BotId,
    /// A version of a bot: an immutable label; ratings belong to versions.
    VersionId,
    /// A stored key (its hash, never the key itself).
    KeyId,
    /// A season of ratings.
    SeasonId,
    /// A ladder match.
    MatchId,
    /// A pause or ban.
    SanctionId,
}

/// Wall-clock time as milliseconds since the Unix epoch. Passed in by the caller, so the core never
/// reads a clock and tests control time.
pub type Millis = i64;
