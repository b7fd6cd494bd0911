//! Debian's headless Chromium for the tests of web pages: find it (or say how to install it),
//! load a page and dump the DOM its scripts built, or save a screenshot of it. Shared by the
//! root crate's tests (through `web.rs`) and the CLI's (`cli/tests/tournament.rs`, by path),
//! so it needs nothing but `tempfile`.
#![allow(dead_code, unreachable_pub, missing_docs)]

use std::time::Duration;

/// Debian's Chromium, or a failure that says how to install it. Set `MAUMAU_SKIP_CHROMIUM=1` to
/// skip the browser test on a machine without it (CI installs it, so it never skips there).
pub fn chromium_or_explain() -> Option<std::path::PathBuf> {
    let explicit = std::env::var_os("CHROMIUM").map(std::path::PathBuf::from);
    let found = explicit.or_else(|| {
        ["chromium", "chromium-browser", "google-chrome"]
            .iter()
            .flat_map(|name| {
                std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
                    .map(move |dir| dir.join(name))
                    .collect::<Vec<_>>()
            })
            .find(|p| p.is_file())
    });
    if found.is_none() && std::env::var_os("MAUMAU_SKIP_CHROMIUM").is_some() {
        eprintln!("MAUMAU_SKIP_CHROMIUM is set and no Chromium was found: browser test skipped");
        return None;
    }
    Some(found.unwrap_or_else(|| {
        panic!(
            "the browser tests need headless Chromium: install it with \
             `sudo apt-get install -y chromium` (Debian/Ubuntu), or point CHROMIUM at a \
             Chromium or Chrome binary; MAUMAU_SKIP_CHROMIUM=1 skips this test"
        )
    }))
}

/// How every test starts Chromium: headless, as root in a container, with nothing that reaches
/// the network on its own (this machine's network is closed).
const FLAGS: [&str; 8] = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-dev-shm-usage",
    "--no-first-run",
    "--no-default-browser-check",
    "--disable-extensions",
    "--disable-background-networking",
];

/// Loads `url` in headless Chromium, lets its scripts run, and returns the DOM they built.
pub fn dump_dom(chromium: &std::path::Path, url: &str) -> String {
    dump_dom_sized(chromium, url, None)
}

/// As [`dump_dom`], in a `width` × `height` window (`None`: Chromium's default), for a page
/// whose script measures its own layout.
pub fn dump_dom_sized(chromium: &std::path::Path, url: &str, size: Option<(u32, u32)>) -> String {
    let profile = tempfile::tempdir().expect("a profile directory");
    // The DOM goes to a file, not a pipe: a page larger than the pipe's buffer would block
    // Chromium's write while this waits for it to exit.
    let dom_path = profile.path().join("dom.html");
    let dom_file = std::fs::File::create(&dom_path).expect("a file for the DOM");
    let mut child = std::process::Command::new(chromium)
        .args(FLAGS)
        .args(size.map(|(w, h)| format!("--window-size={w},{h}")))
        .arg(format!("--user-data-dir={}", profile.path().display()))
        // Scripts run and their fetches finish (in virtual time) before the DOM is dumped.
        .arg("--virtual-time-budget=20000")
        .arg("--dump-dom")
        .arg(url)
        .stdout(dom_file)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("Chromium starts");
    let deadline = std::time::Instant::now() + Duration::from_secs(90);
    loop {
        if child.try_wait().expect("wait for Chromium").is_some() {
            break;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("Chromium did not finish loading {url} within 90 s");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let out = child.wait_with_output().expect("Chromium's output");
    assert!(
        out.status.success(),
        "Chromium failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    std::fs::read_to_string(&dom_path).expect("a UTF-8 DOM")
}

/// Loads `url` in headless Chromium in a `width` × `height` window, lets its scripts run, and
/// saves a PNG screenshot of it to `png` (for people to look at; nothing is checked in it).
pub fn screenshot(
    chromium: &std::path::Path,
    url: &str,
    png: &std::path::Path,
    width: u32,
    height: u32,
) {
    let profile = tempfile::tempdir().expect("a profile directory");
    let out = std::process::Command::new(chromium)
        .args(FLAGS)
        .args(["--hide-scrollbars", "--virtual-time-budget=5000"])
        .arg(format!("--user-data-dir={}", profile.path().display()))
        .arg(format!("--window-size={width},{height}"))
        .arg(format!("--screenshot={}", png.display()))
        .arg(url)
        .output()
        .expect("Chromium runs");
    assert!(
        out.status.success() && png.is_file(),
        "Chromium made no screenshot of {url}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}
