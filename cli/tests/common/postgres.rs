//! A fresh schema on the test PostgreSQL for the CLI's end-to-end tests that need one (the ladder
//! on several nodes, the tournament on several machines).
#![allow(dead_code, unreachable_pub, clippy::unwrap_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

/// A URL for a fresh schema on the server `MAUMAU_TEST_POSTGRES` names, or `None` (with a
/// message naming `test`) when it is unset: CI and `scripts/test.sh` set it.
pub fn fresh_store_url(test: &str) -> Option<String> {
    let admin = std::env::var("MAUMAU_TEST_POSTGRES")
        .ok()
        .filter(|u| !u.is_empty());
    let Some(admin) = admin else {
        eprintln!(
            "{test}: SKIPPED, MAUMAU_TEST_POSTGRES is not set (scripts/test.sh and CI set \
             it; start a server with `scripts/postgres-temp.sh start`)"
        );
        return None;
    };
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis();
    // Tests of one process may ask within the same millisecond.
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let n = NEXT.fetch_add(1, Ordering::Relaxed);
    let name = format!("maumau_{test}_{}_{now}_{n}", std::process::id());
    let mut c = postgres::Client::connect(&admin, postgres::NoTls).unwrap();
    c.batch_execute(&format!("CREATE SCHEMA {name}")).unwrap();
    let sep = if admin.contains('?') { '&' } else { '?' };
    Some(format!("{admin}{sep}options=-c%20search_path%3D{name}"))
}
