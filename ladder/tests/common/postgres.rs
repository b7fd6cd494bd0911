//! A PostgreSQL server for tests: the one named by `MAUMAU_TEST_POSTGRES` (scripts/test.sh
//! starts one and sets it), or else a throwaway server this test process starts with
//! `scripts/postgres-temp.sh` and that stops when the process exits. Each caller gets a fresh
//! empty schema on it (through `search_path`: much faster to make than a database, and as
//! separate for the store). Without PostgreSQL's server binaries the tests fail with the command that
//! installs them; they are never skipped. The TLS tests get a second server that takes TLS
//! ([`tls_server`]).
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::path::Path;
use std::process::Command;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};

/// The URL of a database the tests may create databases with.
pub(crate) fn admin_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        if let Ok(url) = std::env::var("MAUMAU_TEST_POSTGRES")
            && !url.is_empty()
        {
            return url;
        }
        start_temp(&[]).0
    })
}

/// A server that takes TLS and the path of its CA's certificate (PEM): `MAUMAU_TEST_POSTGRES`
/// when `MAUMAU_TEST_POSTGRES_CA` is set too, or else a throwaway server started with
/// `scripts/postgres-temp.sh start --tls` (its certificate names 127.0.0.1 and localhost).
pub(crate) fn tls_server() -> (&'static str, &'static str) {
    static SERVER: OnceLock<(String, String)> = OnceLock::new();
    let (url, ca) = SERVER.get_or_init(|| {
        if let (Ok(url), Ok(ca)) = (
            std::env::var("MAUMAU_TEST_POSTGRES"),
            std::env::var("MAUMAU_TEST_POSTGRES_CA"),
        ) && !url.is_empty()
            && !ca.is_empty()
        {
            return (url, ca);
        }
        let (url, ca) = start_temp(&["--tls"]);
        (url, ca.expect("postgres-temp.sh --tls printed no CA"))
    });
    (url, ca)
}

/// Starts a throwaway server that stops when this process exits: its URL, and its CA's
/// certificate when started with `--tls`.
fn start_temp(args: &[&str]) -> (String, Option<String>) {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .map(|d| d.join("scripts/postgres-temp.sh"))
        .find(|p| p.is_file())
        .expect("scripts/postgres-temp.sh not found above the crate");
    let out = Command::new("bash")
        .arg(&script)
        .args(["start", "--owner-pid", &std::process::id().to_string()])
        .args(args)
        .output()
        .expect("cannot run scripts/postgres-temp.sh");
    assert!(
        out.status.success(),
        "these tests need a PostgreSQL server and could not start one:\n{}\n\
         Install PostgreSQL's server binaries with `sudo apt-get install -y postgresql`, or \
         set MAUMAU_TEST_POSTGRES to the URL of a server where the user may create databases.",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let value = |key: &str| {
        stdout
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .map(str::to_string)
    };
    (
        value("MAUMAU_TEST_POSTGRES=").expect("postgres-temp.sh printed no URL"),
        value("MAUMAU_POSTGRES_CA="),
    )
}

/// Creates an empty schema and returns a URL whose connections use it.
pub(crate) fn fresh_database() -> String {
    fresh_database_on(admin_url())
}

/// [`fresh_database`] on the server at `admin`.
pub(crate) fn fresh_database_on(admin: &str) -> String {
    static NEXT: AtomicU32 = AtomicU32::new(0);
    let name = format!(
        "maumau_test_{}_{}_{}",
        std::process::id(),
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos(),
        NEXT.fetch_add(1, Ordering::Relaxed)
    );
    let mut c = postgres::Client::connect(admin, postgres::NoTls)
        .unwrap_or_else(|e| panic!("cannot connect to the test PostgreSQL at {admin}: {e}"));
    c.batch_execute(&format!("CREATE SCHEMA {name}")).unwrap();
    let sep = if admin.contains('?') { '&' } else { '?' };
    format!("{admin}{sep}options=-c%20search_path%3D{name}")
}
