//! The ladder's typed errors.

use std::fmt;
use std::path::PathBuf;

/// Anything the ladder core can refuse or fail at.
#[derive(Debug)]
pub enum LadderError {
    /// Another process holds the data directory's lock.
    Locked {
        /// The lock file.
        path: PathBuf,
    },
    /// Reading or writing the data directory failed.
    Io(std::io::Error),
    /// The database failed (boxed so that every storage backend fits).
    Database(Box<dyn std::error::Error + Send + Sync>),
    /// The database cannot be reached now (its server is down, the connection broke, or every
    /// connection stayed busy); the same call may succeed later. The detail is for logs: it may
    /// name the database's host and user.
    Unavailable(Box<dyn std::error::Error + Send + Sync>),
    /// Every connection to the database stayed in use for as long as a call may wait; the same
    /// call may succeed later.
    Busy(String),
    /// The database was written by a newer build (it has migration steps this build lacks).
    SchemaTooNew {
        /// Highest step in the database.
        found: u32,
        /// Highest step this build knows.
        known: u32,
    },
    /// No such row.
    NotFound {
        /// What was looked for: "owner", "bot", "version", "key", "season", "match", "sanction".
        what: &'static str,
        /// Its id or name.
        id: String,
    },
    /// A name or label is already taken.
    Duplicate {
        /// What kind of thing: "owner", "bot", "version", "season".
        what: &'static str,
        /// The taken name.
        name: String,
    },
    /// Input that can never be valid (empty name, wrong seat count, malformed key...).
    Invalid(String),
    /// The key is unknown, malformed, revoked, or belongs to a retired version.
    Unauthenticated,
    /// The key is valid but may not do this.
    Forbidden(String),
    /// Registration needs an invitation code and the one given is missing or wrong.
    InvitationRequired,
    /// The change is not allowed in the current state (finish a voided match, open a second
    /// season...).
    State(String),
}

impl fmt::Display for LadderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            LadderError::Locked { path } => write!(
                f,
                "the data directory is in use by another process (lock held on {})",
                path.display()
            ),
            LadderError::Io(e) => write!(f, "data directory: {e}"),
            LadderError::Database(e) => write!(f, "database: {e}"),
            LadderError::Unavailable(e) => write!(f, "the database is unavailable: {e}"),
            LadderError::Busy(why) => write!(f, "the database is busy: {why}"),
            LadderError::SchemaTooNew { found, known } => write!(
                f,
                "the database has schema step {found} but this build knows only up to {known}"
            ),
            LadderError::NotFound { what, id } => write!(f, "no {what} {id}"),
            LadderError::Duplicate { what, name } => write!(f, "{what} {name:?} already exists"),
            LadderError::Invalid(why) => write!(f, "invalid input: {why}"),
            LadderError::Unauthenticated => {
                write!(f, "unknown, revoked or retired key")
            }
            LadderError::Forbidden(why) => write!(f, "forbidden: {why}"),
            LadderError::InvitationRequired => {
                write!(f, "registration needs a valid invitation code")
            }
            LadderError::State(why) => write!(f, "not now: {why}"),
        }
    }
}

impl std::error::Error for LadderError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            LadderError::Io(e) => Some(e),
            LadderError::Database(e) | LadderError::Unavailable(e) => Some(e.as_ref()),
            _ => None,
        }
    }
}

impl From<maumau_rating::PlacingsError> for LadderError {
    fn from(e: maumau_rating::PlacingsError) -> Self {
        LadderError::Invalid(e.to_string())
    }
}

impl From<std::io::Error> for LadderError {
    fn from(e: std::io::Error) -> Self {
        LadderError::Io(e)
    }
}

impl From<rusqlite::Error> for LadderError {
    fn from(e: rusqlite::Error) -> Self {
        LadderError::Database(Box::new(e))
    }
}

impl From<postgres::Error> for LadderError {
    fn from(e: postgres::Error) -> Self {
        if unreachable(&e) {
            LadderError::Unavailable(Box::new(e))
        } else {
            LadderError::Database(Box::new(e))
        }
    }
}

/// Whether a PostgreSQL error says the server could not be reached or dropped the connection
/// (rather than refusing a statement).
pub(crate) fn unreachable(e: &postgres::Error) -> bool {
    if e.is_closed() {
        return true;
    }
    match e.as_db_error() {
        // Connection exceptions, too many connections, and the server shutting down or starting.
        Some(db) => {
            let code = db.code().code();
            code.starts_with("08") || code.starts_with("53") || code.starts_with("57P")
        }
        // Connecting failed, or the socket did.
        None => std::error::Error::source(e).is_some_and(|s| s.is::<std::io::Error>()),
    }
}

/// Shorthand for results of the ladder core.
pub type Result<T, E = LadderError> = std::result::Result<T, E>;
