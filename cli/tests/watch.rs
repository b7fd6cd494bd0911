//! `maumau tournament` with games over gRPC prints, at its start, where its games can be watched:
//! the match list of its own server, which links each game to the viewer. A game being played
//! is shown there as a spectator sees it: no hand, in the frames or in the page Chromium renders
//! (the viewer's leak test, on a tournament's match). With `--watch` the viewer's address comes
//! first and the viewer stays up with every game once they are over, until Ctrl-C.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "../../tests/common/chromium.rs"]
mod chromium;

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// A plain HTTP/1.1 GET of `url` (`http://host:port/path`): the status and the body.
fn get(url: &str) -> (u16, String) {
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(host).unwrap();
    write!(
        stream,
        "GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer[9..12].parse().unwrap();
    let body = answer.split_once("\r\n\r\n").unwrap().1.to_string();
    // A chunked body: the page's text is all that is looked at, chunk sizes do no harm.
    (status, body)
}

/// The links to viewers on the match list, in order.
fn viewer_links(list: &str) -> Vec<String> {
    list.split("href=\"/matches/")
        .skip(1)
        .map(|s| format!("/matches/{}", s.split('"').next().unwrap()))
        .filter(|l| l.ends_with("/view"))
        .collect()
}

/// A tournament running in the background, interrupted (as by Ctrl-C, so it stops its programs
/// too) when the test ends, passed or not. Returns whether it stopped within a minute.
struct Running(std::process::Child);

impl Running {
    fn interrupt(&mut self) -> bool {
        let pid = self.0.id().to_string();
        let _ = Command::new("kill").args(["-INT", &pid]).status();
        let deadline = Instant::now() + Duration::from_secs(60);
        while self.0.try_wait().unwrap().is_none() {
            if Instant::now() > deadline {
                let _ = self.0.kill();
                return false;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        true
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        if self.0.try_wait().ok().flatten().is_none() {
            self.interrupt();
        }
    }
}

/// Its stderr, line by line.
type Lines = std::io::Lines<BufReader<std::process::ChildStderr>>;

/// A tournament in `dir` with an entrant that never joins: its first game waits for it (for the
/// minute of grace), so a game is being played, its deal made and every hand hidden, while the
/// test looks. Returns it once it has printed where to watch its games, with that address and
/// the rest of its stderr.
fn idle_tournament(dir: &std::path::Path) -> (Running, Lines, String) {
    let mut child = Command::new(BIN)
        .arg("tournament")
        .args(["--seats", "2", "--deals", "1", "--threads", "1"])
        .args(["--bots", "heuristic", "--entrant", "idle=cmd:sleep 300"])
        .args(["--grace-ms", "60000", "--out"])
        .arg(dir.join("out"))
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let child = Running(child);
    let list_url = loop {
        let line = lines
            .next()
            .expect("the tournament prints where to watch before it ends")
            .unwrap();
        if let Some(url) = line.strip_prefix("maumau: watch the games at ") {
            break url.to_string();
        }
    };
    (child, lines, list_url)
}

#[test]
fn a_tournament_prints_where_its_games_are_watched_and_a_live_one_shows_no_hand() {
    let dir = tempfile::tempdir().unwrap();
    let (mut child, lines, list_url) = idle_tournament(dir.path());
    assert!(list_url.starts_with("http://127.0.0.1:"), "{list_url}");
    assert!(list_url.ends_with("/matches"), "{list_url}");
    // The rest of its output is read meanwhile, so it never blocks on a full pipe (nor finds
    // it closed when it is interrupted).
    let rest = std::thread::spawn(move || lines.map_while(Result::ok).collect::<Vec<_>>());
    let base = list_url.trim_end_matches("/matches").to_string();

    // The list links the game to its viewer once it is created.
    let deadline = Instant::now() + Duration::from_secs(60);
    let view = loop {
        let (status, list) = get(&list_url);
        assert_eq!(status, 200, "{list}");
        if let Some(link) = viewer_links(&list).into_iter().next() {
            break link;
        }
        assert!(Instant::now() < deadline, "no game on the list in 60 s");
        std::thread::sleep(Duration::from_millis(100));
    };
    let frames = view.replace("/view", "/frames");
    let (status, body) = get(&format!("{base}{frames}"));
    assert_eq!(status, 200, "{body}");
    let json = &body[body.find('{').unwrap()..=body.rfind('}').unwrap()];
    let v: serde_json::Value = serde_json::from_str(json).unwrap();
    assert_eq!(
        v["live"], true,
        "the idle seat's game is still being played"
    );
    assert_eq!(v["perspective"], "public");
    for f in v["frames"].as_array().unwrap() {
        for s in f["table"]["seats"].as_array().unwrap() {
            assert!(s["hand"].is_null(), "a hand in a live public view: {f}");
            assert!(s["cards"].as_u64().unwrap() > 0, "the deal is made: {f}");
        }
    }
    if let Some(chromium) = chromium::chromium_or_explain() {
        let dom = chromium::dump_dom(&chromium, &format!("{base}{view}"));
        assert!(dom.contains("data-live"), "not the live page");
        let seats = &dom[dom.find("id=\"seats\"").unwrap()..dom.find("class=\"centre\"").unwrap()];
        assert!(
            seats.contains("aria-label=\"hidden card\""),
            "the hands are drawn as backs: {seats}"
        );
        assert!(
            !seats.contains("data-card="),
            "a card face in a seat's hand on a live tournament game: {seats}"
        );
    }

    // Interrupted, the tournament stops its program and leaves.
    assert!(child.interrupt(), "the tournament did not stop");
    let said = rest.join().unwrap().join("\n");
    assert!(said.contains("interrupted"), "{said}");
}

/// Interrupted after whoever read its output has gone (its stderr a closed pipe), the tournament
/// still stops: its message cannot be written, which must not keep it from leaving (it used to
/// panic in the signal's thread and run on, with its programs).
#[test]
fn an_interrupted_tournament_stops_even_when_its_stderr_is_closed() {
    let dir = tempfile::tempdir().unwrap();
    // Started (its server is up, its game waits for the idle seat) ...
    let (mut child, lines, _) = idle_tournament(dir.path());
    // ... then nobody reads its output any more.
    drop(lines);
    assert!(
        child.interrupt(),
        "the tournament did not stop within a minute of its interrupt"
    );
}

/// The first line of `lines` that starts with `prefix`, without it (what came before is kept
/// in `seen`).
fn line_after(lines: &mut Lines, prefix: &str, seen: &mut Vec<String>) -> String {
    loop {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("no line `{prefix}…` in: {seen:#?}"))
            .unwrap();
        if let Some(rest) = line.strip_prefix(prefix) {
            let rest = rest.to_string();
            seen.push(line);
            return rest;
        }
        seen.push(line);
    }
}

/// `maumau tournament --watch`: its viewer's address comes first, the match list answers while
/// it plays and, once the games are over, keeps answering with every game (named by its
/// entrants, a built-in bot and an external program; the sealed duplicate deals revealed) until
/// Ctrl-C, after which it exits with status 0 and its port is closed. Screenshots of the list
/// (1366×900 and a phone's 390×844) and of a game go to target/test-output/watch/.
#[test]
fn a_watched_tournament_keeps_its_viewer_up_until_ctrl_c() {
    let dir = tempfile::tempdir().unwrap();
    let deals = 4;
    let mut child = Command::new(BIN)
        .arg("tournament")
        .args(["--watch", "127.0.0.1:0", "--seats", "2", "--threads", "1"])
        .args(["--bots", "alice=heuristic", "--entrant"])
        // An external program (`maumau bot`, named by MAUMAU_ENTRANT): its launches stop on an
        // interrupt while games are played, which must not take the viewer's Ctrl-C after them.
        .arg(format!(
            "bob=cmd:'{BIN}' bot --kind random --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\""
        ))
        .args(["--deals", &deals.to_string(), "--out"])
        .arg(dir.path().join("out"))
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let standings = std::thread::spawn(move || {
        let mut text = String::new();
        BufReader::new(stdout).read_to_string(&mut text).unwrap();
        text
    });
    let mut lines = BufReader::new(child.stderr.take().unwrap()).lines();
    let mut child = Running(child);

    // The address first, before anything else is said.
    let first = lines.next().unwrap().unwrap();
    let list_url = first
        .strip_prefix("maumau: watch the games at ")
        .unwrap_or_else(|| panic!("the first line is not where to watch: {first}"))
        .to_string();
    assert!(list_url.starts_with("http://127.0.0.1:"), "{list_url}");
    assert!(list_url.ends_with("/matches"), "{list_url}");
    let (status, list) = get(&list_url);
    assert_eq!(
        status, 200,
        "the list answers while the games are played: {list}"
    );

    // The games are over: the viewer stays up, and says so.
    let mut said = vec![first];
    let stays = line_after(
        &mut lines,
        "maumau: all games played; the viewer stays up at ",
        &mut said,
    );
    assert_eq!(stays, format!("{list_url} until Ctrl-C"));
    assert!(
        said.iter()
            .any(|l| l.starts_with("maumau: games ") && l.contains(" played in ")),
        "a last progress line: {said:#?}"
    );
    let (status, list) = get(&list_url);
    assert_eq!(status, 200, "{list}");
    let games = 2 * deals;
    let links = viewer_links(&list);
    assert_eq!(links.len(), games, "every game listed: {list}");
    let rows: Vec<&str> = list.split("<tr>").skip(2).collect();
    assert_eq!(rows.len(), games, "{list}");
    for row in &rows {
        assert!(
            row.contains("finished") && row.contains("alice") && row.contains("bob"),
            "a game named by its entrants: {row}"
        );
    }
    // Each deal was played twice (sealed until both seatings were over): every game is
    // revealed now, its viewer shows every hand.
    let base = list_url.trim_end_matches("/matches").to_string();
    for link in &links {
        let (status, body) = get(&format!("{base}{}", link.replace("/view", "/frames")));
        assert_eq!(status, 200, "{link}: {body}");
        let json = &body[body.find('{').unwrap()..=body.rfind('}').unwrap()];
        let v: serde_json::Value = serde_json::from_str(json).unwrap();
        assert_eq!(v["perspective"], "omniscient", "{link} revealed");
        assert_eq!(v["live"], false);
        let names: Vec<&str> = v["names"]
            .as_array()
            .unwrap()
            .iter()
            .map(|n| n.as_str().unwrap())
            .collect();
        assert!(
            names == ["alice", "bob"] || names == ["bob", "alice"],
            "{names:?}"
        );
        assert!(v["frames"][0]["table"]["seats"][0]["hand"].is_array());
        let (status, page) = get(&format!("{base}{link}"));
        assert_eq!(status, 200, "{page}");
    }
    if let Some(chromium) = chromium::chromium_or_explain() {
        let shots =
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-output/watch");
        std::fs::create_dir_all(&shots).unwrap();
        chromium::screenshot(
            &chromium,
            &list_url,
            &shots.join("matches-1366.png"),
            1366,
            900,
        );
        chromium::screenshot(
            &chromium,
            &list_url,
            &shots.join("matches-phone.png"),
            390,
            844,
        );
        let game = format!("{base}{}", links[0]);
        chromium::screenshot(&chromium, &game, &shots.join("game-1366.png"), 1366, 900);
    }

    // Ctrl-C: the viewer stops, the command ends with status 0, its port is closed.
    let pid = child.0.id().to_string();
    let asked = Instant::now();
    Command::new("kill").args(["-INT", &pid]).status().unwrap();
    let status = loop {
        if let Some(status) = child.0.try_wait().unwrap() {
            break status;
        }
        assert!(
            asked.elapsed() < Duration::from_secs(15),
            "still running 15 s after Ctrl-C"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    let rest: Vec<String> = lines.map_while(Result::ok).collect();
    assert!(
        rest.iter().any(|l| l == "maumau: viewer stopped"),
        "{rest:#?}"
    );
    let host = base.trim_start_matches("http://");
    assert!(
        std::net::TcpStream::connect(host).is_err(),
        "the viewer's port is closed"
    );
    let standings = standings.join().unwrap();
    assert!(
        standings.contains("alice") && standings.contains("report: "),
        "the results are printed before the viewer waits: {standings}"
    );
}
