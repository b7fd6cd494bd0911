//! What the server counts for its operators, named in one place.
//!
//! The server records through the [`metrics`] facade; `maumau serve --metrics-listen ADDR`
//! installs a Prometheus recorder (`metrics-exporter-prometheus`) and
//! [`metrics_port::serve`](crate::metrics_port::serve) answers `GET /metrics` with its text on
//! `ADDR`. Without an installed recorder every call here does nothing.
//!
//! | metric | kind | what |
//! |---|---|---|
//! | `maumau_matches_open` | gauge | matches being played (or waiting for their seats) |
//! | `maumau_matches_ended_total{status}` | counter | matches recorded as FINISHED or ABORTED |
//! | `maumau_decisions_total` | counter | actions accepted from the seat to move (rate: decisions per second) |
//! | `maumau_rejections_total{reason}` | counter | seats' actions and messages refused, by `maumau-reason` |
//! | `maumau_timeouts_total` | counter | decisions the clock took (the default action was played) |
//! | `maumau_connections_open` | gauge | open client connections (a scraper's on the metrics port included) |
//! | `maumau_connections_refused_total` | counter | connections closed at once: the server held `max_connections` |
//! | `maumau_connections_flooding_total` | counter | connections closed for calling on after RATE_LIMITED |
//! | `maumau_streams_open` | gauge | open Play and Watch streams |
//! | `maumau_store_write_seconds` | summary | time to commit one batch of finished matches |
//! | `maumau_store_write_failures_total` | counter | failed writes of finished matches (each retried) |
//! | `maumau_storage_available` | gauge | 1 while the data directory can be written, 0 while not |

use std::time::Duration;

use maumau::pb;
use metrics::{counter, describe_counter, describe_gauge, describe_histogram, gauge, histogram};

/// Describes every metric to the installed recorder (their `# HELP` lines).
pub fn describe() {
    describe_gauge!(
        "maumau_matches_open",
        "Matches being played or waiting for their seats."
    );
    describe_counter!("maumau_matches_ended_total", "Matches recorded, by status.");
    describe_counter!(
        "maumau_decisions_total",
        "Actions accepted from the seat to move."
    );
    describe_counter!(
        "maumau_rejections_total",
        "Seats' actions and messages refused, by reason."
    );
    describe_counter!("maumau_timeouts_total", "Decisions taken by the clock.");
    describe_gauge!("maumau_connections_open", "Open client connections.");
    describe_counter!(
        "maumau_connections_refused_total",
        "Connections closed at once because the server held its maximum."
    );
    describe_counter!(
        "maumau_connections_flooding_total",
        "Connections closed for calling on after RATE_LIMITED."
    );
    describe_gauge!("maumau_streams_open", "Open Play and Watch streams.");
    describe_histogram!(
        "maumau_store_write_seconds",
        metrics::Unit::Seconds,
        "Time to commit one batch of finished matches."
    );
    describe_counter!(
        "maumau_store_write_failures_total",
        "Failed writes of finished matches."
    );
    describe_gauge!(
        "maumau_storage_available",
        "1 while the data directory can be written."
    );
    gauge!("maumau_storage_available").set(1.0);
}

pub(crate) fn match_opened() {
    gauge!("maumau_matches_open").increment(1.0);
}

pub(crate) fn match_closed() {
    gauge!("maumau_matches_open").decrement(1.0);
}

pub(crate) fn match_ended(status: pb::MatchStatus) {
    counter!("maumau_matches_ended_total", "status" => status.as_str_name()).increment(1);
}

pub(crate) fn decision() {
    counter!("maumau_decisions_total").increment(1);
}

pub(crate) fn rejection(reason: pb::ErrorReason) {
    counter!("maumau_rejections_total", "reason" => reason.as_str_name()).increment(1);
}

pub(crate) fn timeout() {
    counter!("maumau_timeouts_total").increment(1);
}

pub(crate) fn connection_refused() {
    counter!("maumau_connections_refused_total").increment(1);
}

pub(crate) fn connection_flooding() {
    counter!("maumau_connections_flooding_total").increment(1);
}

pub(crate) fn store_written(took: Duration) {
    histogram!("maumau_store_write_seconds").record(took.as_secs_f64());
}

pub(crate) fn store_failed() {
    counter!("maumau_store_write_failures_total").increment(1);
}

pub(crate) fn storage_available(available: bool) {
    gauge!("maumau_storage_available").set(if available { 1.0 } else { 0.0 });
}

/// Counts one open thing (a connection, a Play or Watch stream) in a gauge for as long as it lives.
pub(crate) struct Open(&'static str);

impl Open {
    pub(crate) fn connection() -> Open {
        Open::new("maumau_connections_open")
    }

    pub(crate) fn stream() -> Open {
        Open::new("maumau_streams_open")
    }

    fn new(name: &'static str) -> Open {
        gauge!(name).increment(1.0);
        Open(name)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        gauge!(self.0).decrement(1.0);
    }
}
