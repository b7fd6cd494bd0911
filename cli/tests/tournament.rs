//! End to end: `maumau tournament` with an external program over gRPC (`maumau bot` launched
//! once per match on the server the command starts) gives the same games as the same bot
//! in-process, and a program that crashes forfeits while the tournament carries on; the
//! tournament's report.html shows the standings and links every game's offline viewer.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

// Debian's headless Chromium, as the root crate's browser tests run it.
#[path = "../../tests/common/chromium.rs"]
mod chromium;

#[path = "common/within.rs"]
mod within;

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

fn command(out: &Path, args: &[&str]) -> Command {
    let mut command = Command::new(BIN);
    command
        .arg("tournament")
        .args(["--seats", "2", "--deals", "2", "--threads", "2", "--out"])
        .arg(out)
        .args(args);
    command
}

fn tournament(out: &Path, args: &[&str]) -> String {
    succeeded(command(out, args).output().unwrap())
}

/// The tournament's standard output, once it has exited with success within two minutes. The
/// runs that use it give programs ten minutes of grace: one still going is waiting for the clock
/// of a seat whose player is gone.
fn tournament_within(out: &Path, args: &[&str]) -> String {
    let output = within::output_within(command(out, args), Duration::from_secs(120))
        .expect("the tournament waited for the clock of a seat whose player was gone");
    succeeded(output)
}

/// The tournament's standard output, once it has exited with success.
fn succeeded(output: Output) -> String {
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stdout}\n{stderr}");
    stdout
}

fn sorted_lines(path: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(str::to_string)
        .collect();
    v.sort();
    v
}

#[test]
fn an_external_bot_over_grpc_plays_the_same_games_as_in_process() {
    let dir = tempfile::tempdir().unwrap();
    let (external, local) = (dir.path().join("external"), dir.path().join("local"));
    // `maumau bot` as the external program: it reads the seat token from MAUMAU_TOKEN, and is
    // given the server and the seed the tournament hands it.
    let command = format!(
        "ext=cmd:'{BIN}' bot --kind heuristic --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\""
    );
    let shown = tournament(
        &external,
        &[
            "--bots",
            "heuristic,random",
            "--entrant",
            &command,
            "--seed",
            "7",
        ],
    );
    assert!(shown.contains("ext"), "{shown}");
    tournament(
        &local,
        &["--bots", "heuristic,random,ext=heuristic", "--seed", "7"],
    );
    // 3 tables × 2 deals × 2 seatings, game by game and action by action the same (over gRPC
    // a result also names the opaque game id and the match it was played under).
    let games = results_without_server_ids(&external.join("results.jsonl"));
    assert_eq!(games.len(), 12);
    assert_eq!(
        games,
        results_without_server_ids(&local.join("results.jsonl"))
    );
    assert_eq!(
        sorted_lines(&external.join("replays.jsonl")),
        sorted_lines(&local.join("replays.jsonl"))
    );
    // The program's own output is kept per launch (the four games `ext` sat in).
    let logs = std::fs::read_dir(external.join("logs")).unwrap().count();
    assert_eq!(logs, 8);
}

/// The lines of a results.jsonl in id order, without the `game` and `match_id` fields that
/// only games over gRPC have, and without the decision times (measured, so never the same).
fn results_without_server_ids(path: &Path) -> Vec<serde_json::Value> {
    let mut v: Vec<serde_json::Value> = std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| {
            let mut g: serde_json::Value = serde_json::from_str(l).unwrap();
            let map = g.as_object_mut().unwrap();
            map.remove("game");
            map.remove("match_id");
            map.remove("decision_ns");
            g
        })
        .collect();
    v.sort_by_key(|g| g["id"].as_str().unwrap().to_string());
    v
}

/// The seed of each game in a results.jsonl.
fn game_seeds(out: &Path) -> Vec<u64> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["seed"]
                .as_u64()
                .unwrap()
        })
        .collect()
}

/// Without --seed every tournament draws a secret seed from the operating system (two runs deal
/// differently, and the seed is shown only with the results); with --seed the output says the
/// deals are reproducible and so predictable; resuming a directory takes its stored seed.
#[test]
fn without_a_seed_each_tournament_deals_secretly_and_differently() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b, c) = (
        dir.path().join("a"),
        dir.path().join("b"),
        dir.path().join("c"),
    );
    let args = ["--bots", "random,heuristic", "--deals", "1", "--no-replays"];
    let run = |out: &Path, extra: &[&str]| {
        let output = Command::new(BIN)
            .arg("tournament")
            .args(args)
            .arg("--out")
            .arg(out)
            .args(extra)
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        (
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (stdout_a, stderr_a) = run(&a, &[]);
    let (_, stderr_b) = run(&b, &[]);
    let (seeds_a, seeds_b) = (game_seeds(&a), game_seeds(&b));
    assert_eq!(seeds_a.len(), 2);
    assert!(
        seeds_a.iter().zip(&seeds_b).all(|(x, y)| x != y),
        "two runs, two secret seeds: {seeds_a:?} {seeds_b:?}"
    );
    for stderr in [&stderr_a, &stderr_b] {
        assert!(stderr.contains("secret seed drawn"), "{stderr}");
    }
    let header: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(a.join("tournament.json")).unwrap()).unwrap();
    let seed = header["seed"].as_u64().unwrap();
    assert!(
        !stderr_a.contains(&seed.to_string()),
        "not shown at the start: {stderr_a}"
    );
    assert!(
        stdout_a.contains(&format!("seed {seed} (secret until now)")),
        "revealed with the results: {stdout_a}"
    );
    // Resuming the directory without --seed keeps its seed (nothing is played again).
    let (stdout_again, stderr_again) = run(&a, &[]);
    assert!(
        stderr_again.contains("stored in the output directory"),
        "{stderr_again}"
    );
    assert!(stdout_again.contains("0 played now"), "{stdout_again}");
    assert_eq!(game_seeds(&a), seeds_a);
    // A chosen seed is said to make the deals predictable.
    let (_, stderr_c) = run(&c, &["--seed", "4242"]);
    assert!(
        stderr_c
            .contains("seed 4242, chosen: the deals are reproducible, and therefore predictable"),
        "{stderr_c}"
    );
}

/// A program that crashes forfeits with its last words, and its seat is resigned at once: with
/// ten minutes of grace (the time a seat may be missing, and the time the server waits for every
/// seat to join) its four games are over in seconds, not forty minutes.
#[test]
fn a_crashing_program_forfeits_with_a_clear_message() {
    let dir = tempfile::tempdir().unwrap();
    let args = [
        "--bots",
        "random",
        "--entrant",
        "crash=cmd:echo 'no module named grpc' >&2; exit 1",
        "--grace-ms",
        "600000",
    ];
    let shown = tournament_within(dir.path(), &args);
    assert!(
        shown.contains("crash forfeited 4 of its 4 games"),
        "{shown}"
    );
    assert!(shown.contains("no module named grpc"), "{shown}");
    // A bot that forfeited every game is ranked below the one that played, not tied with it
    // (two deals are too few for the statistics to separate anyone), its forfeits beside its
    // rank, in the terminal and in the report.
    let line = |name: &str| {
        shown
            .lines()
            .find(|l| {
                l.starts_with(|c: char| c.is_ascii_digit() || c == '=')
                    && l.contains(&format!(" {name} "))
            })
            .unwrap_or_else(|| panic!("no standings line for {name}: {shown}"))
            .to_string()
    };
    assert!(line("random").starts_with("1     -  "), "{shown}");
    assert!(line("crash").starts_with("2     4 of 4  "), "{shown}");
    let report = std::fs::read_to_string(dir.path().join("report.html")).unwrap();
    let row = entrant_row(&report, "crash");
    assert!(
        row.contains("<td class=\"rank\" data-label=\"rank\">2</td><td class=\"num forfeits bad\" data-label=\"forfeits\">4</td>"),
        "{row}"
    );
    let row = entrant_row(&report, "random");
    assert!(
        row.contains("<td class=\"rank\" data-label=\"rank\">1</td><td class=\"num forfeits\" data-label=\"forfeits\">0</td>"),
        "{row}"
    );
}

/// The `<tr>` of entrant `name` in a report's standings.
fn entrant_row<'a>(report: &'a str, name: &str) -> &'a str {
    let start = report
        .find(&format!("<tr class=\"entrant\" data-name=\"{name}\">"))
        .unwrap_or_else(|| panic!("no row for {name}"));
    let end = start + report[start..].find("</tr>").unwrap();
    &report[start..end]
}

/// Whether every element of an HTML page (without scripts) is closed in order: void elements
/// (`meta`, `br`, `input`) need no end tag; `<!DOCTYPE>` is skipped.
fn balanced(page: &str) -> Result<(), String> {
    const VOID: [&str; 3] = ["meta", "br", "input"];
    let mut open: Vec<&str> = Vec::new();
    let mut rest = page;
    while let Some(at) = rest.find('<') {
        let tag = &rest[at + 1..];
        let end = tag.find('>').ok_or("a tag never ends")?;
        let inner = &tag[..end];
        rest = &tag[end + 1..];
        if inner.starts_with('!') {
            continue;
        }
        if let Some(name) = inner.strip_prefix('/') {
            match open.pop() {
                Some(top) if top == name => {}
                other => return Err(format!("</{name}> closes {other:?}")),
            }
        } else {
            let name = inner.split([' ', '/']).next().unwrap_or_default();
            if !VOID.contains(&name) {
                open.push(name);
            }
        }
    }
    if open.is_empty() {
        Ok(())
    } else {
        Err(format!("never closed: {open:?}"))
    }
}

/// `maumau tournament` writes report.html: well-formed, every entrant with the numbers of
/// standings.json, every game linked to a file of its own that holds that game's viewer (the
/// very page `maumau replay --game ID --html` writes), and the page renders from file:// in
/// headless Chromium (a screenshot is kept in target/test-output/report/ for people to see).
#[test]
fn the_report_shows_the_standings_and_links_every_game() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let shown = tournament(
        &out,
        &["--bots", "random,heuristic,heuristic~0.3", "--seed", "5"],
    );
    let path = out.join("report.html");
    assert!(
        shown.contains(&format!("report: {}", path.display())),
        "the path is printed: {shown}"
    );
    let report = std::fs::read_to_string(&path).unwrap();
    assert!(report.starts_with("<!DOCTYPE html>"), "{report}");
    balanced(&report).unwrap();

    let standings: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    let standings = standings["standings"].as_array().unwrap();
    assert_eq!(standings.len(), 3);
    for s in standings {
        let row = entrant_row(&report, s["name"].as_str().unwrap());
        let num = |key: &str, field: &str| s[key][field].as_f64().unwrap();
        for shown in [
            format!(">{}</td>", s["games"]),
            format!("{:.2}", num("rating", "mean")),
            format!("{:.2}", num("rating", "ci95")),
            format!("{:.3}", num("win_share", "mean")),
            format!("{:.2}", num("placing", "mean")),
            format!("{:.1}", num("score", "mean")),
            format!("{:.2}", s["conservative"].as_f64().unwrap()),
            format!(">{}</td>", s["forfeits"]),
        ] {
            assert!(row.contains(&shown), "{shown} in {row}");
        }
        // The two interval bars.
        assert_eq!(row.matches("class=\"interval\"").count(), 2, "{row}");
    }
    // The total's heading says which way is better in classic; so does the terminal's.
    assert!(
        report.contains("<th class=\"num score\">penalty/game, lower is better</th>"),
        "{report}"
    );
    assert!(shown.contains("penalty/game, lower is better"), "{shown}");
    // Decision times: the heuristic bots' decisions are timed in-process, the random bot's
    // answers from its legal actions are not.
    assert!(entrant_row(&report, "random").contains(">not timed</td>"));
    for name in ["heuristic", "heuristic~0.3"] {
        let row = entrant_row(&report, name);
        let cell = &row[row.find("class=\"num decisions\"").unwrap()..];
        assert!(cell.contains("s, "), "{cell}");
        assert!(!cell.contains("not timed"), "{cell}");
    }

    // pairs.csv: every pair with its blocks, placing gain and strength-model difference with
    // their intervals, as standings.json has them; two deals per table are two blocks, too few
    // to separate anyone.
    let body: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("standings.json")).unwrap())
            .unwrap();
    let pairs_json = body["pairs"].as_array().unwrap();
    let csv = std::fs::read_to_string(out.join("pairs.csv")).unwrap();
    let mut lines = csv.lines();
    assert_eq!(
        lines.next(),
        Some(
            "a,b,games,blocks,a_ahead,gain,gain_low,gain_high,model,model_low,model_high,separable,score_diff"
        )
    );
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split(',').collect()).collect();
    assert_eq!(rows.len(), 3);
    for (row, p) in rows.iter().zip(pairs_json) {
        assert_eq!(row[0], p["a"].as_str().unwrap());
        assert_eq!(row[1], p["b"].as_str().unwrap());
        assert_eq!((row[2], row[3]), ("4", "2"), "{row:?}");
        assert_eq!(
            row[5],
            format!("{:.4}", p["gain"]["mean"].as_f64().unwrap())
        );
        let (low, high): (f64, f64) = (row[6].parse().unwrap(), row[7].parse().unwrap());
        assert!(low <= high, "{row:?}");
        // The strength model's difference beside it, within its interval.
        assert_eq!(
            row[8],
            format!("{:.4}", p["model"]["mean"].as_f64().unwrap())
        );
        let (low, high): (f64, f64) = (row[9].parse().unwrap(), row[10].parse().unwrap());
        assert!(low <= high, "{row:?}");
        assert_eq!(row[11], "false", "{row:?}");
    }
    // Everyone shares the first rank, marked `=`, and the grid has a coloured cell marked `=`
    // for every ordered pair.
    assert_eq!(
        report
            .matches("<td class=\"rank\" data-label=\"rank\">=1</td>")
            .count(),
        3
    );
    assert_eq!(
        report
            .matches("<td class=\"pair\" style=\"background:hsl(")
            .count(),
        6
    );
    assert_eq!(report.matches("data-separable=\"false\"").count(), 6);
    assert!(report.contains("Pairwise, over duplicate blocks"));
    assert!(shown.contains("pairwise, over duplicate blocks"), "{shown}");

    // Every game is linked, and its file holds its own viewer.
    let ids: Vec<String> = std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .map(|l| {
            serde_json::from_str::<serde_json::Value>(l).unwrap()["id"]
                .as_str()
                .unwrap()
                .to_string()
        })
        .collect();
    assert_eq!(ids.len(), 12);
    for id in &ids {
        let href = format!("href=\"games/{id}.html\"");
        assert!(report.contains(&href), "{href}");
        assert!(out.join("games").join(format!("{id}.html")).is_file());
    }
    let id = &ids[3];
    let game = std::fs::read_to_string(out.join("games").join(format!("{id}.html"))).unwrap();
    assert!(game.contains(&format!("\"match_id\":\"{id}\"")));
    let exported = dir.path().join("exported.html");
    let ran = Command::new(BIN)
        .arg("replay")
        .arg(out.join("replays.jsonl"))
        .args(["--game", id, "--html"])
        .arg(&exported)
        .output()
        .unwrap();
    assert!(ran.status.success(), "{ran:?}");
    // The report's page holds every hand; `maumau replay --html` the same frames and the
    // other perspectives after them.
    let frames_of = |page: &str, view: &str| -> String {
        let open = format!("data-view=\"{view}\">");
        let from = page.find(&open).unwrap() + open.len();
        page[from..from + page[from..].find("</script>").unwrap()].to_string()
    };
    let exported = std::fs::read_to_string(&exported).unwrap();
    assert_eq!(game.matches("class=\"frames\"").count(), 1);
    assert_eq!(
        frames_of(&game, "omniscient"),
        frames_of(&exported, "omniscient"),
        "the same frames as `maumau replay --html`"
    );
    assert!(exported.contains("data-view=\"public\""));

    // In the browser, from disk: the standings and the links are there.
    let Some(chromium) = chromium::chromium_or_explain() else {
        return;
    };
    let url = format!("file://{}", path.display());
    let dom = chromium::dump_dom(&chromium, &url);
    assert!(dom.contains("Standings"), "{dom}");
    for s in standings {
        entrant_row(&dom, s["name"].as_str().unwrap());
    }
    assert_eq!(dom.matches("class=\"view\"").count(), ids.len());
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-output/report");
    std::fs::create_dir_all(&shots).unwrap();
    chromium::screenshot(&chromium, &url, &shots.join("report.png"), 1400, 1400);
    let link = format!(
        "file://{}",
        out.join("games").join(format!("{id}.html")).display()
    );
    chromium::screenshot(&chromium, &link, &shots.join("game.png"), 1300, 900);
    // The exported file switches perspective offline: `?view=0` shows seat 0's view.
    let switched = format!(
        "file://{}?view=0",
        dir.path().join("exported.html").display()
    );
    let dom = chromium::dump_dom(&chromium, &switched);
    assert!(dom.contains("id=\"perspective-now\">seat 0<"), "{dom}");
    chromium::screenshot(
        &chromium,
        &switched,
        &shots.join("exported-seat-0.png"),
        1300,
        900,
    );
}

/// The standings fit a 1280 px screen (no sideways scrolling of their table), stack into one
/// card per entrant on a phone (a screenshot at 390×844 in target/test-output/report/), print
/// quick decisions in whole microseconds rather than nanoseconds, and the pairwise grid says
/// what decides the ranks.
#[test]
fn the_standings_fit_the_screen_and_read_in_microseconds() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    tournament(
        &out,
        &[
            "--bots",
            "random,heuristic,heuristic~0.3,heuristic~0.6",
            "--seed",
            "7",
            "--no-replays",
        ],
    );
    let report = std::fs::read_to_string(out.join("report.html")).unwrap();
    // Every timed decision in µs, ms or s; none in nanoseconds or with a fraction of a µs.
    let mut timed = 0;
    for cell in report.split("class=\"num decisions\"").skip(1) {
        let text = &cell[cell.find('>').unwrap() + 1..cell.find("</td>").unwrap()];
        assert!(!text.contains(" ns"), "{text}");
        for part in text.split(", ") {
            if let Some(us) = part.strip_suffix(" µs") {
                assert!(us == "&lt; 1" || us.parse::<u32>().is_ok(), "{text}");
                timed += 1;
            }
        }
    }
    assert!(
        timed > 0,
        "in-process heuristic bots decide in microseconds"
    );
    assert!(
        report.contains("What decides the ranks: the standings are ordered by the Weng-Lin rating"),
        "the sentence above the grid"
    );

    let Some(chromium) = chromium::chromium_or_explain() else {
        return;
    };
    // The page measures its standings' box once laid out, and writes what it found in the DOM.
    let measured = out.join("measured.html");
    let probe = "<script>addEventListener('load', () => { const b = document.getElementById('standings'); \
                 document.body.dataset.widths = b.scrollWidth + ' ' + b.clientWidth; });</script></body>";
    std::fs::write(&measured, report.replace("</body>", probe)).unwrap();
    let dom = chromium::dump_dom_sized(
        &chromium,
        &format!("file://{}", measured.display()),
        Some((1280, 900)),
    );
    let at = dom.find("data-widths=\"").expect("the probe ran") + "data-widths=\"".len();
    let widths: Vec<u32> = dom[at..dom[at..].find('"').unwrap() + at]
        .split(' ')
        .map(|w| w.parse().unwrap())
        .collect();
    assert!(
        widths[0] <= widths[1],
        "the standings scroll sideways at 1280 px: scrollWidth {} > clientWidth {}",
        widths[0],
        widths[1]
    );
    let shots = Path::new(env!("CARGO_MANIFEST_DIR")).join("../target/test-output/report");
    std::fs::create_dir_all(&shots).unwrap();
    let url = format!("file://{}", out.join("report.html").display());
    chromium::screenshot(&chromium, &url, &shots.join("report-1280.png"), 1280, 900);
    chromium::screenshot(&chromium, &url, &shots.join("report-phone.png"), 390, 844);
}

/// With standard error not a terminal (a log, a CI job), progress is plain lines: each tenth
/// of the games or every few seconds, never one per game, and a last line with the time taken.
#[test]
fn progress_is_plain_lines_when_stderr_is_not_a_terminal() {
    let dir = tempfile::tempdir().unwrap();
    let games = 300;
    let output = Command::new(BIN)
        .arg("tournament")
        .args([
            "--bots",
            "random,heuristic",
            "--seats",
            "2",
            "--threads",
            "1",
        ])
        .args(["--deals", &(games / 2).to_string(), "--out"])
        .arg(dir.path().join("t"))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(output.status.success(), "{stderr}");
    let progress: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("maumau: games "))
        .collect();
    let (last, during) = progress.split_last().expect("progress lines");
    assert!(
        last.starts_with(&format!("maumau: games {games}/{games} played in ")),
        "{stderr}"
    );
    assert!(!during.is_empty(), "{stderr}");
    for line in during {
        assert!(
            line.contains(&format!("/{games} (")) && line.contains(" elapsed, about "),
            "{line}"
        );
    }
    // At most a line per tenth, and one per 5 s between them.
    let seconds: f64 = last
        .rsplit("played in ")
        .next()
        .and_then(|t| t.strip_suffix(" s"))
        .map_or(600.0, |t| t.parse().unwrap_or(600.0));
    assert!(
        during.len() <= 9 + (seconds / 5.0) as usize,
        "{} lines in {seconds} s: {stderr}",
        during.len()
    );
    assert!(!stderr.contains('\r'), "no bar redrawn in a log: {stderr}");
}

/// docs/PERFORMANCE.md's crashing-entrant run, as written (with this build as `maumau`): the
/// entrant forfeits all six games, its seats resigned, so the run ends without waiting out the
/// grace of any of them.
#[test]
fn the_crashing_entrant_run_of_the_performance_notes_runs_as_written() {
    let docs = include_str!("../../docs/PERFORMANCE.md");
    let line = docs
        .lines()
        .find(|l| l.starts_with("maumau tournament ") && l.contains("dead=cmd:false"))
        .expect("docs/PERFORMANCE.md shows the crashing-entrant run");
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::os::unix::fs::symlink(BIN, bin.join("maumau")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut command = Command::new("sh");
    command
        .args(["-c", line])
        .current_dir(dir.path())
        .env("PATH", path);
    let output = within::output_within(command, Duration::from_secs(120))
        .expect("the run waited for the clock of a program that had exited");
    let shown = succeeded(output);
    assert!(shown.contains("dead forfeited 6 of its 6 games"), "{shown}");
}
