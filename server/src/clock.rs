//! The wall clock, in one place: milliseconds since the Unix epoch for what goes on the wire
//! (heartbeats, pongs, deadlines, a match's start and end) and for the records.
//!
//! Everything that measures time inside the server (deadlines, rate limits) uses tokio's
//! monotonic `Instant`; only what a client or a record reads is turned into wall time, here.

use std::time::{SystemTime, UNIX_EPOCH};

use tokio::time::Instant;

/// The wall clock, in milliseconds since the Unix epoch (0 before it).
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default()
        .as_millis() as u64
}

/// The monotonic instant `at` as wall time: milliseconds since the Unix epoch (for a deadline
/// a client is told), `now` being the monotonic clock read just before.
pub(crate) fn unix_ms(at: Instant, now: Instant) -> u64 {
    let wall = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap_or_default();
    let wall = if at >= now {
        wall + (at - now)
    } else {
        wall.saturating_sub(now - at)
    };
    wall.as_millis() as u64
}
