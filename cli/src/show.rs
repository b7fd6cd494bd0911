//! The readable move list in the terminal: `maumau replay FILE --show` and `maumau play` print
//! the frames of `maumau::viewer` round by round, with the hands the perspective may see, and
//! seats labelled as the frames label them (`maumau::viewer::seat_label`: `S0`, or `S0 alice`
//! for a tournament's game, whose entrants are known). Suit
//! symbols always; colours (red ♦ and ♥, bold round headings) only when standard output is a
//! terminal and `NO_COLOR` is not set.

use std::io::{IsTerminal, Write};

use maumau::viewer::{Frame, Perspective, Viewing, seat_label, suit_symbol};
use maumau_engine::{Card, Suit};

/// How lines are written: with ANSI colours or plain.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Style {
    colour: bool,
}

impl Style {
    /// Colours when standard output is a terminal and `NO_COLOR` is unset or empty
    /// (<https://no-color.org>).
    pub(crate) fn for_stdout() -> Style {
        let no_colour = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Style {
            colour: std::io::stdout().is_terminal() && !no_colour,
        }
    }

    /// `text` with red hearts and diamonds.
    fn suits(self, text: &str) -> String {
        if !self.colour {
            return text.to_string();
        }
        let red = [suit_symbol(Suit::Hearts), suit_symbol(Suit::Diamonds)];
        let mut out = String::with_capacity(text.len() + 16);
        for c in text.chars() {
            if red.contains(&c) {
                out.push_str("\x1b[31m");
                out.push(c);
                out.push_str("\x1b[0m");
            } else {
                out.push(c);
            }
        }
        out
    }

    /// A refused message's line: red on a terminal.
    fn refused(self, text: &str) -> String {
        if self.colour {
            format!("\x1b[31m{text}\x1b[0m")
        } else {
            text.to_string()
        }
    }

    fn heading(self, text: &str) -> String {
        if self.colour {
            format!("\x1b[1m{}\x1b[0m", self.suits(text))
        } else {
            text.to_string()
        }
    }
}

/// A hand from the frames' text form (`7H`) as people read it (`7♥`).
fn hand_text(codes: &[String]) -> String {
    if codes.is_empty() {
        return "(no cards)".to_string();
    }
    codes
        .iter()
        .map(|c| {
            c.parse::<Card>()
                .map_or_else(|_| c.clone(), maumau::viewer::card_text)
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The heading line of a viewing.
pub(crate) fn header(v: &Viewing) -> String {
    let id = if v.match_id.is_empty() {
        "(unnamed)"
    } else {
        &v.match_id
    };
    let seen = match v.perspective {
        Perspective::Omniscient => "every hand shown".to_string(),
        Perspective::Public => "public information only".to_string(),
        Perspective::Seat(s) => format!("as seat {s} saw it"),
    };
    format!(
        "match {id}: {} with {} seats, options {}, calls {}; {seen}",
        v.profile, v.seats, v.options, v.calls
    )
}

/// Writes one frame: a round heading and the hands at a deal, the move with its number, its
/// notes, the hands laid down at a round's end, and (a seat's view) what the seat may do next
/// and the messages of its that were refused there. `names` are the players' by seat (empty:
/// seats by number), as the frame's own lines were written with.
pub(crate) fn write_frame(
    out: &mut impl Write,
    style: Style,
    frame: &Frame,
    names: &[String],
) -> std::io::Result<()> {
    let deal = |out: &mut dyn Write, frame: &Frame| -> std::io::Result<()> {
        for s in &frame.table.seats {
            if let Some(hand) = &s.hand {
                writeln!(
                    out,
                    "      {} holds {}",
                    seat_label(s.seat, names),
                    style.suits(&hand_text(hand))
                )?;
            }
        }
        Ok(())
    };
    if frame.index == 0 {
        writeln!(out, "{}", style.heading(&format!("── {}", frame.line)))?;
        deal(out, frame)?;
        return write_prompt(out, style, frame, names);
    }
    writeln!(out, "{:>5}. {}", frame.index, style.suits(&frame.line))?;
    for note in &frame.notes {
        if note.starts_with("Round ") && note.contains(" deals") {
            writeln!(out, "{}", style.heading(&format!("── {note}")))?;
        } else {
            writeln!(out, "       {}", style.suits(note))?;
        }
        if let Some(end) = &frame.round_end
            && note.starts_with(&format!("Round {} over", end.round))
        {
            for (s, hand) in end.hands.iter().enumerate() {
                writeln!(
                    out,
                    "       {} lays down {} ({} points)",
                    seat_label(s as u8, names),
                    style.suits(&hand_text(hand)),
                    end.points.get(s).copied().unwrap_or_default()
                )?;
            }
        }
    }
    if frame.round_end.is_some() && frame.table.phase != "over" {
        deal(out, frame)?;
    }
    write_prompt(out, style, frame, names)
}

/// What the perspective's seat was offered at this frame and what it sent that was refused (a
/// seat's view; the omniscient one shows every seat's refusals).
fn write_prompt(
    out: &mut impl Write,
    style: Style,
    frame: &Frame,
    names: &[String],
) -> std::io::Result<()> {
    if !frame.table.legal.is_empty()
        && let Some(seat) = frame.table.to_act
    {
        let offered = frame.table.legal.join(" · ");
        writeln!(
            out,
            "       {} may: {}",
            seat_label(seat, names),
            style.suits(&offered)
        )?;
    }
    for r in &frame.rejections {
        writeln!(out, "       {}", style.refused(&format!("✗ {}", r.line)))?;
    }
    Ok(())
}

/// Prints a whole viewing to standard output; `names` as in [`write_frame`].
pub(crate) fn print(v: &Viewing, names: &[String]) -> std::io::Result<()> {
    let style = Style::for_stdout();
    let mut out = std::io::stdout().lock();
    writeln!(out, "{}", header(v))?;
    for frame in &v.frames {
        write_frame(&mut out, style, frame, names)?;
    }
    if !v.finished {
        writeln!(out, "(the replay ends before the match does)")?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_mark_red_suits_only_when_asked() {
        let on = Style { colour: true };
        assert_eq!(
            on.suits("S0 plays 7♥ on 5♣"),
            "S0 plays 7\x1b[31m♥\x1b[0m on 5♣"
        );
        let off = Style { colour: false };
        assert_eq!(off.suits("7♦"), "7♦");
        assert_eq!(hand_text(&["10H".into(), "JC".into()]), "10♥ J♣");
    }
}
