//! End to end: in a `maumau tournament` with duplicate deals, an entrant that keeps everything
//! it is told (every final report its matches send it) can predict none of its later deals: no
//! seed it was told before one of its games started deals that game. The entrant is `maumau bot`
//! in a shell wrapper that appends what the bot prints (its report, with the seed once revealed)
//! and each game's start to a file; the games' real seeds come from the tournament's results
//! afterwards, and its replays still verify. Every deal is revealed once played (read back from
//! the tournament's server records with `maumau serve`), and without duplicate deals, where a
//! seed tells nothing of a later game, seeds are told at each game's end as before. A run
//! stopped in the middle of a deal leaves that deal's finished game sealed; the run that resumes
//! it reveals it with the rest.
#![allow(
    clippy::expect_used,
    reason = "a test or bench fails loudly on a broken setup"
)]
#![allow(missing_docs, clippy::unwrap_used)]

#[path = "common/process.rs"]
mod process;

use std::collections::{HashMap, HashSet};
use std::path::Path;
use std::process::Command;

use maumau::pb;
use maumau::pb::match_service_client::MatchServiceClient;

const BIN: &str = env!("CARGO_BIN_EXE_maumau");

/// The tournament's games on the server by match id (the others, between built-in bots, are
/// played in-process): their seeds, from results.jsonl.
fn seeds_by_match(out: &Path) -> HashMap<String, u64> {
    std::fs::read_to_string(out.join("results.jsonl"))
        .unwrap()
        .lines()
        .filter_map(|l| {
            let g: serde_json::Value = serde_json::from_str(l).unwrap();
            Some((g["match_id"].as_str()?.to_string(), g["seed"].as_u64()?))
        })
        .collect()
}

/// What the entrant knew as each of its games started: the seeds told to it before, by match.
fn known_at_start(told: &str) -> HashMap<String, HashSet<u64>> {
    let mut known = HashSet::new();
    let mut at_start = HashMap::new();
    for line in told.lines() {
        if let Some(id) = line.strip_prefix("start ") {
            at_start.insert(id.to_string(), known.clone());
        } else if let Some(rest) = line.strip_prefix("seed ")
            && let Some(Ok(seed)) = rest.split_whitespace().next().map(str::parse::<u64>)
        {
            known.insert(seed);
        }
    }
    at_start
}

/// Runs a tournament (`extra` arguments) with the recording entrant; returns its output folder
/// and what the entrant was told.
fn tournament(dir: &Path, extra: &[&str]) -> (std::path::PathBuf, String) {
    let out = dir.join("t");
    let told = dir.join("told.txt");
    // One game at a time, so "before" is the order of the file.
    let entrant = format!(
        "spy=cmd:echo \"start $MAUMAU_MATCH_ID\" >> '{told}'; '{BIN}' bot --kind heuristic \
         --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\" >> '{told}'",
        told = told.display()
    );
    let ran = Command::new(BIN)
        .args([
            "tournament",
            "--seats",
            "2",
            "--deals",
            "2",
            "--threads",
            "1",
            "--seed",
            "11",
            "--bots",
            "heuristic,random",
            "--entrant",
            &entrant,
            "--out",
        ])
        .arg(&out)
        .args(extra)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    assert!(
        ran.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&ran.stderr)
    );
    let told = std::fs::read_to_string(&told).unwrap();
    (out, told)
}

/// The reports the tournament's server kept, as anyone but its operator reads them now.
fn public_reports(out: &Path, ids: &[String]) -> Vec<pb::MatchReport> {
    let server = process::start(process::serve_command(
        &out.join("server"),
        &["--operator-token", "not-the-tournaments"],
    ));
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime.block_on(async {
        let mut matches = MatchServiceClient::new(server.channel().await);
        let mut reports = Vec::new();
        for id in ids {
            let got = matches
                .get_result(pb::GetResultRequest {
                    match_id: id.clone(),
                })
                .await
                .unwrap();
            reports.push(got.into_inner().report.unwrap());
        }
        reports
    })
}

#[test]
fn an_entrant_that_keeps_every_revealed_seed_predicts_none_of_its_later_deals() {
    let dir = tempfile::tempdir().unwrap();
    let (out, told) = tournament(dir.path(), &[]);
    let seeds = seeds_by_match(&out);
    let known = known_at_start(&told);
    // The entrant sat at two tables × 2 deals × 2 seatings, each deal dealt to it twice, and
    // was told each game's report without its seed.
    assert_eq!(known.len(), 8, "{told}");
    assert_eq!(
        told.matches("seed sealed until the operator reveals the match")
            .count(),
        8,
        "{told}"
    );
    let mut predicted = Vec::new();
    for (id, before) in &known {
        let seed = seeds[id];
        if before.contains(&seed) {
            predicted.push(format!("{id} (seed {seed})"));
        }
    }
    assert!(
        predicted.is_empty(),
        "the entrant knew the deal of these games before they started: {predicted:?}\n{told}"
    );
    // Each deal was revealed once its games were over: anyone reads its seed now.
    let ids: Vec<String> = known.keys().cloned().collect();
    for (id, report) in ids.iter().zip(public_reports(&out, &ids)) {
        assert!(!report.sealed, "{id} was revealed");
        assert_eq!(report.seed, seeds[id], "{id}");
    }

    // The tournament keeps every seed and replay: each game verifies.
    for line in std::fs::read_to_string(out.join("replays.jsonl"))
        .unwrap()
        .lines()
    {
        let game: serde_json::Value = serde_json::from_str(line).unwrap();
        let id = game["id"].as_str().unwrap();
        let checked = Command::new(BIN)
            .arg("replay")
            .arg(out.join("replays.jsonl"))
            .args(["--game", id])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&checked.stdout);
        assert!(checked.status.success(), "{id}: {text}");
        assert!(
            text.contains("valid: the re-simulation reaches the recorded result"),
            "{id}: {text}"
        );
    }
}

/// Without duplicate deals no game shares its seed, so none is sealed: each seed is told at
/// its game's end, and still deals no later game.
#[test]
fn without_duplicate_deals_each_seed_is_told_at_its_games_end() {
    let dir = tempfile::tempdir().unwrap();
    let (out, told) = tournament(dir.path(), &["--no-duplicate"]);
    let seeds = seeds_by_match(&out);
    let known = known_at_start(&told);
    assert_eq!(known.len(), 8, "{told}");
    assert_eq!(told.lines().filter(|l| l.starts_with("seed ")).count(), 8);
    assert!(!told.contains("sealed"), "{told}");
    for (id, before) in &known {
        assert!(!before.contains(&seeds[id]), "{id}: {told}");
    }
}

/// A run killed while a deal's second seating is played reveals nothing of that deal: its first
/// seating stays sealed on the server. Resumed, the tournament finishes the deal, and every game
/// it recorded is revealed, none predictable by the entrant.
#[test]
fn a_stopped_run_leaves_its_unfinished_deal_sealed() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("t");
    let told_path = dir.path().join("told.txt");
    let launches = dir.path().join("launches");
    // The entrant's second launch (the second seating of its first deal) stops the tournament
    // (its parent) for good, as a machine that goes down would; later launches play.
    let entrant = format!(
        "spy=cmd:n=$(cat '{launches}' 2>/dev/null || echo 0); n=$((n + 1)); echo $n > '{launches}'; \
         if [ $n = 2 ]; then kill -KILL $PPID; exit 0; fi; \
         echo \"start $MAUMAU_MATCH_ID\" >> '{told}'; '{BIN}' bot --kind heuristic \
         --server \"$MAUMAU_URL\" --seed \"$MAUMAU_SEED\" >> '{told}'",
        launches = launches.display(),
        told = told_path.display()
    );
    let run = || {
        Command::new(BIN)
            .args([
                "tournament",
                "--seats",
                "2",
                "--deals",
                "2",
                "--threads",
                "1",
                "--seed",
                "11",
                "--bots",
                "heuristic,random",
                "--entrant",
                &entrant,
                "--out",
            ])
            .arg(&out)
            .output()
            .unwrap()
    };
    let stopped = run();
    assert!(!stopped.status.success(), "the first run was killed");
    let told = std::fs::read_to_string(&told_path).unwrap();
    let first: Vec<String> = known_at_start(&told).into_keys().collect();
    assert_eq!(first.len(), 1, "{told}");
    let report = &public_reports(&out, &first)[0];
    assert!(
        report.sealed,
        "the stopped deal's first seating stays sealed"
    );
    assert_eq!(report.seed, 0);
    assert!(report.seed_salt.is_empty());

    let resumed = run();
    assert!(
        resumed.status.success(),
        "{}\n{}",
        String::from_utf8_lossy(&resumed.stdout),
        String::from_utf8_lossy(&resumed.stderr)
    );
    let seeds = seeds_by_match(&out);
    let told = std::fs::read_to_string(&told_path).unwrap();
    let known = known_at_start(&told);
    for (id, before) in &known {
        if let Some(seed) = seeds.get(id) {
            assert!(!before.contains(seed), "{id} was predictable: {told}");
        }
    }
    // Every game the tournament recorded is revealed (the killed run's first seating too, if
    // its record was written before the kill; if not, it was played again and stays sealed).
    let recorded: Vec<String> = seeds.keys().cloned().collect();
    assert_eq!(recorded.len(), 8);
    for (id, report) in recorded.iter().zip(public_reports(&out, &recorded)) {
        assert!(!report.sealed, "{id} was revealed");
        assert_eq!(report.seed, seeds[id], "{id}");
    }
}
