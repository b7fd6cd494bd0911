//! `report.html`: the page `maumau tournament` leaves in its output folder for people. The
//! standings with each entrant's rating and win-share intervals drawn as bars, the head-to-head
//! matrix as a coloured grid, each entrant's forfeits, and every game linked to its own viewer
//! (`games/<id>.html`, the same offline viewer `maumau replay FILE --html OUT` writes), so the
//! folder opens from disk with no server and no network.
//!
//! The page is built here, in the command line, because this is the one crate that has both
//! the tournament's [`Report`] and the server's viewer ([`standalone_page`]): the tournament
//! crate stays free of the server and of HTML, and the viewer stays in one place.

use std::io::BufRead as _;
use std::path::{Path, PathBuf};

use maud::{DOCTYPE, Markup, PreEscaped, html};
use maumau::viewer::Perspective;
use maumau_server::viewer::{STYLE, encode, options_words, standalone_page};
use maumau_tournament::{DecisionTimes, Estimate, Format, Report, Standing};

use crate::replay::TournamentGame;

/// The report's own look on top of the viewer's (its header, colours and type).
const REPORT_STYLE: &str = include_str!("../assets/report.css");

/// What [`write`] wrote.
pub(crate) struct Written {
    /// `report.html`.
    pub(crate) path: PathBuf,
    /// Games written to `games/` with their viewer.
    pub(crate) games: usize,
}

/// Writes `out/report.html` for `report` (`names`: every entrant's name, in entry order) and,
/// from `out/replays.jsonl` when the games' actions were kept, one viewer per game in
/// `out/games/`.
pub(crate) fn write(
    out: &Path,
    report: &Report,
    names: &[String],
) -> Result<Written, Box<dyn std::error::Error>> {
    let viewers = write_viewers(out)?;
    let page = page(report, names, &viewers);
    let path = out.join("report.html");
    std::fs::write(&path, page.into_string())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Written {
        path,
        games: viewers.len(),
    })
}

/// Writes the viewer of every game of `out/replays.jsonl` to `out/games/`, and returns the link
/// of each game (by id) relative to the report.
fn write_viewers(
    out: &Path,
) -> Result<std::collections::HashMap<String, String>, Box<dyn std::error::Error>> {
    let mut links = std::collections::HashMap::new();
    let jsonl = out.join("replays.jsonl");
    let Ok(file) = std::fs::File::open(&jsonl) else {
        return Ok(links); // --no-replays: no games to show
    };
    let dir = out.join("games");
    std::fs::create_dir_all(&dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (n, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let game =
            TournamentGame::parse(&line, n + 1).map_err(|e| format!("{}: {e}", jsonl.display()))?;
        let Ok(viewing) = game.to_replay().and_then(|r| {
            maumau::viewer::frames_named(&r, Perspective::Omniscient, &game.entrants)
                .map_err(|e| e.to_string())
        }) else {
            continue; // a game the viewer cannot show is listed without a link
        };
        let file = format!("{}.html", encode(&game.id));
        let path = dir.join(&file);
        // Every hand only: a report may hold thousands of games, and each perspective more
        // would be another copy of the game (`maumau replay --html` writes them all).
        std::fs::write(
            &path,
            standalone_page(std::slice::from_ref(&viewing), &game.entrants),
        )
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
        // The file name is already encoded: its `%`s are escaped once more in the link.
        links.insert(game.id, format!("games/{}", encode(&file)));
    }
    Ok(links)
}

/// The report page.
fn page(
    report: &Report,
    names: &[String],
    links: &std::collections::HashMap<String, String>,
) -> Markup {
    let d = &report.description;
    let decisions: u64 = report.games.iter().map(|g| g.actions as u64).sum();
    let options = options_words(&d.options);
    let rules = format!(
        "{} · {} seats · {} · calls {} · {} · {} deals per table{} · seed {}",
        d.profile,
        d.seats,
        options,
        d.calls,
        format_words(d.format),
        d.deals,
        if d.duplicate { " (duplicate)" } else { "" },
        d.seed
    );
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { "Tournament report · Mau Mau Arena" }
                style { (PreEscaped(STYLE)) (PreEscaped(REPORT_STYLE)) }
            }
            body.report {
                header { b { "Tournament report" } span.rules { (rules) } }
                main {
                    p.summary {
                        b { (report.games.len()) } " games, " b { (decisions) } " decisions"
                        @if let Some(c) = &report.champion { " · knockout winner " b { (c) } }
                    }
                    (standings(report))
                    (matrix(report))
                    @if !report.notices.is_empty() {
                        section.card-box #notices {
                            h2 { "Notices" }
                            ul { @for n in &report.notices { li { (n) } } }
                        }
                    }
                    (games(report, names, links))
                }
            }
        }
    }
}

/// A format as the `--format` value names it.
fn format_words(f: Format) -> String {
    match f {
        Format::RoundRobin => "round-robin".to_string(),
        Format::Swiss { rounds } => format!("swiss, {rounds} rounds"),
        Format::SingleElimination => "single elimination".to_string(),
        Format::DoubleElimination => "double elimination".to_string(),
    }
}

/// A bar on a scale from `lo` to `hi`: the interval `e` (mean ± ci95), with a mark at the mean.
fn bar(e: &Estimate, lo: f64, hi: f64) -> Markup {
    let span = (hi - lo).max(f64::EPSILON);
    let at = |x: f64| ((x - lo) / span * 100.0).clamp(0.0, 100.0);
    let (left, right) = (at(e.mean - e.ci95), at(e.mean + e.ci95));
    html! {
        span.track {
            span.interval style={ "left:" (format!("{left:.2}")) "%;width:" (format!("{:.2}", (right - left).max(0.6))) "%" } {}
            span.mean style={ "left:" (format!("{:.2}", at(e.mean))) "%" } {}
        }
    }
}

/// The standings table, with interval bars for the rating and the win share; the forfeits beside
/// the rank, the total's heading saying which way is better under the profile's scoring.
fn standings(report: &Report) -> Markup {
    let rows: &[Standing] = &report.standings;
    let lo = rows
        .iter()
        .map(|s| s.rating.mean - s.rating.ci95)
        .fold(f64::INFINITY, f64::min);
    let hi = rows
        .iter()
        .map(|s| s.rating.mean + s.rating.ci95)
        .fold(f64::NEG_INFINITY, f64::max);
    let pad = ((hi - lo) * 0.05).max(0.5);
    let (lo, hi) = (lo - pad, hi + pad);
    html! {
        section.card-box #standings {
            h2 { "Standings" }
            table.standings {
                thead { tr {
                    th { "rank" } th.num { "forfeits" } th { "entrant" } th.num { "games" }
                    th.num { "rating μ ± 95%" } th.barcol { "rating interval" }
                    th.num { "μ − 3σ" }
                    th.num { "win share" } th.barcol { "win share interval (0 to 1)" }
                    th.num { "placing, 1 is best" } th.num.score { (report.description.score_heading()) }
                    th.num { "decision time: median, longest" }
                } }
                tbody {
                    @for s in rows {
                        tr.entrant data-name=(s.name) {
                            td.rank data-label="rank" { @if s.tied { "=" } (s.rank) }
                            td.num.forfeits.bad[s.forfeits > 0] data-label="forfeits" { (s.forfeits) }
                            td.name data-label="entrant" { (s.name) }
                            td.num data-label="games" { (s.games) }
                            td.num.rating data-label="rating μ ± 95%" { (format!("{:.2}", s.rating.mean)) small { " ± " (format!("{:.2}", s.rating.ci95)) } }
                            td.barcol data-label="rating interval" { (bar(&s.rating, lo, hi)) }
                            td.num data-label="μ − 3σ" { (format!("{:.2}", s.conservative)) }
                            td.num.win data-label="win share" { (format!("{:.3}", s.win_share.mean)) small { " ± " (format!("{:.3}", s.win_share.ci95)) } }
                            td.barcol data-label="win share interval" { (bar(&s.win_share, 0.0, 1.0)) }
                            td.num data-label="placing" { (format!("{:.2}", s.placing.mean)) small { " ± " (format!("{:.2}", s.placing.ci95)) } }
                            td.num.score data-label=(report.description.score_heading()) { (format!("{:.1}", s.score.mean)) small { " ± " (format!("{:.1}", s.score.ci95)) } }
                            td.num.decisions data-label="decision time" title={ (s.decision_times.decisions) " decisions timed" } { (decision_words(&s.decision_times)) }
                        }
                    }
                }
            }
            @if rows.iter().any(|s| s.tied) {
                p.note { "=: a shared rank. Entrants share one only when no two of them are separable by the strength model (below), so a tie never joins two entrants that are." }
            }
            p.note { "Ordered by the Weng-Lin rating μ. Bars: the 95% interval, the mark at the mean. Forfeits: games the entrant forfeited (placed last in each). Decision time: the median over the entrant's games of each game's median decision, and the longest decision; in-process every decision that needed the game's state is timed (a random bot's answers from its legal actions alone are not), over gRPC the server times every prompt to its answer, in whole milliseconds." }
        }
    }
}

/// The pairwise matrix: row over column, the places per game the row's entrant finished above
/// the column's over their duplicate blocks, with its 95% interval (paired bootstrap over the
/// blocks), from red (always below) through white to green (always above), and the strength
/// model's difference with its interval; `=` where the pair is not separable (the model's
/// interval holds zero, see `maumau_tournament::stats`).
fn matrix(report: &Report) -> Markup {
    let order: Vec<&str> = report.standings.iter().map(|s| s.name.as_str()).collect();
    let range = f64::from(report.description.seats.max(2) - 1);
    let cell = |row: &str, col: &str| {
        report
            .pairs
            .iter()
            .filter(|p| p.a == col || p.b == col)
            .find_map(|p| p.seen_from(row))
    };
    let signed = |x: f64| {
        if x.is_finite() {
            format!("{x:+.2}")
        } else if x > 0.0 {
            "+∞".to_string()
        } else {
            "−∞".to_string()
        }
    };
    html! {
        section.card-box #pairs {
            h2 { "Pairwise, over duplicate blocks" }
            p.note.decides { "What decides the ranks: the standings are ordered by the Weng-Lin rating μ, and two entrants share a rank (=) only when the strength model's 95% interval of their difference (each cell's “model” figure) holds zero; the places-per-game figures and their intervals in the cells describe each pair but decide no rank." }
            table.matrix {
                thead { tr {
                    th { "row against column" }
                    @for c in &order { th.col { (c) } }
                } }
                tbody {
                    @for r in &order {
                        tr {
                            th { (r) }
                            @for c in &order {
                                @if r == c {
                                    td.self { "—" }
                                } @else if let Some(p) = cell(r, c) {
                                    td.pair style={ "background:" (shade(0.5 + p.gain.mean / (2.0 * range))) }
                                        data-separable=(if p.separable { "true" } else { "false" })
                                        title={ (r) " finished " (format!("{:+.3}", p.gain.mean)) " places per game above " (c) " over " (p.blocks) " blocks (" (p.games) " games), 95% interval " (signed(p.gain.low)) " to " (signed(p.gain.high)) "; strength model " (signed(p.model.mean)) ", 95% interval " (signed(p.model.low)) " to " (signed(p.model.high)) "; placed above in " (format!("{:.1}", p.a_ahead * 100.0)) "% of their games" } {
                                        b { @if !p.separable { "= " } (signed(p.gain.mean)) }
                                        small { "[" (signed(p.gain.low)) ", " (signed(p.gain.high)) "]" br; (p.blocks) " blocks" br; "model " (signed(p.model.mean)) " [" (signed(p.model.low)) ", " (signed(p.model.high)) "]" }
                                    }
                                } @else {
                                    td.none { "never met" }
                                }
                            }
                        }
                    }
                }
            }
            p.note {
                "Places per game the row's entrant finished above the column's, averaged over each block (a deal played once per seating, so the luck of the deal cancels), with its 95% interval by a paired bootstrap over the blocks. "
                "Model: the difference of the two entrants' strengths, fitted by least squares on every block's placing gains (so it uses the blocks they did not share too), with its 95% interval by a bootstrap over whole blocks. "
                "= : the model's interval holds zero (or the tournament has fewer than " (maumau_tournament::MIN_BLOCKS) " blocks): not separable; entrants no chain of blocks joins fall back to their own interval. The same figures are in pairs.csv."
            }
        }
    }
}

/// A duration for people: `< 1 µs`, `420 µs`, `3.1 ms`, `2.05 s` (under a millisecond in
/// whole microseconds: nanoseconds claim a precision the timing does not have).
fn duration_words(ns: u64) -> String {
    let x = ns as f64;
    if ns < 1_000 {
        "< 1 µs".to_string()
    } else if ns < 1_000_000 {
        format!("{:.0} µs", x / 1e3)
    } else if ns < 1_000_000_000 {
        format!("{:.1} ms", x / 1e6)
    } else {
        format!("{:.2} s", x / 1e9)
    }
}

/// An entrant's decision times as `median, longest` (`not timed` when none was: a bot that
/// answers from its legal actions alone, in-process).
pub(crate) fn decision_words(d: &DecisionTimes) -> String {
    if d.decisions == 0 {
        "not timed".to_string()
    } else {
        // A zero is the server's whole milliseconds rounding a quick answer down.
        let words = |ns: u64| match ns {
            0 => "< 1 ms".to_string(),
            _ => duration_words(ns),
        };
        format!("{}, {}", words(d.median_ns), words(d.max_ns))
    }
}

/// A cell's colour for a share from 0 (red) through 0.5 (pale) to 1 (green).
fn shade(share: f64) -> String {
    let share = share.clamp(0.0, 1.0);
    let hue = if share < 0.5 { 4.0 } else { 140.0 };
    let strength = (share - 0.5).abs() * 2.0;
    let lightness = 97.0 - 35.0 * strength;
    format!(
        "hsl({hue:.0} {:.0}% {lightness:.0}%)",
        30.0 + 40.0 * strength
    )
}

/// Every game with who sat where, the placings and its viewer.
fn games(
    report: &Report,
    names: &[String],
    links: &std::collections::HashMap<String, String>,
) -> Markup {
    let name = |e: usize| names.get(e).map_or("?", String::as_str);
    html! {
        section.card-box #games {
            h2 { "Games" }
            @if links.is_empty() {
                p.note { "The games' actions were not kept (--no-replays): no viewers." }
            }
            table.games {
                thead { tr { th { "game" } th { "seats (placing, total)" } th.num { "rounds" } th.num { "moves" } th { "viewer" } } }
                tbody {
                    @for g in &report.games {
                        tr {
                            td.id { (g.id) }
                            td {
                                @for (seat, &e) in g.seats.iter().enumerate() {
                                    span.seatchip.first[g.placings.get(seat) == Some(&1)].forfeit[g.forfeits.contains(&(seat as u8))] {
                                        "S" (seat) " " (name(e)) " "
                                        small { "#" (g.placings.get(seat).copied().unwrap_or(0)) ", " (g.totals.get(seat).copied().unwrap_or(0)) }
                                    }
                                }
                            }
                            td.num { (g.rounds) }
                            td.num { (g.actions) }
                            td {
                                @if let Some(href) = links.get(&g.id) {
                                    a.view href=(href) { "watch ▶" }
                                } @else {
                                    span.note { "—" }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decision_times_under_a_millisecond_read_in_microseconds() {
        let times = |median_ns, max_ns| {
            decision_words(&DecisionTimes {
                decisions: 10,
                median_ns,
                max_ns,
            })
        };
        assert_eq!(times(420_000, 980_400), "420 µs, 980 µs");
        assert_eq!(times(420, 3_100_000), "< 1 µs, 3.1 ms");
        assert_eq!(times(0, 2_000_000), "< 1 ms, 2.0 ms");
        assert_eq!(times(0, 0), "< 1 ms, < 1 ms");
    }
}
